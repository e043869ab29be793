/*
 * cmd-show-gpus.c: `gpucluster show-gpus [MODEL[:COUNT]]`: the GPU instance types of the
 * catalogue shipped with the binary (core/gpuspec.h), cheapest GPU-hour first, with what
 * --hours N of each would cost on demand. Needs no credentials; docs/internals/gpus.md.
 */
#include <stdlib.h>
#include <string.h>

#include "cmd/cmd.h"
#include "cmd/output.h"
#include "core/alloc.h"
#include "core/error.h"
#include "core/gpuspec.h"
#include "core/provider.h"

static const struct gc_opt show_gpus_opts[] = {
	{ .name = "cloud",
	  .type = GC_OPT_CHOICE,
	  .choices = gc_provider_names,
	  .arg = "CLOUD",
	  .help = "only this cloud's types (else every cloud's)" },
	{ .name = "hours",
	  .type = GC_OPT_INT,
	  .arg = "N",
	  .help = "show what N hours of one instance cost on demand",
	  .min = 1,
	  .max = 100000 },
	{ .name = NULL },
};

struct row {
	const struct gc_provider_ops *ops;
	const struct gc_gpu_offer *o;
};

static double per_gpu(const struct row *r)
{
	return r->o->price / r->o->gpus;
}

/* USD first, then by currency, then price per GPU-hour, then type: prices in two
 * currencies do not compare */
static int row_cmp(const void *a, const void *b)
{
	const struct row *x = a, *y = b;
	int xu = strcmp(x->o->currency, "USD") != 0, yu = strcmp(y->o->currency, "USD") != 0;
	int c = xu != yu ? xu - yu : strcmp(x->o->currency, y->o->currency);

	if (c != 0)
		return c;
	if (per_gpu(x) != per_gpu(y))
		return per_gpu(x) < per_gpu(y) ? -1 : 1;
	return strcmp(x->o->type, y->o->type);
}

static bool wanted(const struct gc_gpu_request *r, bool count_given, const struct gc_gpu_offer *o)
{
	if (!r)
		return true;
	if (strcmp(r->model, o->model) != 0 || (count_given && o->gpus != r->count))
		return false;
	if (r->memory_gib && o->gpu_memory_gib != r->memory_gib)
		return false;
	return o->vcpus >= r->min_vcpus && o->memory_gib >= r->min_memory_gib;
}

/* "A100:3": where the model is sold, for the error's advice */
static void hint_sold(struct gc_cmd_ctx *ctx, const struct gc_gpu_request *r)
{
	bool any = false;

	for (size_t i = 0; gc_provider_at(i); i++) {
		const struct gc_provider_ops *ops = gc_provider_at(i);

		for (const struct gc_gpu_offer *o = ops->facts->gpu_offers; o && o->type; o++)
			if (strcmp(o->model, r->model) == 0) {
				gc_out_hint(ctx->out, "%s sells %s:%u as %s (%u GB per GPU)",
					    ops->name, o->model, o->gpus, o->type,
					    o->gpu_memory_gib);
				any = true;
			}
	}
	if (!any)
		gc_out_hint(ctx->out, "no cloud of the catalogue sells %s", r->model);
}

static json_t *row_json(const struct row *r, int64_t hours)
{
	const struct gc_gpu_offer *o = r->o;
	json_t *j = json_pack("{s:s, s:s, s:s, s:i, s:i, s:i, s:i, s:s, s:f, s:f, s:s}", "cloud",
			      r->ops->name, "region", r->ops->facts->home_region, "type", o->type,
			      "gpus", (json_int_t)o->gpus, "gpu_memory_gib",
			      (json_int_t)o->gpu_memory_gib, "vcpus", (json_int_t)o->vcpus,
			      "memory_gib", (json_int_t)o->memory_gib, "interconnect",
			      o->interconnect, "on_demand_hourly", o->price, "per_gpu_hourly",
			      per_gpu(r), "currency", o->currency);

	json_object_set_new(j, "model", json_string(o->model));
	if (hours)
		json_object_set_new(j, "on_demand_cost", json_real(o->price * (double)hours));
	return j;
}

static int show_gpus_exec(struct gc_cmd_ctx *ctx)
{
	struct gc_gpu_request req;
	struct gc_error err = { 0 };
	const char *only = gc_cmd_opt_given(ctx, "cloud") ? gc_cmd_opt_str(ctx, "cloud") : NULL;
	int64_t hours = gc_cmd_opt_given(ctx, "hours") ? gc_cmd_opt_int(ctx, "hours") : 0;
	bool filter = ctx->n_args > 0, count_given = filter && strchr(ctx->args[0], ':');
	struct row *rows = NULL;
	size_t n = 0, alloc = 0;
	int rc = GC_EXIT_OK;

	if (filter && gc_gpu_request_parse(&req, ctx->args[0], &err) != 0) {
		gc_out_error(ctx->out, "%s", err.message);
		gc_out_hint(ctx->out, "write MODEL[-MEMGB][:COUNT], such as A100-80GB:8");
		return GC_EXIT_USAGE;
	}
	for (size_t i = 0; gc_provider_at(i); i++) {
		const struct gc_provider_ops *ops = gc_provider_at(i);

		if (only && strcmp(ops->name, only) != 0)
			continue;
		for (const struct gc_gpu_offer *o = ops->facts->gpu_offers; o && o->type; o++)
			if (wanted(filter ? &req : NULL, count_given, o)) {
				GC_ALLOC_GROW(rows, n + 1, alloc);
				rows[n++] = (struct row){ ops, o };
			}
	}
	if (n == 0) {
		gc_out_error(ctx->out, "no GPU type of the catalogue%s%s matches '%s'",
			     only ? " on " : "", only ? only : "", filter ? ctx->args[0] : "");
		if (filter)
			hint_sold(ctx, &req);
		rc = GC_EXIT_FAILURE;
		goto out;
	}
	qsort(rows, n, sizeof(*rows), row_cmp);
	if (ctx->globals.output == GC_OUTPUT_JSON) {
		json_t *doc = json_pack(
			"{s:s, s:s, s:[]}", "catalogue_date", GC_GPU_CATALOG_DATE, "prices",
			"on-demand list price in each cloud's home region", "offers");
		json_t *list = json_object_get(doc, "offers");

		if (hours)
			json_object_set_new(doc, "hours", json_integer(hours));
		for (size_t i = 0; i < n; i++)
			json_array_append_new(list, row_json(&rows[i], hours));
		if (gc_out_json(ctx->out, doc) < 0)
			rc = GC_EXIT_FAILURE;
		json_decref(doc);
		goto out;
	}
	gc_out_printf(ctx->out, ctx->out->out, "%-8s %-15s %-24s %-11s %5s %8s %-14s %11s %11s",
		      "CLOUD", "REGION", "TYPE", "GPUS", "VCPUS", "MEMORY", "INTERCONNECT",
		      "PER-HOUR", "PER-GPU-H");
	if (hours)
		gc_out_printf(ctx->out, ctx->out->out, " %12s", "COST");
	gc_out_printf(ctx->out, ctx->out->out, " CURRENCY\n");
	for (size_t i = 0; i < n; i++) {
		const struct gc_gpu_offer *o = rows[i].o;
		char gpus[32], mem[16];

		snprintf(gpus, sizeof(gpus), "%ux%s-%uGB", o->gpus, o->model, o->gpu_memory_gib);
		snprintf(mem, sizeof(mem), "%uGiB", o->memory_gib);
		gc_out_printf(ctx->out, ctx->out->out,
			      "%-8s %-15s %-24s %-11s %5u %8s %-14s %11.4f %11.4f",
			      rows[i].ops->name, rows[i].ops->facts->home_region, o->type, gpus,
			      o->vcpus, mem, *o->interconnect ? o->interconnect : "-", o->price,
			      per_gpu(&rows[i]));
		if (hours)
			gc_out_printf(ctx->out, ctx->out->out, " %12.2f", o->price * (double)hours);
		gc_out_printf(ctx->out, ctx->out->out, " %s\n", o->currency);
	}
	if (!ctx->globals.quiet)
		gc_out_printf(ctx->out, ctx->out->out,
			      "catalogue of %s shipped with %s: on-demand list prices in each "
			      "cloud's home region; spot is not shown (it moves, and an instance "
			      "may be reclaimed)\n",
			      GC_GPU_CATALOG_DATE, GC_PROGRAM);
out:
	free(rows);
	return rc;
}

const struct gc_cmd_entry gc_cmd_show_gpus = {
	.name = "show-gpus",
	.summary = "list GPU instance types by price per GPU-hour",
	.usage = "[MODEL[-MEMGB][:COUNT]]",
	.description = "Lists the GPU instance types of the catalogue shipped with gpucluster, "
		       "cheapest GPU-hour first within each currency: GPUs, memory, vCPUs, "
		       "interconnect and the on-demand price per hour. Needs no credentials.",
	.opts = show_gpus_opts,
	.min_args = 0,
	.max_args = 1,
	.exec = show_gpus_exec,
};
