/*
 * cmd-exec.c: `gpucluster exec [FILE] -- CMD...` (docs/cli.md "exec"): CMD on every
 * running node at once through the runner, each node's output as one block, in the
 * cluster's order, never interleaved.
 */
#include <stdio.h>
#include <stdlib.h>

#include <jansson.h>

#include "cmd/boot.h"
#include "cmd/ci-key.h"
#include "cmd/cmd.h"
#include "cmd/output.h"
#include "core/buf.h"

static const struct gc_opt exec_opts[] = {
	GC_CMD_NODE_OPT,
	{ .name = "timeout",
	  .type = GC_OPT_INT,
	  .arg = "SECONDS",
	  .help = "how long the command may run on a node",
	  .def = "1800",
	  .min = 1,
	  .max = 86400 },
	GC_CMD_SSH_OPTS,
	{ .name = NULL },
};

static void print_block(struct gc_cmd_ctx *ctx, const struct gc_session *b, size_t i)
{
	struct gc_output *o = ctx->out;
	const struct gc_boot_node *bn = &b->boot.info[i];
	const struct gc_runner_step_result *sr = &b->report.nodes[i].steps[0];
	bool ran = sr->state == GC_STEP_OK || sr->state == GC_STEP_FAILED;

	gc_out_printf(o, o->out, "%s== %s (%s) ", gc_out_style(o, o->out, GC_STYLE_BOLD), bn->id,
		      bn->label);
	if (ran && sr->exit_signal[0])
		gc_out_printf(o, o->out, "killed by signal %s", sr->exit_signal);
	else if (ran && sr->exit_status >= 0)
		gc_out_printf(o, o->out, "exit %d", sr->exit_status);
	else
		gc_out_puts(o, o->out, "did not run");
	gc_out_printf(o, o->out, " ==%s\n", gc_out_style(o, o->out, GC_STYLE_RESET));
	/* the command's own output, as it printed it, like ssh would show it */
	fwrite(sr->out.data, 1, sr->out.len, o->out);
	if (sr->out.len && sr->out.data[sr->out.len - 1] != '\n')
		fputc('\n', o->out);
	fwrite(sr->err.data, 1, sr->err.len, o->out);
	if (sr->err.len && sr->err.data[sr->err.len - 1] != '\n')
		fputc('\n', o->out);
	if (sr->out_truncated || sr->err_truncated)
		gc_out_puts(o, o->out, "(output cut at 4 MiB)\n");
}

/* Output is not necessarily UTF-8, which JSON strings must be: null then, not altered. */
static json_t *text_json(const struct gc_buf *b)
{
	json_t *s = json_stringn(b->data, b->len);

	return s ? s : json_null();
}

static json_t *exec_json(const struct gc_session *b)
{
	json_t *nodes = json_array();

	for (size_t i = 0; i < b->boot.n_nodes; i++) {
		const struct gc_boot_node *bn = &b->boot.info[i];
		const struct gc_runner_node_result *nr = &b->report.nodes[i];
		const struct gc_runner_step_result *sr = &nr->steps[0];
		bool ran = sr->state == GC_STEP_OK || sr->state == GC_STEP_FAILED;
		json_t *n = json_pack("{s:s, s:s, s:s, s:b}", "id", bn->id, "group", bn->group,
				      "node", bn->label, "ok", nr->err.code == GC_OK);

		json_object_set_new(n, "exit_status",
				    ran && sr->exit_status >= 0 ? json_integer(sr->exit_status)
								: json_null());
		json_object_set_new(n, "signal",
				    sr->exit_signal[0] ? json_string(sr->exit_signal)
						       : json_null());
		json_object_set_new(n, "stdout", text_json(&sr->out));
		json_object_set_new(n, "stderr", text_json(&sr->err));
		json_object_set_new(n, "error",
				    nr->err.code == GC_OK ? json_null()
							  : json_string(nr->err.message));
		json_array_append_new(nodes, n);
	}
	return json_pack("{s:o, s:I}", "nodes", nodes, "failed", (json_int_t)b->n_failed);
}

/* Each node's block, then what kept the command from running, then the count. */
static void exec_print(struct gc_cmd_ctx *ctx, const struct gc_session *b)
{
	for (size_t i = 0; i < b->boot.n_nodes; i++)
		print_block(ctx, b, i);
	for (size_t i = 0; i < b->boot.n_nodes; i++) {
		const struct gc_runner_node_result *nr = &b->report.nodes[i];

		if (nr->err.code != GC_OK && nr->steps[0].state != GC_STEP_FAILED)
			gc_out_error(ctx->out, "%s (%s): %s", b->boot.info[i].id,
				     b->boot.info[i].label, nr->err.message);
	}
	gc_ci_key_session_hint(ctx, b);
	if (b->n_failed)
		gc_out_printf(ctx->out, ctx->out->err, "exec: failed on %zu of %zu node%s\n",
			      b->n_failed, b->boot.n_nodes, b->boot.n_nodes == 1 ? "" : "s");
}

static int exec_exec(struct gc_cmd_ctx *ctx)
{
	struct gc_session_opts o = { .mode = GC_BOOT_EXEC };
	char *script = gc_cmd_user_script(ctx, "", "");
	int rc;

	o.command = script;
	o.timeout_ms = (uint64_t)gc_cmd_opt_int(ctx, "timeout") * 1000;
	o.names = gc_cmd_opt_list(ctx, "node", &o.n_names);
	rc = gc_cmd_boot_command(ctx, &o, NULL, exec_json, exec_print);
	free(script);
	return rc;
}

const struct gc_cmd_entry gc_cmd_exec = {
	.name = "exec",
	.summary = "run a command on every running node, output per node",
	.usage = "[FILE] -- CMD...",
	.description = "Runs CMD (its words joined with spaces, run by bash as the SSH user) on\n"
		       "every running node at once, then prints each node's output as one block:\n"
		       "a header with the node and the exit status, its standard output, then its\n"
		       "standard error. Exit 1 when it failed on any node.",
	.opts = exec_opts,
	.max_args = 1,
	.flags = GC_CMD_NEEDS_SPEC | GC_CMD_NEEDS_CREDS | GC_CMD_REMOTE_CMD | GC_CMD_NEEDS_CMD,
	.exec = exec_exec,
};
