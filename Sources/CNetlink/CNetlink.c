#ifdef __linux__
#include "CNetlink.h"

#include <errno.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>

uint32_t cnetlink_route_groups(void) {
    return RTMGRP_LINK | RTMGRP_IPV4_IFADDR | RTMGRP_IPV6_IFADDR | RTMGRP_IPV4_ROUTE | RTMGRP_IPV6_ROUTE;
}

int cnetlink_open_route_socket(uint32_t groups, int receive_buffer) {
    int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, NETLINK_ROUTE);
    if (fd < 0) return -1;
    if (receive_buffer > 0) {
        // Best effort: a larger buffer makes ENOBUFS (lost events) rarer during big bursts.
        (void)setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &receive_buffer, sizeof receive_buffer);
    }
    struct sockaddr_nl address;
    memset(&address, 0, sizeof address);
    address.nl_family = AF_NETLINK;
    address.nl_groups = groups;
    if (bind(fd, (struct sockaddr *)&address, sizeof address) != 0) {
        int saved = errno;
        close(fd);
        errno = saved;
        return -1;
    }
    return fd;
}

int cnetlink_open_wake_descriptor(void) {
    return eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
}

void cnetlink_name_this_thread(const char *name) {
    (void)prctl(PR_SET_NAME, (unsigned long)name, 0, 0, 0);
}

int cnetlink_is_route_change(uint16_t type) {
    switch (type) {
    case RTM_NEWLINK: case RTM_DELLINK:
    case RTM_NEWADDR: case RTM_DELADDR:
    case RTM_NEWROUTE: case RTM_DELROUTE:
        return 1;
    default:
        return 0;
    }
}

cnetlink_summary cnetlink_summarize(const void *buffer, size_t length) {
    cnetlink_summary summary = {0, 0, 0};
    if (buffer == NULL || length > (size_t)0x7fffffff) return summary;
    int remaining = (int)length;
    const struct nlmsghdr *header = (const struct nlmsghdr *)buffer;
    for (; NLMSG_OK(header, remaining); header = NLMSG_NEXT(header, remaining)) {
        if (header->nlmsg_type == NLMSG_ERROR) {
            summary.errors += 1;
        } else if (cnetlink_is_route_change(header->nlmsg_type)) {
            summary.route_changes += 1;
        } else {
            summary.other += 1;
        }
    }
    if (remaining > 0) summary.errors += 1;  // a truncated or malformed tail
    return summary;
}
#endif
