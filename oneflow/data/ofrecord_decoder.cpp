#include "oneflow/data/ofrecord_decoder.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>
#include <utility>

#include "oneflow/common/data_type.h"
#include "oneflow/common/error.h"
#include "proto/record.pb.h"

namespace oneflow {

namespace {

template <typename T, typename Values>
void Convert(const Values& values, int64_t n, T* out) {
  for (int64_t i = 0; i < n; ++i) { out[i] = static_cast<T>(values[i]); }
}

// Whether `value` converts to T without leaving T's range (a float to an integer outside it,
// or NaN, is undefined behaviour; an integer outside it would wrap; a double beyond float's
// largest value is undefined too). Floats to integers truncate toward zero, as static_cast.
template <typename T, typename V>
bool Fits(V value) {
  if constexpr (std::is_integral_v<T> && std::is_floating_point_v<V>) {
    return value > static_cast<double>(std::numeric_limits<T>::lowest()) - 1.0 &&
           value < static_cast<double>(std::numeric_limits<T>::max()) + 1.0;
  } else if constexpr (std::is_integral_v<T>) {
    return std::in_range<T>(value);
  } else if constexpr (std::is_floating_point_v<V> && sizeof(V) > sizeof(T)) {
    return !std::isfinite(value) || std::fabs(value) <= std::numeric_limits<T>::max();
  } else {
    return true;
  }
}

// Convert, for a feature's list of numbers: each must fit T.
template <typename T, typename Values>
void ConvertChecked(const Values& values, int64_t n, const RawDecodeOptions& options,
                    int64_t row, T* out) {
  for (int64_t i = 0; i < n; ++i) {
    if (!Fits<T>(values[i])) {
      throw Error(ErrorKind::kValue)
          << "OFRecordRawDecoder: feature '" << options.feature << "' of record " << row
          << " holds " << values[i] << " (value " << i << "), which does not fit the dtype "
          << DataTypeName(DataTypeOf<T>::value);
    }
    out[i] = static_cast<T>(values[i]);
  }
}

// The values of one record's feature written to out[0, count), zero-padded.
template <typename T>
void DecodeOne(const Feature& feature, const RawDecodeOptions& options, int64_t row, T* out) {
  int64_t n = 0;
  auto check_length = [&](int64_t size) {
    const bool fewer_allowed = options.auto_zero_padding || options.dim1_varying_length;
    if (size == options.count || (size < options.count && fewer_allowed) ||
        (size > options.count && options.auto_zero_padding)) {
      return std::min(size, options.count);
    }
    throw Error(ErrorKind::kValue)
        << "OFRecordRawDecoder: feature '" << options.feature << "' of record " << row << " has "
        << size << " values, its shape needs " << options.count
        << " (pass auto_zero_padding=True to pad or cut)";
  };
  switch (feature.kind_case()) {
    case Feature::kBytesList: {
      if (feature.bytes_list().value_size() != 1) {
        throw Error(ErrorKind::kValue)
            << "OFRecordRawDecoder: feature '" << options.feature << "' of record " << row
            << " is a bytes_list of " << feature.bytes_list().value_size()
            << " strings; the raw decoder reads exactly one";
      }
      const std::string& bytes = feature.bytes_list().value(0);
      n = std::min<int64_t>(static_cast<int64_t>(bytes.size()), options.count);
      Convert(reinterpret_cast<const int8_t*>(bytes.data()), n, out);
      break;
    }
    case Feature::kFloatList:
      n = check_length(feature.float_list().value_size());
      ConvertChecked(feature.float_list().value().data(), n, options, row, out);
      break;
    case Feature::kDoubleList:
      n = check_length(feature.double_list().value_size());
      ConvertChecked(feature.double_list().value().data(), n, options, row, out);
      break;
    case Feature::kInt32List:
      n = check_length(feature.int32_list().value_size());
      ConvertChecked(feature.int32_list().value().data(), n, options, row, out);
      break;
    case Feature::kInt64List:
      n = check_length(feature.int64_list().value_size());
      ConvertChecked(feature.int64_list().value().data(), n, options, row, out);
      break;
    default:
      throw Error(ErrorKind::kValue) << "OFRecordRawDecoder: feature '" << options.feature
                                     << "' of record " << row << " is empty (no list is set)";
  }
  std::fill(out + n, out + options.count, T(0));
}

// Parses records[row]; `where` names the op in errors.
void ParseRecord(std::string_view data, size_t row, const std::string& where, OFRecord* record) {
  if (!record->ParseFromArray(data.data(), static_cast<int>(data.size()))) {
    throw Error(ErrorKind::kValue)
        << where << ": record " << row << " of the batch is not a valid OFRecord";
  }
}

const Feature& FindFeature(const OFRecord& record, const std::string& feature, size_t row,
                           const std::string& where) {
  auto it = record.feature().find(feature);
  if (it == record.feature().end()) {
    std::string names;
    for (const auto& entry : record.feature()) {
      names += (names.empty() ? "" : ", ") + entry.first;
    }
    throw Error(ErrorKind::kValue)
        << where << ": record " << row << " of the batch has no feature '" << feature
        << "'; it has [" << names << "]";
  }
  return it->second;
}

template <typename T>
void DecodeAll(const std::vector<std::string_view>& records, const RawDecodeOptions& options,
               T* out) {
  OFRecord record;
  for (size_t row = 0; row < records.size(); ++row) {
    ParseRecord(records[row], row, "OFRecordRawDecoder", &record);
    DecodeOne(FindFeature(record, options.feature, row, "OFRecordRawDecoder"), options,
              static_cast<int64_t>(row), out + row * options.count);
  }
}

}  // namespace

void DecodeRawFeature(const std::vector<std::string_view>& records, const RawDecodeOptions& options,
                      void* out) {
  switch (options.data_type) {
    case kFloat:
      DecodeAll(records, options, static_cast<float*>(out));
      break;
    case kDouble:
      DecodeAll(records, options, static_cast<double*>(out));
      break;
    case kInt8:
      DecodeAll(records, options, static_cast<int8_t*>(out));
      break;
    case kInt32:
      DecodeAll(records, options, static_cast<int32_t*>(out));
      break;
    case kInt64:
      DecodeAll(records, options, static_cast<int64_t*>(out));
      break;
    case kUInt8:
      DecodeAll(records, options, static_cast<uint8_t*>(out));
      break;
    default:
      throw Error(ErrorKind::kType)
          << "OFRecordRawDecoder: dtype " << DataTypeName(options.data_type)
          << " is not one of float32, float64, int8, int32, int64, uint8";
  }
}

std::vector<std::string> BytesFeature(const std::vector<std::string_view>& records,
                                      const std::string& feature, const std::string& where) {
  std::vector<std::string> values;
  values.reserve(records.size());
  OFRecord record;
  for (size_t row = 0; row < records.size(); ++row) {
    ParseRecord(records[row], row, where, &record);
    const Feature& value = FindFeature(record, feature, row, where);
    if (!value.has_bytes_list() || value.bytes_list().value_size() != 1) {
      throw Error(ErrorKind::kValue)
          << where << ": feature '" << feature << "' of record " << row
          << " must be a bytes_list holding one byte string (an encoded image), got "
          << (value.has_bytes_list()
                  ? std::to_string(value.bytes_list().value_size()) + " byte strings"
                  : std::string("a numeric list"));
    }
    values.push_back(value.bytes_list().value(0));
  }
  return values;
}

}  // namespace oneflow
