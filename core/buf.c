/*
 * buf.c: the capped growable buffer (see buf.h), and small files read whole into one.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/alloc.h"
#include "core/buf.h"
#include "core/error.h"

char gc_buf_empty[1];

void gc_buf_init(struct gc_buf *b, size_t max)
{
	b->data = gc_buf_empty;
	b->len = 0;
	b->alloc = 0;
	b->max = max ? max : GC_BUF_DEFAULT_MAX;
}

void gc_buf_release(struct gc_buf *b)
{
	if (!b)
		return;
	if (b->alloc)
		free(b->data);
	b->data = gc_buf_empty;
	b->len = 0;
	b->alloc = 0;
}

void gc_buf_reset(struct gc_buf *b)
{
	b->len = 0;
	b->data[0] = '\0';
}

void gc_buf_truncate(struct gc_buf *b, size_t len)
{
	if (len < b->len) {
		b->len = len;
		b->data[len] = '\0';
	}
}

static int grow_to(struct gc_buf *b, size_t extra, bool exact)
{
	size_t need, n;

	if (b->max == 0)
		b->max = GC_BUF_DEFAULT_MAX;
	if (extra > b->max || b->len > b->max - extra)
		return -1;
	need = b->len + extra + 1;
	if (need <= b->alloc)
		return 0;
	n = exact ? need : b->alloc ? b->alloc : 64;
	while (n < need)
		n = n > ((size_t)-1) / 2 ? need : n * 2;
	if (b->alloc) {
		b->data = gc_xrealloc(b->data, n);
	} else {
		b->data = gc_xmalloc(n);
		b->data[0] = '\0';
	}
	b->alloc = n;
	return 0;
}

static int grow(struct gc_buf *b, size_t extra)
{
	return grow_to(b, extra, false);
}

int gc_buf_reserve(struct gc_buf *b, size_t len)
{
	return grow_to(b, len, true);
}

int gc_buf_add(struct gc_buf *b, const void *data, size_t len)
{
	if (grow(b, len) < 0)
		return -1;
	if (len)
		memcpy(b->data + b->len, data, len);
	b->len += len;
	b->data[b->len] = '\0';
	return 0;
}

int gc_buf_addstr(struct gc_buf *b, const char *s)
{
	return gc_buf_add(b, s, strlen(s));
}

int gc_buf_addch(struct gc_buf *b, char c)
{
	return gc_buf_add(b, &c, 1);
}

int gc_buf_vaddf(struct gc_buf *b, const char *fmt, va_list ap)
{
	va_list cp;
	int n;

	va_copy(cp, ap);
	n = vsnprintf(NULL, 0, fmt, cp);
	va_end(cp);
	if (n < 0 || grow(b, (size_t)n) < 0)
		return -1;
	vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
	b->len += (size_t)n;
	return 0;
}

int gc_buf_addf(struct gc_buf *b, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = gc_buf_vaddf(b, fmt, ap);
	va_end(ap);
	return r;
}

char *gc_buf_detach(struct gc_buf *b, size_t *len)
{
	char *p;

	if (len)
		*len = b->len;
	p = b->alloc ? b->data : gc_xstrdup("");
	b->data = gc_buf_empty;
	b->len = 0;
	b->alloc = 0;
	return p;
}

int gc_buf_read_file(struct gc_buf *b, const char *path, const char *name, bool *found,
		     struct gc_error *err)
{
	char chunk[4096];
	struct stat st;
	int fd, ret = -1;

	if (!name)
		name = path;
	if (found)
		*found = false;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0 && errno == ENOENT && found)
		return 0;
	if (fd < 0)
		return gc_error_set(err, GC_EIO, "cannot open '%s': %s", name, strerror(errno));
	if (found)
		*found = true;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
		gc_error_set(err, GC_EIO, "'%s' is not a regular file", name);
		goto out;
	}
	for (;;) {
		ssize_t n = read(fd, chunk, sizeof(chunk));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			gc_error_set(err, GC_EIO, "cannot read '%s': %s", name, strerror(errno));
			goto out;
		}
		if (n == 0)
			break;
		if (gc_buf_add(b, chunk, (size_t)n) != 0) {
			gc_error_set(err, GC_ETOOBIG, "'%s' is larger than %zu KiB", name,
				     b->max >> 10);
			goto out;
		}
	}
	ret = 0;
out:
	close(fd);
	return ret;
}
