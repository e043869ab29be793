/*
 * lock.c: one changing command per cluster at a time on this machine (engine.h; how and
 * why: docs/internals/executor.md, "Lock"). The file is never unlinked: removing a flock
 * file lets a third process lock a new inode while a second still waits on the old one.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <time.h>
#include <unistd.h>

#include "core/alloc.h"
#include "core/buf.h"
#include "core/engine.h"
#include "core/state.h"
#include "core/str.h"

#define LOCK_INFO_MAX 256

/* The cluster's name: the last component of its state directory. */
static const char *cluster_of(const char *state_dir)
{
	const char *slash = strrchr(state_dir, '/');

	return slash && slash[1] ? slash + 1 : state_dir;
}

/* "pid command start" as the holder wrote it, into a readable phrase; "" when the holder
 * has not written it yet (it is between flock and write) or wrote something else. */
static void describe_holder(int fd, char *out, size_t size)
{
	char text[LOCK_INFO_MAX], *sp1, *sp2, *nl, *end;
	ssize_t n = pread(fd, text, sizeof(text) - 1, 0);
	uint64_t pid, since;

	out[0] = '\0';
	if (n <= 0)
		return;
	text[n] = '\0';
	if ((nl = strchr(text, '\n')))
		*nl = '\0';
	sp1 = strchr(text, ' ');
	sp2 = sp1 ? strrchr(sp1 + 1, ' ') : NULL;
	if (!sp1 || !sp2)
		return;
	*sp1 = '\0';
	*sp2 = '\0';
	if (gc_parse_u64(text, INT32_MAX, &pid) < 0 || gc_parse_u64(sp2 + 1, INT64_MAX, &since) < 0)
		return;
	for (end = sp1 + 1; *end; end++)
		if ((unsigned char)*end < 0x20 || *end == 0x7f)
			return;

	time_t t = (time_t)since, now = time(NULL);
	struct tm tm;
	char when[32];

	if (!localtime_r(&t, &tm))
		return;
	/* a lock taken today reads best as a time; an older one needs its date */
	if (now - t < 20 * 3600)
		strftime(when, sizeof(when), "%H:%M:%S", &tm);
	else
		strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", &tm);
	snprintf(out, size, "pid %llu (%s, since %s)", (unsigned long long)pid, sp1 + 1, when);
}

int gc_lock_acquire(struct gc_lock *out, const char *state_dir, const char *what,
		    struct gc_error *err)
{
	char *path = gc_state_path(state_dir, GC_STATE_LOCK);
	struct gc_buf info = GC_BUF_INIT(LOCK_INFO_MAX);
	int fd;

	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0) {
		gc_error_set(err, GC_EIO, "cannot open lock file '%s': %s", path, strerror(errno));
		goto fail;
	}
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		char holder[LOCK_INFO_MAX + 64];

		if (errno != EWOULDBLOCK) {
			gc_error_set(err, GC_EIO, "cannot lock '%s': %s", path, strerror(errno));
			goto fail;
		}
		describe_holder(fd, holder, sizeof(holder));
		gc_error_set(err, GC_ELOCKED,
			     "cluster '%s' is locked by %s; if that process is gone the lock is "
			     "released automatically",
			     cluster_of(state_dir), holder[0] ? holder : "another process");
		goto fail;
	}
	gc_buf_addf(&info, "%ld %s %lld\n", (long)getpid(), what ? what : "?",
		    (long long)time(NULL));
	/* the contents are only for the message above: a failed write is not worth failing
	 * the command for */
	if (ftruncate(fd, 0) < 0 || pwrite(fd, info.data, info.len, 0) < 0)
		(void)0;
	gc_buf_release(&info);
	out->fd = fd;
	out->path = path;
	return 0;
fail:
	if (fd >= 0)
		close(fd);
	gc_buf_release(&info);
	free(path);
	return -1;
}

void gc_lock_release(struct gc_lock *lock)
{
	if (!lock || !lock->path)
		return;
	/* emptied first, so a reader never names a process that no longer holds it */
	if (ftruncate(lock->fd, 0) < 0)
		(void)0;
	close(lock->fd);
	free(lock->path);
	lock->path = NULL;
	lock->fd = -1;
}
