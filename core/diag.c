/*
 * diag.c: the located-diagnostics list (see diag.h).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "core/alloc.h"
#include "core/diag.h"

void gc_diags_init(struct gc_diags *d, const char *file)
{
	d->file = gc_xstrdup(file ? file : "-");
	d->items = NULL;
	d->nr = d->alloc = 0;
}

void gc_diags_release(struct gc_diags *d)
{
	if (!d)
		return;
	for (size_t i = 0; i < d->nr; i++) {
		free(d->items[i].path);
		free(d->items[i].message);
	}
	free(d->items);
	free(d->file);
	d->items = NULL;
	d->file = NULL;
	d->nr = d->alloc = 0;
}

void gc_diag_add(struct gc_diags *d, unsigned line, unsigned col, const char *path, const char *fmt,
		 ...)
{
	struct gc_diag *g;
	va_list ap;
	char msg[1024];

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	GC_ALLOC_GROW(d->items, d->nr + 1, d->alloc);
	g = &d->items[d->nr++];
	g->line = line;
	g->col = col;
	g->path = gc_xstrdup(path ? path : "");
	g->message = gc_xstrdup(msg);
}

void gc_diags_sort(struct gc_diags *d)
{
	/* insertion sort: stable, and diagnostic lists are short */
	for (size_t i = 1; i < d->nr; i++) {
		struct gc_diag t = d->items[i];
		size_t j = i;

		while (j > 0 &&
		       (d->items[j - 1].line > t.line ||
			(d->items[j - 1].line == t.line && d->items[j - 1].col > t.col))) {
			d->items[j] = d->items[j - 1];
			j--;
		}
		d->items[j] = t;
	}
}
