/*
 * cmd-smoke.c: `gpucluster smoke [FILE]` (docs/cli.md "smoke"): the smoke test alone on
 * the running nodes, a row per node or the whole reports with -o json. With nccl in the
 * spec's smoke list and every node passing, the all-reduce across the nodes of each group
 * of several nodes follows (cmd/nccl.h): a row per group, "nccl_across" in JSON.
 */
#include <stdio.h>

#include "cmd/boot.h"
#include "cmd/cluster.h"
#include "cmd/cmd.h"
#include "cmd/nccl.h"
#include "cmd/output.h"

static const struct gc_opt smoke_opts[] = {
	GC_CMD_NODE_OPT,
	GC_CMD_SSH_OPTS,
	{ .name = NULL },
};

/* A row per link of a group: node 0 with each other node (docs/cli.md "smoke"). */
static void print_pairs(struct gc_cmd_ctx *ctx, const json_t *x)
{
	const json_t *p;
	size_t k;

	json_array_foreach(json_object_get(x, "pairs"), k, p)
	{
		const json_t *bw = json_object_get(p, "busbw_gbps");

		gc_out_printf(ctx->out, ctx->out->out,
			      "  link %s - %s: ", json_string_value(json_object_get(p, "peer")),
			      json_string_value(json_object_get(p, "node")));
		if (json_is_number(bw))
			gc_out_printf(ctx->out, ctx->out->out,
				      "bus bandwidth %.2f GB/s: ", json_number_value(bw));
		else
			gc_out_puts(ctx->out, ctx->out->out, "no result: ");
		gc_out_puts(ctx->out, ctx->out->out,
			    json_is_true(json_object_get(p, "ok")) ? "ok\n" : "FAILED\n");
	}
}

/* One row per group that ran the all-reduce across its nodes. */
static void print_across(struct gc_cmd_ctx *ctx, const json_t *doc)
{
	bool sim = json_is_true(json_object_get(doc, "simulated"));
	const json_t *g;
	size_t i;

	json_array_foreach(json_object_get(doc, "scaling"), i, g)
	{
		const json_t *x = json_object_get(g, "across_nodes");
		const json_t *bw = json_object_get(x, "busbw_gbps");

		if (!x)
			continue;
		gc_out_printf(ctx->out, ctx->out->out, "nccl across %s (%lld nodes): ",
			      json_string_value(json_object_get(g, "group")),
			      (long long)json_integer_value(json_object_get(g, "nodes")));
		if (json_is_string(json_object_get(x, "not_run"))) {
			gc_out_printf(ctx->out, ctx->out->out, "not run (%s)\n",
				      json_string_value(json_object_get(x, "not_run")));
			continue;
		}
		if (json_is_number(bw))
			gc_out_printf(ctx->out, ctx->out->out, "bus bandwidth %.2f GB/s, ",
				      json_number_value(bw));
		else
			gc_out_puts(ctx->out, ctx->out->out, "no result, ");
		gc_out_printf(ctx->out, ctx->out->out, "floor %.2f GB/s (%s): %s%s\n",
			      json_number_value(json_object_get(x, "floor_gbps")),
			      json_string_value(json_object_get(g, "fabric")),
			      json_is_true(json_object_get(x, "ok")) ? "ok" : "FAILED",
			      sim ? " (simulated)" : "");
		print_pairs(ctx, x);
	}
}

/* The smoke test, then (every node passed) the all-reduce across the nodes. */
static int smoke_with_nccl(struct gc_cmd_ctx *ctx, const struct gc_session_opts *o)
{
	struct gc_engine e;
	struct gc_engine_opts eopts;
	struct gc_session b;
	json_t *across = NULL;
	int rc;

	if (gc_cmd_engine(ctx, &e, &eopts) < 0)
		return GC_EXIT_FAILURE;
	gc_session_init(&b);
	rc = gc_cmd_boot_run(ctx, &e, NULL, o, &b);
	if (rc == GC_EXIT_OK && !b.ran) {
		gc_out_error(ctx->out, "cluster '%s' has no running nodes", ctx->spec->name);
		rc = GC_EXIT_FAILURE;
		goto out;
	}
	if (rc == GC_EXIT_OK)
		rc = gc_cmd_nccl_probe(ctx, &e, true, &across);
	if (ctx->out->format == GC_OUTPUT_JSON) {
		json_t *doc = gc_cmd_boot_json(&b);

		json_object_set(doc, "nccl_across",
				across ? json_object_get(across, "scaling") : json_null());
		gc_out_json(ctx->out, doc);
		json_decref(doc);
	} else {
		gc_cmd_boot_print(ctx, &b);
		if (across)
			print_across(ctx, across);
	}
	if (across && gc_cmd_nccl_errors(ctx, across))
		rc = GC_EXIT_FAILURE;
out:
	json_decref(across);
	gc_session_release(&b);
	gc_engine_release(&e);
	return rc;
}

static int smoke_exec(struct gc_cmd_ctx *ctx)
{
	/* forced: it tests again whatever passed before, and its outcome replaces the node's
	 * per-boot smoke marker (a failure removes it, so the next apply tests again) */
	struct gc_session_opts o = { .mode = GC_BOOT_SMOKE, .from = GC_STEP_SMOKE };

	o.names = gc_cmd_opt_list(ctx, "node", &o.n_names);
	if (!(ctx->spec->bootstrap.smoke & GC_SMOKE_NCCL) || o.n_names)
		return gc_cmd_boot_command(ctx, &o, NULL, NULL, NULL);
	return smoke_with_nccl(ctx, &o);
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
