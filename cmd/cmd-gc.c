/*
 * cmd-gc.c: `gpucluster gc` (docs/cli.md "gc"): find and remove what gpucluster left
 * behind, from the tags alone (core/sweep.h), with no spec or local state, since CI
 * forgets clusters. A dry run unless --yes, so the nightly look and the clean-up are the
 * same command.
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
#include "core/diag.h"
#include "core/provider.h"
#include "core/spec.h"
#include "core/sweep.h"

static const struct gc_opt gc_opts[] = {
	{ .name = "cloud",
	  .type = GC_OPT_CHOICE,
	  .choices = gc_provider_names,
	  .arg = "CLOUD",
	  .help = "the cloud to sweep (else the spec FILE's)" },
	{ .name = "region",
	  .type = GC_OPT_STRING,
	  .arg = "REGION",
	  .help = "a region to sweep (else the spec FILE's)",
	  .repeat = true },
	{ .name = "all-regions",
	  .type = GC_OPT_FLAG,
	  .help = "sweep every region the account can use" },
	{ .name = "selector",
	  .type = GC_OPT_STRING,
	  .arg = "KEY=VALUE",
	  .help = "only what is tagged gpucluster:KEY=VALUE; alone, everything so tagged",
	  .repeat = true },
	{ .name = "expired",
	  .type = GC_OPT_FLAG,
	  .help = "instances past their gpucluster:expires-at" },
	{ .name = "orphaned",
	  .type = GC_OPT_FLAG,
	  .help = "key pairs and security groups of clusters with no instance left" },
	{ .name = "grace",
	  .type = GC_OPT_STRING,
	  .arg = "DURATION",
	  .help = "how old an orphan must be before it goes",
	  .def = "1h" },
	{ .name = "as-of",
	  .type = GC_OPT_STRING,
	  .arg = "TIME",
	  .help = "decide as if it were TIME (RFC 3339 UTC), to rehearse a later run" },
	{ .name = "yes",
	  .short_name = 'y',
	  .type = GC_OPT_FLAG,
	  .help = "delete what was found (without it, nothing is changed)" },
	{ .name = "profile",
	  .type = GC_OPT_STRING,
	  .arg = "PROFILE",
	  .help = "the cloud's credential profile" },
	{ .name = "endpoint",
	  .type = GC_OPT_STRING,
	  .arg = "URL",
	  .help = "API endpoint override (the emulator, a proxy)" },
	GC_CMD_TERMINATE_WAIT_OPT,
	{ .name = NULL },
};

/* What the command line (and the spec, when one is given) asks for. */
struct gc_job {
	struct gc_cmd_cloud cloud; /* oidc: the spec's provider.oidc, NULL with --cloud */
	struct gc_selectors sel;
	struct gc_sweep_opts sweep;
	struct gc_provider **providers; /* per region, NULL where it could not be opened */
	struct gc_sweep found;
	json_t *errors; /* [{"region", "message"}] */
	bool failed;
	bool dry_run;
	size_t done, kept, bad;
};

static void region_failed(struct gc_cmd_ctx *ctx, struct gc_job *j, const char *region,
			  const struct gc_error *err)
{
	gc_cmd_report_error(ctx, region, err);
	json_array_append_new(j->errors,
			      json_pack("{s:s, s:s}", "region", region, "message", err->message));
	j->failed = true;
}

static int usage(struct gc_cmd_ctx *ctx, const char *msg)
{
	gc_out_error(ctx->out, "%s", msg);
	gc_out_hint(ctx->out, "run '%s gc --help' for usage", GC_PROGRAM);
	return GC_EXIT_USAGE;
}

/* Reads the options (and the spec FILE) into j. Returns 0 or an exit code. */
static int setup(struct gc_cmd_ctx *ctx, struct gc_job *j, struct gc_spec **spec)
{
	const char *const *list;
	const char *text;
	size_t n;
	uint64_t grace;
	struct gc_error err;

	gc_error_init(&err);
	if (ctx->n_args == 1) {
		struct gc_diags diags;

		if (gc_cmd_opt_given(ctx, "cloud"))
			return usage(ctx, "give --cloud or a spec FILE, not both");
		gc_diags_init(&diags, ctx->args[0]);
		if (gc_spec_load_file(spec, ctx->args[0], ctx->env, &diags, &err) < 0) {
			gc_cmd_print_spec_errors(ctx->out, ctx->args[0], &diags, &err);
			gc_diags_release(&diags);
			return GC_EXIT_FAILURE;
		}
		gc_diags_release(&diags);
		j->cloud.ops = (*spec)->provider.ops;
		j->cloud.profile = (*spec)->provider.profile;
		j->cloud.endpoint = (*spec)->provider.endpoint;
		j->cloud.oidc = &(*spec)->provider.oidc;
		j->cloud.home = (*spec)->provider.region;
	} else if (gc_cmd_opt_given(ctx, "cloud")) {
		text = gc_cmd_opt_str(ctx, "cloud");
		j->cloud.ops = gc_provider_by_name(text);
	} else {
		return usage(ctx, "gc needs --cloud CLOUD or a spec FILE");
	}
	if (gc_cmd_opt_given(ctx, "profile"))
		j->cloud.profile = gc_cmd_opt_str(ctx, "profile");
	if (gc_cmd_opt_given(ctx, "endpoint"))
		j->cloud.endpoint = gc_cmd_opt_str(ctx, "endpoint");
	list = gc_cmd_opt_list(ctx, "region", &n);
	for (size_t i = 0; i < n; i++)
		gc_cmd_cloud_add_region(&j->cloud, list[i]);
	if (n == 0 && *spec && !gc_cmd_opt_given(ctx, "all-regions"))
		gc_cmd_cloud_add_region(&j->cloud, (*spec)->provider.region);
	if (j->cloud.n_regions == 0 && !gc_cmd_opt_given(ctx, "all-regions"))
		return usage(ctx, "gc needs --region REGION or --all-regions");

	list = gc_cmd_opt_list(ctx, "selector", &n);
	for (size_t i = 0; i < n; i++)
		if (gc_selectors_add(&j->sel, list[i], &err) < 0)
			return usage(ctx, err.message);
	if (gc_parse_duration(gc_cmd_opt_str(ctx, "grace"), &grace) < 0 || grace > 365 * 86400ull)
		return usage(ctx, "--grace takes a duration such as 30m, 1h or 2d (at most 365d)");
	j->sweep.grace_s = (int64_t)grace;
	j->sweep.now = (int64_t)time(NULL);
	if (gc_cmd_opt_given(ctx, "as-of")) {
		if (gc_parse_rfc3339(gc_cmd_opt_str(ctx, "as-of"), &j->sweep.now) < 0)
			return usage(ctx, "--as-of takes a time such as 2026-01-31T18:00:00Z");
		gc_out_warn(ctx->out, "deciding as of %s, not now", gc_cmd_opt_str(ctx, "as-of"));
	}
	if (gc_cmd_opt_given(ctx, "expired"))
		j->sweep.want |= GC_SWEEP_EXPIRED;
	if (gc_cmd_opt_given(ctx, "orphaned"))
		j->sweep.want |= GC_SWEEP_ORPHANED;
	if (!j->sweep.want)
		j->sweep.want = j->sel.n ? GC_SWEEP_SELECTED : GC_SWEEP_EXPIRED | GC_SWEEP_ORPHANED;
	j->sweep.sel = &j->sel;
	j->dry_run = !gc_cmd_opt_given(ctx, "yes");
	return 0;
}

static int item_order(const void *a, const void *b)
{
	const struct gc_sweep_item *x = a, *y = b;
	int c = strcmp(x->region, y->region);

	if (c)
		return c;
	if (x->kind != y->kind)
		return x->kind < y->kind ? -1 : 1;
	if ((c = strcmp(x->cluster, y->cluster)))
		return c;
	return strcmp(x->id, y->id);
}

static void print_table(struct gc_cmd_ctx *ctx, const struct gc_job *j)
{
	static const char *const head[] = { "CLOUD", "REGION",	"KIND", "ID",
					    "NAME",  "CLUSTER", "WHY",	"AGE" };
	struct gc_output *o = ctx->out;
	const char *cloud = j->cloud.ops->name;
	int w[8];
	char why[32], age[32];

	for (size_t k = 0; k < 8; k++)
		w[k] = (int)strlen(head[k]);
	for (size_t i = 0; i < j->found.n; i++) {
		const struct gc_sweep_item *it = &j->found.items[i];
		const char *cells[7] = { cloud,
					 it->region,
					 gc_sweep_kind_name(it->kind),
					 it->id,
					 it->name ? it->name : "-",
					 it->cluster,
					 why };

		if (!it->why)
			continue;
		gc_sweep_why_text(it->why, why);
		for (size_t k = 0; k < 7; k++)
			if ((int)strlen(cells[k]) > w[k])
				w[k] = (int)strlen(cells[k]);
	}
	gc_out_printf(o, o->out, "%s%-*s  %-*s  %-*s  %-*s  %-*s  %-*s  %-*s  %s%s\n",
		      gc_out_style(o, o->out, GC_STYLE_BOLD), w[0], head[0], w[1], head[1], w[2],
		      head[2], w[3], head[3], w[4], head[4], w[5], head[5], w[6], head[6], head[7],
		      gc_out_style(o, o->out, GC_STYLE_RESET));
	for (size_t i = 0; i < j->found.n; i++) {
		const struct gc_sweep_item *it = &j->found.items[i];
		struct gc_buf line = GC_BUF_INIT(0);

		if (!it->why)
			continue;
		gc_sweep_why_text(it->why, why);
		gc_cmd_age_text(age, sizeof(age), j->sweep.now, it->created);
		gc_buf_addf(&line, "%-*s  %-*s  %-*s  %-*s  %-*s  %-*s  %-*s  %s\n", w[0], cloud,
			    w[1], it->region, w[2], gc_sweep_kind_name(it->kind), w[3], it->id,
			    w[4], it->name ? it->name : "-", w[5], it->cluster, w[6], why, age);
		/* names and ids come from the cloud: never let them drive the terminal */
		gc_out_puts_clean(o, o->out, line.data);
		gc_buf_release(&line);
	}
	fflush(o->out);
}

static const char *outcome_word(enum gc_sweep_outcome o)
{
	switch (o) {
	case GC_SWEEP_LISTED: return "listed";
	case GC_SWEEP_DONE: return "deleted";
	case GC_SWEEP_KEPT: return "kept";
	case GC_SWEEP_FAILED: return "failed";
	}
	return "?";
}

/* ["expired", "orphaned", "selected"], those of why's bits */
static json_t *why_json(unsigned why)
{
	json_t *a = json_array();

	if (why & GC_SWEEP_EXPIRED)
		json_array_append_new(a, json_string("expired"));
	if (why & GC_SWEEP_ORPHANED)
		json_array_append_new(a, json_string("orphaned"));
	if (why & GC_SWEEP_SELECTED)
		json_array_append_new(a, json_string("selected"));
	if (why & GC_SWEEP_STOPPED)
		json_array_append_new(a, json_string("stopped"));
	return a;
}

static json_t *doc_json(const struct gc_job *j, size_t scanned)
{
	json_t *doc = json_object(), *regions = json_array(), *res = json_array();
	json_t *sel = json_object();

	for (size_t i = 0; i < j->cloud.n_regions; i++)
		json_array_append_new(regions, json_string(j->cloud.regions[i]));
	for (size_t i = 0; i < j->sel.n; i++)
		json_object_set_new(sel, j->sel.tags[i].key + strlen(GC_TAG_PREFIX),
				    json_string(j->sel.tags[i].value));
	for (size_t i = 0; i < j->found.n; i++) {
		const struct gc_sweep_item *it = &j->found.items[i];
		json_t *ji;

		if (!it->why)
			continue;
		ji = json_pack("{s:s, s:s, s:s, s:s?, s:s, s:o}", "region", it->region, "kind",
			       gc_sweep_kind_name(it->kind), "id", it->id, "name", it->name,
			       "cluster", it->cluster, "why", why_json(it->why));
		json_object_set_new(ji, "state",
				    it->kind == GC_SWEEP_INSTANCE
					    ? json_string(gc_instance_state_name(it->state))
					    : json_null());
		json_object_set_new(ji, "created_at", gc_out_json_time(it->created));
		json_object_set_new(ji, "expires_at", gc_out_json_time(it->expires_at));
		json_object_set_new(ji, "age_s",
				    it->created && j->sweep.now >= it->created
					    ? json_integer((json_int_t)(j->sweep.now - it->created))
					    : json_null());
		json_object_set_new(ji, "result", json_string(outcome_word(it->outcome)));
		json_object_set_new(ji, "error",
				    it->outcome == GC_SWEEP_FAILED || it->outcome == GC_SWEEP_KEPT
					    ? json_string(it->err.message)
					    : json_null());
		json_array_append_new(res, ji);
	}
	json_object_set_new(doc, "cloud", json_string(j->cloud.ops->name));
	json_object_set_new(doc, "regions", regions);
	json_object_set_new(doc, "dry_run", json_boolean(j->dry_run));
	json_object_set_new(doc, "as_of", gc_out_json_time(j->sweep.now));
	json_object_set_new(doc, "grace_s", json_integer((json_int_t)j->sweep.grace_s));
	json_object_set_new(doc, "reasons", why_json(j->sweep.want));
	json_object_set_new(doc, "selectors", sel);
	json_object_set_new(doc, "scanned", json_integer((json_int_t)scanned));
	json_object_set_new(doc, "resources", res);
	json_object_set_new(doc, "errors", json_incref(j->errors));
	return doc;
}

struct progress {
	struct gc_cmd_ctx *ctx;
	struct gc_job *job;
};

static void on_item(void *arg, const struct gc_sweep_item *it)
{
	struct progress *pr = arg;
	struct gc_output *o = pr->ctx->out;
	struct gc_buf line = GC_BUF_INIT(0);
	const char *kind = gc_sweep_kind_name(it->kind);

	switch (it->outcome) {
	case GC_SWEEP_DONE:
		pr->job->done++;
		if (it->kind == GC_SWEEP_INSTANCE)
			gc_buf_addf(&line, "  terminated instance %s (cluster '%s', %s)\n", it->id,
				    it->cluster, it->region);
		else
			gc_buf_addf(&line, "  deleted %s '%s' (%s, cluster '%s', %s)\n", kind,
				    it->name ? it->name : it->id, it->id, it->cluster, it->region);
		break;
	case GC_SWEEP_KEPT:
		pr->job->kept++;
		gc_buf_addf(&line, "  kept %s '%s' (%s): %s\n", kind, it->name ? it->name : it->id,
			    it->id, it->err.message);
		break;
	case GC_SWEEP_FAILED:
		pr->job->bad++;
		gc_buf_addf(&line, "  FAILED %s '%s' (%s): %s\n", kind,
			    it->name ? it->name : it->id, it->id, it->err.message);
		break;
	case GC_SWEEP_LISTED: break;
	}
	if (line.len && !o->quiet && o->format != GC_OUTPUT_JSON)
		gc_out_puts_clean(o, o->err, line.data);
	gc_buf_release(&line);
}

static int gc_exec(struct gc_cmd_ctx *ctx)
{
	struct gc_job j;
	struct gc_spec *spec = NULL;
	struct progress pr = { ctx, &j };
	size_t count;
	int rc;

	memset(&j, 0, sizeof(j));
	gc_selectors_init(&j.sel);
	gc_sweep_init(&j.found);
	j.errors = json_array();
	if ((rc = setup(ctx, &j, &spec)) != 0)
		goto out;
	rc = GC_EXIT_FAILURE;
	if (gc_cmd_opt_given(ctx, "all-regions")) {
		struct gc_error err;

		gc_error_init(&err);
		if (gc_cmd_cloud_all_regions(ctx, &j.cloud, &err) < 0) {
			gc_cmd_report_error(ctx, j.cloud.ops->name, &err);
			goto out;
		}
	}

	/* 1. what is there, region by region */
	j.providers = gc_xcalloc(j.cloud.n_regions + 1, sizeof(*j.providers));
	for (size_t i = 0; i < j.cloud.n_regions && !gc_cmd_interrupted(); i++) {
		struct gc_error err;

		gc_error_init(&err);
		if (gc_cmd_cloud_open(ctx, &j.cloud, j.cloud.regions[i], &j.providers[i], &err) <
			    0 ||
		    gc_sweep_scan(&j.found, j.providers[i], &err) < 0) {
			region_failed(ctx, &j, j.cloud.regions[i], &err);
			gc_provider_close(j.providers[i]);
			j.providers[i] = NULL;
			if (err.code == GC_EAUTH)
				goto out;
		}
	}
	gc_sweep_classify(&j.found, &j.sweep);
	if (j.found.n) /* qsort wants an array, even of none */
		qsort(j.found.items, j.found.n, sizeof(*j.found.items), item_order);
	count = gc_sweep_count(&j.found);
	if (ctx->out->format != GC_OUTPUT_JSON) {
		if (count)
			print_table(ctx, &j);
		if (!ctx->out->quiet)
			gc_out_printf(ctx->out, ctx->out->err,
				      "gc: %zu of %zu gpucluster resource%s in %zu region%s %s\n",
				      count, j.found.n, j.found.n == 1 ? "" : "s",
				      j.cloud.n_regions, j.cloud.n_regions == 1 ? "" : "s",
				      !count ? "to collect: nothing to do"
					      : j.dry_run
					      ? "to collect (dry run: run again with --yes "
						"to delete them)"
					      : "to collect; deleting them");
	}

	/* 2. with --yes, remove them */
	for (size_t i = 0; !j.dry_run && count && i < j.cloud.n_regions; i++) {
		struct gc_sweep_exec_opts eo = {
			.wait_timeout_ms = (uint64_t)gc_cmd_opt_int(ctx, "wait-timeout") * 1000,
			.cancelled = gc_cmd_cancelled,
			.progress = on_item,
			.progress_ctx = &pr,
			.log = ctx->log,
		};
		struct gc_error err;

		if (!j.providers[i])
			continue;
		gc_error_init(&err);
		if (gc_sweep_execute(&j.found, j.providers[i], &eo, &err) < 0) {
			region_failed(ctx, &j, j.cloud.regions[i], &err);
			if (err.code == GC_EAUTH || err.code == GC_ECANCELLED)
				break;
		}
	}
	if (!j.dry_run && count && ctx->out->format != GC_OUTPUT_JSON && !ctx->out->quiet)
		gc_out_printf(ctx->out, ctx->out->err,
			      "gc: %zu deleted, %zu kept (in use), %zu failed, of %zu\n", j.done,
			      j.kept, j.bad, count);
	if (ctx->out->format == GC_OUTPUT_JSON) {
		json_t *doc = doc_json(&j, j.found.n);

		gc_out_json(ctx->out, doc);
		json_decref(doc);
	}
	rc = j.failed ? GC_EXIT_FAILURE : GC_EXIT_OK;
out:
	for (size_t i = 0; j.providers && i < j.cloud.n_regions; i++)
		gc_provider_close(j.providers[i]);
	free(j.providers);
	gc_cmd_cloud_release(&j.cloud);
	gc_sweep_release(&j.found);
	gc_selectors_release(&j.sel);
	json_decref(j.errors);
	gc_spec_free(spec);
	return rc;
}

const struct gc_cmd_entry gc_cmd_gc = {
	.name = "gc",
	.summary = "find and delete what gpucluster left behind: expired, orphaned, selected",
	.usage = "[FILE]",
	.description =
		"Lists every instance, key pair and security group carrying the\n"
		"gpucluster:cluster tag in the regions given (--region, repeatable, or\n"
		"--all-regions; or the spec FILE's cloud and region) and shows the ones that\n"
		"are expired (an instance past its gpucluster:expires-at, or one that\n"
		"powered itself off and stopped), orphaned (a key\n"
		"pair or security group of a cluster with no instance left, older than\n"
		"--grace), or selected (tagged with every --selector). Without --expired,\n"
		"--orphaned or --selector, it looks for expired and orphaned ones. Nothing\n"
		"is changed unless --yes is given: then instances are terminated and waited\n"
		"for, and key pairs and security groups deleted once no instance of their\n"
		"cluster is left. Untagged resources are never listed.",
	.opts = gc_opts,
	.max_args = 1,
	.flags = GC_CMD_MUTATES,
	.exec = gc_exec,
};
