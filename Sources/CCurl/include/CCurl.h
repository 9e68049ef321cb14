// Typed, non-variadic wrappers over libcurl's variadic option calls, which Swift cannot call.
// One function per argument type; each passes the exact C type libcurl expects.
//
// libcurl is not linked: it is loaded with dlopen (`libcurl.so.4`) the first time a transfer
// needs it (`curl_easy_init`), so that a process that never transfers anything never loads it
// nor its dependency tree (TLS, GSSAPI, LDAP, SSH, HTTP/2…). The `curl_*` functions Swift calls
// are defined in CCurl.c with libcurl's own names and signatures, and forward to the loaded
// library; the headers stay libcurl's (Debian's libcurl4-openssl-dev). A `curl_*` function that
// is not defined in CCurl.c fails the link: add it there (to the table and as a forwarder).
//
// A multi handle from `curl_multi_init` is this file's own object until the first transfer is
// added to it, so that creating a transport loads nothing. If libcurl cannot be loaded, every
// transfer completes (`curl_multi_info_read`) with CURLE_FAILED_INIT and the reason written to
// its CURLOPT_ERRORBUFFER, e.g. "libcurl could not be loaded (libcurl.so.4: cannot open shared
// object file: No such file or directory): install Debian's libcurl4".
#ifndef IMGPOLICY_CCURL_H
#define IMGPOLICY_CCURL_H

#include <curl/curl.h>

/// The write callback type (CURLOPT_WRITEFUNCTION).
typedef size_t (*imgp_write_callback)(char *data, size_t size, size_t count, void *context);
/// The progress callback type (CURLOPT_XFERINFOFUNCTION).
typedef int (*imgp_progress_callback)(void *context, curl_off_t download_total, curl_off_t downloaded,
                                      curl_off_t upload_total, curl_off_t uploaded);

/// Kept for source compatibility: loads nothing and returns CURLE_OK. The first transfer loads
/// libcurl and calls curl_global_init once (after asking OpenSSL, when present, not to register
/// an atexit handler, which crashed processes exiting with TLS transfers in flight).
CURLcode imgp_global_init(void);

/// Loads libcurl now if it is not loaded yet (once per process, thread-safe), and returns NULL,
/// or the one-line reason it could not be loaded (a static string). The file loaded is
/// `libcurl.so.4`, or, for tests of the failure, the value of the environment variable
/// `IMGPOLICY_LIBCURL` when it is set.
const char *imgp_curl_load(void);

/// 1 once libcurl has been loaded successfully in this process, else 0. Loads nothing.
int imgp_curl_is_loaded(void);

CURLcode imgp_easy_setopt_long(CURL *handle, CURLoption option, long value);
CURLcode imgp_easy_setopt_offset(CURL *handle, CURLoption option, curl_off_t value);
CURLcode imgp_easy_setopt_string(CURL *handle, CURLoption option, const char *value);
CURLcode imgp_easy_setopt_pointer(CURL *handle, CURLoption option, void *value);
CURLcode imgp_easy_setopt_write_callback(CURL *handle, imgp_write_callback callback);
CURLcode imgp_easy_setopt_progress_callback(CURL *handle, imgp_progress_callback callback);
/// The open-socket callback type (CURLOPT_OPENSOCKETFUNCTION), with the address's family, socket
/// type and protocol unpacked.
typedef int (*imgp_opensocket_callback)(void *context, int family, int socktype, int protocol);
/// CURLOPT_OPENSOCKETFUNCTION through `callback`, with CURLOPT_OPENSOCKETDATA as its context: the
/// caller makes each socket itself (and so knows why one could not be made).
CURLcode imgp_easy_setopt_opensocket_callback(CURL *handle, imgp_opensocket_callback callback);
/// CURLOPT_HEADERFUNCTION: `callback` receives each response header line (status lines
/// included), with CURLOPT_HEADERDATA as its context.
CURLcode imgp_easy_setopt_header_callback(CURL *handle, imgp_write_callback callback);

CURLcode imgp_easy_getinfo_long(CURL *handle, CURLINFO info, long *value);
CURLcode imgp_easy_getinfo_offset(CURL *handle, CURLINFO info, curl_off_t *value);
CURLcode imgp_easy_getinfo_string(CURL *handle, CURLINFO info, char **value);

CURLMcode imgp_multi_setopt_long(CURLM *multi, CURLMoption option, long value);

/// The easy handle of a finished-transfer message, and its result code; 0 when `message` is not
/// a CURLMSG_DONE message.
CURL *imgp_message_done_handle(CURLMsg *message, CURLcode *result);

#endif
