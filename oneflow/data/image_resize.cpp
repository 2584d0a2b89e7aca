#include "oneflow/data/image_resize.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <vector>

#include "oneflow/common/error.h"

namespace oneflow {

Interpolation ChooseInterpolation(const std::string& name, int64_t from_width, int64_t from_height,
                                  int64_t to_width, int64_t to_height, const std::string& where) {
  if (name == "bilinear") { return Interpolation::kBilinear; }
  if (name == "nearest_neighbor" || name == "nn") { return Interpolation::kNearest; }
  if (name == "bicubic") { return Interpolation::kBicubic; }
  if (name == "area") { return Interpolation::kArea; }
  if (name == "auto") {
    return to_width * to_height >= from_width * from_height ? Interpolation::kBilinear
                                                            : Interpolation::kArea;
  }
  throw Error(ErrorKind::kValue) << where << ": interpolation_type must be \"auto\", \"bilinear\", "
                                 << "\"nearest_neighbor\", \"bicubic\" or \"area\", got \"" << name
                                 << "\"";
}

namespace {

// The source pixels and weights each output pixel reads along one axis: `taps` per output
// (unused ones have weight 0 and index of the first), so the loops have a fixed trip count.
struct AxisTaps {
  int64_t taps = 0;
  std::vector<int64_t> index;  // outputs x taps
  std::vector<float> weight;   // outputs x taps
};

int64_t Clamp(int64_t i, int64_t size) { return std::min(std::max<int64_t>(i, 0), size - 1); }

float CubicWeight(float x) {  // Keys' kernel with a = -0.75, as OpenCV
  constexpr float a = -0.75f;
  x = std::fabs(x);
  if (x <= 1.f) { return ((a + 2.f) * x - (a + 3.f)) * x * x + 1.f; }
  if (x < 2.f) { return ((a * x - 5.f * a) * x + 8.f * a) * x - 4.f * a; }
  return 0.f;
}

AxisTaps MakeTaps(int64_t from, int64_t to, Interpolation interpolation) {
  const double scale = static_cast<double>(from) / static_cast<double>(to);
  std::vector<std::vector<std::pair<int64_t, float>>> lists(to);
  for (int64_t o = 0; o < to; ++o) {
    auto& list = lists[o];
    if (interpolation == Interpolation::kNearest) {
      list.emplace_back(std::min<int64_t>(static_cast<int64_t>(std::floor(o * scale)), from - 1),
                        1.f);
    } else if (interpolation == Interpolation::kArea && scale > 1.0) {
      // The source interval [o * scale, (o + 1) * scale) averaged, partial pixels weighted by
      // the part of them it covers.
      const double begin = o * scale, end = std::min<double>((o + 1) * scale, from);
      for (int64_t i = static_cast<int64_t>(std::floor(begin)); i < end; ++i) {
        const double cover = std::min<double>(i + 1, end) - std::max<double>(i, begin);
        if (cover > 1e-9) { list.emplace_back(i, static_cast<float>(cover / (end - begin))); }
      }
    } else {
      const double center = (o + 0.5) * scale - 0.5;
      const int64_t base = static_cast<int64_t>(std::floor(center));
      const float frac = static_cast<float>(center - base);
      if (interpolation == Interpolation::kBicubic) {
        for (int k = -1; k <= 2; ++k) {
          list.emplace_back(Clamp(base + k, from), CubicWeight(frac - k));
        }
      } else if (base < 0) {  // bilinear (and area when growing), borders replicated
        list.emplace_back(0, 1.f);
      } else if (base >= from - 1) {
        list.emplace_back(from - 1, 1.f);
      } else {
        list.emplace_back(base, 1.f - frac);
        list.emplace_back(base + 1, frac);
      }
    }
  }
  AxisTaps taps;
  for (const auto& list : lists) { taps.taps = std::max<int64_t>(taps.taps, list.size()); }
  taps.index.assign(to * taps.taps, 0);
  taps.weight.assign(to * taps.taps, 0.f);
  for (int64_t o = 0; o < to; ++o) {
    for (size_t k = 0; k < lists[o].size(); ++k) {
      taps.index[o * taps.taps + k] = lists[o][k].first;
      taps.weight[o * taps.taps + k] = lists[o][k].second;
    }
    for (size_t k = lists[o].size(); k < static_cast<size_t>(taps.taps); ++k) {
      taps.index[o * taps.taps + k] = lists[o][0].first;
    }
  }
  return taps;
}

// One source row resized along x into `out` (out_width x C floats). `offset` holds each tap's
// source pixel as a byte offset (index * channels).
template <int C>
void ResizeRow(const uint8_t* in, const std::vector<int32_t>& offset, const AxisTaps& columns,
               int64_t out_width, int64_t channels, float* out) {
  const int64_t taps = columns.taps;
  const int64_t c_count = C > 0 ? C : channels;
  for (int64_t x = 0; x < out_width; ++x) {
    const int32_t* source = offset.data() + x * taps;
    const float* weight = columns.weight.data() + x * taps;
    float sum[C > 0 ? C : 4] = {};
    if constexpr (C > 0) {
      for (int64_t k = 0; k < taps; ++k) {
        const uint8_t* pixel = in + source[k];
        for (int c = 0; c < C; ++c) { sum[c] += weight[k] * pixel[c]; }
      }
      for (int c = 0; c < C; ++c) { out[x * C + c] = sum[c]; }
    } else {
      for (int64_t c = 0; c < c_count; ++c) {
        float total = 0.f;
        for (int64_t k = 0; k < taps; ++k) { total += weight[k] * in[source[k] + c]; }
        out[x * c_count + c] = total;
      }
    }
  }
}

}  // namespace

void ResizeImage(const ImageView& in, int64_t out_height, int64_t out_width,
                 Interpolation interpolation, uint8_t* out) {
  if (out_width < 1 || out_height < 1 || in.width < 1 || in.height < 1) {
    throw Error(ErrorKind::kValue) << "image resize: cannot resize a " << in.width << "x"
                                   << in.height << " image to " << out_width << "x" << out_height;
  }
  const int64_t c = in.channels;
  const AxisTaps columns = MakeTaps(in.width, out_width, interpolation);
  const AxisTaps rows = MakeTaps(in.height, out_height, interpolation);
  // The source rows each output row reads are resized along x once (cached by source row),
  // then combined along y.
  const int64_t row_size = out_width * c;
  std::vector<int32_t> offset(columns.index.size());
  for (size_t i = 0; i < offset.size(); ++i) {
    offset[i] = static_cast<int32_t>(columns.index[i] * c);
  }
  std::unique_ptr<float[]> across(new float[in.height * row_size]);  // filled row by row
  std::vector<char> done(static_cast<size_t>(in.height), 0);
  std::vector<float> sum(row_size);
  for (int64_t y = 0; y < out_height; ++y) {
    const int64_t* index = rows.index.data() + y * rows.taps;
    const float* weight = rows.weight.data() + y * rows.taps;
    std::fill(sum.begin(), sum.end(), 0.f);
    for (int64_t k = 0; k < rows.taps; ++k) {
      const int64_t source = index[k];
      float* resized = across.get() + source * row_size;
      if (!done[source]) {
        const uint8_t* row = in.pixels + source * in.row_stride;
        if (c == 3) {
          ResizeRow<3>(row, offset, columns, out_width, c, resized);
        } else if (c == 1) {
          ResizeRow<1>(row, offset, columns, out_width, c, resized);
        } else {
          ResizeRow<0>(row, offset, columns, out_width, c, resized);
        }
        done[source] = 1;
      }
      const float w = weight[k];
      for (int64_t j = 0; j < row_size; ++j) { sum[j] += w * resized[j]; }
    }
    uint8_t* target = out + y * row_size;
    for (int64_t j = 0; j < row_size; ++j) {
      target[j] = static_cast<uint8_t>(std::clamp(sum[j], 0.f, 255.f) + 0.5f);
    }
  }
}

}  // namespace oneflow
