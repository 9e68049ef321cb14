// libcurl, loaded on first use (see CCurl.h): a table of function pointers resolved once
// (pthread_once) from libcurl.so.4, forwarders with libcurl's own names, and a stand-in multi
// handle that creates the real one only when the first transfer is added to it.
#include "CCurl.h"
#include <dlfcn.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/eventfd.h>
#endif

// MARK: - The table

// Every libcurl function called through the table: its name, return type and parameters.
#define IMGP_CURL_FUNCTIONS(X)                                                                       \
    X(global_init, CURLcode, (long flags))                                                          \
    X(version, char *, (void))                                                                      \
    X(easy_init, CURL *, (void))                                                                    \
    X(easy_cleanup, void, (CURL * handle))                                                          \
    X(easy_reset, void, (CURL * handle))                                                            \
    X(easy_strerror, const char *, (CURLcode code))                                                 \
    X(easy_setopt, CURLcode, (CURL * handle, CURLoption option, ...))                               \
    X(easy_getinfo, CURLcode, (CURL * handle, CURLINFO info, ...))                                  \
    X(easy_header, CURLHcode, (CURL * handle, const char *name, size_t index, unsigned int origin,  \
                               int request, struct curl_header **hout))                             \
    X(easy_nextheader, struct curl_header *, (CURL * handle, unsigned int origin, int request,      \
                                             struct curl_header *prev))                             \
    X(slist_append, struct curl_slist *, (struct curl_slist * list, const char *string))            \
    X(slist_free_all, void, (struct curl_slist * list))                                             \
    X(multi_init, CURLM *, (void))                                                                  \
    X(multi_cleanup, CURLMcode, (CURLM * multi))                                                    \
    X(multi_setopt, CURLMcode, (CURLM * multi, CURLMoption option, ...))                            \
    X(multi_add_handle, CURLMcode, (CURLM * multi, CURL * handle))                                  \
    X(multi_remove_handle, CURLMcode, (CURLM * multi, CURL * handle))                               \
    X(multi_perform, CURLMcode, (CURLM * multi, int *running))                                      \
    X(multi_poll, CURLMcode, (CURLM * multi, struct curl_waitfd extra_fds[], unsigned int extra_nfds, \
                              int timeout_ms, int *ret))                                            \
    X(multi_info_read, CURLMsg *, (CURLM * multi, int *msgs_in_queue))

static struct {
#define IMGP_FIELD(name, result, parameters) result(*name) parameters;
    IMGP_CURL_FUNCTIONS(IMGP_FIELD)
#undef IMGP_FIELD
    int loaded;
    char error[512];
} table;

static pthread_once_t load_once = PTHREAD_ONCE_INIT;

static void load_library(void) {
    const char *file = getenv("IMGPOLICY_LIBCURL");
#ifdef __APPLE__
    if (!file || !*file) file = "libcurl.4.dylib";
#else
    if (!file || !*file) file = "libcurl.so.4";
#endif
    void *library = dlopen(file, RTLD_NOW | RTLD_LOCAL);
    if (!library) {
        const char *reason = dlerror();
        // A library that is there but cannot be mapped (a memory limit) is no missing package.
        if (reason && (strstr(reason, "failed to map segment") || strstr(reason, "Cannot allocate memory"))) {
            snprintf(table.error, sizeof table.error, "libcurl could not be loaded: out of memory (%s)", reason);
        } else {
            snprintf(table.error, sizeof table.error,
                     "libcurl could not be loaded (%s): install Debian's libcurl4", reason ? reason : file);
        }
        return;
    }
#define IMGP_RESOLVE(name, result, parameters)                                                       \
    *(void **)(&table.name) = dlsym(library, "curl_" #name);                                         \
    if (!table.name) {                                                                               \
        snprintf(table.error, sizeof table.error,                                                    \
                 "libcurl could not be loaded (%s has no curl_" #name "): install libcurl 7.84 or later", file); \
        return;                                                                                      \
    }
    IMGP_CURL_FUNCTIONS(IMGP_RESOLVE)
#undef IMGP_RESOLVE
    // OPENSSL_INIT_NO_ATEXIT (0x80000): found in libcurl's dependencies, so that no OpenSSL
    // headers or link dependency are needed.
    typedef int (*openssl_init)(uint64_t, const void *);
    openssl_init init;
    *(void **)(&init) = dlsym(library, "OPENSSL_init_crypto");
    if (init) init(0x80000ULL, NULL);
    CURLcode code = table.global_init(CURL_GLOBAL_DEFAULT);
    if (code != CURLE_OK) {
        snprintf(table.error, sizeof table.error, "libcurl could not be initialised (curl_global_init: curl %d)", (int)code);
        return;
    }
    __atomic_store_n(&table.loaded, 1, __ATOMIC_RELEASE);
}

const char *imgp_curl_load(void) {
    pthread_once(&load_once, load_library);
    return table.loaded ? NULL : table.error;
}

int imgp_curl_is_loaded(void) {
    // Read after pthread_once elsewhere has finished, or 0: `loaded` only goes from 0 to 1, once.
    return __atomic_load_n(&table.loaded, __ATOMIC_ACQUIRE);
}

/// Whether the table may be used. Every handle passed in was made after the load was tried
/// (pthread_once orders it), so this only reads the outcome.
static int loaded(void) {
    pthread_once(&load_once, load_library);
    return table.loaded;
}

CURLcode imgp_global_init(void) {
    return CURLE_OK;
}

// MARK: - Easy handles

// When libcurl could not be loaded, `curl_easy_init` hands out one of these instead: it fails
// every option and, added to a multi handle, completes at once with CURLE_FAILED_INIT and the
// reason in its error buffer. (Either every easy handle is real or every one is a stand-in.)
typedef struct failed_easy {
    char *error_buffer;
    int reported;
    struct failed_easy *next;  // in the multi handle it was added to
} failed_easy;

CURL *curl_easy_init(void) {
    if (loaded()) return table.easy_init();
    return calloc(1, sizeof(failed_easy));
}

void curl_easy_cleanup(CURL *handle) {
    if (loaded()) table.easy_cleanup(handle);
    else free(handle);
}

void curl_easy_reset(CURL *handle) {
    if (loaded()) table.easy_reset(handle);
    else if (handle) ((failed_easy *)handle)->error_buffer = NULL;
}

const char *curl_easy_strerror(CURLcode code) {
    if (loaded()) return table.easy_strerror(code);
    return table.error;
}

CURLHcode curl_easy_header(CURL *handle, const char *name, size_t index, unsigned int origin, int request,
                           struct curl_header **hout) {
    if (loaded()) return table.easy_header(handle, name, index, origin, request, hout);
    return CURLHE_NOT_BUILT_IN;
}

struct curl_header *curl_easy_nextheader(CURL *handle, unsigned int origin, int request, struct curl_header *prev) {
    return loaded() ? table.easy_nextheader(handle, origin, request, prev) : NULL;
}

struct curl_slist *curl_slist_append(struct curl_slist *list, const char *string) {
    return loaded() ? table.slist_append(list, string) : NULL;
}

void curl_slist_free_all(struct curl_slist *list) {
    if (list && loaded()) table.slist_free_all(list);
}

char *curl_version(void) {
    return loaded() ? table.version() : table.error;
}

CURLcode imgp_easy_setopt_long(CURL *handle, CURLoption option, long value) {
    return loaded() ? table.easy_setopt(handle, option, value) : CURLE_FAILED_INIT;
}

CURLcode imgp_easy_setopt_offset(CURL *handle, CURLoption option, curl_off_t value) {
    return loaded() ? table.easy_setopt(handle, option, value) : CURLE_FAILED_INIT;
}

CURLcode imgp_easy_setopt_string(CURL *handle, CURLoption option, const char *value) {
    return loaded() ? table.easy_setopt(handle, option, value) : CURLE_FAILED_INIT;
}

CURLcode imgp_easy_setopt_pointer(CURL *handle, CURLoption option, void *value) {
    if (loaded()) return table.easy_setopt(handle, option, value);
    if (handle && option == CURLOPT_ERRORBUFFER) {
        ((failed_easy *)handle)->error_buffer = value;
        return CURLE_OK;
    }
    return CURLE_FAILED_INIT;
}

CURLcode imgp_easy_setopt_write_callback(CURL *handle, imgp_write_callback callback) {
    return loaded() ? table.easy_setopt(handle, CURLOPT_WRITEFUNCTION, callback) : CURLE_FAILED_INIT;
}

CURLcode imgp_easy_setopt_progress_callback(CURL *handle, imgp_progress_callback callback) {
    return loaded() ? table.easy_setopt(handle, CURLOPT_XFERINFOFUNCTION, callback) : CURLE_FAILED_INIT;
}

// The Swift callback, called through `open_socket` (curl's signature passes a struct).
static imgp_opensocket_callback opensocket_target;

static curl_socket_t open_socket(void *context, curlsocktype purpose, struct curl_sockaddr *address) {
    (void)purpose;
    imgp_opensocket_callback target = __atomic_load_n(&opensocket_target, __ATOMIC_ACQUIRE);
    if (!target || !address) return CURL_SOCKET_BAD;
    return target(context, address->family, address->socktype, address->protocol);
}

CURLcode imgp_easy_setopt_opensocket_callback(CURL *handle, imgp_opensocket_callback callback) {
    if (!loaded()) return CURLE_FAILED_INIT;
    __atomic_store_n(&opensocket_target, callback, __ATOMIC_RELEASE);
    return table.easy_setopt(handle, CURLOPT_OPENSOCKETFUNCTION, open_socket);
}

CURLcode imgp_easy_setopt_header_callback(CURL *handle, imgp_write_callback callback) {
    return loaded() ? table.easy_setopt(handle, CURLOPT_HEADERFUNCTION, callback) : CURLE_FAILED_INIT;
}

CURLcode imgp_easy_getinfo_long(CURL *handle, CURLINFO info, long *value) {
    return loaded() ? table.easy_getinfo(handle, info, value) : CURLE_FAILED_INIT;
}

CURLcode imgp_easy_getinfo_offset(CURL *handle, CURLINFO info, curl_off_t *value) {
    return loaded() ? table.easy_getinfo(handle, info, value) : CURLE_FAILED_INIT;
}

CURLcode imgp_easy_getinfo_string(CURL *handle, CURLINFO info, char **value) {
    return loaded() ? table.easy_getinfo(handle, info, value) : CURLE_FAILED_INIT;
}

// MARK: - Multi handles

// What `curl_multi_init` returns: the real multi handle exists from the first transfer added on.
// Like libcurl's, used by one thread at a time, except `curl_multi_wakeup` (any thread, any time
// while the handle lives): wake-ups go through an eventfd that every poll watches, before and
// after the real handle exists, so none is lost in between (a pipe where there is no eventfd).
typedef struct stand_in_multi {
    CURLM *real;
    int wake_fd;        // polled and drained
    int wake_write_fd;  // written to: wake_fd itself for an eventfd
    struct { CURLMoption option; long value; } options[8];
    int option_count;
    failed_easy *failed;  // stand-in easy handles added (libcurl could not be loaded)
    CURLMsg message;
} stand_in_multi;

CURLM *curl_multi_init(void) {
    stand_in_multi *multi = calloc(1, sizeof *multi);
    if (!multi) return NULL;
#ifdef __linux__
    multi->wake_fd = multi->wake_write_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (multi->wake_fd < 0) {
        free(multi);
        return NULL;
    }
#else
    int ends[2];
    if (pipe(ends) != 0) {
        free(multi);
        return NULL;
    }
    for (int index = 0; index < 2; index++) {
        fcntl(ends[index], F_SETFL, fcntl(ends[index], F_GETFL) | O_NONBLOCK);
        fcntl(ends[index], F_SETFD, FD_CLOEXEC);
    }
    multi->wake_fd = ends[0];
    multi->wake_write_fd = ends[1];
#endif
    return multi;
}

CURLMcode curl_multi_cleanup(CURLM *handle) {
    stand_in_multi *multi = handle;
    if (!multi) return CURLM_BAD_HANDLE;
    CURLMcode code = multi->real ? table.multi_cleanup(multi->real) : CURLM_OK;
    close(multi->wake_fd);
    if (multi->wake_write_fd != multi->wake_fd) close(multi->wake_write_fd);
    free(multi);
    return code;
}

CURLMcode imgp_multi_setopt_long(CURLM *handle, CURLMoption option, long value) {
    stand_in_multi *multi = handle;
    if (!multi) return CURLM_BAD_HANDLE;
    if (multi->real) return table.multi_setopt(multi->real, option, value);
    int count = multi->option_count;
    for (int index = 0; index < count; index++) {
        if (multi->options[index].option == option) {
            multi->options[index].value = value;
            return CURLM_OK;
        }
    }
    if (count == (int)(sizeof multi->options / sizeof multi->options[0])) return CURLM_OUT_OF_MEMORY;
    multi->options[count].option = option;
    multi->options[count].value = value;
    multi->option_count = count + 1;
    return CURLM_OK;
}

CURLMcode curl_multi_add_handle(CURLM *handle, CURL *easy) {
    stand_in_multi *multi = handle;
    if (!multi || !easy) return CURLM_BAD_HANDLE;
    if (!loaded()) {
        failed_easy *stand_in = easy;
        stand_in->reported = 0;
        stand_in->next = multi->failed;
        multi->failed = stand_in;
        return CURLM_OK;
    }
    if (!multi->real) {
        CURLM *real = table.multi_init();
        if (!real) return CURLM_OUT_OF_MEMORY;
        for (int index = 0; index < multi->option_count; index++) {
            table.multi_setopt(real, multi->options[index].option, multi->options[index].value);
        }
        multi->real = real;
    }
    return table.multi_add_handle(multi->real, easy);
}

CURLMcode curl_multi_remove_handle(CURLM *handle, CURL *easy) {
    stand_in_multi *multi = handle;
    if (!multi || !easy) return CURLM_BAD_HANDLE;
    if (multi->real) return table.multi_remove_handle(multi->real, easy);
    for (failed_easy **link = &multi->failed; *link; link = &(*link)->next) {
        if (*link == easy) {
            *link = (*link)->next;
            break;
        }
    }
    return CURLM_OK;
}

CURLMcode curl_multi_perform(CURLM *handle, int *running) {
    stand_in_multi *multi = handle;
    if (!multi) return CURLM_BAD_HANDLE;
    if (multi->real) return table.multi_perform(multi->real, running);
    int count = 0;
    for (failed_easy *stand_in = multi->failed; stand_in; stand_in = stand_in->next) {
        if (!stand_in->reported) count++;
    }
    if (running) *running = count;
    return CURLM_OK;
}

CURLMsg *curl_multi_info_read(CURLM *handle, int *msgs_in_queue) {
    stand_in_multi *multi = handle;
    if (!multi) return NULL;
    if (multi->real) return table.multi_info_read(multi->real, msgs_in_queue);
    CURLMsg *found = NULL;
    int remaining = 0;
    for (failed_easy *stand_in = multi->failed; stand_in; stand_in = stand_in->next) {
        if (stand_in->reported) continue;
        if (found) {
            remaining++;
            continue;
        }
        stand_in->reported = 1;
        if (stand_in->error_buffer) snprintf(stand_in->error_buffer, CURL_ERROR_SIZE, "%s", table.error);
        multi->message.msg = CURLMSG_DONE;
        multi->message.easy_handle = (CURL *)stand_in;
        multi->message.data.result = CURLE_FAILED_INIT;
        found = &multi->message;
    }
    if (msgs_in_queue) *msgs_in_queue = remaining;
    return found;
}

static void drain(int fd) {
    uint64_t count[8];
    while (read(fd, count, sizeof count) > 0) {}
}

CURLMcode curl_multi_poll(CURLM *handle, struct curl_waitfd extra_fds[], unsigned int extra_nfds, int timeout_ms,
                          int *ret) {
    stand_in_multi *multi = handle;
    if (!multi || (extra_nfds > 0 && !extra_fds) || extra_nfds > 1024) return CURLM_BAD_FUNCTION_ARGUMENT;
    if (multi->real) {
        // The caller's descriptors and the wake-up descriptor.
        struct curl_waitfd local[16];
        struct curl_waitfd *fds = extra_nfds < 16 ? local : calloc(extra_nfds + 1, sizeof *fds);
        if (!fds) return CURLM_OUT_OF_MEMORY;
        if (extra_nfds) memcpy(fds, extra_fds, extra_nfds * sizeof *fds);
        fds[extra_nfds].fd = multi->wake_fd;
        fds[extra_nfds].events = CURL_WAIT_POLLIN;
        fds[extra_nfds].revents = 0;
        int count = 0;
        CURLMcode code = table.multi_poll(multi->real, fds, extra_nfds + 1, timeout_ms, &count);
        for (unsigned int index = 0; index < extra_nfds; index++) extra_fds[index].revents = fds[index].revents;
        if (fds[extra_nfds].revents) {
            drain(multi->wake_fd);
            if (count > 0) count--;
        }
        if (fds != local) free(fds);
        if (ret) *ret = count;
        return code;
    }
    for (failed_easy *stand_in = multi->failed; stand_in; stand_in = stand_in->next) {
        if (!stand_in->reported) {
            if (ret) *ret = 0;
            return CURLM_OK;
        }
    }
    // Nothing runs yet: wait for a wake-up or the caller's descriptors.
    struct pollfd local[16];
    struct pollfd *fds = extra_nfds < 16 ? local : calloc(extra_nfds + 1, sizeof *fds);
    if (!fds) return CURLM_OUT_OF_MEMORY;
    for (unsigned int index = 0; index < extra_nfds; index++) {
        fds[index].fd = extra_fds[index].fd;
        fds[index].events = (short)(((extra_fds[index].events & CURL_WAIT_POLLIN) ? POLLIN : 0) |
                                    ((extra_fds[index].events & CURL_WAIT_POLLPRI) ? POLLPRI : 0) |
                                    ((extra_fds[index].events & CURL_WAIT_POLLOUT) ? POLLOUT : 0));
        fds[index].revents = 0;
    }
    fds[extra_nfds].fd = multi->wake_fd;
    fds[extra_nfds].events = POLLIN;
    fds[extra_nfds].revents = 0;
    int ready;
    do {
        ready = poll(fds, extra_nfds + 1, timeout_ms < 0 ? -1 : timeout_ms);
    } while (ready < 0 && errno == EINTR);
    int count = 0;
    for (unsigned int index = 0; index < extra_nfds; index++) {
        short revents = fds[index].revents;
        extra_fds[index].revents = (short)(((revents & POLLIN) ? CURL_WAIT_POLLIN : 0) |
                                           ((revents & POLLPRI) ? CURL_WAIT_POLLPRI : 0) |
                                           ((revents & POLLOUT) ? CURL_WAIT_POLLOUT : 0));
        if (revents) count++;
    }
    if (fds[extra_nfds].revents) drain(multi->wake_fd);
    if (fds != local) free(fds);
    if (ret) *ret = count;
    return ready < 0 ? CURLM_INTERNAL_ERROR : CURLM_OK;
}

CURLMcode curl_multi_wakeup(CURLM *handle) {
    stand_in_multi *multi = handle;
    if (!multi) return CURLM_BAD_HANDLE;
    uint64_t one = 1;
    ssize_t written;
    do {
        written = write(multi->wake_write_fd, &one, sizeof one);
    } while (written < 0 && errno == EINTR);
    // EAGAIN: the counter (or the pipe) is full, so a wake-up is pending already.
    return written < 0 && errno != EAGAIN ? CURLM_WAKEUP_FAILURE : CURLM_OK;
}

CURL *imgp_message_done_handle(CURLMsg *message, CURLcode *result) {
    if (!message || message->msg != CURLMSG_DONE) return NULL;
    *result = message->data.result;
    return message->easy_handle;
}
