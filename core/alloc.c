/*
 * alloc.c: the never-NULL allocators (see alloc.h for why they abort).
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"

static void *check(void *p)
{
	if (!p)
		abort();
	return p;
}

void *gc_xmalloc(size_t size)
{
	return check(malloc(size ? size : 1));
}

void *gc_xcalloc(size_t nmemb, size_t size)
{
	return check(calloc(nmemb ? nmemb : 1, size ? size : 1));
}

void *gc_xrealloc(void *ptr, size_t size)
{
	return check(realloc(ptr, size ? size : 1));
}

void *gc_xreallocarray(void *ptr, size_t nmemb, size_t size)
{
	if (size && nmemb > SIZE_MAX / size)
		abort();
	return gc_xrealloc(ptr, nmemb * size);
}

char *gc_xstrdup(const char *s)
{
	return gc_xstrndup(s, strlen(s));
}

char *gc_xstrndup(const char *s, size_t n)
{
	size_t len = strnlen(s, n);
	char *p = gc_xmalloc(len + 1);

	memcpy(p, s, len);
	p[len] = '\0';
	return p;
}

char *gc_xasprintf(const char *fmt, ...)
{
	va_list ap;
	int n;
	char *p;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		abort();
	p = gc_xmalloc((size_t)n + 1);
	va_start(ap, fmt);
	vsnprintf(p, (size_t)n + 1, fmt, ap);
	va_end(ap);
	return p;
}
