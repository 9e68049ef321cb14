// Small typed wrappers over the image libraries (TurboJPEG, libpng's simplified API, libwebp,
// giflib, Little CMS), and the resampler. Every setjmp/longjmp the libraries use stays inside
// these C functions: no call here ever unwinds through a Swift frame. Each function takes the input bytes and their
// count, never reads past them, writes only into the buffer it is given (with its stride and
// size), and returns IMGC_OK or an error code with the library's message copied into `message`.
#ifndef IMGPOLICY_CIMAGECODECS_H
#define IMGPOLICY_CIMAGECODECS_H

#include <stddef.h>
#include <stdint.h>

/// Result codes.
typedef enum {
    IMGC_OK = 0,
    /// The library refused the bytes (corrupt, truncated, unsupported variant); see the message.
    IMGC_CORRUPT = 1,
    /// The library could not allocate memory.
    IMGC_NO_MEMORY = 2,
    /// A feature the glue does not decode, or the format's library could not
    /// be loaded (each is loaded with dlopen on first use; the message names it and why).
    IMGC_UNSUPPORTED = 3,
    /// An argument was out of range (a buffer too small for the dimensions).
    IMGC_BAD_ARGUMENT = 4,
} imgc_status;

/// The capacity callers give for messages.
#define IMGC_MESSAGE_CAPACITY 200

/// What became of a file's embedded colour profile (the decoders' `profile` out-parameter).
typedef enum {
    /// The file has no profile, or the options did not ask for profiles: its values are taken as sRGB.
    IMGC_PROFILE_NONE = 0,
    /// The pixels were converted from the profile to sRGB (Little CMS, perceptual intent).
    IMGC_PROFILE_APPLIED = 1,
    /// The file has a profile that was not applied (damaged or truncated, refused by Little CMS,
    /// not matching the pixels' colour space, or Little CMS not loadable): the pixels are as
    /// without it, and `message` says why (the decode itself succeeded).
    IMGC_PROFILE_IGNORED = 2,
} imgc_profile;

/// Options of the decoders.
enum {
    /// Convert an embedded ICC profile (JPEG APP2, PNG iCCP, WebP ICCP) to sRGB. Little CMS is
    /// loaded by the first file that has one; a file without one costs a walk of its headers.
    IMGC_DECODE_COLOR_PROFILE = 1,
};

/// JPEG: the declared dimensions (no pixel is decoded).
imgc_status imgc_jpeg_info(const uint8_t *data, size_t size, int *width, int *height, char *message);
/// JPEG: decodes at the TurboJPEG scaling factor that gives exactly width × height (the caller
/// computes it from 1/1, 1/2, 1/4 or 1/8 of the declared size) into RGBA8 (R, G, B, A bytes).
/// CMYK and YCCK files are converted to RGB (inverted CMYK when the file has an Adobe segment).
/// libjpeg's warnings are errors, except bytes that are not a marker between segments and a
/// progressive file ending early (what was decoded is returned). With IMGC_DECODE_COLOR_PROFILE, an
/// ICC profile in APP2 segments (RGB, grey, or CMYK instead of the naive formula) is applied.
imgc_status imgc_jpeg_decode(const uint8_t *data, size_t size, int width, int height, uint8_t *pixels, size_t stride,
                            size_t capacity, int options, imgc_profile *profile, char *message);

/// PNG: the declared dimensions.
imgc_status imgc_png_info(const uint8_t *data, size_t size, int *width, int *height, char *message);
/// PNG: decodes into RGBA8, not premultiplied; width and height are the declared ones. libpng
/// converts a gAMA other than sRGB's to sRGB; a 16-bit file without gAMA or sRGB is taken as sRGB.
/// With IMGC_DECODE_COLOR_PROFILE, an iCCP profile is applied instead (gAMA, cHRM and sRGB are
/// then ignored, as the PNG specification says: nothing is converted twice).
imgc_status imgc_png_decode(const uint8_t *data, size_t size, int width, int height, uint8_t *pixels, size_t stride,
                            size_t capacity, int options, imgc_profile *profile, char *message);
/// PNG: the most bytes imgc_png_encode can write for an RGBA8 image of width × height (libpng's
/// PNG_IMAGE_PNG_SIZE_MAX), or 0 when the sides are not positive or the bound is beyond memory.
size_t imgc_png_encode_capacity(int width, int height);
/// PNG: encodes RGBA8 (not premultiplied) into `output`, `capacity` bytes of the caller's (at
/// least imgc_png_encode_capacity); *count is the number written. The caller allocates, so that
/// memory running out is the caller's error value, never a trap.
imgc_status imgc_png_encode(const uint8_t *pixels, int width, int height, size_t stride,
                            uint8_t *output, size_t capacity, size_t *count, char *message);

/// WebP: the declared dimensions; *animated is 1 for an animation, *alpha 1 when it has an alpha channel.
imgc_status imgc_webp_info(const uint8_t *data, size_t size, int *width, int *height, int *animated, int *alpha,
                           char *message);
/// WebP: decodes into RGBA8 (not premultiplied) at the declared size, width × height (never
/// scaled: libwebp's scaler is no area average; imgc_resample does every downsample). An animated
/// WebP gives its first frame composed on its canvas (libwebpdemux, loaded on first use). With
/// IMGC_DECODE_COLOR_PROFILE, an ICCP profile is applied.
imgc_status imgc_webp_decode(const uint8_t *data, size_t size, int width, int height, uint8_t *pixels, size_t stride,
                            size_t capacity, int options, imgc_profile *profile, char *message);

/// GIF: the logical screen's dimensions.
imgc_status imgc_gif_info(const uint8_t *data, size_t size, int *width, int *height, char *message);
/// GIF: the first frame drawn on a transparent canvas of the screen's size, RGBA8. GIF has no
/// standard colour profile: `options` are ignored and *profile is IMGC_PROFILE_NONE.
imgc_status imgc_gif_decode(const uint8_t *data, size_t size, int width, int height, uint8_t *pixels, size_t stride,
                            size_t capacity, int options, imgc_profile *profile, char *message);

/// Resamples RGBA8 (not premultiplied) source pixels to width × height by an exact area average:
/// each output pixel is the mean of the image area it covers, each source pixel weighted by the
/// part of it inside, premultiplied by alpha (a transparent pixel's colour never bleeds), in
/// integers (no weight is lost at any ratio: a flat image stays exactly flat), rounded once at
/// the end to straight alpha. The source is an image of extent_width × extent_height pixels
/// decoded at 1/denominator (1 to 8): each source pixel covers denominator² image pixels, the last
/// column and row what is left (a TurboJPEG scaled decode rounds its size up); denominator 1 and
/// the extent equal to the source size for an ordinary image. Meant for shrinking (growing repeats
/// pixels); every side under 2^28. Reads only `source` (source_height rows of source_stride bytes within
/// source_capacity), writes only `destination` (height rows of `stride` bytes within `capacity`).
imgc_status imgc_resample(const uint8_t *source, int source_width, int source_height, size_t source_stride,
                          size_t source_capacity, int extent_width, int extent_height, int denominator,
                          uint8_t *destination, int width, int height, size_t stride, size_t capacity);

/// Test and tooling encoders: JPEG (TurboJPEG, 4:2:0 at `quality`), lossless or lossy WebP, GIF
/// (a palette of up to 256 colours built from the pixels; more colours is IMGC_BAD_ARGUMENT).
imgc_status imgc_jpeg_encode(const uint8_t *pixels, int width, int height, size_t stride, int quality,
                             uint8_t **output, size_t *count, char *message);
imgc_status imgc_webp_encode(const uint8_t *pixels, int width, int height, size_t stride, int quality,
                             uint8_t **output, size_t *count, char *message);
imgc_status imgc_gif_encode(const uint8_t *pixels, int width, int height, size_t stride,
                            uint8_t **output, size_t *count, char *message);

/// Options of imgc_jpeg_encode_with.
enum {
    /// A progressive JPEG.
    IMGC_JPEG_PROGRESSIVE = 1,
    /// The pixels are C, M, Y, K bytes (Adobe convention: 255 is no ink), written as CMYK (4:4:4).
    IMGC_JPEG_CMYK = 2,
    /// A greyscale JPEG (one component: the pixels' luminance).
    IMGC_JPEG_GRAY = 4,
};
/// JPEG with options (IMGC_JPEG_PROGRESSIVE, IMGC_JPEG_CMYK, IMGC_JPEG_GRAY); imgc_jpeg_encode is options 0.
imgc_status imgc_jpeg_encode_with(const uint8_t *pixels, int width, int height, size_t stride, int quality, int options,
                                  uint8_t **output, size_t *count, char *message);

/// Frees a buffer an encoder returned.
void imgc_free(uint8_t *buffer);

#endif
