#include "CCurl.h"
#include <dlfcn.h>
#include <stdint.h>

CURLcode imgp_global_init(void) {
    // OPENSSL_INIT_NO_ATEXIT (0x80000): found at run time, so that no OpenSSL headers or link
    // dependency are needed; libcurl has loaded libcrypto already.
    typedef int (*openssl_init)(uint64_t, const void *);
    openssl_init init = (openssl_init)dlsym(RTLD_DEFAULT, "OPENSSL_init_crypto");
    if (init) init(0x80000ULL, NULL);
    return curl_global_init(CURL_GLOBAL_DEFAULT);
}

CURLcode imgp_easy_setopt_long(CURL *handle, CURLoption option, long value) {
    return curl_easy_setopt(handle, option, value);
}

CURLcode imgp_easy_setopt_offset(CURL *handle, CURLoption option, curl_off_t value) {
    return curl_easy_setopt(handle, option, value);
}

CURLcode imgp_easy_setopt_string(CURL *handle, CURLoption option, const char *value) {
    return curl_easy_setopt(handle, option, value);
}

CURLcode imgp_easy_setopt_pointer(CURL *handle, CURLoption option, void *value) {
    return curl_easy_setopt(handle, option, value);
}

CURLcode imgp_easy_setopt_write_callback(CURL *handle, imgp_write_callback callback) {
    return curl_easy_setopt(handle, CURLOPT_WRITEFUNCTION, callback);
}

CURLcode imgp_easy_setopt_progress_callback(CURL *handle, imgp_progress_callback callback) {
    return curl_easy_setopt(handle, CURLOPT_XFERINFOFUNCTION, callback);
}

CURLcode imgp_easy_getinfo_long(CURL *handle, CURLINFO info, long *value) {
    return curl_easy_getinfo(handle, info, value);
}

CURLcode imgp_easy_getinfo_offset(CURL *handle, CURLINFO info, curl_off_t *value) {
    return curl_easy_getinfo(handle, info, value);
}

CURLcode imgp_easy_getinfo_string(CURL *handle, CURLINFO info, char **value) {
    return curl_easy_getinfo(handle, info, value);
}

CURLMcode imgp_multi_setopt_long(CURLM *multi, CURLMoption option, long value) {
    return curl_multi_setopt(multi, option, value);
}

CURL *imgp_message_done_handle(CURLMsg *message, CURLcode *result) {
    if (!message || message->msg != CURLMSG_DONE) return NULL;
    *result = message->data.result;
    return message->easy_handle;
}
