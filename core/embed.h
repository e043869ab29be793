/*
 * embed.h: files embedded into the binary at build time (cmake/embed.cmake).
 * A table ends with an entry whose name is NULL. Data is NUL-terminated.
 */
#ifndef GC_EMBED_H
#define GC_EMBED_H

#include <stddef.h>

struct gc_embedded {
	const char *name;
	const char *data;
	size_t len;
};

/* The entry named name in table, or NULL. */
const struct gc_embedded *gc_embedded_find(const struct gc_embedded *table, const char *name);

#endif
