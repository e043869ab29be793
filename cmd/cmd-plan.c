/*
 * cmd-plan.c: `gpucluster plan [FILE]` (docs/cli.md "plan"): what apply would do, changing
 * nothing; --detailed-exitcode (2: changes) lets CI branch on drift, as Terraform's does.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cmd/cluster.h"
#include "cmd/cmd.h"
#include "cmd/output.h"
#include "cmd/plan-render.h"
#include "core/buf.h"
#include "core/cidr.h"
#include "core/engine.h"
#include "core/plan.h"

static const struct gc_opt plan_opts[] = {
	{ .name = "detailed-exitcode",
	  .type = GC_OPT_FLAG,
	  .help = "exit 0 when there are no changes, 2 when there are, 1 on errors" },
	{ .name = "hours",
	  .type = GC_OPT_INT,
	  .arg = "N",
	  .help = "show what N hours of the planned cluster cost on-demand, on spot and reserved",
	  .min = 1,
	  .max = 100000 },
	{ .name = NULL },
};

/* SSH open to every address is allowed, but worth a word before anything is made. */
static void warn_world_open(struct gc_cmd_ctx *ctx)
{
	const struct gc_spec *spec = ctx->spec;
	struct gc_cidr c;

	for (size_t i = 0; spec && i < spec->ssh.n_allow_from; i++) {
		if (gc_cidr_parse(&c, spec->ssh.allow_from[i]) == 0 && c.prefix == 0) {
			gc_out_warn(
				ctx->out,
				"ssh.allow_from '%s' opens SSH (port %u) of every node to the "
				"whole internet: name your own ranges, or leave the key out for "
				"this machine's address",
				spec->ssh.allow_from[i], spec->ssh.port);
			return;
		}
	}
}

/* Fallback candidates over max_hourly_cost: apply skips them, which is worth knowing
 * before a capacity shortage makes it so. */
static void warn_cap(struct gc_cmd_ctx *ctx, const struct gc_plan *plan)
{
	double max = plan->max_hourly_cost;
	const char *cur = plan->currency;
	struct gc_buf list = GC_BUF_INIT(1024);

	/* a cluster over its cap is said in the plan itself (plan-render.c) */
	if (plan->over_cap || !plan->cost_worst_known || plan->cost_worst <= max || !(max > 0))
		goto out;
	for (size_t i = 0; i < plan->n_skips; i++) {
		const struct gc_plan_skip *k = &plan->skips[i];

		if (gc_buf_addf(
			    &list,
			    "%s%s %s in group '%s' (%u \xc3\x97 %.2f %s/h would take the cluster to %.2f %s/h)",
			    i ? ", " : "", k->type, k->spot ? "spot" : "on-demand", k->group,
			    k->count, k->price, cur, k->total, cur) < 0) {
			gc_buf_addstr(&list, ", ...");
			break;
		}
	}
	if (list.len)
		gc_out_warn(ctx->out,
			    "the worst case, %.2f %s/h, is over max_hourly_cost %.2f %s/h: apply "
			    "skips these fallback candidates: %s",
			    plan->cost_worst, cur, max, cur, list.data);
	else
		gc_out_warn(ctx->out,
			    "the worst case, %.2f %s/h, is over max_hourly_cost %.2f %s/h if "
			    "spot prices rise to their bound; apply checks each candidate's price "
			    "before launching it",
			    plan->cost_worst, cur, max, cur);
out:
	gc_buf_release(&list);
}

/* A kept node's expiry moves, but the cloud's own timer (set at launch) does not. */
static void warn_fixed_timer(struct gc_cmd_ctx *ctx, const struct gc_plan *plan)
{
	const struct gc_provider_ops *ops = ctx->spec ? ctx->spec->provider.ops : NULL;

	if (!plan->n_expiry || !ops || (ops->caps & GC_CAP_TTL_MOVES))
		return;
	gc_out_warn(ctx->out,
		    "lifecycle.ttl changed: the expires-at tag of %u running node%s moves, but "
		    "the power-off timer each node got at launch on %s does not; a node still "
		    "stops at its first expiry",
		    plan->n_expiry, plan->n_expiry == 1 ? "" : "s", ops->name);
}

/* A group allowed to mix types whose types carry different GPU models: a torchrun job
 * over two models runs at the slower one's pace, if it runs at all. */
static void warn_mixed_gpus(struct gc_cmd_ctx *ctx)
{
	const struct gc_spec *spec = ctx->spec;

	for (size_t i = 0; spec && ctx->provider && i < spec->n_groups; i++) {
		const struct gc_spec_group *g = &spec->groups[i];
		struct gc_type_facts first, f;
		struct gc_error err;

		if (!g->mixed_types || g->n_instance_types < 2)
			continue;
		gc_error_init(&err);
		if (gc_provider_instance_type(ctx->provider, g->instance_types[0], &first, &err))
			continue;
		for (size_t t = 1; t < g->n_instance_types; t++) {
			gc_error_init(&err);
			if (gc_provider_instance_type(ctx->provider, g->instance_types[t], &f,
						      &err) ||
			    strcmp(f.gpu_model, first.gpu_model) == 0)
				continue;
			gc_out_warn(ctx->out,
				    "group '%s' may mix GPU models (mixed_types: true): %s on %s, "
				    "%s on %s",
				    g->name, *first.gpu_model ? first.gpu_model : "no GPU",
				    g->instance_types[0], *f.gpu_model ? f.gpu_model : "no GPU",
				    g->instance_types[t]);
			break;
		}
	}
}

/* What a group's gpus resolved to: the pick, then the alternatives apply falls back to. */
static void show_gpu_picks(struct gc_cmd_ctx *ctx)
{
	const struct gc_spec *spec = ctx->spec;

	for (size_t i = 0; spec && i < spec->n_groups; i++) {
		const struct gc_spec_group *g = &spec->groups[i];
		struct gc_buf b = GC_BUF_INIT(2048);
		char want[64];

		if (!g->has_gpus || !g->gpus_prices)
			continue;
		gc_gpu_request_format(&g->gpus, want, sizeof(want));
		gc_buf_addf(&b, "Group %s: gpus %s (%s) ->", g->name, want,
			    g->market == GC_MARKET_ON_DEMAND ? "on-demand" : "spot");
		for (size_t t = g->gpus_first; t < g->n_instance_types; t++) {
			double price = g->gpus_prices[t - g->gpus_first];

			gc_buf_addf(&b, "%s %s",
				    t == g->gpus_first		     ? ""
					    : t == g->gpus_first + 1 ? "; alternatives:"
								     : ",",
				    g->instance_types[t]);
			if (price >= 0)
				gc_buf_addf(&b, " (%.4g %s/h)", price, g->gpus_currency);
			if (t == g->gpus_first)
				gc_buf_addstr(&b, " picked");
		}
		if (g->n_instance_types == g->gpus_first + 1)
			gc_buf_addstr(&b, "; no alternative");
		gc_out_printf(ctx->out, ctx->out->out, "%s\n", b.data);
		gc_buf_release(&b);
	}
}

/* Prints a built plan in the chosen format. */
int gc_cmd_show_plan(struct gc_cmd_ctx *ctx, const struct gc_plan *plan)
{
	struct gc_buf b = GC_BUF_INIT(0);
	int rc;

	if (ctx->out->format == GC_OUTPUT_JSON)
		rc = gc_plan_render_json(&b, plan, ctx->spec);
	else
		rc = gc_plan_render_text(&b, plan, ctx->spec, ctx->out->color_out);
	if (rc == 0)
		gc_out_puts(ctx->out, ctx->out->out, b.data);
	if (rc == 0 && ctx->out->format != GC_OUTPUT_JSON)
		show_gpu_picks(ctx);
	/* progress and questions follow on stderr: the plan must be on screen first */
	fflush(ctx->out->out);
	warn_world_open(ctx);
	warn_cap(ctx, plan);
	warn_fixed_timer(ctx, plan);
	warn_mixed_gpus(ctx);
	gc_buf_release(&b);
	return rc;
}

/* --hours N, reserved: the same nodes at the effective hourly price of a 1- and 3-year
 * reservation with no upfront fee, where the cloud's price API publishes it. */
static void show_reserved(struct gc_cmd_ctx *ctx, const struct gc_plan *plan, int64_t hours)
{
	double total[2] = { 0, 0 };
	bool known[2] = { true, true };
	char cur[GC_CURRENCY_SIZE] = "";

	for (size_t i = 0; i < plan->n_groups; i++) {
		const struct gc_plan_group *g = &plan->groups[i];
		char c[GC_CURRENCY_SIZE] = "";
		double price[2];
		struct gc_error err;

		if (!g->spec || g->want == 0)
			continue;
		gc_error_init(&err);
		if (gc_provider_reserved_price(ctx->provider, g->spec->instance_types[0], price, c,
					       &err) != 0) {
			if (err.code == GC_EUNSUPPORTED) {
				gc_out_printf(ctx->out, ctx->out->out,
					      "Reserved: %s's price API publishes no reserved "
					      "prices\n",
					      ctx->provider->ops->name);
				return;
			}
			known[0] = known[1] = false;
			continue;
		}
		for (int y = 0; y < 2; y++) {
			if (price[y] < 0 || (cur[0] && strcmp(cur, c) != 0))
				known[y] = false;
			total[y] += price[y] * g->want * (double)hours;
		}
		memcpy(cur, c, sizeof(c));
	}
	for (int y = 0; y < 2; y++) {
		char amount[64] = "-";

		if (known[y] && cur[0])
			snprintf(amount, sizeof(amount), "%.2f %s", total[y], cur);
		gc_out_printf(ctx->out, ctx->out->out,
			      "Reserved %s, no upfront, %lld hours: %s (the effective hourly "
			      "price; a reservation bills every hour of its term, used or not)\n",
			      y ? "3 years" : "1 year", (long long)hours, amount);
	}
}

/* --hours N: the planned nodes (each group's count, at its first type) for N hours at
 * today's on-demand and spot prices (docs/cli.md "plan"), and reserved. */
static void show_hours(struct gc_cmd_ctx *ctx, const struct gc_plan *plan)
{
	int64_t hours = gc_cmd_opt_int(ctx, "hours");
	struct gc_price_cache cache = { 0 };
	double total[2] = { 0, 0 };
	bool known[2] = { true, true };
	char cur[2][GC_CURRENCY_SIZE] = { "", "" };

	for (size_t i = 0; i < plan->n_groups; i++) {
		const struct gc_plan_group *g = &plan->groups[i];

		if (!g->spec || g->want == 0)
			continue;
		for (int spot = 0; spot < 2; spot++) {
			char c[GC_CURRENCY_SIZE] = "";
			double price = gc_cmd_price(ctx->provider, &cache,
						    g->spec->instance_types[0], NULL, spot, c);

			if (price < 0 || (cur[spot][0] && strcmp(cur[spot], c) != 0)) {
				known[spot] = false;
				continue;
			}
			memcpy(cur[spot], c, sizeof(c));
			total[spot] += price * g->want * (double)hours;
		}
	}
	gc_price_cache_release(&cache);
	for (int spot = 0; spot < 2; spot++) {
		char amount[64] = "-";

		if (known[spot] && cur[spot][0])
			snprintf(amount, sizeof(amount), "%.2f %s", total[spot], cur[spot]);
		gc_out_printf(ctx->out, ctx->out->out, "%s %lld hours: %s%s\n",
			      spot ? "On spot," : "On-demand,", (long long)hours, amount,
			      spot ? " (at today's spot price, which changes; the cloud may "
				     "interrupt a spot node at any time)"
				   : "");
	}
	show_reserved(ctx, plan, hours);
}

static int plan_exec(struct gc_cmd_ctx *ctx)
{
	struct gc_engine e;
	struct gc_engine_opts opts;
	struct gc_instance_list live;
	struct gc_plan plan;
	struct gc_error err;
	int rc = GC_EXIT_FAILURE, brc;

	gc_error_init(&err);
	gc_instance_list_init(&live);
	gc_plan_init(&plan);
	if (gc_cmd_engine(ctx, &e, &opts) < 0)
		return GC_EXIT_FAILURE;
	brc = gc_engine_plan(&e, &plan, &live, NULL, NULL, 0, &err);
	if (brc < 0 && err.code != GC_EQUOTA) {
		gc_cmd_report_error(ctx, "plan", &err);
		goto out;
	}
	gc_cmd_show_plan(ctx, &plan);
	if (gc_cmd_opt_given(ctx, "hours") && ctx->out->format != GC_OUTPUT_JSON)
		show_hours(ctx, &plan);
	if (brc < 0) {
		gc_cmd_report_error(ctx, NULL, &err);
		goto out;
	}
	rc = GC_EXIT_OK;
	if (gc_cmd_opt_given(ctx, "detailed-exitcode") && gc_plan_needs_action(&plan))
		rc = GC_EXIT_CHANGES;
out:
	gc_plan_release(&plan);
	gc_instance_list_release(&live);
	gc_engine_release(&e);
	return rc;
}

const struct gc_cmd_entry gc_cmd_plan = {
	.name = "plan",
	.summary = "show what apply would change, and what it would cost",
	.usage = "[FILE]",
	.description = "Compares the spec with the instances the cloud reports for this cluster\n"
		       "(found by their gpucluster:cluster tag) and shows what apply would\n"
		       "create, terminate and replace, with the hourly cost now and after.\n"
		       "Nothing is changed.",
	.opts = plan_opts,
	.max_args = 1,
	.flags = GC_CMD_NEEDS_SPEC | GC_CMD_NEEDS_CREDS,
	.exec = plan_exec,
};
