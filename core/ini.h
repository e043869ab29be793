/*
 * ini.h: a small INI reader, in the dialect of the cloud CLIs' profile files, with nothing
 * specific to one cloud in it; the dialect is in docs/internals/credentials.md ("The
 * files"). Files are capped at GC_INI_MAX_FILE bytes: they are user input, read on every
 * run.
 *
 * Life cycle: gc_ini_init -> gc_ini_parse or gc_ini_load_file -> lookups ->
 * gc_ini_release. Lookups return pointers into the struct, valid until it is released.
 */
#ifndef GC_INI_H
#define GC_INI_H

#include <stdbool.h>
#include <stddef.h>

#include "core/error.h"

#define GC_INI_MAX_FILE ((size_t)1 << 20) /* 1 MiB: a shared config file is a few KiB */

struct gc_ini_entry {
	char *key;
	char *value;
	unsigned line;
};

struct gc_ini_section {
	char *name;
	struct gc_ini_entry *entries; /* in file order; repeated keys kept, last wins */
	size_t n, alloc;
	unsigned line; /* where the section first started */
};

struct gc_ini {
	struct gc_ini_section *sections;
	size_t n, alloc;
};

void gc_ini_init(struct gc_ini *ini);
void gc_ini_release(struct gc_ini *ini);

/*
 * Parses text[0..len) and adds its sections to ini (merging into sections it already
 * has). name is how messages refer to the text ("~/.config/tool/config"). On failure ini is
 * left as it was and err (GC_EINVALID) says "NAME:LINE: what is wrong".
 */
int gc_ini_parse(struct gc_ini *ini, const char *name, const char *text, size_t len,
		 struct gc_error *err);

/*
 * Reads and parses the file at path; name is used in messages (NULL: the path). A file
 * that does not exist is not an error: *found is set to false and ini stays empty.
 * Fails with GC_EIO (unreadable, not a regular file), GC_ETOOBIG (over the cap) or
 * GC_EINVALID (a syntax error).
 */
int gc_ini_load_file(struct gc_ini *ini, const char *path, const char *name, bool *found,
		     struct gc_error *err);

/* The section named exactly name, or NULL. */
const struct gc_ini_section *gc_ini_section(const struct gc_ini *ini, const char *name);

/* The value of key (any case) in s, the last one when repeated; NULL when absent or
 * when s is NULL. */
const char *gc_ini_get(const struct gc_ini_section *s, const char *key);

#endif
