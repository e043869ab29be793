/*
 * test-cmd.c: the command dispatcher, through its seams. Most cases run a table of test
 * commands (so they do not change when real commands are added) with captured streams
 * and a fake environment; the real table is checked for shape, and every real command's
 * --help is run. Covered: exact and prefix matching, ambiguity, did-you-mean, argument
 * counts, every option form, value checks, global flags anywhere, colour and NO_COLOR,
 * logging levels, NEEDS_SPEC, interruption, exit codes, and the output helpers.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include <jansson.h>

#include "cmd/cmd.h"
#include "cmd/cluster.h"
#include "cmd/output.h"
#include "cmd/regions.h"
#include "core/alloc.h"
#include "core/buf.h"
#include "core/diag.h"
#include "core/error.h"
#include "core/provider.h"
#include "core/log.h"
#include "core/spec.h"
#include "core/str.h"

/* ---- what a test command saw ----------------------------------------------------- */

static struct seen {
	int calls;
	char name[32];
	size_t n_args;
	char args[4][64];
	unsigned yes;
	int64_t parallel;
	char target[64];
	char market[32];
	struct gc_cmd_globals globals;
	bool color_out, color_err;
	bool had_spec;
} seen;

static void copy(char *dst, size_t size, const char *src)
{
	snprintf(dst, size, "%s", src ? src : "(null)");
}

static void record(struct gc_cmd_ctx *ctx)
{
	seen.calls++;
	copy(seen.name, sizeof(seen.name), ctx->entry->name);
	seen.n_args = ctx->n_args;
	for (size_t i = 0; i < ctx->n_args && i < 4; i++)
		copy(seen.args[i], sizeof(seen.args[i]), ctx->args[i]);
	seen.globals = ctx->globals;
	seen.color_out = ctx->out->color_out;
	seen.color_err = ctx->out->color_err;
	seen.had_spec = ctx->spec != NULL;
}

static int exec_record(struct gc_cmd_ctx *ctx)
{
	record(ctx);
	return GC_EXIT_OK;
}

static int exec_apply(struct gc_cmd_ctx *ctx)
{
	record(ctx);
	seen.yes = gc_cmd_opt_count(ctx, "yes");
	seen.parallel = gc_cmd_opt_int(ctx, "parallel");
	copy(seen.target, sizeof(seen.target), gc_cmd_opt_str(ctx, "target"));
	copy(seen.market, sizeof(seen.market), gc_cmd_opt_str(ctx, "market"));
	assert_int_equal(gc_cmd_opt_given(ctx, "yes"), seen.yes > 0);
	return GC_EXIT_OK;
}

/* Returns the code in its first argument: exit codes pass through unchanged. */
static int exec_fail(struct gc_cmd_ctx *ctx)
{
	int64_t code;

	record(ctx);
	assert_int_equal(gc_parse_i64(ctx->args[0], 0, 255, &code), 0);
	return (int)code;
}

static int exec_log(struct gc_cmd_ctx *ctx)
{
	record(ctx);
	gc_log_warn(ctx->log, "warn-line");
	gc_log_info(ctx->log, "info-line");
	gc_log_debug(ctx->log, "debug-line");
	gc_log_trace(ctx->log, "trace-line");
	return GC_EXIT_OK;
}

static int exec_interrupt(struct gc_cmd_ctx *ctx)
{
	record(ctx);
	raise(SIGINT); /* caught by the dispatcher's handler for MUTATES commands */
	assert_true(gc_cmd_interrupted());
	return GC_EXIT_FAILURE;
}

static const char *const markets[] = { "on-demand", "spot", "spot-then-on-demand", NULL };

static const struct gc_opt apply_opts[] = {
	{ .name = "yes", .short_name = 'y', .type = GC_OPT_FLAG, .help = "do not ask" },
	{ .name = "parallel",
	  .short_name = 'p',
	  .type = GC_OPT_INT,
	  .arg = "N",
	  .help = "calls in flight",
	  .def = "8",
	  .min = 1,
	  .max = 64 },
	{ .name = "target",
	  .short_name = 't',
	  .type = GC_OPT_STRING,
	  .arg = "GROUP",
	  .help = "only this group" },
	{ .name = "market",
	  .type = GC_OPT_CHOICE,
	  .choices = markets,
	  .arg = "MARKET",
	  .help = "override the market",
	  .def = "on-demand" },
	{ .name = NULL },
};

static const struct gc_cmd_entry t_apply = {
	.name = "apply",
	.summary = "apply it",
	.usage = "[FILE]",
	.opts = apply_opts,
	.min_args = 0,
	.max_args = 1,
	.flags = GC_CMD_MUTATES,
	.exec = exec_apply,
};
static const struct gc_cmd_entry t_approve = {
	.name = "approve",
	.summary = "approve it",
	.usage = "",
	.min_args = 0,
	.max_args = 0,
	.exec = exec_record,
};
static const struct gc_cmd_entry t_destroy = {
	.name = "destroy",
	.summary = "destroy it",
	.usage = "NAME",
	.min_args = 1,
	.max_args = 1,
	.exec = exec_record,
};
static const struct gc_cmd_entry t_fail = {
	.name = "fail",
	.summary = "exit with a code",
	.usage = "CODE",
	.min_args = 1,
	.max_args = 1,
	.exec = exec_fail,
};
static const struct gc_cmd_entry t_interrupt = {
	.name = "interrupt",
	.summary = "get interrupted",
	.usage = "",
	.min_args = 0,
	.max_args = 0,
	.flags = GC_CMD_MUTATES,
	.exec = exec_interrupt,
};
static const struct gc_cmd_entry t_log = {
	.name = "log",
	.summary = "log at every level",
	.usage = "",
	.min_args = 0,
	.max_args = 0,
	.exec = exec_log,
};
static const struct gc_cmd_entry t_show = {
	.name = "show",
	.summary = "show things",
	.usage = "[THING...]",
	.min_args = 0,
	.max_args = GC_CMD_ARGS_UNLIMITED,
	.exec = exec_record,
};
static const struct gc_cmd_entry t_showall = {
	.name = "showall",
	.summary = "show everything",
	.usage = "",
	.min_args = 0,
	.max_args = 0,
	.exec = exec_record,
};
static const struct gc_cmd_entry t_spec = {
	.name = "spec",
	.summary = "needs a spec",
	.usage = "[FILE]",
	.min_args = 0,
	.max_args = 1,
	.flags = GC_CMD_NEEDS_SPEC,
	.exec = exec_record,
};

static const struct gc_cmd_entry *const test_table[] = {
	&t_apply, &t_approve, &t_destroy, &t_fail, &t_interrupt,
	&t_log,	  &t_show,    &t_showall, &t_spec,
};
#define TEST_TABLE test_table, sizeof(test_table) / sizeof(test_table[0])
#define REAL_TABLE gc_cmd_table, gc_cmd_table_len

/* ---- running a command line ------------------------------------------------------- */

static const char *fake_no_color; /* NULL: unset */

static const char *fake_lookup(void *ctx, const char *name)
{
	(void)ctx;
	if (strcmp(name, "NO_COLOR") == 0)
		return fake_no_color;
	if (strcmp(name, "GC_TEST_NAME") == 0)
		return "from-env";
	return NULL;
}

static const struct gc_spec_env fake_env = { fake_lookup, NULL };

struct run {
	int rc;
	char *out;
	char *err;
};

static int tty_out, tty_err;

/* Runs "gpucluster ARGS..." (NULL-terminated) and captures both streams. */
static void runv(struct run *r, const struct gc_cmd_entry *const *table, size_t n, ...)
{
	char *argv[32];
	int argc = 0;
	size_t out_len, err_len;
	struct gc_cmd_io io;
	va_list ap;
	const char *a;

	memset(&seen, 0, sizeof(seen));
	argv[argc++] = gc_xstrdup("gpucluster");
	va_start(ap, n);
	while ((a = va_arg(ap, const char *)) != NULL) {
		assert_true(argc < 31);
		argv[argc++] = gc_xstrdup(a);
	}
	va_end(ap);
	argv[argc] = NULL;

	memset(&io, 0, sizeof(io));
	io.out = open_memstream(&r->out, &out_len);
	io.err = open_memstream(&r->err, &err_len);
	assert_non_null(io.out);
	assert_non_null(io.err);
	io.out_tty = tty_out;
	io.err_tty = tty_err;
	io.env = &fake_env;
	r->rc = gc_cmd_dispatch(table, n, argc, argv, &io);
	fclose(io.out);
	fclose(io.err);
	for (int i = 0; i < argc; i++)
		free(argv[i]);
}

static void run_free(struct run *r)
{
	free(r->out);
	free(r->err);
}

#define RUN(r, table, ...) runv((r), table, __VA_ARGS__, (const char *)NULL)

static void assert_contains(const char *hay, const char *needle)
{
	if (!strstr(hay, needle))
		fail_msg("expected to find \"%s\" in:\n%s", needle, hay);
}

static void assert_lacks(const char *hay, const char *needle)
{
	if (strstr(hay, needle))
		fail_msg("did not expect \"%s\" in:\n%s", needle, hay);
}

static int setup(void **state)
{
	(void)state;
	fake_no_color = NULL;
	tty_out = 0;
	tty_err = 0;
	return 0;
}

/* ---- command names ------------------------------------------------------------------ */

static void test_exact_and_prefix(void **state)
{
	struct run r;

	(void)state;
	RUN(&r, TEST_TABLE, "destroy", "c1");
	assert_int_equal(r.rc, GC_EXIT_OK);
	assert_string_equal(seen.name, "destroy");
	assert_int_equal(seen.n_args, 1);
	assert_string_equal(seen.args[0], "c1");
	run_free(&r);

	RUN(&r, TEST_TABLE, "des", "c1");
	assert_int_equal(r.rc, GC_EXIT_OK);
	assert_string_equal(seen.name, "destroy");
	run_free(&r);

	/* an exact name wins over a longer name it is a prefix of */
	RUN(&r, TEST_TABLE, "show");
	assert_int_equal(r.rc, GC_EXIT_OK);
	assert_string_equal(seen.name, "show");
	run_free(&r);
	RUN(&r, TEST_TABLE, "showa");
	assert_string_equal(seen.name, "showall");
	run_free(&r);
}

static void test_ambiguous_prefix(void **state)
{
	struct run r;

	(void)state;
	RUN(&r, TEST_TABLE, "ap");
	assert_int_equal(r.rc, GC_EXIT_USAGE);
	assert_int_equal(seen.calls, 0);
	assert_contains(r.err,
			"gpucluster: error: ambiguous command 'ap': could be apply, approve");
	assert_string_equal(r.out, "");
	run_free(&r);

	/* a prefix of an exact name and a longer one is still ambiguous */
	RUN(&r, TEST_TABLE, "sho");
	assert_int_equal(r.rc, GC_EXIT_USAGE);
	assert_contains(r.err, "could be show, showall");
	run_free(&r);
}

static void test_did_you_mean(void **state)
{
	struct run r;

	(void)state;
	RUN(&r, TEST_TABLE, "aplpy");
	assert_int_equal(r.rc, GC_EXIT_USAGE);
	assert_int_equal(seen.calls, 0);
	assert_contains(r.err, "unknown command 'aplpy' (did you mean 'apply'?)");
	run_free(&r);

	RUN(&r, TEST_TABLE, "zzzzzzzz");
	assert_int_equal(r.rc, GC_EXIT_USAGE);
	assert_contains(r.err, "unknown command 'zzzzzzzz'");
	assert_lacks(r.err, "did you mean");
	assert_contains(r.err, "gpucluster help");
	run_free(&r);

	RUN(&r, REAL_TABLE, "valdate");
	assert_int_equal(r.rc, GC_EXIT_USAGE);
	assert_contains(r.err, "did you mean 'validate'?");
	run_free(&r);
}

static void test_no_args_and_help_overview(void **state)
{
	struct run r;

	(void)state;
	RUN(&r, TEST_TABLE, "-v");
	assert_int_equal(r.rc, GC_EXIT_USAGE);
	assert_string_equal(r.out, "");
	assert_contains(r.err, "usage: gpucluster [options] COMMAND");
	assert_contains(r.err, "  destroy     destroy it\n");
	run_free(&r);

	RUN(&r, TEST_TABLE, "--help");
	assert_int_equal(r.rc, GC_EXIT_OK);
	assert_contains(r.out, "Commands:");
	for (size_t i = 0; i < sizeof(test_table) / sizeof(test_table[0]); i++) {
		assert_contains(r.out, test_table[i]->name);
		assert_contains(r.out, test_table[i]->summary);
	}
	assert_string_equal(r.err, "");
	run_free(&r);
}

/* ---- arguments ---------------------------------------------------------------------- */

static void test_arg_counts(void **state)
{
	struct run r;

	(void)state;
	RUN(&r, TEST_TABLE, "destroy");
	assert_int_equal(r.rc, GC_EXIT_USAGE);
	assert_int_equal(seen.calls, 0);
	assert_contains(r.err, "'destroy' needs at least 1 argument, got 0");
	assert_contains(r.err, "usage: gpucluster destroy [options] NAME");
	run_free(&r);

	RUN(&r, TEST_TABLE, "destroy", "a", "b");
	assert_int_equal(r.rc, GC_EXIT_USAGE);
	assert_int_equal(seen.calls, 0);
	assert_contains(r.err, "'destroy' takes at most 1 argument, got 2");
	run_free(&r);

	RUN(&r, TEST_TABLE, "approve", "x");
	assert_int_equal(r.rc, GC_EXIT_USAGE);
	assert_contains(r.err, "'approve' takes no arguments, got 'x'");
	run_free(&r);

	RUN(&r, TEST_TABLE, "show", "a", "b", "c", "d", "e", "f");
	assert_int_equal(r.rc, GC_EXIT_OK);
	assert_int_equal(seen.n_args, 6);
	assert_string_equal(seen.args[3], "d");
	run_free(&r);

	/* --help skips the count check: asking how to use a command is always allowed */
	RUN(&r, TEST_TABLE, "destroy", "--help");
	assert_int_equal(r.rc, GC_EXIT_OK);
	assert_int_equal(seen.calls, 0);
	assert_contains(r.out, "usage: gpucluster destroy");
	run_free(&r);
}

/* ---- options -------------------------------------------------------------------- */

static void test_option_defaults(void **state)
{
	struct run r;

	(void)state;
	RUN(&r, TEST_TABLE, "apply");
	assert_int_equal(r.rc, GC_EXIT_OK);
	assert_int_equal(seen.yes, 0);
	assert_int_equal(seen.parallel, 8);
	assert_string_equal(seen.target, "(null)");
	assert_string_equal(seen.market, "on-demand");
	assert_int_equal(seen.globals.output, GC_OUTPUT_TEXT);
	assert_int_equal(seen.globals.verbose, 0);
	assert_false(seen.globals.quiet);
	run_free(&r);
}

static void check_apply(const char *what, int64_t parallel, const char *target, unsigned yes,
			struct run *r)
{
	if (r->rc != GC_EXIT_OK)
		fail_msg("%s: exit %d, stderr:\n%s", what, r->rc, r->err);
	assert_string_equal(seen.name, "apply");
	assert_int_equal(seen.parallel, parallel);
	assert_string_equal(seen.target, target);
	assert_int_equal(seen.yes, yes);
	run_free(r);
}

static void test_option_forms(void **state)
{
	struct run r;

	(void)state;
	RUN(&r, TEST_TABLE, "apply", "--parallel", "4", "--target", "gpu");
	check_apply("long value", 4, "gpu", 0, &r);
	RUN(&r, TEST_TABLE, "apply", "--parallel=5", "--target=a=b");
	check_apply("long=value", 5, "a=b", 0, &r);
	RUN(&r, TEST_TABLE, "apply", "--target=", "-p", "6");
	check_apply("empty value, short value", 6, "", 0, &r);
	RUN(&r, TEST_TABLE, "apply", "-p7", "-tgpu");
	check_apply("attached short value", 7, "gpu", 0, &r);
	RUN(&r, TEST_TABLE, "apply", "-yyp", "9");
	check_apply("bundled flags then a value", 9, "(null)", 2, &r);
	RUN(&r, TEST_TABLE, "apply", "-yp10", "--yes");
	check_apply("bundled with attached value", 10, "(null)", 2, &r);
	/* the last value wins */
	RUN(&r, TEST_TABLE, "apply", "-p", "3", "--parallel", "12");
	check_apply("repeated", 12, "(null)", 0, &r);
	/* options may come after positionals */
	RUN(&r, TEST_TABLE, "apply", "file.yaml", "-y");
	assert_int_equal(seen.n_args, 1);
	assert_string_equal(seen.args[0], "file.yaml");
	check_apply("after positional", 8, "(null)", 1, &r);
}

static void test_double_dash_and_dash(void **state)
{
	struct run r;

	(void)state;
	RUN(&r, TEST_TABLE, "show", "--", "--yes", "-v", "--");
	assert_int_equal(r.rc, GC_EXIT_OK);
	assert_int_equal(seen.n_args, 3);
	assert_string_equal(seen.args[0], "--yes");
	assert_string_equal(seen.args[1], "-v");
	assert_string_equal(seen.args[2], "--");
	assert_int_equal(seen.globals.verbose, 0);
	run_free(&r);

	RUN(&r, TEST_TABLE, "show", "-");
	assert_int_equal(r.rc, GC_EXIT_OK);
	assert_int_equal(seen.n_args, 1);
	assert_string_equal(seen.args[0], "-");
	run_free(&r);

	/* "--" before the command: the next word is still the command */
	RUN(&r, TEST_TABLE, "--", "show", "-y");
	assert_int_equal(r.rc, GC_EXIT_OK);
	assert_string_equal(seen.name, "show");
	assert_string_equal(seen.args[0], "-y");
	run_free(&r);
}

static void test_option_errors(void **state)
{
	struct run r;

	(void)state;
	RUN(&r, TEST_TABLE, "apply", "--paralel", "4");
	assert_int_equal(r.rc, GC_EXIT_USAGE);
	assert_int_equal(seen.calls, 0);
	assert_contains(r.err, "unknown option '--paralel' (did you mean '--parallel'?)");
	assert_contains(r.err, "gpucluster apply --help");
	run_free(&r);

	/* global options are candidates too */
	RUN(&r, TEST_TABLE, "apply", "--verbse");
	assert_int_equal(r.rc, GC_EXIT_USAGE);
	assert_contains(r.err, "did you mean '--verbose'?");
	run_free(&r);

	RUN(&r, TEST_TABLE, "apply", "--frobnicate-everything");
	assert_int_equal(r.rc, GC_EXIT_USAGE);
	assert_contains(r.err, "unknown option '--frobnicate-everything'");
	assert_lacks(r.err, "did you mean");
	run_free(&r);

	RUN(&r, TEST_TABLE, "apply", "-yZ");
	assert_int_equal(r.rc, GC_EXIT_USAGE);
	assert_contains(r.err, "unknown option '-Z'");
	run_free(&r);

	/* a command's options are not accepted before the command */
	RUN(&r, TEST_TABLE, "--yes", "apply");
	assert_int_equal(r.rc, GC_EXIT_USAGE);
	assert_contains(r.err, "unknown option '--yes'");
	run_free(&r);

	/* nor by another command */
	RUN(&r, TEST_TABLE, "show", "-p", "3");
	assert_int_equal(r.rc, GC_EXIT_USAGE);
	run_free(&r);

	RUN(&r, TEST_TABLE, "apply", "--yes=no");
	assert_int_equal(r.rc, GC_EXIT_USAGE);
	assert_contains(r.err, "option '--yes' takes no value");
	run_free(&r);

	RUN(&r, TEST_TABLE, "apply", "--parallel");
	assert_int_equal(r.rc, GC_EXIT_USAGE);
	assert_contains(r.err, "option '--parallel' needs a value (N)");
	run_free(&r);

	RUN(&r, TEST_TABLE, "apply", "-p");
	assert_int_equal(r.rc, GC_EXIT_USAGE);
	assert_contains(r.err, "option '-p' needs a value (N)");
	run_free(&r);
}

static void test_int_values(void **state)
{
	static const char *const bad[] = { "0", "65", "abc", "4x", "-1", " 4", "" };
	struct run r;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		RUN(&r, TEST_TABLE, "apply", "--parallel", bad[i]);
		if (r.rc != GC_EXIT_USAGE)
			fail_msg("--parallel '%s': exit %d", bad[i], r.rc);
		assert_int_equal(seen.calls, 0);
		assert_contains(r.err, "expected a whole number from 1 to 64");
		run_free(&r);
	}
	RUN(&r, TEST_TABLE, "apply", "--parallel", "64");
	check_apply("upper bound", 64, "(null)", 0, &r);
	RUN(&r, TEST_TABLE, "apply", "--parallel=1");
	check_apply("lower bound", 1, "(null)", 0, &r);
}

static void test_choice_values(void **state)
{
	struct run r;

	(void)state;
	RUN(&r, TEST_TABLE, "apply", "--market", "spot");
	assert_int_equal(r.rc, GC_EXIT_OK);
	assert_string_equal(seen.market, "spot");
	run_free(&r);

	RUN(&r, TEST_TABLE, "apply", "--market=spto");
	assert_int_equal(r.rc, GC_EXIT_USAGE);
	assert_int_equal(seen.calls, 0);
	assert_contains(r.err, "invalid value 'spto' for '--market' (did you mean 'spot'?)");
	assert_contains(r.err, "one of: on-demand, spot, spot-then-on-demand");
	run_free(&r);

	/* choices are exact: no prefixes, no case folding */
	RUN(&r, TEST_TABLE, "apply", "--market", "SPOT");
	assert_int_equal(r.rc, GC_EXIT_USAGE);
	run_free(&r);

	RUN(&r, TEST_TABLE, "-o", "yaml", "show");
	assert_int_equal(r.rc, GC_EXIT_USAGE);
	assert_contains(r.err, "invalid value 'yaml' for '--output'");
	assert_contains(r.err, "one of: text, json");
	run_free(&r);
}

/* ---- global flags ------------------------------------------------------------------ */

static void test_global_flags_anywhere(void **state)
{
	struct run r;

	(void)state;
	RUN(&r, TEST_TABLE, "-o", "json", "show");
	assert_int_equal(r.rc, GC_EXIT_OK);
	assert_int_equal(seen.globals.output, GC_OUTPUT_JSON);
	run_free(&r);

	RUN(&r, TEST_TABLE, "show", "x", "--output=json");
	assert_int_equal(seen.globals.output, GC_OUTPUT_JSON);
	assert_int_equal(seen.n_args, 1);
	run_free(&r);

	RUN(&r, TEST_TABLE, "-ojson", "show");
	assert_int_equal(seen.globals.output, GC_OUTPUT_JSON);
	run_free(&r);

	RUN(&r, TEST_TABLE, "-vv", "show", "-v");
	assert_int_equal(seen.globals.verbose, 3);
	run_free(&r);

	RUN(&r, TEST_TABLE, "show", "--verbose", "-q");
	assert_int_equal(seen.globals.verbose, 1);
	assert_true(seen.globals.quiet);
	run_free(&r);

	/* global and command short flags bundle together */
	RUN(&r, TEST_TABLE, "apply", "-yvq");
	assert_int_equal(r.rc, GC_EXIT_OK);
	assert_int_equal(seen.yes, 1);
	assert_int_equal(seen.globals.verbose, 1);
	assert_true(seen.globals.quiet);
	run_free(&r);

	RUN(&r, TEST_TABLE, "--no-color", "show");
	assert_true(seen.globals.no_color);
	run_free(&r);

	RUN(&r, TEST_TABLE, "--help", "apply");
	assert_int_equal(r.rc, GC_EXIT_OK);
	assert_int_equal(seen.calls, 0);
	assert_contains(r.out, "usage: gpucluster apply");
	run_free(&r);

	RUN(&r, TEST_TABLE, "apply", "-h");
	assert_int_equal(r.rc, GC_EXIT_OK);
	assert_contains(r.out, "usage: gpucluster apply");
	run_free(&r);

	RUN(&r, TEST_TABLE, "--version");
	assert_int_equal(r.rc, GC_EXIT_OK);
	assert_string_equal(r.out, "gpucluster " GC_VERSION "\n");
	run_free(&r);

	RUN(&r, TEST_TABLE, "show", "--version");
	assert_int_equal(r.rc, GC_EXIT_OK);
	assert_int_equal(seen.calls, 0);
	assert_string_equal(r.out, "gpucluster " GC_VERSION "\n");
	run_free(&r);
}

static void test_log_levels(void **state)
{
	struct run r;

	(void)state;
	RUN(&r, TEST_TABLE, "log");
	assert_contains(r.err, "gpucluster: warning: warn-line");
	assert_lacks(r.err, "info-line");
	run_free(&r);

	RUN(&r, TEST_TABLE, "log", "-v");
	assert_contains(r.err, "gpucluster: info: info-line");
	assert_lacks(r.err, "debug-line");
	run_free(&r);

	RUN(&r, TEST_TABLE, "-vv", "log");
	assert_contains(r.err, "debug: debug-line");
	assert_lacks(r.err, "trace-line");
	run_free(&r);

	RUN(&r, TEST_TABLE, "-vvvv", "log");
	assert_contains(r.err, "trace: trace-line");
	run_free(&r);

	/* quiet wins over verbose */
	RUN(&r, TEST_TABLE, "-v", "log", "-q");
	assert_string_equal(r.err, "");
	run_free(&r);
}

/* ---- colour ------------------------------------------------------------------------ */

static void test_color_decision(void **state)
{
	(void)state;
	assert_true(gc_output_want_color(true, false, NULL));
	assert_true(gc_output_want_color(true, false, ""));
	assert_false(gc_output_want_color(true, false, "1"));
	assert_false(gc_output_want_color(true, false, "0"));
	assert_false(gc_output_want_color(true, true, NULL));
	assert_false(gc_output_want_color(false, false, NULL));
}

static void test_color_through_dispatch(void **state)
{
	struct run r;

	(void)state;
	tty_out = 1;
	tty_err = 0;
	RUN(&r, TEST_TABLE, "show");
	assert_true(seen.color_out);
	assert_false(seen.color_err);
	run_free(&r);

	tty_err = 1;
	fake_no_color = "";
	RUN(&r, TEST_TABLE, "show");
	assert_true(seen.color_out);
	assert_true(seen.color_err);
	run_free(&r);

	fake_no_color = "yes";
	RUN(&r, TEST_TABLE, "show");
	assert_false(seen.color_out);
	assert_false(seen.color_err);
	run_free(&r);

	fake_no_color = NULL;
	RUN(&r, TEST_TABLE, "show", "--no-color");
	assert_false(seen.color_out);
	assert_false(seen.color_err);
	run_free(&r);

	/* errors are coloured on a terminal, and not with NO_COLOR or --no-color, even when
	 * --no-color comes after the word that is in error */
	RUN(&r, TEST_TABLE, "aplpy");
	assert_contains(r.err, "\033[");
	run_free(&r);
	RUN(&r, TEST_TABLE, "apply", "--bogus", "--no-color");
	assert_int_equal(r.rc, GC_EXIT_USAGE);
	assert_lacks(r.err, "\033[");
	run_free(&r);
	fake_no_color = "1";
	RUN(&r, TEST_TABLE, "aplpy");
	assert_lacks(r.err, "\033[");
	run_free(&r);

	/* help on a terminal is coloured; not a terminal, it is plain */
	fake_no_color = NULL;
	RUN(&r, TEST_TABLE, "apply", "--help");
	assert_contains(r.out, "\033[");
	run_free(&r);
	tty_out = 0;
	RUN(&r, TEST_TABLE, "apply", "--help");
	assert_lacks(r.out, "\033[");
	run_free(&r);
}

/* ---- exit codes, NEEDS_SPEC, interruption ------------------------------------------ */

static void test_exit_codes_pass_through(void **state)
{
	struct run r;

	(void)state;
	RUN(&r, TEST_TABLE, "fail", "1");
	assert_int_equal(r.rc, GC_EXIT_FAILURE);
	assert_int_equal(seen.calls, 1);
	run_free(&r);
	RUN(&r, TEST_TABLE, "fail", "2");
	assert_int_equal(r.rc, GC_EXIT_CHANGES);
	run_free(&r);
	RUN(&r, TEST_TABLE, "fail", "0");
	assert_int_equal(r.rc, GC_EXIT_OK);
	run_free(&r);
	/* the numbers are the documented interface */
	assert_int_equal(GC_EXIT_OK, 0);
	assert_int_equal(GC_EXIT_FAILURE, 1);
	assert_int_equal(GC_EXIT_CHANGES, 2);
	assert_int_equal(GC_EXIT_USAGE, 64);
	assert_int_equal(GC_EXIT_INTERRUPTED, 130);
}

/* list's IDLE column: the spec's duration back from the tag's seconds, and the stopped */
static void test_idle_text(void **state)
{
	char out[64];

	(void)state;
	gc_cmd_idle_text(out, sizeof(out), 0, 0);
	assert_string_equal(out, "-");
	gc_cmd_idle_text(out, sizeof(out), 1800, 0);
	assert_string_equal(out, "30m");
	gc_cmd_idle_text(out, sizeof(out), 1800, 1);
	assert_string_equal(out, "30m, 1 stopped");
	gc_cmd_idle_text(out, sizeof(out), 5400, 0);
	assert_string_equal(out, "90m");
	gc_cmd_idle_text(out, sizeof(out), 7 * 86400, 12);
	assert_string_equal(out, "7d, 12 stopped");
	gc_cmd_idle_text(out, sizeof(out), 0, 2); /* stopped without autostop: by hand */
	assert_string_equal(out, "-, 2 stopped");
	gc_cmd_idle_text(out, 8, 1800, 1); /* cut, never overrun */
	assert_string_equal(out, "30m, 1 ");
}

static void test_interrupted(void **state)
{
	struct sigaction now;
	struct run r;

	(void)state;
	RUN(&r, TEST_TABLE, "interrupt");
	assert_int_equal(seen.calls, 1);
	assert_int_equal(r.rc, GC_EXIT_INTERRUPTED);
	run_free(&r);
	/* the handler is only in place while the command runs */
	assert_int_equal(sigaction(SIGINT, NULL, &now), 0);
	assert_true(now.sa_handler == SIG_DFL);
}

/* A temporary directory, removed with its files by rm_tmp. */
static char *make_tmp(void)
{
	char *dir = gc_xstrdup("/tmp/gc-test-cmd-XXXXXX");

	assert_non_null(mkdtemp(dir));
	return dir;
}

static void test_needs_spec_missing(void **state)
{
	struct run r;
	char *dir = make_tmp();
	char *path = gc_xasprintf("%s/nope.yaml", dir);

	(void)state;
	RUN(&r, TEST_TABLE, "spec", path);
	assert_int_equal(r.rc, GC_EXIT_FAILURE);
	assert_int_equal(seen.calls, 0);
	assert_contains(r.err, path);
	assert_contains(r.err, ": 1 error\n");
	run_free(&r);
	assert_int_equal(rmdir(dir), 0);
	free(path);
	free(dir);
}

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	assert_non_null(f);
	assert_true(fputs(text, f) >= 0);
	assert_int_equal(fclose(f), 0);
}

/* The dispatcher loads the spec for NEEDS_SPEC commands, expanding ${VAR} from io's env. */
static void test_needs_spec_loaded(void **state)
{
	static const char spec[] = "name: ${GC_TEST_NAME}\n"
				   "provider: {name: aws, region: us-east-1}\n"
				   "node_groups:\n"
				   "  - name: g\n"
				   "    count: 1\n"
				   "    instance_types: [g5.xlarge]\n"
				   "    image: ubuntu-22.04\n";
	struct run r;
	char *dir = make_tmp();
	char *path = gc_xasprintf("%s/cluster.yaml", dir);

	(void)state;
	write_file(path, spec);
	RUN(&r, TEST_TABLE, "spec", path);
	if (r.rc != GC_EXIT_OK)
		fail_msg("spec: exit %d: %s", r.rc, r.err);
	assert_int_equal(seen.calls, 1);
	assert_true(seen.had_spec);
	run_free(&r);

	/* validate reads through the same seam */
	RUN(&r, REAL_TABLE, "validate", path);
	assert_int_equal(r.rc, GC_EXIT_OK);
	assert_contains(r.out, "from-env on aws, region us-east-1");
	assert_contains(r.out, "1 \u00d7 g5.xlarge");
	assert_contains(r.out, "any zone");
	run_free(&r);

	RUN(&r, REAL_TABLE, "validate", "-q", path);
	assert_int_equal(r.rc, GC_EXIT_OK);
	assert_string_equal(r.out, "");
	assert_string_equal(r.err, "");
	run_free(&r);

	assert_int_equal(unlink(path), 0);
	assert_int_equal(rmdir(dir), 0);
	free(path);
	free(dir);
}

/* ---- the real table ----------------------------------------------------------------- */

static void check_opts(const char *cmd, const struct gc_opt *opts, bool global)
{
	for (size_t i = 0; opts && opts[i].name; i++) {
		const struct gc_opt *o = &opts[i];

		if (!o->help || !o->help[0])
			fail_msg("%s: option --%s has no help", cmd, o->name);
		if (o->type == GC_OPT_CHOICE) {
			bool def_ok = o->def == NULL;

			assert_non_null(o->choices);
			for (size_t k = 0; o->choices[k]; k++)
				def_ok = def_ok || strcmp(o->choices[k], o->def) == 0;
			if (!def_ok)
				fail_msg("%s: default of --%s is not a choice", cmd, o->name);
		}
		for (size_t j = i + 1; opts[j].name; j++) {
			assert_string_not_equal(o->name, opts[j].name);
			if (o->short_name)
				assert_int_not_equal(o->short_name, opts[j].short_name);
		}
		if (global)
			continue;
		/* a command option must not shadow a global one */
		for (size_t g = 0; gc_cmd_global_opts[g].name; g++) {
			if (strcmp(o->name, gc_cmd_global_opts[g].name) == 0 ||
			    (o->short_name && o->short_name == gc_cmd_global_opts[g].short_name))
				fail_msg("%s: --%s clashes with a global option", cmd, o->name);
		}
	}
}

static void test_real_table_shape(void **state)
{
	(void)state;
	assert_true(gc_cmd_table_len >= 3);
	check_opts("global", gc_cmd_global_opts, true);
	for (size_t i = 0; i < gc_cmd_table_len; i++) {
		const struct gc_cmd_entry *e = gc_cmd_table[i];

		assert_non_null(e->name);
		assert_non_null(e->summary);
		assert_non_null(e->usage);
		assert_non_null(e->exec);
		if (i > 0 && strcmp(gc_cmd_table[i - 1]->name, e->name) >= 0)
			fail_msg("table not alphabetical at '%s'", e->name);
		assert_true(e->min_args >= 0);
		assert_true(e->max_args == GC_CMD_ARGS_UNLIMITED || e->max_args >= e->min_args);
		check_opts(e->name, e->opts, false);
	}
}

/* --help works for every command: it exits 0 and lists every option. */
static void test_real_help_for_every_command(void **state)
{
	(void)state;
	for (size_t i = 0; i < gc_cmd_table_len; i++) {
		const struct gc_cmd_entry *e = gc_cmd_table[i];
		char *usage = gc_xasprintf("usage: gpucluster %s", e->name);
		struct run r, h;

		RUN(&r, REAL_TABLE, e->name, "--help");
		if (r.rc != GC_EXIT_OK)
			fail_msg("%s --help: exit %d: %s", e->name, r.rc, r.err);
		assert_string_equal(r.err, "");
		assert_contains(r.out, usage);
		assert_contains(r.out, e->summary);
		for (size_t k = 0; e->opts && e->opts[k].name; k++) {
			char *opt = gc_xasprintf("--%s", e->opts[k].name);

			assert_contains(r.out, opt);
			assert_contains(r.out, e->opts[k].help);
			free(opt);
		}
		for (size_t k = 0; gc_cmd_global_opts[k].name; k++) {
			char *opt = gc_xasprintf("--%s", gc_cmd_global_opts[k].name);

			assert_contains(r.out, opt);
			free(opt);
		}
		/* `help NAME` prints the very same text */
		RUN(&h, REAL_TABLE, "help", e->name);
		assert_int_equal(h.rc, GC_EXIT_OK);
		assert_string_equal(h.out, r.out);
		run_free(&h);
		run_free(&r);
		free(usage);
	}
}

static void test_real_help_command(void **state)
{
	struct run r;

	(void)state;
	RUN(&r, REAL_TABLE, "help");
	assert_int_equal(r.rc, GC_EXIT_OK);
	for (size_t i = 0; i < gc_cmd_table_len; i++)
		assert_contains(r.out, gc_cmd_table[i]->summary);
	run_free(&r);

	RUN(&r, REAL_TABLE, "help", "val");
	assert_int_equal(r.rc, GC_EXIT_OK);
	assert_contains(r.out, "usage: gpucluster validate");
	run_free(&r);

	RUN(&r, REAL_TABLE, "help", "valdate");
	assert_int_equal(r.rc, GC_EXIT_USAGE);
	assert_contains(r.err, "did you mean 'validate'?");
	run_free(&r);

	RUN(&r, REAL_TABLE, "help", "validate", "version");
	assert_int_equal(r.rc, GC_EXIT_USAGE);
	run_free(&r);
}

static void test_real_version(void **state)
{
	static const char *const keys[] = { "libcurl", "openssl", "libyaml", "libssh2", "jansson" };
	struct run r;
	json_t *doc;
	json_error_t jerr;

	(void)state;
	RUN(&r, REAL_TABLE, "version", "-o", "json");
	assert_int_equal(r.rc, GC_EXIT_OK);
	doc = json_loads(r.out, 0, &jerr);
	if (!doc)
		fail_msg("version JSON does not parse: %s\n%s", jerr.text, r.out);
	assert_string_equal(json_string_value(json_object_get(doc, "version")), GC_VERSION);
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		const char *v = json_string_value(json_object_get(doc, keys[i]));

		if (!v || !v[0])
			fail_msg("no version for %s", keys[i]);
	}
	assert_string_equal(json_string_value(json_object_get(doc, "jansson")),
			    jansson_version_str());
	json_decref(doc);
	run_free(&r);

	RUN(&r, REAL_TABLE, "version");
	assert_int_equal(r.rc, GC_EXIT_OK);
	assert_contains(r.out, "gpucluster " GC_VERSION "\n");
	assert_contains(r.out, "jansson ");
	run_free(&r);

	RUN(&r, REAL_TABLE, "version", "extra");
	assert_int_equal(r.rc, GC_EXIT_USAGE);
	run_free(&r);
}

static void test_real_validate_missing(void **state)
{
	struct run r;
	char *dir = make_tmp();
	char *a = gc_xasprintf("%s/a.yaml", dir);
	char *b = gc_xasprintf("%s/b.yaml", dir);
	json_t *doc, *files, *f;
	json_error_t jerr;

	(void)state;
	RUN(&r, REAL_TABLE, "validate", a);
	assert_int_equal(r.rc, GC_EXIT_FAILURE);
	assert_string_equal(r.out, "");
	assert_contains(r.err, a);
	assert_contains(r.err, ": error: ");
	assert_contains(r.err, ": 1 error\n");
	run_free(&r);

	RUN(&r, REAL_TABLE, "validate", "-o", "json", a, b);
	assert_int_equal(r.rc, GC_EXIT_FAILURE);
	doc = json_loads(r.out, 0, &jerr);
	if (!doc)
		fail_msg("validate JSON does not parse: %s\n%s", jerr.text, r.out);
	files = json_object_get(doc, "files");
	assert_int_equal(json_array_size(files), 2);
	f = json_array_get(files, 1);
	assert_string_equal(json_string_value(json_object_get(f, "file")), b);
	assert_true(json_is_false(json_object_get(f, "valid")));
	assert_true(json_is_null(json_object_get(f, "spec")));
	assert_int_equal(json_array_size(json_object_get(f, "errors")), 1);
	f = json_array_get(json_object_get(f, "errors"), 0);
	assert_int_equal(json_integer_value(json_object_get(f, "line")), 0);
	assert_true(json_string_length(json_object_get(f, "message")) > 0);
	json_decref(doc);
	run_free(&r);

	assert_int_equal(rmdir(dir), 0);
	free(a);
	free(b);
	free(dir);
}

/* ---- output helpers --------------------------------------------------------------- */

static void test_output_diags(void **state)
{
	struct gc_output o;
	struct gc_diags d;
	struct gc_error err;
	char *text;
	size_t len;
	FILE *f;

	(void)state;
	f = open_memstream(&text, &len);
	gc_output_init(&o, f, f);
	gc_diags_init(&d, "c.yaml");
	gc_diag_add(&d, 7, 2, "tags", "second");
	gc_diag_add(&d, 3, 9, "name", "first \033]0;evil\007");
	gc_diag_add(&d, 0, 0, "", "whole file");
	gc_error_init(&err);
	gc_cmd_print_spec_errors(&o, "c.yaml", &d, &err);
	gc_diags_release(&d);

	/* no diagnostics: the error's message stands for the whole file */
	gc_diags_init(&d, "d.yaml");
	gc_error_set(&err, GC_EIO, "cannot read 'd.yaml'");
	gc_cmd_print_spec_errors(&o, "d.yaml", &d, &err);
	gc_diags_release(&d);
	gc_out_error(&o, "boom %d", 3);
	fclose(f);
	assert_string_equal(text,
			    "c.yaml: error: whole file\n"
			    "c.yaml:3:9: error: first \\x1b]0;evil\\x07\n"
			    "c.yaml:7:2: error: second\n"
			    "c.yaml: 3 errors\n"
			    "d.yaml: error: cannot read 'd.yaml'\n"
			    "d.yaml: 1 error\n"
			    "gpucluster: error: boom 3\n");
	free(text);
}

/* The advice after a failed apply or destroy follows the error's class (issue 18): "run it
 * again" only where a re-run can get past the failure, never for a configuration error. */
static void test_hint_after(void **state)
{
	static const struct {
		enum gc_errcode code;
		const char *hint; /* "" none */
	} cases[] = {
		{ GC_ETRANSIENT, "run 'gpucluster apply' again" },
		{ GC_ETHROTTLED, "run 'gpucluster apply' again" },
		{ GC_ETIMEOUT, "run 'gpucluster apply' again" },
		{ GC_ECAPACITY, "run 'gpucluster apply' again" },
		{ GC_EBADRESPONSE, "run 'gpucluster apply' again" },
		{ GC_EIDEMPOTENCY, "run 'gpucluster apply' again" },
		{ GC_EGENERIC, "run 'gpucluster apply' again" },
		{ GC_EINVALID, "a re-run cannot fix this" },
		{ GC_ENOTFOUND, "a re-run cannot fix this" },
		{ GC_EUNSUPPORTED, "a re-run cannot fix this" },
		{ GC_ETOOBIG, "a re-run cannot fix this" },
		{ GC_EAUTH, "" },
		{ GC_EQUOTA, "" },
		{ GC_ESPOTQUOTA, "" },
		{ GC_ELOCKED, "" },
		{ GC_ECANCELLED, "" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct gc_output o;
		struct gc_error err;
		char *text = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&text, &len);

		gc_output_init(&o, f, f);
		gc_error_set(&err, cases[i].code, "x");
		gc_cmd_hint_after(&o, &err, "apply");
		fclose(f);
		if (!*cases[i].hint)
			assert_string_equal(text, "");
		else if (!strstr(text, cases[i].hint))
			fail_msg("%s: '%s' has no '%s'", gc_strerror(cases[i].code), text,
				 cases[i].hint);
		/* never both */
		assert_false(strstr(text, "again") && strstr(text, "cannot fix"));
		free(text);
	}
}

/* An auth error that says "not allowed" names the permission to grant; one that says
 * "wrong credentials" sends the user to the credentials (issue 18). */
static void test_hint_auth(void **state)
{
	static const struct {
		const char *cloud, *code, *want;
	} cases[] = {
		{ "aws", "UnauthorizedOperation", "grant 'ec2:RunInstances'" },
		{ "alibaba", "Forbidden.RAM", "grant 'ecs:RunInstances'" },
		{ "tencent", "UnauthorizedOperation", "grant 'cvm:RunInstances'" },
		{ "aws", "AuthFailure", "check the credentials for aws" },
		{ "tencent", "AuthFailure.SignatureFailure", "check the credentials for tencent" },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct gc_output o;
		struct gc_error err;
		char *text = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&text, &len);

		gc_output_init(&o, f, f);
		gc_error_set(&err, GC_EAUTH, "RunInstances: %s: no", cases[i].code);
		gc_error_set_cloud(&err, cases[i].code, NULL, 403);
		gc_error_set_action(&err, "RunInstances");
		gc_cmd_hint_auth(&o, gc_provider_by_name(cases[i].cloud), &err);
		fclose(f);
		if (!strstr(text, cases[i].want))
			fail_msg("%s %s: '%s' has no '%s'", cases[i].cloud, cases[i].code, text,
				 cases[i].want);
		free(text);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_exact_and_prefix, setup),
		cmocka_unit_test(test_hint_after),
		cmocka_unit_test(test_hint_auth),
		cmocka_unit_test_setup(test_ambiguous_prefix, setup),
		cmocka_unit_test_setup(test_did_you_mean, setup),
		cmocka_unit_test_setup(test_no_args_and_help_overview, setup),
		cmocka_unit_test_setup(test_arg_counts, setup),
		cmocka_unit_test_setup(test_option_defaults, setup),
		cmocka_unit_test_setup(test_option_forms, setup),
		cmocka_unit_test_setup(test_double_dash_and_dash, setup),
		cmocka_unit_test_setup(test_option_errors, setup),
		cmocka_unit_test_setup(test_int_values, setup),
		cmocka_unit_test_setup(test_choice_values, setup),
		cmocka_unit_test_setup(test_global_flags_anywhere, setup),
		cmocka_unit_test_setup(test_log_levels, setup),
		cmocka_unit_test_setup(test_color_decision, setup),
		cmocka_unit_test_setup(test_color_through_dispatch, setup),
		cmocka_unit_test_setup(test_exit_codes_pass_through, setup),
		cmocka_unit_test_setup(test_interrupted, setup),
		cmocka_unit_test_setup(test_idle_text, setup),
		cmocka_unit_test_setup(test_needs_spec_missing, setup),
		cmocka_unit_test_setup(test_needs_spec_loaded, setup),
		cmocka_unit_test_setup(test_real_table_shape, setup),
		cmocka_unit_test_setup(test_real_help_for_every_command, setup),
		cmocka_unit_test_setup(test_real_help_command, setup),
		cmocka_unit_test_setup(test_real_version, setup),
		cmocka_unit_test_setup(test_real_validate_missing, setup),
		cmocka_unit_test_setup(test_output_diags, setup),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
