/*
 * alloc.h: allocation wrappers that never return NULL.
 *
 * On Linux with overcommit, a failed malloc means the process is already lost; checking
 * every small allocation multiplies untested error paths. So, like git's xmalloc, these
 * abort() on failure (abort, not exit: no atexit handlers run, a core is left). Sizes that
 * come from remote or user data are capped by their callers (see buf.h) before they get
 * here, so a hostile input cannot reach this abort.
 */
#ifndef GC_ALLOC_H
#define GC_ALLOC_H

#include <stddef.h>

void *gc_xmalloc(size_t size);
void *gc_xcalloc(size_t nmemb, size_t size);
void *gc_xrealloc(void *ptr, size_t size);
/* Grows an array of nmemb elements to at least need elements; checks the overflow. */
void *gc_xreallocarray(void *ptr, size_t nmemb, size_t size);
char *gc_xstrdup(const char *s);
char *gc_xstrndup(const char *s, size_t n);
/* printf into a new string. */
char *gc_xasprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Grows *arr (of *alloc elements of elsize) so that need elements fit. */
#define GC_ALLOC_GROW(arr, need, alloc)                                                 \
	do {                                                                            \
		if ((need) > (alloc)) {                                                 \
			size_t gc_new_alloc_ = (alloc) ? (alloc)*2 : 8;                 \
			if (gc_new_alloc_ < (need))                                     \
				gc_new_alloc_ = (need);                                 \
			(arr) = gc_xreallocarray((arr), gc_new_alloc_, sizeof(*(arr))); \
			(alloc) = gc_new_alloc_;                                        \
		}                                                                       \
	} while (0)

#endif
