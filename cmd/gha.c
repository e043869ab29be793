/*
 * gha.c: GitHub Actions mode (see gha.h): workflow commands, the step's outputs and its
 * Markdown summary.
 *
 * Everything that reaches the runner is escaped the way the runner unescapes it: `%`,
 * CR and LF in a command's message, also `:` and `,` in its properties, so a spec error
 * or a cloud's message can never end a command early or start another one. Output values
 * that hold a line break use the `name<<DELIM` form with a delimiter derived from the
 * value's hash, which the value cannot contain. Summary cells are plain text: `|`, `<`,
 * `>` and line breaks are escaped, since the table is rendered as Markdown and HTML.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bootstrap/cluster.h"
#include "cmd/cluster.h"
#include "cmd/cmd.h"
#include "cmd/gha.h"
#include "core/alloc.h"
#include "core/engine.h"
#include "core/hash.h"
#include "core/keygen.h"
#include "core/plan.h"
#include "core/str.h"

#define DELIM_PREFIX "gpucluster_EOF_"

/* ---- formatting ------------------------------------------------------------------ */

static void escape(struct gc_buf *out, const char *s, bool property)
{
	for (; s && *s; s++) {
		switch (*s) {
		case '%': gc_buf_addstr(out, "%25"); break;
		case '\r': gc_buf_addstr(out, "%0D"); break;
		case '\n': gc_buf_addstr(out, "%0A"); break;
		case ':':
			if (property)
				gc_buf_addstr(out, "%3A");
			else
				gc_buf_addch(out, *s);
			break;
		case ',':
			if (property)
				gc_buf_addstr(out, "%2C");
			else
				gc_buf_addch(out, *s);
			break;
		default: gc_buf_addch(out, *s); break;
		}
	}
}

void gc_gha_escape_data(struct gc_buf *out, const char *s)
{
	escape(out, s, false);
}

void gc_gha_escape_property(struct gc_buf *out, const char *s)
{
	escape(out, s, true);
}

void gc_gha_format_annotation(struct gc_buf *out, const char *level, const char *file,
			      unsigned line, unsigned col, const char *message)
{
	struct gc_buf clean = GC_BUF_INIT(0);

	gc_buf_addf(out, "::%s", level);
	if (file) {
		gc_buf_addstr(out, " file=");
		gc_gha_escape_property(out, file);
		if (line) {
			gc_buf_addf(out, ",line=%u", line);
			if (col)
				gc_buf_addf(out, ",col=%u", col);
		}
	}
	gc_buf_addstr(out, "::");
	/* the other controls as \\xNN, line by line; CR and LF become %0D and %0A */
	for (const char *p = message; p && *p;) {
		size_t n = strcspn(p, "\r\n");

		gc_str_escape(&clean, p, n, GC_ESC_OWN_CMD);
		p += n;
		if (*p)
			gc_buf_addch(&clean, *p++);
	}
	gc_gha_escape_data(out, clean.data);
	gc_buf_addch(out, '\n');
	gc_buf_release(&clean);
}

void gc_gha_format_mask(struct gc_buf *out, const char *secret)
{
	const char *p = secret;

	while (p && *p) {
		size_t n = strcspn(p, "\r\n");

		if (n) {
			char *line = gc_xstrndup(p, n);

			gc_buf_addstr(out, "::add-mask::");
			gc_gha_escape_data(out, line);
			gc_buf_addch(out, '\n');
			gc_wipe(line, n);
			free(line);
		}
		p += n;
		p += strspn(p, "\r\n");
	}
}

void gc_gha_format_output(struct gc_buf *out, const char *name, const char *value)
{
	char hex[GC_SHA256_HEX_LEN], delim[64];
	unsigned k = 0;

	if (!value)
		value = "";
	if (!strpbrk(value, "\r\n")) {
		gc_buf_addf(out, "%s=%s\n", name, value);
		return;
	}
	gc_sha256_hex(value, strlen(value), hex);
	snprintf(delim, sizeof(delim), "%s%.16s", DELIM_PREFIX, hex);
	while (strstr(value, delim))
		snprintf(delim, sizeof(delim), "%s%.16s_%u", DELIM_PREFIX, hex, ++k);
	gc_buf_addf(out, "%s<<%s\n%s\n%s\n", name, delim, value, delim);
}

/* Text for a Markdown table cell or line: no line breaks, no table or HTML syntax. */
static void md(struct gc_buf *out, const char *s)
{
	if (!s || !*s) {
		gc_buf_addch(out, '-');
		return;
	}
	for (; *s; s++) {
		switch (*s) {
		case '|': gc_buf_addstr(out, "\\|"); break;
		case '\\': gc_buf_addstr(out, "\\\\"); break;
		case '<': gc_buf_addstr(out, "&lt;"); break;
		case '>': gc_buf_addstr(out, "&gt;"); break;
		case '&': gc_buf_addstr(out, "&amp;"); break;
		case '\r':
		case '\n':
		case '\t': gc_buf_addch(out, ' '); break;
		default: {
			size_t n = strcspn(s, "|\\<>&\r\n\t");

			gc_str_escape(out, s, n, 0); /* ESC, other controls, C1 */
			s += n - 1;
			break;
		}
		}
	}
}

static size_t running_nodes(const struct gc_gha_apply *a)
{
	return a->n_nodes;
}

/* One output whose value may come from outside: one line, control characters escaped. */
static void output_clean(struct gc_buf *out, const char *name, const char *value)
{
	struct gc_buf v = GC_BUF_INIT(0);

	gc_str_escape(&v, value ? value : "", value ? strlen(value) : 0, 0);
	gc_gha_format_output(out, name, v.data);
	gc_buf_release(&v);
}

void gc_gha_format_apply_outputs(struct gc_buf *out, const struct gc_gha_apply *a)
{
	struct gc_buf v = GC_BUF_INIT(0);

	output_clean(out, "cluster", a->cluster);
	gc_buf_addf(&v, "%zu", running_nodes(a));
	gc_gha_format_output(out, "node-count", v.data);
	gc_buf_reset(&v);
	for (size_t i = 0; i < a->n_nodes; i++)
		if (a->nodes[i].public_ip && *a->nodes[i].public_ip)
			gc_buf_addf(&v, "%s%s", v.len ? "," : "", a->nodes[i].public_ip);
	output_clean(out, "ips", v.data);
	gc_buf_reset(&v);
	if (a->cost >= 0)
		gc_buf_addf(&v, "%.4f", a->cost);
	gc_gha_format_output(out, "hourly-cost", v.data);
	gc_buf_release(&v);
}

static void smoke_result(struct gc_buf *out, const struct gc_gha_node *n)
{
	if (n->smoke_ok)
		gc_buf_addstr(out, "ok");
	else {
		gc_buf_addstr(out, "FAILED");
		if (n->detail && *n->detail) {
			gc_buf_addstr(out, ": ");
			md(out, n->detail);
		}
	}
	if (n->simulated)
		gc_buf_addstr(out, " (simulated)");
}

void gc_gha_format_apply_summary(struct gc_buf *out, const struct gc_gha_apply *a)
{
	size_t n = running_nodes(a);

	gc_buf_addf(out, "### gpucluster %s: `%s` (%s %s)\n\n", a->command, a->cluster, a->cloud,
		    a->region);
	if (a->error) {
		gc_buf_addstr(out, "- **Result:** failed: ");
		md(out, a->error);
		gc_buf_addch(out, '\n');
	} else {
		gc_buf_addf(out, "- **Result:** ok, %zu node%s running\n", n, n == 1 ? "" : "s");
	}
	if (a->have_plan) {
		gc_buf_addf(out, "- **Plan:** %u to create", a->create);
		if (a->replace)
			gc_buf_addf(out, " (%u replacing)", a->replace);
		gc_buf_addf(out, ", %u to terminate, %u kept\n", a->terminate, a->keep);
	}
	if (a->cost >= 0)
		gc_buf_addf(out, "- **Cost:** %.2f %s/h for %zu node%s\n", a->cost,
			    a->currency ? a->currency : "USD", n, n == 1 ? "" : "s");
	else
		gc_buf_addstr(out, "- **Cost:** unknown (a price is missing)\n");
	if (a->expires_at)
		gc_buf_addf(out, "- **Expires:** %s (the cloud terminates the nodes then)\n",
			    a->expires_at);
	gc_buf_addch(out, '\n');
	if (n == 0) {
		gc_buf_addstr(out, "No running nodes.\n\n");
		return;
	}
	gc_buf_addf(out,
		    "| Node | Instance | Type | Zone | Market | Public IP | Private IP | "
		    "%s/h |\n| --- | --- | --- | --- | --- | --- | --- | --- |\n",
		    a->currency ? a->currency : "USD");
	for (size_t i = 0; i < a->n_nodes; i++) {
		const struct gc_gha_node *nd = &a->nodes[i];
		const char *const cells[] = { nd->label,
					      nd->id,
					      nd->type,
					      nd->zone,
					      nd->spot ? "spot" : "on-demand",
					      nd->public_ip,
					      nd->private_ip };

		gc_buf_addstr(out, "|");
		for (size_t k = 0; k < sizeof(cells) / sizeof(cells[0]); k++) {
			gc_buf_addch(out, ' ');
			md(out, cells[k]);
			gc_buf_addstr(out, " |");
		}
		if (nd->usd_per_hour >= 0)
			gc_buf_addf(out, " %.3f |\n", nd->usd_per_hour);
		else
			gc_buf_addstr(out, " unknown |\n");
	}
	if (!a->bootstrapped) {
		gc_buf_addch(out, '\n');
		return;
	}
	gc_buf_addstr(out,
		      "\n#### Smoke test\n\n| Node | GPUs | Model | GEMM | Result |\n"
		      "| --- | --- | --- | --- | --- |\n");
	for (size_t i = 0; i < a->n_nodes; i++) {
		const struct gc_gha_node *nd = &a->nodes[i];

		gc_buf_addstr(out, "| ");
		md(out, nd->label);
		if (!nd->smoke_ran) {
			gc_buf_addstr(out, " | - | - | - | not tested |\n");
			continue;
		}
		if (nd->gpus >= 0)
			gc_buf_addf(out, " | %d | ", nd->gpus);
		else
			gc_buf_addstr(out, " | - | ");
		md(out, nd->gpu_model);
		if (nd->gemm_tflops >= 0)
			gc_buf_addf(out, " | %.1f TFLOPS | ", nd->gemm_tflops);
		else
			gc_buf_addstr(out, " | - | ");
		smoke_result(out, nd);
		gc_buf_addstr(out, " |\n");
	}
	gc_buf_addch(out, '\n');
}

/* ---- the mode -------------------------------------------------------------------- */

bool gc_gha_enabled(const struct gc_spec_env *env)
{
	const char *v;

	if (!env || !env->lookup)
		return false;
	v = env->lookup(env->ctx, "GITHUB_ACTIONS");
	return v && strcmp(v, "true") == 0;
}

void gc_gha_init(struct gc_gha *g, struct gc_output *out, struct gc_log *log,
		 const struct gc_spec_env *env)
{
	memset(g, 0, sizeof(*g));
	g->out = out;
	g->log = log;
	g->env = env;
}

void gc_gha_release(struct gc_gha *g)
{
	if (!g)
		return;
	json_decref(g->boot);
	g->boot = NULL;
}

/* Caller holds g->log's mutex. */
static void flush_masks_locked(struct gc_gha *g)
{
	struct gc_buf b = GC_BUF_INIT(0);

	if (!g->log || g->masked >= g->log->n_secrets)
		return;
	for (; g->masked < g->log->n_secrets; g->masked++)
		gc_gha_format_mask(&b, g->log->secrets[g->masked]);
	fputs(b.data, g->out->err);
	fflush(g->out->err);
	gc_wipe(b.data, b.len);
	gc_buf_release(&b);
}

void gc_gha_flush_masks(struct gc_gha *g)
{
	if (!g || !g->log)
		return;
	pthread_mutex_lock(&g->log->lock);
	flush_masks_locked(g);
	pthread_mutex_unlock(&g->log->lock);
}

void gc_gha_log_sink(void *ctx, enum gc_log_level level, const char *line)
{
	struct gc_gha *g = ctx;

	flush_masks_locked(g);
	gc_output_log_sink(g->out, level, line);
}

void gc_gha_print_diags(struct gc_output *o, const char *file, const struct gc_diags *d,
			const struct gc_error *err)
{
	struct gc_buf b = GC_BUF_INIT(0);
	char *msg;

	for (size_t i = 0; i < d->nr || (i == 0 && err); i++) {
		msg = gc_log_redact_message(o->log, d->nr ? d->items[i].message : err->message);
		gc_gha_format_annotation(&b, "error", file, d->nr ? d->items[i].line : 0,
					 d->nr ? d->items[i].col : 0, msg);
		free(msg);
	}
	fputs(b.data, o->err);
	gc_buf_release(&b);
}

/* Appends text to the file the runner named in variable var; warns when it cannot. */
static void append_file(struct gc_cmd_ctx *ctx, const char *var, const struct gc_buf *text)
{
	const struct gc_spec_env *env = ctx->gha->env;
	const char *path = env && env->lookup ? env->lookup(env->ctx, var) : NULL;
	FILE *f;

	if (!path || !*path)
		return;
	if (!(f = fopen(path, "a"))) {
		gc_out_warn(ctx->out, "cannot open %s '%s'", var, path);
		return;
	}
	if (fwrite(text->data, 1, text->len, f) != text->len)
		gc_out_warn(ctx->out, "cannot write %s '%s'", var, path);
	if (fclose(f) != 0)
		gc_out_warn(ctx->out, "cannot write %s '%s'", var, path);
}

static json_t *boot_node(json_t *doc, const char *id)
{
	size_t i;
	json_t *n;

	json_array_foreach(json_object_get(doc, "nodes"), i, n)
	{
		const char *nid = json_string_value(json_object_get(n, "id"));

		if (nid && strcmp(nid, id) == 0)
			return n;
	}
	return NULL;
}

void gc_gha_note_boot(struct gc_gha *g, json_t *doc)
{
	size_t i;
	json_t *n;

	if (!g) {
		json_decref(doc);
		return;
	}
	if (!g->boot) {
		g->boot = doc;
		return;
	}
	/* a later round (replacing unhealthy nodes) reports on its own nodes only */
	json_array_foreach(json_object_get(doc, "nodes"), i, n)
	{
		const char *id = json_string_value(json_object_get(n, "id"));
		json_t *old = id ? boot_node(g->boot, id) : NULL;

		if (old)
			json_object_update(old, n);
		else
			json_array_append(json_object_get(g->boot, "nodes"), n);
	}
	json_decref(doc);
}

/* The smoke figures of a node from the bootstrap report. */
static void node_smoke(struct gc_gha_node *nd, json_t *node)
{
	json_t *sm = json_object_get(node, "smoke"), *gpus, *gpu;
	size_t i;

	if (!json_is_object(sm))
		return;
	nd->smoke_ran = true;
	nd->smoke_ok = json_is_true(json_object_get(node, "ok"));
	nd->simulated = json_is_true(json_object_get(sm, "simulated"));
	gpus = json_object_get(sm, "gpus");
	if (json_is_true(json_object_get(sm, "valid")) && json_is_array(gpus))
		nd->gpus = (int)json_array_size(gpus);
	json_array_foreach(gpus, i, gpu)
	{
		json_t *g = json_object_get(gpu, "gemm_tflops");

		if (!nd->gpu_model)
			nd->gpu_model = json_string_value(json_object_get(gpu, "name"));
		if (json_is_number(g) &&
		    (nd->gemm_tflops < 0 || json_number_value(g) < nd->gemm_tflops))
			nd->gemm_tflops = json_number_value(g);
	}
	if (!nd->smoke_ok) {
		nd->detail = json_string_value(json_object_get(sm, "reason"));
		if ((!nd->detail || !*nd->detail) && json_is_object(json_object_get(node, "error")))
			nd->detail = json_string_value(
				json_object_get(json_object_get(node, "error"), "message"));
	}
}

static const struct gc_instance *find_live(const struct gc_instance_list *l, const char *id)
{
	for (size_t i = 0; i < l->n; i++)
		if (l->items[i].id && strcmp(l->items[i].id, id) == 0)
			return &l->items[i];
	return NULL;
}

/* prefix and a redacted message in failure, for the summary (md() escapes the rest). */
static const char *failure_text(struct gc_cmd_ctx *ctx, char failure[GC_ERROR_MSG_MAX + 64],
				const char *prefix, const char *message)
{
	char *red = gc_log_redact_message(ctx->log, message);

	snprintf(failure, GC_ERROR_MSG_MAX + 64, "%s%s", prefix, red);
	free(red);
	return failure;
}

void gc_gha_report_apply(struct gc_cmd_ctx *ctx, struct gc_engine *e, const struct gc_plan *plan,
			 const struct gc_error *err)
{
	struct gc_instance_list live;
	struct gc_boot boot;
	struct gc_error lerr;
	struct gc_gha_apply a;
	struct gc_gha_node *nodes = NULL;
	struct gc_price_cache prices = { 0 };
	struct gc_buf outputs = GC_BUF_INIT(0), summary = GC_BUF_INIT(0);
	char expires[21], failure[GC_ERROR_MSG_MAX + 64], currency[GC_CURRENCY_SIZE] = "USD";

	if (!ctx->gha)
		return;
	gc_instance_list_init(&live);
	gc_boot_init(&boot);
	gc_error_init(&lerr);
	memset(&a, 0, sizeof(a));
	a.command = ctx->entry->name;
	a.cluster = ctx->spec->name;
	a.cloud = ctx->spec->provider.name;
	a.region = ctx->spec->provider.region;
	a.cost = 0;
	a.currency = currency;
	if (err && err->code != GC_OK)
		a.error = failure_text(ctx, failure, "", err->message);
	if (plan) {
		a.have_plan = true;
		a.create = plan->n_create;
		a.replace = plan->n_replace;
		a.terminate = plan->n_terminate;
		a.keep = plan->n_keep;
		if (plan->expires_at) {
			gc_format_rfc3339(plan->expires_at, expires);
			a.expires_at = expires;
		}
	}
	if (gc_engine_discover(e, &live, &lerr) < 0 ||
	    gc_boot_add_nodes(&boot, ctx->spec, &live, NULL, ctx->log, &lerr) < 0) {
		gc_out_warn(ctx->out, "the step summary has no nodes: %s", lerr.message);
		if (!a.error)
			a.error =
				failure_text(ctx, failure, "cannot list the nodes: ", lerr.message);
	}
	nodes = gc_xcalloc(boot.n_nodes + 1, sizeof(*nodes));
	for (size_t i = 0; i < boot.n_nodes; i++) {
		const struct gc_boot_node *bn = &boot.info[i];
		const struct gc_instance *in = find_live(&live, bn->id);
		struct gc_gha_node *nd = &nodes[i];
		json_t *bj = ctx->gha->boot ? boot_node(ctx->gha->boot, bn->id) : NULL;

		nd->label = bn->label;
		nd->id = bn->id;
		nd->type = bn->type;
		nd->gpus = -1;
		nd->gemm_tflops = -1;
		nd->usd_per_hour = -1;
		if (in) {
			nd->zone = in->zone;
			nd->spot = in->spot;
			nd->public_ip = in->public_ip;
			nd->private_ip = in->private_ip;
			nd->usd_per_hour = gc_cmd_price(e->provider, &prices, in->type, NULL,
							in->spot, currency);
		}
		if (nd->usd_per_hour < 0)
			a.cost = -1;
		else if (a.cost >= 0)
			a.cost += nd->usd_per_hour;
		if (bj)
			node_smoke(nd, bj);
	}
	a.nodes = nodes;
	a.n_nodes = boot.n_nodes;
	a.bootstrapped = ctx->gha->boot != NULL;
	gc_gha_format_apply_outputs(&outputs, &a);
	gc_gha_format_apply_summary(&summary, &a);
	append_file(ctx, "GITHUB_OUTPUT", &outputs);
	append_file(ctx, "GITHUB_STEP_SUMMARY", &summary);
	gc_buf_release(&outputs);
	gc_buf_release(&summary);
	gc_price_cache_release(&prices);
	free(nodes);
	gc_boot_release(&boot);
	gc_instance_list_release(&live);
}

void gc_gha_report_destroy(struct gc_cmd_ctx *ctx, const char *selector,
			   const struct gc_engine_report *r, const struct gc_error *err)
{
	struct gc_buf s = GC_BUF_INIT(0);
	size_t terminated = r->n_terminated;
	struct gc_cost cost;

	if (!ctx->gha)
		return;
	gc_buf_addf(&s, "### gpucluster destroy: `%s` (%s %s)\n\n", ctx->spec->name,
		    ctx->spec->provider.name, ctx->spec->provider.region);
	if (selector && *selector) {
		gc_buf_addstr(&s, "- **Selector:** ");
		md(&s, selector);
		gc_buf_addch(&s, '\n');
	}
	if (err && err->code != GC_OK) {
		char *red = gc_log_redact_message(ctx->log, err->message);

		gc_buf_addstr(&s, "- **Result:** failed: ");
		md(&s, red);
		gc_buf_addch(&s, '\n');
		free(red);
	} else {
		gc_buf_addstr(&s, "- **Result:** ok\n");
	}
	gc_buf_addf(&s, "- **Terminated:** %zu instance%s\n", terminated,
		    terminated == 1 ? "" : "s");
	gc_cmd_cost(ctx, NULL, &r->ended, (int64_t)time(NULL), &cost);
	if (r->ended.n && cost.total >= 0)
		gc_buf_addf(&s, "- **Cost:** about %.2f %s (%.2f node-hours)\n", cost.total,
			    cost.currency, cost.hours);
	else if (r->ended.n)
		gc_buf_addstr(&s, "- **Cost:** unknown (no price for some nodes)\n");
	gc_cost_release(&cost);
	gc_buf_addch(&s, '\n');
	append_file(ctx, "GITHUB_STEP_SUMMARY", &s);
	gc_buf_release(&s);
}

void gc_gha_append_summary(struct gc_cmd_ctx *ctx, const struct gc_buf *text)
{
	if (ctx->gha)
		append_file(ctx, "GITHUB_STEP_SUMMARY", text);
}
