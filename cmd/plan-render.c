/*
 * plan-render.c: a plan for people (text in Terraform's manner) and for scripts (JSON).
 *
 * core/plan.c decides; this file only shows. It lives in cmd/ with the other reports, so
 * the plan's colours are the palette of cmd/output.c like every other line gpucluster
 * prints. Cloud text (ids, tag values) is escaped here, since a tag must not drive the
 * terminal; the JSON schema is documented in docs/cli.md ("plan").
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cmd/output.h"
#include "cmd/plan-render.h"
#include "core/alloc.h"
#include "core/buf.h"
#include "core/gpuspec.h"
#include "core/str.h"

static const char *str_or(const char *s, const char *dflt)
{
	return s ? s : dflt;
}

/* ---- text ----------------------------------------------------------------------- */

struct text {
	struct gc_buf *out;
	bool color;
	int r;
};

static void tx_addf(struct text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void tx_addf(struct text *t, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (gc_buf_vaddf(t->out, fmt, ap))
		t->r = -1;
	va_end(ap);
}

static void tx_color(struct text *t, enum gc_style style)
{
	if (t->color && gc_buf_addstr(t->out, gc_style_escape(style)))
		t->r = -1;
}

/* Text from the cloud is shown with control bytes (and every non-ASCII byte, when the
 * text is not UTF-8) as \xNN: a tag value must not drive the terminal. */
static bool tx_escaped(unsigned char c, bool utf8)
{
	return c < 0x20 || c == 0x7f || (c >= 0x80 && !utf8);
}

/* Columns s takes once escaped (a UTF-8 sequence counts as one). */
static size_t tx_width(const char *s)
{
	bool utf8 = gc_utf8_valid(s, strlen(s));
	size_t cols = 0;

	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		cols += tx_escaped(*p, utf8) ? 4 : (*p & 0xc0) != 0x80;
	return cols;
}

/* Cloud text, escaped, padded with spaces to width columns. */
static void tx_text(struct text *t, const char *s, size_t width)
{
	bool utf8;

	s = str_or(s, "-");
	utf8 = gc_utf8_valid(s, strlen(s));
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (tx_escaped(*p, utf8))
			tx_addf(t, "\\x%02x", *p);
		else if (gc_buf_addch(t->out, (char)*p))
			t->r = -1;
	}
	for (size_t cols = tx_width(s); cols < width; cols++)
		if (gc_buf_addch(t->out, ' '))
			t->r = -1;
}

static const char *node_state(const struct gc_instance *inst)
{
	return str_or(inst->state_name, gc_instance_state_name(inst->state));
}

struct widths {
	size_t id, state, type, zone;
};

static void widen(size_t *w, const char *s)
{
	size_t n = tx_width(str_or(s, "-"));

	if (n > *w)
		*w = n;
}

static const char *plural(unsigned n, const char *one, const char *many)
{
	return n == 1 ? one : many;
}

static void tx_group_header(struct text *t, const struct gc_plan_group *g)
{
	const struct gc_spec_group *sg = g->spec;

	tx_addf(t, "  ");
	tx_color(t, GC_STYLE_BOLD);
	tx_addf(t, "group ");
	if (!sg) {
		if (g->n_nodes && g->nodes[0].inst->group) {
			tx_text(t, g->nodes[0].inst->group, 0);
			tx_addf(t, ": no longer in the spec");
		} else {
			tx_addf(t, "(instances without a group tag)");
		}
		tx_color(t, GC_STYLE_RESET);
		return;
	}
	tx_addf(t, "%s: %u \xc3\x97 %s", sg->name, g->want, sg->instance_types[0]);
	for (size_t i = 1; i < sg->n_instance_types; i++)
		tx_addf(t, "%s%s", i == 1 ? " (fallback " : ", ", sg->instance_types[i]);
	tx_addf(t, "%s, %s", sg->n_instance_types > 1 ? ")" : "", gc_market_name(sg->market));
	tx_color(t, GC_STYLE_RESET);
}

static void tx_node(struct text *t, const struct gc_plan_node *n, const struct widths *w)
{
	static const char *const sym[] = {
		[GC_PLAN_KEEP] = "   ",
		[GC_PLAN_TERMINATE] = "  -",
		[GC_PLAN_REPLACE] = "-/+",
		[GC_PLAN_IGNORE] = "  ~",
	};
	static const enum gc_style col[] = {
		[GC_PLAN_KEEP] = GC_STYLE_NONE,
		[GC_PLAN_TERMINATE] = GC_STYLE_REMOVED,
		[GC_PLAN_REPLACE] = GC_STYLE_REPLACED,
		[GC_PLAN_IGNORE] = GC_STYLE_DIM,
	};

	tx_addf(t, "    ");
	tx_color(t, col[n->action]);
	tx_addf(t, "%s ", sym[n->action]);
	tx_text(t, n->inst->id, w->id + 2);
	tx_text(t, node_state(n->inst), w->state + 2);
	tx_text(t, n->inst->type, w->type + 2);
	tx_text(t, n->inst->zone, w->zone + 2);
	tx_text(t, n->reason, 0);
	tx_color(t, GC_STYLE_RESET);
	tx_addf(t, "\n");
}

/* The type the group's new nodes try first (gc_plan_group_types). */
static const char *create_type(const struct gc_plan_group *g)
{
	const char **types = gc_xcalloc(g->spec->n_instance_types + 1, sizeof(*types));
	const char *first = g->spec->instance_types[0];

	if (gc_plan_group_types(g, types))
		first = types[0];
	free(types);
	return first;
}

static void tx_create(struct text *t, const struct gc_plan_group *g, const char *cur)
{
	unsigned fill = g->create - g->replace;

	tx_addf(t, "    ");
	tx_color(t, GC_STYLE_GREEN);
	tx_addf(t, "  + %u new %s (", g->create, plural(g->create, "instance", "instances"));
	if (g->replace && fill)
		tx_addf(t, "%u replacing; count %u -> %u", g->replace, g->keep + g->replace,
			g->want);
	else if (g->replace)
		tx_addf(t, "replacing %u", g->replace);
	else
		tx_addf(t, "count %u -> %u", g->keep, g->want);
	tx_addf(t, "), %s", create_type(g));
	if (g->create_price_known)
		tx_addf(t, " at %.2f %s/h each", g->create_price, cur);
	else
		tx_addf(t, " at an unknown price");
	if (!g->worst_price_known && g->create_price_known)
		tx_addf(t, "; at worst unknown (a fallback has no price)");
	else if (g->worst_price_known && g->worst_type &&
		 (g->worst_price > g->create_price + 0.005 || !g->create_price_known))
		tx_addf(t, "; at worst %s (%s) at %.2f %s/h each", g->worst_type,
			g->worst_spot ? "spot" : "on-demand", g->worst_price, cur);
	tx_color(t, GC_STYLE_RESET);
	tx_addf(t, "\n");
}

/* Whether a node gets a line: it changes, is ignored, or its expiry or idle tag moves. */
static bool node_listed(const struct gc_plan_node *n)
{
	return n->action != GC_PLAN_KEEP || n->expiry_moves || n->idle_moves;
}

/* Whether the group gets its own block: it changes something, or has ignored nodes. */
static bool group_listed(const struct gc_plan_group *g)
{
	if (g->create)
		return true;
	for (size_t i = 0; i < g->n_nodes; i++)
		if (node_listed(&g->nodes[i]))
			return true;
	return false;
}

/* ", limit 576.00 CNY/h" and, when the spec wrote it in another currency, what it wrote. */
static void tx_limit(struct text *t, const struct gc_spec *spec, double max, const char *cur)
{
	const char *mine = spec->lifecycle.currency[0] ? spec->lifecycle.currency : "USD";

	tx_addf(t, ", limit %.2f %s/h", max, cur);
	if (strcmp(mine, cur) != 0)
		tx_addf(t, " (%.2f %s/h at %g CNY per USD)", spec->lifecycle.max_hourly_cost, mine,
			spec->lifecycle.cny_per_usd);
}

static void tx_when(struct text *t, int64_t when)
{
	char s[21];

	if (!when) {
		tx_addf(t, "none");
		return;
	}
	gc_format_rfc3339(when, s);
	tx_addf(t, "%s", s);
}

/* An idle stop as list shows it: "30m", "none", or a tag that is not seconds quoted. */
static void tx_idle(struct text *t, int64_t idle_s, const char *tag)
{
	char d[32];

	if (idle_s > 0) {
		gc_format_duration((uint64_t)idle_s, d, sizeof(d));
		tx_addf(t, "%s", d);
	} else if (tag) {
		tx_addf(t, "'");
		tx_text(t, tag, 0);
		tx_addf(t, "'");
	} else {
		tx_addf(t, "none");
	}
}

/* A kept node changed in place: "  ~ ID ... expiry OLD -> NEW (lifecycle.ttl, in place)",
 * "idle stop OLD -> NEW (lifecycle.idle, in place)", or both, "; " between. */
static void tx_in_place(struct text *t, const struct gc_plan_node *n, const struct gc_spec *spec,
			const struct widths *w)
{
	tx_addf(t, "    ");
	tx_color(t, GC_STYLE_REPLACED);
	tx_addf(t, "  ~ ");
	tx_text(t, n->inst->id, w->id + 2);
	tx_text(t, node_state(n->inst), w->state + 2);
	tx_text(t, n->inst->type, w->type + 2);
	tx_text(t, n->inst->zone, w->zone + 2);
	if (n->expiry_moves) {
		tx_addf(t, "expiry ");
		tx_when(t, n->inst->expires_at);
		tx_addf(t, " -> ");
		tx_when(t, n->new_expires_at);
		tx_addf(t, " (lifecycle.ttl, in place)%s", n->idle_moves ? "; " : "");
	}
	if (n->idle_moves) {
		tx_addf(t, "idle stop ");
		tx_idle(t, n->inst->idle_s, gc_instance_tag(n->inst, GC_TAG_IDLE));
		tx_addf(t, " -> ");
		tx_idle(t, (int64_t)spec->lifecycle.idle_s, NULL);
		tx_addf(t, " (lifecycle.idle, in place)");
	}
	tx_color(t, GC_STYLE_RESET);
	tx_addf(t, "\n");
}

static void tx_cost(struct text *t, const struct gc_plan *plan, const struct gc_spec *spec,
		    bool changes)
{
	double max = plan->max_hourly_cost;
	const char *cur = plan->currency;

	tx_addf(t, "Hourly cost: ");
	if (!changes && plan->cost_now_known) {
		tx_addf(t, "%.2f %s/h", plan->cost_now, cur);
	} else if (!changes) {
		tx_addf(t, "unknown (no price for %s)", plan->unknown_price);
	} else if (plan->cost_known) {
		double delta = plan->cost_after - plan->cost_now;

		tx_addf(t, "%.2f %s/h now -> %.2f %s/h after", plan->cost_now, cur,
			plan->cost_after, cur);
		if (fabs(delta) < 0.005)
			tx_addf(t, " (no change)");
		else
			tx_addf(t, " (%c%.2f)", delta > 0 ? '+' : '-', fabs(delta));
	} else {
		if (plan->cost_now_known)
			tx_addf(t, "%.2f %s/h now", plan->cost_now, cur);
		else
			tx_addf(t, "unknown now");
		if (plan->cost_after_known)
			tx_addf(t, " -> %.2f %s/h after", plan->cost_after, cur);
		else
			tx_addf(t, " -> unknown after");
		tx_addf(t, " (no price for %s)", plan->unknown_price);
	}
	if (max > 0)
		tx_limit(t, spec, max, cur);
	tx_addf(t, ".\n");
	if (changes && plan->n_create) {
		tx_addf(t, "Worst case after: ");
		if (plan->cost_worst_known)
			tx_addf(t, "%.2f %s/h", plan->cost_worst, cur);
		else
			tx_addf(t, "unknown");
		tx_addf(t,
			" (every fallback candidate at its highest price; spot at its bound).\n");
	}
	if (plan->over_cap)
		tx_addf(t,
			"Over the limit: the cluster costs %.2f %s/h, above max_hourly_cost %.2f "
			"%s/h; apply creates nothing more. Lower the counts or raise the limit.\n",
			plan->cost_after, cur, max, cur);
}

int gc_plan_render_text(struct gc_buf *out, const struct gc_plan *plan, const struct gc_spec *spec,
			bool color)
{
	struct text t = { .out = out, .color = color, .r = 0 };
	struct widths w = { 0, 0, 0, 0 };
	bool changes = gc_plan_has_changes(plan);

	for (size_t i = 0; i < plan->n_groups; i++)
		for (size_t j = 0; j < plan->groups[i].n_nodes; j++) {
			const struct gc_plan_node *n = &plan->groups[i].nodes[j];

			if (!node_listed(n))
				continue;
			widen(&w.id, n->inst->id);
			widen(&w.state, node_state(n->inst));
			widen(&w.type, n->inst->type);
			widen(&w.zone, n->inst->zone);
		}

	if (changes)
		tx_addf(&t, "gpucluster will perform these actions on cluster '%s' (%s %s):\n",
			spec->name, spec->provider.name, spec->provider.region);
	else if (plan->over_cap)
		tx_addf(&t,
			"Over the cost limit. Cluster '%s' (%s %s) matches the spec's counts (%u %s).\n",
			spec->name, spec->provider.name, spec->provider.region, plan->n_keep,
			plural(plan->n_keep, "instance", "instances"));
	else
		tx_addf(&t, "No changes. Cluster '%s' (%s %s) matches the spec (%u %s).\n",
			spec->name, spec->provider.name, spec->provider.region, plan->n_keep,
			plural(plan->n_keep, "instance", "instances"));

	for (size_t i = 0; i < plan->n_groups; i++) {
		const struct gc_plan_group *g = &plan->groups[i];

		if (!group_listed(g)) {
			if (changes && g->spec) {
				tx_addf(&t, "\n");
				tx_group_header(&t, g);
				tx_addf(&t, ": no changes (%u kept)\n", g->keep);
			}
			continue;
		}
		tx_addf(&t, "\n");
		tx_group_header(&t, g);
		tx_addf(&t, "\n");
		if (g->create)
			tx_create(&t, g, plan->currency);
		for (size_t j = 0; j < g->n_nodes; j++)
			if (g->nodes[j].action != GC_PLAN_KEEP)
				tx_node(&t, &g->nodes[j], &w);
			else if (g->nodes[j].expiry_moves || g->nodes[j].idle_moves)
				tx_in_place(&t, &g->nodes[j], spec, &w);
		if (g->spec)
			tx_addf(&t, "        %u kept\n", g->keep);
	}

	tx_addf(&t, "\n");
	if (changes) {
		tx_color(&t, GC_STYLE_BOLD);
		tx_addf(&t, "Plan:");
		tx_color(&t, GC_STYLE_RESET);
		tx_addf(&t, " %u to create", plan->n_create);
		if (plan->n_replace)
			tx_addf(&t, " (%u replacing)", plan->n_replace);
		tx_addf(&t, ", %u to terminate, %u kept", plan->n_terminate, plan->n_keep);
		if (plan->n_ignore)
			tx_addf(&t, ", %u ignored", plan->n_ignore);
		if (plan->n_expiry)
			tx_addf(&t, ", %u %s expiry moved", plan->n_expiry,
				plural(plan->n_expiry, "node's", "nodes'"));
		if (plan->n_idle) {
			char d[32];

			gc_format_duration(spec->lifecycle.idle_s, d, sizeof(d));
			tx_addf(&t, ", idle stop of %u %s %s%s", plan->n_idle,
				plural(plan->n_idle, "node", "nodes"),
				spec->lifecycle.idle_s ? "set to " : "removed",
				spec->lifecycle.idle_s ? d : "");
		}
		tx_addf(&t, ".\n");
	} else if (plan->n_ignore) {
		tx_addf(&t, "%u %s not counted (~); destroy removes %s.\n", plan->n_ignore,
			plural(plan->n_ignore, "instance is", "instances are"),
			plural(plan->n_ignore, "it", "them"));
	}
	tx_cost(&t, plan, spec, changes);
	for (size_t i = 0; i < plan->n_preflight; i++) { /* the quota preflight's lines */
		tx_addf(&t, "Quota: ");
		tx_text(&t, plan->preflight[i], 0);
		tx_addf(&t, "\n");
	}
	if (changes && plan->n_create && plan->expires_at) {
		char when[21], ttl[32];

		gc_format_rfc3339(plan->expires_at, when);
		gc_format_duration(spec->lifecycle.ttl_s, ttl, sizeof(ttl));
		tx_addf(&t, "New instances expire at %s (ttl %s).\n", when, ttl);
	}
	return t.r;
}

/* ---- JSON ----------------------------------------------------------------------- */

/* A JSON string of cloud text; text that is not UTF-8 gets its high bytes as \xNN, since
 * JSON cannot carry it. */
static json_t *js_str(const char *s)
{
	struct gc_buf b = GC_BUF_INIT(GC_BUF_DEFAULT_MAX);
	json_t *j;

	if (!s)
		return json_null();
	if (gc_utf8_valid(s, strlen(s)))
		return json_string(s);
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p >= 0x80)
			gc_buf_addf(&b, "\\x%02x", *p);
		else
			gc_buf_addch(&b, (char)*p);
	}
	j = json_string(b.data);
	gc_buf_release(&b);
	return j;
}

static json_t *js_money(bool known, double v)
{
	return known ? json_real(v) : json_null();
}

/* Seconds of idle stop, null for none. */
static json_t *js_idle(int64_t idle_s)
{
	return idle_s > 0 ? json_integer((json_int_t)idle_s) : json_null();
}

/* idle_s: lifecycle.idle, what a node whose idle tag moves gets */
static json_t *js_node(const struct gc_plan_node *n, uint64_t idle_s)
{
	const struct gc_instance *inst = n->inst;
	json_t *o = json_object();

	json_object_set_new(o, "id", js_str(inst->id));
	json_object_set_new(o, "action", json_string(gc_plan_action_name(n->action)));
	json_object_set_new(o, "reason", js_str(n->reason));
	json_object_set_new(o, "state", json_string(gc_instance_state_name(inst->state)));
	json_object_set_new(o, "cloud_state", js_str(inst->state_name));
	json_object_set_new(o, "type", js_str(inst->type));
	json_object_set_new(o, "zone", js_str(inst->zone));
	json_object_set_new(o, "spot", json_boolean(inst->spot));
	json_object_set_new(o, "price", js_money(n->price_known, n->price));
	json_object_set_new(o, "health", js_str(inst->health));
	json_object_set_new(o, "spec_hash", js_str(inst->spec_hash));
	json_object_set_new(o, "launch_time", gc_out_json_time(inst->launch_time));
	json_object_set_new(o, "expires_at", gc_out_json_time(inst->expires_at));
	json_object_set_new(o, "expiry_moves", json_boolean(n->expiry_moves));
	json_object_set_new(o, "new_expires_at",
			    n->expiry_moves ? gc_out_json_time(n->new_expires_at)
					    : gc_out_json_time(inst->expires_at));
	json_object_set_new(o, "idle_s", js_idle(inst->idle_s));
	json_object_set_new(o, "idle_moves", json_boolean(n->idle_moves));
	json_object_set_new(o, "new_idle_s",
			    js_idle(n->idle_moves ? (int64_t)idle_s : inst->idle_s));
	return o;
}

static json_t *js_group(const struct gc_plan_group *g, uint64_t idle_s)
{
	const struct gc_spec_group *sg = g->spec;
	json_t *o = json_object(), *nodes = json_array();
	unsigned n_term = 0, n_ign = 0;

	for (size_t i = 0; i < g->n_nodes; i++) {
		n_term += g->nodes[i].action == GC_PLAN_TERMINATE;
		n_ign += g->nodes[i].action == GC_PLAN_IGNORE;
		json_array_append_new(nodes, js_node(&g->nodes[i], idle_s));
	}
	json_object_set_new(o, "name",
			    sg ? json_string(sg->name)
			       : js_str(g->n_nodes ? g->nodes[0].inst->group : NULL));
	json_object_set_new(o, "in_spec", json_boolean(sg != NULL));
	json_object_set_new(o, "want", json_integer(g->want));
	json_object_set_new(o, "keep", json_integer(g->keep));
	json_object_set_new(o, "create", json_integer(g->create));
	json_object_set_new(o, "replace", json_integer(g->replace));
	json_object_set_new(o, "terminate", json_integer(n_term));
	json_object_set_new(o, "ignore", json_integer(n_ign));
	json_object_set_new(o, "first_slot", json_integer(g->first_slot));
	json_object_set_new(o, "spec_hash", sg ? json_string(g->spec_hash) : json_null());
	json_object_set_new(o, "market",
			    sg ? json_string(gc_market_name(sg->market)) : json_null());
	json_object_set_new(o, "create_type", sg ? json_string(create_type(g)) : json_null());
	json_object_set_new(o, "create_price",
			    js_money(sg && g->create_price_known, g->create_price));
	json_object_set_new(o, "worst_type",
			    sg && g->worst_type ? json_string(g->worst_type) : json_null());
	json_object_set_new(o, "worst_spot", json_boolean(sg && g->worst_spot));
	json_object_set_new(o, "worst_price",
			    js_money(sg && g->worst_price_known && g->worst_type, g->worst_price));
	json_object_set_new(o, "nodes", nodes);
	return o;
}

/* What each group's gpus resolved to (docs/internals/gpus.md): the type picked and the
 * alternatives apply falls back to, in order, with their hourly prices (null: unknown). */
static json_t *js_gpu_picks(const struct gc_spec *spec)
{
	json_t *picks = json_array();

	for (size_t i = 0; i < spec->n_groups; i++) {
		const struct gc_spec_group *g = &spec->groups[i];
		json_t *alts, *picked = json_null();
		char want[64];

		if (!g->has_gpus || !g->gpus_prices)
			continue;
		alts = json_array();
		gc_gpu_request_format(&g->gpus, want, sizeof(want));
		for (size_t t = g->gpus_first; t < g->n_instance_types; t++) {
			double price = g->gpus_prices[t - g->gpus_first];
			json_t *o = json_pack("{s:s, s:o}", "type", g->instance_types[t],
					      "price_hourly",
					      price >= 0 ? json_real(price) : json_null());

			if (t == g->gpus_first) {
				json_decref(picked);
				picked = o;
			} else {
				json_array_append_new(alts, o);
			}
		}
		json_array_append_new(
			picks,
			json_pack("{s:s, s:s, s:s, s:o, s:o, s:s}", "group", g->name, "gpus", want,
				  "market", g->market == GC_MARKET_ON_DEMAND ? "on-demand" : "spot",
				  "picked", picked, "alternatives", alts, "currency",
				  g->gpus_currency));
	}
	return picks;
}

int gc_plan_render_json(struct gc_buf *out, const struct gc_plan *plan, const struct gc_spec *spec,
			json_t *hours)
{
	json_t *doc = json_object(), *summary = json_object(), *groups = json_array();
	json_t *cost = json_object(), *skips = json_array(), *quota;
	double max = plan->max_hourly_cost;
	char *text;
	int r = -1;

	json_object_set_new(doc, "cluster", json_string(spec->name));
	json_object_set_new(doc, "cloud", json_string(spec->provider.name));
	json_object_set_new(doc, "region", json_string(spec->provider.region));
	json_object_set_new(doc, "changes", json_boolean(gc_plan_has_changes(plan)));
	json_object_set_new(summary, "create", json_integer(plan->n_create));
	json_object_set_new(summary, "terminate", json_integer(plan->n_terminate));
	json_object_set_new(summary, "replace", json_integer(plan->n_replace));
	json_object_set_new(summary, "keep", json_integer(plan->n_keep));
	json_object_set_new(summary, "ignore", json_integer(plan->n_ignore));
	json_object_set_new(summary, "expiry", json_integer(plan->n_expiry));
	json_object_set_new(summary, "idle", json_integer(plan->n_idle));
	json_object_set_new(doc, "summary", summary);
	for (size_t i = 0; i < plan->n_groups; i++)
		json_array_append_new(groups, js_group(&plan->groups[i], spec->lifecycle.idle_s));
	json_object_set_new(doc, "groups", groups);
	json_object_set_new(cost, "now", js_money(plan->cost_now_known, plan->cost_now));
	json_object_set_new(cost, "after", js_money(plan->cost_after_known, plan->cost_after));
	json_object_set_new(cost, "worst_after",
			    js_money(plan->cost_worst_known, plan->cost_worst));
	json_object_set_new(cost, "known", json_boolean(plan->cost_known));
	json_object_set_new(cost, "currency", json_string(plan->currency));
	json_object_set_new(cost, "max_hourly_cost", max > 0 ? json_real(max) : json_null());
	json_object_set_new(cost, "unknown_price",
			    plan->cost_known ? json_null() : js_str(plan->unknown_price));
	json_object_set_new(cost, "over_cap", json_boolean(plan->over_cap));
	for (size_t i = 0; i < plan->n_skips; i++) {
		const struct gc_plan_skip *k = &plan->skips[i];

		json_array_append_new(
			skips,
			json_pack("{s:s, s:s, s:s, s:I, s:f, s:f}", "group", k->group, "type",
				  k->type, "market", k->spot ? "spot" : "on-demand", "count",
				  (json_int_t)k->count, "price", k->price, "cost_after", k->total));
	}
	json_object_set_new(cost, "skipped_candidates", skips);
	json_object_set_new(doc, "cost", cost);
	json_object_set_new(doc, "expires_at", gc_out_json_time(plan->expires_at));
	json_object_set_new(doc, "quota", quota = json_array());
	for (size_t i = 0; i < plan->n_preflight; i++)
		json_array_append_new(quota, js_str(plan->preflight[i]));
	json_object_set_new(doc, "gpu_picks", js_gpu_picks(spec));
	json_object_set_new(doc, "hours", hours ? hours : json_null());

	/* 15 digits: sums of prices print as 5.03, not 5.0300000000000002 */
	text = json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(15));
	if (text && gc_buf_addstr(out, text) == 0 && gc_buf_addch(out, '\n') == 0)
		r = 0;
	free(text);
	json_decref(doc);
	return r;
}
