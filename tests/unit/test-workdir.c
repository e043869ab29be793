/*
 * test-workdir.c: the workdir's ignore rules and scan (cmd/workdir.h): gitignore-like
 * globs, .git always ignored, limits, the manifest's lines.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "cmd/workdir.h"
#include "core/alloc.h"

static void test_ignore(void **state)
{
	const char *p[] = { "*.log", "data/", "/build", "src/*.o", "!keep.log" };
	size_t n = sizeof(p) / sizeof(*p);

	(void)state;
	assert_true(gc_workdir_ignored(NULL, 0, ".git", true));
	assert_true(gc_workdir_ignored(NULL, 0, "sub/.git", true));
	assert_false(gc_workdir_ignored(NULL, 0, ".gitignore", false));
	assert_true(gc_workdir_ignored(p, n, "run.log", false));
	assert_true(gc_workdir_ignored(p, n, "a/b/run.log", false));
	assert_false(gc_workdir_ignored(p, n, "keep.log", false)); /* negated, last wins */
	assert_true(gc_workdir_ignored(p, n, "data", true));
	assert_true(gc_workdir_ignored(p, n, "x/data", true));
	assert_false(gc_workdir_ignored(p, n, "data", false)); /* a file named data stays */
	assert_true(gc_workdir_ignored(p, n, "build", true));
	assert_false(gc_workdir_ignored(p, n, "x/build", true)); /* anchored at the root */
	assert_true(gc_workdir_ignored(p, n, "src/a.o", false));
	assert_false(gc_workdir_ignored(p, n, "src/x/a.o", false)); /* '*' stops at '/' */
	assert_false(gc_workdir_ignored(p, n, "train.py", false));
}

static void put(const char *dir, const char *rel, const char *text)
{
	char *path = gc_xasprintf("%s/%s", dir, rel);
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	free(path);
}

static void test_scan(void **state)
{
	char dir[] = "/tmp/gc-workdir-XXXXXX", sub[64], git[64], *m;
	struct gc_workdir w;
	struct gc_error err;

	(void)state;
	umask(022);
	assert_non_null(mkdtemp(dir));
	snprintf(sub, sizeof(sub), "%s/sub", dir);
	snprintf(git, sizeof(git), "%s/.git", dir);
	assert_int_equal(mkdir(sub, 0755), 0);
	assert_int_equal(mkdir(git, 0755), 0);
	put(dir, "b.py", "b\n");
	put(dir, "sub/a.py", "aa\n");
	put(dir, "sub/x.log", "log\n");
	put(dir, ".git/HEAD", "ref\n");
	put(dir, ".gpuclusterignore", "# comment\n\n*.log  \n");
	gc_error_init(&err);
	assert_int_equal(gc_workdir_scan(dir, &w, &err), 0);
	assert_int_equal(w.n, 3);
	assert_int_equal(w.n_ignored, 2);
	assert_string_equal(w.files[0].path, ".gpuclusterignore");
	assert_string_equal(w.files[1].path, "b.py");
	assert_string_equal(w.files[2].path, "sub/a.py");
	m = gc_workdir_manifest(&w);
	assert_non_null(strstr(m, " 3 644 sub/a.py\n"));
	free(m);
	gc_workdir_release(&w);

	snprintf(sub, sizeof(sub), "%s/none", dir);
	assert_int_equal(gc_workdir_scan(sub, &w, &err), -1);
	assert_int_equal(err.code, GC_ENOTFOUND);
	gc_workdir_release(&w);
	snprintf(sub, sizeof(sub), "%s/b.py", dir);
	assert_int_equal(gc_workdir_scan(sub, &w, &err), -1);
	assert_int_equal(err.code, GC_EINVALID);
	gc_workdir_release(&w);
	for (size_t i = 0; i < 5; i++) {
		static const char *const files[] = { "b.py", "sub/a.py", "sub/x.log", ".git/HEAD",
						     ".gpuclusterignore" };
		char *path = gc_xasprintf("%s/%s", dir, files[i]);

		unlink(path);
		free(path);
	}
	rmdir(git);
	snprintf(sub, sizeof(sub), "%s/sub", dir);
	rmdir(sub);
	assert_int_equal(rmdir(dir), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ignore),
		cmocka_unit_test(test_scan),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
