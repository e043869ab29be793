/*
 * replay.c: a main() for the fuzz targets in builds without libFuzzer (gcc, CI).
 *
 * Runs LLVMFuzzerTestOneInput once on each file named on the command line, and on every
 * regular file of each directory named, so the seed corpus and every past crash stay
 * regression tests under the ordinary sanitizer build. Fails when it was given nothing
 * to run or a file cannot be read, so a moved corpus does not pass silently.
 */
#include <dirent.h>
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/alloc.h"
#include "core/buf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Larger than any corpus file: the loader itself must refuse oversized input. */
#define REPLAY_MAX_BYTES ((size_t)8 << 20)

static int replay_file(const char *path, unsigned *count)
{
	struct gc_buf b = GC_BUF_INIT(REPLAY_MAX_BYTES);
	char chunk[16384];
	FILE *f = fopen(path, "rb");
	size_t n;
	int ret = -1;

	if (!f)
		goto out;
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
		if (gc_buf_add(&b, chunk, n) < 0)
			goto out;
	if (ferror(f))
		goto out;
	/* a copy of exactly the file's bytes, so ASan sees reads past the end */
	{
		uint8_t *copy = gc_xmalloc(b.len ? b.len : 1);

		memcpy(copy, b.data, b.len);
		LLVMFuzzerTestOneInput(copy, b.len);
		free(copy);
	}
	(*count)++;
	ret = 0;
out:
	if (ret < 0) {
		fputs("replay: cannot read ", stderr);
		fputs(path, stderr);
		fputs("\n", stderr);
	}
	if (f)
		fclose(f);
	gc_buf_release(&b);
	return ret;
}

static int replay_dir(const char *dir, unsigned *count)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int ret = 0;

	if (!d)
		return -1;
	while ((e = readdir(d))) {
		char *path;
		struct stat st;

		if (e->d_name[0] == '.')
			continue;
		path = gc_xasprintf("%s/%s", dir, e->d_name);
		if (stat(path, &st) == 0 && S_ISREG(st.st_mode) && replay_file(path, count) < 0)
			ret = -1;
		free(path);
	}
	closedir(d);
	return ret;
}

int main(int argc, char **argv)
{
	unsigned count = 0;
	int ret = 0;

	for (int i = 1; i < argc; i++) {
		struct stat st;

		if (stat(argv[i], &st) < 0)
			ret = 1;
		else if (S_ISDIR(st.st_mode) ? replay_dir(argv[i], &count) < 0
					     : replay_file(argv[i], &count) < 0)
			ret = 1;
	}
	return ret ? ret : count == 0;
}
