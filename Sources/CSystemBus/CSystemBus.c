#ifdef __linux__
#include "CSystemBus.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <dlfcn.h>
#include <pthread.h>
#include <systemd/sd-bus.h>

// libsystemd is not linked: it is loaded with dlopen (libsystemd.so.0) by the first
// csysbus_open, so that a process that never reads the system bus (a decision with --network
// wifi) does not load it. Each sd_bus_* name below is a pointer of the table, resolved once.
#define CSYSBUS_FUNCTIONS(X)                                                                          \
    X(sd_bus_add_match) X(sd_bus_call_method) X(sd_bus_close_unref) X(sd_bus_error_free)               \
    X(sd_bus_error_is_set) X(sd_bus_get_events) X(sd_bus_get_fd) X(sd_bus_get_property_trivial)        \
    X(sd_bus_get_timeout) X(sd_bus_is_ready) X(sd_bus_message_enter_container)                         \
    X(sd_bus_message_exit_container) X(sd_bus_message_read_basic) X(sd_bus_message_skip)               \
    X(sd_bus_message_unref) X(sd_bus_new) X(sd_bus_process) X(sd_bus_set_address)                      \
    X(sd_bus_set_bus_client) X(sd_bus_set_method_call_timeout) X(sd_bus_start) X(sd_bus_wait)

static struct {
#define CSYSBUS_FIELD(name) __typeof__(&name) name;
    CSYSBUS_FUNCTIONS(CSYSBUS_FIELD)
#undef CSYSBUS_FIELD
    int loaded;
    char error[300];
} systemd;

static pthread_once_t systemd_once = PTHREAD_ONCE_INIT;

static void load_systemd(void) {
    void *library = dlopen("libsystemd.so.0", RTLD_NOW | RTLD_LOCAL);
    if (library == NULL) {
        const char *reason = dlerror();
        snprintf(systemd.error, sizeof systemd.error, "libsystemd could not be loaded (%s)",
                 reason ? reason : "libsystemd.so.0");
        return;
    }
#define CSYSBUS_RESOLVE(name)                                                                         \
    *(void **)(&systemd.name) = dlsym(library, #name);                                                \
    if (systemd.name == NULL) {                                                                       \
        snprintf(systemd.error, sizeof systemd.error, "libsystemd.so.0 has no " #name);               \
        return;                                                                                       \
    }
    CSYSBUS_FUNCTIONS(CSYSBUS_RESOLVE)
#undef CSYSBUS_RESOLVE
    systemd.loaded = 1;
}

// From here on, every sd_bus_* call goes through the table.
#define CSYSBUS_REDIRECT(name) (systemd.name)
#define sd_bus_add_match CSYSBUS_REDIRECT(sd_bus_add_match)
#define sd_bus_call_method CSYSBUS_REDIRECT(sd_bus_call_method)
#define sd_bus_close_unref CSYSBUS_REDIRECT(sd_bus_close_unref)
#define sd_bus_error_free CSYSBUS_REDIRECT(sd_bus_error_free)
#define sd_bus_error_is_set CSYSBUS_REDIRECT(sd_bus_error_is_set)
#define sd_bus_get_events CSYSBUS_REDIRECT(sd_bus_get_events)
#define sd_bus_get_fd CSYSBUS_REDIRECT(sd_bus_get_fd)
#define sd_bus_get_property_trivial CSYSBUS_REDIRECT(sd_bus_get_property_trivial)
#define sd_bus_get_timeout CSYSBUS_REDIRECT(sd_bus_get_timeout)
#define sd_bus_is_ready CSYSBUS_REDIRECT(sd_bus_is_ready)
#define sd_bus_message_enter_container CSYSBUS_REDIRECT(sd_bus_message_enter_container)
#define sd_bus_message_exit_container CSYSBUS_REDIRECT(sd_bus_message_exit_container)
#define sd_bus_message_read_basic CSYSBUS_REDIRECT(sd_bus_message_read_basic)
#define sd_bus_message_skip CSYSBUS_REDIRECT(sd_bus_message_skip)
#define sd_bus_message_unref CSYSBUS_REDIRECT(sd_bus_message_unref)
#define sd_bus_new CSYSBUS_REDIRECT(sd_bus_new)
#define sd_bus_process CSYSBUS_REDIRECT(sd_bus_process)
#define sd_bus_set_address CSYSBUS_REDIRECT(sd_bus_set_address)
#define sd_bus_set_bus_client CSYSBUS_REDIRECT(sd_bus_set_bus_client)
#define sd_bus_set_method_call_timeout CSYSBUS_REDIRECT(sd_bus_set_method_call_timeout)
#define sd_bus_start CSYSBUS_REDIRECT(sd_bus_start)
#define sd_bus_wait CSYSBUS_REDIRECT(sd_bus_wait)

struct csysbus {
    sd_bus *bus;
};

static void copy_message(char *message, size_t size, const char *text) {
    if (message == NULL || size == 0) return;
    snprintf(message, size, "%s", text ? text : "");
}

static void copy_error(char *message, size_t size, const sd_bus_error *error, int code) {
    if (error != NULL && sd_bus_error_is_set(error)) {
        char text[512];
        snprintf(text, sizeof text, "%s: %s", error->name ? error->name : "error",
                 error->message ? error->message : strerror(-code));
        copy_message(message, size, text);
    } else {
        copy_message(message, size, strerror(code < 0 ? -code : code));
    }
}

static int on_signal(sd_bus_message *m, void *userdata, sd_bus_error *error) {
    (void)m;
    (void)error;
    if (userdata != NULL) *(int *)userdata = 1;
    return 0;
}

static const char *const matches[] = {
    "type='signal',sender='org.freedesktop.DBus',interface='org.freedesktop.DBus',member='NameOwnerChanged',"
    "arg0='org.freedesktop.NetworkManager'",
    "type='signal',sender='org.freedesktop.DBus',interface='org.freedesktop.DBus',member='NameOwnerChanged',"
    "arg0='org.freedesktop.ModemManager1'",
    "type='signal',path='/org/freedesktop/NetworkManager'",
    "type='signal',path_namespace='/org/freedesktop/ModemManager1'",
};

/// Connects and authenticates, giving up after `timeout_usec`: sd_bus_start only begins the
/// handshake, which is then driven here (a bus that accepts and never answers would otherwise
/// hold the first call for sd-bus's 90 s authentication timeout).
static int start_within(sd_bus *bus, uint64_t timeout_usec) {
    int r = sd_bus_start(bus);
    if (r < 0) return r;
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    uint64_t start = (uint64_t)now.tv_sec * 1000000u + (uint64_t)now.tv_nsec / 1000u;
    uint64_t deadline = start + timeout_usec;
    while ((r = sd_bus_is_ready(bus)) == 0) {
        r = sd_bus_process(bus, NULL);
        if (r < 0) return r;
        if (r > 0) continue;
        clock_gettime(CLOCK_MONOTONIC, &now);
        uint64_t current = (uint64_t)now.tv_sec * 1000000u + (uint64_t)now.tv_nsec / 1000u;
        if (current >= deadline) return -ETIMEDOUT;
        r = sd_bus_wait(bus, deadline - current);
        if (r < 0 && r != -EINTR) return r;
    }
    return r < 0 ? r : 0;
}

int csysbus_open(const char *address, uint64_t call_timeout_usec, int *dirty, csysbus **out,
                 char *message, size_t message_size) {
    *out = NULL;
    pthread_once(&systemd_once, load_systemd);
    if (!systemd.loaded) {
        copy_message(message, message_size, systemd.error);
        return -ELIBACC;
    }
    sd_bus *bus = NULL;
    if (address == NULL) {
        const char *variable = getenv("DBUS_SYSTEM_BUS_ADDRESS");
        address = variable != NULL && variable[0] != 0 ? variable : "unix:path=/run/dbus/system_bus_socket";
    }
    int r = sd_bus_new(&bus);
    if (r >= 0) r = sd_bus_set_address(bus, address);
    if (r >= 0) r = sd_bus_set_bus_client(bus, 1);
    if (r >= 0) r = sd_bus_set_method_call_timeout(bus, call_timeout_usec);
    if (r >= 0) r = start_within(bus, call_timeout_usec);
    if (r < 0) {
        copy_message(message, message_size, r == -ETIMEDOUT ? "it did not answer" : strerror(-r));
        sd_bus_close_unref(bus);
        return r;
    }
    // A one-shot reading (no `dirty`) subscribes to nothing.
    for (size_t i = 0; dirty != NULL && i < sizeof matches / sizeof matches[0]; i++) {
        r = sd_bus_add_match(bus, NULL, matches[i], on_signal, dirty);
        if (r < 0) {
            char text[256];
            snprintf(text, sizeof text, "subscribing to signals failed: %s",
                     r == -ETIMEDOUT ? "the bus did not answer" : strerror(-r));
            copy_message(message, message_size, text);
            sd_bus_close_unref(bus);
            return r;
        }
    }
    csysbus *wrapper = calloc(1, sizeof *wrapper);
    if (wrapper == NULL) {
        sd_bus_close_unref(bus);
        copy_message(message, message_size, strerror(ENOMEM));
        return -ENOMEM;
    }
    wrapper->bus = bus;
    *out = wrapper;
    return 0;
}

void csysbus_close(csysbus *bus) {
    if (bus == NULL) return;
    sd_bus_close_unref(bus->bus);
    free(bus);
}

int csysbus_fd(csysbus *bus) { return sd_bus_get_fd(bus->bus); }

int csysbus_events(csysbus *bus) { return sd_bus_get_events(bus->bus); }

int csysbus_timeout(csysbus *bus, uint64_t *usec) { return sd_bus_get_timeout(bus->bus, usec); }

int csysbus_process(csysbus *bus) { return sd_bus_process(bus->bus, NULL); }

int csysbus_name_has_owner(csysbus *bus, const char *name, char *message, size_t message_size) {
    sd_bus_error error = SD_BUS_ERROR_NULL;
    sd_bus_message *reply = NULL;
    int r = sd_bus_call_method(bus->bus, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
                               "NameHasOwner", &error, &reply, "s", name);
    if (r < 0) {
        copy_error(message, message_size, &error, r);
        sd_bus_error_free(&error);
        return r;
    }
    int has = 0;
    r = sd_bus_message_read_basic(reply, 'b', &has);
    sd_bus_message_unref(reply);
    if (r < 0) {
        copy_message(message, message_size, "NameHasOwner gave an unreadable reply");
        return r;
    }
    return has ? 1 : 0;
}

int csysbus_get_u32(csysbus *bus, const char *destination, const char *path, const char *interface,
                    const char *member, uint32_t *value, char *message, size_t message_size) {
    sd_bus_error error = SD_BUS_ERROR_NULL;
    int r = sd_bus_get_property_trivial(bus->bus, destination, path, interface, member, &error, 'u', value);
    if (r < 0) copy_error(message, message_size, &error, r);
    sd_bus_error_free(&error);
    return r < 0 ? r : 0;
}

/// Reads one object's `a{sa{sv}}` and, when it has the 3GPP interface, its RegistrationState.
/// Returns 1 when found (state in *state), 0 when the object has no such interface, < 0 on error.
static int read_object_interfaces(sd_bus_message *reply, uint32_t *state) {
    int found = 0;
    int r = sd_bus_message_enter_container(reply, 'a', "{sa{sv}}");
    if (r < 0) return r;
    while ((r = sd_bus_message_enter_container(reply, 'e', "sa{sv}")) > 0) {
        const char *interface = NULL;
        r = sd_bus_message_read_basic(reply, 's', &interface);
        if (r < 0) return r;
        int is_3gpp = interface != NULL && strcmp(interface, "org.freedesktop.ModemManager1.Modem.Modem3gpp") == 0;
        r = sd_bus_message_enter_container(reply, 'a', "{sv}");
        if (r < 0) return r;
        while ((r = sd_bus_message_enter_container(reply, 'e', "sv")) > 0) {
            const char *name = NULL;
            r = sd_bus_message_read_basic(reply, 's', &name);
            if (r < 0) return r;
            if (is_3gpp && name != NULL && strcmp(name, "RegistrationState") == 0) {
                r = sd_bus_message_enter_container(reply, 'v', "u");
                if (r > 0) {
                    r = sd_bus_message_read_basic(reply, 'u', state);
                    if (r < 0) return r;
                    found = 1;
                    r = sd_bus_message_exit_container(reply);
                    if (r < 0) return r;
                } else {
                    // Another type than `u`: skip it, the modem's state stays unknown.
                    r = sd_bus_message_skip(reply, "v");
                    if (r < 0) return r;
                }
            } else {
                r = sd_bus_message_skip(reply, "v");
                if (r < 0) return r;
            }
            r = sd_bus_message_exit_container(reply);
            if (r < 0) return r;
        }
        if (r < 0) return r;
        r = sd_bus_message_exit_container(reply);
        if (r < 0) return r;
        r = sd_bus_message_exit_container(reply);
        if (r < 0) return r;
    }
    if (r < 0) return r;
    r = sd_bus_message_exit_container(reply);
    return r < 0 ? r : found;
}

int csysbus_modem_registration_states(csysbus *bus, uint32_t *states, int capacity, int *count,
                                      char *message, size_t message_size) {
    *count = 0;
    sd_bus_error error = SD_BUS_ERROR_NULL;
    sd_bus_message *reply = NULL;
    int r = sd_bus_call_method(bus->bus, "org.freedesktop.ModemManager1", "/org/freedesktop/ModemManager1",
                               "org.freedesktop.DBus.ObjectManager", "GetManagedObjects", &error, &reply, "");
    if (r < 0) {
        copy_error(message, message_size, &error, r);
        sd_bus_error_free(&error);
        return r;
    }
    r = sd_bus_message_enter_container(reply, 'a', "{oa{sa{sv}}}");
    while (r >= 0 && (r = sd_bus_message_enter_container(reply, 'e', "oa{sa{sv}}")) > 0) {
        const char *path = NULL;
        r = sd_bus_message_read_basic(reply, 'o', &path);
        if (r < 0) break;
        uint32_t state = 0;
        r = read_object_interfaces(reply, &state);
        if (r < 0) break;
        if (r == 1) {
            if (*count < capacity) states[*count] = state;
            *count += 1;
        }
        r = sd_bus_message_exit_container(reply);
    }
    if (r >= 0) r = sd_bus_message_exit_container(reply);
    sd_bus_message_unref(reply);
    if (r < 0) {
        copy_message(message, message_size, "ModemManager's GetManagedObjects gave an unreadable reply");
        return r;
    }
    return 0;
}
#endif
