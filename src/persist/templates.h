/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/*
 * The file templates (templates/NAME.in), compiled in by tools/embed-templates.sh.
 * Placeholders: @PROFILE@ (profile name), @IFNAME@ (interface), @SETTINGS@
 * (the settings block), @MATCH@ (a .link [Match] line), @BOOT_NOTE@ (sysctl.conf:
 * how the net.netfilter keys exist at boot, only naming a file the plan writes,
 * or nothing), @UNIT@ (nofile-dropin.conf: the systemd service). Each starts
 * with HT_FILE_HEADER (persist.h).
 */
extern const char ht_tmpl_sysctl_conf[];
extern const char ht_tmpl_modprobe_conf[];
extern const char ht_tmpl_modules_load_conf[];
extern const char ht_tmpl_channels_link[];
extern const char ht_tmpl_nofile_dropin_conf[];
