/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <stdint.h>

/*
 * What fixes one finding: pure data, no function. The plan fills one per
 * finding (persist/persist.h, ht_plan_build(): struct ht_plan's fixes, in the
 * findings' order) and owns every string (ht_plan_free() frees them); the
 * report (cli/report.c) prints what it is handed and reads no file. It lives
 * in engine/ because both persist/ and cli/report.c may include engine/, and
 * cli/report.c includes nothing of persist/.
 */

enum ht_fix_kind {
	HT_FIX_NONE = 0,   /* nothing to change or to say: ok, kept, advice, not applicable */
	HT_FIX_FILE,       /* @line in hosttune's @file, and the live write @live */
	HT_FIX_CMDLINE,    /* a parameter of a built-in module: @cmdline on the kernel command
	                      line (no modprobe.d file reaches it), and the live write @live */
	HT_FIX_DROPIN,     /* @line in the service's drop-in @file, then a restart of @restart:
	                      a process takes its limit when it starts */
	HT_FIX_UNIT_GIVES, /* the service's own unit files already give @given (@source):
	                      only a restart of @restart; hosttune writes no drop-in */
	HT_FIX_NONE_HERE,  /* the finding asks for a change no file of hosttune's can make: @reason */
	HT_FIX_MANAGED,    /* another manager owns the directory hosttune would write in
	                      (@reason: who and which directory): @line is that manager's own
	                      setting (@nixos: a configuration.nix option), then a restart of
	                      @restart for a limit */
};

struct ht_fix {
	enum ht_fix_kind kind;
	/* HT_FIX_FILE: hosttune's file (its sysctl.d or modprobe.d file, a .link file);
	 * HT_FIX_DROPIN: the service's drop-in; NULL otherwise. */
	char *file;
	/* The line in @file ("net.netfilter.nf_conntrack_max = 262144", "options
	 * nf_conntrack hashsize=65536", a .link file's [Link] line, "[Service]
	 * LimitNOFILE=65536:524288"); HT_FIX_UNIT_GIVES: "LimitNOFILE=N" as the
	 * unit gives it; NULL otherwise. */
	char *line;
	/* HT_FIX_CMDLINE: the kernel command-line word ("nf_conntrack.hashsize=65536"). */
	char *cmdline;
	/* HT_FIX_FILE, HT_FIX_CMDLINE: the live write, a procfs/sysfs path
	 * ("/proc/sys/net/netfilter/nf_conntrack_max") or what is sent where
	 * there is none ("ethtool netlink CHANNELS_SET eth0 combined 4 (ethtool
	 * -L eth0 combined 4)"); NULL otherwise. */
	char *live;
	/* @live does not exist now (nf_conntrack not loaded, a sysctl of a module
	 * or interface that is not there): no live write, the file applies at
	 * boot once the kernel has it. */
	bool live_absent;
	/* HT_FIX_DROPIN, HT_FIX_UNIT_GIVES, HT_FIX_MANAGED of a limit: the service to
	 * restart ("garage.service"). */
	char *restart;
	/* HT_FIX_UNIT_GIVES: "FILE:LINE" of the LimitNOFILE= that gives @given. */
	char *source;
	/* HT_FIX_UNIT_GIVES: the soft limit the unit gives, in open files (INT64_MAX: infinity). */
	int64_t given;
	/* HT_FIX_NONE_HERE: why nothing can be written, one line; HT_FIX_MANAGED:
	 * who manages which directory ("NixOS manages /etc/systemd/system (a link
	 * to /etc/static/systemd/system)"). */
	char *reason;
	/* HT_FIX_MANAGED: @line is a NixOS option, set in configuration.nix. */
	bool nixos;
};
