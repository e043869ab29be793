/*
 * cmd-plan.c: `gpucluster plan [FILE]` (docs/cli.md "plan"): what apply would do, changing
 * nothing; --detailed-exitcode (2: changes) lets CI branch on drift, as Terraform's does.
 */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cmd/cluster.h"
#include "cmd/cmd.h"
#include "cmd/output.h"
#include "cmd/plan-render.h"
#include "cmd/regions.h"
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

/* Prints a built plan in the chosen format; hours (taken) goes into the JSON. */
static int show_plan(struct gc_cmd_ctx *ctx, const struct gc_plan *plan, json_t *hours)
{
	struct gc_buf b = GC_BUF_INIT(0);
	int rc;

	if (ctx->out->format == GC_OUTPUT_JSON)
		rc = gc_plan_render_json(&b, plan, ctx->spec, hours);
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

int gc_cmd_show_plan(struct gc_cmd_ctx *ctx, const struct gc_plan *plan)
{
	return show_plan(ctx, plan, NULL);
}

/* What --hours N of the planned nodes cost (docs/cli.md "plan"): each spec group's count at
 * its first type, [0] on demand, [1] on spot, [2] and [3] reserved for 1 and 3 years. A
 * total is known when every group's price is, in one currency; reserved is unknown where
 * the cloud has no reserved_price op (published false). */
struct hours_cost {
	int64_t hours;
	double total[4];
	bool known[4];
	char currency[4][GC_CURRENCY_SIZE];
	bool published;
};

static void hours_add(struct hours_cost *h, int k, double price, const char *cur, int64_t count)
{
	if (price < 0 || !cur[0] || (h->currency[k][0] && strcmp(h->currency[k], cur) != 0)) {
		h->known[k] = false;
		return;
	}
	snprintf(h->currency[k], sizeof(h->currency[k]), "%s", cur);
	h->total[k] += price * (double)count * (double)h->hours;
}

static void hours_cost(struct gc_cmd_ctx *ctx, const struct gc_plan *plan, struct hours_cost *h)
{
	struct gc_price_cache cache = { 0 };

	memset(h, 0, sizeof(*h));
	h->hours = gc_cmd_opt_int(ctx, "hours");
	h->published = true;
	for (int k = 0; k < 4; k++)
		h->known[k] = true;
	for (size_t i = 0; i < plan->n_groups; i++) {
		const struct gc_plan_group *g = &plan->groups[i];
		const char *type;
		char cur[4][GC_CURRENCY_SIZE] = { "", "", "", "" };
		double price[4] = { -1, -1, -1, -1 };
		struct gc_error err;

		if (!g->spec || g->want == 0)
			continue;
		type = g->spec->instance_types[0];
		for (int spot = 0; spot < 2; spot++)
			price[spot] =
				gc_cmd_price(ctx->provider, &cache, type, NULL, spot, cur[spot]);
		gc_error_init(&err);
		if (h->published &&
		    gc_provider_reserved_price(ctx->provider, type, price + 2, cur[2], &err) != 0) {
			h->published = err.code != GC_EUNSUPPORTED;
			price[2] = price[3] = -1;
		}
		memcpy(cur[3], cur[2], sizeof(cur[2]));
		for (int k = 0; k < 4; k++)
			hours_add(h, k, price[k], cur[k], g->want);
	}
	gc_price_cache_release(&cache);
	for (int k = 0; k < 4; k++) /* nothing priced: no currency to say it in */
		h->known[k] = h->known[k] && h->currency[k][0] && (k < 2 || h->published);
}

/* --hours N as text: on demand, on spot with its caveat, then reserved: a reservation with
 * no upfront fee, or a subscription paid for its term (facts->reserved_prepaid). */
static void show_hours(struct gc_cmd_ctx *ctx, const struct hours_cost *h)
{
	bool prepaid = ctx->provider->ops->facts->reserved_prepaid;

	for (int k = 0; k < 4; k++) {
		char amount[64] = "-";

		if (k >= 2 && !h->published) {
			gc_out_printf(ctx->out, ctx->out->out,
				      "Reserved: %s's price API publishes no reserved prices\n",
				      ctx->provider->ops->name);
			return;
		}
		if (h->known[k])
			snprintf(amount, sizeof(amount), "%.2f %s", h->total[k], h->currency[k]);
		if (k < 2)
			gc_out_printf(ctx->out, ctx->out->out, "%s %lld hours: %s%s\n",
				      k ? "On spot," : "On-demand,", (long long)h->hours, amount,
				      k ? " (at today's spot price, which changes; the cloud may "
					  "interrupt a spot node at any time)"
					: "");
		else
			gc_out_printf(ctx->out, ctx->out->out,
				      "%s %s, %s, %lld hours: %s (the effective hourly price; a %s "
				      "bills every hour of its term, used or not)\n",
				      prepaid ? "Subscription" : "Reserved",
				      k == 3 ? "3 years" : "1 year",
				      prepaid ? "paid upfront" : "no upfront", (long long)h->hours,
				      amount, prepaid ? "subscription" : "reservation");
	}
}

/* --hours N in plan -o json: the same figures as the text, rounded to cents as it shows
 * them; null where the text shows `-` (docs/cli.md "plan"). */
static json_t *hours_json(const struct gc_cmd_ctx *ctx, const struct hours_cost *h)
{
	static const char *const keys[4] = { "on_demand", "spot", "reserved_1y", "reserved_3y" };
	json_t *o = json_pack("{s:I}", "hours", (json_int_t)h->hours);

	json_object_set_new(o, "reserved_term",
			    h->published ? json_string(gc_cmd_reserved_term(ctx->provider->ops))
					 : json_null());
	for (int k = 0; k < 4; k++)
		json_object_set_new(o, keys[k],
				    h->known[k] ? json_pack("{s:f, s:s}", "cost",
							    round(h->total[k] * 100) / 100,
							    "currency", h->currency[k])
						: json_null());
	return o;
}

static int plan_exec(struct gc_cmd_ctx *ctx)
{
	struct gc_engine e;
	struct gc_engine_opts opts;
	struct gc_instance_list live;
	struct gc_plan plan;
	struct gc_error err;
	struct hours_cost h;
	bool hours = gc_cmd_opt_given(ctx, "hours"), json = ctx->out->format == GC_OUTPUT_JSON;
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
	if (hours)
		hours_cost(ctx, &plan, &h);
	show_plan(ctx, &plan, hours && json ? hours_json(ctx, &h) : NULL);
	if (hours && !json)
		show_hours(ctx, &h);
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
