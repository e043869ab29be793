/*
 * buf.h: the one growable byte buffer, with a size cap.
 *
 * Remote data (API responses, SSH output) and user files are input: every buffer that
 * holds them has a cap, and an append that would pass it fails instead of growing
 * (gc_buf_read_file reads a small file whole under the same cap).
 * Invariants: `data` is never NULL and is always NUL-terminated at `len` (so text can be
 * used as a C string), `len <= max`. Life cycle: gc_buf_init (or GC_BUF_INIT) ->
 * appends -> gc_buf_release, or gc_buf_detach to hand the bytes to the caller.
 */
#ifndef GC_BUF_H
#define GC_BUF_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

struct gc_error;

#define GC_BUF_DEFAULT_MAX ((size_t)64 << 20) /* 64 MiB */

struct gc_buf {
	char *data;
	size_t len;
	size_t alloc; /* 0 while data points at the shared empty string */
	size_t max;   /* appends that would make len exceed this fail */
};

extern char gc_buf_empty[1];
#define GC_BUF_INIT(cap)                  \
	{                                 \
		gc_buf_empty, 0, 0, (cap) \
	}

void gc_buf_init(struct gc_buf *b, size_t max);
void gc_buf_release(struct gc_buf *b);
void gc_buf_reset(struct gc_buf *b); /* len = 0, keeps the memory */

/* Appends; each returns 0, or -1 (nothing appended) when the cap would be passed. */
int gc_buf_add(struct gc_buf *b, const void *data, size_t len);
int gc_buf_addstr(struct gc_buf *b, const char *s);
int gc_buf_addch(struct gc_buf *b, char c);
int gc_buf_addf(struct gc_buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int gc_buf_vaddf(struct gc_buf *b, const char *fmt, va_list ap)
	__attribute__((format(printf, 2, 0)));

/* Makes room for len more bytes, exactly that much when it must grow (a size known
 * beforehand, such as a Content-Length: appends then neither copy nor double past it);
 * -1 when the cap would be passed. */
int gc_buf_reserve(struct gc_buf *b, size_t len);

/* Hands the bytes (NUL-terminated, always heap memory) to the caller and resets b. */
char *gc_buf_detach(struct gc_buf *b, size_t *len);

/* Cuts the contents to their first len bytes (nothing happens when len >= b->len). */
void gc_buf_truncate(struct gc_buf *b, size_t len);

/*
 * Appends the regular file at path whole to b; b's cap bounds it (GC_ETOOBIG past it).
 * Messages name the file as name (NULL: path). With found, a file that does not exist is
 * no error: 0 with *found false (*found is true once the file is open); without, it is
 * one. On failure b may hold part of the file: a caller reading a secret wipes b anyway.
 */
int gc_buf_read_file(struct gc_buf *b, const char *path, const char *name, bool *found,
		     struct gc_error *err);

#endif
