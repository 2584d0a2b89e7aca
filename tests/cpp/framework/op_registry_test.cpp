#include <gtest/gtest.h>

#include "oneflow/framework/kernel_registry.h"
#include "oneflow/framework/op_registry.h"

namespace oneflow {
namespace {

TEST(OpRegistry, UnknownOpTypeIsNotImplementedAndNamed) {
  try {
    OpRegistry::Instance().Get("no_such_op");
    FAIL() << "expected an error";
  } catch (const Error& error) {
    EXPECT_EQ(error.kind(), ErrorKind::kNotImplemented);
    EXPECT_NE(std::string(error.what()).find("no_such_op"), std::string::npos);
  }
}

TEST(Shape, ToStringAndCount) {
  EXPECT_EQ(Shape({2, 3}).ToString(), "(2, 3)");
  EXPECT_EQ(Shape({5}).ToString(), "(5,)");
  EXPECT_EQ(Shape().elem_count(), 1);
  EXPECT_EQ(Shape({2, 3, 4}).Count(1, 3), 12);
}

TEST(Attr, RoundTripAndTypeMismatch) {
  EXPECT_EQ(FromAttrValue<int64_t>(ToAttrValue<int64_t>(7)), 7);
  std::vector<int64_t> list = {1, 2};
  EXPECT_EQ(FromAttrValue<std::vector<int64_t>>(ToAttrValue(list)), list);
  EXPECT_THROW(FromAttrValue<bool>(ToAttrValue<int64_t>(1)), Error);
}

TEST(OpConfUtil, LbnParsing) {
  std::string op, key;
  ParseLbn("dense1-matmul/out_0", &op, &key);
  EXPECT_EQ(op, "dense1-matmul");
  EXPECT_EQ(key, "out_0");
  EXPECT_THROW(ParseLbn("no_slash", &op, &key), Error);
}

}  // namespace
}  // namespace oneflow
