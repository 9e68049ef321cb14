// The image libraries' glue. See include/CImageCodecs.h for the contract of each function.
#include "CImageCodecs.h"

#include <gif_lib.h>
#include <lcms2.h>
#include <limits.h>
#include <png.h>
#include <stdlib.h>
#include <string.h>
#include <turbojpeg.h>
#include <webp/decode.h>
#include <webp/demux.h>
#include <webp/encode.h>
#include <zlib.h>

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>

// MARK: - Loading the libraries

// TurboJPEG, libpng, libwebp and giflib are not linked: each is loaded with dlopen the first
// time a function of its format runs, so that a process that decodes nothing (a decision of the
// command) does not load them (docs/startup.md); Little CMS (and zlib, for a PNG's compressed
// profile) likewise, when the first image with an embedded colour profile is decoded. A codec that
// cannot be loaded makes its functions return IMGC_UNSUPPORTED with "libpng16.so.16 could not be
// loaded (…)" as the message; Little CMS that cannot be loaded leaves a profile unapplied.
//
// Memory running out while a library is mapped (dlopen's "failed to map segment from shared object",
// "cannot allocate memory") is not that the library is missing: the function returns IMGC_NO_MEMORY
// (library_failure), and the next call tries to load it again; any other failure is final.
typedef struct {
    const char *file;
    const char *const *names;
    void **slots;
    size_t count;
    int loaded;
    int failed;      // for good: missing, or a function missing
    char error[IMGC_MESSAGE_CAPACITY];
} codec_library;

static int contains_ignoring_case(const char *text, const char *phrase) {
    if (text == NULL) return 0;
    size_t n = strlen(phrase);
    for (const char *at = text; *at != 0; at++) {
        size_t i = 0;
        while (i < n && at[i] != 0 && (at[i] | 0x20) == (phrase[i] | 0x20)) i++;
        if (i == n) return 1;
    }
    return 0;
}

// Whether a loader's message says that memory (address space) ran out.
static int load_error_means_no_memory(const char *text) {
    return contains_ignoring_case(text, "failed to map segment") || contains_ignoring_case(text, "cannot allocate memory");
}

// What a function returns when its library is not ready (the message says why).
static imgc_status library_failure(const char *message) {
    return load_error_means_no_memory(message) ? IMGC_NO_MEMORY : IMGC_UNSUPPORTED;
}

static void load_codec_library(codec_library *library) {
    void *handle = dlopen(library->file, RTLD_NOW | RTLD_LOCAL);
    if (handle == NULL) {
        const char *reason = dlerror();
        snprintf(library->error, sizeof library->error, "%s could not be loaded (%s)", library->file,
                 reason ? reason : "dlopen failed");
        library->failed = !load_error_means_no_memory(reason);
        return;
    }
    for (size_t index = 0; index < library->count; index++) {
        library->slots[index] = dlsym(handle, library->names[index]);
        if (library->slots[index] == NULL) {
            snprintf(library->error, sizeof library->error, "%s has no %s", library->file, library->names[index]);
            library->failed = 1;
            return;
        }
    }
    library->loaded = 1;
}

#define CODEC_FIELD(name) void *name;
#define CODEC_NAME(name) #name,
// One library: its table of pointers (`table.name`), its names, and `ready(message)`, which
// loads it (thread-safe; once, unless memory ran out) and says whether it can be used.
#define CODEC_LIBRARY(table, file_name, FUNCTIONS)                                                     \
    static struct { FUNCTIONS(CODEC_FIELD) } table;                                                    \
    static const char *const table##_names[] = {FUNCTIONS(CODEC_NAME)};                                \
    static codec_library table##_library = {file_name, table##_names, (void **)&table,                 \
                                            sizeof table##_names / sizeof table##_names[0], 0, 0, {0}}; \
    static pthread_mutex_t table##_lock = PTHREAD_MUTEX_INITIALIZER;                                   \
    static int table##_ready(char *message) {                                                          \
        pthread_mutex_lock(&table##_lock);                                                             \
        if (!table##_library.loaded && !table##_library.failed) load_codec_library(&table##_library);  \
        int loaded = table##_library.loaded;                                                           \
        if (!loaded && message != NULL) snprintf(message, IMGC_MESSAGE_CAPACITY, "%s", table##_library.error); \
        pthread_mutex_unlock(&table##_lock);                                                           \
        return loaded;                                                                                 \
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
    X(WebPDemuxInternal) X(WebPDemuxGetI) X(WebPDemuxGetFrame) X(WebPDemuxReleaseIterator) X(WebPDemuxDelete)
#define GIF_FUNCTIONS(X)                                                                               \
    X(DGifCloseFile) X(DGifGetExtension) X(DGifGetExtensionNext) X(DGifGetImageDesc) X(DGifGetLine)     \
    X(DGifGetRecordType) X(DGifOpen) X(EGifCloseFile) X(EGifGCBToExtension) X(EGifOpen)                 \
    X(EGifPutExtension) X(EGifPutImageDesc) X(EGifPutLine) X(EGifPutScreenDesc) X(EGifSetGifVersion)    \
    X(GifErrorString) X(GifFreeMapObject) X(GifMakeMapObject)

// Little CMS: embedded colour profiles, loaded by the first image that has one.
#define LCMS_FUNCTIONS(X)                                                                              \
    X(cmsCreateContext) X(cmsDeleteContext) X(cmsGetContextUserData) X(cmsSetLogErrorHandlerTHR)       \
    X(cmsOpenProfileFromMemTHR) X(cmsCreate_sRGBProfileTHR) X(cmsGetColorSpace) X(cmsCloseProfile)     \
    X(cmsCreateTransformTHR) X(cmsDoTransform) X(cmsDeleteTransform)
// zlib: a PNG's iCCP profile is compressed (libpng inflates its image data itself).
#define ZLIB_FUNCTIONS(X) X(inflateInit_) X(inflate) X(inflateEnd) X(crc32)

CODEC_LIBRARY(jpeg_table, "libturbojpeg.so.0", JPEG_FUNCTIONS)
CODEC_LIBRARY(png_table, "libpng16.so.16", PNG_FUNCTIONS)
CODEC_LIBRARY(webp_table, "libwebp.so.7", WEBP_FUNCTIONS)
CODEC_LIBRARY(webp_demux_table, "libwebpdemux.so.2", WEBP_DEMUX_FUNCTIONS)
CODEC_LIBRARY(gif_table, "libgif.so.7", GIF_FUNCTIONS)
CODEC_LIBRARY(lcms_table, "liblcms2.so.2", LCMS_FUNCTIONS)
CODEC_LIBRARY(zlib_table, "libz.so.1", ZLIB_FUNCTIONS)

// From here on, each library call goes through its table, with the library's own signature.
#define CODEC_CALL(table, name) ((__typeof__(&name))table.name)
#define cmsCreateContext CODEC_CALL(lcms_table, cmsCreateContext)
#define cmsDeleteContext CODEC_CALL(lcms_table, cmsDeleteContext)
#define cmsGetContextUserData CODEC_CALL(lcms_table, cmsGetContextUserData)
#define cmsSetLogErrorHandlerTHR CODEC_CALL(lcms_table, cmsSetLogErrorHandlerTHR)
#define cmsOpenProfileFromMemTHR CODEC_CALL(lcms_table, cmsOpenProfileFromMemTHR)
#define cmsCreate_sRGBProfileTHR CODEC_CALL(lcms_table, cmsCreate_sRGBProfileTHR)
#define cmsGetColorSpace CODEC_CALL(lcms_table, cmsGetColorSpace)
#define cmsCloseProfile CODEC_CALL(lcms_table, cmsCloseProfile)
#define cmsCreateTransformTHR CODEC_CALL(lcms_table, cmsCreateTransformTHR)
#define cmsDoTransform CODEC_CALL(lcms_table, cmsDoTransform)
#define cmsDeleteTransform CODEC_CALL(lcms_table, cmsDeleteTransform)
#define inflateInit_ CODEC_CALL(zlib_table, inflateInit_)
#define inflate CODEC_CALL(zlib_table, inflate)
#define inflateEnd CODEC_CALL(zlib_table, inflateEnd)
#define crc32 CODEC_CALL(zlib_table, crc32)
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
#define WebPDemuxInternal CODEC_CALL(webp_demux_table, WebPDemuxInternal)
#define WebPDemuxGetI CODEC_CALL(webp_demux_table, WebPDemuxGetI)
#define WebPDemuxGetFrame CODEC_CALL(webp_demux_table, WebPDemuxGetFrame)
#define WebPDemuxReleaseIterator CODEC_CALL(webp_demux_table, WebPDemuxReleaseIterator)
#define WebPDemuxDelete CODEC_CALL(webp_demux_table, WebPDemuxDelete)
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

// Whether a library's message says that memory ran out rather than that the bytes are bad: libjpeg's
// "Insufficient memory (case N)", TurboJPEG's "Memory allocation failure", libpng's "Out of memory"
// (and "png_image_read: out of memory"), zlib's "insufficient memory" through libpng. A decode
// that fails so is IMGC_NO_MEMORY (the bytes may be fine), never IMGC_CORRUPT.
static int message_means_no_memory(const char *text) {
    return contains_ignoring_case(text, "insufficient memory") || contains_ignoring_case(text, "out of memory") ||
           contains_ignoring_case(text, "memory allocation failure");
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

// MARK: - Colour profiles (Little CMS, zlib)

// The largest embedded profile read. Real ones are a few hundred bytes (matrix-shaper RGB: Display
// P3, Adobe RGB) to a few megabytes (print CMYK with large tables); a JPEG can carry at most 255
// chunks of 65,519 bytes (16.7 MB). Past this a profile is ignored, never inflated further.
#define ICC_PROFILE_LIMIT (16u << 20)

// An embedded profile: 0 none, 1 found (*profile malloc'd, *count bytes), -1 present but damaged
// (the reason in `why`), -2 out of memory.
enum { PROFILE_NONE = 0, PROFILE_FOUND = 1, PROFILE_DAMAGED = -1, PROFILE_NO_MEMORY = -2 };

// JPEG: APP2 segments "ICC_PROFILE\0", sequence number (1…count), count, then the chunk's bytes;
// reassembled in sequence order. Every chunk must agree on the count, each number appear once.
static int jpeg_icc_profile(const uint8_t *data, size_t size, uint8_t **profile, size_t *count, const char **why) {
    static const char tag[12] = "ICC_PROFILE";   // with its NUL: 12 bytes
    size_t offsets[256] = {0}, lengths[256] = {0};
    int chunks = 0, declared = 0;
    uint8_t seen[256] = {0};
    size_t i = 2, total = 0;
    while (i + 4 <= size) {
        if (data[i] != 0xFF) break;
        uint8_t marker = data[i + 1];
        if (marker == 0xFF) { i++; continue; }
        if (marker == 0xDA || marker == 0xD9) break;
        if ((marker >= 0xD0 && marker <= 0xD7) || marker == 0x01) { i += 2; continue; }
        size_t length = ((size_t)data[i + 2] << 8) | data[i + 3];
        if (length < 2) break;
        if (marker == 0xE2 && length >= 2 + 14 && i + 16 <= size && memcmp(data + i + 4, tag, 12) == 0) {
            if (length > size - i - 2) { *why = "ICC profile chunk truncated"; return PROFILE_DAMAGED; }
            int number = data[i + 16], of = data[i + 17];
            if (number == 0 || of == 0 || number > of || (declared != 0 && of != declared) || seen[number]) {
                *why = "ICC profile chunks out of sequence";
                return PROFILE_DAMAGED;
            }
            declared = of;
            seen[number] = 1;
            offsets[number] = i + 18;
            lengths[number] = length - 16;
            total += length - 16;
            chunks++;
        }
        i += 2 + length;
    }
    if (chunks == 0) return PROFILE_NONE;
    if (chunks != declared) { *why = "ICC profile chunks missing"; return PROFILE_DAMAGED; }
    if (total == 0 || total > ICC_PROFILE_LIMIT) { *why = "ICC profile empty or too large"; return PROFILE_DAMAGED; }
    uint8_t *bytes = malloc(total);
    if (bytes == NULL) return PROFILE_NO_MEMORY;
    size_t at = 0;
    for (int number = 1; number <= declared; number++) {
        memcpy(bytes + at, data + offsets[number], lengths[number]);
        at += lengths[number];
    }
    *profile = bytes;
    *count = total;
    return PROFILE_FOUND;
}

static uint32_t read_be32(const uint8_t *p) { return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]; }
static uint32_t read_le32(const uint8_t *p) { return (uint32_t)p[3] << 24 | (uint32_t)p[2] << 16 | (uint32_t)p[1] << 8 | p[0]; }

// zlib's inflate of `count` bytes into a new buffer of at most ICC_PROFILE_LIMIT bytes.
static int inflate_profile(const uint8_t *data, size_t count, uint8_t **profile, size_t *out_count, const char **why) {
    z_stream stream;
    memset(&stream, 0, sizeof stream);
    if (inflateInit(&stream) != Z_OK) return PROFILE_NO_MEMORY;
    size_t capacity = 4096, used = 0;
    uint8_t *bytes = malloc(capacity);
    int result = bytes == NULL ? Z_MEM_ERROR : Z_OK;
    stream.next_in = (Bytef *)data;
    while (result == Z_OK) {
        if (used == capacity) {
            if (capacity >= ICC_PROFILE_LIMIT) { result = Z_BUF_ERROR; break; }   // too large
            uint8_t *grown = realloc(bytes, capacity * 2);
            if (grown == NULL) { result = Z_MEM_ERROR; break; }
            bytes = grown;
            capacity *= 2;
        }
        uInt input = count > UINT_MAX ? UINT_MAX : (uInt)count;
        stream.avail_in = input;
        stream.next_out = bytes + used;
        stream.avail_out = (uInt)(capacity - used);
        result = inflate(&stream, Z_NO_FLUSH);
        count -= input - stream.avail_in;
        used = capacity - stream.avail_out;
        if (result == Z_BUF_ERROR && used == capacity) result = Z_OK;           // output full: grow
        else if (result == Z_OK && count == 0 && used < capacity) result = Z_DATA_ERROR;   // input ended early
    }
    inflateEnd(&stream);
    if (result == Z_STREAM_END && used > 0) {
        *profile = bytes;
        *out_count = used;
        return PROFILE_FOUND;
    }
    free(bytes);
    if (result == Z_MEM_ERROR) return PROFILE_NO_MEMORY;
    *why = capacity >= ICC_PROFILE_LIMIT && used == capacity ? "iCCP profile larger than 16 MB" : "iCCP profile does not inflate";
    return PROFILE_DAMAGED;
}

// PNG: the iCCP chunk before the image data (keyword, NUL, compression method 0, a zlib stream).
// Its CRC is checked (libpng would drop an ancillary chunk whose CRC fails).
static int png_icc_profile(const uint8_t *data, size_t size, uint8_t **profile, size_t *count, const char **why) {
    size_t i = 8;
    while (i + 12 <= size) {
        uint32_t length = read_be32(data + i);
        const uint8_t *type = data + i + 4;
        if (length > 0x7FFFFFFFu || size - i - 12 < length) return PROFILE_NONE;   // libpng says what is wrong
        if (memcmp(type, "IDAT", 4) == 0 || memcmp(type, "IEND", 4) == 0) return PROFILE_NONE;
        if (memcmp(type, "iCCP", 4) == 0) {
            if (!zlib_table_ready(NULL)) { *why = "zlib (libz.so.1) could not be loaded"; return PROFILE_DAMAGED; }
            if (crc32(crc32(0, NULL, 0), type, length + 4) != read_be32(data + i + 8 + length)) { *why = "iCCP chunk CRC mismatch"; return PROFILE_DAMAGED; }
            const uint8_t *body = data + i + 8;
            size_t name = 0;
            while (name < length && name < 80 && body[name] != 0) name++;
            if (name == 0 || name >= 80 || name + 2 > length || body[name + 1] != 0) { *why = "iCCP chunk malformed"; return PROFILE_DAMAGED; }
            return inflate_profile(body + name + 2, length - name - 2, profile, count, why);
        }
        i += 12 + (size_t)length;
    }
    return PROFILE_NONE;
}

// PNG bytes without the chunks an applied iCCP profile replaces (gAMA, cHRM, sRGB) and without the
// iCCP chunk itself, so that libpng's simplified API converts nothing: the profile does it all.
static uint8_t *png_without_color_chunks(const uint8_t *data, size_t size, size_t *out_size) {
    uint8_t *copy = malloc(size);
    if (copy == NULL) return NULL;
    memcpy(copy, data, 8);
    size_t i = 8, at = 8;
    while (i + 12 <= size) {
        uint32_t length = read_be32(data + i);
        if (length > 0x7FFFFFFFu || size - i - 12 < length) break;
        const uint8_t *type = data + i + 4;
        int drop = memcmp(type, "gAMA", 4) == 0 || memcmp(type, "cHRM", 4) == 0 || memcmp(type, "sRGB", 4) == 0 ||
                   memcmp(type, "iCCP", 4) == 0;
        if (!drop) { memcpy(copy + at, data + i, 12 + (size_t)length); at += 12 + (size_t)length; }
        i += 12 + (size_t)length;
    }
    memcpy(copy + at, data + i, size - i);   // whatever is left, as it was (libpng judges it)
    *out_size = at + size - i;
    return copy;
}

// WebP: the ICCP chunk of an extended file (VP8X with its ICC flag).
static int webp_icc_profile(const uint8_t *data, size_t size, uint8_t **profile, size_t *count, const char **why) {
    if (size < 30 || memcmp(data + 12, "VP8X", 4) != 0 || (data[20] & 0x20) == 0) return PROFILE_NONE;
    size_t i = 12;
    while (i + 8 <= size) {
        uint32_t length = read_le32(data + i + 4);
        if (size - i - 8 < length) break;
        if (memcmp(data + i, "ICCP", 4) == 0) {
            if (length == 0 || length > ICC_PROFILE_LIMIT) { *why = "ICCP chunk empty or too large"; return PROFILE_DAMAGED; }
            uint8_t *bytes = malloc(length);
            if (bytes == NULL) return PROFILE_NO_MEMORY;
            memcpy(bytes, data + i + 8, length);
            *profile = bytes;
            *count = length;
            return PROFILE_FOUND;
        }
        i += 8 + (size_t)length + (length & 1);
    }
    *why = "ICC flag set but no complete ICCP chunk";
    return PROFILE_DAMAGED;
}

// A conversion to sRGB, ready before the pixels are decoded.
typedef enum { COLOR_RGB, COLOR_GRAY, COLOR_CMYK, COLOR_CMYK_INVERTED } color_kind;
typedef struct {
    void *context;     // cmsContext (its error handler writes into `error`)
    void *transform;   // cmsHTRANSFORM
    color_kind kind;
    uint8_t grey[256][3];   // COLOR_GRAY: each grey value's sRGB, computed once by `transform`
    char error[IMGC_MESSAGE_CAPACITY];
} color_conversion;

static void lcms_error(cmsContext context, cmsUInt32Number code, const char *text) {
    (void)code;
    color_conversion *conversion = cmsGetContextUserData(context);
    if (conversion != NULL && conversion->error[0] == 0) copy_message(conversion->error, text);
}

// 1 when `profile` converts pixels of `kind` to sRGB; else 0, the reason in conversion->error; -1
// when memory ran out (Little CMS could not be mapped, or its context allocated).
static int color_prepare(const uint8_t *profile, size_t count, color_kind kind, color_conversion *conversion) {
    memset(conversion, 0, sizeof *conversion);
    conversion->kind = kind;
    if (!lcms_table_ready(conversion->error)) return load_error_means_no_memory(conversion->error) ? -1 : 0;
    if (count > UINT32_MAX) { copy_message(conversion->error, "profile too large"); return 0; }
    cmsContext context = cmsCreateContext(NULL, conversion);
    if (context == NULL) { copy_message(conversion->error, "Little CMS: no memory"); return -1; }
    conversion->context = context;
    cmsSetLogErrorHandlerTHR(context, lcms_error);
    cmsHPROFILE input = cmsOpenProfileFromMemTHR(context, profile, (cmsUInt32Number)count);
    if (input == NULL) {
        if (conversion->error[0] == 0) copy_message(conversion->error, "Little CMS refused the profile");
        return 0;
    }
    cmsColorSpaceSignature space = cmsGetColorSpace(input);
    cmsColorSpaceSignature expected = kind == COLOR_RGB ? cmsSigRgbData : kind == COLOR_GRAY ? cmsSigGrayData : cmsSigCmykData;
    if (space != expected) {
        copy_message(conversion->error, kind == COLOR_RGB ? "the profile is not an RGB profile" :
                     kind == COLOR_GRAY ? "the profile is not a grey profile" : "the profile is not a CMYK profile");
        cmsCloseProfile(input);
        return 0;
    }
    cmsHPROFILE srgb = cmsCreate_sRGBProfileTHR(context);
    // Gray: the first byte of each RGBA pixel, three bytes skipped (R = G = B); CMYK: four bytes,
    // inverted (Adobe) or not. Out: R, G, B and a fourth byte the transform leaves alone.
    cmsUInt32Number in_format = kind == COLOR_RGB ? TYPE_RGBA_8
        : kind == COLOR_GRAY ? (COLORSPACE_SH(PT_GRAY) | CHANNELS_SH(1) | BYTES_SH(1) | EXTRA_SH(3))
        : kind == COLOR_CMYK ? TYPE_CMYK_8 : TYPE_CMYK_8_REV;
    // Grey: not optimised. Little CMS's default 8-bit optimisation samples a grey → RGB transform
    // into a coarse table, which is steep near black for a linear profile (gamma 1.0: the value 2
    // came out 12 instead of 21.7); unoptimised, each value goes through the profile's curve
    // exactly, and only 256 values are ever converted (the table `grey`), so it costs nothing.
    cmsUInt32Number flags = kind == COLOR_RGB ? cmsFLAGS_COPY_ALPHA : kind == COLOR_GRAY ? cmsFLAGS_NOOPTIMIZE : 0;
    if (srgb != NULL)
        conversion->transform = cmsCreateTransformTHR(context, input, in_format, srgb, TYPE_RGBA_8, INTENT_PERCEPTUAL, flags);
    cmsCloseProfile(input);
    if (srgb != NULL) cmsCloseProfile(srgb);
    if (conversion->transform == NULL) {
        if (conversion->error[0] == 0) copy_message(conversion->error, "Little CMS could not convert from the profile");
        return 0;
    }
    if (kind == COLOR_GRAY) {
        uint8_t values[256 * 4], converted[256 * 4];
        for (int v = 0; v < 256; v++) { values[4 * v] = (uint8_t)v; values[4 * v + 1] = values[4 * v + 2] = 0; values[4 * v + 3] = 255; }
        cmsDoTransform(conversion->transform, values, converted, 256);
        for (int v = 0; v < 256; v++) memcpy(conversion->grey[v], converted + 4 * v, 3);
    }
    return 1;
}

// Converts the pixels in place, row by row through a scratch row. Alpha is kept (RGB, grey); a
// CMYK pixel's fourth byte (K) becomes 255.
static int color_apply(color_conversion *conversion, uint8_t *pixels, int width, int height, size_t stride) {
    if (conversion->kind == COLOR_GRAY) {
        // The first byte of each pixel is the grey value (R = G = B); alpha is kept.
        for (int y = 0; y < height; y++) {
            uint8_t *p = pixels + (size_t)y * stride;
            for (int x = 0; x < width; x++, p += 4) memcpy(p, conversion->grey[p[0]], 3);
        }
        return 1;
    }
    uint8_t *row = malloc((size_t)width * 4);
    if (row == NULL) return 0;
    for (int y = 0; y < height; y++) {
        uint8_t *p = pixels + (size_t)y * stride;
        cmsDoTransform(conversion->transform, p, row, (cmsUInt32Number)width);
        if (conversion->kind == COLOR_RGB) {
            memcpy(p, row, (size_t)width * 4);
        } else {
            for (int x = 0; x < width; x++) {
                p[4 * x] = row[4 * x];
                p[4 * x + 1] = row[4 * x + 1];
                p[4 * x + 2] = row[4 * x + 2];
                p[4 * x + 3] = 255;   // CMYK: the fourth byte was K
            }
        }
    }
    free(row);
    return 1;
}

static void color_release(color_conversion *conversion) {
    if (conversion->transform != NULL) cmsDeleteTransform(conversion->transform);
    if (conversion->context != NULL) cmsDeleteContext(conversion->context);
    conversion->transform = NULL;
    conversion->context = NULL;
}

// The outcome of looking for a profile and preparing its conversion (before any pixel is decoded).
typedef struct {
    int converting;                  // 1: `conversion` is ready
    imgc_profile outcome;            // what to report
    char reason[IMGC_MESSAGE_CAPACITY];
    color_conversion conversion;
} color_plan;

// Looks for a profile with `find` (when the options ask for it) and prepares its conversion from
// pixels of `kind`. IMGC_NO_MEMORY when a buffer could not be allocated; otherwise IMGC_OK, the plan
// says whether to convert and what to report.
static imgc_status color_plan_make(color_plan *plan, int options, const uint8_t *data, size_t size,
                                   int (*find)(const uint8_t *, size_t, uint8_t **, size_t *, const char **), color_kind kind) {
    memset(plan, 0, sizeof *plan);
    plan->outcome = IMGC_PROFILE_NONE;
    if ((options & IMGC_DECODE_COLOR_PROFILE) == 0) return IMGC_OK;
    uint8_t *profile = NULL;
    size_t count = 0;
    const char *why = NULL;
    int found = find(data, size, &profile, &count, &why);
    if (found == PROFILE_NO_MEMORY) return IMGC_NO_MEMORY;
    if (found == PROFILE_NONE) return IMGC_OK;
    plan->outcome = IMGC_PROFILE_IGNORED;
    if (found == PROFILE_DAMAGED) { copy_message(plan->reason, why); return IMGC_OK; }
    int prepared = color_prepare(profile, count, kind, &plan->conversion);
    if (prepared < 0) {
        color_release(&plan->conversion);
        free(profile);
        plan->outcome = IMGC_PROFILE_NONE;
        return IMGC_NO_MEMORY;
    }
    if (prepared) {
        plan->converting = 1;
        plan->outcome = IMGC_PROFILE_APPLIED;
    } else {
        copy_message(plan->reason, plan->conversion.error);
        color_release(&plan->conversion);
    }
    free(profile);
    return IMGC_OK;
}

// Applies the plan to decoded pixels, reports its outcome (the reason in `message` when the profile
// was ignored) and releases it.
static imgc_status color_plan_finish(color_plan *plan, uint8_t *pixels, int width, int height, size_t stride,
                                     imgc_profile *outcome, char *message) {
    imgc_status status = IMGC_OK;
    if (plan->converting && !color_apply(&plan->conversion, pixels, width, height, stride)) status = IMGC_NO_MEMORY;
    color_release(&plan->conversion);
    if (outcome != NULL) *outcome = plan->outcome;
    if (plan->outcome == IMGC_PROFILE_IGNORED) copy_message(message, plan->reason);
    return status;
}

// MARK: - JPEG (TurboJPEG: libjpeg's setjmp is inside the library)

imgc_status imgc_jpeg_info(const uint8_t *data, size_t size, int *width, int *height, char *message) {
    if (!jpeg_table_ready(message)) return library_failure(message);
    if (size > ULONG_MAX) { copy_message(message, "too many bytes"); return IMGC_BAD_ARGUMENT; }
    tjhandle handle = tjInitDecompress();
    if (handle == NULL) { copy_message(message, tjGetErrorStr2(NULL)); return IMGC_NO_MEMORY; }
    int subsampling = 0, colorspace = 0;
    int result = tjDecompressHeader3(handle, data, (unsigned long)size, width, height, &subsampling, &colorspace);
    imgc_status status = IMGC_OK;
    if (result != 0) {
        copy_message(message, tjGetErrorStr2(handle));
        status = message_means_no_memory(message) ? IMGC_NO_MEMORY : IMGC_CORRUPT;
    }
    tjDestroy(handle);
    return status;
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

imgc_status imgc_jpeg_decode(const uint8_t *data, size_t size, int width, int height, uint8_t *pixels, size_t stride,
                             size_t capacity, int options, imgc_profile *profile, char *message) {
    if (profile != NULL) *profile = IMGC_PROFILE_NONE;
    if (!jpeg_table_ready(message)) return library_failure(message);
    if (!fits(width, height, stride, capacity, message)) return IMGC_BAD_ARGUMENT;
    if (size > ULONG_MAX) { copy_message(message, "too many bytes"); return IMGC_BAD_ARGUMENT; }
    tjhandle handle = tjInitDecompress();
    if (handle == NULL) { copy_message(message, tjGetErrorStr2(NULL)); return IMGC_NO_MEMORY; }
    int declared_width = 0, declared_height = 0, subsampling = 0, colorspace = 0;
    int result = tjDecompressHeader3(handle, data, (unsigned long)size, &declared_width, &declared_height, &subsampling, &colorspace);
    int cmyk = result == 0 && (colorspace == TJCS_CMYK || colorspace == TJCS_YCCK);
    int adobe = 0, progressive = 0;
    jpeg_markers(data, size, &adobe, &progressive);
    color_plan plan;
    memset(&plan, 0, sizeof plan);
    if (result == 0) {
        color_kind kind = cmyk ? (adobe ? COLOR_CMYK_INVERTED : COLOR_CMYK) : colorspace == TJCS_GRAY ? COLOR_GRAY : COLOR_RGB;
        if (color_plan_make(&plan, options, data, size, jpeg_icc_profile, kind) != IMGC_OK) {
            tjDestroy(handle);
            return IMGC_NO_MEMORY;
        }
    }
    if (result == 0) {
        // No TJFLAG_STOPONWARNING: a warning is judged below. More than 500 scans stays an error.
        result = tjDecompress2(handle, data, (unsigned long)size, pixels, width, (int)stride, height,
                               cmyk ? TJPF_CMYK : TJPF_RGBA, TJFLAG_LIMITSCANS);
        if (result != 0 && tjGetErrorCode(handle) == TJERR_WARNING && jpeg_warning_tolerated(tjGetErrorStr2(handle), progressive))
            result = 0;
    }
    if (result != 0) copy_message(message, tjGetErrorStr2(handle));
    tjDestroy(handle);
    if (result != 0) {
        color_release(&plan.conversion);
        return message_means_no_memory(message) ? IMGC_NO_MEMORY : IMGC_CORRUPT;
    }
    // CMYK: through its profile when it has one, else the naive formula.
    if (cmyk && !plan.converting) cmyk_to_rgba(pixels, width, height, stride, adobe);
    return color_plan_finish(&plan, pixels, width, height, stride, profile, message);
}

imgc_status imgc_jpeg_encode(const uint8_t *pixels, int width, int height, size_t stride, int quality,
                             uint8_t **output, size_t *count, char *message) {
    return imgc_jpeg_encode_with(pixels, width, height, stride, quality, 0, output, count, message);
}

imgc_status imgc_jpeg_encode_with(const uint8_t *pixels, int width, int height, size_t stride, int quality, int options,
                                  uint8_t **output, size_t *count, char *message) {
    if (!jpeg_table_ready(message)) return library_failure(message);
    if (width <= 0 || height <= 0 || stride > INT_MAX) return IMGC_BAD_ARGUMENT;
    tjhandle handle = tjInitCompress();
    if (handle == NULL) { copy_message(message, tjGetErrorStr2(NULL)); return IMGC_NO_MEMORY; }
    unsigned char *jpeg = NULL;
    unsigned long jpeg_size = 0;
    int cmyk = (options & IMGC_JPEG_CMYK) != 0;
    int flags = (options & IMGC_JPEG_PROGRESSIVE) ? TJFLAG_PROGRESSIVE : 0;
    int subsampling = cmyk ? TJSAMP_444 : (options & IMGC_JPEG_GRAY) ? TJSAMP_GRAY : TJSAMP_420;
    int result = tjCompress2(handle, pixels, width, (int)stride, height, cmyk ? TJPF_CMYK : TJPF_RGBA, &jpeg, &jpeg_size,
                             subsampling, quality, flags);
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
        imgc_status status = message_means_no_memory(image->message) ? IMGC_NO_MEMORY : IMGC_CORRUPT;
        png_image_free(image);
        return status;
    }
    if (image->width > INT_MAX || image->height > INT_MAX) {
        copy_message(message, "dimensions out of range");
        png_image_free(image);
        return IMGC_CORRUPT;
    }
    return IMGC_OK;
}

imgc_status imgc_png_info(const uint8_t *data, size_t size, int *width, int *height, char *message) {
    if (!png_table_ready(message)) return library_failure(message);
    png_image image;
    imgc_status status = png_begin(&image, data, size, message);
    if (status != IMGC_OK) return status;
    *width = (int)image.width;
    *height = (int)image.height;
    png_image_free(&image);
    return IMGC_OK;
}

imgc_status imgc_png_decode(const uint8_t *data, size_t size, int width, int height, uint8_t *pixels, size_t stride,
                            size_t capacity, int options, imgc_profile *profile, char *message) {
    if (profile != NULL) *profile = IMGC_PROFILE_NONE;
    if (!png_table_ready(message)) return library_failure(message);
    if (!fits(width, height, stride, capacity, message)) return IMGC_BAD_ARGUMENT;
    png_image image;
    imgc_status status = png_begin(&image, data, size, message);
    if (status != IMGC_OK) return status;
    if ((int)image.width != width || (int)image.height != height) {
        png_image_free(&image);
        copy_message(message, "dimensions changed");
        return IMGC_BAD_ARGUMENT;
    }
    color_plan plan;
    color_kind kind = (image.format & PNG_FORMAT_FLAG_COLOR) ? COLOR_RGB : COLOR_GRAY;
    if (color_plan_make(&plan, options, data, size, png_icc_profile, kind) != IMGC_OK) {
        png_image_free(&image);
        return IMGC_NO_MEMORY;
    }
    // With a profile to apply, libpng reads the file without its gAMA, cHRM, sRGB and iCCP chunks
    // (the profile replaces them, as the PNG specification says): nothing is converted twice.
    uint8_t *stripped = NULL;
    if (plan.converting) {
        size_t stripped_size = 0;
        png_image_free(&image);
        stripped = png_without_color_chunks(data, size, &stripped_size);
        if (stripped == NULL) { color_release(&plan.conversion); return IMGC_NO_MEMORY; }
        status = png_begin(&image, stripped, stripped_size, message);
        if (status != IMGC_OK) { free(stripped); color_release(&plan.conversion); return status; }
    }
    image.format = PNG_FORMAT_RGBA;
    // A 16-bit file without gAMA or sRGB holds sRGB values, as browsers take them (libpng's
    // simplified API would otherwise take them as linear and brighten them).
    image.flags |= PNG_IMAGE_FLAG_16BIT_sRGB;
    int read = png_image_finish_read(&image, NULL, pixels, (png_int_32)stride, NULL);
    int no_memory = !read && message_means_no_memory(image.message);
    if (!read) copy_message(message, image.message);
    png_image_free(&image);
    free(stripped);
    if (!read) { color_release(&plan.conversion); return no_memory ? IMGC_NO_MEMORY : IMGC_CORRUPT; }
    return color_plan_finish(&plan, pixels, width, height, stride, profile, message);
}

// The simplified API's description of an RGBA8 image to write.
static void png_image_for_writing(png_image *image, int width, int height) {
    memset(image, 0, sizeof *image);
    image->version = PNG_IMAGE_VERSION;
    image->width = (png_uint_32)width;
    image->height = (png_uint_32)height;
    image->format = PNG_FORMAT_RGBA;
    image->flags = PNG_IMAGE_FLAG_FAST;
}

size_t imgc_png_encode_capacity(int width, int height) {
    if (width <= 0 || height <= 0) return 0;
    // libpng's bound is computed in double first: a huge image gives 0, never a wrapped size.
    double bound = ((double)width * 4 + 1) * (double)height * 1.01 + 65536.0;
    if (bound > (double)SIZE_MAX / 2) return 0;
    png_image image;
    png_image_for_writing(&image, width, height);
    return PNG_IMAGE_PNG_SIZE_MAX(image);
}

imgc_status imgc_png_encode(const uint8_t *pixels, int width, int height, size_t stride,
                            uint8_t *output, size_t capacity, size_t *count, char *message) {
    if (!png_table_ready(message)) return library_failure(message);
    if (width <= 0 || height <= 0 || stride > INT_MAX || output == NULL || capacity < imgc_png_encode_capacity(width, height))
        return IMGC_BAD_ARGUMENT;
    // One pass into a buffer of libpng's upper bound, rather than a counting pass and a writing
    // pass (two whole compressions: most of a command's time for a thumbnail).
    png_image image;
    png_image_for_writing(&image, width, height);
    png_alloc_size_t written = capacity;
    if (!png_image_write_to_memory(&image, output, &written, 0, pixels, (png_int_32)stride, NULL)) {
        copy_message(message, image.message[0] ? image.message : "the PNG did not fit its upper bound");
        imgc_status status = message_means_no_memory(image.message) ? IMGC_NO_MEMORY : IMGC_CORRUPT;
        png_image_free(&image);
        return status;
    }
    png_image_free(&image);
    *count = written;
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
    if (!webp_table_ready(message)) return library_failure(message);
    WebPBitstreamFeatures features;
    VP8StatusCode status = WebPGetFeatures(data, size, &features);
    if (status != VP8_STATUS_OK) { copy_message(message, webp_status_text(status)); return IMGC_CORRUPT; }
    *width = features.width;
    *height = features.height;
    *animated = features.has_animation ? 1 : 0;
    *alpha = features.has_alpha ? 1 : 0;
    return IMGC_OK;
}

// The first frame of an animated WebP, composed on its canvas (width × height, the declared size),
// decoded straight into `pixels` (which `fits` checked). What libwebpdemux's WebPAnimDecoder does
// for a first frame — it is always a key frame: the canvas cleared to transparent, the frame
// decoded into its rectangle, nothing blended — without the decoder's two canvases of its own
// (three times the memory), and with libwebp's own status, so that memory running out is told
// from a damaged file (WebPAnimDecoderNew says NULL for both).
static imgc_status webp_first_frame(const uint8_t *data, size_t size, int width, int height,
                                    uint8_t *pixels, size_t stride, char *message) {
    if (!webp_demux_table_ready(message)) return library_failure(message);
    WebPData input = {data, size};
    WebPDemuxer *demux = WebPDemuxInternal(&input, 0, NULL, WEBP_DEMUX_ABI_VERSION);
    if (demux == NULL) { copy_message(message, "animated WebP: corrupt or truncated frames"); return IMGC_CORRUPT; }
    imgc_status status = IMGC_OK;
    WebPIterator frame;
    memset(&frame, 0, sizeof frame);
    if ((int)WebPDemuxGetI(demux, WEBP_FF_CANVAS_WIDTH) != width || (int)WebPDemuxGetI(demux, WEBP_FF_CANVAS_HEIGHT) != height) {
        copy_message(message, "animated WebP: canvas size differs from the declared size");
        WebPDemuxDelete(demux);
        return IMGC_BAD_ARGUMENT;
    }
    if (!WebPDemuxGetFrame(demux, 1, &frame) || !frame.complete) {
        copy_message(message, "animated WebP: the first frame does not decode");
        status = IMGC_CORRUPT;
    } else if (frame.x_offset < 0 || frame.y_offset < 0 || frame.width <= 0 || frame.height <= 0 ||
               frame.x_offset > width - frame.width || frame.y_offset > height - frame.height) {
        copy_message(message, "animated WebP: the first frame lies outside the canvas");
        status = IMGC_CORRUPT;
    } else {
        for (int y = 0; y < height; y++) memset(pixels + (size_t)y * stride, 0, (size_t)width * 4);
        WebPDecoderConfig config;
        if (!WebPInitDecoderConfig(&config)) {
            copy_message(message, "libwebp version mismatch");
            status = IMGC_BAD_ARGUMENT;
        } else {
            config.output.colorspace = MODE_RGBA;
            config.output.is_external_memory = 1;
            config.output.u.RGBA.rgba = pixels + (size_t)frame.y_offset * stride + (size_t)frame.x_offset * 4;
            config.output.u.RGBA.stride = (int)stride;
            config.output.u.RGBA.size = stride * (size_t)(frame.height - 1) + (size_t)frame.width * 4;
            VP8StatusCode decoded = WebPDecode(frame.fragment.bytes, frame.fragment.size, &config);
            WebPFreeDecBuffer(&config.output);
            if (decoded != VP8_STATUS_OK) {
                copy_message(message, webp_status_text(decoded));
                status = decoded == VP8_STATUS_OUT_OF_MEMORY ? IMGC_NO_MEMORY : IMGC_CORRUPT;
            }
        }
    }
    WebPDemuxReleaseIterator(&frame);
    WebPDemuxDelete(demux);
    return status;
}

// Decodes a still or animated WebP (before its profile is applied).
static imgc_status webp_decode_pixels(const uint8_t *data, size_t size, int width, int height, uint8_t *pixels,
                                      size_t stride, size_t capacity, char *message) {
    WebPDecoderConfig config;
    if (!WebPInitDecoderConfig(&config)) { copy_message(message, "libwebp version mismatch"); return IMGC_BAD_ARGUMENT; }
    VP8StatusCode status = WebPGetFeatures(data, size, &config.input);
    if (status != VP8_STATUS_OK) { copy_message(message, webp_status_text(status)); return IMGC_CORRUPT; }
    if (config.input.has_animation) return webp_first_frame(data, size, width, height, pixels, stride, message);
    // Always the declared size: libwebp's own scaler is no area average (it scales the Y, U and V
    // planes apart, chroma at half resolution), so the exact resampler does every downsample.
    if (config.input.width != width || config.input.height != height) {
        copy_message(message, "dimensions changed");
        return IMGC_BAD_ARGUMENT;
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

imgc_status imgc_webp_decode(const uint8_t *data, size_t size, int width, int height, uint8_t *pixels, size_t stride,
                             size_t capacity, int options, imgc_profile *profile, char *message) {
    if (profile != NULL) *profile = IMGC_PROFILE_NONE;
    if (!webp_table_ready(message)) return library_failure(message);
    if (!fits(width, height, stride, capacity, message)) return IMGC_BAD_ARGUMENT;
    color_plan plan;
    if (color_plan_make(&plan, options, data, size, webp_icc_profile, COLOR_RGB) != IMGC_OK) return IMGC_NO_MEMORY;
    imgc_status status = webp_decode_pixels(data, size, width, height, pixels, stride, capacity, message);
    if (status != IMGC_OK) { color_release(&plan.conversion); return status; }
    return color_plan_finish(&plan, pixels, width, height, stride, profile, message);
}

imgc_status imgc_webp_encode(const uint8_t *pixels, int width, int height, size_t stride, int quality,
                             uint8_t **output, size_t *count, char *message) {
    if (!webp_table_ready(message)) return library_failure(message);
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

// Opens the GIF; NULL with the message, and *status IMGC_NO_MEMORY when giflib ran out of memory
// (else IMGC_CORRUPT).
static GifFileType *gif_open(gif_reader *reader, imgc_status *status, char *message) {
    int error = 0;
    GifFileType *gif = DGifOpen(reader, gif_read, &error);
    if (gif == NULL) {
        copy_message(message, GifErrorString(error));
        *status = error == D_GIF_ERR_NOT_ENOUGH_MEM ? IMGC_NO_MEMORY : IMGC_CORRUPT;
    }
    return gif;
}

static imgc_status gif_fail(GifFileType *gif, char *message) {
    copy_message(message, GifErrorString(gif->Error));
    imgc_status status = gif->Error == D_GIF_ERR_NOT_ENOUGH_MEM ? IMGC_NO_MEMORY : IMGC_CORRUPT;
    int error = 0;
    DGifCloseFile(gif, &error);
    return status;
}

imgc_status imgc_gif_info(const uint8_t *data, size_t size, int *width, int *height, char *message) {
    if (!gif_table_ready(message)) return library_failure(message);
    gif_reader reader = {data, size, 0};
    imgc_status status = IMGC_CORRUPT;
    GifFileType *gif = gif_open(&reader, &status, message);
    if (gif == NULL) return status;
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

imgc_status imgc_gif_decode(const uint8_t *data, size_t size, int width, int height, uint8_t *pixels, size_t stride,
                            size_t capacity, int options, imgc_profile *profile, char *message) {
    (void)options;   // GIF has no standard colour profile: its colours are taken as sRGB
    if (profile != NULL) *profile = IMGC_PROFILE_NONE;
    if (!gif_table_ready(message)) return library_failure(message);
    if (!fits(width, height, stride, capacity, message)) return IMGC_BAD_ARGUMENT;
    gif_reader reader = {data, size, 0};
    imgc_status status = IMGC_CORRUPT;
    GifFileType *gif = gif_open(&reader, &status, message);
    if (gif == NULL) return status;
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
    if (!gif_table_ready(message)) return library_failure(message);
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
    // n, m < 2^28 and extent <= 8n (imgc_resample checks): every product below is under 2^62.
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
    // fits in memory; refused above 2^40 pixels, or a side of 2^28, rather than trusted.
    if ((uint64_t)source_width * (uint64_t)source_height > (1ULL << 40)) return IMGC_BAD_ARGUMENT;
    if (source_width >= (1 << 28) || source_height >= (1 << 28) || width >= (1 << 28) || height >= (1 << 28))
        return IMGC_BAD_ARGUMENT;
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
