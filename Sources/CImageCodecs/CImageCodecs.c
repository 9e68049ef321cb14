// The image libraries' glue. See include/CImageCodecs.h for the contract of each function.
#include "CImageCodecs.h"

#include <gif_lib.h>
#include <limits.h>
#include <png.h>
#include <stdlib.h>
#include <string.h>
#include <turbojpeg.h>
#include <webp/decode.h>
#include <webp/demux.h>
#include <webp/encode.h>

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

// MARK: - Loading the libraries

// TurboJPEG, libpng, libwebp and giflib are not linked: each is loaded with dlopen the first
// time a function of its format runs, so that a process that decodes nothing (a decision of the
// command) does not load them (docs/startup.md). A library that cannot be loaded makes its
// functions return IMGC_UNSUPPORTED with "libpng16.so.16 could not be loaded (…)" as the message.
typedef struct {
    const char *file;
    const char *const *names;
    void **slots;
    size_t count;
    int loaded;
    char error[IMGC_MESSAGE_CAPACITY];
} codec_library;

static void load_codec_library(codec_library *library) {
    void *handle = dlopen(library->file, RTLD_NOW | RTLD_LOCAL);
    if (handle == NULL) {
        const char *reason = dlerror();
        snprintf(library->error, sizeof library->error, "%s could not be loaded (%s)", library->file,
                 reason ? reason : "dlopen failed");
        return;
    }
    for (size_t index = 0; index < library->count; index++) {
        library->slots[index] = dlsym(handle, library->names[index]);
        if (library->slots[index] == NULL) {
            snprintf(library->error, sizeof library->error, "%s has no %s", library->file, library->names[index]);
            return;
        }
    }
    library->loaded = 1;
}

#define CODEC_FIELD(name) void *name;
#define CODEC_NAME(name) #name,
// One library: its table of pointers (`table.name`), its names, and `ready(message)`, which
// loads it once (thread-safe) and says whether it can be used.
#define CODEC_LIBRARY(table, file_name, FUNCTIONS)                                                     \
    static struct { FUNCTIONS(CODEC_FIELD) } table;                                                    \
    static const char *const table##_names[] = {FUNCTIONS(CODEC_NAME)};                                \
    static codec_library table##_library = {file_name, table##_names, (void **)&table,                 \
                                            sizeof table##_names / sizeof table##_names[0], 0, {0}};   \
    static pthread_once_t table##_once = PTHREAD_ONCE_INIT;                                            \
    static void table##_load(void) { load_codec_library(&table##_library); }                           \
    static int table##_ready(char *message) {                                                          \
        pthread_once(&table##_once, table##_load);                                                     \
        if (table##_library.loaded) return 1;                                                          \
        if (message != NULL) snprintf(message, IMGC_MESSAGE_CAPACITY, "%s", table##_library.error);    \
        return 0;                                                                                      \
    }

#define JPEG_FUNCTIONS(X)                                                                              \
    X(tjInitDecompress) X(tjGetErrorStr2) X(tjDecompressHeader3) X(tjDestroy) X(tjDecompress2)          \
    X(tjInitCompress) X(tjCompress2) X(tjFree) X(tjGetErrorCode)
#define PNG_FUNCTIONS(X)                                                                               \
    X(png_image_begin_read_from_memory) X(png_image_finish_read) X(png_image_free) X(png_image_write_to_memory)
#define WEBP_FUNCTIONS(X)                                                                              \
    X(WebPDecode) X(WebPEncodeLosslessRGBA) X(WebPEncodeRGBA) X(WebPFree) X(WebPFreeDecBuffer)          \
    X(WebPGetFeaturesInternal) X(WebPInitDecoderConfigInternal)
// libwebpdemux: the first frame of an animated WebP, loaded only when one is decoded.
#define WEBP_DEMUX_FUNCTIONS(X)                                                                        \
    X(WebPAnimDecoderOptionsInitInternal) X(WebPAnimDecoderNewInternal) X(WebPAnimDecoderGetInfo)      \
    X(WebPAnimDecoderGetNext) X(WebPAnimDecoderDelete)
#define GIF_FUNCTIONS(X)                                                                               \
    X(DGifCloseFile) X(DGifGetExtension) X(DGifGetExtensionNext) X(DGifGetImageDesc) X(DGifGetLine)     \
    X(DGifGetRecordType) X(DGifOpen) X(EGifCloseFile) X(EGifGCBToExtension) X(EGifOpen)                 \
    X(EGifPutExtension) X(EGifPutImageDesc) X(EGifPutLine) X(EGifPutScreenDesc) X(EGifSetGifVersion)    \
    X(GifErrorString) X(GifFreeMapObject) X(GifMakeMapObject)

CODEC_LIBRARY(jpeg_table, "libturbojpeg.so.0", JPEG_FUNCTIONS)
CODEC_LIBRARY(png_table, "libpng16.so.16", PNG_FUNCTIONS)
CODEC_LIBRARY(webp_table, "libwebp.so.7", WEBP_FUNCTIONS)
CODEC_LIBRARY(webp_demux_table, "libwebpdemux.so.2", WEBP_DEMUX_FUNCTIONS)
CODEC_LIBRARY(gif_table, "libgif.so.7", GIF_FUNCTIONS)

// From here on, each library call goes through its table, with the library's own signature.
#define CODEC_CALL(table, name) ((__typeof__(&name))table.name)
#define tjInitDecompress CODEC_CALL(jpeg_table, tjInitDecompress)
#define tjGetErrorStr2 CODEC_CALL(jpeg_table, tjGetErrorStr2)
#define tjDecompressHeader3 CODEC_CALL(jpeg_table, tjDecompressHeader3)
#define tjDestroy CODEC_CALL(jpeg_table, tjDestroy)
#define tjDecompress2 CODEC_CALL(jpeg_table, tjDecompress2)
#define tjInitCompress CODEC_CALL(jpeg_table, tjInitCompress)
#define tjCompress2 CODEC_CALL(jpeg_table, tjCompress2)
#define tjFree CODEC_CALL(jpeg_table, tjFree)
#define tjGetErrorCode CODEC_CALL(jpeg_table, tjGetErrorCode)
#define png_image_begin_read_from_memory CODEC_CALL(png_table, png_image_begin_read_from_memory)
#define png_image_finish_read CODEC_CALL(png_table, png_image_finish_read)
#define png_image_free CODEC_CALL(png_table, png_image_free)
#define png_image_write_to_memory CODEC_CALL(png_table, png_image_write_to_memory)
#define WebPDecode CODEC_CALL(webp_table, WebPDecode)
#define WebPEncodeLosslessRGBA CODEC_CALL(webp_table, WebPEncodeLosslessRGBA)
#define WebPEncodeRGBA CODEC_CALL(webp_table, WebPEncodeRGBA)
#define WebPFree CODEC_CALL(webp_table, WebPFree)
#define WebPFreeDecBuffer CODEC_CALL(webp_table, WebPFreeDecBuffer)
// Inline in webp/decode.h, over the library's *Internal functions.
#define WebPGetFeatures(data, size, features)                                                          \
    (CODEC_CALL(webp_table, WebPGetFeaturesInternal)((data), (size), (features), WEBP_DECODER_ABI_VERSION))
#define WebPInitDecoderConfig(config)                                                                  \
    (CODEC_CALL(webp_table, WebPInitDecoderConfigInternal)((config), WEBP_DECODER_ABI_VERSION))
#define WebPAnimDecoderOptionsInitInternal CODEC_CALL(webp_demux_table, WebPAnimDecoderOptionsInitInternal)
#define WebPAnimDecoderNewInternal CODEC_CALL(webp_demux_table, WebPAnimDecoderNewInternal)
#define WebPAnimDecoderGetInfo CODEC_CALL(webp_demux_table, WebPAnimDecoderGetInfo)
#define WebPAnimDecoderGetNext CODEC_CALL(webp_demux_table, WebPAnimDecoderGetNext)
#define WebPAnimDecoderDelete CODEC_CALL(webp_demux_table, WebPAnimDecoderDelete)
#define DGifCloseFile CODEC_CALL(gif_table, DGifCloseFile)
#define DGifGetExtension CODEC_CALL(gif_table, DGifGetExtension)
#define DGifGetExtensionNext CODEC_CALL(gif_table, DGifGetExtensionNext)
#define DGifGetImageDesc CODEC_CALL(gif_table, DGifGetImageDesc)
#define DGifGetLine CODEC_CALL(gif_table, DGifGetLine)
#define DGifGetRecordType CODEC_CALL(gif_table, DGifGetRecordType)
#define DGifOpen CODEC_CALL(gif_table, DGifOpen)
#define EGifCloseFile CODEC_CALL(gif_table, EGifCloseFile)
#define EGifGCBToExtension CODEC_CALL(gif_table, EGifGCBToExtension)
#define EGifOpen CODEC_CALL(gif_table, EGifOpen)
#define EGifPutExtension CODEC_CALL(gif_table, EGifPutExtension)
#define EGifPutImageDesc CODEC_CALL(gif_table, EGifPutImageDesc)
#define EGifPutLine CODEC_CALL(gif_table, EGifPutLine)
#define EGifPutScreenDesc CODEC_CALL(gif_table, EGifPutScreenDesc)
#define EGifSetGifVersion CODEC_CALL(gif_table, EGifSetGifVersion)
#define GifErrorString CODEC_CALL(gif_table, GifErrorString)
#define GifFreeMapObject CODEC_CALL(gif_table, GifFreeMapObject)
#define GifMakeMapObject CODEC_CALL(gif_table, GifMakeMapObject)

static void copy_message(char *message, const char *text) {
    if (message == NULL) return;
    if (text == NULL) text = "";
    size_t n = strlen(text);
    if (n >= IMGC_MESSAGE_CAPACITY) n = IMGC_MESSAGE_CAPACITY - 1;
    memcpy(message, text, n);
    message[n] = 0;
}

// 1 when a buffer of `capacity` bytes holds height rows of `stride` bytes, each at least width
// RGBA pixels, with a stride a C int can carry; otherwise 0 and the message says so.
static int fits(int width, int height, size_t stride, size_t capacity, char *message) {
    if (width > 0 && height > 0 && stride <= INT_MAX && stride / 4 >= (size_t)width && (size_t)height <= capacity / stride)
        return 1;
    copy_message(message, "buffer too small");
    return 0;
}

static imgc_status copy_out(const uint8_t *bytes, size_t count, uint8_t **output, size_t *out_count) {
    uint8_t *copy = malloc(count ? count : 1);
    if (copy == NULL) return IMGC_NO_MEMORY;
    memcpy(copy, bytes, count);
    *output = copy;
    *out_count = count;
    return IMGC_OK;
}

void imgc_free(uint8_t *buffer) { free(buffer); }

// MARK: - JPEG (TurboJPEG: libjpeg's setjmp is inside the library)

imgc_status imgc_jpeg_info(const uint8_t *data, size_t size, int *width, int *height, char *message) {
    if (!jpeg_table_ready(message)) return IMGC_UNSUPPORTED;
    if (size > ULONG_MAX) { copy_message(message, "too many bytes"); return IMGC_BAD_ARGUMENT; }
    tjhandle handle = tjInitDecompress();
    if (handle == NULL) { copy_message(message, tjGetErrorStr2(NULL)); return IMGC_NO_MEMORY; }
    int subsampling = 0, colorspace = 0;
    int result = tjDecompressHeader3(handle, data, (unsigned long)size, width, height, &subsampling, &colorspace);
    if (result != 0) copy_message(message, tjGetErrorStr2(handle));
    tjDestroy(handle);
    return result == 0 ? IMGC_OK : IMGC_CORRUPT;
}

// What the segments before the first scan say: an Adobe APP14 segment (CMYK then stored
// inverted, as Photoshop writes it; libjpeg writes it too) and a progressive frame (SOF2, 6, 10,
// 14). Every length is checked against `size`; a malformed header just ends the walk.
static void jpeg_markers(const uint8_t *data, size_t size, int *adobe, int *progressive) {
    *adobe = 0;
    *progressive = 0;
    size_t i = 2;
    while (i + 4 <= size) {
        if (data[i] != 0xFF) return;
        uint8_t marker = data[i + 1];
        if (marker == 0xFF) { i++; continue; }                  // fill byte
        if (marker == 0xDA || marker == 0xD9) return;           // first scan, or the end
        if ((marker >= 0xD0 && marker <= 0xD7) || marker == 0x01) { i += 2; continue; }
        size_t length = ((size_t)data[i + 2] << 8) | data[i + 3];
        if (length < 2) return;
        if (marker == 0xEE && length >= 7 && i + 9 <= size && memcmp(data + i + 4, "Adobe", 5) == 0) *adobe = 1;
        if (marker == 0xC2 || marker == 0xC6 || marker == 0xCA || marker == 0xCE) *progressive = 1;
        i += 2 + length;
    }
}

// The libjpeg warnings after which the image is still shown (TurboJPEG records the first one):
// - bytes that are not a marker between segments ("extraneous bytes before marker"): the image
//   data is whole;
// - a progressive file ending early ("Premature end of JPEG file", "premature end of data
//   segment"): every scan read so far covers the whole image, only coarser.
// Any other warning, and a sequential (baseline) file ending early (its last rows would be grey),
// stay errors.
static int jpeg_warning_tolerated(const char *text, int progressive) {
    if (text == NULL) return 0;
    if (strstr(text, "extraneous bytes before marker") != NULL) return 1;
    return progressive && (strstr(text, "Premature end of JPEG file") != NULL ||
                           strstr(text, "premature end of data segment") != NULL);
}

// CMYK (or YCCK, converted to CMYK by libjpeg) to RGBA in place: R = (255 − C)(255 − K)/255, …
// with the Adobe convention (stored inverted) when the file has an Adobe segment.
static void cmyk_to_rgba(uint8_t *pixels, int width, int height, size_t stride, int inverted) {
    for (int y = 0; y < height; y++) {
        uint8_t *p = pixels + (size_t)y * stride;
        for (int x = 0; x < width; x++, p += 4) {
            unsigned c = p[0], m = p[1], yellow = p[2], k = p[3];
            if (!inverted) { c = 255 - c; m = 255 - m; yellow = 255 - yellow; k = 255 - k; }
            p[0] = (uint8_t)((c * k + 127) / 255);
            p[1] = (uint8_t)((m * k + 127) / 255);
            p[2] = (uint8_t)((yellow * k + 127) / 255);
            p[3] = 255;
        }
    }
}

imgc_status imgc_jpeg_decode(const uint8_t *data, size_t size, int width, int height,
                             uint8_t *pixels, size_t stride, size_t capacity, char *message) {
    if (!jpeg_table_ready(message)) return IMGC_UNSUPPORTED;
    if (!fits(width, height, stride, capacity, message)) return IMGC_BAD_ARGUMENT;
    if (size > ULONG_MAX) { copy_message(message, "too many bytes"); return IMGC_BAD_ARGUMENT; }
    tjhandle handle = tjInitDecompress();
    if (handle == NULL) { copy_message(message, tjGetErrorStr2(NULL)); return IMGC_NO_MEMORY; }
    int declared_width = 0, declared_height = 0, subsampling = 0, colorspace = 0;
    int result = tjDecompressHeader3(handle, data, (unsigned long)size, &declared_width, &declared_height, &subsampling, &colorspace);
    int cmyk = result == 0 && (colorspace == TJCS_CMYK || colorspace == TJCS_YCCK);
    int adobe = 0, progressive = 0;
    jpeg_markers(data, size, &adobe, &progressive);
    if (result == 0) {
        // No TJFLAG_STOPONWARNING: a warning is judged below. More than 500 scans stays an error.
        result = tjDecompress2(handle, data, (unsigned long)size, pixels, width, (int)stride, height,
                               cmyk ? TJPF_CMYK : TJPF_RGBA, TJFLAG_LIMITSCANS);
        if (result != 0 && tjGetErrorCode(handle) == TJERR_WARNING && jpeg_warning_tolerated(tjGetErrorStr2(handle), progressive))
            result = 0;
    }
    if (result != 0) copy_message(message, tjGetErrorStr2(handle));
    tjDestroy(handle);
    if (result != 0) return IMGC_CORRUPT;
    if (cmyk) cmyk_to_rgba(pixels, width, height, stride, adobe);
    return IMGC_OK;
}

imgc_status imgc_jpeg_encode(const uint8_t *pixels, int width, int height, size_t stride, int quality,
                             uint8_t **output, size_t *count, char *message) {
    return imgc_jpeg_encode_with(pixels, width, height, stride, quality, 0, output, count, message);
}

imgc_status imgc_jpeg_encode_with(const uint8_t *pixels, int width, int height, size_t stride, int quality, int options,
                                  uint8_t **output, size_t *count, char *message) {
    if (!jpeg_table_ready(message)) return IMGC_UNSUPPORTED;
    if (width <= 0 || height <= 0 || stride > INT_MAX) return IMGC_BAD_ARGUMENT;
    tjhandle handle = tjInitCompress();
    if (handle == NULL) { copy_message(message, tjGetErrorStr2(NULL)); return IMGC_NO_MEMORY; }
    unsigned char *jpeg = NULL;
    unsigned long jpeg_size = 0;
    int cmyk = (options & IMGC_JPEG_CMYK) != 0;
    int flags = (options & IMGC_JPEG_PROGRESSIVE) ? TJFLAG_PROGRESSIVE : 0;
    int result = tjCompress2(handle, pixels, width, (int)stride, height, cmyk ? TJPF_CMYK : TJPF_RGBA, &jpeg, &jpeg_size,
                             cmyk ? TJSAMP_444 : TJSAMP_420, quality, flags);
    imgc_status status = IMGC_CORRUPT;
    if (result == 0) status = copy_out(jpeg, jpeg_size, output, count);
    else copy_message(message, tjGetErrorStr2(handle));
    tjFree(jpeg);
    tjDestroy(handle);
    return status;
}

// MARK: - PNG (libpng's simplified API: its setjmp is inside png_safe_execute)

static imgc_status png_begin(png_image *image, const uint8_t *data, size_t size, char *message) {
    memset(image, 0, sizeof *image);
    image->version = PNG_IMAGE_VERSION;
    if (!png_image_begin_read_from_memory(image, data, size)) {
        copy_message(message, image->message);
        png_image_free(image);
        return IMGC_CORRUPT;
    }
    if (image->width > INT_MAX || image->height > INT_MAX) {
        copy_message(message, "dimensions out of range");
        png_image_free(image);
        return IMGC_CORRUPT;
    }
    return IMGC_OK;
}

imgc_status imgc_png_info(const uint8_t *data, size_t size, int *width, int *height, char *message) {
    if (!png_table_ready(message)) return IMGC_UNSUPPORTED;
    png_image image;
    imgc_status status = png_begin(&image, data, size, message);
    if (status != IMGC_OK) return status;
    *width = (int)image.width;
    *height = (int)image.height;
    png_image_free(&image);
    return IMGC_OK;
}

imgc_status imgc_png_decode(const uint8_t *data, size_t size, int width, int height,
                            uint8_t *pixels, size_t stride, size_t capacity, char *message) {
    if (!png_table_ready(message)) return IMGC_UNSUPPORTED;
    if (!fits(width, height, stride, capacity, message)) return IMGC_BAD_ARGUMENT;
    png_image image;
    imgc_status status = png_begin(&image, data, size, message);
    if (status != IMGC_OK) return status;
    if ((int)image.width != width || (int)image.height != height) {
        png_image_free(&image);
        copy_message(message, "dimensions changed");
        return IMGC_BAD_ARGUMENT;
    }
    image.format = PNG_FORMAT_RGBA;
    if (!png_image_finish_read(&image, NULL, pixels, (png_int_32)stride, NULL)) {
        copy_message(message, image.message);
        png_image_free(&image);
        return IMGC_CORRUPT;
    }
    png_image_free(&image);
    return IMGC_OK;
}

imgc_status imgc_png_encode(const uint8_t *pixels, int width, int height, size_t stride,
                            uint8_t **output, size_t *count, char *message) {
    if (!png_table_ready(message)) return IMGC_UNSUPPORTED;
    if (width <= 0 || height <= 0 || stride > INT_MAX) return IMGC_BAD_ARGUMENT;
    png_image image;
    memset(&image, 0, sizeof image);
    image.version = PNG_IMAGE_VERSION;
    image.width = (png_uint_32)width;
    image.height = (png_uint_32)height;
    image.format = PNG_FORMAT_RGBA;
    image.flags = PNG_IMAGE_FLAG_FAST;
    // One pass into a buffer of libpng's upper bound, rather than a counting pass and a writing
    // pass (two whole compressions: most of a command's time for a thumbnail). The bound is
    // computed in double first: a huge image gives IMGC_NO_MEMORY, never a wrapped size.
    double bound = ((double)width * 4 + 1) * (double)height * 1.01 + 65536.0;
    if (bound > (double)SIZE_MAX / 2) return IMGC_NO_MEMORY;
    png_alloc_size_t needed = PNG_IMAGE_PNG_SIZE_MAX(image);
    uint8_t *buffer = malloc(needed ? needed : 1);
    if (buffer == NULL) { png_image_free(&image); return IMGC_NO_MEMORY; }
    if (!png_image_write_to_memory(&image, buffer, &needed, 0, pixels, (png_int_32)stride, NULL)) {
        copy_message(message, image.message[0] ? image.message : "the PNG did not fit its upper bound");
        png_image_free(&image);
        free(buffer);
        return IMGC_CORRUPT;
    }
    png_image_free(&image);
    uint8_t *shrunk = realloc(buffer, needed ? needed : 1);
    *output = shrunk != NULL ? shrunk : buffer;
    *count = needed;
    return IMGC_OK;
}

// MARK: - WebP

static const char *webp_status_text(VP8StatusCode status) {
    switch (status) {
    case VP8_STATUS_OUT_OF_MEMORY: return "out of memory";
    case VP8_STATUS_INVALID_PARAM: return "invalid parameter";
    case VP8_STATUS_BITSTREAM_ERROR: return "bitstream error";
    case VP8_STATUS_UNSUPPORTED_FEATURE: return "unsupported feature";
    case VP8_STATUS_SUSPENDED: return "suspended";
    case VP8_STATUS_USER_ABORT: return "aborted";
    case VP8_STATUS_NOT_ENOUGH_DATA: return "not enough data (truncated)";
    default: return "error";
    }
}

imgc_status imgc_webp_info(const uint8_t *data, size_t size, int *width, int *height, int *animated, int *alpha,
                           char *message) {
    if (!webp_table_ready(message)) return IMGC_UNSUPPORTED;
    WebPBitstreamFeatures features;
    VP8StatusCode status = WebPGetFeatures(data, size, &features);
    if (status != VP8_STATUS_OK) { copy_message(message, webp_status_text(status)); return IMGC_CORRUPT; }
    *width = features.width;
    *height = features.height;
    *animated = features.has_animation ? 1 : 0;
    *alpha = features.has_alpha ? 1 : 0;
    return IMGC_OK;
}

// The first frame of an animated WebP, composed on its canvas (width × height, the declared size)
// by libwebpdemux's animation decoder, copied into `pixels` (which `fits` checked).
static imgc_status webp_first_frame(const uint8_t *data, size_t size, int width, int height,
                                    uint8_t *pixels, size_t stride, char *message) {
    if (!webp_demux_table_ready(message)) return IMGC_UNSUPPORTED;
    WebPAnimDecoderOptions options;
    if (!WebPAnimDecoderOptionsInitInternal(&options, WEBP_DEMUX_ABI_VERSION)) {
        copy_message(message, "libwebpdemux version mismatch");
        return IMGC_BAD_ARGUMENT;
    }
    options.color_mode = MODE_RGBA;
    options.use_threads = 0;
    WebPData input = {data, size};
    WebPAnimDecoder *decoder = WebPAnimDecoderNewInternal(&input, &options, WEBP_DEMUX_ABI_VERSION);
    if (decoder == NULL) { copy_message(message, "animated WebP: corrupt or truncated frames"); return IMGC_CORRUPT; }
    imgc_status status = IMGC_OK;
    WebPAnimInfo info;
    uint8_t *frame = NULL;
    int timestamp = 0;
    if (!WebPAnimDecoderGetInfo(decoder, &info) || (int)info.canvas_width != width || (int)info.canvas_height != height) {
        copy_message(message, "animated WebP: canvas size differs from the declared size");
        status = IMGC_BAD_ARGUMENT;
    } else if (!WebPAnimDecoderGetNext(decoder, &frame, &timestamp) || frame == NULL) {
        copy_message(message, "animated WebP: the first frame does not decode");
        status = IMGC_CORRUPT;
    } else {
        for (int y = 0; y < height; y++) memcpy(pixels + (size_t)y * stride, frame + (size_t)y * (size_t)width * 4, (size_t)width * 4);
    }
    WebPAnimDecoderDelete(decoder);
    return status;
}

imgc_status imgc_webp_decode(const uint8_t *data, size_t size, int width, int height,
                             uint8_t *pixels, size_t stride, size_t capacity, char *message) {
    if (!webp_table_ready(message)) return IMGC_UNSUPPORTED;
    if (!fits(width, height, stride, capacity, message)) return IMGC_BAD_ARGUMENT;
    WebPDecoderConfig config;
    if (!WebPInitDecoderConfig(&config)) { copy_message(message, "libwebp version mismatch"); return IMGC_BAD_ARGUMENT; }
    VP8StatusCode status = WebPGetFeatures(data, size, &config.input);
    if (status != VP8_STATUS_OK) { copy_message(message, webp_status_text(status)); return IMGC_CORRUPT; }
    if (config.input.has_animation) return webp_first_frame(data, size, width, height, pixels, stride, message);
    if (config.input.width != width || config.input.height != height) {
        config.options.use_scaling = 1;
        config.options.scaled_width = width;
        config.options.scaled_height = height;
    }
    config.output.colorspace = MODE_RGBA;
    config.output.is_external_memory = 1;
    config.output.u.RGBA.rgba = pixels;
    config.output.u.RGBA.stride = (int)stride;
    config.output.u.RGBA.size = capacity;
    status = WebPDecode(data, size, &config);
    WebPFreeDecBuffer(&config.output);
    if (status != VP8_STATUS_OK) {
        copy_message(message, webp_status_text(status));
        return status == VP8_STATUS_OUT_OF_MEMORY ? IMGC_NO_MEMORY : IMGC_CORRUPT;
    }
    return IMGC_OK;
}

imgc_status imgc_webp_encode(const uint8_t *pixels, int width, int height, size_t stride, int quality,
                             uint8_t **output, size_t *count, char *message) {
    if (!webp_table_ready(message)) return IMGC_UNSUPPORTED;
    if (width <= 0 || height <= 0 || stride > INT_MAX) return IMGC_BAD_ARGUMENT;
    uint8_t *webp = NULL;
    size_t size = quality > 100 ? WebPEncodeLosslessRGBA(pixels, width, height, (int)stride, &webp)
                                : WebPEncodeRGBA(pixels, width, height, (int)stride, (float)quality, &webp);
    if (size == 0) { copy_message(message, "WebP encoding failed"); return IMGC_CORRUPT; }
    imgc_status status = copy_out(webp, size, output, count);
    WebPFree(webp);
    return status;
}

// MARK: - GIF (giflib reads through a callback over the bytes)

typedef struct {
    const uint8_t *data;
    size_t size;
    size_t offset;
} gif_reader;

static int gif_read(GifFileType *gif, GifByteType *buffer, int length) {
    gif_reader *reader = gif->UserData;
    if (length <= 0) return 0;
    size_t left = reader->size - reader->offset;
    size_t n = (size_t)length < left ? (size_t)length : left;
    memcpy(buffer, reader->data + reader->offset, n);
    reader->offset += n;
    return (int)n;
}

static GifFileType *gif_open(gif_reader *reader, char *message) {
    int error = 0;
    GifFileType *gif = DGifOpen(reader, gif_read, &error);
    if (gif == NULL) copy_message(message, GifErrorString(error));
    return gif;
}

static imgc_status gif_fail(GifFileType *gif, char *message) {
    copy_message(message, GifErrorString(gif->Error));
    int error = 0;
    DGifCloseFile(gif, &error);
    return IMGC_CORRUPT;
}

imgc_status imgc_gif_info(const uint8_t *data, size_t size, int *width, int *height, char *message) {
    if (!gif_table_ready(message)) return IMGC_UNSUPPORTED;
    gif_reader reader = {data, size, 0};
    GifFileType *gif = gif_open(&reader, message);
    if (gif == NULL) return IMGC_CORRUPT;
    *width = gif->SWidth;
    *height = gif->SHeight;
    int error = 0;
    DGifCloseFile(gif, &error);
    if (*width <= 0 || *height <= 0) { copy_message(message, "empty logical screen"); return IMGC_CORRUPT; }
    return IMGC_OK;
}

static imgc_status gif_frame(GifFileType *gif, int transparent, int width, int height,
                             uint8_t *pixels, size_t stride, char *message) {
    if (DGifGetImageDesc(gif) == GIF_ERROR) return gif_fail(gif, message);
    GifImageDesc *desc = &gif->Image;
    ColorMapObject *map = desc->ColorMap ? desc->ColorMap : gif->SColorMap;
    if (map == NULL || desc->Width <= 0 || desc->Height <= 0) {
        int error = 0;
        DGifCloseFile(gif, &error);
        copy_message(message, map == NULL ? "no colour map" : "empty frame");
        return IMGC_CORRUPT;
    }
    // A frame far larger than the screen it is drawn on is a bomb: refuse it before reading rows.
    if ((long long)desc->Width * desc->Height > 4LL * width * height + 65536) {
        int error = 0;
        DGifCloseFile(gif, &error);
        copy_message(message, "frame much larger than the logical screen");
        return IMGC_CORRUPT;
    }
    GifPixelType *line = malloc((size_t)desc->Width);
    if (line == NULL) { int error = 0; DGifCloseFile(gif, &error); return IMGC_NO_MEMORY; }
    static const int starts[4] = {0, 4, 2, 1}, steps[4] = {8, 8, 4, 2};
    int passes = desc->Interlace ? 4 : 1;
    for (int pass = 0; pass < passes; pass++) {
        int start = desc->Interlace ? starts[pass] : 0, step = desc->Interlace ? steps[pass] : 1;
        for (int row = start; row < desc->Height; row += step) {
            if (DGifGetLine(gif, line, desc->Width) == GIF_ERROR) { free(line); return gif_fail(gif, message); }
            long y = (long)desc->Top + row;
            if (y >= height) {
                if (!desc->Interlace) break;  // the rest is off the screen
                continue;
            }
            uint8_t *out = pixels + (size_t)y * stride;
            for (int x = 0; x < desc->Width; x++) {
                long cx = (long)desc->Left + x;
                if (cx >= width) break;
                int index = line[x];
                if (index == transparent || index >= map->ColorCount) continue;
                GifColorType color = map->Colors[index];
                uint8_t *p = out + (size_t)cx * 4;
                p[0] = color.Red; p[1] = color.Green; p[2] = color.Blue; p[3] = 255;
            }
        }
    }
    free(line);
    int error = 0;
    DGifCloseFile(gif, &error);
    return IMGC_OK;
}

imgc_status imgc_gif_decode(const uint8_t *data, size_t size, int width, int height,
                            uint8_t *pixels, size_t stride, size_t capacity, char *message) {
    if (!gif_table_ready(message)) return IMGC_UNSUPPORTED;
    if (!fits(width, height, stride, capacity, message)) return IMGC_BAD_ARGUMENT;
    gif_reader reader = {data, size, 0};
    GifFileType *gif = gif_open(&reader, message);
    if (gif == NULL) return IMGC_CORRUPT;
    if (gif->SWidth != width || gif->SHeight != height) {
        int error = 0;
        DGifCloseFile(gif, &error);
        copy_message(message, "dimensions changed");
        return IMGC_BAD_ARGUMENT;
    }
    for (int y = 0; y < height; y++) memset(pixels + (size_t)y * stride, 0, (size_t)width * 4);
    int transparent = -1;
    for (;;) {
        GifRecordType type;
        if (DGifGetRecordType(gif, &type) == GIF_ERROR) return gif_fail(gif, message);
        if (type == IMAGE_DESC_RECORD_TYPE) return gif_frame(gif, transparent, width, height, pixels, stride, message);
        if (type == TERMINATE_RECORD_TYPE) {
            int error = 0;
            DGifCloseFile(gif, &error);
            copy_message(message, "no image in the file");
            return IMGC_CORRUPT;
        }
        if (type == EXTENSION_RECORD_TYPE) {
            int code = 0;
            GifByteType *extension = NULL;
            if (DGifGetExtension(gif, &code, &extension) == GIF_ERROR) return gif_fail(gif, message);
            if (code == GRAPHICS_EXT_FUNC_CODE && extension != NULL && extension[0] >= 4 && (extension[1] & 1))
                transparent = extension[4];
            while (extension != NULL)
                if (DGifGetExtensionNext(gif, &extension) == GIF_ERROR) return gif_fail(gif, message);
        }
    }
}

typedef struct {
    uint8_t *bytes;
    size_t count;
    size_t capacity;
    int failed;
} gif_writer;

static int gif_write(GifFileType *gif, const GifByteType *bytes, int length) {
    gif_writer *writer = gif->UserData;
    if (length <= 0) return 0;
    if (writer->count + (size_t)length > writer->capacity) {
        size_t capacity = (writer->capacity + (size_t)length) * 2;
        uint8_t *grown = realloc(writer->bytes, capacity);
        if (grown == NULL) { writer->failed = 1; return 0; }
        writer->bytes = grown;
        writer->capacity = capacity;
    }
    memcpy(writer->bytes + writer->count, bytes, (size_t)length);
    writer->count += (size_t)length;
    return length;
}

imgc_status imgc_gif_encode(const uint8_t *pixels, int width, int height, size_t stride,
                            uint8_t **output, size_t *count, char *message) {
    if (!gif_table_ready(message)) return IMGC_UNSUPPORTED;
    if (width <= 0 || height <= 0 || width > 65535 || height > 65535) return IMGC_BAD_ARGUMENT;
    ColorMapObject *map = GifMakeMapObject(256, NULL);
    GifPixelType *indices = malloc((size_t)width * (size_t)height);
    if (map == NULL || indices == NULL) { GifFreeMapObject(map); free(indices); return IMGC_NO_MEMORY; }
    int colors = 1, transparent = 0, has_transparency = 0;  // index 0: transparent
    memset(map->Colors, 0, sizeof(GifColorType) * 256);
    for (int y = 0; y < height; y++) {
        for (int x = 0; x < width; x++) {
            const uint8_t *p = pixels + (size_t)y * stride + (size_t)x * 4;
            int index = -1;
            if (p[3] < 128) { index = transparent; has_transparency = 1; }
            for (int i = 1; index < 0 && i < colors; i++)
                if (map->Colors[i].Red == p[0] && map->Colors[i].Green == p[1] && map->Colors[i].Blue == p[2]) index = i;
            if (index < 0) {
                if (colors == 256) { GifFreeMapObject(map); free(indices); copy_message(message, "more than 255 colours"); return IMGC_BAD_ARGUMENT; }
                map->Colors[colors] = (GifColorType){p[0], p[1], p[2]};
                index = colors++;
            }
            indices[(size_t)y * (size_t)width + (size_t)x] = (GifPixelType)index;
        }
    }
    gif_writer writer = {NULL, 0, 0, 0};
    int error = 0;
    GifFileType *gif = EGifOpen(&writer, gif_write, &error);
    if (gif == NULL) { GifFreeMapObject(map); free(indices); copy_message(message, GifErrorString(error)); return IMGC_CORRUPT; }
    EGifSetGifVersion(gif, true);
    int ok = EGifPutScreenDesc(gif, width, height, 8, 0, map) != GIF_ERROR;
    if (ok && has_transparency) {
        GraphicsControlBlock gcb = {0, false, 0, transparent};
        GifByteType extension[4];
        size_t length = EGifGCBToExtension(&gcb, extension);
        ok = EGifPutExtension(gif, GRAPHICS_EXT_FUNC_CODE, (int)length, extension) != GIF_ERROR;
    }
    ok = ok && EGifPutImageDesc(gif, 0, 0, width, height, false, NULL) != GIF_ERROR;
    for (int y = 0; ok && y < height; y++)
        ok = EGifPutLine(gif, indices + (size_t)y * (size_t)width, width) != GIF_ERROR;
    if (!ok) copy_message(message, GifErrorString(gif->Error));
    if (EGifCloseFile(gif, &error) == GIF_ERROR && ok) { ok = 0; copy_message(message, GifErrorString(error)); }
    GifFreeMapObject(map);
    free(indices);
    if (!ok || writer.failed) { free(writer.bytes); return IMGC_CORRUPT; }
    *output = writer.bytes;
    *count = writer.count;
    return IMGC_OK;
}

// MARK: - Resampling: an exact area average

// Where one output pixel (column or row) falls on the source, along one side. The source has n
// pixels, each covering `denominator` pixels of an image `extent` pixels long (a JPEG decoded at
// 1/2, 1/4 or 1/8; the last one covers what is left), or one each (denominator 1, extent n); the
// output has m. In units of 1/m of an image pixel, divided by their common divisor: source pixel
// i covers [i·unit, min((i+1)·unit, end)), output pixel o covers [o·span, (o+1)·span), starting
// inside source pixel `first` and ending inside `last`. Every source pixel strictly between them
// lies wholly inside and weighs `unit`; `first` and `last` weigh what they overlap (when they are
// one pixel, the whole span). The weights of an output pixel add up to `span` exactly: integers,
// nothing lost at any ratio.
typedef struct {
    size_t first, last;
    uint64_t first_weight, last_weight;
} resample_span;

static uint64_t gcd64(uint64_t a, uint64_t b) {
    while (b != 0) { uint64_t t = a % b; a = b; b = t; }
    return a;
}

static void resample_spans(size_t n, size_t m, size_t extent, size_t denominator, resample_span *spans,
                           uint64_t *unit, uint64_t *span) {
    // extent and m·denominator are below 2^34: every product below stays far from 2^64.
    uint64_t g = gcd64(extent, (uint64_t)m * denominator);
    *unit = (uint64_t)m * denominator / g;
    *span = extent / g;
    for (size_t o = 0; o < m; o++) {
        uint64_t start = o * *span, end = (o + 1) * *span;
        resample_span *s = &spans[o];
        s->first = (size_t)(start / *unit);
        s->last = (size_t)((end - 1) / *unit);
        if (s->last >= n) s->last = n - 1;   // cannot happen when extent <= n·denominator
        if (s->first > s->last) s->first = s->last;
        if (s->first == s->last) {
            s->first_weight = *span;
            s->last_weight = 0;
        } else {
            s->first_weight = (s->first + 1) * *unit - start;
            s->last_weight = end - s->last * *unit;
        }
    }
}

// One source row reduced to the output's width: for each output column, the sums of its source
// pixels' premultiplied channels (R·A, G·A, B·A and A) times their horizontal weights.
static void resample_row(const uint8_t *row, const resample_span *spans, int width, uint64_t unit, uint64_t *sums) {
    for (int o = 0; o < width; o++, sums += 4) {
        const resample_span *s = &spans[o];
        const uint8_t *p = row + s->first * 4;
        uint64_t a = p[3], w = s->first_weight;
        uint64_t r = p[0] * a * w, g = p[1] * a * w, b = p[2] * a * w;
        a *= w;
        if (s->last != s->first) {
            // The pixels wholly inside: summed, then weighed once.
            uint64_t ir = 0, ig = 0, ib = 0, ia = 0;
            const uint8_t *end = row + s->last * 4;
            for (p += 4; p < end; p += 4) {
                uint32_t pa = p[3];
                ir += p[0] * pa;
                ig += p[1] * pa;
                ib += p[2] * pa;
                ia += pa;
            }
            uint64_t la = end[3], lw = s->last_weight;
            r += ir * unit + end[0] * la * lw;
            g += ig * unit + end[1] * la * lw;
            b += ib * unit + end[2] * la * lw;
            a += ia * unit + la * lw;
        }
        sums[0] = r;
        sums[1] = g;
        sums[2] = b;
        sums[3] = a;
    }
}

imgc_status imgc_resample(const uint8_t *source, int source_width, int source_height, size_t source_stride,
                          size_t source_capacity, int extent_width, int extent_height, int denominator,
                          uint8_t *destination, int width, int height, size_t stride, size_t capacity) {
    if (source == NULL || destination == NULL) return IMGC_BAD_ARGUMENT;
    if (source_width <= 0 || source_height <= 0 || width <= 0 || height <= 0) return IMGC_BAD_ARGUMENT;
    if (!fits(source_width, source_height, source_stride, source_capacity, NULL)) return IMGC_BAD_ARGUMENT;
    if (!fits(width, height, stride, capacity, NULL)) return IMGC_BAD_ARGUMENT;
    // The source pixels must cover the image, the last row and column at least partly.
    if (denominator < 1 || denominator > 8 || extent_width <= 0 || extent_height <= 0 ||
        (long long)source_width * denominator < extent_width || (long long)(source_width - 1) * denominator >= extent_width ||
        (long long)source_height * denominator < extent_height || (long long)(source_height - 1) * denominator >= extent_height)
        return IMGC_BAD_ARGUMENT;
    // The sums reach (source pixels) × 8² × 255 × 255 × 3 at most: below 2^64 for any image that
    // fits in memory; refused above 2^40 pixels rather than trusted.
    if ((uint64_t)source_width * (uint64_t)source_height > (1ULL << 40)) return IMGC_BAD_ARGUMENT;
    resample_span *columns = malloc(sizeof *columns * (size_t)width);
    resample_span *rows = malloc(sizeof *rows * (size_t)height);
    uint64_t *reduced = malloc(sizeof *reduced * 4 * (size_t)width);   // the last source row reduced
    uint64_t *sums = malloc(sizeof *sums * 4 * (size_t)width);         // the output row being summed
    if (columns == NULL || rows == NULL || reduced == NULL || sums == NULL) {
        free(columns); free(rows); free(reduced); free(sums);
        return IMGC_NO_MEMORY;
    }
    uint64_t unit_x, span_x, unit_y, span_y;
    resample_spans((size_t)source_width, (size_t)width, (size_t)extent_width, (size_t)denominator, columns, &unit_x, &span_x);
    resample_spans((size_t)source_height, (size_t)height, (size_t)extent_height, (size_t)denominator, rows, &unit_y, &span_y);
    uint64_t area = span_x * span_y;   // the weights of one output pixel, added up
    size_t reduced_row = SIZE_MAX;
    for (int oy = 0; oy < height; oy++) {
        const resample_span *s = &rows[oy];
        memset(sums, 0, sizeof *sums * 4 * (size_t)width);
        for (size_t y = s->first; y <= s->last; y++) {
            // A row on the border of two output rows is reduced once, for both.
            if (y != reduced_row) {
                resample_row(source + y * source_stride, columns, width, unit_x, reduced);
                reduced_row = y;
            }
            uint64_t w = y == s->first ? s->first_weight : y == s->last ? s->last_weight : unit_y;
            for (size_t i = 0; i < 4 * (size_t)width; i++) sums[i] += reduced[i] * w;
        }
        // Straight alpha out: each colour is its premultiplied sum over the alpha sum, rounded.
        uint8_t *out = destination + (size_t)oy * stride;
        for (int ox = 0; ox < width; ox++, out += 4) {
            const uint64_t *p = sums + 4 * (size_t)ox;
            uint64_t alpha = p[3];
            if (alpha == 0) { out[0] = out[1] = out[2] = out[3] = 0; continue; }
            for (int c = 0; c < 3; c++) out[c] = (uint8_t)((2 * p[c] + alpha) / (2 * alpha));
            out[3] = (uint8_t)((2 * alpha + area) / (2 * area));
        }
    }
    free(columns); free(rows); free(reduced); free(sums);
    return IMGC_OK;
}
