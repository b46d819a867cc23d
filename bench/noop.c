/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * noop - a bench helper: a program that does nothing, linked with the same
 * shared libraries as hosttune (libmnl, libudev, inih, json-c, libm; not
 * libkmod and libcrypto, which hosttune loads with dlopen(3) when a
 * collector needs them). Its CPU time is what starting any program so
 * linked costs (the dynamic loader mapping and relocating them, their
 * constructors): the floor under hosttune's own on an idle host (bench/idle.sh). One function
 * of each library is referenced so that no linker drops a library that this
 * program would otherwise not need (--as-needed); none is called.
 */
#include <ini.h>
#include <json-c/json.h>
#include <libmnl/libmnl.h>
#include <libudev.h>
#include <math.h>

/* Kept by the linker, never read: the addresses are what pulls the libraries in. */
void *const ht_noop_refs[] = {
	(void *)mnl_socket_open,
	(void *)udev_new,
	(void *)ini_parse,
	(void *)json_object_new_object,
	(void *)lgamma,
};

int main(void)
{
	return 0;
}
