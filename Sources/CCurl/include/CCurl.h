// Typed, non-variadic wrappers over libcurl's variadic option calls, which Swift cannot call.
// One function per argument type; each passes the exact C type libcurl expects.
#ifndef IMGPOLICY_CCURL_H
#define IMGPOLICY_CCURL_H

#include <curl/curl.h>

/// The write callback type (CURLOPT_WRITEFUNCTION).
typedef size_t (*imgp_write_callback)(char *data, size_t size, size_t count, void *context);
/// The progress callback type (CURLOPT_XFERINFOFUNCTION).
typedef int (*imgp_progress_callback)(void *context, curl_off_t download_total, curl_off_t downloaded,
                                      curl_off_t upload_total, curl_off_t uploaded);

/// curl_global_init once, after asking OpenSSL (when present) not to register an atexit handler,
/// which crashed processes exiting with TLS transfers in flight. Returns curl_global_init's code.
CURLcode imgp_global_init(void);

CURLcode imgp_easy_setopt_long(CURL *handle, CURLoption option, long value);
CURLcode imgp_easy_setopt_offset(CURL *handle, CURLoption option, curl_off_t value);
CURLcode imgp_easy_setopt_string(CURL *handle, CURLoption option, const char *value);
CURLcode imgp_easy_setopt_pointer(CURL *handle, CURLoption option, void *value);
CURLcode imgp_easy_setopt_write_callback(CURL *handle, imgp_write_callback callback);
CURLcode imgp_easy_setopt_progress_callback(CURL *handle, imgp_progress_callback callback);

CURLcode imgp_easy_getinfo_long(CURL *handle, CURLINFO info, long *value);
CURLcode imgp_easy_getinfo_offset(CURL *handle, CURLINFO info, curl_off_t *value);
CURLcode imgp_easy_getinfo_string(CURL *handle, CURLINFO info, char **value);

CURLMcode imgp_multi_setopt_long(CURLM *multi, CURLMoption option, long value);

/// The easy handle of a finished-transfer message, and its result code; 0 when `message` is not
/// a CURLMSG_DONE message.
CURL *imgp_message_done_handle(CURLMsg *message, CURLcode *result);

#endif
