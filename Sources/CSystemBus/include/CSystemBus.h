#ifndef CSYSTEMBUS_H
#define CSYSTEMBUS_H

// The few sd-bus calls the network watcher makes, as non-variadic functions Swift can call
// (sd_bus_call_method and sd_bus_message_read are variadic). Headers and library: Debian's
// libsystemd-dev (scripts/setup.sh installs it). Linux only.

#ifdef __linux__
#include <stddef.h>
#include <stdint.h>

/// An open connection to the system bus; used by one thread only.
typedef struct csysbus csysbus;

/// Connects to the system bus at `address`, or, when NULL, where sd-bus looks for it
/// (`DBUS_SYSTEM_BUS_ADDRESS`, else /run/dbus/system_bus_socket). Every method call made through
/// the connection gives up after `call_timeout_usec`, and so does connecting and authenticating
/// (-ETIMEDOUT, "it did not answer"). Unless `dirty` is NULL (a one-shot reading), subscribes to NameOwnerChanged for
/// NetworkManager and ModemManager and to the signals of their objects: each such signal sets
/// `*dirty` to 1. Returns 0 and the connection in `*out`, or a negative errno with the reason
/// in `message` (NUL-terminated, at most `message_size` bytes).
int csysbus_open(const char *address, uint64_t call_timeout_usec, int *dirty, csysbus **out,
                 char *message, size_t message_size);

/// Closes the connection and frees it (no flush: a peer that stopped reading cannot hold it).
void csysbus_close(csysbus *bus);

/// The descriptor to poll, the events to poll it for, and the timeout sd-bus needs (in
/// microseconds of CLOCK_MONOTONIC; UINT64_MAX for none).
int csysbus_fd(csysbus *bus);
int csysbus_events(csysbus *bus);
int csysbus_timeout(csysbus *bus, uint64_t *usec);

/// Processes what arrived: > 0 when more may be waiting, 0 when done, negative errno when the
/// connection is lost.
int csysbus_process(csysbus *bus);

/// Whether `name` has an owner on the bus: 1 yes, 0 no, negative errno on failure.
int csysbus_name_has_owner(csysbus *bus, const char *name, char *message, size_t message_size);

/// Reads a `u` property. Returns 0, or a negative errno with the D-Bus error in `message`.
int csysbus_get_u32(csysbus *bus, const char *destination, const char *path, const char *interface,
                    const char *member, uint32_t *value, char *message, size_t message_size);

/// ModemManager's modems: for each object under /org/freedesktop/ModemManager1 with the
/// `org.freedesktop.ModemManager1.Modem.Modem3gpp` interface, its `RegistrationState` (up to
/// `capacity` of them, in `states`). `*count` is the number of modems with that interface.
/// Returns 0, or a negative errno with the reason in `message`.
int csysbus_modem_registration_states(csysbus *bus, uint32_t *states, int capacity, int *count,
                                      char *message, size_t message_size);
#endif
#endif
