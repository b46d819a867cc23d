/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stddef.h>
#include <stdint.h>

#include <libmnl/libmnl.h>

/*
 * One netlink request and its replies, the same for every family hosttune
 * asks (generic netlink for ethtool, NETLINK_NETFILTER for ctnetlink,
 * NETLINK_SOCK_DIAG for inet_diag), as ethtool's netlink/nlsock.c does it:
 * a socket with extended ACKs, the replies of one request run through the
 * caller's callback until the ACK or NLMSG_DONE, the kernel's errno and
 * extack text kept (Documentation/userspace-api/netlink/intro.rst).
 */

/*
 * A receive buffer for a dump: netlink_dump() (net/netlink/af_netlink.c)
 * sizes a dump's skb to the reader's largest recvmsg() buffer, up to 32 KiB,
 * so a smaller one could truncate a message. libmnl >= 1.0.5 calls this
 * MNL_SOCKET_DUMP_SIZE; a request that is no dump needs far less.
 */
#define HT_NL_DUMP_BUF_SIZE 32768

/* Room for the kernel's extack text; NL_SET_ERR_MSG messages are short literals. */
#define HT_NL_EXTACK_LEN 256

/*
 * ht_nl_open - a netlink socket of @bus (NETLINK_GENERIC, NETLINK_NETFILTER,
 * NETLINK_SOCK_DIAG, ...) bound to a port the kernel picks, with extended
 * ACKs and capped ACKs asked for (best effort: a kernel before 4.12 has no
 * extended ACK, its errors come without a message). *@out receives it on
 * success; close it with mnl_socket_close() or ht_nl_closep(). Returns 0,
 * or the negative errno of socket(2) or bind(2) (-EPROTONOSUPPORT: no such
 * netlink family).
 */
int ht_nl_open(int bus, struct mnl_socket **out);

/* Closes *@nl unless it is NULL; for _cleanup_(ht_nl_closep). */
void ht_nl_closep(struct mnl_socket **nl);

/*
 * ht_nl_request - sends the request @nlh (type, flags, NLM_F_ACK or
 * NLM_F_DUMP, and sequence number set by the caller) on @nl and reads its
 * replies into @buf (@size bytes, aligned for struct nlmsghdr, as malloc()
 * returns; it may be the buffer @nlh was built in) until the ACK of a
 * request or the NLMSG_DONE of a dump.
 *
 * @cb (may be NULL) runs with @data on every reply that is not a control
 * message: MNL_CB_OK reads on, MNL_CB_STOP ends the request there (0), and
 * MNL_CB_ERROR with errno set fails it with -errno (-EPROTO when errno is
 * 0). NLMSG_NOOP is skipped; NLMSG_OVERRUN fails the request with -ENOBUFS.
 *
 * @extack: NULL, or HT_NL_EXTACK_LEN bytes that receive the message the
 * kernel gave with its error (NLMSGERR_ATTR_MSG of an NLMSG_ERROR, or of an
 * NLMSG_DONE that ends a dump with an error), control characters as spaces
 * and leading and trailing spaces dropped; "" when there is none.
 *
 * Returns 0; or a negative errno taken right after the call that failed:
 * sendto(2) or recvfrom(2)'s, the kernel's (NLMSG_ERROR, or the dump's
 * NLMSG_DONE), libmnl's (-EINTR when the kernel marked a dump interrupted,
 * NLM_F_DUMP_INTR: what it walked changed under it, ask again; -ESRCH for a
 * reply to another port, -EPROTO to another sequence number), -EBADMSG for
 * an NLMSG_ERROR too short to hold one, or @cb's.
 */
int ht_nl_request(struct mnl_socket *nl, const struct nlmsghdr *nlh, void *buf, size_t size,
                  mnl_cb_t cb, void *data, char *extack);

/*
 * ht_nl_parse - fills @tb (@max + 1 entries, zeroed by the caller) with
 * the attributes of @nlh that follow its @offset bytes of family header
 * (sizeof(struct ifinfomsg), sizeof(struct genlmsghdr), ...), by type;
 * attributes above @max (a newer kernel's) are ignored, the last of a
 * repeated type wins. Returns 0; -EINVAL when the payload is shorter than
 * @offset or an attribute's length runs past the message (what came before
 * it is in @tb).
 */
int ht_nl_parse(const struct nlmsghdr *nlh, size_t offset, const struct nlattr **tb,
                uint16_t max);

/*
 * ht_nl_parse_nested - the same for the attributes nested in @nest (NULL:
 * -EINVAL). Returns 0 or -EINVAL.
 */
int ht_nl_parse_nested(const struct nlattr *nest, const struct nlattr **tb, uint16_t max);
