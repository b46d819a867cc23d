/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stddef.h>

/*
 * Optional libraries loaded with dlopen(3) the first time a collector needs
 * one, as systemd loads its optional libraries (src/shared/dlopen-util.h,
 * dlopen_many_sym_or_warn()): a run that needs none of them pays nothing
 * for them, neither the relocations at start-up (Debian 12's libkmod brings
 * libcrypto, libzstd and liblzma: about 1 ms) nor their pages.
 *
 * Each library has one table of symbols; each symbol goes into a pointer
 * sym_NAME typed from the library's own header (typeof(NAME) *), so that a
 * call through it is checked by the compiler as a direct call would be:
 *
 *	HT_DLSYM_DECLARE(kmod_new);
 *	HT_DLSYM_DECLARE(kmod_unref);
 *	static const struct ht_dlsym kmod_syms[] = { HT_DLSYM(kmod_new), HT_DLSYM(kmod_unref) };
 *	static struct ht_dlib libkmod = HT_DLIB("libkmod.so.2", kmod_syms);
 *	...
 *	r = ht_dlopen(&libkmod);   (0: call sym_kmod_new(); < 0: ht_dlopen_error(&libkmod))
 *
 * Not thread-safe: a library is loaded from one thread (a collection runs
 * on one).
 */

/* One symbol of a library: where its address goes and its name. */
struct ht_dlsym {
	void *slot;       /* &sym_NAME, a function pointer (HT_DLSYM()) */
	const char *name; /* "NAME", as dlsym(3) looks it up (the default version) */
};

/*
 * HT_DLSYM_DECLARE(NAME) - a file-local pointer sym_NAME of NAME's type,
 * NULL until its library is loaded. NAME must be declared by a header.
 */
#define HT_DLSYM_DECLARE(name) static __typeof__(name) *sym_##name

/*
 * HT_DLSYM(NAME) - the table entry that fills sym_NAME. A sym_NAME of
 * another type than NAME's is a compile error (a pointer type mismatch in
 * the conditional, -Werror); NAME itself is not referenced, so nothing
 * links against its library.
 */
#define HT_DLSYM(name) \
	{ (void *)(1 ? &sym_##name : (__typeof__(name) **)NULL), #name }

/*
 * struct ht_dlib - one library and its symbols. @soname, @syms and @nsyms
 * are set once (HT_DLIB()); the rest is the loading's state, zero until
 * ht_dlopen() tries. A library that loaded stays loaded until exit
 * (RTLD_NODELETE: libcrypto registers an atexit handler).
 */
struct ht_dlib {
	const char *soname;          /* the ABI's name: "libkmod.so.2", "libcrypto.so.3" */
	const struct ht_dlsym *syms; /* every symbol the callers use */
	size_t nsyms;
	int state;                   /* 0 not tried, 1 loaded, or the failure's negative errno */
	void *handle;                /* dlopen(3)'s handle once loaded */
	char why[256];               /* why it failed: names the library (and symbol) */
};

/* HT_DLIB(SONAME, SYMS) - the initializer of a struct ht_dlib for the table SYMS. */
#define HT_DLIB(so, table) \
	{ .soname = (so), .syms = (table), .nsyms = sizeof(table) / sizeof((table)[0]) }

/*
 * ht_dlopen - loads @lib (dlopen(3) with RTLD_NOW | RTLD_NODELETE) and
 * resolves every symbol of its table into its sym_ pointer, all or none:
 * after a failure every pointer is NULL again. Only the first call does
 * it; later calls return the first call's result.
 * Returns 0; -ENOENT when the library cannot be loaded (not installed, or
 * dlopen refused the file); -ELIBACC when it loaded but lacks a symbol (a
 * version without it); -EINVAL for a NULL @lib or one without a soname.
 * ht_dlopen_error() then says why.
 */
int ht_dlopen(struct ht_dlib *lib);

/*
 * ht_dlopen_error - why @lib could not be loaded, one printable ASCII line
 * that names the library, and the symbol when one was missing
 * ("libkmod.so.2: cannot open shared object file: No such file or
 * directory", "libcrypto.so.3: undefined symbol: EVP_aes_128_gcm"); "" when
 * it loaded or was not tried. Valid as long as @lib.
 */
const char *ht_dlopen_error(const struct ht_dlib *lib);
