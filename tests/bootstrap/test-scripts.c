/*
 * test-scripts.c: the bootstrap scripts embedded in gc_bootstrap (bootstrap/scripts.h) are
 * exactly the files under templates/: every .sh file of templates/bootstrap and smoke.cu,
 * byte for byte, in a sorted table that gc_bootstrap_file_find searches. GC_TEMPLATES
 * names the source tree's templates/ directory.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <dirent.h>
#include <stdio.h>

#include "bootstrap/scripts.h"
#include "core/alloc.h"
#include "core/buf.h"
#include "core/steps.h"

static const char *templates(void)
{
	const char *t = getenv("GC_TEMPLATES");

	assert_non_null(t);
	return t;
}

/* The file's bytes, in b. */
static void read_file(struct gc_buf *b, const char *path)
{
	FILE *f = fopen(path, "rb");
	char chunk[4096];
	size_t n;

	assert_non_null(f);
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
		assert_int_equal(gc_buf_add(b, chunk, n), 0);
	assert_int_equal(ferror(f), 0);
	fclose(f);
}

static void assert_embedded_as_on_disk(const char *name, const char *path)
{
	const struct gc_bootstrap_file *f = gc_bootstrap_file_find(name);
	struct gc_buf disk;

	if (!f) {
		fail_msg("'%s' is not embedded", name);
		return;
	}
	gc_buf_init(&disk, 1u << 20);
	read_file(&disk, path);
	assert_int_equal(f->len, disk.len);
	assert_memory_equal(f->data, disk.data, disk.len);
	gc_buf_release(&disk);
}

static void test_every_template_is_embedded(void **state)
{
	DIR *d;
	struct dirent *e;
	size_t n = 0;
	char *dir = gc_xasprintf("%s/bootstrap", templates());
	char *path;

	(void)state;
	d = opendir(dir);
	assert_non_null(d);
	while ((e = readdir(d)) != NULL) {
		size_t len = strlen(e->d_name);

		if (e->d_name[0] == '.' || len < 4 || strcmp(e->d_name + len - 3, ".sh") != 0)
			continue;
		path = gc_xasprintf("%s/%s", dir, e->d_name);
		assert_embedded_as_on_disk(e->d_name, path);
		free(path);
		n++;
	}
	closedir(d);
	free(dir);
	path = gc_xasprintf("%s/smoke/smoke.cu", templates());
	assert_embedded_as_on_disk("smoke.cu", path);
	free(path);
	/* nothing else is in the table, and the steps the runner needs are there */
	assert_int_equal(gc_bootstrap_nfiles, n + 1);
	assert_true(n >= 8);
	assert_non_null(gc_bootstrap_file_find("lib.sh"));
	assert_non_null(gc_bootstrap_file_find("verify.sh"));
	/* every row of the step table (core/steps.h) has its script */
	for (size_t i = 0; i < gc_n_steps; i++) {
		char name[64];

		snprintf(name, sizeof(name), "%s.sh", gc_steps[i].name);
		assert_non_null(gc_bootstrap_file_find(name));
	}
}

static void test_table_is_sorted_and_terminated(void **state)
{
	(void)state;
	for (size_t i = 0; i < gc_bootstrap_nfiles; i++) {
		const struct gc_bootstrap_file *f = &gc_bootstrap_files[i];

		/* text without NUL bytes, NUL-terminated */
		assert_int_equal(f->data[f->len], 0);
		assert_int_equal(strlen((const char *)f->data), f->len);
		assert_null(strchr(f->name, '/'));
		if (i > 0)
			assert_true(strcmp(gc_bootstrap_files[i - 1].name, f->name) < 0);
	}
}

static void test_scripts_are_strict_bash(void **state)
{
	(void)state;
	for (size_t i = 0; i < gc_bootstrap_nfiles; i++) {
		const struct gc_bootstrap_file *f = &gc_bootstrap_files[i];
		const char *text = (const char *)f->data;
		size_t len = strlen(f->name);

		if (strcmp(f->name + len - 3, ".sh") != 0)
			continue;
		if (strcmp(f->name, "lib.sh") == 0) {
			/* sourced, never run */
			assert_true(strncmp(text, "# shellcheck shell=bash", 23) == 0);
			assert_non_null(strstr(text, "GC_EXIT_REBOOT=100\n"));
			continue;
		}
		assert_true(strncmp(text, "#!/usr/bin/env bash\n", 20) == 0);
		assert_non_null(strstr(text, "\nset -euo pipefail\n"));
	}
	assert_int_equal(GC_BOOTSTRAP_EXIT_REBOOT, 100);
}

static void test_find_unknown(void **state)
{
	const struct gc_bootstrap_file *f;

	(void)state;
	assert_null(gc_bootstrap_file_find("nope.sh"));
	assert_null(gc_bootstrap_file_find(""));
	assert_null(gc_bootstrap_file_find("bootstrap/driver.sh"));
	f = gc_bootstrap_file_find("driver.sh");
	assert_non_null(f);
	if (f)
		assert_string_equal(f->name, "driver.sh");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_template_is_embedded),
		cmocka_unit_test(test_table_is_sorted_and_terminated),
		cmocka_unit_test(test_scripts_are_strict_bash),
		cmocka_unit_test(test_find_unknown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
