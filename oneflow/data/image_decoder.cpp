#include "oneflow/data/image_decoder.h"

#include <algorithm>
#include <cctype>
#include <csetjmp>
#include <cstdio>
#include <cstring>

#include "oneflow/common/error.h"

#ifdef ONEFLOW_WITH_JPEG
#include <jpeglib.h>
#endif

namespace oneflow {

ColorSpace ParseColorSpace(const std::string& name, const std::string& where) {
  std::string upper = name;
  std::transform(upper.begin(), upper.end(), upper.begin(),
                 [](unsigned char c) { return static_cast<char>(std::toupper(c)); });
  if (upper == "RGB") { return ColorSpace::kRGB; }
  if (upper == "BGR") { return ColorSpace::kBGR; }
  if (upper == "GRAY") { return ColorSpace::kGray; }
  throw Error(ErrorKind::kValue) << where
                                 << ": color_space must be \"RGB\", \"BGR\" or \"GRAY\", got \""
                                 << name << "\"";
}

int64_t ColorSpaceChannels(ColorSpace color_space) {
  return color_space == ColorSpace::kGray ? 1 : 3;
}

#ifdef ONEFLOW_WITH_JPEG

bool ImageDecodingAvailable() { return true; }

namespace {

// libjpeg reports a fatal error by calling error_exit, which must not return: it jumps back to
// DecodeJpeg's setjmp with the message (libjpeg is C, so no exception may cross it).
struct ErrorManager {
  jpeg_error_mgr base;
  std::jmp_buf jump;
  char message[JMSG_LENGTH_MAX];
};

void ExitWithError(j_common_ptr info) {
  auto* manager = reinterpret_cast<ErrorManager*>(info->err);
  (*info->err->format_message)(info, manager->message);
  std::longjmp(manager->jump, 1);
}

// The largest image decoded: 2^28 pixels (16384 x 16384, 768 MiB as RGB).
constexpr uint64_t kMaxImagePixels = uint64_t{1} << 28;

// Warnings (a truncated but readable file, say) are not errors, as with OpenCV's decoder.
void IgnoreMessage(j_common_ptr, int) {}

// Decodes into `out` the window `crop` chooses (the whole image without one). Everything with a
// destructor (out, window, the row buffer) is owned by the caller, so a longjmp skips no
// destructor here. `crop` must not throw. False, with `message` set, when libjpeg fails.
bool DecodeJpeg(std::string_view bytes, ColorSpace color_space, const ChooseWindow& crop,
                CropWindow* window, std::vector<JSAMPLE>* decoded, Image* out, char* message) {
  jpeg_decompress_struct info;
  ErrorManager errors;
  info.err = jpeg_std_error(&errors.base);
  errors.base.error_exit = ExitWithError;
  errors.base.emit_message = IgnoreMessage;
  if (setjmp(errors.jump)) {
    std::memcpy(message, errors.message, JMSG_LENGTH_MAX);
    jpeg_destroy_decompress(&info);
    return false;
  }
  jpeg_create_decompress(&info);
  jpeg_mem_src(&info, reinterpret_cast<const unsigned char*>(bytes.data()),
               static_cast<unsigned long>(bytes.size()));
  jpeg_read_header(&info, TRUE);
  // A corrupt or hostile header can claim any size up to 65535 x 65535; refuse what would not
  // fit in memory before allocating it.
  if (static_cast<uint64_t>(info.image_width) * info.image_height > kMaxImagePixels) {
    std::snprintf(message, JMSG_LENGTH_MAX,
                  "the JPEG header claims %u x %u pixels, more than the %llu this decoder takes",
                  info.image_width, info.image_height,
                  static_cast<unsigned long long>(kMaxImagePixels));
    jpeg_destroy_decompress(&info);
    return false;
  }
  info.out_color_space = color_space == ColorSpace::kGray ? JCS_GRAYSCALE : JCS_RGB;
  jpeg_start_decompress(&info);
  const int64_t channels = info.output_components;
  *window = CropWindow{0, 0, info.output_height, info.output_width};
  if (crop) { *window = crop(info.output_height, info.output_width); }
  // libjpeg decodes whole iMCU columns: the decoded columns start at or before window->x.
  JDIMENSION first_column = static_cast<JDIMENSION>(window->x);
  JDIMENSION columns = static_cast<JDIMENSION>(window->width);
  if (columns < info.output_width) { jpeg_crop_scanline(&info, &first_column, &columns); }
  if (window->y > 0) { jpeg_skip_scanlines(&info, static_cast<JDIMENSION>(window->y)); }
  out->height = window->height;
  out->width = window->width;
  out->channels = channels;
  const size_t row_bytes = static_cast<size_t>(window->width * channels);
  out->pixels.resize(row_bytes * static_cast<size_t>(window->height));
  // Rows are read straight into the image unless extra columns come with them.
  const bool direct = static_cast<int64_t>(first_column) == window->x &&
                      static_cast<int64_t>(info.output_width) == window->width;
  if (!direct) { decoded->resize(static_cast<size_t>(info.output_width * channels)); }
  const size_t skip = static_cast<size_t>((window->x - first_column) * channels);
  for (int64_t y = 0; y < window->height; ++y) {
    uint8_t* target = out->pixels.data() + y * row_bytes;
    JSAMPROW row = direct ? target : decoded->data();
    jpeg_read_scanlines(&info, &row, 1);
    if (!direct) { std::memcpy(target, decoded->data() + skip, row_bytes); }
  }
  // The rows below the window are never decoded (destroying aborts the decompression).
  jpeg_destroy_decompress(&info);
  return true;
}

}  // namespace

Image DecodeImage(std::string_view bytes, ColorSpace color_space, const std::string& what,
                  const ChooseWindow& crop) {
  if (bytes.size() < 3 || static_cast<unsigned char>(bytes[0]) != 0xFF ||
      static_cast<unsigned char>(bytes[1]) != 0xD8) {
    std::string start;
    char hex[4];
    for (size_t i = 0; i < std::min<size_t>(bytes.size(), 4); ++i) {
      std::snprintf(hex, sizeof(hex), "%02x", static_cast<unsigned char>(bytes[i]));
      start += (i ? " " : "") + std::string(hex);
    }
    throw Error(ErrorKind::kValue)
        << what << " is not a JPEG image (" << bytes.size() << " bytes starting with [" << start
        << "]); the image decoders read JPEG";
  }
  Image image;
  CropWindow window;
  std::vector<JSAMPLE> decoded;
  char message[JMSG_LENGTH_MAX] = {0};
  if (!DecodeJpeg(bytes, color_space, crop, &window, &decoded, &image, message)) {
    throw Error(ErrorKind::kValue) << what << " is not a valid JPEG image: " << message;
  }
  if (color_space == ColorSpace::kBGR) {
    uint8_t* pixel = image.pixels.data();
    for (int64_t i = 0; i < image.height * image.width; ++i, pixel += 3) {
      std::swap(pixel[0], pixel[2]);
    }
  }
  return image;
}

#else  // no libjpeg

bool ImageDecodingAvailable() { return false; }

Image DecodeImage(std::string_view, ColorSpace, const std::string& what, const ChooseWindow&) {
  throw Error(ErrorKind::kNotImplemented)
      << "cannot decode " << what << ": this build of oneflow has no JPEG decoder (install "
      << "libjpeg62-turbo-dev and rebuild)";
}

#endif

}  // namespace oneflow
