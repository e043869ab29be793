/*
 * cmd-apply.c: `gpucluster apply [FILE]` (docs/cli.md "apply"); `scale` runs the same code
 * with count overrides. The cluster's local lock is held for the whole run so two applies
 * cannot interleave; rerunning a failed apply finishes the job because the engine's
 * client tokens make the same launches land on the same instances.
 */
#include <stdbool.h>
#include <stdlib.h>

#include <jansson.h>

#include "cmd/boot.h"
#include "cmd/cluster.h"
#include "cmd/cmd.h"
#include "cmd/gha.h"
#include "cmd/output.h"
#include "core/engine.h"
#include "core/plan.h"

static const struct gc_opt apply_opts[] = {
	GC_CMD_APPLY_OPTS,
	{ .name = NULL },
};

int gc_cmd_apply_run(struct gc_cmd_ctx *ctx, const char *const *names, const unsigned *counts,
		     size_t n)
{
	struct gc_engine e;
	struct gc_engine_opts opts;
	struct gc_engine_report report;
	struct gc_instance_list live;
	struct gc_plan plan;
	struct gc_lock lock = { .fd = -1 };
	struct gc_error err;
	int rc = GC_EXIT_FAILURE, brc;
	bool json = ctx->out->format == GC_OUTPUT_JSON, changes, failed = false;
	bool planned = false, reached = false; /* for the GitHub Actions report */
	json_t *doc = NULL;

	gc_error_init(&err);
	gc_instance_list_init(&live);
	gc_plan_init(&plan);
	gc_engine_report_init(&report);
	if (gc_cmd_engine(ctx, &e, &opts) < 0)
		return GC_EXIT_FAILURE;
	opts.wait_timeout_ms = (uint64_t)gc_cmd_opt_int(ctx, "wait-timeout") * 1000;
	opts.no_wait = gc_cmd_opt_given(ctx, "no-wait");
	if (gc_cmd_lock(ctx, &e, &lock) < 0)
		goto out;
	reached = true;
	if (gc_engine_plan(&e, &plan, &live, names, counts, n, &err) < 0) {
		planned = err.code == GC_EQUOTA;
		if (err.code == GC_EQUOTA && !json)
			gc_cmd_show_plan(ctx, &plan);
		gc_cmd_report_error(ctx, err.code == GC_EQUOTA ? NULL : "plan", &err);
		goto out;
	}
	planned = true;
	if (!json)
		gc_cmd_show_plan(ctx, &plan);
	changes = gc_plan_has_changes(&plan);
	/* run approves what it launches; taking nodes away still needs -y or a "yes" */
	if (changes && !(ctx->launches_approved && !plan.n_terminate && !plan.n_replace) &&
	    !gc_cmd_confirm(ctx, "Apply these changes?")) {
		gc_error_set(&err, GC_EGENERIC, "the changes were not confirmed");
		goto out;
	}
	if ((changes ? gc_engine_apply(&e, &plan, &opts, &report, &err)
		     : gc_engine_reconcile(&e, &plan, &err)) < 0) {
		failed = true;
		if (!json)
			gc_cmd_print_report(ctx, ctx->entry->name, &report);
		gc_cmd_report_error(ctx, NULL, &err);
		gc_cmd_hint_after(ctx->out, &err, ctx->entry->name);
		rc = gc_cmd_exit_for(&err);
		/* what did come up is still bootstrapped, unless nothing more can work */
		if (err.code == GC_ECANCELLED || err.code == GC_EAUTH) {
			if (json)
				gc_cmd_print_report(ctx, ctx->entry->name, &report);
			goto out;
		}
	}
	if (json) {
		gc_cmd_engine_progress_done();
		doc = gc_cmd_report_json(&report);
	} else if (changes && !failed) {
		gc_cmd_print_report(ctx, ctx->entry->name, &report);
	}
	brc = gc_cmd_apply_bootstrap(ctx, &e, &opts, doc, names, counts, n);
	if (doc)
		gc_out_json(ctx->out, doc);
	if (!failed)
		rc = brc;
out:
	if (ctx->gha && reached) {
		struct gc_error why = err;

		if (why.code == GC_OK && rc == GC_EXIT_INTERRUPTED)
			gc_error_set(&why, GC_ECANCELLED, "interrupted");
		else if (why.code == GC_OK && rc != GC_EXIT_OK)
			gc_error_set(&why, GC_EGENERIC,
				     "nodes failed the bootstrap or the smoke test (see the log)");
		gc_gha_report_apply(ctx, &e, planned ? &plan : NULL, &why);
	}
	json_decref(doc);
	gc_lock_release(&lock);
	gc_engine_report_release(&report);
	gc_plan_release(&plan);
	gc_instance_list_release(&live);
	gc_engine_release(&e);
	return rc;
}

static int apply_exec(struct gc_cmd_ctx *ctx)
{
	return gc_cmd_apply_run(ctx, NULL, NULL, 0);
}

const struct gc_cmd_entry gc_cmd_apply = {
	.name = "apply",
	.summary = "create and terminate instances until the cloud matches the spec",
	.usage = "[FILE]",
	.description = "Shows the plan, asks for confirmation, then creates missing instances\n"
		       "(in batches, with client tokens that make a re-run safe), waits until\n"
		       "they run, and terminates surplus and replaced ones. Only instances\n"
		       "carrying this cluster's tags are ever touched. Then every running node\n"
		       "is bootstrapped (driver, CUDA, cuDNN, containers, the spec's steps) and\n"
		       "smoke-tested; steps a node already finished are skipped.",
	.opts = apply_opts,
	.max_args = 1,
	.flags = GC_CMD_NEEDS_SPEC | GC_CMD_NEEDS_CREDS | GC_CMD_MUTATES,
	.exec = apply_exec,
};
