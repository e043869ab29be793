/*
 * diag.h: a list of located diagnostics (FILE:LINE:COL: error: MESSAGE).
 *
 * The spec validator reports every problem it finds, not just the first, so it collects
 * them here. Each entry owns its strings. Life cycle: gc_diags_init -> gc_diag_add... ->
 * gc_diags_release. Lines and columns are 1-based; 0 means "the whole file".
 */
#ifndef GC_DIAG_H
#define GC_DIAG_H

#include <stddef.h>

struct gc_diag {
	unsigned line;
	unsigned col;
	char *path;    /* where in the document: "node_groups[0].count", "" for the root */
	char *message; /* lowercase, no trailing full stop, names quoted */
};

struct gc_diags {
	char *file; /* the file name the diagnostics refer to */
	struct gc_diag *items;
	size_t nr, alloc;
};

void gc_diags_init(struct gc_diags *d, const char *file);
void gc_diags_release(struct gc_diags *d);
void gc_diag_add(struct gc_diags *d, unsigned line, unsigned col, const char *path, const char *fmt,
		 ...) __attribute__((format(printf, 5, 6)));
/* Sorts by line then column, keeping the order of equal positions. */
void gc_diags_sort(struct gc_diags *d);

#endif
