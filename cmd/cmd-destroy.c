/*
 * cmd-destroy.c: `gpucluster destroy [FILE]`, as docs/cli.md ("destroy") describes it:
 * only what carries our tags goes, and the wait for the terminations is part of it (a
 * half torn-down cluster still bills). The spec gives only the name, cloud and region.
 */
#include <stdbool.h>
#include <stdio.h>

#include "cmd/cluster.h"
#include "cmd/cmd.h"
#include "cmd/gha.h"
#include "cmd/output.h"
#include "core/buf.h"
#include "core/engine.h"
#include "core/sweep.h"
#include "core/teardown.h"

static const struct gc_opt destroy_opts[] = {
	{ .name = "auto-approve",
	  .short_name = 'y',
	  .type = GC_OPT_FLAG,
	  .help = "destroy without asking for confirmation" },
	GC_CMD_TERMINATE_WAIT_OPT,
	{ .name = "selector",
	  .type = GC_OPT_STRING,
	  .arg = "KEY=VALUE",
	  .help = "only instances tagged gpucluster:KEY=VALUE (say run-id=123)",
	  .repeat = true },
	{ .name = NULL },
};

static int destroy_exec(struct gc_cmd_ctx *ctx)
{
	struct gc_engine e;
	struct gc_engine_opts opts;
	struct gc_engine_report report;
	struct gc_instance_list live;
	struct gc_lock lock = { .fd = -1 };
	struct gc_selectors sel;
	struct gc_buf sel_text = GC_BUF_INIT(0);
	struct gc_error err;
	const char *const *sel_args;
	char question[512];
	size_t n_sel_args, n_selected = 0;
	bool reached = false;
	int rc = GC_EXIT_FAILURE;

	gc_error_init(&err);
	gc_selectors_init(&sel);
	sel_args = gc_cmd_opt_list(ctx, "selector", &n_sel_args);
	for (size_t i = 0; i < n_sel_args; i++) {
		if (gc_selectors_add(&sel, sel_args[i], &err) < 0) {
			gc_out_error(ctx->out, "%s", err.message);
			gc_out_hint(ctx->out, "run '%s destroy --help' for usage", GC_PROGRAM);
			gc_selectors_release(&sel);
			return GC_EXIT_USAGE;
		}
	}
	gc_selectors_format(&sel, &sel_text);
	gc_instance_list_init(&live);
	gc_engine_report_init(&report);
	if (gc_cmd_engine(ctx, &e, &opts) < 0) {
		gc_selectors_release(&sel);
		gc_buf_release(&sel_text);
		return GC_EXIT_FAILURE;
	}
	opts.wait_timeout_ms = (uint64_t)gc_cmd_opt_int(ctx, "wait-timeout") * 1000;
	if (gc_cmd_lock(ctx, &e, &lock) < 0)
		goto out;
	reached = true;
	if (gc_engine_discover(&e, &live, &err) < 0) {
		gc_teardown_doubt(e.provider, true, &err);
		gc_cmd_report_error(ctx, "destroy", &err);
		goto out;
	}
	for (size_t i = 0; i < live.n; i++) {
		if (!gc_selectors_match(&sel, live.items[i].tags, live.items[i].n_tags))
			continue;
		n_selected++;
		if (ctx->out->format != GC_OUTPUT_JSON)
			gc_out_printf(ctx->out, ctx->out->out, "  - %s  %-10s %-12s %s\n",
				      live.items[i].id,
				      live.items[i].state_name
					      ? live.items[i].state_name
					      : gc_instance_state_name(live.items[i].state),
				      live.items[i].group ? live.items[i].group : "-",
				      live.items[i].type ? live.items[i].type : "-");
	}
	fflush(ctx->out->out);
	if (sel.n)
		snprintf(question, sizeof(question),
			 "Destroy the instances of cluster '%s' (%s %s) tagged %s: terminate %zu "
			 "instance%s, and delete its key pair and security group if nothing else "
			 "is left?",
			 ctx->spec->name, ctx->spec->provider.name, ctx->spec->provider.region,
			 sel_text.data, n_selected, n_selected == 1 ? "" : "s");
	else
		snprintf(question, sizeof(question),
			 "Destroy cluster '%s' (%s %s): terminate %zu instance%s and delete its "
			 "key pair and security group?",
			 ctx->spec->name, ctx->spec->provider.name, ctx->spec->provider.region,
			 n_selected, n_selected == 1 ? "" : "s");
	if (!gc_cmd_confirm(ctx, question)) {
		gc_error_set(&err, GC_EGENERIC, "not confirmed");
		goto out;
	}
	if (gc_engine_destroy_selected(&e, sel.filters, sel.n, &opts, &report, &err) < 0) {
		gc_cmd_print_report(ctx, "destroy", &report);
		gc_cmd_report_error(ctx, NULL, &err);
		gc_cmd_hint_after(ctx->out, &err, "destroy");
		rc = gc_cmd_exit_for(&err);
		goto out;
	}
	gc_cmd_print_report(ctx, "destroy", &report);
	rc = GC_EXIT_OK;
out:
	if (ctx->gha && reached)
		gc_gha_report_destroy(ctx, sel_text.data, &report, &err);
	gc_selectors_release(&sel);
	gc_buf_release(&sel_text);
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
		       "foreign resources are never touched. With --selector, only the\n"
		       "instances carrying every selector tag are terminated (also ones that\n"
		       "appear while waiting), and the key pair and security group go only\n"
		       "when no instance of the cluster is left.",
	.opts = destroy_opts,
	.max_args = 1,
	.flags = GC_CMD_NEEDS_SPEC | GC_CMD_NEEDS_CREDS | GC_CMD_MUTATES,
	.exec = destroy_exec,
};
