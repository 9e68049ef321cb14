#ifndef CNETLINK_H
#define CNETLINK_H

// The rtnetlink definitions Swift's Glibc module lacks (NETLINK_ROUTE, sockaddr_nl, the NLMSG_*
// macros, RTM_* message types, RTMGRP_* groups), as constants and small functions Swift can call.
// Linux only: on other systems the header declares nothing.

#ifdef __linux__
#include <stdint.h>
#include <stddef.h>
#include <sys/types.h>

/// The multicast groups the route monitor joins: links, IPv4 and IPv6 addresses and routes.
uint32_t cnetlink_route_groups(void);

/// Opens a non-blocking, close-on-exec NETLINK_ROUTE socket bound to `groups`, with a receive
/// buffer of `receive_buffer` bytes (when > 0). Returns the descriptor, or -1 with errno set.
int cnetlink_open_route_socket(uint32_t groups, int receive_buffer);

/// What one received datagram holds.
typedef struct {
    /// Link, address or route messages (new or deleted) seen.
    int route_changes;
    /// Other messages (NLMSG_DONE, NLMSG_NOOP, unrelated types).
    int other;
    /// NLMSG_ERROR messages, or a truncated/malformed message ends the walk.
    int errors;
} cnetlink_summary;

/// Walks the netlink messages in `buffer[0..<length]` with NLMSG_OK/NLMSG_NEXT (bounds-checked
/// by the kernel's own macros) and counts what they are. Never reads outside the buffer.
cnetlink_summary cnetlink_summarize(const void *buffer, size_t length);

/// Opens a non-blocking, close-on-exec eventfd (a counter another thread writes to wake a poll).
/// Returns the descriptor, or -1 with errno set.
int cnetlink_open_wake_descriptor(void);

/// Names the calling thread (at most 15 bytes are kept), as /proc/self/task/*/comm shows it.
void cnetlink_name_this_thread(const char *name);

/// Whether `type` is a link, address or route message (RTM_NEWLINK … RTM_DELROUTE).
int cnetlink_is_route_change(uint16_t type);

#endif
#endif
