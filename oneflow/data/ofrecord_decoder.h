#pragma once
// Decoding one feature of a batch of serialized OFRecords (proto/record.proto) into a dense
// array, as OneFlow 0.3's ofrecord_raw_decoder does. The reader (python/oneflow/framework/
// ofrecord_reader.py) hands the serialized records over; this parses them in C++.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "oneflow/common/data_type.h"

namespace oneflow {

struct RawDecodeOptions {
  std::string feature;  // the feature name
  int64_t count = 0;    // values per record (the product of the decoded shape)
  DataType data_type = kFloat;
  bool dim1_varying_length = false;  // fewer values than count are zero-padded
  bool auto_zero_padding = false;    // fewer are zero-padded, more are cut off
};

// Writes records.size() * count values of options.data_type to `out`. A bytes_list feature is
// one byte string whose bytes are signed int8 values (a shorter one is zero-padded); numeric
// lists are converted. Throws a ValueError naming the record and the rule broken.
void DecodeRawFeature(const std::vector<std::string_view>& records, const RawDecodeOptions& options,
                      void* out);

// The one byte string of bytes_list feature `feature` of each record (an encoded image, for
// OFRecordImageDecoder and OFRecordBytesDecoder); `where` names the op in errors.
std::vector<std::string> BytesFeature(const std::vector<std::string_view>& records,
                                      const std::string& feature, const std::string& where);

}  // namespace oneflow
