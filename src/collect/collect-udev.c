/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <net/if.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <libudev.h>
#include <linux/ethtool.h>
#include <linux/if_arp.h>
#include <linux/if_tun.h>
#include <linux/sockios.h>

#include "collect/collect.h"
#include "engine/facts.h"
#include "shared/escape.h"
#include "shared/rootfs.h"
#include "shared/util.h"
#include "engine/value.h"

/*
 * nic.list and nic.IF.{driver,bus,kind,physical}. On the live host the
 * interfaces come from libudev, which reads the sysfs of the caller's network
 * namespace; under --root there is no udev database, so the same facts come
 * from the files of ROOT/sys/class/net. Both paths fill a struct nic, and one
 * function turns it into facts, so the two cannot disagree on the rules.
 */

#define SYS_CLASS_NET "/sys/class/net"
/* nic.IF.SUFFIX with IF escaped (shared/escape.h). */
#define NIC_FACT_MAX (sizeof("nic..") + HT_NAME_ESCAPED_MAX(IFNAMSIZ) + 32)

/* What one interface tells, from either source. Strings are owned. */
struct nic {
	char *name;
	bool physical; /* the device has a parent device ("device" link) */
	char *physical_src;
	char *driver; /* NULL when unknown */
	char *driver_src;
	char *bus; /* subsystem of the first bus parent; NULL when none was found */
	char *bus_src;
	char *devtype; /* DEVTYPE of the uevent, NULL when unset */
	char *devtype_src;
	long long type; /* ARPHRD_* from the "type" attribute, -1 when unreadable */
	char *type_src;
	long long tun_flags; /* "tun_flags" attribute (drivers/net/tun.c), -1 when absent */
	char *tun_src;
	long long ifindex; /* "ifindex" attribute, -1 when unreadable */
};

static void nic_clear(struct nic *n)
{
	free(n->name);
	free(n->physical_src);
	free(n->driver);
	free(n->driver_src);
	free(n->bus);
	free(n->bus_src);
	free(n->devtype);
	free(n->devtype_src);
	free(n->type_src);
	free(n->tun_src);
	*n = (struct nic){ .type = -1, .tun_flags = -1, .ifindex = -1 };
}

struct nic_list {
	struct nic *v;
	size_t n, cap;
	size_t skipped;   /* entries of a tree's /sys/class/net no interface can have */
	char *skipped_src; /* which: "SYS_CLASS_NET: NAME, NAME" (NULL: none) */
};

static void nic_list_clear(struct nic_list *l)
{
	for (size_t i = 0; i < l->n; i++)
		nic_clear(&l->v[i]);
	free(l->v);
	free(l->skipped_src);
	*l = (struct nic_list){ 0 };
}

/* A new zeroed entry at the end of @l, or NULL on ENOMEM. */
static struct nic *nic_list_add(struct nic_list *l)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 8;
		struct nic *v = reallocarray(l->v, cap, sizeof(*v));

		if (!v)
			return NULL;
		l->v = v;
		l->cap = cap;
	}
	l->v[l->n] = (struct nic){ .type = -1, .tun_flags = -1, .ifindex = -1 };
	return &l->v[l->n++];
}

static int nic_cmp(const void *a, const void *b)
{
	return strcmp(((const struct nic *)a)->name, ((const struct nic *)b)->name);
}

/*
 * Interface names become part of fact names (nic.IF.speed), which allow only
 * [A-Za-z0-9_.-]; the kernel accepts more (dev_valid_name() in
 * net/core/dev.c refuses only '/', ':' and white space). Every name the
 * kernel accepts is escaped into one (shared/escape.h, ht_name_escape():
 * "a+b" -> nic.a_2bb.*), which reads back unchanged; none is left out. A
 * directory of a tree's /sys/class/net that no interface could have (too
 * long, a ':' in it) is skipped and counted in nic.skipped.
 */
static bool ifname_usable(const char *s)
{
	return ht_ifname_valid(s);
}

/* nic.IF.@suffix of interface @ifname (as the kernel names it) into @buf. */
static const char *nic_fact(char buf[static NIC_FACT_MAX], const char *ifname, const char *suffix)
{
	ht_instance_fact_to(buf, NIC_FACT_MAX, "nic", ifname, suffix);
	return buf;
}

/* Like strdup() for a possibly NULL string (or one not UTF-8: NULL): 0, or -ENOMEM. */
static int dup_opt(char **dst, const char *s)
{
	/* A fact's text is UTF-8: a name that is not (a tree's bytes) is unknown. */
	if (!s || ht_utf8_invalid(s)) {
		*dst = NULL;
		return 0;
	}
	*dst = strdup(s);
	return *dst ? 0 : -ENOMEM;
}

/* *dst = formatted string; 0 or -ENOMEM. */
static int _printf_(2, 3) fmt(char **dst, const char *format, ...)
{
	va_list ap;
	int r;

	va_start(ap, format);
	r = vasprintf(dst, format, ap);
	va_end(ap);
	if (r < 0) {
		*dst = NULL;
		return -ENOMEM;
	}
	return 0;
}

/*
 * readlink(2) of @path below @root: the basename of the target in *base (NULL when the
 * link is absent) and whether the target lies under a "bus" directory
 * (subsystem links point to /sys/bus/NAME or /sys/class/NAME). Returns 0,
 * a negative errno other than ENOENT, or -ENOMEM.
 */
static int link_basename(const char *root, const char *path, char **base, bool *under_bus)
{
	char target[PATH_MAX];
	const char *slash;
	int len;

	*base = NULL;
	len = ht_root_readlink(root, path, target, sizeof(target));
	if (len < 0)
		return len == -ENOENT || len == -ENOTDIR ? 0 : len;
	if (under_bus)
		*under_bus = strstr(target, "/bus/") != NULL || strncmp(target, "bus/", 4) == 0;
	slash = strrchr(target, '/');
	return dup_opt(base, slash ? slash + 1 : target);
}

/*
 * Driver name from the same ioctl udev's net_driver builtin uses to set
 * ID_NET_DRIVER (systemd src/shared/ethtool-util.c, ethtool_get_driver()).
 * The kernel answers for drivers with get_drvinfo and falls back to the
 * parent device's driver (ethtool_get_drvinfo() in net/ethtool/ioctl.c), so
 * it also names software drivers (veth, bridge, tun) that have no parent.
 * Needs no privilege. *fd is opened on first use. Returns 0, -ENOMEM, or
 * another negative errno when the kernel has no answer.
 */
static int drvinfo_driver(int *fd, const char *ifname, char **driver)
{
	struct ethtool_drvinfo info = { .cmd = ETHTOOL_GDRVINFO };
	struct ifreq ifr = { 0 };

	*driver = NULL;
	if (*fd < 0) {
		*fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		if (*fd < 0)
			return -errno;
	}
	strncpy(ifr.ifr_name, ifname, IFNAMSIZ - 1);
	ifr.ifr_data = (void *)&info;
	if (ioctl(*fd, SIOCETHTOOL, &ifr) < 0)
		return -errno;
	info.driver[sizeof(info.driver) - 1] = '\0';
	if (!info.driver[0])
		return -ENODATA;
	return dup_opt(driver, info.driver);
}

/* ---- live: libudev ---- */

/* The first parent whose subsystem is a bus, not a class; NULL when none. */
static struct udev_device *bus_parent(struct udev_device *d)
{
	for (struct udev_device *p = udev_device_get_parent(d); p; p = udev_device_get_parent(p)) {
		_cleanup_free_ char *link = NULL, *base = NULL;
		bool under_bus = false;

		if (fmt(&link, "%s/subsystem", udev_device_get_syspath(p)) < 0)
			return NULL;
		if (link_basename(NULL, link, &base, &under_bus) == 0 && base && under_bus)
			return p;
	}
	return NULL;
}

static int udev_gather(struct udev_device *d, const char *name, int *sock, struct nic *n)
{
	struct udev_device *parent = udev_device_get_parent(d);
	struct udev_device *bus;
	const char *s;
	long long v;
	int r;

	n->name = strdup(name); /* any byte the kernel allows, UTF-8 or not */
	if (!n->name)
		return -ENOMEM;

	n->physical = parent != NULL;
	if (dup_opt(&n->physical_src, "libudev parent device") < 0)
		return -ENOMEM;
	s = udev_device_get_sysattr_value(d, "ifindex");
	if (s && ht_parse_int64(s, &v) == 0 && v > 0)
		n->ifindex = v;

	/*
	 * udev's database is keyed by ifindex ("n4"), so it only describes this
	 * device when it was written for this network namespace: a netns that
	 * sees the host's /run/udev would read another device's record.
	 */
	s = udev_device_get_property_value(d, "ID_NET_DRIVER");
	if (s && *s) {
		if (dup_opt(&n->driver, s) < 0 ||
		    dup_opt(&n->driver_src, "libudev ID_NET_DRIVER") < 0)
			return -ENOMEM;
	} else if (parent && (s = udev_device_get_driver(parent))) {
		if (dup_opt(&n->driver, s) < 0 ||
		    fmt(&n->driver_src, "libudev driver of parent %s",
		        udev_device_get_sysname(parent)) < 0)
			return -ENOMEM;
	} else {
		/* No udev database (no udevd, a container): ask the kernel as udevd would. */
		r = drvinfo_driver(sock, name, &n->driver);
		if (r == -ENOMEM)
			return r;
		if (r < 0)
			r = fmt(&n->driver_src, "libudev: no ID_NET_DRIVER, no parent driver; "
			        "SIOCETHTOOL ETHTOOL_GDRVINFO: %s", strerrordesc_np(-r));
		else
			r = dup_opt(&n->driver_src, "SIOCETHTOOL ETHTOOL_GDRVINFO");
		if (r < 0)
			return r;
	}

	bus = bus_parent(d);
	if (bus) {
		if (dup_opt(&n->bus, udev_device_get_subsystem(bus)) < 0 ||
		    fmt(&n->bus_src, "libudev subsystem of parent %s",
		        udev_device_get_sysname(bus)) < 0)
			return -ENOMEM;
	} else if (parent && dup_opt(&n->bus_src, "libudev: no parent on a bus") < 0) {
		return -ENOMEM;
	}

	if (dup_opt(&n->devtype, udev_device_get_devtype(d)) < 0 ||
	    dup_opt(&n->devtype_src, "libudev DEVTYPE") < 0)
		return -ENOMEM;

	s = udev_device_get_sysattr_value(d, "type");
	if (s && ht_parse_int64(s, &v) == 0)
		n->type = v;
	if (dup_opt(&n->type_src, "libudev attribute type") < 0)
		return -ENOMEM;
	s = udev_device_get_sysattr_value(d, "tun_flags");
	if (s) {
		char *end;

		errno = 0;
		v = strtoll(s, &end, 0);
		if (errno == 0 && end != s && v >= 0)
			n->tun_flags = v;
	}
	return dup_opt(&n->tun_src, "libudev attribute tun_flags");
}

/* Interfaces but lo, from libudev. On failure other than ENOMEM, *why says where. */
static int udev_scan(struct nic_list *l, const char **why)
{
	struct udev *udev = NULL;
	struct udev_enumerate *e = NULL;
	struct udev_list_entry *entry;
	_cleanup_close_ int sock = -1;
	int r;

	errno = 0;
	udev = udev_new();
	if (!udev) {
		*why = "udev_new";
		return errno ? -errno : -ENOMEM;
	}
	e = udev_enumerate_new(udev);
	if (!e) {
		r = errno ? -errno : -ENOMEM;
		*why = "udev_enumerate_new";
		goto out;
	}
	r = udev_enumerate_add_match_subsystem(e, "net");
	if (r >= 0)
		r = udev_enumerate_scan_devices(e);
	if (r < 0) {
		*why = "udev_enumerate_scan_devices";
		goto out;
	}
	r = 0;
	udev_list_entry_foreach(entry, udev_enumerate_get_list_entry(e)) {
		struct udev_device *d;
		const char *name;
		struct nic *n;

		d = udev_device_new_from_syspath(udev, udev_list_entry_get_name(entry));
		if (!d) {
			if (errno == ENOMEM) {
				r = -ENOMEM;
				break;
			}
			continue; /* gone since the scan */
		}
		name = udev_device_get_sysname(d);
		if (!name || strcmp(name, "lo") == 0 || !ifname_usable(name)) {
			udev_device_unref(d);
			continue;
		}
		n = nic_list_add(l);
		r = n ? udev_gather(d, name, &sock, n) : -ENOMEM;
		udev_device_unref(d);
		if (r < 0)
			break;
	}
out:
	udev_enumerate_unref(e);
	udev_unref(udev);
	return r;
}

/* ---- under --root: ROOT/sys/class/net ---- */

/* "DEVTYPE=" line of uevent text; NULL when absent. 0 or -ENOMEM. */
static int uevent_devtype(const char *text, char **out)
{
	static const char key[] = "DEVTYPE=";

	const char *p = text;

	*out = NULL;
	while (strncmp(p, key, strlen(key)) != 0) {
		p = strchr(p, '\n');
		if (!p)
			return 0;
		p++;
	}
	p += strlen(key);
	if (!*p || *p == '\n')
		return 0;
	{
		_cleanup_free_ char *v = strndup(p, strcspn(p, "\n"));

		return v ? dup_opt(out, v) : -ENOMEM;
	}
}

static int sysfs_gather(const char *root, const char *name, struct nic *n)
{
	_cleanup_free_ char *base = NULL, *path = NULL, *text = NULL;
	bool under_bus = false;
	struct stat st;
	long long v;
	int r;

	n->name = strdup(name); /* any byte the kernel allows, UTF-8 or not */
	if (!n->name || fmt(&base, SYS_CLASS_NET "/%s", name) < 0)
		return -ENOMEM;

	if (fmt(&n->physical_src, "%s/device", base) < 0)
		return -ENOMEM;
	n->physical = ht_root_stat(root, n->physical_src, true, &st) == 0;

	if (fmt(&n->driver_src, "%s/device/driver", base) < 0)
		return -ENOMEM;
	r = link_basename(root, n->driver_src, &n->driver, NULL);
	if (r == -ENOMEM)
		return r;

	if (fmt(&n->bus_src, "%s/device/subsystem", base) < 0)
		return -ENOMEM;
	r = link_basename(root, n->bus_src, &n->bus, &under_bus);
	if (r == -ENOMEM)
		return r;
	if (n->bus && !under_bus) {
		free(n->bus);
		n->bus = NULL;
	}

	if (fmt(&n->devtype_src, "%s/uevent DEVTYPE", base) < 0 || fmt(&path, "%s/uevent", base) < 0)
		return -ENOMEM;
	r = ht_read_file(root, path, &text);
	if (r == -ENOMEM)
		return r;
	if (r >= 0 && uevent_devtype(text, &n->devtype) < 0)
		return -ENOMEM;

	free(path);
	free(text);
	path = text = NULL;
	if (fmt(&n->type_src, "%s/type", base) < 0)
		return -ENOMEM;
	r = ht_read_file(root, n->type_src, &text);
	if (r == -ENOMEM)
		return r;
	if (r >= 0 && ht_parse_int64(text, &v) == 0)
		n->type = v;

	free(text);
	text = NULL;
	if (fmt(&n->tun_src, "%s/tun_flags", base) < 0)
		return -ENOMEM;
	r = ht_read_file(root, n->tun_src, &text);
	if (r == -ENOMEM)
		return r;
	if (r >= 0) {
		char *end;

		errno = 0;
		v = strtoll(text, &end, 0);
		if (errno == 0 && end != text && v >= 0)
			n->tun_flags = v;
	}
	return 0;
}

/* Counts @name, a directory of a tree's /sys/class/net no interface can have, in @l. */
static int skip_note(struct nic_list *l, const char *name)
{
	_cleanup_free_ char *shown = NULL;
	char *src;

	/* The first 8 named: the count says the rest. */
	if (l->skipped++ >= 8)
		return 0;
	shown = ht_escape(name, HT_ESCAPE_CONTROL);
	if (!shown || asprintf(&src, "%s%s%s", l->skipped_src ? l->skipped_src : SYS_CLASS_NET ": ",
	                       l->skipped_src ? ", " : "", shown) < 0)
		return -ENOMEM;
	free(l->skipped_src);
	l->skipped_src = src;
	return 0;
}

static int sysfs_scan(const char *root, struct nic_list *l, int *err)
{
	struct dirent *de;
	DIR *d;
	int r = 0;

	d = ht_root_opendir(root, SYS_CLASS_NET);
	if (!d) {
		*err = errno;
		return errno == ENOMEM ? -ENOMEM : 0;
	}
	while ((de = readdir(d))) {
		struct nic *n;

		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0 ||
		    strcmp(de->d_name, "lo") == 0)
			continue;
		/*
		 * An interface is a directory (a link to its device's, in sysfs); a
		 * regular file, a FIFO or a device node in a tree is none.
		 */
		if (!ifname_usable(de->d_name) ||
		    (de->d_type != DT_DIR && de->d_type != DT_LNK && de->d_type != DT_UNKNOWN)) {
			r = skip_note(l, de->d_name);
			if (r < 0)
				break;
			continue;
		}
		n = nic_list_add(l);
		r = n ? sysfs_gather(root, de->d_name, n) : -ENOMEM;
		if (r < 0)
			break;
	}
	closedir(d);
	return r;
}

/* ARPHRD_* names (include/uapi/linux/if_arp.h) for link types that are a kind in themselves. */
static const char *arphrd_kind(long long type)
{
	static const struct {
		long long type;
		const char *kind;
	} kinds[] = {
		{ ARPHRD_ETHER, "ethernet" }, { ARPHRD_INFINIBAND, "infiniband" },
		{ ARPHRD_CAN, "can" },        { ARPHRD_PPP, "ppp" },
		{ ARPHRD_RAWIP, "rawip" },    { ARPHRD_TUNNEL, "ipip" },
		{ ARPHRD_TUNNEL6, "ip6tnl" }, { ARPHRD_SIT, "sit" },
		{ ARPHRD_IPGRE, "gre" },      { ARPHRD_IP6GRE, "ip6gre" },
	};

	for (size_t i = 0; i < ARRAY_SIZE(kinds); i++)
		if (kinds[i].type == type)
			return kinds[i].kind;
	return NULL;
}

/*
 * The kernel names the kind of most stacked and virtual devices in DEVTYPE
 * (SET_NETDEV_DEVTYPE: bridge, bond, vlan, wlan, wireguard, ...). veth, tun,
 * dummy, ifb, macvlan have none; their driver name is the kind. A device
 * with a parent has the kind of its link layer (ethernet, infiniband).
 * Sets *kind (static or n's storage) and *source, or leaves them NULL.
 */
static int nic_kind(const struct nic *n, const char **kind, char **source)
{
	*kind = NULL;
	*source = NULL;
	if (n->devtype) {
		*kind = n->devtype;
		return dup_opt(source, n->devtype_src);
	}
	if (n->tun_flags >= 0) {
		*kind = n->tun_flags & IFF_TAP ? "tap" : "tun";
		return dup_opt(source, n->tun_src);
	}
	if (n->physical && arphrd_kind(n->type)) {
		*kind = arphrd_kind(n->type);
		return fmt(source, "%s %lld and %s", n->type_src, n->type, n->physical_src);
	}
	if (!n->physical && n->driver) {
		char name[NIC_FACT_MAX];

		/* The two whose driver name is not their kind, should DEVTYPE be missing. */
		if (strcmp(n->driver, "802.1Q VLAN Support") == 0) /* net/8021q/vlan.h */
			*kind = "vlan";
		else if (strcmp(n->driver, "bonding") == 0) /* drivers/net/bonding */
			*kind = "bond";
		else
			*kind = n->driver;
		return fmt(source, "%s", nic_fact(name, n->name, "driver"));
	}
	if (n->type != ARPHRD_ETHER && arphrd_kind(n->type)) {
		*kind = arphrd_kind(n->type);
		return dup_opt(source, n->type_src);
	}
	return fmt(source, "no DEVTYPE, driver or known link type (%s)", n->type_src);
}

static int nic_emit(struct ht_facts *f, const struct nic *n)
{
	_cleanup_free_ char *kind_src = NULL;
	const char *kind;
	char name[NIC_FACT_MAX];
	int r;

	nic_fact(name, n->name, "physical");
	r = ht_facts_set_bool(f, name, n->physical, n->physical_src);
	if (r < 0)
		return r;

	nic_fact(name, n->name, "driver");
	if (n->driver)
		r = ht_facts_set_str(f, name, n->driver, n->driver_src);
	else
		r = ht_facts_set_unavailable(f, name, ENOENT, NULL, n->driver_src);
	if (r < 0)
		return r;

	nic_fact(name, n->name, "bus");
	if (!n->physical)
		r = ht_facts_set_str(f, name, "none", n->physical_src);
	else if (n->bus)
		r = ht_facts_set_str(f, name, n->bus, n->bus_src);
	else
		r = ht_facts_set_unavailable(f, name, ENOENT, NULL, n->bus_src);
	if (r < 0)
		return r;

	nic_fact(name, n->name, "kind");
	r = nic_kind(n, &kind, &kind_src);
	if (r < 0)
		return r;
	if (kind)
		return ht_facts_set_str(f, name, kind, kind_src);
	return ht_facts_set_unavailable(f, name, ENODATA, NULL, kind_src);
}

/*
 * nic.IF.mac from /sys/class/net/IF/address (net/core/net-sysfs.c), what a
 * systemd .link file matches on with MACAddress=: the name may change at boot.
 */
static int mac_emit(struct ht_facts *f, const char *root, const char *ifname)
{
	_cleanup_free_ char *path = NULL, *text = NULL, *name = NULL;
	int r;

	if (fmt(&path, SYS_CLASS_NET "/%s/address", ifname) < 0 ||
	    !(name = ht_instance_fact("nic", ifname, "mac")))
		return -ENOMEM;
	r = ht_read_file(root, path, &text);
	if (r == -ENOMEM)
		return r;
	if (r < 0)
		return ht_facts_set_unavailable(f, name, -r, NULL, path);
	/* 6 octets "xx:xx:xx:xx:xx:xx"; MAC-less devices (tun) have an empty one. */
	if (strlen(text) != 17)
		return ht_facts_set_unavailable(f, name, ENODATA, NULL, path);
	return ht_facts_set_str(f, name, text, path);
}

/*
 * nic.list: the names in @l (sorted), escaped (ht_name_escape()),
 * space-separated; "" when there are none. nic.skipped: how many entries
 * were left out, and which.
 */
static int list_emit(struct ht_facts *f, const struct nic_list *l, const char *source)
{
	_cleanup_free_ char *s = NULL;
	size_t len = 1, pos = 0;
	int r;

	for (size_t i = 0; i < l->n; i++)
		len += HT_NAME_ESCAPED_MAX(strlen(l->v[i].name)) + 1;
	s = malloc(len);
	if (!s)
		return -ENOMEM;
	s[0] = '\0';
	for (size_t i = 0; i < l->n; i++) {
		_cleanup_free_ char *esc = ht_name_escape(l->v[i].name);

		if (!esc)
			return -ENOMEM;
		pos += (size_t)sprintf(s + pos, "%s%s", i ? " " : "", esc);
	}
	r = ht_facts_set_str(f, "nic.list", s, source);
	if (r >= 0)
		r = ht_facts_set_int(f, "nic.skipped", (int64_t)l->skipped, "interfaces",
		                     l->skipped_src ? l->skipped_src : source);
	return r;
}

/* nic.list and nic.skipped unavailable with @err (> 0), @source saying why. */
static int list_unavailable(struct ht_facts *f, int err, const char *source)
{
	int r = ht_facts_set_unavailable(f, "nic.list", err, NULL, source);

	return r < 0 ? r : ht_facts_set_unavailable(f, "nic.skipped", err, "interfaces", source);
}

/*
 * Whether @l, from sysfs, is this network namespace's: the same names with
 * the same ifindex as the kernel's list for the caller's namespace
 * (if_nameindex(3), an RTM_GETLINK dump). sysfs shows the devices of the
 * namespace that mounted it: after `unshare -n` or `nsenter -n` without a
 * sysfs of its own, they are another namespace's, and their names would be
 * paired with this namespace's counters. @ni is the kernel's list.
 */
static bool list_is_this_netns(const struct nic_list *l, const struct if_nameindex *ni)
{
	size_t here = 0;
	bool same = true;

	for (const struct if_nameindex *p = ni; same && p->if_index; p++) {
		size_t i;

		if (strcmp(p->if_name, "lo") == 0 || !ifname_usable(p->if_name))
			continue;
		here++;
		for (i = 0; i < l->n && strcmp(l->v[i].name, p->if_name) != 0; i++)
			;
		if (i == l->n || (l->v[i].ifindex > 0 && l->v[i].ifindex != (long long)p->if_index))
			same = false;
	}
	return same && here == l->n;
}

/*
 * sysfs is another namespace's: nic.list from the kernel's list for this
 * one (its counters, channels and features come over netlink, which is
 * this namespace's, and its driver's name over SIOCETHTOOL), and what only
 * sysfs tells (bus, kind, physical, MAC) unavailable with EREMOTE, saying
 * why.
 */
static int netns_only_emit(struct ht_facts *f, const struct if_nameindex *ni)
{
	static const char why[] = "/sys/class/net shows the interfaces of another network "
	                          "namespace (this one has no sysfs of its own: mount one, "
	                          "as ip netns exec does)";
	static const char *const from_sysfs[] = { "physical", "bus", "kind", "mac" };
	_cleanup_(nic_list_clear) struct nic_list l = { 0 };
	_cleanup_close_ int sock = -1;
	char name[NIC_FACT_MAX];
	int r = 0;

	for (const struct if_nameindex *p = ni; r >= 0 && p->if_index; p++) {
		struct nic *n;

		if (strcmp(p->if_name, "lo") == 0 || !ifname_usable(p->if_name))
			continue;
		n = nic_list_add(&l);
		r = n && (n->name = strdup(p->if_name)) ? 0 : -ENOMEM;
	}
	if (r < 0)
		return r;
	if (l.n > 1)
		qsort(l.v, l.n, sizeof(l.v[0]), nic_cmp);
	for (size_t i = 0; i < l.n; i++) {
		_cleanup_free_ char *driver = NULL;

		for (size_t k = 0; k < ARRAY_SIZE(from_sysfs); k++) {
			nic_fact(name, l.v[i].name, from_sysfs[k]);
			r = ht_facts_set_unavailable(f, name, EREMOTE, NULL, why);
			if (r < 0)
				return r;
		}
		/* The driver's name over SIOCETHTOOL is this namespace's device's (veth, bridge). */
		nic_fact(name, l.v[i].name, "driver");
		r = drvinfo_driver(&sock, l.v[i].name, &driver);
		if (r == -ENOMEM)
			return r;
		r = r >= 0 ? ht_facts_set_str(f, name, driver, "SIOCETHTOOL ETHTOOL_GDRVINFO")
		           : ht_facts_set_unavailable(f, name, -r, NULL, "SIOCETHTOOL ETHTOOL_GDRVINFO");
		if (r < 0)
			return r;
	}
	return list_emit(f, &l, "if_nameindex(3), this network namespace's");
}

int ht_collect_udev(struct ht_facts *f, const char *root)
{
	_cleanup_(nic_list_clear) struct nic_list l = { 0 };
	_cleanup_free_ char *why_src = NULL;
	const char *source;
	int r, err = 0;

	if (ht_root_is_live(root)) {
		const char *why = NULL;

		struct if_nameindex *ni = NULL;
		bool same = true;

		source = "libudev net subsystem";
		/* A second scan when the lists differ: a device may come or go between the two. */
		for (int tries = 0; tries < 2; tries++) {
			nic_list_clear(&l);
			if (ni)
				if_freenameindex(ni);
			ni = NULL;
			r = udev_scan(&l, &why);
			if (r == -ENOMEM)
				return r;
			if (r < 0) {
				if (fmt(&why_src, "libudev net subsystem: %s", why) < 0)
					return -ENOMEM;
				return list_unavailable(f, -r, why_src);
			}
			/* Without the kernel's list (not ENOMEM), sysfs's stands unchecked. */
			ni = if_nameindex();
			if (!ni && errno == ENOMEM)
				return -ENOMEM;
			same = !ni || list_is_this_netns(&l, ni);
			if (same)
				break;
		}
		if (!same) {
			r = netns_only_emit(f, ni);
			if_freenameindex(ni);
			return r;
		}
		if (ni)
			if_freenameindex(ni);
	} else {
		source = SYS_CLASS_NET;
		r = sysfs_scan(root, &l, &err);
		if (r < 0)
			return r;
		if (err)
			return list_unavailable(f, err, source);
	}

	if (l.n > 1)
		qsort(l.v, l.n, sizeof(l.v[0]), nic_cmp);
	for (size_t i = 0; i < l.n; i++) {
		r = nic_emit(f, &l.v[i]);
		if (r >= 0)
			r = mac_emit(f, root, l.v[i].name);
		if (r < 0)
			return r;
	}
	return list_emit(f, &l, source);
}
