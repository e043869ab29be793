/*
 * cmd-show-gpus.c: `gpucluster show-gpus [MODEL[:COUNT]]`: the GPU instance types of each
 * cloud, cheapest GPU-hour first, with on-demand and spot prices and what --hours N would
 * cost. Live from a cloud's API where there are credentials for it (core/gpulive.h, cached
 * on disk for GC_GPULIVE_MAX_AGE_S), else the catalogue shipped with the binary; each
 * listing says which and of when. docs/internals/gpus.md.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cmd/cmd.h"
#include "cmd/output.h"
#include "cmd/regions.h"
#include "core/alloc.h"
#include "core/buf.h"
#include "core/error.h"
#include "core/gpulive.h"
#include "core/gpuspec.h"
#include "core/provider.h"
#include "core/spec.h"

static const struct gc_opt show_gpus_opts[] = {
	{ .name = "cloud",
	  .type = GC_OPT_CHOICE,
	  .choices = gc_provider_names,
	  .arg = "CLOUD",
	  .help = "only this cloud's types (else every cloud's)" },
	{ .name = "region",
	  .type = GC_OPT_STRING,
	  .arg = "REGION",
	  .help = "with --cloud: list this region live (repeatable; else its home region)",
	  .repeat = true },
	{ .name = "all-regions",
	  .type = GC_OPT_FLAG,
	  .help = "list every region the account can use, live" },
	{ .name = "hours",
	  .type = GC_OPT_INT,
	  .arg = "N",
	  .help = "show what N hours of one instance cost on demand and on spot",
	  .min = 1,
	  .max = 100000 },
	{ .name = "refresh",
	  .type = GC_OPT_FLAG,
	  .help = "ask the clouds again instead of using the cached listing" },
	{ .name = "offline",
	  .type = GC_OPT_FLAG,
	  .help = "only the catalogue shipped with gpucluster: no credentials, no API call" },
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

/* One listing and how it was had, for the footer and the JSON's sources. */
struct source {
	struct gc_gpu_listing l;
	bool cached; /* read from the cache, not the API */
	char note[160];
};

struct row {
	const struct source *src;
	const struct gc_gpu_row *r;
};

struct show {
	struct gc_cmd_ctx *ctx;
	struct source *srcs;
	size_t n_srcs, alloc_srcs;
	bool failed;
	int64_t now;
	char why[160]; /* why a cloud shows the shipped catalogue */
};

static double per_gpu(const struct gc_gpu_row *r)
{
	return r->on_demand / r->gpus;
}

static unsigned mem_gib(const struct gc_gpu_row *r)
{
	return (r->gpu_memory_mib + 512) / 1024;
}

/* USD first, then by currency, then price per GPU-hour (unpriced last), type, cloud,
 * region: prices in two currencies do not compare */
static int row_cmp(const void *a, const void *b)
{
	const struct gc_gpu_row *x = ((const struct row *)a)->r, *y = ((const struct row *)b)->r;
	const struct gc_gpu_listing *lx = &((const struct row *)a)->src->l;
	const struct gc_gpu_listing *ly = &((const struct row *)b)->src->l;
	int xu = strcmp(x->currency, "USD") != 0, yu = strcmp(y->currency, "USD") != 0;
	int c = xu != yu ? xu - yu : strcmp(x->currency, y->currency);

	if (c != 0)
		return c;
	if ((x->on_demand < 0) != (y->on_demand < 0))
		return x->on_demand < 0 ? 1 : -1;
	if (per_gpu(x) != per_gpu(y))
		return per_gpu(x) < per_gpu(y) ? -1 : 1;
	if ((c = strcmp(x->type, y->type)) != 0 || (c = strcmp(lx->cloud, ly->cloud)) != 0)
		return c;
	return strcmp(lx->region, ly->region);
}

static bool wanted(const struct gc_gpu_request *r, bool count_given, const struct gc_gpu_row *o)
{
	struct gc_type_facts f = { .gpus = o->gpus,
				   .gpu_memory_mib = o->gpu_memory_mib,
				   .vcpus = o->vcpus,
				   .memory_mib = o->memory_gib * 1024 };

	if (!r)
		return true;
	snprintf(f.gpu_model, sizeof(f.gpu_model), "%s", o->model);
	if (!count_given)
		f.gpus = r->count;
	return gc_gpu_request_matches(r, &f);
}

static bool hint_listing(struct gc_cmd_ctx *ctx, const struct gc_gpu_listing *l,
			 const struct gc_gpu_request *r)
{
	bool any = false;

	for (size_t k = 0; k < l->n; k++) {
		const struct gc_gpu_row *o = &l->rows[k];

		if (strcmp(o->model, r->model) != 0)
			continue;
		gc_out_hint(ctx->out, "%s sells %s:%u as %s (%u GB per GPU)", l->cloud, o->model,
			    o->gpus, o->type, mem_gib(o));
		any = true;
	}
	return any;
}

/* "A100:3": where the model is sold, for the error's advice: in the listings read, and in
 * the shipped catalogue of the clouds not read */
static void hint_sold(struct gc_cmd_ctx *ctx, const struct show *s, const struct gc_gpu_request *r)
{
	bool any = false;

	for (size_t i = 0; gc_provider_at(i); i++) {
		const struct gc_provider_ops *ops = gc_provider_at(i);
		struct gc_gpu_listing shipped;
		bool read = false;

		for (size_t k = 0; k < s->n_srcs; k++)
			if (strcmp(s->srcs[k].l.cloud, ops->name) == 0) {
				read = true;
				any |= hint_listing(ctx, &s->srcs[k].l, r);
			}
		if (read)
			continue;
		gc_gpu_listing_init(&shipped);
		gc_gpulive_catalogue(&shipped, ops);
		any |= hint_listing(ctx, &shipped, r);
		gc_gpu_listing_release(&shipped);
	}
	if (!any)
		gc_out_hint(ctx->out, "no cloud of the catalogue sells %s", r->model);
}

static struct source *add_source(struct show *s)
{
	struct source *src;

	GC_ALLOC_GROW(s->srcs, s->n_srcs + 1, s->alloc_srcs);
	src = &s->srcs[s->n_srcs++];
	memset(src, 0, sizeof(*src));
	gc_gpu_listing_init(&src->l);
	return src;
}

/* $XDG_CACHE_HOME/gpucluster, else ~/.cache/gpucluster; NULL without either */
static char *cache_dir(const struct gc_cmd_ctx *ctx)
{
	const char *v;

	if ((v = gc_spec_env_get(ctx->env, "XDG_CACHE_HOME")) && v[0] == '/')
		return gc_xasprintf("%s/gpucluster", v);
	if ((v = gc_spec_env_get(ctx->env, "HOME")) && *v)
		return gc_xasprintf("%s/.cache/gpucluster", v);
	return NULL;
}

/* A region name is a path part of the cache: the clouds' own alphabet only. */
static bool region_ok(const char *r)
{
	return *r && strspn(r, "abcdefghijklmnopqrstuvwxyz0123456789-") == strlen(r);
}

/* One region of a cloud, from the cache or live; 1: the cloud shows its shipped catalogue
 * instead (s->why says why), -1: failed (said). */
static int read_region(struct show *s, const struct gc_cmd_cloud *c, const char *region,
		       const char *dir, const char *key)
{
	struct gc_cmd_ctx *ctx = s->ctx;
	struct source *src = add_source(s);
	char *path = dir ? gc_gpulive_cache_path(dir, c->ops->name, region) : NULL;
	struct gc_provider *p = NULL;
	struct gc_error err;
	int rc = 0;

	gc_error_init(&err);
	if (path && !gc_cmd_opt_given(ctx, "refresh") &&
	    gc_gpulive_load(&src->l, path, c->ops->name, region, key, s->now,
			    GC_GPULIVE_MAX_AGE_S) == 0) {
		src->cached = true;
		goto out;
	}
	if (gc_cmd_cloud_open(ctx, c, region, &p, &err) < 0 ||
	    gc_gpulive_fetch(&src->l, p, s->now, &err) < 0) {
		s->n_srcs--;
		gc_gpu_listing_release(&src->l);
		if (!p && err.code == GC_EAUTH && !err.cloud_code[0] &&
		    !gc_cmd_opt_given(ctx, "region")) {
			rc = 1; /* no credentials and no region asked for: the shipped catalogue */
			snprintf(s->why, sizeof(s->why), "no credentials for %s", c->ops->name);
			goto out;
		}
		if (p && err.code == GC_EUNSUPPORTED) {
			rc = 1; /* a driver without a GPU listing */
			snprintf(s->why, sizeof(s->why), "%s has no GPU listing", c->ops->name);
			goto out;
		}
		gc_out_error(ctx->out, "%s %s: %s", c->ops->name, region, err.message);
		s->failed = true;
		rc = -1;
		goto out;
	}
	if (path && gc_gpulive_save(&src->l, path, key, &err) < 0)
		gc_out_warn(ctx->out, "%s", err.message); /* the listing stands; next time asks */
out:
	gc_provider_close(p);
	free(path);
	return rc;
}

static void read_cloud(struct show *s, const struct gc_provider_ops *ops, bool asked)
{
	struct gc_cmd_ctx *ctx = s->ctx;
	struct gc_cmd_cloud c = { .ops = ops };
	const char *const *regions;
	char *dir = NULL, *key = NULL;
	struct gc_error err;
	size_t n;
	int rc = 0;

	gc_error_init(&err);
	if (gc_cmd_opt_given(ctx, "offline"))
		goto shipped;
	if (asked) {
		if (gc_cmd_opt_given(ctx, "profile"))
			c.profile = gc_cmd_opt_str(ctx, "profile");
		if (gc_cmd_opt_given(ctx, "endpoint"))
			c.endpoint = gc_cmd_opt_str(ctx, "endpoint");
	}
	key = gc_xasprintf("%s %s", c.endpoint ? c.endpoint : "", c.profile ? c.profile : "");
	dir = cache_dir(ctx);
	regions = gc_cmd_opt_list(ctx, "region", &n);
	for (size_t i = 0; i < n; i++)
		gc_cmd_cloud_add_region(&c, regions[i]);
	if (gc_cmd_opt_given(ctx, "all-regions") && gc_cmd_cloud_all_regions(ctx, &c, &err) < 0) {
		if (!asked && err.code == GC_EAUTH && !err.cloud_code[0]) {
			/* a cloud nobody named that has no credentials: not in use */
			snprintf(s->why, sizeof(s->why), "no credentials for %s", ops->name);
			goto shipped;
		}
		gc_out_error(ctx->out, "%s: %s", ops->name, err.message);
		s->failed = true;
		goto out;
	}
	if (c.n_regions == 0)
		gc_cmd_cloud_add_region(&c, ops->facts->home_region);
	for (size_t i = 0; i < c.n_regions && rc != 1 && !gc_cmd_interrupted(); i++)
		rc = read_region(s, &c, c.regions[i], dir, key);
	if (rc != 1)
		goto out;
shipped:
	gc_gpulive_catalogue(&add_source(s)->l, ops);
	if (!gc_cmd_opt_given(ctx, "offline"))
		snprintf(s->srcs[s->n_srcs - 1].note, sizeof(s->srcs[0].note), "%s", s->why);
out:
	gc_cmd_cloud_release(&c);
	free(dir);
	free(key);
}

static json_t *price_json(double v)
{
	return v >= 0 ? json_real(v) : json_null();
}

/* hours of an hourly price; < 0 (unknown) stays unknown */
static double times(double hourly, int64_t hours)
{
	return hourly >= 0 ? hourly * (double)hours : -1;
}

static json_t *row_json(const struct row *w, int64_t hours)
{
	const struct gc_gpu_row *o = w->r;
	json_t *j =
		json_pack("{s:s, s:s, s:s, s:s, s:s, s:i, s:i, s:i, s:i, s:s, s:s}", "cloud",
			  w->src->l.cloud, "region", w->src->l.region, "source",
			  w->src->l.live ? "live" : "catalogue", "type", o->type, "model", o->model,
			  "gpus", (json_int_t)o->gpus, "gpu_memory_gib", (json_int_t)mem_gib(o),
			  "vcpus", (json_int_t)o->vcpus, "memory_gib", (json_int_t)o->memory_gib,
			  "interconnect", o->interconnect, "currency", o->currency);

	json_object_set_new(j, "zones", w->src->l.live ? json_integer(o->n_zones) : json_null());
	json_object_set_new(j, "on_demand_hourly", price_json(o->on_demand));
	json_object_set_new(j, "per_gpu_hourly", price_json(o->on_demand >= 0 ? per_gpu(o) : -1));
	json_object_set_new(j, "spot_hourly", price_json(o->spot));
	json_object_set_new(j, "reserved_1y_hourly", price_json(o->reserved[0]));
	json_object_set_new(j, "reserved_3y_hourly", price_json(o->reserved[1]));
	/* what the reserved prices are, in plan -o json --hours' words */
	json_object_set_new(
		j, "reserved_term",
		o->reserved[0] < 0 && o->reserved[1] < 0
			? json_null()
			: json_string(gc_cmd_reserved_term(gc_provider_by_name(w->src->l.cloud))));
	if (hours) {
		json_object_set_new(j, "reserved_1y_cost",
				    price_json(times(o->reserved[0], hours)));
		json_object_set_new(j, "reserved_3y_cost",
				    price_json(times(o->reserved[1], hours)));
		json_object_set_new(j, "on_demand_cost", price_json(times(o->on_demand, hours)));
		json_object_set_new(j, "spot_cost", price_json(times(o->spot, hours)));
	}
	return j;
}

static void time_text(char *out, size_t size, int64_t t)
{
	time_t tt = (time_t)t;
	struct tm tm;

	if (gmtime_r(&tt, &tm))
		strftime(out, size, "%Y-%m-%d %H:%M UTC", &tm);
	else
		snprintf(out, size, "-");
}

static json_t *sources_json(const struct show *s)
{
	json_t *list = json_array();

	for (size_t i = 0; i < s->n_srcs; i++) {
		const struct source *src = &s->srcs[i];
		json_t *j = json_pack("{s:s, s:s, s:s, s:b}", "cloud", src->l.cloud, "region",
				      src->l.region, "source", src->l.live ? "live" : "catalogue",
				      "cached", src->cached);

		json_object_set_new(j, "fetched_at",
				    src->l.live ? gc_out_json_time(src->l.fetched_at)
						: json_string(GC_GPU_CATALOG_DATE));
		json_object_set_new(j, "age_s",
				    src->l.live ? json_integer(s->now - src->l.fetched_at)
						: json_null());
		if (src->note[0])
			json_object_set_new(j, "note", json_string(src->note));
		json_array_append_new(list, j);
	}
	return list;
}

static void price_text(char *out, size_t size, double v, int decimals)
{
	if (v >= 0)
		snprintf(out, size, "%.*f", decimals, v);
	else
		snprintf(out, size, "-");
}

static void print_text(struct gc_cmd_ctx *ctx, const struct show *s, const struct row *rows,
		       size_t n, int64_t hours)
{
	struct gc_output *out = ctx->out;
	bool spot = false, reserved[2] = { false, false }; /* [1]: subscriptions */

	gc_out_printf(out, out->out, "%-8s %-15s %-24s %-11s %5s %8s %5s %-14s %11s %11s %11s",
		      "CLOUD", "REGION", "TYPE", "GPUS", "VCPUS", "MEMORY", "ZONES", "INTERCONNECT",
		      "PER-HOUR", "SPOT-HOUR", "PER-GPU-H");
	if (hours)
		gc_out_printf(out, out->out, " %12s %12s %12s %12s", "COST", "SPOT-COST",
			      "RES-1Y-COST", "RES-3Y-COST");
	gc_out_printf(out, out->out, " CURRENCY\n");
	for (size_t i = 0; i < n; i++) {
		const struct gc_gpu_row *o = rows[i].r;
		char gpus[96], mem[16], zones[16], od[24], sp[24], pg[24];
		struct gc_buf line = GC_BUF_INIT(0);

		snprintf(gpus, sizeof(gpus), "%ux%s-%uGB", o->gpus, o->model, mem_gib(o));
		snprintf(mem, sizeof(mem), "%uGiB", o->memory_gib);
		if (rows[i].src->l.live)
			snprintf(zones, sizeof(zones), "%u", o->n_zones);
		else
			snprintf(zones, sizeof(zones), "-");
		price_text(od, sizeof(od), o->on_demand, 4);
		price_text(sp, sizeof(sp), o->spot, 4);
		price_text(pg, sizeof(pg), o->on_demand >= 0 ? per_gpu(o) : -1, 4);
		spot |= o->spot >= 0;
		reserved[gc_provider_by_name(rows[i].src->l.cloud)->facts->reserved_prepaid] |=
			o->reserved[0] >= 0 || o->reserved[1] >= 0;
		gc_buf_addf(&line, "%-8s %-15s %-24s %-11s %5u %8s %5s %-14s %11s %11s %11s",
			    rows[i].src->l.cloud, rows[i].src->l.region, o->type, gpus, o->vcpus,
			    mem, zones, *o->interconnect ? o->interconnect : "-", od, sp, pg);
		if (hours) {
			price_text(od, sizeof(od), times(o->on_demand, hours), 2);
			price_text(sp, sizeof(sp), times(o->spot, hours), 2);
			gc_buf_addf(&line, " %12s %12s", od, sp);
			for (int k = 0; k < 2; k++) {
				price_text(od, sizeof(od), times(o->reserved[k], hours), 2);
				gc_buf_addf(&line, " %12s", od);
			}
		}
		gc_buf_addf(&line, " %s\n", *o->currency ? o->currency : "-");
		gc_out_puts_clean(out, out->out, line.data); /* names come from the cloud */
		gc_buf_release(&line);
	}
	if (ctx->globals.quiet)
		return;
	for (size_t i = 0; i < s->n_srcs; i++) {
		const struct source *src = &s->srcs[i];
		char when[40], age[32];

		if (!src->l.live) {
			gc_out_printf(out, out->out,
				      "%s: catalogue of %s shipped with %s%s%s%s: on-demand list "
				      "prices in %s\n",
				      src->l.cloud, GC_GPU_CATALOG_DATE, GC_PROGRAM,
				      src->note[0] ? " (" : "", src->note, src->note[0] ? ")" : "",
				      src->l.region);
			continue;
		}
		time_text(when, sizeof(when), src->l.fetched_at);
		gc_cmd_age_text(age, sizeof(age), s->now, src->l.fetched_at);
		gc_out_printf(
			out, out->out, "%s: live from the cloud's API in %s at %s (%s, %s old%s)\n",
			src->l.cloud, src->l.region, when, src->cached ? "cached" : "just now", age,
			src->cached ? "; --refresh asks again" : "");
	}
	if (spot)
		gc_out_printf(out, out->out,
			      "spot: today's price, which changes; the cloud may interrupt a spot "
			      "node at any time\n");
	else
		gc_out_printf(out, out->out,
			      "spot is not shown where the listing is the shipped catalogue (it "
			      "moves, and an instance may be reclaimed)\n");
	if (hours && reserved[0])
		gc_out_printf(out, out->out,
			      "reserved: the effective hourly price of a standard reservation "
			      "with no upfront fee, for 1 or 3 years, from the cloud's price list; "
			      "it bills every hour of its term, used or not\n");
	if (hours && reserved[1])
		gc_out_printf(out, out->out,
			      "reserved, where the cloud sells subscriptions: a 1- or 3-year "
			      "subscription paid upfront, its price spread over the hours of its "
			      "term; it bills every hour of its term, used or not\n");
	if (hours)
		for (size_t i = 0; i < s->n_srcs; i++)
			if (!gc_provider_by_name(s->srcs[i].l.cloud)->reserved_price &&
			    (i == 0 || strcmp(s->srcs[i - 1].l.cloud, s->srcs[i].l.cloud) != 0))
				gc_out_printf(out, out->out,
					      "%s: no reserved prices: its price API publishes "
					      "none\n",
					      s->srcs[i].l.cloud);
}

static int show_gpus_exec(struct gc_cmd_ctx *ctx)
{
	struct gc_gpu_request req;
	struct gc_error err = { 0 };
	struct show s = { .ctx = ctx, .now = (int64_t)time(NULL) };
	const char *only = gc_cmd_opt_given(ctx, "cloud") ? gc_cmd_opt_str(ctx, "cloud") : NULL;
	int64_t hours = gc_cmd_opt_given(ctx, "hours") ? gc_cmd_opt_int(ctx, "hours") : 0;
	bool filter = ctx->n_args > 0, count_given = filter && strchr(ctx->args[0], ':');
	const char *const *regions;
	struct row *rows = NULL;
	size_t n = 0, alloc = 0, n_regions;
	int rc = GC_EXIT_OK;

	if (filter && gc_gpu_request_parse(&req, ctx->args[0], &err) != 0) {
		gc_out_error(ctx->out, "%s", err.message);
		gc_out_hint(ctx->out, "write MODEL[-MEMGB][:COUNT], such as A100-80GB:8");
		return GC_EXIT_USAGE;
	}
	regions = gc_cmd_opt_list(ctx, "region", &n_regions);
	for (size_t i = 0; i < n_regions; i++)
		if (!region_ok(regions[i])) {
			gc_out_error(ctx->out, "'%s' is not a region name", regions[i]);
			gc_out_hint(ctx->out,
				    "a region is lowercase letters, digits and '-', such "
				    "as us-east-1");
			return GC_EXIT_USAGE;
		}
	if (!only &&
	    (gc_cmd_opt_given(ctx, "profile") || gc_cmd_opt_given(ctx, "endpoint") || n_regions)) {
		gc_out_error(ctx->out,
			     "--region, --profile and --endpoint name one cloud's: give --cloud");
		gc_out_hint(ctx->out, "run '%s show-gpus --help' for usage", GC_PROGRAM);
		return GC_EXIT_USAGE;
	}
	if (gc_cmd_opt_given(ctx, "offline") &&
	    (n_regions || gc_cmd_opt_given(ctx, "all-regions") ||
	     gc_cmd_opt_given(ctx, "refresh"))) {
		gc_out_error(ctx->out,
			     "--offline lists the shipped catalogue: it takes no --region, "
			     "--all-regions or --refresh");
		gc_out_hint(ctx->out, "run '%s show-gpus --help' for usage", GC_PROGRAM);
		return GC_EXIT_USAGE;
	}
	for (size_t i = 0; gc_provider_at(i) && !gc_cmd_interrupted(); i++)
		if (!only || strcmp(gc_provider_at(i)->name, only) == 0)
			read_cloud(&s, gc_provider_at(i), only != NULL);
	for (size_t i = 0; i < s.n_srcs; i++)
		for (size_t k = 0; k < s.srcs[i].l.n; k++)
			if (wanted(filter ? &req : NULL, count_given, &s.srcs[i].l.rows[k])) {
				GC_ALLOC_GROW(rows, n + 1, alloc);
				rows[n++] = (struct row){ &s.srcs[i], &s.srcs[i].l.rows[k] };
			}
	if (n == 0 && !s.failed) {
		gc_out_error(ctx->out, "no GPU type of the catalogue%s%s matches '%s'",
			     only ? " on " : "", only ? only : "", filter ? ctx->args[0] : "");
		if (filter)
			hint_sold(ctx, &s, &req);
		rc = GC_EXIT_FAILURE;
		goto out;
	}
	if (n)
		qsort(rows, n, sizeof(*rows), row_cmp);
	if (ctx->globals.output == GC_OUTPUT_JSON) {
		json_t *doc = json_pack(
			"{s:s, s:s, s:o, s:[]}", "catalogue_date", GC_GPU_CATALOG_DATE, "prices",
			"per hour: live from the cloud's price API where the source is live, "
			"else the on-demand list price in the cloud's home region",
			"sources", sources_json(&s), "offers");
		json_t *list = json_object_get(doc, "offers");

		if (hours)
			json_object_set_new(doc, "hours", json_integer(hours));
		for (size_t i = 0; i < n; i++)
			json_array_append_new(list, row_json(&rows[i], hours));
		if (gc_out_json(ctx->out, doc) < 0)
			rc = GC_EXIT_FAILURE;
		json_decref(doc);
	} else if (n) {
		print_text(ctx, &s, rows, n, hours);
	}
	if (s.failed)
		rc = GC_EXIT_FAILURE;
out:
	for (size_t i = 0; i < s.n_srcs; i++)
		gc_gpu_listing_release(&s.srcs[i].l);
	free(s.srcs);
	free(rows);
	return rc;
}

const struct gc_cmd_entry gc_cmd_show_gpus = {
	.name = "show-gpus",
	.summary = "list GPU instance types by price per GPU-hour",
	.usage = "[MODEL[-MEMGB][:COUNT]]",
	.description =
		"Lists the GPU instance types of each cloud, cheapest GPU-hour first within each "
		"currency: GPUs, memory, vCPUs, the zones offering them, interconnect, and the "
		"on-demand and spot price per hour. Where there are credentials for a cloud the "
		"listing is live from its API (its home region, or --region / --all-regions) and "
		"cached for 6 hours under $XDG_CACHE_HOME/gpucluster (else ~/.cache/gpucluster; "
		"--refresh asks again); without them it is the catalogue shipped with gpucluster. "
		"Each listing says which, and of when.",
	.opts = show_gpus_opts,
	.min_args = 0,
	.max_args = 1,
	.exec = show_gpus_exec,
};
