// DecodeRawFeature converts each record's numbers to the decoded dtype; a number that does not
// fit it (NaN, or beyond its range) is a ValueError naming the feature, the record and the
// value, instead of the undefined or wrapped result of a plain cast.
#include "oneflow/data/ofrecord_decoder.h"

#include <cmath>
#include <limits>

#include <gtest/gtest.h>

#include "oneflow/common/error.h"
#include "proto/record.pb.h"

namespace oneflow {
namespace {

std::string FloatRecord(const std::vector<float>& values) {
  OFRecord record;
  FloatList* list = (*record.mutable_feature())["x"].mutable_float_list();
  for (float value : values) { list->add_value(value); }
  return record.SerializeAsString();
}

std::string Int64Record(const std::vector<int64_t>& values) {
  OFRecord record;
  Int64List* list = (*record.mutable_feature())["x"].mutable_int64_list();
  for (int64_t value : values) { list->add_value(value); }
  return record.SerializeAsString();
}

template <typename T>
std::vector<T> Decode(const std::string& record, int64_t count, DataType data_type) {
  RawDecodeOptions options;
  options.feature = "x";
  options.count = count;
  options.data_type = data_type;
  std::vector<T> out(count);
  DecodeRawFeature({record}, options, out.data());
  return out;
}

template <typename T>
std::string DecodeError(const std::string& record, int64_t count, DataType data_type) {
  try {
    Decode<T>(record, count, data_type);
  } catch (const Error& error) {
    EXPECT_EQ(error.kind(), ErrorKind::kValue);
    return error.what();
  }
  return "";
}

TEST(OFRecordRawDecoder, NumbersThatFitConvertAsStaticCast) {
  EXPECT_EQ(Decode<uint8_t>(FloatRecord({0.f, 255.f, 3.9f}), 3, kUInt8),
            (std::vector<uint8_t>{0, 255, 3}));
  EXPECT_EQ(Decode<int8_t>(FloatRecord({-128.f, 127.f, -1.5f}), 3, kInt8),
            (std::vector<int8_t>{-128, 127, -1}));
  EXPECT_EQ(Decode<int32_t>(Int64Record({-7, 2147483647}), 2, kInt32),
            (std::vector<int32_t>{-7, 2147483647}));
  const std::vector<float> floats = Decode<float>(FloatRecord({1e30f, -2.5f}), 2, kFloat);
  EXPECT_EQ(floats[0], 1e30f);
  EXPECT_EQ(floats[1], -2.5f);
}

TEST(OFRecordRawDecoder, NumbersBeyondTheDtypeAreValueErrors) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  EXPECT_NE(DecodeError<uint8_t>(FloatRecord({1e10f}), 1, kUInt8)
                .find("feature 'x' of record 0 holds 1e+10 (value 0), which does not fit the "
                      "dtype uint8"),
            std::string::npos);
  EXPECT_NE(DecodeError<uint8_t>(FloatRecord({1.f, -5.f}), 2, kUInt8).find("-5 (value 1)"),
            std::string::npos);
  EXPECT_NE(DecodeError<int32_t>(FloatRecord({nan}), 1, kInt32).find("nan"), std::string::npos);
  EXPECT_NE(DecodeError<int8_t>(Int64Record({300}), 1, kInt8).find("300"), std::string::npos);
  EXPECT_NE(DecodeError<int32_t>(Int64Record({int64_t{1} << 40}), 1, kInt32).find("int32"),
            std::string::npos);
}

}  // namespace
}  // namespace oneflow
