/*
 * cmd-bootstrap.c: `gpucluster bootstrap [FILE] [--from STEP] [--node NODE]...`.
 *
 * Runs the bootstrap steps (detect, driver, cuda, cudnn, container, the spec's own steps,
 * smoke) on the cluster's running nodes, as apply does after creating them, without
 * touching any instance. Each step leaves a marker keyed by its script and inputs on the
 * node, so a node that finished skips in one round trip per step and a changed input
 * (say bootstrap.cuda) reruns that step and the ones after it; --from reruns from a step
 * whatever the markers say.
 */
#include <stdlib.h>

#include <jansson.h>

#include "cmd/boot.h"
#include "cmd/cluster.h"
#include "cmd/cmd.h"
#include "cmd/output.h"

static const struct gc_opt bootstrap_opts[] = {
	{ .name = "from",
	  .type = GC_OPT_STRING,
	  .arg = "STEP",
	  .help = "rerun from this step, even where it is done" },
	{ .name = "node",
	  .type = GC_OPT_STRING,
	  .arg = "NODE",
	  .help = "only this node (an id, a prefix of one, or GROUP/N)",
	  .repeat = true },
	GC_CMD_SSH_OPTS,
	{ .name = NULL },
};

static int bootstrap_exec(struct gc_cmd_ctx *ctx)
{
	struct gc_engine e;
	struct gc_engine_opts eopts;
	struct gc_cmd_boot b;
	struct gc_cmd_boot_opts o = { .mode = GC_BOOT_FULL };
	int rc;

	if (gc_cmd_engine(ctx, &e, &eopts) < 0)
		return GC_EXIT_FAILURE;
	gc_cmd_boot_init(&b);
	o.from = gc_cmd_opt_str(ctx, "from");
	o.names = gc_cmd_opt_list(ctx, "node", &o.n_names);
	rc = gc_cmd_boot_run(ctx, &e, NULL, &o, &b);
	if (rc == GC_EXIT_OK && !b.ran) {
		gc_out_error(ctx->out, "cluster '%s' has no running nodes", ctx->spec->name);
		gc_out_hint(ctx->out, "'%s apply' creates them", GC_PROGRAM);
		rc = GC_EXIT_FAILURE;
	} else if (b.ran && ctx->out->format == GC_OUTPUT_JSON) {
		json_t *doc = gc_cmd_boot_json(&b);

		gc_out_json(ctx->out, doc);
		json_decref(doc);
	} else if (b.ran) {
		gc_cmd_boot_print(ctx, &b);
	}
	gc_cmd_boot_release(&b);
	gc_engine_release(&e);
	return rc;
}

const struct gc_cmd_entry gc_cmd_bootstrap = {
	.name = "bootstrap",
	.summary = "install the GPU stack on the running nodes and smoke-test them",
	.usage = "[FILE]",
	.description = "Runs the bootstrap steps on every running node, as apply does after\n"
		       "creating them: detect, driver, cuda, cudnn, container, the spec's own\n"
		       "steps (as step-NAME), then the smoke test. A step a node finished with\n"
		       "the same inputs is skipped; a changed input reruns that step and every\n"
		       "later one. Instances are neither created nor terminated.",
	.opts = bootstrap_opts,
	.min_args = 0,
	.max_args = 1,
	.flags = GC_CMD_NEEDS_SPEC | GC_CMD_NEEDS_CREDS,
	.exec = bootstrap_exec,
};
