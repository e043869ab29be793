/*
 * cmd-list.c: `gpucluster list` (docs/cli.md "list"): every cluster of this account, found
 * by our tags in every region of each cloud there are credentials for, with what it runs
 * and costs now, and its idle autostop with the nodes that stopped themselves. It needs no
 * spec and no local state, like gc: the tags are the record.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "cmd/cluster.h"
#include "cmd/cmd.h"
#include "cmd/output.h"
#include "cmd/regions.h"
#include "core/alloc.h"
#include "core/buf.h"
#include "core/teardown.h"

static const struct gc_opt list_opts[] = {
	{ .name = "cloud",
	  .type = GC_OPT_CHOICE,
	  .choices = gc_provider_names,
	  .arg = "CLOUD",
	  .help = "only this cloud (else every cloud there are credentials for)" },
	{ .name = "region",
	  .type = GC_OPT_STRING,
	  .arg = "REGION",
	  .help = "only this region (repeatable; else every region the account can use)",
	  .repeat = true },
	{ .name = "profile",
	  .type = GC_OPT_STRING,
	  .arg = "PROFILE",
	  .help = "the cloud's credential profile (with --cloud)" },
	{ .name = "endpoint",
	  .type = GC_OPT_STRING,
	  .arg = "URL",
	  .help = "API endpoint override (with --cloud: the emulator, a proxy)" },
	{ .name = NULL },
};

/* One cluster in one region, summed over its live nodes; its stopped nodes are counted
 * apart (docs/internals/idle.md: a node that powered itself off stays listed, stopped). */
struct row {
	const char *cloud;
	char *region;
	char *name;
	size_t nodes, gpus;
	bool gpus_known;
	double per_hour; /* -1: some node has no price */
	char currency[GC_CURRENCY_SIZE];
	int64_t launched; /* the oldest node's launch, 0 unknown */
	int64_t expires;  /* the earliest gpucluster:expires-at, 0 none */
	int64_t idle_s;	  /* the shortest gpucluster:idle, 0 none */
	size_t stopped;	  /* stopped or stopping nodes: not in nodes, gpus, per_hour */
};

struct listing {
	struct row *rows;
	size_t n, alloc;
	json_t *problems; /* [{"cloud", "region", "message"}] */
	bool failed;	  /* a cloud or region asked for could not be read */
};

static struct row *row_for(struct listing *l, const char *cloud, const char *region,
			   const char *name)
{
	struct row *r;

	for (size_t i = 0; i < l->n; i++)
		if (l->rows[i].cloud == cloud && strcmp(l->rows[i].region, region) == 0 &&
		    strcmp(l->rows[i].name, name) == 0)
			return &l->rows[i];
	if (l->n == l->alloc) {
		l->alloc = l->alloc ? 2 * l->alloc : 8;
		l->rows = gc_xreallocarray(l->rows, l->alloc, sizeof(*l->rows));
	}
	r = &l->rows[l->n++];
	memset(r, 0, sizeof(*r));
	r->cloud = cloud;
	r->region = gc_xstrdup(region);
	r->name = gc_xstrdup(name);
	r->gpus_known = true;
	return r;
}

/* Says why a cloud or region could not be read; hard: it counts as a failure. */
static void problem(struct gc_cmd_ctx *ctx, struct listing *l, const char *cloud,
		    const char *region, const char *message, bool hard)
{
	struct gc_buf what = GC_BUF_INIT(0);

	gc_buf_addf(&what, "%s%s%s", cloud, region ? " " : "", region ? region : "");
	if (hard)
		gc_out_error(ctx->out, "%s: %s", what.data, message);
	else if (!ctx->out->quiet)
		gc_out_printf(ctx->out, ctx->out->err, "%s: skipped: %s\n", what.data, message);
	json_array_append_new(l->problems,
			      json_pack("{s:s, s:s?, s:s, s:b}", "cloud", cloud, "region", region,
					"message", message, "skipped", !hard));
	l->failed |= hard;
	gc_buf_release(&what);
}

static void add_node(struct gc_provider *p, struct gc_price_cache *prices, struct row *r,
		     const struct gc_instance *in)
{
	struct gc_type_facts facts;
	struct gc_error err;
	char cur[GC_CURRENCY_SIZE] = "";
	double price;

	if (in->launch_time && (!r->launched || in->launch_time < r->launched))
		r->launched = in->launch_time;
	if (in->expires_at && (!r->expires || in->expires_at < r->expires))
		r->expires = in->expires_at;
	if (in->idle_s && (!r->idle_s || in->idle_s < r->idle_s))
		r->idle_s = in->idle_s;
	/* a stopped node bills no node-hours (its disks may: docs/cli.md "list") */
	if (in->state == GC_STATE_STOPPED || in->state == GC_STATE_STOPPING) {
		r->stopped++;
		return;
	}
	price = gc_cmd_price(p, prices, in->type, in->zone, in->spot, cur);
	gc_error_init(&err);
	if (r->nodes == 0)
		snprintf(r->currency, sizeof(r->currency), "%s", cur);
	r->nodes++;
	if (price < 0 || r->per_hour < 0 || strcmp(r->currency, cur) != 0)
		r->per_hour = -1;
	else
		r->per_hour += price;
	memset(&facts, 0, sizeof(facts));
	if (in->type && gc_provider_instance_type(p, in->type, &facts, &err) == 0)
		r->gpus += facts.gpus;
	else
		r->gpus_known = false;
}

/* The clusters of one region: its instances carrying our tag, by cluster, but for those
 * being terminated (gone, and billed no more). */
static int read_region(struct gc_cmd_ctx *ctx, struct listing *l, const struct gc_cmd_cloud *c,
		       const char *region, struct gc_error *err)
{
	struct gc_provider *p = NULL;
	struct gc_instance_list live;
	struct gc_price_cache prices = { 0 };
	int rc = -1;

	gc_instance_list_init(&live);
	if (gc_cmd_cloud_open(ctx, c, region, &p, err) < 0 ||
	    gc_teardown_discover(p, ctx->log, NULL, false, &live, err) < 0)
		goto out;
	for (size_t i = 0; i < live.n; i++)
		if (live.items[i].cluster && live.items[i].state != GC_STATE_TERMINATING)
			add_node(p, &prices,
				 row_for(l, c->ops->name, region, live.items[i].cluster),
				 &live.items[i]);
	rc = 0;
out:
	gc_price_cache_release(&prices);
	gc_instance_list_release(&live);
	gc_provider_close(p);
	return rc;
}

static void read_cloud(struct gc_cmd_ctx *ctx, struct listing *l, const struct gc_provider_ops *ops,
		       bool asked)
{
	struct gc_cmd_cloud c = { .ops = ops };
	const char *const *regions;
	size_t n;
	struct gc_error err;

	gc_error_init(&err);
	if (asked) {
		if (gc_cmd_opt_given(ctx, "profile"))
			c.profile = gc_cmd_opt_str(ctx, "profile");
		if (gc_cmd_opt_given(ctx, "endpoint"))
			c.endpoint = gc_cmd_opt_str(ctx, "endpoint");
	}
	regions = gc_cmd_opt_list(ctx, "region", &n);
	for (size_t i = 0; i < n; i++)
		gc_cmd_cloud_add_region(&c, regions[i]);
	if (n == 0 && gc_cmd_cloud_all_regions(ctx, &c, &err) < 0) {
		/* no credentials for a cloud nobody named is not a failure: it is not in use */
		bool none = !asked && err.code == GC_EAUTH && !err.cloud_code[0];

		problem(ctx, l, ops->name, NULL, err.message, !none);
		goto out;
	}
	for (size_t i = 0; i < c.n_regions && !gc_cmd_interrupted(); i++) {
		gc_error_init(&err);
		if (read_region(ctx, l, &c, c.regions[i], &err) < 0)
			problem(ctx, l, ops->name, c.regions[i], err.message, true);
	}
out:
	gc_cmd_cloud_release(&c);
}

static int row_order(const void *a, const void *b)
{
	const struct row *x = a, *y = b;
	int c = strcmp(x->cloud, y->cloud);

	if (c)
		return c;
	if ((c = strcmp(x->region, y->region)))
		return c;
	return strcmp(x->name, y->name);
}

/* "in 3h12m", "overdue", or "-" without a TTL */
static void expiry_text(char *out, size_t size, int64_t expires, int64_t now)
{
	char in[32];

	if (!expires) {
		snprintf(out, size, "-");
	} else if (expires <= now) {
		snprintf(out, size, "overdue");
	} else {
		gc_cmd_age_text(in, sizeof(in), expires, now);
		snprintf(out, size, "in %s", in);
	}
}

static void print_text(struct gc_cmd_ctx *ctx, const struct listing *l, int64_t now)
{
	struct gc_output *o = ctx->out;

	if (l->n == 0) {
		gc_out_printf(o, o->out, "No clusters found.\n");
		return;
	}
	gc_out_printf(o, o->out, "%s%-8s %-16s %-24s %5s %5s %14s %8s  %-9s  %s%s\n",
		      gc_out_style(o, o->out, GC_STYLE_BOLD), "CLOUD", "REGION", "CLUSTER", "NODES",
		      "GPUS", "COST/H", "AGE", "EXPIRES", "IDLE",
		      gc_out_style(o, o->out, GC_STYLE_RESET));
	for (size_t i = 0; i < l->n; i++) {
		const struct row *r = &l->rows[i];
		struct gc_buf line = GC_BUF_INIT(0);
		char gpus[16], cost[32], age[32], expires[40], idle[64];

		snprintf(gpus, sizeof(gpus), r->gpus_known ? "%zu" : "?", r->gpus);
		if (r->nodes == 0) /* every node stopped */
			snprintf(cost, sizeof(cost), "-");
		else if (r->per_hour >= 0)
			snprintf(cost, sizeof(cost), "%.2f %s", r->per_hour, r->currency);
		else
			snprintf(cost, sizeof(cost), "unknown");
		gc_cmd_age_text(age, sizeof(age), now, r->launched);
		expiry_text(expires, sizeof(expires), r->expires, now);
		gc_cmd_idle_text(idle, sizeof(idle), r->idle_s, r->stopped);
		gc_buf_addf(&line, "%-8s %-16s %-24s %5zu %5s %14s %8s  %-9s  %s\n", r->cloud,
			    r->region, r->name, r->nodes, gpus, cost, age, expires, idle);
		gc_out_puts_clean(o, o->out, line.data); /* names come from the cloud's tags */
		gc_buf_release(&line);
	}
}

static json_t *doc_json(const struct listing *l, int64_t now)
{
	json_t *clusters = json_array();

	for (size_t i = 0; i < l->n; i++) {
		const struct row *r = &l->rows[i];
		json_t *jr = json_pack("{s:s, s:s, s:s, s:I}", "cloud", r->cloud, "region",
				       r->region, "name", r->name, "nodes", (json_int_t)r->nodes);

		json_object_set_new(jr, "gpus",
				    r->gpus_known ? json_integer((json_int_t)r->gpus)
						  : json_null());
		json_object_set_new(jr, "cost_per_hour",
				    r->per_hour >= 0 ? json_real(r->per_hour) : json_null());
		json_object_set_new(jr, "currency",
				    r->per_hour >= 0 && r->nodes ? json_string(r->currency)
								 : json_null());
		json_object_set_new(jr, "launched_at", gc_out_json_time(r->launched));
		json_object_set_new(jr, "age_s",
				    r->launched && now >= r->launched
					    ? json_integer((json_int_t)(now - r->launched))
					    : json_null());
		json_object_set_new(jr, "expires_at", gc_out_json_time(r->expires));
		json_object_set_new(jr, "idle_after_s",
				    r->idle_s ? json_integer((json_int_t)r->idle_s) : json_null());
		json_object_set_new(jr, "stopped", json_integer((json_int_t)r->stopped));
		json_array_append_new(clusters, jr);
	}
	return json_pack("{s:o, s:O}", "clusters", clusters, "problems", l->problems);
}

static int list_exec(struct gc_cmd_ctx *ctx)
{
	struct listing l = { .problems = json_array() };
	int64_t now = (int64_t)time(NULL);
	bool one = gc_cmd_opt_given(ctx, "cloud");

	if (!one && (gc_cmd_opt_given(ctx, "profile") || gc_cmd_opt_given(ctx, "endpoint"))) {
		gc_out_error(ctx->out, "--profile and --endpoint name one cloud's: give --cloud");
		gc_out_hint(ctx->out, "run '%s list --help' for usage", GC_PROGRAM);
		json_decref(l.problems);
		return GC_EXIT_USAGE;
	}
	for (size_t i = 0; gc_provider_names[i] && !gc_cmd_interrupted(); i++) {
		if (one && strcmp(gc_cmd_opt_str(ctx, "cloud"), gc_provider_names[i]) != 0)
			continue;
		read_cloud(ctx, &l, gc_provider_by_name(gc_provider_names[i]), one);
	}
	if (l.n) /* qsort wants an array, even of none */
		qsort(l.rows, l.n, sizeof(*l.rows), row_order);
	if (ctx->out->format == GC_OUTPUT_JSON) {
		json_t *doc = doc_json(&l, now);

		gc_out_json(ctx->out, doc);
		json_decref(doc);
	} else {
		print_text(ctx, &l, now);
	}
	for (size_t i = 0; i < l.n; i++) {
		free(l.rows[i].region);
		free(l.rows[i].name);
	}
	free(l.rows);
	json_decref(l.problems);
	return l.failed ? GC_EXIT_FAILURE : GC_EXIT_OK;
}

const struct gc_cmd_entry gc_cmd_list = {
	.name = "list",
	.summary = "list every cluster of this account, in every region, with what it costs",
	.usage = "",
	.description =
		"Finds every instance carrying the gpucluster:cluster tag in every region the\n"
		"account can use (or those given with --region), in each cloud there are\n"
		"credentials for (or the one given with --cloud), and shows one line per\n"
		"cluster and region: live nodes, GPUs, hourly price, age of the oldest node,\n"
		"the earliest expiry, and the idle autostop (lifecycle.idle) with the count of\n"
		"stopped nodes (a node that powered itself off; it bills no node-hours). A\n"
		"cloud without credentials is skipped and said; a region that cannot be read\n"
		"is reported and the others are still listed (the exit status is then 1).\n"
		"Needs no spec and no local state.",
	.opts = list_opts,
	.max_args = 0,
	.flags = 0,
	.exec = list_exec,
};
