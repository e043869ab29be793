/*
 * cmd-jobs.c: `gpucluster jobs [FILE]`: the detached jobs (run --detach) on the cluster's
 * running nodes, with each node's state and exit code, read from ~/.gpucluster/jobs on
 * every node (cmd/job.h gives the layout).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cmd/boot.h"
#include "cmd/cmd.h"
#include "cmd/job.h"
#include "cmd/output.h"
#include "core/alloc.h"
#include "core/buf.h"

static const struct gc_opt jobs_opts[] = {
	GC_CMD_NODE_OPT,
	GC_CMD_SSH_OPTS,
	{ .name = NULL },
};

/* One line per job on the node: "ID STATE [EXIT]" (gc_job_state_fn). */
static const char jobs_loop[] = "for d in \"$HOME\"/.gpucluster/jobs/*/; do\n"
				"\t[ -d \"$d\" ] || continue\n"
				"\tid=${d%/}; id=${id##*/}\n"
				"\techo \"$id $(gc_job_state \"${d%/}\")\"\n"
				"done\n";

struct job_row {
	char id[48], state[16];
	int exit_code; /* -1: none */
	size_t node;
};

static int row_cmp(const void *a, const void *b)
{
	const struct job_row *x = a, *y = b;
	int c = strcmp(x->id, y->id);

	return c ? c : (x->node > y->node) - (x->node < y->node);
}

/* Every well-formed line of every node that answered, sorted by job then node. */
static struct job_row *collect(const struct gc_session *b, size_t *n_out)
{
	struct job_row *rows = NULL;
	size_t n = 0, cap = 0;

	for (size_t i = 0; i < b->boot.n_nodes; i++) {
		const struct gc_runner_step_result *sr = &b->report.nodes[i].steps[0];
		const char *p = sr->out.data, *end = p + sr->out.len;

		while (p < end) {
			const char *nl = memchr(p, '\n', (size_t)(end - p));
			size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
			char line[128], id[48], state[16];
			int code = -1;

			if (len < sizeof(line)) {
				memcpy(line, p, len);
				line[len] = '\0';
				if (sscanf(line, "%47s %15s %d", id, state, &code) >= 2 &&
				    gc_job_id_ok(id)) {
					if (n == cap) {
						cap = cap ? 2 * cap : 8;
						rows = gc_xreallocarray(rows, cap, sizeof(*rows));
					}
					snprintf(rows[n].id, sizeof(rows[n].id), "%s", id);
					snprintf(rows[n].state, sizeof(rows[n].state), "%s", state);
					rows[n].exit_code = strcmp(state, "exited") ? -1 : code;
					rows[n++].node = i;
				}
			}
			p += len + (nl != NULL);
		}
	}
	if (n)
		qsort(rows, n, sizeof(*rows), row_cmp);
	*n_out = n;
	return rows;
}

static json_t *jobs_json(const struct gc_session *b)
{
	size_t n;
	struct job_row *rows = collect(b, &n);
	json_t *a = json_array();

	for (size_t i = 0; i < n; i++)
		json_array_append_new(a,
				      json_pack("{s:s, s:s, s:s, s:s, s:o}", "job", rows[i].id,
						"node", b->boot.info[rows[i].node].label, "id",
						b->boot.info[rows[i].node].id, "state",
						rows[i].state, "exit_code",
						rows[i].exit_code >= 0
							? json_integer(rows[i].exit_code)
							: json_null()));
	free(rows);
	return json_pack("{s:o}", "jobs", a);
}

static void jobs_print(struct gc_cmd_ctx *ctx, const struct gc_session *b)
{
	struct gc_output *o = ctx->out;
	size_t n;
	struct job_row *rows = collect(b, &n);

	if (!n)
		gc_out_printf(o, o->err, "no jobs on the cluster's running nodes\n");
	else
		gc_out_printf(o, o->out, "%-24s %-16s %s\n", "JOB", "NODE", "STATE");
	for (size_t i = 0; i < n; i++) {
		gc_out_printf(o, o->out, "%-24s %-16s %s", rows[i].id,
			      b->boot.info[rows[i].node].label, rows[i].state);
		if (rows[i].exit_code >= 0)
			gc_out_printf(o, o->out, " %d", rows[i].exit_code);
		gc_out_puts(o, o->out, "\n");
	}
	for (size_t i = 0; i < b->boot.n_nodes; i++)
		if (b->report.nodes[i].err.code != GC_OK)
			gc_out_error(o, "%s (%s): %s", b->boot.info[i].label, b->boot.info[i].id,
				     b->report.nodes[i].err.message);
	free(rows);
}

static int jobs_exec(struct gc_cmd_ctx *ctx)
{
	struct gc_session_opts o = { .mode = GC_BOOT_EXEC };
	char *script = gc_xasprintf("%s%s", gc_job_state_fn, jobs_loop);
	int rc;

	o.command = script;
	o.timeout_ms = 60000;
	o.names = gc_cmd_opt_list(ctx, "node", &o.n_names);
	rc = gc_cmd_boot_command(ctx, &o, NULL, jobs_json, jobs_print);
	free(script);
	return rc;
}

const struct gc_cmd_entry gc_cmd_jobs = {
	.name = "jobs",
	.summary = "list the detached jobs (run --detach) with each node's state and exit code",
	.usage = "[FILE]",
	.description = "Reads the jobs that 'run --detach' started from every running node and\n"
		       "prints one line per job and node: the job's id, the node, and its state:\n"
		       "running, exited with its exit code, lost (no exit code and no process:\n"
		       "the node rebooted or the job was killed) or starting.",
	.opts = jobs_opts,
	.max_args = 1,
	.flags = GC_CMD_NEEDS_SPEC | GC_CMD_NEEDS_CREDS,
	.exec = jobs_exec,
};
