/*
 * cluster.c: opening the spec's cloud, confirmation, and reports for the commands that
 * talk to a cloud (see cluster.h). The engine's live progress is progress.c's.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "cmd/ci-key.h"
#include "cmd/cluster.h"
#include "core/gpupick.h"
#include "cmd/cmd.h"
#include "cmd/gha.h"
#include "cmd/output.h"
#include "core/alloc.h"
#include "core/cost.h"
#include "core/provider.h"

int gc_cmd_exit_for(const struct gc_error *err)
{
	return err->code == GC_ECANCELLED ? GC_EXIT_INTERRUPTED : GC_EXIT_FAILURE;
}

void gc_cmd_report_error(struct gc_cmd_ctx *ctx, const char *what, const struct gc_error *err)
{
	char extra[300] = "";

	/* the cloud's code and request id once: a driver's message may carry them already */
	bool has_id = err->request_id[0] && strstr(err->message, err->request_id);

	if (err->cloud_code[0] && !strstr(err->message, err->cloud_code))
		snprintf(extra, sizeof(extra), " (%s%s%s)", err->cloud_code,
			 err->request_id[0] && !has_id ? ", request " : "",
			 has_id ? "" : err->request_id);
	else if (err->request_id[0] && !has_id)
		snprintf(extra, sizeof(extra), " (request %s)", err->request_id);
	if (what)
		gc_out_error(ctx->out, "%s: %s%s", what, err->message, extra);
	else
		gc_out_error(ctx->out, "%s%s", err->message, extra);

	switch (err->code) {
	case GC_EAUTH:
		gc_cmd_hint_auth(ctx->out, ctx->spec ? ctx->spec->provider.ops : NULL, err);
		break;
	case GC_EQUOTA:
		gc_out_hint(ctx->out, "ask for a higher limit, or lower the counts in the spec");
		break;
	case GC_ESPOTQUOTA:
		gc_out_hint(ctx->out,
			    "ask for a higher spot limit, lower the counts in the spec, "
			    "or allow on-demand (market: spot-then-on-demand)");
		break;
	case GC_ECANCELLED:
		gc_out_hint(ctx->out,
			    "run the same command again: it picks up where this one "
			    "stopped");
		break;
	default: break;
	}
}

void gc_cmd_hint_auth(struct gc_output *out, const struct gc_provider_ops *ops,
		      const struct gc_error *err)
{
	const struct gc_provider_facts *f = ops ? ops->facts : NULL;

	/* good credentials that may not make this call: name what to grant, not "check" */
	for (const char *const *c = f ? f->permission_codes : NULL; c && *c && err->action[0];
	     c++) {
		if (strcmp(*c, err->cloud_code) == 0) {
			gc_out_hint(out,
				    "these credentials may not call %s: grant '%s%s' to them (see "
				    "docs/credentials.md for every permission gpucluster needs)",
				    err->action, f->permission_prefix ? f->permission_prefix : "",
				    err->action);
			return;
		}
	}
	gc_out_hint(out, "check the credentials for %s: see docs/credentials.md",
		    ops ? ops->name : "the cloud");
}

void gc_cmd_hint_after(struct gc_output *out, const struct gc_error *err, const char *verb)
{
	switch (err->code) {
	case GC_EINVALID:
	case GC_ENOTFOUND:
	case GC_EUNSUPPORTED:
	case GC_ETOOBIG:
		gc_out_hint(out,
			    "a re-run cannot fix this: correct what the message names, then check "
			    "the spec with '%s plan'",
			    GC_PROGRAM);
		break;
	case GC_EAUTH:
	case GC_EQUOTA:
	case GC_ESPOTQUOTA:
	case GC_ELOCKED:
	case GC_ECANCELLED:
	case GC_EIO: break;
	default:
		gc_out_hint(out, "run '%s %s' again to finish: it converges on what exists",
			    GC_PROGRAM, verb);
		break;
	}
}

int gc_cmd_open_cloud(struct gc_cmd_ctx *ctx, const struct gc_provider_ops *ops,
		      struct gc_provider_config *cfg, struct gc_provider **out,
		      struct gc_error *err)
{
	int rc;

	cfg->env = ctx->env;
	cfg->log = ctx->log;
	cfg->cancelled = gc_cmd_cancelled;
	rc = gc_provider_open(out, ops, cfg, err);
	gc_gha_flush_masks(ctx->gha); /* the credentials it found, before anything else */
	return rc;
}

int gc_cmd_open_provider(struct gc_cmd_ctx *ctx)
{
	const struct gc_spec *spec = ctx->spec;
	struct gc_provider_config cfg = {
		.region = spec->provider.region,
		.profile = spec->provider.profile,
		.endpoint = spec->provider.endpoint,
		.oidc = &spec->provider.oidc,
	};
	struct gc_error err;

	gc_error_init(&err);
	if (gc_cmd_open_cloud(ctx, spec->provider.ops, &cfg, &ctx->provider, &err) < 0) {
		gc_cmd_report_error(ctx, spec->provider.name, &err);
		return -1;
	}
	return gc_cmd_resolve_gpus(ctx);
}

int gc_cmd_resolve_gpus(struct gc_cmd_ctx *ctx)
{
	/* the commands that choose what to launch ask the cloud; the others only need the
	 * names, from the catalogue (docs/internals/gpus.md) */
	static const char *const choosers[] = { "plan", "apply", "scale" };
	struct gc_error err;
	bool ask = false, any = false;

	for (size_t i = 0; i < ctx->spec->n_groups; i++)
		any |= ctx->spec->groups[i].has_gpus;
	if (!any)
		return 0;
	for (size_t i = 0; i < sizeof(choosers) / sizeof(choosers[0]); i++)
		ask |= strcmp(ctx->entry->name, choosers[i]) == 0;
	gc_error_init(&err);
	if (gc_gpupick_resolve(ctx->provider, ctx->spec, ask, &err) < 0) {
		gc_cmd_report_error(ctx, NULL, &err);
		if (err.code == GC_EINVALID)
			gc_out_hint(ctx->out,
				    "gpucluster show-gpus lists every GPU type with its "
				    "price; or name instance_types yourself");
		return -1;
	}
	return 0;
}

bool gc_cmd_confirm(struct gc_cmd_ctx *ctx, const char *question)
{
	const struct gc_cmd_io *io = ctx->io;
	char line[64];

	if (gc_cmd_opt_given(ctx, "auto-approve"))
		return true;
	if (!io->in || !gc_cmd_is_tty(io->in, io->in_tty)) {
		gc_out_error(ctx->out,
			     "cannot ask for confirmation: standard input is not a "
			     "terminal");
		gc_out_hint(ctx->out, "pass --auto-approve to proceed without asking");
		return false;
	}
	gc_out_printf(ctx->out, ctx->out->err, "\n%s%s%s\n  Only 'yes' will be accepted: ",
		      gc_out_style(ctx->out, ctx->out->err, GC_STYLE_BOLD), question,
		      gc_out_style(ctx->out, ctx->out->err, GC_STYLE_RESET));
	fflush(ctx->out->err);
	if (!fgets(line, sizeof(line), io->in))
		return false;
	line[strcspn(line, "\r\n")] = '\0';
	if (strcmp(line, "yes") != 0) {
		gc_out_printf(ctx->out, ctx->out->err, "Cancelled: nothing was changed.\n");
		return false;
	}
	return true;
}

bool gc_cmd_cancelled(void *arg)
{
	(void)arg;
	return gc_cmd_interrupted();
}

int gc_cmd_engine(struct gc_cmd_ctx *ctx, struct gc_engine *e, struct gc_engine_opts *opts)
{
	struct gc_error err;
	int rc;

	gc_error_init(&err);
	memset(opts, 0, sizeof(*opts));
	opts->cancelled = gc_cmd_cancelled;
	gc_cmd_engine_progress_begin(ctx, opts);
	if (gc_engine_init(e, ctx->spec, ctx->provider, ctx->env, ctx->log, &err) < 0) {
		gc_cmd_report_error(ctx, NULL, &err);
		return -1;
	}
	/* a teardown never needs the key and must not stop for it (docs/ci.md) */
	rc = gc_ci_key_import(gc_ci_key_var(ctx->spec), ctx->env, e->state_dir, ctx->log, &err);
	gc_gha_flush_masks(ctx->gha); /* the key, before anything could print it */
	if (rc < 0 && strcmp(ctx->entry->name, "destroy") == 0) {
		gc_log_warn(ctx->log, "%s", err.message);
	} else if (err.code != GC_OK) {
		gc_cmd_report_error(ctx, NULL, &err);
		gc_engine_release(e);
		return -1;
	}
	return 0;
}

int gc_cmd_lock(struct gc_cmd_ctx *ctx, struct gc_engine *e, struct gc_lock *lock)
{
	struct gc_error err;

	gc_error_init(&err);
	if (gc_lock_acquire(lock, e->state_dir, ctx->entry->name, &err) < 0) {
		gc_cmd_report_error(ctx, NULL, &err);
		if (err.code == GC_ELOCKED)
			gc_out_hint(ctx->out,
				    "in CI, give jobs that touch one cluster the same "
				    "concurrency group (see docs/ci.md)");
		return -1;
	}
	return 0;
}

double gc_cmd_price(struct gc_provider *p, struct gc_price_cache *cache, const char *type,
		    const char *zone, bool spot, char currency[GC_CURRENCY_SIZE])
{
	const struct gc_price_entry *known;
	struct gc_error err;
	char cur[GC_CURRENCY_SIZE] = "";
	double amount = -1;

	if (!type)
		return -1;
	if (!(known = gc_price_cache_find(cache, type, NULL, spot))) {
		gc_error_init(&err);
		if (gc_provider_price(p, type, zone, spot, &amount, cur, &err) < 0)
			amount = -1;
		gc_price_cache_add(cache, type, NULL, spot, amount, cur);
		known = gc_price_cache_find(cache, type, NULL, spot);
	}
	if (known->amount >= 0 && currency)
		snprintf(currency, GC_CURRENCY_SIZE, "%s", known->currency);
	return known->amount;
}

/* ---- reports --------------------------------------------------------------------- */

json_t *gc_cmd_report_json(const struct gc_engine_report *r)
{
	json_t *groups = json_array(), *created = json_array();

	for (size_t i = 0; i < r->n_groups; i++) {
		const struct gc_engine_group_report *g = &r->groups[i];
		json_t *jg = json_pack("{s:s, s:I, s:I, s:I, s:I}", "group", g->group, "wanted",
				       (json_int_t)g->wanted, "created", (json_int_t)g->created,
				       "running", (json_int_t)g->running, "terminated",
				       (json_int_t)g->terminated);

		if (g->err.code != GC_OK)
			json_object_set_new(jg, "error",
					    json_pack("{s:s, s:s, s:s}", "code",
						      gc_strerror(g->err.code), "message",
						      g->err.message, "cloud_code",
						      g->err.cloud_code));
		json_array_append_new(groups, jg);
	}
	for (size_t i = 0; i < r->created.n; i++) {
		const struct gc_instance *in = &r->created.items[i];

		json_array_append_new(created,
				      json_pack("{s:s, s:s?, s:s?, s:s?, s:s}", "id", in->id,
						"group", in->group, "type", in->type, "zone",
						in->zone, "state",
						gc_instance_state_name(in->state)));
	}
	return json_pack("{s:o, s:o, s:I, s:I, s:I, s:I}", "groups", groups, "created", created,
			 "terminated", (json_int_t)r->n_terminated, "api_calls",
			 (json_int_t)r->api_calls, "throttled", (json_int_t)r->throttled, "wall_ms",
			 (json_int_t)r->wall_ms);
}

void gc_cmd_cost(struct gc_cmd_ctx *ctx, struct gc_price_cache *prices,
		 const struct gc_instance_list *nodes, int64_t end, struct gc_cost *out)
{
	struct gc_price_cache own = { 0 }, *cache = prices ? prices : &own;
	unsigned min_s = ctx->provider ? ctx->provider->ops->facts->min_billed_s : 0;

	gc_cost_init(out);
	for (size_t i = 0; i < nodes->n; i++) {
		const struct gc_instance *in = &nodes->items[i];
		char cur[GC_CURRENCY_SIZE] = "";
		double price = ctx->provider
			? gc_cmd_price(ctx->provider, cache, in->type, in->zone, in->spot, cur)
			: -1;

		gc_cost_add(out, in, end, min_s, price, cur);
	}
	gc_price_cache_release(&own);
}

static json_t *amount_json(double amount)
{
	return amount >= 0 ? json_real(amount) : json_null();
}

json_t *gc_cmd_cost_json(const struct gc_cost *c)
{
	json_t *lines = json_array();

	for (size_t i = 0; i < c->n; i++) {
		const struct gc_cost_line *l = &c->lines[i];

		json_array_append_new(lines,
				      json_pack("{s:s, s:s, s:I, s:f, s:o}", "type", l->type,
						"market", l->spot ? "spot" : "on-demand", "nodes",
						(json_int_t)l->nodes, "node_hours", l->hours,
						"amount", amount_json(l->amount)));
	}
	return json_pack("{s:I, s:f, s:o, s:o, s:b, s:o}", "nodes", (json_int_t)c->nodes,
			 "node_hours", c->hours, "total", amount_json(c->total), "currency",
			 c->currency[0] ? json_string(c->currency) : json_null(), "known",
			 c->total >= 0, "by_type", lines);
}

void gc_cmd_print_cost(struct gc_output *o, const char *what, const struct gc_cost *c)
{
	char amount[48];

	if (c->total >= 0)
		snprintf(amount, sizeof(amount), "about %.2f %s", c->total, c->currency);
	else
		snprintf(amount, sizeof(amount), "unknown (no price for some nodes)");
	gc_out_printf(o, o->out, "\n%s: %s, %.2f node-hour%s\n", what, amount, c->hours,
		      c->hours == 1.0 ? "" : "s");
	for (size_t i = 0; i < c->n; i++) {
		const struct gc_cost_line *l = &c->lines[i];

		if (l->amount >= 0)
			snprintf(amount, sizeof(amount), "%.2f %s", l->amount, c->currency);
		else
			snprintf(amount, sizeof(amount), "unknown");
		gc_out_printf(o, o->out, "  %-24s %-9s %3zu node%s %9.2f node-hours  %s\n", l->type,
			      l->spot ? "spot" : "on-demand", l->nodes, l->nodes == 1 ? " " : "s",
			      l->hours, amount);
	}
}

void gc_cmd_print_report(struct gc_cmd_ctx *ctx, const char *verb, const struct gc_engine_report *r)
{
	struct gc_output *o = ctx->out;
	struct gc_cost cost;

	gc_cmd_engine_progress_done();
	gc_cmd_cost(ctx, NULL, &r->ended, (int64_t)time(NULL), &cost);
	if (o->format == GC_OUTPUT_JSON) {
		json_t *doc = gc_cmd_report_json(r);

		if (r->ended.n)
			json_object_set_new(doc, "cost", gc_cmd_cost_json(&cost));
		gc_out_json(o, doc);
		json_decref(doc);
		gc_cost_release(&cost);
		return;
	}
	/* each group's shortfall and its cause are in the error the command prints next */
	gc_out_printf(o, o->err, "%s: %zu created, %zu terminated, %lu API call%s in %.1fs\n", verb,
		      r->created.n, r->n_terminated, r->api_calls, r->api_calls == 1 ? "" : "s",
		      (double)r->wall_ms / 1000.0);
	if (r->ended.n)
		gc_cmd_print_cost(o, "What the terminated nodes cost", &cost);
	gc_cost_release(&cost);
}
