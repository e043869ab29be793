/*
 * cmd-bootstrap.c: `gpucluster bootstrap [FILE] [--from STEP] [--node NODE]...`
 * (docs/cli.md "bootstrap"): apply's bootstrap (boot.c) without touching any instance.
 */
#include "cmd/boot.h"
#include "cmd/cmd.h"

static const struct gc_opt bootstrap_opts[] = {
	{ .name = "from",
	  .type = GC_OPT_STRING,
	  .arg = "STEP",
	  .help = "rerun from this step, even where it is done" },
	GC_CMD_NODE_OPT,
	GC_CMD_SSH_OPTS,
	{ .name = NULL },
};

static int bootstrap_exec(struct gc_cmd_ctx *ctx)
{
	struct gc_session_opts o = { .mode = GC_BOOT_FULL };

	o.from = gc_cmd_opt_str(ctx, "from");
	o.names = gc_cmd_opt_list(ctx, "node", &o.n_names);
	return gc_cmd_boot_command(ctx, &o, "'" GC_PROGRAM " apply' creates them", NULL, NULL);
}

const struct gc_cmd_entry gc_cmd_bootstrap = {
	.name = "bootstrap",
	.summary = "install the GPU stack on the running nodes and smoke-test them",
	.usage = "[FILE]",
	.description = "Runs the bootstrap steps on every running node, as apply does after\n"
		       "creating them: the GPU stack's steps (docs/bootstrap.md), the spec's own\n"
		       "steps (as step-NAME), then the smoke test. A step a node finished with\n"
		       "the same inputs is skipped; a changed input reruns that step and every\n"
		       "later one. Instances are neither created nor terminated.",
	.opts = bootstrap_opts,
	.max_args = 1,
	.flags = GC_CMD_NEEDS_SPEC | GC_CMD_NEEDS_CREDS,
	.exec = bootstrap_exec,
};
