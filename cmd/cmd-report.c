/*
 * cmd-report.c: `gpucluster report [FILE]` (docs/cli.md "report"): the POC metrics of a
 * running cluster: single-GPU throughput per GPU model, all-reduce bus bandwidth at 1, 2,
 * 4, 8 GPUs in a node and across the nodes of each group with its fabric's floor, and
 * MTTR, as text, JSON (-o json) or Markdown (--markdown). One probe runs on every node
 * (cmd/nccl.h); a group whose nodes miss the floor fails the report (exit 1).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cmd/boot.h"
#include "cmd/cluster.h"
#include "cmd/cmd.h"
#include "cmd/gha.h"
#include "cmd/nccl.h"
#include "cmd/output.h"
#include "core/buf.h"

static const struct gc_opt report_opts[] = {
	{ .name = "markdown",
	  .type = GC_OPT_FLAG,
	  .help = "write Markdown (a GitHub step summary)" },
	GC_CMD_SSH_OPTS,
	{ .name = NULL },
};

/* A name from a node or the spec: control characters become '?', and in Markdown the
 * characters that would start markup are escaped, so a node cannot draw tables or links. */
static void name_text(struct gc_buf *b, const char *s, bool md)
{
	for (; s && *s; s++) {
		unsigned char c = (unsigned char)*s;

		if (c < 0x20 || c == 0x7f)
			gc_buf_addch(b, '?');
		else if (md && strchr("\\`*_[]<>|#!~", c))
			gc_buf_addf(b, "\\%c", c);
		else
			gc_buf_addch(b, (char)c);
	}
}

static void fig(struct gc_buf *b, const json_t *v, const char *unit)
{
	if (json_is_number(v))
		gc_buf_addf(b, "%.1f%s", json_number_value(v), unit);
	else
		gc_buf_addstr(b, "-");
}

/* A scaling efficiency as a percentage; "-" where there is none (one GPU). */
static void pct(struct gc_buf *b, const json_t *v)
{
	if (json_is_number(v))
		gc_buf_addf(b, "%.0f%%", 100 * json_number_value(v));
	else
		gc_buf_addstr(b, "-");
}

static void count(struct gc_buf *b, long long n, const char *what, bool md)
{
	if (md)
		gc_buf_addf(b, "%lld", n);
	else
		gc_buf_addf(b, "%lld %s%s", n, what, n == 1 ? "" : "s");
}

/* The links of a group's across-nodes row: node 0 with each other node, 2 nodes each. */
static void render_pairs(struct gc_buf *b, const json_t *x, bool md)
{
	const char *sep = md ? " | " : "  ";
	const json_t *p;
	size_t k;

	json_array_foreach(json_object_get(x, "pairs"), k, p)
	{
		gc_buf_addstr(b, md ? "| " : "    link ");
		name_text(b, json_string_value(json_object_get(p, "peer")), md);
		gc_buf_addstr(b, " - ");
		name_text(b, json_string_value(json_object_get(p, "node")), md);
		gc_buf_addf(b, "%s", md ? " | | 2 | " : sep);
		fig(b, json_object_get(p, "busbw_gbps"), md ? "" : " GB/s");
		gc_buf_addf(b, "%s%s%s\n", md ? " | | " : sep,
			    json_is_true(json_object_get(p, "ok")) ? "ok" : "MISSED",
			    md ? " |" : "");
	}
}

/* Text or Markdown (md) from the document: the same rows, in tables for Markdown. */
static void render(struct gc_buf *b, const json_t *doc, bool md)
{
	const char *sep = md ? " | " : "  ";
	bool sim = json_is_true(json_object_get(doc, "simulated"));
	const json_t *r, *g, *p, *mttr = json_object_get(doc, "mttr");
	size_t i, k;

	gc_buf_addstr(b, md ? "## gpucluster report: " : "gpucluster report: ");
	name_text(b, json_string_value(json_object_get(doc, "cluster")), md);
	gc_buf_addf(b, "%s\n\n",
		    sim ? " (simulated figures: gpucluster-sim, not measurements)" : "");
	gc_buf_addf(
		b, "%sSingle-GPU throughput\n%s", md ? "### " : "",
		md ? "\n| GPU model | GPUs | GEMM TFLOPS | D2D GB/s | H2D GB/s |\n|---|---|---|---|---|\n"
		   : "");
	if (!json_array_size(json_object_get(doc, "single_gpu")))
		gc_buf_addstr(b, "  not measured (no smoke program on the nodes: run smoke)\n");
	json_array_foreach(json_object_get(doc, "single_gpu"), i, r)
	{
		gc_buf_addstr(b, md ? "| " : "  ");
		name_text(b, json_string_value(json_object_get(r, "model")), md);
		gc_buf_addstr(b, sep);
		count(b, json_integer_value(json_object_get(r, "gpus")), "GPU", md);
		gc_buf_addstr(b, sep);
		fig(b, json_object_get(r, "gemm_tflops"), md ? "" : " TFLOPS GEMM");
		gc_buf_addstr(b, sep);
		fig(b, json_object_get(r, "d2d_gbps"), md ? "" : " GB/s D2D");
		gc_buf_addstr(b, sep);
		fig(b, json_object_get(r, "h2d_gbps"), md ? "" : " GB/s H2D");
		gc_buf_addstr(b, md ? " |\n" : "\n");
	}
	gc_buf_addf(
		b, "\n%sAll-reduce scaling (bus bandwidth)\n%s", md ? "### " : "",
		md ? "\n| group | GPUs | nodes | busbw GB/s | efficiency | floor |\n|---|---|---|---|---|---|\n"
		   : "");
	json_array_foreach(json_object_get(doc, "scaling"), i, g)
	{
		const char *name = json_string_value(json_object_get(g, "group"));
		const json_t *x = json_object_get(g, "across_nodes");

		json_array_foreach(json_object_get(g, "in_node"), k, p)
		{
			gc_buf_addstr(b, md ? "| " : "  ");
			name_text(b, name, md);
			gc_buf_addstr(b, sep);
			count(b, json_integer_value(json_object_get(p, "gpus")), "GPU", md);
			gc_buf_addstr(b, sep);
			count(b, 1, "node", md);
			gc_buf_addstr(b, sep);
			fig(b, json_object_get(p, "busbw_gbps"), md ? "" : " GB/s");
			gc_buf_addstr(b, sep);
			pct(b, json_object_get(p, "efficiency"));
			gc_buf_addstr(b, md ? " | |\n" : "\n");
		}
		if (!x)
			continue;
		gc_buf_addstr(b, md ? "| " : "  ");
		name_text(b, name, md);
		gc_buf_addstr(b, sep);
		count(b,
		      json_integer_value(json_object_get(g, "nodes")) *
			      json_integer_value(json_object_get(g, "gpus_per_node")),
		      "GPU", md);
		gc_buf_addstr(b, sep);
		count(b, json_integer_value(json_object_get(g, "nodes")), "node", md);
		gc_buf_addstr(b, sep);
		fig(b, json_object_get(x, "busbw_gbps"), md ? "" : " GB/s");
		gc_buf_addstr(b, sep);
		pct(b, json_object_get(x, "efficiency"));
		gc_buf_addf(b, "%s%s%.2f GB/s (%s) %s%s\n", sep, md ? "" : "floor ",
			    json_number_value(json_object_get(x, "floor_gbps")),
			    json_string_value(json_object_get(g, "fabric")),
			    json_is_string(json_object_get(x, "not_run"))    ? "not run"
				    : json_is_true(json_object_get(x, "ok")) ? "ok"
									     : "MISSED",
			    md ? " |" : "");
		render_pairs(b, x, md);
	}
	gc_buf_addf(b, "\n%sMTTR\n%s", md ? "### " : "", md ? "\n" : "  ");
	if (json_is_true(json_object_get(mttr, "measured")))
		gc_buf_addf(b, "%.0f s\n", json_number_value(json_object_get(mttr, "seconds")));
	else
		gc_buf_addstr(b, "not measured\n");
}

static int report_exec(struct gc_cmd_ctx *ctx)
{
	struct gc_engine e;
	struct gc_engine_opts eopts;
	json_t *doc = NULL;
	int rc;

	if (gc_cmd_engine(ctx, &e, &eopts) < 0)
		return GC_EXIT_FAILURE;
	rc = gc_cmd_nccl_probe(ctx, &e, false, &doc);
	if (rc == GC_EXIT_OK && !doc) {
		gc_out_error(ctx->out, "cluster '%s' has no running nodes", ctx->spec->name);
		rc = GC_EXIT_FAILURE;
	}
	if (!doc)
		goto out;
	if (ctx->out->format == GC_OUTPUT_JSON) {
		gc_out_json(ctx->out, doc);
	} else {
		struct gc_buf b = GC_BUF_INIT(GC_BUF_DEFAULT_MAX);

		render(&b, doc, gc_cmd_opt_given(ctx, "markdown"));
		fwrite(b.data, 1, b.len, ctx->out->out);
		gc_buf_release(&b);
	}
	if (ctx->gha) {
		struct gc_buf b = GC_BUF_INIT(GC_BUF_DEFAULT_MAX);

		render(&b, doc, true);
		gc_gha_append_summary(ctx, &b);
		gc_buf_release(&b);
	}
	if (gc_cmd_nccl_errors(ctx, doc))
		rc = GC_EXIT_FAILURE;
out:
	json_decref(doc);
	gc_engine_release(&e);
	return rc;
}

const struct gc_cmd_entry gc_cmd_report = {
	.name = "report",
	.summary = "report the POC metrics: GPU throughput, all-reduce scaling, MTTR",
	.usage = "[FILE]",
	.description = "Runs a probe on every running node: the smoke program's GEMM and copy\n"
		       "figures per GPU model, nccl-tests' all_reduce_perf on 1, 2, 4 and 8\n"
		       "GPUs of a node, and across the nodes of each group under mpirun, held\n"
		       "to the group's fabric floor (half its line rate); MTTR when measured.\n"
		       "Text, -o json, or --markdown for a GitHub step summary. Exit 1 when a\n"
		       "group misses its floor.",
	.opts = report_opts,
	.max_args = 1,
	.flags = GC_CMD_NEEDS_SPEC | GC_CMD_NEEDS_CREDS,
	.exec = report_exec,
};
