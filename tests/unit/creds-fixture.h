/*
 * creds-fixture.h: what the credential chain tests (test-aws-creds.c, test-alibaba-creds.c,
 * test-tencent-creds.c) share. Each test gets its own temporary HOME, an environment table
 * of its own that the chain reads through t.env (nothing comes from the real environment;
 * HOME is set), a log at trace level captured into t.logged (to check that no secret
 * reaches it), an HTTP client, and the fake clock at zero.
 *
 * Life cycle: a test file's setup calls creds_setup, then adds what its cloud needs; its
 * teardown calls creds_teardown, which removes HOME with everything the test wrote there.
 * Header-only; one test file at a time. unset_env is static inline: not every test uses it.
 */
#ifndef GC_TEST_CREDS_FIXTURE_H
#define GC_TEST_CREDS_FIXTURE_H

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/alloc.h"
#include "core/buf.h"
#include "core/http.h"
#include "core/log.h"
#include "core/spec.h"
#include "fake-clock.h"

#define CREDS_MAX_VARS 48

struct creds_fixture {
	char home[64];
	const char *names[CREDS_MAX_VARS];
	char *values[CREDS_MAX_VARS];
	size_t n;
	struct gc_spec_env env;
	struct gc_log log;
	struct gc_buf logged;
	struct gc_http *http;
};

static struct creds_fixture t;

static const char *lookup(void *ctx, const char *name)
{
	struct creds_fixture *x = ctx;

	for (size_t i = 0; i < x->n; i++)
		if (strcmp(x->names[i], name) == 0)
			return x->values[i];
	return NULL;
}

/* Sets a variable of the test's environment; name must outlive the test (a literal). */
static void set_env(const char *name, const char *value)
{
	for (size_t i = 0; i < t.n; i++)
		if (strcmp(t.names[i], name) == 0) {
			free(t.values[i]);
			t.values[i] = gc_xstrdup(value);
			return;
		}
	assert_true(t.n < CREDS_MAX_VARS);
	t.names[t.n] = name;
	t.values[t.n++] = gc_xstrdup(value);
}

static inline void unset_env(const char *name)
{
	for (size_t i = 0; i < t.n; i++)
		if (strcmp(t.names[i], name) == 0) {
			free(t.values[i]);
			t.names[i] = t.names[t.n - 1];
			t.values[i] = t.values[t.n - 1];
			t.n--;
			return;
		}
}

static void sink(void *ctx, enum gc_log_level level, const char *line)
{
	(void)ctx;
	(void)level;
	gc_buf_addf(&t.logged, "%s\n", line);
}

/* HOME from a mkdtemp template; 0, or -1 when the fixture cannot be made. */
static int creds_setup(const char *home_template)
{
	struct gc_error err;

	memset(&t, 0, sizeof(t));
	snprintf(t.home, sizeof(t.home), "%s", home_template);
	if (!mkdtemp(t.home))
		return -1;
	t.env.lookup = lookup;
	t.env.ctx = &t;
	set_env("HOME", t.home);
	gc_buf_init(&t.logged, 1 << 20);
	gc_log_init(&t.log, GC_LOG_TRACE, sink, NULL);
	gc_error_init(&err);
	t.http = gc_http_new(NULL, &err);
	fc.now = 0;
	fc.slept = 0;
	fc.sleeps = 0;
	return t.http ? 0 : -1;
}

static void remove_tree(const char *path)
{
	struct stat st;
	DIR *d;
	struct dirent *e;

	if (lstat(path, &st) != 0)
		return;
	if (!S_ISDIR(st.st_mode)) {
		unlink(path);
		return;
	}
	d = opendir(path);
	while (d && (e = readdir(d))) {
		char *p;
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		p = gc_xasprintf("%s/%s", path, e->d_name);
		remove_tree(p);
		free(p);
	}
	if (d)
		closedir(d);
	rmdir(path);
}

static int creds_teardown(void)
{
	remove_tree(t.home);
	for (size_t i = 0; i < t.n; i++)
		free(t.values[i]);
	gc_log_release(&t.log);
	gc_buf_release(&t.logged);
	gc_http_free(t.http);
	return 0;
}

#endif
