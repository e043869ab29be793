/*
 * cmd-logs.c: `gpucluster logs [-f FILE] [--follow] [JOB]`: the output of a detached job
 * (run --detach) on every running node, each line behind the node's label as `run` shows
 * it. Each node keeps its rank's output in ~/.gpucluster/jobs/JOB/output.log (cmd/job.h);
 * --follow streams it until the job ends on every node.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/boot.h"
#include "cmd/cmd.h"
#include "cmd/job.h"
#include "cmd/output.h"
#include "core/alloc.h"
#include "core/buf.h"

static const struct gc_opt logs_opts[] = {
	{ .name = "file",
	  .short_name = 'f',
	  .type = GC_OPT_STRING,
	  .arg = "FILE",
	  .help = "the cluster spec",
	  .def = GC_CMD_DEFAULT_SPEC },
	{ .name = "follow",
	  .type = GC_OPT_FLAG,
	  .help = "keep streaming the output until the job ends on every node" },
	GC_CMD_NODE_OPT,
	GC_CMD_SSH_OPTS,
	{ .name = NULL },
};

/* gc_j: the job's folder (the latest job's when none is named); exit 3 when it is not on
 * the node. --follow reads on from where it was until the job has an exit code (read once
 * more then, so the last lines come too), or is lost (exit 4). */
static char *logs_script(const char *job, bool follow)
{
	return gc_xasprintf(
		"%sgc_d=\"$HOME/.gpucluster/jobs\"; gc_id='%s'\n"
		"[ -n \"$gc_id\" ] || gc_id=$(ls -1 \"$gc_d\" 2>/dev/null | sort -n | tail -n 1)\n"
		"gc_j=\"$gc_d/$gc_id\"\n"
		"if [ -z \"$gc_id\" ] || [ ! -d \"$gc_j\" ]; then\n"
		"\techo \"gpucluster: no job${gc_id:+ $gc_id} on this node\" >&2; exit 3\n"
		"fi\n"
		"touch \"$gc_j/output.log\"\n"
		"[ %d = 1 ] || exec cat \"$gc_j/output.log\"\n"
		"gc_off=0\n"
		"while :; do\n"
		"\tgc_st=$(gc_job_state \"$gc_j\")\n"
		"\tgc_sz=$(stat -c %%s \"$gc_j/output.log\")\n"
		"\tif [ \"$gc_sz\" -gt \"$gc_off\" ]; then\n"
		"\t\ttail -c +$((gc_off + 1)) \"$gc_j/output.log\" | head -c $((gc_sz - gc_off))\n"
		"\t\tgc_off=$gc_sz\n"
		"\tfi\n"
		"\tcase $gc_st in\n"
		"\texited*) exit 0 ;;\n"
		"\tlost) echo \"gpucluster: job $gc_id is lost on this node (no exit code, no "
		"process)\" >&2; exit 4 ;;\n"
		"\tesac\n"
		"\tsleep 0.2\n"
		"done\n",
		gc_job_state_fn, job, follow);
}

struct logs_state {
	struct gc_cmd_ctx *ctx;
	const struct gc_boot *boot;
	int width;
};

static int logs_prepare(void *arg, struct gc_session *s, struct gc_error *err)
{
	struct logs_state *ls = arg;

	(void)err;
	ls->boot = &s->boot;
	for (size_t i = 0; i < s->boot.n_nodes; i++) {
		int w = (int)strlen(s->boot.info[i].label);

		if (w > ls->width)
			ls->width = w;
	}
	return 0;
}

/* One line, as `run` shows them (gc_job_print_line). */
static void logs_line(void *arg, const struct gc_runner_line *l)
{
	struct logs_state *ls = arg;

	gc_job_print_line(ls->ctx->out, ls->boot, ls->width, l);
}

static void logs_print(struct gc_cmd_ctx *ctx, const struct gc_session *b)
{
	for (size_t i = 0; i < b->boot.n_nodes; i++) {
		const struct gc_runner_node_result *nr = &b->report.nodes[i];

		if (nr->err.code != GC_OK && nr->steps[0].state != GC_STEP_FAILED)
			gc_out_error(ctx->out, "%s (%s): %s", b->boot.info[i].label,
				     b->boot.info[i].id, nr->err.message);
	}
}

static int logs_exec(struct gc_cmd_ctx *ctx)
{
	struct gc_session_opts o = { .mode = GC_BOOT_EXEC };
	struct logs_state ls = { .ctx = ctx };
	const char *job = ctx->n_args ? ctx->args[0] : "";
	char *script;
	int rc;

	if (*job && !gc_job_id_ok(job)) {
		gc_out_error(ctx->out, "'%s' is not a job id: '%s jobs' lists them", job,
			     GC_PROGRAM);
		return GC_EXIT_USAGE;
	}
	if (ctx->out->format == GC_OUTPUT_JSON) {
		gc_out_error(ctx->out, "'logs' has no JSON output: its output is the job's");
		return GC_EXIT_USAGE;
	}
	script = logs_script(job, gc_cmd_opt_given(ctx, "follow"));
	o.command = script;
	o.timeout_ms = (uint64_t)30 * 24 * 3600 * 1000;
	o.names = gc_cmd_opt_list(ctx, "node", &o.n_names);
	o.prepare = logs_prepare;
	o.prepare_ctx = &ls;
	o.cb.output = logs_line;
	o.cb.output_ctx = &ls;
	rc = gc_cmd_boot_command(ctx, &o, NULL, NULL, logs_print);
	free(script);
	return rc;
}

const struct gc_cmd_entry gc_cmd_logs = {
	.name = "logs",
	.summary = "show (--follow: stream) a detached job's output from every node",
	.usage = "[-f FILE] [--follow] [JOB]",
	.description =
		"Shows the output of the job JOB that 'run --detach' started (the latest one\n"
		"when JOB is left out) from every running node, each line behind the node's\n"
		"label; each node keeps its rank's output. With --follow the output streams\n"
		"until the job ends on every node. Exit 1 when a node has no such job.",
	.opts = logs_opts,
	.max_args = 1,
	.flags = GC_CMD_NEEDS_SPEC | GC_CMD_NEEDS_CREDS | GC_CMD_SPEC_OPT,
	.exec = logs_exec,
};
