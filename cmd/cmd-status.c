/*
 * cmd-status.c: `gpucluster status [FILE]` (docs/cli.md "status"): the cluster's nodes as
 * the cloud reports them, with an estimate of what each has cost so far.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "cmd/boot.h"
#include "cmd/cluster.h"
#include "cmd/cmd.h"
#include "cmd/nccl.h"
#include "cmd/output.h"
#include "cmd/regions.h"
#include "cmd/status-mounts.h"
#include "core/alloc.h"
#include "core/buf.h"
#include "core/engine.h"
#include "core/gpustat.h"
#include "core/str.h"
#include "core/teardown.h"

static const struct gc_opt status_opts[] = {
	{ .name = "gpus",
	  .type = GC_OPT_FLAG,
	  .help = "each GPU's utilisation, memory, temperature, ECC errors and Xid events, "
		  "read on the nodes over SSH" },
	{ .name = "mounts",
	  .type = GC_OPT_FLAG,
	  .help = "each node's bucket mounts (the spec's mounts), read on the nodes over SSH" },
	GC_CMD_NODE_OPT,
	GC_CMD_SSH_OPTS,
	{ .name = NULL },
};

/* ---- --gpus: read on the nodes ---------------------------------------------------- */

/* nvidia-smi's answer, then the kernel log's Xid count ("?": root may not read it) */
#define GPUS_SCRIPT                                                                     \
	"nvidia-smi --query-gpu=" GC_GPUSTAT_QUERY " --format=csv,noheader,nounits || " \
	"exit $?\n"                                                                     \
	"if log=$(sudo -n dmesg 2>/dev/null); then\n"                                   \
	"  printf 'xid,%s\\n' \"$(grep -c 'NVRM: Xid' <<<\"$log\" || true)\"\n"         \
	"else\n"                                                                        \
	"  echo 'xid,?'\n"                                                              \
	"fi\n"

/* A node's answer parsed, or why there is none (*why: caller frees). */
static int node_gpus(const struct gc_session *b, size_t i, struct gc_gpustat_node *out, char **why)
{
	const struct gc_runner_node_result *nr = &b->report.nodes[i];
	const struct gc_runner_step_result *sr = &nr->steps[0];
	struct gc_error err;

	gc_error_init(&err);
	*why = NULL;
	memset(out, 0, sizeof(*out));
	if (sr->state != GC_STEP_OK) {
		/* what nvidia-smi said (its errors go to stdout), else the runner's error */
		const char *text = sr->out.len ? sr->out.data : sr->err.len ? sr->err.data : NULL;

		*why = gc_xstrdup(text				  ? text
					  : nr->err.code != GC_OK ? nr->err.message
								  : "no answer");
		(*why)[strcspn(*why, "\n")] = '\0';
		return -1;
	}
	if (gc_gpustat_parse(sr->out.data ? sr->out.data : "", out, &err) < 0) {
		*why = gc_xstrdup(err.message);
		return -1;
	}
	return 0;
}

static json_t *na_json(long v)
{
	return v == GC_GPUSTAT_NA ? json_null() : json_integer(v);
}

static json_t *gpus_json(const struct gc_session *b)
{
	json_t *nodes = json_array();

	for (size_t i = 0; i < b->boot.n_nodes; i++) {
		const struct gc_boot_node *bn = &b->boot.info[i];
		struct gc_gpustat_node st;
		char *why;
		json_t *n = json_pack("{s:s, s:s, s:s}", "id", bn->id, "group", bn->group, "node",
				      bn->label);
		json_t *gpus = json_array();

		if (node_gpus(b, i, &st, &why) == 0) {
			for (size_t k = 0; k < st.n; k++) {
				const struct gc_gpustat *g = &st.gpus[k];

				json_array_append_new(
					gpus,
					json_pack("{s:I, s:s, s:o, s:o, s:o, s:o, s:o}", "index",
						  (json_int_t)g->index, "name", g->name,
						  "utilization_pct", na_json(g->util_pct),
						  "memory_used_mib", na_json(g->mem_used_mib),
						  "memory_total_mib", na_json(g->mem_total_mib),
						  "temperature_c", na_json(g->temp_c),
						  "ecc_uncorrected", na_json(g->ecc_uncorrected)));
			}
		}
		json_object_set_new(n, "gpus", gpus);
		json_object_set_new(n, "xid_events", why ? json_null() : na_json(st.xid_events));
		json_object_set_new(n, "error", why ? json_string(why) : json_null());
		json_array_append_new(nodes, n);
		gc_gpustat_node_release(&st);
		free(why);
	}
	return json_pack("{s:o}", "nodes", nodes);
}

static void na_text(char *out, size_t size, long v, const char *unit)
{
	if (v == GC_GPUSTAT_NA)
		snprintf(out, size, "n/a");
	else
		snprintf(out, size, "%ld%s", v, unit);
}

static void gpus_print(struct gc_cmd_ctx *ctx, const struct gc_session *b)
{
	struct gc_output *o = ctx->out;

	gc_out_printf(o, o->out, "%s%-24s %3s  %-24s %5s %17s %5s %4s %4s%s\n",
		      gc_out_style(o, o->out, GC_STYLE_BOLD), "NODE", "GPU", "NAME", "UTIL",
		      "MEMORY (MIB)", "TEMP", "ECC", "XID",
		      gc_out_style(o, o->out, GC_STYLE_RESET));
	for (size_t i = 0; i < b->boot.n_nodes; i++) {
		const struct gc_boot_node *bn = &b->boot.info[i];
		struct gc_gpustat_node st;
		struct gc_buf line = GC_BUF_INIT(0);
		char *why;

		if (node_gpus(b, i, &st, &why) < 0) {
			gc_buf_addf(&line, "%-24s   -  cannot read the GPUs: %s\n", bn->label, why);
		} else if (st.n == 0) {
			gc_buf_addf(&line, "%-24s   -  no GPUs\n", bn->label);
		}
		for (size_t k = 0; k < st.n; k++) {
			const struct gc_gpustat *g = &st.gpus[k];
			char util[24], used[24], total[24], temp[24], ecc[24], xid[24], mem[56];

			na_text(util, sizeof(util), g->util_pct, "%");
			na_text(used, sizeof(used), g->mem_used_mib, "");
			na_text(total, sizeof(total), g->mem_total_mib, "");
			snprintf(mem, sizeof(mem), "%s / %s", used, total);
			na_text(temp, sizeof(temp), g->temp_c, "C");
			na_text(ecc, sizeof(ecc), g->ecc_uncorrected, "");
			na_text(xid, sizeof(xid), st.xid_events, "");
			gc_buf_addf(&line, "%-24s %3ld  %-24s %5s %17s %5s %4s", k ? "" : bn->label,
				    g->index, g->name, util, mem, temp, ecc);
			/* the node's Xid count, on its first line */
			gc_buf_addf(&line, k ? "\n" : " %4s\n", xid);
		}
		/* names come from the node: never let them drive the terminal */
		gc_out_puts_clean(o, o->out, line.data ? line.data : "");
		gc_buf_release(&line);
		gc_gpustat_node_release(&st);
		free(why);
	}
	if (b->n_failed)
		gc_out_printf(o, o->err, "status: could not read the GPUs of %zu of %zu node%s\n",
			      b->n_failed, b->boot.n_nodes, b->boot.n_nodes == 1 ? "" : "s");
}

static int status_gpus(struct gc_cmd_ctx *ctx)
{
	struct gc_session_opts so = { .mode = GC_BOOT_EXEC, .command = GPUS_SCRIPT };

	so.timeout_ms = 60000;
	so.names = gc_cmd_opt_list(ctx, "node", &so.n_names);
	return gc_cmd_boot_command(ctx, &so, NULL, gpus_json, gpus_print);
}

/* ---- lifecycle.idle: each node's time to its idle stop, read over SSH ----------------- */

/* the idle watcher's state (templates/bootstrap/idle.sh) and the node's clock */
#define IDLE_SCRIPT "cat ~/.gpucluster/idle/state 2>/dev/null; echo \"now=$(date +%s)\"\n"

/* One node's idle stop: *in_s the seconds to it (-1: unknown), *busy why it is busy now
 * ("" when idle; NULL when unknown; caller frees). */
struct idle_stop {
	int64_t in_s;
	int64_t idle_s; /* the node's own setting */
	char *busy;
};

/* KEY=VALUE's value in text, a copy; NULL when absent. */
static char *idle_field(const char *text, const char *key)
{
	size_t k = strlen(key);

	for (const char *l = text; l && *l;) {
		const char *nl = strchr(l, '\n');
		size_t len = nl ? (size_t)(nl - l) : strlen(l);

		if (len > k && strncmp(l, key, k) == 0 && l[k] == '=')
			return gc_xstrndup(l + k + 1, len - k - 1);
		l = nl ? nl + 1 : NULL;
	}
	return NULL;
}

static int64_t idle_num(const char *text, const char *key)
{
	char *v = idle_field(text, key);
	int64_t n = -1;

	if (!v || gc_parse_i64(v, 0, INT64_MAX, &n) < 0)
		n = -1;
	free(v);
	return n;
}

static struct idle_stop idle_stop_of(const struct gc_session *b, const char *id)
{
	struct idle_stop st = { -1, -1, NULL };

	for (size_t i = 0; b->ran && i < b->boot.n_nodes; i++) {
		const struct gc_runner_step_result *sr = &b->report.nodes[i].steps[0];
		const char *text = sr->out.data ? sr->out.data : "";
		int64_t since = idle_num(text, "since"), idle = idle_num(text, "idle_s");
		int64_t now = idle_num(text, "now");

		if (strcmp(b->boot.info[i].id, id) != 0 || sr->state != GC_STEP_OK || since < 0 ||
		    idle < 0 || now < 0)
			continue;
		st.busy = idle_field(text, "busy");
		st.idle_s = idle;
		st.in_s = since + idle > now ? since + idle - now : 0;
	}
	return st;
}

/* "in 28m", "30m after it goes idle (busy: gpu 90%)", "unknown (...)" */
static void idle_text(char *out, size_t size, const struct idle_stop *st)
{
	char in[32];

	if (st->in_s < 0 || !st->busy) {
		snprintf(out, size, "unknown (the node did not answer)");
		return;
	}
	if (st->busy[0]) {
		gc_cmd_age_text(in, sizeof(in), 1 + st->idle_s, 1);
		snprintf(out, size, "%s after it goes idle (busy: %s)", in, st->busy);
		return;
	}
	gc_cmd_age_text(in, sizeof(in), 1 + st->in_s, 1);
	snprintf(out, size, "in %s", in);
}

/* Reads the running nodes' idle state into b, an initialised session (nothing without
 * lifecycle.idle or nodes). */
static void idle_read(struct gc_cmd_ctx *ctx, struct gc_engine *e,
		      const struct gc_instance_list *live, struct gc_session *b)
{
	struct gc_session_opts so = { .mode = GC_BOOT_EXEC, .command = IDLE_SCRIPT };

	if (!ctx->spec->lifecycle.idle_s || !live->n)
		return;
	/* status must not hang on a node that does not answer: 10 s unless --ssh-wait */
	so.timeout_ms = 30000;
	so.ssh_wait_ms = 10000;
	gc_cmd_boot_run(ctx, e, live, &so, b);
}

/* ---- the nodes as the cloud reports them ------------------------------------------- */

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

/* The cluster's instances as status shows them: the live ones, and the ones the cloud
 * reclaimed (spot) while Describe still lists them, with its reason. */
static int status_discover(struct gc_engine *e, struct gc_instance_list *out, struct gc_error *err)
{
	size_t kept = 0;

	if (gc_teardown_discover(e->provider, e->log, e->spec->name, true, out, err) < 0)
		return -1;
	for (size_t i = 0; i < out->n; i++) {
		if (out->items[i].state == GC_STATE_TERMINATED && !out->items[i].preempted)
			gc_instance_release(&out->items[i]);
		else
			out->items[kept++] = out->items[i];
	}
	out->n = kept;
	return 0;
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
	json_t *nodes = NULL, *last;
	struct gc_session idle;
	int rc = GC_EXIT_FAILURE;

	if (gc_cmd_opt_given(ctx, "gpus"))
		return status_gpus(ctx);
	if (gc_cmd_opt_given(ctx, "mounts"))
		return gc_cmd_status_mounts(ctx);
	gc_error_init(&err);
	gc_instance_list_init(&live);
	gc_session_init(&idle);
	if (gc_cmd_engine(ctx, &e, &opts) < 0)
		return GC_EXIT_FAILURE;
	if (status_discover(&e, &live, &err) < 0) {
		gc_cmd_report_error(ctx, "status", &err);
		goto out;
	}
	idle_read(ctx, &e, &live, &idle);
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
			if (in->reason)
				gc_out_printf(ctx->out, ctx->out->out, "%-12s %-20s reason: %s%s\n",
					      "", "", in->reason,
					      in->preempted
						      ? " (spot capacity reclaimed by the cloud)"
						      : "");
		}
		/* lifecycle.idle: the time to the node's idle stop, beside its TTL */
		if (ctx->spec->lifecycle.idle_s && in->state == GC_STATE_RUNNING &&
		    ctx->out->format == GC_OUTPUT_TEXT) {
			struct idle_stop st = idle_stop_of(&idle, in->id);
			char text[160];

			idle_text(text, sizeof(text), &st);
			gc_out_printf(ctx->out, ctx->out->out, "%-12s %-20s idle stop: %s\n", "",
				      "", text);
			free(st.busy);
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
		/* the cloud's reason the node is going or gone, and whether it is a spot reclaim */
		json_object_set_new(json_array_get(nodes, json_array_size(nodes) - 1), "reason",
				    in->reason ? json_string(in->reason) : json_null());
		json_object_set_new(json_array_get(nodes, json_array_size(nodes) - 1), "preempted",
				    json_boolean(in->preempted));
		/* lifecycle.idle: {"in_s": seconds to the idle stop or null, "busy": why or null} */
		if (ctx->spec->lifecycle.idle_s && in->state == GC_STATE_RUNNING) {
			struct idle_stop st = idle_stop_of(&idle, in->id);
			bool idle_now = st.in_s >= 0 && st.busy && !st.busy[0];

			json_object_set_new(
				json_array_get(nodes, json_array_size(nodes) - 1), "idle_stop",
				json_pack("{s:o, s:o}", "in_s",
					  idle_now ? json_integer(st.in_s) : json_null(), "busy",
					  st.busy && st.busy[0] ? json_string(st.busy)
								: json_null()));
			free(st.busy);
		}
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
		/* the last NCCL check across nodes (smoke, report): its figures or null */
		json_object_set_new(doc, "nccl", json_null());
		if ((last = gc_cmd_nccl_last(e.state_dir)))
			json_object_set_new(doc, "nccl", last);
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
	if (ctx->out->format == GC_OUTPUT_TEXT && live.n > 0) {
		last = gc_cmd_nccl_last(e.state_dir);
		gc_cmd_nccl_print_last(ctx, last);
		json_decref(last);
	}
	rc = GC_EXIT_OK;
out:
	json_decref(nodes);
	gc_session_release(&idle);
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
		       "what it has cost so far (hourly price times time since launch).\n"
		       "With --gpus, reads each running node's GPUs over SSH instead: their\n"
		       "utilisation, memory, temperature, uncorrected ECC errors and the\n"
		       "kernel log's Xid events. With --mounts, each node's bucket mounts:\n"
		       "mounted or not, and why (exit 1 when one is missing).",
	.opts = status_opts,
	.max_args = 1,
	.flags = GC_CMD_NEEDS_SPEC | GC_CMD_NEEDS_CREDS,
	.exec = status_exec,
};
