/*
 * test-gha.c: GitHub Actions mode (cmd/gha.h), with exact expected text: the escaping of
 * workflow commands, annotations, masks, $GITHUB_OUTPUT entries (single and multi-line),
 * an apply's outputs and Markdown summary; then through the dispatcher with a fake
 * environment: secrets announced as masks before anything else (at a flush and before
 * the next log line), spec errors as annotations, nothing of it outside Actions; and the
 * bootstrap progress held back per node and printed as one ::group:: each.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "cmd/boot.h"
#include "cmd/cmd.h"
#include "cmd/gha.h"
#include "cmd/output.h"
#include "core/alloc.h"
#include "core/buf.h"
#include "core/hash.h"
#include "core/log.h"

/* ---- formatting ------------------------------------------------------------------ */

static void test_escape(void **state)
{
	struct gc_buf b = GC_BUF_INIT(0);

	(void)state;
	gc_gha_escape_data(&b, "50% done:\r\nnext, then");
	assert_string_equal(b.data, "50%25 done:%0D%0Anext, then");
	gc_buf_reset(&b);
	gc_gha_escape_property(&b, "C:\\a,b%\n");
	assert_string_equal(b.data, "C%3A\\a%2Cb%25%0A");
	gc_buf_reset(&b);
	gc_gha_escape_data(&b, NULL);
	assert_string_equal(b.data, "");
	gc_buf_release(&b);
}

static void test_annotation(void **state)
{
	struct gc_buf b = GC_BUF_INIT(0);

	(void)state;
	gc_gha_format_annotation(&b, "error", "specs/c.yaml", 4, 3,
				 "unknown key 'nme' (did you mean 'name'?)");
	assert_string_equal(b.data,
			    "::error file=specs/c.yaml,line=4,col=3::unknown key 'nme' "
			    "(did you mean 'name'?)\n");
	gc_buf_reset(&b);
	/* a message cannot end the command or start another; a name cannot add properties */
	gc_gha_format_annotation(&b, "error", "a,line=1:b.yaml", 2, 0, "bad\n::add-mask::x 100%");
	assert_string_equal(
		b.data, "::error file=a%2Cline=1%3Ab.yaml,line=2::bad%0A::add-mask::x 100%25\n");
	gc_buf_reset(&b);
	/* the whole file */
	gc_gha_format_annotation(&b, "error", "c.yaml", 0, 7, "cannot read 'c.yaml'");
	assert_string_equal(b.data, "::error file=c.yaml::cannot read 'c.yaml'\n");
	gc_buf_reset(&b);
	gc_gha_format_annotation(&b, "warning", NULL, 1, 1, "no file");
	assert_string_equal(b.data, "::warning::no file\n");
	gc_buf_release(&b);
}

static void test_mask(void **state)
{
	struct gc_buf b = GC_BUF_INIT(0);

	(void)state;
	gc_gha_format_mask(&b, "wJalrXUtnFEMI/K7MDENG+bPxRfiCY%");
	assert_string_equal(b.data, "::add-mask::wJalrXUtnFEMI/K7MDENG+bPxRfiCY%25\n");
	gc_buf_reset(&b);
	/* the runner masks line by line: each line of a multi-line secret on its own */
	gc_gha_format_mask(&b, "-----BEGIN-----\r\nbody\n\n-----END-----\n");
	assert_string_equal(b.data,
			    "::add-mask::-----BEGIN-----\n::add-mask::body\n"
			    "::add-mask::-----END-----\n");
	gc_buf_reset(&b);
	gc_gha_format_mask(&b, "");
	gc_gha_format_mask(&b, "\n\n");
	assert_string_equal(b.data, "");
	gc_buf_release(&b);
}

static void test_output(void **state)
{
	struct gc_buf b = GC_BUF_INIT(0), want = GC_BUF_INIT(0);
	char hex[GC_SHA256_HEX_LEN];
	const char *multi = "10.0.0.1 slots=8\n10.0.0.2 slots=8";

	(void)state;
	gc_gha_format_output(&b, "node-count", "4");
	gc_gha_format_output(&b, "ips", "");
	gc_gha_format_output(&b, "cost", NULL);
	assert_string_equal(b.data, "node-count=4\nips=\ncost=\n");
	gc_buf_reset(&b);

	/* a line break: the heredoc form, with a delimiter made from the value */
	gc_gha_format_output(&b, "hosts", multi);
	gc_sha256_hex(multi, strlen(multi), hex);
	gc_buf_addf(&want, "hosts<<gpucluster_EOF_%.16s\n%s\ngpucluster_EOF_%.16s\n", hex, multi,
		    hex);
	assert_string_equal(b.data, want.data);
	assert_null(strstr(multi, "gpucluster_EOF_"));
	gc_buf_reset(&b);
	/* a bare CR counts too: the runner splits lines on it */
	gc_gha_format_output(&b, "x", "a\rb");
	assert_true(strncmp(b.data, "x<<gpucluster_EOF_", 18) == 0);
	gc_buf_release(&b);
	gc_buf_release(&want);
}

static const struct gc_gha_node NODES[] = {
	{ .label = "workers/0",
	  .id = "i-1",
	  .type = "g5.xlarge",
	  .zone = "us-east-1a",
	  .public_ip = "203.0.113.7",
	  .private_ip = "10.0.0.1",
	  .usd_per_hour = 1.006,
	  .smoke_ran = true,
	  .smoke_ok = true,
	  .simulated = true,
	  .gpus = 1,
	  .gpu_model = "NVIDIA A10G",
	  .gemm_tflops = 70.0 },
	{ .label = "workers/1",
	  .id = "i-2",
	  .type = "g5.xlarge",
	  .zone = "us-east-1b",
	  .spot = true,
	  .private_ip = "10.0.0.2",
	  .usd_per_hour = 0.35,
	  .smoke_ran = true,
	  .gpus = 1,
	  .gpu_model = "NVIDIA A10G",
	  .gemm_tflops = -1,
	  .detail = "ecc: GPU 0 | 2 errors <x>" },
	{ .label = "head/0",
	  .id = "i-3",
	  .type = "m5.large",
	  .zone = "us-east-1a",
	  .public_ip = "203.0.113.9",
	  .usd_per_hour = -1,
	  .gpus = -1,
	  .gemm_tflops = -1 },
};

static void test_apply_outputs_and_summary(void **state)
{
	struct gc_gha_apply a = {
		.command = "apply",
		.cluster = "llm",
		.cloud = "aws",
		.region = "us-east-1",
		.have_plan = true,
		.create = 2,
		.replace = 1,
		.terminate = 1,
		.keep = 1,
		.nodes = NODES,
		.n_nodes = 2,
		.bootstrapped = true,
		.cost = 1.356,
		.expires_at = "2025-11-21T16:40:00Z",
	};
	struct gc_buf b = GC_BUF_INIT(0);

	(void)state;
	gc_gha_format_apply_outputs(&b, &a);
	assert_string_equal(b.data,
			    "cluster=llm\nnode-count=2\nips=203.0.113.7\nhourly-cost=1.3560\n");
	gc_buf_reset(&b);
	gc_gha_format_apply_summary(&b, &a);
	assert_string_equal(
		b.data,
		"### gpucluster apply: `llm` (aws us-east-1)\n"
		"\n"
		"- **Result:** ok, 2 nodes running\n"
		"- **Plan:** 2 to create (1 replacing), 1 to terminate, 1 kept\n"
		"- **Cost:** 1.36 USD/h for 2 nodes\n"
		"- **Expires:** 2025-11-21T16:40:00Z (the cloud terminates the nodes then)\n"
		"\n"
		"| Node | Instance | Type | Zone | Market | Public IP | Private IP | USD/h |\n"
		"| --- | --- | --- | --- | --- | --- | --- | --- |\n"
		"| workers/0 | i-1 | g5.xlarge | us-east-1a | on-demand | 203.0.113.7 | 10.0.0.1 | "
		"1.006 |\n"
		"| workers/1 | i-2 | g5.xlarge | us-east-1b | spot | - | 10.0.0.2 | 0.350 |\n"
		"\n"
		"#### Smoke test\n"
		"\n"
		"| Node | GPUs | Model | GEMM | Result |\n"
		"| --- | --- | --- | --- | --- |\n"
		"| workers/0 | 1 | NVIDIA A10G | 70.0 TFLOPS | ok (simulated) |\n"
		"| workers/1 | 1 | NVIDIA A10G | - | FAILED: ecc: GPU 0 \\| 2 errors &lt;x&gt; |\n"
		"\n");
	gc_buf_release(&b);
}

static void test_apply_summary_failed(void **state)
{
	struct gc_gha_apply a = {
		.command = "scale",
		.cluster = "llm",
		.cloud = "aws",
		.region = "us-east-1",
		.nodes = NODES + 2,
		.n_nodes = 1,
		.cost = -1,
		.error = "0 of 2 instances created in group 'w': capacity | gone\nin z-a",
	};
	struct gc_buf b = GC_BUF_INIT(0);

	(void)state;
	gc_gha_format_apply_outputs(&b, &a);
	assert_string_equal(b.data, "cluster=llm\nnode-count=1\nips=203.0.113.9\nhourly-cost=\n");
	gc_buf_reset(&b);
	gc_gha_format_apply_summary(&b, &a);
	assert_string_equal(
		b.data,
		"### gpucluster scale: `llm` (aws us-east-1)\n"
		"\n"
		"- **Result:** failed: 0 of 2 instances created in group 'w': capacity \\| gone "
		"in z-a\n"
		"- **Cost:** unknown (a price is missing)\n"
		"\n"
		"| Node | Instance | Type | Zone | Market | Public IP | Private IP | USD/h |\n"
		"| --- | --- | --- | --- | --- | --- | --- | --- |\n"
		"| head/0 | i-3 | m5.large | us-east-1a | on-demand | 203.0.113.9 | - | unknown |\n"
		"\n");
	gc_buf_reset(&b);

	/* nothing running */
	a.n_nodes = 0;
	a.cost = 0;
	a.error = NULL;
	gc_gha_format_apply_outputs(&b, &a);
	assert_string_equal(b.data, "cluster=llm\nnode-count=0\nips=\nhourly-cost=0.0000\n");
	gc_buf_reset(&b);
	gc_gha_format_apply_summary(&b, &a);
	assert_string_equal(b.data,
			    "### gpucluster scale: `llm` (aws us-east-1)\n"
			    "\n"
			    "- **Result:** ok, 0 nodes running\n"
			    "- **Cost:** 0.00 USD/h for 0 nodes\n"
			    "\n"
			    "No running nodes.\n"
			    "\n");
	gc_buf_release(&b);
}

/* ---- through the dispatcher ------------------------------------------------------ */

static const char *gha_on; /* GITHUB_ACTIONS in the fake environment */

static const char *fake_lookup(void *ctx, const char *name)
{
	(void)ctx;
	if (strcmp(name, "GITHUB_ACTIONS") == 0)
		return gha_on;
	return NULL;
}

static const struct gc_spec_env fake_env = { fake_lookup, NULL };

struct run {
	int rc;
	char *out, *err;
};

static void run(struct run *r, const struct gc_cmd_entry *const *table, size_t n, int argc,
		char **argv)
{
	struct gc_cmd_io io;
	size_t ol, el;

	memset(&io, 0, sizeof(io));
	io.out = open_memstream(&r->out, &ol);
	io.err = open_memstream(&r->err, &el);
	io.out_tty = io.err_tty = 0;
	io.env = &fake_env;
	r->rc = gc_cmd_dispatch(table, n, argc, argv, &io);
	fclose(io.out);
	fclose(io.err);
}

static void run_free(struct run *r)
{
	free(r->out);
	free(r->err);
}

static size_t at(const char *hay, const char *needle)
{
	const char *p = strstr(hay, needle);

	if (!p)
		fail_msg("expected to find \"%s\" in:\n%s", needle, hay);
	return (size_t)(p - hay);
}

/* As a cloud's credential chain does: secrets registered as they are found. */
static int exec_secrets(struct gc_cmd_ctx *ctx)
{
	gc_log_add_secret(ctx->log, "AKsecretValue-1/abc");
	gc_gha_flush_masks(ctx->gha); /* what the dispatcher does after opening a cloud */
	gc_out_printf(ctx->out, ctx->out->err, "visible line\n");
	gc_log_add_secret(ctx->log, "session-token-2");
	gc_log_warn(ctx->log, "refreshed session-token-2");
	return GC_EXIT_OK;
}

static const struct gc_cmd_entry t_secrets = {
	.name = "secrets",
	.summary = "registers secrets",
	.usage = "",
	.max_args = 0,
	.exec = exec_secrets,
};

static int exec_spec(struct gc_cmd_ctx *ctx)
{
	(void)ctx;
	return GC_EXIT_OK;
}

static const struct gc_cmd_entry t_spec = {
	.name = "spec",
	.summary = "loads a spec",
	.usage = "[FILE]",
	.max_args = 1,
	.flags = GC_CMD_NEEDS_SPEC,
	.exec = exec_spec,
};

static const struct gc_cmd_entry *const table[] = { &t_secrets, &t_spec };

static void test_masks(void **state)
{
	struct run r;
	char a0[] = "gpucluster", a1[] = "secrets";
	char *argv[] = { a0, a1, NULL };
	size_t first, visible, second, warn;

	(void)state;
	gha_on = "true";
	run(&r, table, 2, 2, argv);
	assert_int_equal(r.rc, 0);
	/* the first secret (and its base64 forms) before anything else */
	first = at(r.err, "::add-mask::AKsecretValue-1/abc\n");
	assert_int_equal(first, 0);
	visible = at(r.err, "visible line\n");
	second = at(r.err, "::add-mask::session-token-2\n");
	warn = at(r.err, "gpucluster: warning: refreshed ***\n");
	assert_true(first < visible);
	assert_true(visible < second);
	assert_true(second < warn);
	/* every line before "visible" is a mask: nothing else came first */
	for (const char *p = r.err; p < r.err + visible; p = strchr(p, '\n') + 1)
		assert_true(strncmp(p, "::add-mask::", 12) == 0);
	assert_string_equal(r.out, "");
	run_free(&r);

	/* outside Actions: no workflow commands at all */
	gha_on = "false";
	run(&r, table, 2, 2, argv);
	assert_int_equal(r.rc, 0);
	assert_null(strstr(r.err, "::"));
	assert_string_equal(r.err, "visible line\ngpucluster: warning: refreshed ***\n");
	run_free(&r);
	gha_on = NULL;
}

static void test_spec_annotations(void **state)
{
	char dir[] = "/tmp/gc-gha-XXXXXX", path[64], missing[64];
	char a0[] = "gpucluster", a1[] = "spec";
	char *argv[] = { a0, a1, path, NULL };
	struct run r;
	FILE *f;
	struct gc_buf want = GC_BUF_INIT(0);

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/c.yaml", dir);
	snprintf(missing, sizeof(missing), "%s/none.yaml", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("name: x\nprovider:\n  name: aws\n  region: us-east-1\nnode_groups:\n"
	      "  - name: w\n    count: 1\n    instance_types: [g5.xlarge]\n    cuont: 1\n",
	      f);
	fclose(f);

	gha_on = "true";
	run(&r, table, 2, 3, argv);
	assert_int_equal(r.rc, GC_EXIT_FAILURE);
	gc_buf_addf(&want,
		    "%s:9:5: error: unknown key 'cuont' in node_groups[0]; did you mean 'count'?\n"
		    "::error file=%s,line=9,col=5::unknown key 'cuont' in node_groups[0]; did you "
		    "mean 'count'?\n"
		    "%s: 1 error\n",
		    path, path, path);
	assert_string_equal(r.err, want.data);
	run_free(&r);

	/* a file that cannot be read: an annotation on the whole file */
	argv[2] = missing;
	run(&r, table, 2, 3, argv);
	assert_int_equal(r.rc, GC_EXIT_FAILURE);
	gc_buf_reset(&want);
	gc_buf_addf(&want, "\n::error file=%s::", missing);
	at(r.err, want.data);
	run_free(&r);

	gha_on = NULL;
	argv[2] = path;
	run(&r, table, 2, 3, argv);
	assert_null(strstr(r.err, "::error"));
	run_free(&r);
	gc_buf_release(&want);
	unlink(path);
	rmdir(dir);
}

/* ---- bootstrap progress as groups ------------------------------------------------ */

static void step_done(struct gc_cmd_progress *p, size_t node, size_t step, const char *name,
		      enum gc_step_state st, uint64_t ms)
{
	struct gc_runner_step_result res;
	struct gc_runner_event ev = { .phase = GC_RUN_STEP_DONE, .node = node, .step = step };

	memset(&res, 0, sizeof(res));
	res.state = st;
	res.exit_status = st == GC_STEP_FAILED ? 1 : 0;
	ev.step_name = name;
	ev.step_elapsed_ms = ms;
	ev.result = &res;
	gc_cmd_progress_event(p, &ev);
}

static void node_done(struct gc_cmd_progress *p, size_t node, const struct gc_error *err,
		      uint64_t ms)
{
	struct gc_runner_event ev = { .phase = GC_RUN_NODE_DONE, .node = node, .step = SIZE_MAX };

	ev.node_elapsed_ms = ms;
	ev.err = err;
	gc_cmd_progress_event(p, &ev);
}

static char *progress_run(bool gha)
{
	struct gc_boot_node info[2];
	/* idle-undo: not counted, silent where not needed, "removed" where it ran */
	struct gc_runner_step steps[3] = { { .name = "detect" },
					   { .name = "idle-undo", .undoes = "idle" },
					   { .name = "smoke" } };
	struct gc_boot boot;
	struct gc_cmd_io io;
	struct gc_cmd_ctx ctx;
	struct gc_output out;
	struct gc_cmd_progress p;
	struct gc_error failed;
	char *text = NULL;
	size_t len;

	char l0[] = "workers/0", l1[] = "workers/1", i0[] = "i-1", i1[] = "i-2";

	memset(info, 0, sizeof(info));
	info[0].label = l0;
	info[0].id = i0;
	info[1].label = l1;
	info[1].id = i1;
	memset(&boot, 0, sizeof(boot));
	boot.info = info;
	boot.n_nodes = 2;
	boot.steps = steps;
	boot.n_steps = 3;
	memset(&io, 0, sizeof(io));
	io.err = open_memstream(&text, &len);
	io.out = io.err;
	io.err_tty = io.out_tty = 0;
	gc_output_init(&out, io.out, io.err);
	out.gha = gha;
	memset(&ctx, 0, sizeof(ctx));
	ctx.out = &out;
	ctx.io = &io;
	gc_error_init(&failed);
	gc_error_set(&failed, GC_EGENERIC, "smoke failed");

	gc_cmd_progress_begin(&p, &ctx, &boot, "bootstrap");
	step_done(&p, 0, 0, "detect", GC_STEP_OK, 1500);
	step_done(&p, 1, 0, "detect", GC_STEP_OK, 500);
	step_done(&p, 1, 1, "idle-undo", GC_STEP_NOT_NEEDED, 0);
	step_done(&p, 1, 2, "smoke", GC_STEP_SKIPPED, 0);
	node_done(&p, 1, NULL, 2000);
	step_done(&p, 0, 1, "idle-undo", GC_STEP_OK, 300);
	step_done(&p, 0, 2, "smoke", GC_STEP_FAILED, 200);
	node_done(&p, 0, &failed, 3000);
	gc_cmd_progress_end(&p);
	fclose(io.err);
	return text;
}

static void test_progress_groups(void **state)
{
	char *text;

	(void)state;
	text = progress_run(true);
	assert_string_equal(text,
			    "bootstrap: 2 nodes, 2 steps\n"
			    "::group::workers/1 i-2: ok\n"
			    "  workers/1 i-2: detect ok (0.5s)\n"
			    "  workers/1 i-2: smoke skipped: done before\n"
			    "  workers/1 i-2: done in 2.0s (1 ran, 1 skipped)\n"
			    "::endgroup::\n"
			    "::group::workers/0 i-1: FAILED\n"
			    "  workers/0 i-1: detect ok (1.5s)\n"
			    "  workers/0 i-1: idle removed: the spec no longer wants it (0.3s)\n"
			    "  workers/0 i-1: smoke FAILED (exit 1, 0.2s)\n"
			    "  workers/0 i-1: FAILED after 3.0s\n"
			    "::endgroup::\n");
	free(text);

	/* outside Actions, the same lines as they happen */
	text = progress_run(false);
	assert_string_equal(text,
			    "bootstrap: 2 nodes, 2 steps\n"
			    "  workers/0 i-1: detect ok (1.5s)\n"
			    "  workers/1 i-2: detect ok (0.5s)\n"
			    "  workers/1 i-2: smoke skipped: done before\n"
			    "  workers/1 i-2: done in 2.0s (1 ran, 1 skipped)\n"
			    "  workers/0 i-1: idle removed: the spec no longer wants it (0.3s)\n"
			    "  workers/0 i-1: smoke FAILED (exit 1, 0.2s)\n"
			    "  workers/0 i-1: FAILED after 3.0s\n");
	free(text);
}

static void test_enabled(void **state)
{
	(void)state;
	assert_false(gc_gha_enabled(NULL));
	gha_on = "true";
	assert_true(gc_gha_enabled(&fake_env));
	gha_on = "TRUE";
	assert_false(gc_gha_enabled(&fake_env));
	gha_on = "";
	assert_false(gc_gha_enabled(&fake_env));
	gha_on = NULL;
	assert_false(gc_gha_enabled(&fake_env));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_escape),
		cmocka_unit_test(test_annotation),
		cmocka_unit_test(test_mask),
		cmocka_unit_test(test_output),
		cmocka_unit_test(test_apply_outputs_and_summary),
		cmocka_unit_test(test_apply_summary_failed),
		cmocka_unit_test(test_masks),
		cmocka_unit_test(test_spec_annotations),
		cmocka_unit_test(test_progress_groups),
		cmocka_unit_test(test_enabled),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
