/*
 * cmd-destroy.c: `gpucluster destroy [FILE]`.
 *
 * Terminates every instance carrying this cluster's tag, waits until the cloud reports
 * them terminated (a half torn-down cluster still bills), then deletes the key pairs and
 * security groups the cluster created. Nothing without our tags is touched, whatever its
 * name. The spec is only needed for the cluster's name, cloud and region: groups and
 * counts in it do not matter.
 */
#include <stdbool.h>
#include <stdio.h>

#include "cmd/cluster.h"
#include "cmd/cmd.h"
#include "cmd/output.h"
#include "core/engine.h"

static const struct gc_opt destroy_opts[] = {
	{ .name = "auto-approve",
	  .short_name = 'y',
	  .type = GC_OPT_FLAG,
	  .help = "destroy without asking for confirmation" },
	{ .name = "wait-timeout",
	  .type = GC_OPT_INT,
	  .arg = "SECONDS",
	  .help = "how long to wait for instances to terminate",
	  .def = "900",
	  .min = 1,
	  .max = 86400 },
	{ .name = NULL },
};

static int destroy_exec(struct gc_cmd_ctx *ctx)
{
	struct gc_engine e;
	struct gc_engine_opts opts;
	struct gc_engine_report report;
	struct gc_instance_list live;
	struct gc_lock lock = { .fd = -1 };
	struct gc_error err;
	char question[256];
	int rc = GC_EXIT_FAILURE;

	gc_error_init(&err);
	gc_instance_list_init(&live);
	gc_engine_report_init(&report);
	if (gc_cmd_engine(ctx, &e, &opts) < 0)
		return GC_EXIT_FAILURE;
	opts.wait_timeout_ms = (uint64_t)gc_cmd_opt_int(ctx, "wait-timeout") * 1000;
	if (gc_cmd_lock(ctx, &e, &lock) < 0)
		goto out;
	if (gc_engine_discover(&e, &live, &err) < 0) {
		gc_cmd_report_error(ctx, "destroy", &err);
		goto out;
	}
	if (ctx->out->format != GC_OUTPUT_JSON) {
		for (size_t i = 0; i < live.n; i++)
			gc_out_printf(ctx->out, ctx->out->out, "  - %s  %-10s %-12s %s\n",
				      live.items[i].id,
				      live.items[i].state_name
					      ? live.items[i].state_name
					      : gc_instance_state_name(live.items[i].state),
				      live.items[i].group ? live.items[i].group : "-",
				      live.items[i].type ? live.items[i].type : "-");
	}
	fflush(ctx->out->out);
	snprintf(question, sizeof(question),
		 "Destroy cluster '%s' (%s %s): terminate %zu instance%s and delete its key pair "
		 "and security group?",
		 ctx->spec->name, gc_cloud_name(ctx->spec->provider.cloud),
		 ctx->spec->provider.region, live.n, live.n == 1 ? "" : "s");
	if (!gc_cmd_confirm(ctx, question))
		goto out;
	if (gc_engine_destroy(&e, &opts, &report, &err) < 0) {
		gc_cmd_print_report(ctx, "destroy", &report);
		gc_cmd_report_error(ctx, NULL, &err);
		if (err.code != GC_ECANCELLED)
			gc_out_hint(ctx->out, "run '%s destroy' again to finish", GC_PROGRAM);
		rc = gc_cmd_exit_for(&err);
		goto out;
	}
	gc_cmd_print_report(ctx, "destroy", &report);
	rc = GC_EXIT_OK;
out:
	gc_lock_release(&lock);
	gc_engine_report_release(&report);
	gc_instance_list_release(&live);
	gc_engine_release(&e);
	return rc;
}

const struct gc_cmd_entry gc_cmd_destroy = {
	.name = "destroy",
	.summary = "terminate every instance of the cluster and delete what it created",
	.usage = "[FILE]",
	.description = "Finds the cluster's instances by their gpucluster:cluster tag,\n"
		       "terminates them, waits until the cloud reports them terminated, then\n"
		       "deletes the cluster's key pairs and security groups. Untagged and\n"
		       "foreign resources are never touched.",
	.opts = destroy_opts,
	.min_args = 0,
	.max_args = 1,
	.flags = GC_CMD_NEEDS_SPEC | GC_CMD_NEEDS_CREDS | GC_CMD_MUTATES,
	.exec = destroy_exec,
};
