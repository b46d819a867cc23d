/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * net-util - what the socket helpers of the tests (tests/tcp-churn.c,
 * tests/tcp-hold.c) share: bounded waits on a socket. No cmocka: the
 * helpers are built without it.
 */

/* Waits until @fd has one of @events (poll(2)), at most @timeout_ms. 0, -ETIMEDOUT or -errno. */
int ht_net_wait_fd(int fd, short events, int timeout_ms);

/*
 * Reads @fd until EOF (the peer's FIN), each wait for data bounded by
 * @timeout_ms. 0 or a negative errno (-ETIMEDOUT included).
 */
int ht_net_read_eof(int fd, int timeout_ms);
