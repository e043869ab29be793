/*
 * cmd-validate.c: `gpucluster validate [FILE...]`.
 *
 * Loads each spec the way every other command will, reports every problem with its
 * position, and for a valid spec says back in a few lines what it describes, so a
 * user can check at a glance that "4 x p4d in us-east-1a, spot" is what they meant
 * before any money is spent. With -o json the same facts come out as data.
 *
 * User steps are listed by name only: their `run` text has ${VAR} references expanded
 * and may hold tokens, so it is never echoed.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

#include <jansson.h>

#include "cmd/cmd.h"
#include "cmd/output.h"
#include "core/buf.h"
#include "core/diag.h"
#include "core/error.h"
#include "core/money.h"
#include "core/spec.h"
#include "core/steps.h"

static const char *container_name(enum gc_container c)
{
	return c == GC_CONTAINER_DOCKER ? "docker" : "none";
}

/* ---- text ------------------------------------------------------------------------ */

/* Appends "a, b, c" (or none_text when n is 0), starting at element first. */
static void add_list(struct gc_buf *b, char *const *items, size_t first, size_t n,
		     const char *none_text)
{
	if (first >= n) {
		gc_buf_addstr(b, none_text);
		return;
	}
	for (size_t i = first; i < n; i++)
		gc_buf_addf(b, "%s%s", i > first ? ", " : "", items[i]);
}

/* The label column of the summary. */
#define LABEL(b, text) gc_buf_addf((b), "  %-11s", (text))

static void explain_group(struct gc_buf *b, const struct gc_spec_group *g, const char *currency)
{
	LABEL(b, "group");
	if (g->has_gpus) {
		char want[64];

		gc_gpu_request_format(&g->gpus, want, sizeof(want));
		gc_buf_addf(b, "%s: %u \u00d7 gpus %s (plan picks the type%s", g->name, g->count,
			    want, g->n_instance_types ? " after: " : ")");
		add_list(b, g->instance_types, 0, g->n_instance_types, "");
		gc_buf_addstr(b, g->n_instance_types ? ")" : "");
	} else {
		gc_buf_addf(b, "%s: %u \u00d7 %s", g->name, g->count, g->instance_types[0]);
	}
	if (!g->has_gpus && g->n_instance_types > 1) {
		gc_buf_addstr(b, " (fallback: ");
		add_list(b, g->instance_types, 1, g->n_instance_types, "");
		gc_buf_addch(b, ')');
	}
	gc_buf_addch(b, '\n');

	LABEL(b, "");
	if (g->n_zones == 0) {
		gc_buf_addstr(b, "any zone");
	} else {
		gc_buf_addstr(b, g->n_zones == 1 ? "zone " : "zones ");
		add_list(b, g->zones, 0, g->n_zones, "");
	}
	gc_buf_addf(b, "; placement %s%s", gc_placement_name(g->placement),
		    g->mixed_types ? "; mixed instance types" : "");
	if (g->interconnect != GC_INTERCONNECT_AUTO)
		gc_buf_addf(b, "; interconnect %s", gc_interconnect_name(g->interconnect));
	if (g->interfaces)
		gc_buf_addf(b, "; %u RDMA interface%s", g->interfaces,
			    g->interfaces == 1 ? "" : "s");
	if (g->role)
		gc_buf_addf(b, "; role %s", g->role);
	gc_buf_addstr(b, "\n");

	LABEL(b, "");
	gc_buf_addf(b, "market %s", gc_market_name(g->market));
	if (g->market != GC_MARKET_ON_DEMAND && g->max_spot_price > 0)
		gc_buf_addf(b, " (max %.4f %s/h)", g->max_spot_price, currency);
	gc_buf_addf(b, "; image %s; disk %u GB\n", g->image, g->disk_gb);
}

static void explain(struct gc_buf *b, const struct gc_spec *s)
{
	unsigned nodes = gc_spec_node_count(s);

	LABEL(b, "cluster");
	gc_buf_addf(b, "%s on %s, region %s\n", s->name, s->provider.name, s->provider.region);
	if (s->provider.endpoint) {
		LABEL(b, "endpoint");
		gc_buf_addf(b, "%s\n", s->provider.endpoint);
	}
	if (s->provider.profile) {
		LABEL(b, "profile");
		gc_buf_addf(b, "%s\n", s->provider.profile);
	}
	if (s->provider.oidc.role) {
		LABEL(b, "oidc");
		gc_buf_addf(b, "in GitHub Actions, role %s%s%s\n", s->provider.oidc.role,
			    s->provider.oidc.provider ? " via " : "",
			    s->provider.oidc.provider ? s->provider.oidc.provider : "");
	}
	if (s->provider.network.vpc) {
		LABEL(b, "network");
		gc_buf_addf(b, "VPC %s, %s", s->provider.network.vpc,
			    s->provider.ops->facts->subnet_word);
		for (size_t i = 0; i < s->provider.network.n_subnets; i++)
			gc_buf_addf(b, "%s %s in %s", i ? "," : "",
				    s->provider.network.subnets[i].id,
				    s->provider.network.subnets[i].zone);
		gc_buf_addch(b, '\n');
	}
	LABEL(b, "ssh");
	gc_buf_addf(b, "user %s, port %u, from ", s->ssh.user, s->ssh.port);
	add_list(b, s->ssh.allow_from, 0, s->ssh.n_allow_from, "your address /32");
	gc_buf_addch(b, '\n');

	LABEL(b, "nodes");
	gc_buf_addf(b, "%u in %zu group%s\n", nodes, s->n_groups, s->n_groups == 1 ? "" : "s");
	for (size_t i = 0; i < s->n_groups; i++)
		explain_group(b, &s->groups[i], gc_money_spec_currency(s));

	LABEL(b, "bootstrap");
	gc_buf_addf(b, "driver %s, cuda %s, cudnn %s, container %s\n", s->bootstrap.driver,
		    s->bootstrap.cuda, s->bootstrap.cudnn, container_name(s->bootstrap.container));
	if (s->bootstrap.monitoring != GC_MONITORING_NONE) {
		LABEL(b, "monitoring");
		gc_buf_addf(b, "%s exporter on port %u of every GPU node, reached from the nodes",
			    gc_monitoring_names[s->bootstrap.monitoring], GC_DCGM_PORT);
		if (s->bootstrap.n_monitoring_allow_from)
			gc_buf_addstr(b, " and ");
		add_list(b, s->bootstrap.monitoring_allow_from, 0,
			 s->bootstrap.n_monitoring_allow_from, "");
		gc_buf_addch(b, '\n');
	}
	for (size_t i = 0; i < GC_MIRROR_N; i++) {
		if (!s->bootstrap.mirrors[i])
			continue;
		LABEL(b, "mirror");
		gc_buf_addf(b, "%s from %s\n", gc_mirror_names[i], s->bootstrap.mirrors[i]);
	}
	if (s->bootstrap.n_steps > 0) {
		LABEL(b, "steps");
		for (size_t i = 0; i < s->bootstrap.n_steps; i++)
			gc_buf_addf(b, "%s%s", i ? ", " : "", s->bootstrap.steps[i].name);
		gc_buf_addch(b, '\n');
	}
	LABEL(b, "smoke");
	if (s->bootstrap.smoke == 0)
		gc_buf_addstr(b, "none");
	for (size_t i = 0, k = 0; i < GC_SMOKE_N_CHECKS; i++)
		if (s->bootstrap.smoke & (1u << i))
			gc_buf_addf(b, "%s%s", k++ ? ", " : "", gc_smoke_names[i]);
	gc_buf_addch(b, '\n');

	if (s->lifecycle.ttl_s > 0) {
		char ttl[32];

		gc_format_duration(s->lifecycle.ttl_s, ttl, sizeof(ttl));
		LABEL(b, "ttl");
		gc_buf_addf(b, "%s (machines are deleted by the cloud after this)\n", ttl);
	}
	if (s->lifecycle.max_hourly_cost > 0) {
		LABEL(b, "max cost");
		gc_buf_addf(b, "%.2f %s per hour\n", s->lifecycle.max_hourly_cost,
			    gc_money_spec_currency(s));
	}
	if (s->lifecycle.cny_per_usd > 0) {
		LABEL(b, "rate");
		gc_buf_addf(b, "%g CNY per USD\n", s->lifecycle.cny_per_usd);
	}
	if (s->n_tags > 0) {
		LABEL(b, "tags");
		for (size_t i = 0; i < s->n_tags; i++)
			gc_buf_addf(b, "%s%s=%s", i ? ", " : "", s->tags[i].key, s->tags[i].value);
		gc_buf_addch(b, '\n');
	}
	if (s->n_envs > 0) {
		LABEL(b, "envs");
		for (size_t i = 0; i < s->n_envs; i++)
			gc_buf_addf(b, "%s%s", i ? ", " : "", s->envs[i].key);
		gc_buf_addch(b, '\n');
	}
	if (s->n_secrets > 0) {
		LABEL(b, "secrets");
		for (size_t i = 0; i < s->n_secrets; i++)
			gc_buf_addf(b, "%s%s", i ? ", " : "", s->secrets[i]);
		gc_buf_addch(b, '\n');
	}
	if (s->workdir) {
		LABEL(b, "workdir");
		gc_buf_addf(b, "%s\n", s->workdir);
	}
}

static void print_valid(struct gc_cmd_ctx *ctx, const char *file, const struct gc_spec *s,
			bool first)
{
	struct gc_output *out = ctx->out;
	struct gc_buf b = GC_BUF_INIT(0);

	if (!first)
		gc_out_puts(out, out->out, "\n");
	gc_out_printf(out, out->out, "%s", gc_out_style(out, out->out, GC_STYLE_BOLD));
	gc_out_puts_clean(out, out->out, file);
	gc_out_printf(out, out->out, ":%s %svalid%s\n", gc_out_style(out, out->out, GC_STYLE_RESET),
		      gc_out_style(out, out->out, GC_STYLE_GREEN),
		      gc_out_style(out, out->out, GC_STYLE_RESET));
	explain(&b, s);
	gc_out_puts_clean(out, out->out, b.data);
	gc_buf_release(&b);
}

/* ---- JSON ------------------------------------------------------------------------ */

/* A JSON string, or null for NULL (and for bytes jansson refuses as not UTF-8). */
static json_t *jstr(const char *s)
{
	json_t *j = s ? json_string(s) : NULL;

	return j ? j : json_null();
}

static json_t *jlist(char *const *items, size_t n)
{
	json_t *a = json_array();

	for (size_t i = 0; i < n; i++)
		json_array_append_new(a, jstr(items[i]));
	return a;
}

static json_t *group_json(const struct gc_spec_group *g)
{
	char want[64];
	json_t *j;

	gc_gpu_request_format(&g->gpus, want, sizeof(want));
	j = json_pack("{s:o, s:I, s:o, s:o, s:o, s:o, s:o, s:b, s:I, s:o, s:b, s:o, s:o}", "name",
		      jstr(g->name), "count", (json_int_t)g->count, "instance_types",
		      jlist(g->instance_types, g->n_instance_types), "zones",
		      jlist(g->zones, g->n_zones), "market", jstr(gc_market_name(g->market)),
		      "max_spot_price",
		      g->max_spot_price > 0 ? json_real(g->max_spot_price) : json_null(), "image",
		      jstr(g->image), "image_is_alias", (int)g->image_is_alias, "disk_gb",
		      (json_int_t)g->disk_gb, "placement", jstr(gc_placement_name(g->placement)),
		      "mixed_types", (int)g->mixed_types, "interconnect",
		      jstr(gc_interconnect_name(g->interconnect)), "interfaces",
		      g->interfaces ? json_integer(g->interfaces) : json_null());
	if (j)
		json_object_set_new(j, "gpus", g->has_gpus ? json_string(want) : json_null());
	if (j)
		json_object_set_new(j, "role", jstr(g->role));
	return j;
}

static json_t *step_json(const struct gc_spec_step *st)
{
	char timeout[32];

	gc_format_duration(st->timeout_s, timeout, sizeof(timeout));
	return json_pack("{s:o, s:o, s:s, s:I}", "name", jstr(st->name), "run", jstr(st->run),
			 "timeout", timeout, "timeout_seconds", (json_int_t)st->timeout_s);
}

/* provider.network, or null: {"vpc": ID, "subnets": {ZONE: ID, ...}} */
static json_t *network_json(const struct gc_spec_network *n)
{
	json_t *subnets;

	if (!n->vpc)
		return json_null();
	subnets = json_object();
	for (size_t i = 0; i < n->n_subnets; i++)
		json_object_set_new(subnets, n->subnets[i].zone, jstr(n->subnets[i].id));
	return json_pack("{s:o, s:o}", "vpc", jstr(n->vpc), "subnets", subnets);
}

static json_t *spec_json(const struct gc_spec *s)
{
	const struct gc_spec_oidc *oidc = &s->provider.oidc;
	bool has_ttl = s->lifecycle.ttl_s > 0;
	json_t *j = json_object(), *o, *a;
	char ttl[32];

	json_object_set_new(j, "name", jstr(s->name));
	o = oidc->role ? json_pack("{s:o, s:o, s:o, s:o}", "role", jstr(oidc->role), "provider",
				   jstr(oidc->provider), "audience", jstr(oidc->audience),
				   "session_name", jstr(oidc->session_name))
		       : json_null();
	json_object_set_new(j, "provider",
			    json_pack("{s:o, s:o, s:o, s:o, s:o, s:o}", "name",
				      jstr(s->provider.name), "region", jstr(s->provider.region),
				      "profile", jstr(s->provider.profile), "endpoint",
				      jstr(s->provider.endpoint), "oidc", o, "network",
				      network_json(&s->provider.network)));
	json_object_set_new(j, "ssh",
			    json_pack("{s:o, s:I, s:o, s:o}", "user", jstr(s->ssh.user), "port",
				      (json_int_t)s->ssh.port, "allow_from",
				      jlist(s->ssh.allow_from, s->ssh.n_allow_from), "key_env",
				      jstr(s->ssh.key_env)));

	json_object_set_new(j, "node_count", json_integer(gc_spec_node_count(s)));
	a = json_array();
	for (size_t i = 0; i < s->n_groups; i++)
		json_array_append_new(a, group_json(&s->groups[i]));
	json_object_set_new(j, "node_groups", a);

	a = json_array();
	for (size_t i = 0; i < s->bootstrap.n_steps; i++)
		json_array_append_new(a, step_json(&s->bootstrap.steps[i]));
	o = json_array();
	for (size_t i = 0; i < GC_SMOKE_N_CHECKS; i++)
		if (s->bootstrap.smoke & (1u << i))
			json_array_append_new(o, json_string(gc_smoke_names[i]));
	json_object_set_new(j, "bootstrap",
			    json_pack("{s:o, s:o, s:o, s:o, s:o, s:o}", "driver",
				      jstr(s->bootstrap.driver), "cuda", jstr(s->bootstrap.cuda),
				      "cudnn", jstr(s->bootstrap.cudnn), "container",
				      jstr(container_name(s->bootstrap.container)), "steps", a,
				      "smoke", o));
	o = json_object(); /* bootstrap.mirrors: every name, null where unset */
	for (size_t i = 0; i < GC_MIRROR_N; i++)
		json_object_set_new(o, gc_mirror_names[i], jstr(s->bootstrap.mirrors[i]));
	json_object_set_new(json_object_get(j, "bootstrap"), "mirrors", o);
	json_object_set_new(json_object_get(j, "bootstrap"), "monitoring",
			    json_string(gc_monitoring_names[s->bootstrap.monitoring]));
	json_object_set_new(
		json_object_get(j, "bootstrap"), "monitoring_allow_from",
		jlist(s->bootstrap.monitoring_allow_from, s->bootstrap.n_monitoring_allow_from));

	gc_format_duration(s->lifecycle.ttl_s, ttl, sizeof(ttl));
	json_object_set_new(
		j, "lifecycle",
		json_pack("{s:o, s:o, s:o, s:s, s:o}", "ttl",
			  has_ttl ? json_string(ttl) : json_null(), "ttl_seconds",
			  has_ttl ? json_integer((json_int_t)s->lifecycle.ttl_s) : json_null(),
			  "max_hourly_cost",
			  s->lifecycle.max_hourly_cost > 0 ? json_real(s->lifecycle.max_hourly_cost)
							   : json_null(),
			  "currency", gc_money_spec_currency(s), "cny_per_usd",
			  s->lifecycle.cny_per_usd > 0 ? json_real(s->lifecycle.cny_per_usd)
						       : json_null()));
	/* lifecycle.on_preempt and its bound: the spot nodes' hook */
	json_object_set_new(json_object_get(j, "lifecycle"), "on_preempt",
			    jstr(s->lifecycle.on_preempt));
	json_object_set_new(json_object_get(j, "lifecycle"), "on_preempt_timeout",
			    s->lifecycle.on_preempt
				    ? json_integer((json_int_t)s->lifecycle.on_preempt_timeout_s)
				    : json_null());
	/* lifecycle.idle in seconds: the nodes' idle stop (docs/internals/idle.md) */
	json_object_set_new(json_object_get(j, "lifecycle"), "idle",
			    s->lifecycle.idle_s ? json_integer((json_int_t)s->lifecycle.idle_s)
						: json_null());

	o = json_object();
	for (size_t i = 0; i < s->n_tags; i++)
		json_object_set_new(o, s->tags[i].key, jstr(s->tags[i].value));
	json_object_set_new(j, "tags", o);
	o = json_object();
	for (size_t i = 0; i < s->n_envs; i++)
		json_object_set_new(o, s->envs[i].key, jstr(s->envs[i].value));
	json_object_set_new(j, "envs", o);
	o = json_array();
	for (size_t i = 0; i < s->n_secrets; i++)
		json_array_append_new(o, jstr(s->secrets[i]));
	json_object_set_new(j, "secrets", o);
	json_object_set_new(j, "workdir", s->workdir ? jstr(s->workdir) : json_null());
	o = json_array();
	for (size_t i = 0; i < s->n_mounts; i++)
		json_array_append_new(
			o,
			json_pack("{s:o, s:o, s:s}", "bucket", jstr(s->mounts[i].bucket), "path",
				  jstr(s->mounts[i].path), "mode", s->mounts[i].rw ? "rw" : "ro"));
	json_object_set_new(j, "mounts", o);
	return j;
}

static json_t *diag_json(unsigned line, unsigned col, const char *path, const char *message)
{
	return json_pack("{s:I, s:I, s:o, s:o}", "line", (json_int_t)line, "column",
			 (json_int_t)col, "path", jstr(path ? path : ""), "message", jstr(message));
}

static json_t *file_json(const char *file, const struct gc_spec *spec, struct gc_diags *d,
			 const struct gc_error *err)
{
	json_t *j = json_object(), *errors = json_array();

	json_object_set_new(j, "file", jstr(file));
	json_object_set_new(j, "valid", json_boolean(spec != NULL));
	if (!spec) {
		gc_diags_sort(d);
		for (size_t i = 0; i < d->nr; i++)
			json_array_append_new(errors,
					      diag_json(d->items[i].line, d->items[i].col,
							d->items[i].path, d->items[i].message));
		if (d->nr == 0)
			json_array_append_new(errors, diag_json(0, 0, "", err->message));
	}
	json_object_set_new(j, "errors", errors);
	json_object_set_new(j, "spec", spec ? spec_json(spec) : json_null());
	return j;
}

/* ---- the command ----------------------------------------------------------------- */

/* Validates one file and reports it (text now, JSON into files). Returns 0 if valid. */
static int validate_file(struct gc_cmd_ctx *ctx, const char *file, json_t *files, bool first)
{
	struct gc_spec *spec = NULL;
	struct gc_diags diags;
	struct gc_error err;
	int rc;

	gc_error_init(&err);
	gc_diags_init(&diags, file);
	rc = gc_spec_load_file(&spec, file, ctx->env, &diags, &err);
	if (rc < 0)
		spec = NULL;
	gc_log_debug(ctx->log, "validated '%s': %s", file, rc < 0 ? "invalid" : "valid");
	if (files)
		json_array_append_new(files, file_json(file, spec, &diags, &err));
	else if (rc < 0)
		gc_cmd_print_spec_errors(ctx->out, file, &diags, &err);
	else if (!ctx->globals.quiet)
		print_valid(ctx, file, spec, first);
	gc_spec_free(spec);
	gc_diags_release(&diags);
	return rc;
}

static int validate_exec(struct gc_cmd_ctx *ctx)
{
	static const char *const default_file = GC_CMD_DEFAULT_SPEC;
	const char *const *files = (const char *const *)ctx->args;
	size_t n = ctx->n_args;
	json_t *doc = NULL, *list = NULL;
	int rc = GC_EXIT_OK;

	if (n == 0) {
		files = &default_file;
		n = 1;
	}
	if (ctx->globals.output == GC_OUTPUT_JSON) {
		doc = json_object();
		list = json_array();
		json_object_set(doc, "files", list);
	}
	for (size_t i = 0; i < n; i++)
		if (validate_file(ctx, files[i], list, i == 0) < 0)
			rc = GC_EXIT_FAILURE;
	if (doc && gc_out_json(ctx->out, doc) < 0)
		rc = GC_EXIT_FAILURE;
	json_decref(list);
	json_decref(doc);
	return rc;
}

const struct gc_cmd_entry gc_cmd_validate = {
	.name = "validate",
	.summary = "check cluster specs and explain what they describe",
	.usage = "[FILE...]",
	.description =
		"Checks each FILE (default: " GC_CMD_DEFAULT_SPEC ") and prints every problem as\n"
		"FILE:LINE:COL: error: MESSAGE, sorted by position, then a count per file.\n"
		"For a valid spec, says back what it describes: cloud and region, each node\n"
		"group's size, instance types, zones and market, the bootstrap stack, TTL,\n"
		"cost limit and tags. ${VAR} references are expanded from the environment.\n"
		"Nothing is sent to any cloud. Exits 0 when every file is valid, 1 otherwise.",
	.max_args = GC_CMD_ARGS_UNLIMITED,
	.exec = validate_exec,
};
