/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "shared/dlopen.h"

/* The slots are function pointers; dlsym(3) gives a void *, the same size on every Linux ABI. */
_Static_assert(sizeof(void *) == sizeof(void (*)(void)), "function pointers of another size");

/*
 * Records why @lib failed: @msg (dlerror()'s text, or NULL) made printable
 * ASCII, with the soname in front when the text does not name it, so that
 * a fact's source says which library.
 */
static int failed(struct ht_dlib *lib, int err, const char *msg)
{
	if (!msg)
		msg = "no reason given";
	if (strstr(msg, lib->soname))
		snprintf(lib->why, sizeof(lib->why), "%s", msg);
	else
		snprintf(lib->why, sizeof(lib->why), "%s: %s", lib->soname, msg);
	/* A facts source holds no control bytes and must be UTF-8: keep ASCII only. */
	for (char *p = lib->why; *p; p++)
		if ((unsigned char)*p < 0x20 || (unsigned char)*p > 0x7e)
			*p = '?';
	lib->state = err;
	return err;
}

/* Every symbol of @lib into its slot; on a missing one all slots are NULL again. */
static int resolve(struct ht_dlib *lib)
{
	for (size_t i = 0; i < lib->nsyms; i++) {
		void *p;

		dlerror();
		p = dlsym(lib->handle, lib->syms[i].name);
		if (!p) {
			const char *msg = dlerror();
			char what[128];

			for (size_t j = 0; j < i; j++)
				memset(lib->syms[j].slot, 0, sizeof(void *));
			/* dlerror() names the file and the symbol; a NULL symbol value only the name. */
			if (msg)
				return failed(lib, -ELIBACC, msg);
			snprintf(what, sizeof(what), "%s: symbol %s is NULL", lib->soname,
			         lib->syms[i].name);
			return failed(lib, -ELIBACC, what);
		}
		/* A function pointer, stored as the sym_ variable's own type holds it. */
		memcpy(lib->syms[i].slot, &p, sizeof(p));
	}
	return 0;
}

int ht_dlopen(struct ht_dlib *lib)
{
	int r;

	if (!lib || !lib->soname)
		return -EINVAL;
	if (lib->state)
		return lib->state < 0 ? lib->state : 0;
	lib->why[0] = '\0';
	lib->handle = dlopen(lib->soname, RTLD_NOW | RTLD_NODELETE);
	if (!lib->handle)
		return failed(lib, -ENOENT, dlerror());
	r = resolve(lib);
	if (r < 0) {
		dlclose(lib->handle);
		lib->handle = NULL;
		return r;
	}
	lib->state = 1;
	return 0;
}

const char *ht_dlopen_error(const struct ht_dlib *lib)
{
	return lib && lib->state < 0 ? lib->why : "";
}
