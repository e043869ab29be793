/*
 * cmd-smoke.c: `gpucluster smoke [FILE]` (docs/cli.md "smoke"): the smoke test alone on
 * the running nodes, a row per node or the whole reports with -o json.
 */
#include "cmd/boot.h"
#include "cmd/cmd.h"

static const struct gc_opt smoke_opts[] = {
	GC_CMD_NODE_OPT,
	GC_CMD_SSH_OPTS,
	{ .name = NULL },
};

static int smoke_exec(struct gc_cmd_ctx *ctx)
{
	/* forced: it tests again whatever passed before, and its outcome replaces the node's
	 * per-boot smoke marker (a failure removes it, so the next apply tests again) */
	struct gc_session_opts o = { .mode = GC_BOOT_SMOKE, .from = GC_STEP_SMOKE };

	o.names = gc_cmd_opt_list(ctx, "node", &o.n_names);
	return gc_cmd_boot_command(ctx, &o, NULL, NULL, NULL);
}

const struct gc_cmd_entry gc_cmd_smoke = {
	.name = "smoke",
	.summary = "run the GPU smoke test on the running nodes",
	.usage = "[FILE]",
	.description = "Checks every running node: nvidia-smi answers, the GPU count and model\n"
		       "match the instance type, no uncorrectable ECC errors or critical Xids,\n"
		       "the CUDA program's copy bandwidths and GEMM throughput, and containers\n"
		       "that see every GPU. One row per node; exit 1 when any check fails.",
	.opts = smoke_opts,
	.max_args = 1,
	.flags = GC_CMD_NEEDS_SPEC | GC_CMD_NEEDS_CREDS,
	.exec = smoke_exec,
};
