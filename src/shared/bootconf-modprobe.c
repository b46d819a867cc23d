/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shared/bootconf-internal.h"
#include "shared/bootconf.h"
#include "shared/util.h"

/* bootconf: modprobe.d, as kmod reads it, and the kernel command line's module parameters. */

/*
 * kmod's getline_wrapped() (libkmod/libkmod-util.c): a backslash before a newline
 * joins the next physical line, a backslash before anything else is dropped.
 * *@first: the first physical line of the logical one (1-based).
 */
static bool kmod_next_line(const struct content *ct, size_t *pos, unsigned *physical,
			   unsigned *first, char **ret)
{
	size_t p = *pos, cap = 256, n = 0;
	char *buf;

	if (p >= ct->len)
		return false;
	if (!(buf = malloc(cap)))
		return (*ret = NULL), true;
	*first = *physical + 1;
	while (p < ct->len) {
		char ch = ct->buf[p++];

		if (ch == '\n')
			break;
		if (ch == '\\' && p < ct->len) {
			ch = ct->buf[p++];
			if (ch == '\n') {
				(*physical)++;
				continue;
			}
		}
		if (n + 1 >= cap) {
			char *nb = realloc(buf, cap *= 2);

			if (!nb) {
				free(buf);
				return (*ret = NULL), true;
			}
			buf = nb;
		}
		buf[n++] = ch;
	}
	(*physical)++;
	buf[n] = '\0';
	*pos = p;
	*ret = buf;
	return true;
}

/* kmod's underscores(): '-' becomes '_' except inside a [...] range. */
static void kmod_underscores(char *s)
{
	for (size_t i = 0; s[i]; i++) {
		if (s[i] == '[') {
			size_t e = strcspn(s + i, "]");

			if (!s[i + e])
				return;
			i += e;
		} else if (s[i] == '-') {
			s[i] = '_';
		}
	}
}

/* One parameter as the kernel's next_arg() cuts it out of the option string. */
struct kparam {
	char *name;  /* points into the line's copy */
	char *value; /* NULL without '=' */
	bool used;   /* taken up by a space-around-'=' report */
};

/*
 * next_arg() (lib/cmdline.c, called by parse_args() in kernel/params.c): blanks
 * separate parameters outside double quotes; the first '=' that is not the
 * first character splits name and value; quotes around the value or the whole
 * parameter are dropped. Returns the rest of @args; *@open_quote tells that
 * the string ended inside quotes.
 */
static char *kernel_next_arg(char *args, struct kparam *kp, bool *open_quote)
{
	size_t i, equals = 0;
	bool in_quote = false, quoted = false;
	char *next;

	if (*args == '"') {
		args++;
		in_quote = quoted = true;
	}
	for (i = 0; args[i]; i++) {
		if (isspace((unsigned char)args[i]) && !in_quote)
			break;
		if (equals == 0 && args[i] == '=')
			equals = i;
		if (args[i] == '"')
			in_quote = !in_quote;
	}
	*open_quote = in_quote;
	kp->name = args;
	kp->value = NULL;
	kp->used = false;
	if (equals) {
		args[equals] = '\0';
		kp->value = args + equals + 1;
		if (*kp->value == '"') {
			kp->value++;
			if (args[i - 1] == '"')
				args[i - 1] = '\0';
		}
	}
	if (quoted && i > 0 && args[i - 1] == '"')
		args[i - 1] = '\0';
	if (args[i]) {
		args[i] = '\0';
		next = args + i + 1;
	} else {
		next = args + i;
	}
	while (isspace((unsigned char)*next))
		next++;
	return next;
}

/*
 * nf_conntrack's parameters: hashsize (net/netfilter/nf_conntrack_core.c),
 * expect_hashsize (nf_conntrack_expect.c), acct (nf_conntrack_acct.c), tstamp
 * (nf_conntrack_timestamp.c), nf_conntrack_helper (nf_conntrack_helper.c, until
 * Linux 6.0 removed it in b118509076b3); and what every module takes: dyndbg
 * (lib/dynamic_debug.c) and async_probe (kernel/module/main.c,
 * unknown_module_param_cb()).
 */
static const char *const nf_conntrack_params[] = {
	"hashsize", "expect_hashsize", "acct", "tstamp", "nf_conntrack_helper",
	"dyndbg", "async_probe",
};

/* The unsigned ones, set through param_set_uint() -> kstrtouint(). */
static bool nf_conntrack_uint(const char *param)
{
	return streq(param, "hashsize") || streq(param, "expect_hashsize");
}

/*
 * kstrtouint(s, 0, ...) (lib/kstrtox.c): an optional '+', then "0x" + hex
 * digits, '0' + octal digits or decimal digits, an optional final newline, and
 * the value within 32 bits.
 */
static bool kstrtouint_ok(const char *s)
{
	unsigned long long v = 0;
	unsigned base = 10;
	size_t digits = 0;

	if (*s == '+')
		s++;
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X') && isxdigit((unsigned char)s[2])) {
		base = 16;
		s += 2;
	} else if (s[0] == '0') {
		base = 8;
	}
	for (; *s; s++, digits++) {
		unsigned d;

		if (isdigit((unsigned char)*s))
			d = (unsigned)(*s - '0');
		else if (isxdigit((unsigned char)*s))
			d = (unsigned)(tolower((unsigned char)*s) - 'a' + 10);
		else
			break;
		if (d >= base)
			break;
		v = v * base + d;
		if (v > 0xffffffffULL)
			return false;
	}
	if (*s == '\n')
		s++;
	return digits > 0 && *s == '\0';
}

/*
 * Reports "p = v", "p =v", "p= v" and a "=" with no name before it among @kp,
 * marking the stray pieces used so that they are not taken for parameters.
 */
static int report_space_eq(struct ht_conf *c, const char *path, unsigned line,
			   const char *mod, struct kparam *kp, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		_cleanup_free_ char *key = NULL, *seg = NULL, *fix = NULL;
		const char *name = NULL, *val = NULL, *how;
		int r;

		if (kp[i].used)
			continue;
		if (!kp[i].value && kp[i].name[0] == '=') {
			/* "=" or "=v": a blank before the '=' */
			if (i > 0 && !kp[i - 1].value && !kp[i - 1].used)
				name = kp[i - 1].name;
			kp[i].used = true;
			if (kp[i].name[1]) {
				val = kp[i].name + 1;
				r = asprintf(&seg, "%s%s=%s", name ? name : "", name ? " " : "",
					     val);
			} else {
				if (i + 1 < n && !kp[i + 1].value && kp[i + 1].name[0] != '=') {
					val = kp[i + 1].name;
					kp[i + 1].used = true;
				}
				r = asprintf(&seg, "%s%s=%s%s", name ? name : "", name ? " " : "",
					     val ? " " : "", val ? val : "");
			}
			how = name ? "the kernel gets the parameter without a value, which "
				     "fails with EINVAL unless it is a bool, and then the module "
				     "does not load; the pieces after it are ignored as unknown "
				     "parameters"
				   : "the kernel ignores the pieces as unknown parameters";
		} else if (kp[i].value && !kp[i].value[0] && i + 1 < n && !kp[i + 1].value &&
			   kp[i + 1].name[0] != '=') {
			/* "p= v": a blank after the '=' */
			name = kp[i].name;
			val = kp[i + 1].name;
			kp[i + 1].used = true;
			r = asprintf(&seg, "%s= %s", name, val);
			how = "the kernel sets the parameter to an empty value and ignores the "
			      "value as an unknown parameter";
		} else {
			continue;
		}
		if (r < 0)
			return (seg = NULL), -ENOMEM;
		if (asprintf(&fix, "%s=%s", name ? name : "PARAM", val ? val : "VALUE") < 0)
			return (fix = NULL), -ENOMEM;
		if (name && asprintf(&key, "%s.%s", mod, name) < 0)
			return (key = NULL), -ENOMEM;
		r = bootconf_add_problem(c, HT_CONF_SPACE_AROUND_EQ, path, line, key,
					 "options %s: spaces around '=' in \"%s\": %s; write %s", mod, seg,
					 how, fix);
		if (r < 0)
			return r;
	}
	return 0;
}

/* The nf_conntrack checks for one parameter; @spaced: already in a space report. */
static int check_nf_conntrack(struct ht_conf *c, const char *path, unsigned line,
			      const char *param, const char *value, bool spaced)
{
	_cleanup_free_ char *key = NULL, *hint = NULL;
	bool known = false;

	for (size_t i = 0; i < ARRAY_SIZE(nf_conntrack_params) && !known; i++)
		known = streq(param, nf_conntrack_params[i]);
	if (asprintf(&key, "nf_conntrack.%s", param) < 0)
		return (key = NULL), -ENOMEM;
	if (!known) {
		/* nf_conntrack_max, nf_conntrack_buckets, ...: names of sysctls */
		if (strncmp(param, "nf_conntrack_", strlen("nf_conntrack_")) == 0 &&
		    asprintf(&hint, "; net.netfilter.%s is a sysctl, set in sysctl.d", param) < 0)
			return (hint = NULL), -ENOMEM;
		return bootconf_add_problem(c, HT_CONF_UNKNOWN_PARAM, path, line, key,
					    "nf_conntrack has no parameter \"%s\" (it has hashsize, "
					    "expect_hashsize, acct and tstamp): the kernel ignores it%s",
					    param, hint ? hint : "");
	}
	if (spaced || !nf_conntrack_uint(param))
		return 0;
	if (!value)
		return bootconf_add_problem(c, HT_CONF_MISSING_VALUE, path, line, key,
					    "nf_conntrack %s without a value: the kernel refuses it with "
					    "EINVAL and nf_conntrack does not load", param);
	if (!kstrtouint_ok(value))
		return bootconf_add_problem(c, HT_CONF_BAD_VALUE, path, line, key,
					    "nf_conntrack %s=%s: not an unsigned 32-bit number as the "
					    "kernel's kstrtouint() reads it; nf_conntrack does not load",
					    param, value);
	return 0;
}

/* State across the lines of all files: modules whose parameters a "--" ended. */
struct kmod_state {
	char **ended;
	size_t nended;
};

static int kmod_options(struct ht_conf *c, struct kmod_state *ks, struct pendings *p,
			const char *path, unsigned line, char *mod, char *opts)
{
	_cleanup_free_ struct kparam *kp = NULL;
	size_t n = 0;
	bool open_quote = false, ended = false;
	int r;

	kmod_underscores(mod);
	for (char *t = opts; *t; t++)
		if (*t == '\t')
			*t = ' ';
	for (size_t i = 0; i < ks->nended && !ended; i++)
		ended = streq(ks->ended[i], mod);
	if (ended)
		return bootconf_add_problem(c, HT_CONF_MALFORMED, path, line, mod,
					    "options %s: ignored by the kernel, after an earlier \"--\"",
					    mod);
	opts += strspn(opts, " \t\n\v\f\r");
	while (*opts) {
		struct kparam *nk = reallocarray(kp, n + 1, sizeof(*kp));

		if (!nk)
			return -ENOMEM;
		kp = nk;
		opts = kernel_next_arg(opts, &kp[n], &open_quote);
		/* parse_args(): a bare "--" ends the module's parameters, this line's and later. */
		if (!kp[n].value && streq(kp[n].name, "--")) {
			r = bootconf_strv_push(&ks->ended, &ks->nended, mod);
			if (r >= 0 && *opts)
				r = bootconf_add_problem(c, HT_CONF_MALFORMED, path, line, mod,
							 "options %s: the kernel ignores what follows "
							 "\"--\"", mod);
			if (r < 0)
				return r;
			break;
		}
		for (char *d = kp[n].name; *d; d++)
			if (*d == '-')
				*d = '_';
		n++;
	}
	if (open_quote) {
		r = bootconf_add_problem(c, HT_CONF_MALFORMED, path, line, mod,
					 "options %s: a double quote is not closed: the kernel reads the "
					 "options of the next line into this value", mod);
		if (r < 0)
			return r;
	}
	r = report_space_eq(c, path, line, mod, kp, n);
	if (r < 0)
		return r;
	for (size_t i = 0; i < n; i++) {
		_cleanup_free_ char *key = NULL;
		bool spaced = i + 1 < n && kp[i + 1].used;
		struct pending t = { .file = path, .line = line };

		if (kp[i].used)
			continue;
		if (streq(mod, "nf_conntrack")) {
			r = check_nf_conntrack(c, path, line, kp[i].name, kp[i].value, spaced);
			if (r < 0)
				return r;
		}
		if (asprintf(&key, "%s.%s", mod, kp[i].name) < 0)
			return (key = NULL), -ENOMEM;
		r = bootconf_pending_add(p, key, kp[i].value, &t);
		if (r < 0)
			return r;
	}
	return 0;
}

/* One logical line, as kmod_config_parse() (libkmod/libkmod-config.c) takes it. */
static int kmod_line(struct ht_conf *c, struct kmod_state *ks, struct pendings *p,
		     const char *path, unsigned line, char *text)
{
	/* command: how many words it needs after it; -1: a module, then the rest */
	static const struct {
		const char *cmd;
		int words;
	} cmds[] = {
		{ "alias", 2 }, { "blacklist", 1 }, { "options", -1 },
		{ "install", -1 }, { "remove", -1 }, { "softdep", -1 },
	};
	char *save = NULL, *cmd, *mod, *rest;
	int words = 0;
	bool known = false;

	if (text[0] == '\0' || text[0] == '#')
		return 0;
	cmd = strtok_r(text, "\t ", &save);
	if (!cmd)
		return 0;
	if (streq(cmd, "include") || streq(cmd, "config"))
		return bootconf_add_problem(c, HT_CONF_MALFORMED, path, line, NULL,
					    "command %s is deprecated and not parsed by kmod", cmd);
	for (size_t i = 0; i < ARRAY_SIZE(cmds) && !known; i++)
		if (streq(cmd, cmds[i].cmd)) {
			known = true;
			words = cmds[i].words;
		}
	if (!known)
		goto bad;
	mod = strtok_r(NULL, "\t ", &save);
	if (!mod)
		goto bad;
	if (words == 2 && !strtok_r(NULL, "\t ", &save))
		goto bad;
	if (words >= 0)
		return 0;
	/* strtok_r() with no delimiters: all that is left, or NULL when nothing is. */
	rest = strtok_r(NULL, "", &save);
	if (!rest)
		goto bad;
	if (streq(cmd, "options"))
		return kmod_options(c, ks, p, path, line, mod, rest);
	return 0;
bad:
	return bootconf_add_problem(c, HT_CONF_MALFORMED, path, line, NULL,
				    "kmod ignores this line, starting with '%s'", cmd);
}

int ht_modprobe_conf_read(const char *root, struct ht_conf *out)
{
	/* libkmod/libkmod.c default_config_paths in kmod 30 */
	static const char *const dirs[] = {
		"/etc/modprobe.d",
		"/run/modprobe.d",
		"/usr/local/lib/modprobe.d",
		"/lib/modprobe.d",
	};
	struct ht_conf c = { 0 };
	struct kmod_state ks = { 0 };
	struct pendings p = { 0 };
	struct entry *e = NULL;
	size_t ne = 0;
	int r;

	if (!out)
		return -EINVAL;
	r = bootconf_list_files(&c, root, dirs, ARRAY_SIZE(dirs), STYLE_KMOD, &e, &ne);
	for (size_t i = 0; i < ne && r >= 0; i++) {
		struct content ct = { 0 };
		unsigned physical = 0, first;
		size_t pos = 0;
		char *text;

		r = bootconf_read_entry(&c, root, e[i].path, &ct);
		if (r <= 0)
			continue;
		while (r >= 0 && kmod_next_line(&ct, &pos, &physical, &first, &text)) {
			if (!text) {
				r = -ENOMEM;
				break;
			}
			r = kmod_line(&c, &ks, &p, c.files[c.nfiles - 1], first, text);
			free(text);
		}
		free(ct.buf);
	}
	if (r >= 0)
		r = bootconf_group(&c, &p);
	bootconf_pendings_free(&p);
	bootconf_strv_free_n(ks.ended, ks.nended);
	bootconf_entries_free(e, ne);
	if (r < 0) {
		ht_conf_free(&c);
		return r;
	}
	*out = c;
	return 0;
}

char *ht_kcmdline_param(const char *root, const char *name)
{
	_cleanup_free_ char *cmd = NULL;
	size_t nl = strlen(name);
	char *found = NULL;

	if (ht_read_file(root, "/proc/cmdline", &cmd) < 0)
		return NULL;
	/* The last word for the parameter wins, as parse_args() sets them in turn. */
	for (char *w = cmd, *next; w && *w; w = next) {
		size_t i, len;

		w += strspn(w, " \t\n");
		len = strcspn(w, " \t\n");
		next = w[len] ? w + len + 1 : NULL;
		w[len] = '\0';
		for (i = 0; i < nl && w[i]; i++)
			if (!(w[i] == name[i] || (w[i] == '-' && name[i] == '_')))
				break;
		if (i == nl && w[i] == '=') {
			free(found);
			found = strdup(w + nl + 1);
		}
	}
	return found;
}
