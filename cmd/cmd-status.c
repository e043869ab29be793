/*
 * cmd-status.c: `gpucluster status [FILE]` (docs/cli.md "status"): the cluster's nodes as
 * the cloud reports them, with an estimate of what each has cost so far.
 */
#include <stdbool.h>
#include <stdio.h>
#include <time.h>

#include <jansson.h>

#include "cmd/cluster.h"
#include "cmd/cmd.h"
#include "cmd/output.h"
#include "cmd/regions.h"
#include "core/engine.h"

static const struct gc_opt status_opts[] = {
	{ .name = NULL },
};

/* "in 3h12m (2026-11-27 01:00 UTC)", "overdue (...)", or "-" without a TTL. */
static void format_expiry(char *out, size_t size, int64_t expires_at, int64_t now)
{
	char in[32], when[24];
	time_t t = (time_t)expires_at;
	struct tm tm;

	if (!expires_at || !gmtime_r(&t, &tm) ||
	    !strftime(when, sizeof(when), "%Y-%m-%d %H:%M UTC", &tm)) {
		snprintf(out, size, "-");
		return;
	}
	gc_cmd_age_text(in, sizeof(in), expires_at, now); /* how long from now, here */
	if (expires_at <= now)
		snprintf(out, size, "overdue (%s)", when);
	else
		snprintf(out, size, "in %s (%s)", in, when);
}

static const char *or_dash(const char *s)
{
	return s && *s ? s : "-";
}

static int status_exec(struct gc_cmd_ctx *ctx)
{
	struct gc_engine e;
	struct gc_engine_opts opts;
	struct gc_instance_list live;
	struct gc_error err;
	struct gc_price_cache cache = { 0 };
	int64_t now = (int64_t)time(NULL);
	double total_hour = 0, total_so_far = 0;
	bool all_known = true;
	char currency[GC_CURRENCY_SIZE] = "USD"; /* the cloud's, once a price answers */
	json_t *nodes = NULL;
	int rc = GC_EXIT_FAILURE;

	gc_error_init(&err);
	gc_instance_list_init(&live);
	if (gc_cmd_engine(ctx, &e, &opts) < 0)
		return GC_EXIT_FAILURE;
	if (gc_engine_discover(&e, &live, &err) < 0) {
		gc_cmd_report_error(ctx, "status", &err);
		goto out;
	}
	nodes = json_array();
	if (ctx->out->format == GC_OUTPUT_TEXT && live.n > 0)
		gc_out_printf(ctx->out, ctx->out->out,
			      "%-12s %-20s %-14s %-12s %-9s %-11s %-15s %-15s %7s %8s %9s  %s\n",
			      "GROUP", "ID", "TYPE", "ZONE", "MARKET", "STATE", "PUBLIC-IP",
			      "PRIVATE-IP", "AGE", "PRICE/H", "COST", "EXPIRES");
	for (size_t i = 0; i < live.n; i++) {
		const struct gc_instance *in = &live.items[i];
		double price =
			gc_cmd_price(ctx->provider, &cache, in->type, in->zone, in->spot, currency);
		int64_t age = in->launch_time ? now - in->launch_time : 0;
		bool billed = in->state == GC_STATE_RUNNING || in->state == GC_STATE_PENDING;
		double so_far = price >= 0 ? price * (double)(age > 0 ? age : 0) / 3600.0 : -1;
		char agebuf[32], pbuf[32], cbuf[32], launched[21], expires[64];

		if (price < 0)
			all_known = false;
		else {
			total_so_far += so_far;
			if (billed)
				total_hour += price;
		}
		gc_cmd_age_text(agebuf, sizeof(agebuf), now, in->launch_time);
		format_expiry(expires, sizeof(expires), in->expires_at, now);
		gc_format_rfc3339(in->launch_time, launched);
		snprintf(pbuf, sizeof(pbuf), price >= 0 ? "%.3f" : "unknown", price);
		snprintf(cbuf, sizeof(cbuf), so_far >= 0 ? "%.2f" : "unknown", so_far);
		if (ctx->out->format == GC_OUTPUT_TEXT) {
			gc_out_printf(
				ctx->out, ctx->out->out,
				"%-12s %-20s %-14s %-12s %-9s %-11s %-15s %-15s %7s %8s %9s  %s\n",
				or_dash(in->group), in->id, or_dash(in->type), or_dash(in->zone),
				in->spot ? "spot" : "on-demand",
				or_dash(in->state_name ? in->state_name
						       : gc_instance_state_name(in->state)),
				or_dash(in->public_ip), or_dash(in->private_ip), agebuf, pbuf, cbuf,
				expires);
		}
		json_array_append_new(
			nodes,
			json_pack("{s:s?, s:s, s:s?, s:s?, s:s, s:s, s:s?, s:s?, s:s?, s:I, s:o, "
				  "s:o}",
				  "group", in->group, "id", in->id, "type", in->type, "zone",
				  in->zone, "market", in->spot ? "spot" : "on-demand", "state",
				  gc_instance_state_name(in->state), "public_ip", in->public_ip,
				  "private_ip", in->private_ip, "launch_time",
				  in->launch_time ? launched : NULL, "age_s", (json_int_t)age,
				  "usd_per_hour", price >= 0 ? json_real(price) : json_null(),
				  "usd_so_far", so_far >= 0 ? json_real(so_far) : json_null()));
		json_object_set_new(json_array_get(nodes, json_array_size(nodes) - 1), "currency",
				    price >= 0 ? json_string(currency) : json_null());
		/* RFC 3339 or null: the node's own deadline (gpucluster:expires-at) */
		json_object_set_new(json_array_get(nodes, json_array_size(nodes) - 1), "expires_at",
				    gc_out_json_time(in->expires_at));
	}
	if (ctx->out->format == GC_OUTPUT_JSON) {
		/* a partial sum is not the cost: unknown is null, never a smaller number */
		struct gc_cost cost;
		json_t *doc =
			json_pack("{s:s, s:s, s:s, s:o, s:{s:o, s:o, s:b, s:s}}", "cluster",
				  ctx->spec->name, "cloud", ctx->spec->provider.name, "region",
				  ctx->spec->provider.region, "nodes", nodes, "cost",
				  "usd_per_hour", all_known ? json_real(total_hour) : json_null(),
				  "usd_so_far", all_known ? json_real(total_so_far) : json_null(),
				  "known", all_known, "currency", currency);

		nodes = NULL;
		/* node-hours and money so far per type and market, as destroy ends with */
		gc_cmd_cost(ctx, &cache, &live, now, &cost);
		json_object_set_new(json_object_get(doc, "cost"), "so_far",
				    gc_cmd_cost_json(&cost));
		gc_cost_release(&cost);
		gc_out_json(ctx->out, doc);
		json_decref(doc);
	} else if (live.n == 0) {
		gc_out_printf(ctx->out, ctx->out->out, "Cluster '%s' has no instances in %s %s.\n",
			      ctx->spec->name, ctx->spec->provider.name,
			      ctx->spec->provider.region);
	} else if (all_known) {
		gc_out_printf(ctx->out, ctx->out->out,
			      "\n%zu node%s; %.2f %s/h now, about %.2f %s so far\n", live.n,
			      live.n == 1 ? "" : "s", total_hour, currency, total_so_far, currency);
	} else {
		gc_out_printf(ctx->out, ctx->out->out,
			      "\n%zu node%s; cost unknown (no price for some nodes)\n", live.n,
			      live.n == 1 ? "" : "s");
	}
	rc = GC_EXIT_OK;
out:
	json_decref(nodes);
	gc_price_cache_release(&cache);
	gc_instance_list_release(&live);
	gc_engine_release(&e);
	return rc;
}

const struct gc_cmd_entry gc_cmd_status = {
	.name = "status",
	.summary = "list the cluster's nodes with their state and cost",
	.usage = "[FILE]",
	.description = "Shows every instance carrying this cluster's tag: group, id, type,\n"
		       "zone, market, state, addresses, age, hourly price and an estimate of\n"
		       "what it has cost so far (hourly price times time since launch).",
	.opts = status_opts,
	.max_args = 1,
	.flags = GC_CMD_NEEDS_SPEC | GC_CMD_NEEDS_CREDS,
	.exec = status_exec,
};
