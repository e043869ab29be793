/*
 * embed.c: looking up files embedded at build time.
 */
#include <string.h>

#include "core/embed.h"

const struct gc_embedded *gc_embedded_find(const struct gc_embedded *table, const char *name)
{
	for (; table && table->name; table++)
		if (strcmp(table->name, name) == 0)
			return table;
	return NULL;
}
