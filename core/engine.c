/*
 * engine.c: discover, plan, apply and destroy a cluster through a provider (engine.h).
 *
 * This is where money is spent, so every step is shaped by three rules: never launch
 * twice (deterministic client tokens, and after an unknown outcome never a new token for
 * the same slots), never touch what is not ours (every destructive call is scoped by the
 * cluster tag, checked again on what the cloud returns), and tell the truth afterwards
 * (the report counts what exists, not what was asked for). The why of each choice is in
 * docs/internals/executor.md.
 *
 * An apply or a destroy keeps its working state in a struct run: the capacity candidates
 * blocked so far, the resolved images, the key pair and security group, the state of each
 * launched instance while waiting, and whether the user cancelled or an auth error
 * stopped everything.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/alloc.h"
#include "core/buf.h"
#include "core/cidr.h"
#include "core/cloudcheck.h"
#include "core/engine.h"
#include "core/fabric.h"
#include "core/hash.h"
#include "core/http.h"
#include "core/keygen.h"
#include "core/money.h"
#include "core/netcheck.h"
#include "core/quotacheck.h"
#include "core/retry.h"
#include "core/str.h"
#include "core/teardown.h"
#include "core/wait.h"

#define DEFAULT_WAIT_MS (15ull * 60 * 1000)
#define DEFAULT_POLL_MS 2000ull
/* Rounds of a batch that the driver gave up on with a retryable error (try_rounds). */
#define ENGINE_BATCH_ROUNDS   3
#define ENGINE_ROUND_PAUSE_MS 2000
#define MAX_GENERATIONS	      32       /* client token generations tried for one batch */
#define MAX_POLL_ERRORS	      3	       /* failed Describe polls in a row before a wait gives up */
#define TOKEN_GRACE_MS	      60000ull /* how long an unseen token may still show in Describe */
/* The same grace on a cloud whose create answers ids only (facts.create_answers_ids):
 * those document no Describe lag for a launch and forget released instances at once, so
 * an unseen id or token is gone after one more look (executor.md, "Client tokens"). */
#define LISTED_GRACE_MS	  2000ull
#define TOKEN_MAX	  64
#define CHECKIP_DEFAULT	  "https://checkip.amazonaws.com"
#define CHECKIP_MAX_BYTES 256
#define SUMMARY_MAX	  (GC_ERROR_MSG_MAX * 2)

/* ---- small helpers -------------------------------------------------------------- */

static const char *market_word(bool spot)
{
	return spot ? "spot" : "on-demand";
}

static bool str_eq(const char *a, const char *b)
{
	if (!a || !b)
		return a == b;
	return strcmp(a, b) == 0;
}

static bool gone_state(enum gc_instance_state s)
{
	return s == GC_STATE_TERMINATING || s == GC_STATE_TERMINATED || s == GC_STATE_STOPPING ||
		s == GC_STATE_STOPPED;
}

static void format_ms(char *out, size_t size, uint64_t ms)
{
	if (ms < 60000)
		snprintf(out, size, "%llu.%llus", (unsigned long long)(ms / 1000),
			 (unsigned long long)(ms % 1000 / 100));
	else
		snprintf(out, size, "%llum%02llus", (unsigned long long)(ms / 60000),
			 (unsigned long long)(ms / 1000 % 60));
}

/* A growable list of owned tags, for building create requests. */
struct tagv {
	struct gc_tag *v;
	size_t n, alloc;
};

static void tagv_add(struct tagv *t, const char *key, const char *value)
{
	GC_ALLOC_GROW(t->v, t->n + 1, t->alloc);
	t->v[t->n].key = gc_xstrdup(key);
	t->v[t->n].value = gc_xstrdup(value);
	t->n++;
}

static void tagv_release(struct tagv *t)
{
	for (size_t i = 0; i < t->n; i++) {
		free(t->v[i].key);
		free(t->v[i].value);
	}
	free(t->v);
	memset(t, 0, sizeof(*t));
}

static int64_t wall_now(const struct gc_engine *e)
{
	return e->wall ? e->wall(e->wall_ctx) : (int64_t)time(NULL);
}

/* A CI variable fit to be a tag value on every cloud: printable ASCII, not too long. */
static bool run_value_ok(const char *v)
{
	size_t n = strlen(v);

	if (n > GC_SPEC_TAG_VALUE_MAX)
		return false;
	for (size_t i = 0; i < n; i++)
		if (v[i] < 0x20 || v[i] > 0x7e)
			return false;
	return true;
}

/*
 * In GitHub Actions, the run that creates a resource: its id, attempt and repository, read
 * through the engine's environment table (tests set them). They let a teardown job select
 * what its run made (`destroy --selector run-id=N`) and gc find what a run left behind.
 * They are tags only, never part of a client token: see gc_engine_client_token.
 */
static void run_tags(struct tagv *t, const struct gc_engine *e)
{
	static const struct {
		const char *var, *tag;
	} vars[] = {
		{ "GITHUB_RUN_ID", GC_TAG_RUN_ID },
		{ "GITHUB_RUN_ATTEMPT", GC_TAG_RUN_ATTEMPT },
		{ "GITHUB_REPOSITORY", GC_TAG_REPOSITORY },
	};
	const char *on = gc_spec_env_get(e->env, "GITHUB_ACTIONS");

	if (!on || strcmp(on, "true") != 0)
		return;
	for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
		const char *v = gc_spec_env_get(e->env, vars[i].var);

		if (!v)
			continue;
		if (!run_value_ok(v)) {
			gc_log_warn(e->log, "%s is not a usable tag value; '%s' left out",
				    vars[i].var, vars[i].tag);
			continue;
		}
		tagv_add(t, vars[i].tag, v);
	}
}

/* The cluster tag plus the user's tags, Name unless the user set one, and the CI run's. */
static void base_tags(struct tagv *t, const struct gc_engine *e, const char *name)
{
	const struct gc_spec *spec = e->spec;
	bool user_name = false;

	tagv_add(t, GC_TAG_CLUSTER, spec->name);
	for (size_t i = 0; i < spec->n_tags; i++) {
		tagv_add(t, spec->tags[i].key, spec->tags[i].value);
		user_name |= strcmp(spec->tags[i].key, "Name") == 0;
	}
	/* a console convention on some clouds; the others have a name field of their own */
	if (name && !user_name && spec->provider.ops->facts->name_tag)
		tagv_add(t, "Name", name);
	run_tags(t, e);
}

/* base_tags for a key pair or security group, and when it was made: gc leaves an orphan
 * alone until it is older than its grace period, so an apply that has just made one and
 * not launched yet never loses it. Creation is not replayed, so the time may differ. */
static void resource_tags(struct tagv *t, const struct gc_engine *e, const char *name)
{
	char now[21];

	base_tags(t, e, name);
	gc_format_rfc3339(wall_now(e), now);
	tagv_add(t, GC_TAG_CREATED_AT, now);
}

static bool resource_is_ours(const struct gc_resource *res, const char *cluster)
{
	for (size_t i = 0; i < res->n_tags; i++)
		if (strcmp(res->tags[i].key, GC_TAG_CLUSTER) == 0)
			return str_eq(res->tags[i].value, cluster);
	return false;
}

/* ---- client tokens -------------------------------------------------------------- */

void gc_engine_client_token(char out[65], size_t max_len, const char *cluster, const char *group,
			    const char *spec_hash, const char *context, unsigned first_slot,
			    unsigned count, const char *zone, const char *type, bool spot,
			    unsigned generation)
{
	struct gc_buf in = GC_BUF_INIT(0);
	char hex[GC_SHA256_HEX_LEN];
	size_t room;

	/* length-prefixed fields: no two different inputs encode alike, whatever the
	 * strings contain; "v1" leaves room for a different scheme later. Tags are left out
	 * on purpose, the CI run's (run-id, run-attempt) as much as expires-at: a re-run
	 * attempt must send the token the interrupted attempt sent, so that launches Describe
	 * does not show yet come back instead of launching twice. A replay whose tags differ
	 * meets the mismatch path of try_candidate, never a second launch. */
	if (!context)
		context = "";
	gc_buf_addf(&in, "gc-token-v1|%zu:%s|%zu:%s|%zu:%s|%zu:%s|%u|%u|%s|%zu:%s|%zu:%s|%s|%u",
		    strlen(cluster), cluster, strlen(group), group, strlen(spec_hash), spec_hash,
		    strlen(context), context, first_slot, count, zone ? "zone" : "any",
		    zone ? strlen(zone) : 0, zone ? zone : "", strlen(type), type,
		    market_word(spot), generation);
	gc_sha256_hex(in.data, in.len, hex);
	gc_buf_release(&in);
	if (max_len == 0 || max_len > TOKEN_MAX)
		max_len = TOKEN_MAX;
	/* "gc-" and as much of the digest as fits: 61 hex digits (244 bits) at 64 */
	room = max_len > 3 ? max_len - 3 : 0;
	memcpy(out, "gc-", 3);
	memcpy(out + 3, hex, room);
	out[3 + room] = '\0';
}

/* ---- reports -------------------------------------------------------------------- */

void gc_engine_report_init(struct gc_engine_report *r)
{
	memset(r, 0, sizeof(*r));
	gc_instance_list_init(&r->created);
	gc_instance_list_init(&r->ended);
}

void gc_engine_report_release(struct gc_engine_report *r)
{
	if (!r)
		return;
	free(r->groups);
	gc_instance_list_release(&r->created);
	gc_instance_list_release(&r->ended);
	for (size_t i = 0; i < r->n_terminated; i++)
		free(r->terminated_ids[i]);
	free(r->terminated_ids);
	gc_engine_report_init(r);
}

static size_t report_group(struct gc_engine_report *r, const char *name)
{
	size_t i;

	if (!name)
		name = "";
	for (i = 0; i < r->n_groups; i++)
		if (strcmp(r->groups[i].group, name) == 0)
			return i;
	r->groups = gc_xreallocarray(r->groups, r->n_groups + 1, sizeof(*r->groups));
	memset(&r->groups[i], 0, sizeof(r->groups[i]));
	snprintf(r->groups[i].group, sizeof(r->groups[i].group), "%s", name);
	gc_error_init(&r->groups[i].err);
	r->n_groups++;
	return i;
}

/* ---- the run -------------------------------------------------------------------- */

/* A (zone, type, market) that answered with a capacity error. */
struct cand {
	char *zone; /* NULL: any zone */
	char *type;
	bool spot;
};

struct image_id {
	const char *image;
	bool alias;
	char *id;
};

enum wstate {
	W_PENDING,
	W_RUNNING,
	W_FAILED,
};

struct run {
	struct gc_engine *e;
	struct gc_provider *p;
	struct gc_engine_opts opts;
	struct gc_engine_report *rep;
	uint64_t start_ns;
	uint64_t start_wait_ns;
	unsigned long calls0, throttled0;

	struct cand *blocked;
	size_t n_blocked, alloc_blocked;
	char **zones; /* the cloud's zones, loaded when "any zone" runs out */
	size_t n_zones;
	bool zones_loaded;
	bool spot_quota; /* the account's spot quota is used up: on-demand only, where allowed */
	struct image_id *images;
	size_t n_images, alloc_images;
	char *key_name;
	char *key_id;
	char *authorized_key; /* clouds without GC_CAP_ED25519_KEYPAIR: the public line */
	/* the cluster key's seed, for the host keys of clouds without console output */
	unsigned char cluster_seed[32];
	bool have_seed;
	char *secgroup_id;
	bool made_keypair, made_secgroup; /* by this run: a failed first apply removes them */
	char **made_placements;		  /* placement groups this run made, likewise */
	size_t n_made_placements;

	/* per instance of rep->created */
	size_t *created_group;
	enum wstate *wstate;
	size_t alloc_created;

	/* destroy --selector: only instances (and resources) carrying every one of these */
	const struct gc_tag_filter *sel;
	size_t n_sel;

	bool sweeping;	/* destroy: a wait also terminates late instances (td_look) */
	unsigned asked; /* instances the cloud agreed to terminate in this teardown */
	/* the wait for instances to run, at its last look */
	unsigned running, pending;
	uint64_t waited_ms;
	unsigned poll_errors;
	bool look_failed;
	/* a listing of this run failed (a token's look, the wait's last look): apply
	 * terminates no surplus or replaced instance after it */
	bool listing_failed;

	struct gc_cancel cancel; /* cancelled() for core/wait.h */
	bool cancelled;
	bool fatal; /* auth failed: nothing more is attempted */
	struct gc_error fatal_err;
	struct gc_error term_err; /* terminations, waits for them, resource deletions */
};

static bool run_cancelled(void *ctx);

static void run_init(struct run *r, struct gc_engine *e, const struct gc_engine_opts *opts,
		     struct gc_engine_report *rep)
{
	memset(r, 0, sizeof(*r));
	r->e = e;
	r->p = e->provider;
	if (opts)
		r->opts = *opts;
	if (!r->opts.wait_timeout_ms)
		r->opts.wait_timeout_ms = DEFAULT_WAIT_MS;
	if (!r->opts.poll_ms)
		r->opts.poll_ms = DEFAULT_POLL_MS;
	r->rep = rep;
	r->start_ns = gc_clock_now_ns(e->clock);
	r->calls0 = r->p->stats.calls;
	r->throttled0 = r->p->stats.throttled;
	r->cancel.fn = run_cancelled;
	r->cancel.ctx = r;
	gc_error_init(&r->fatal_err);
	gc_error_init(&r->term_err);
}

static void run_release(struct run *r)
{
	gc_wipe(r->cluster_seed, sizeof(r->cluster_seed));
	for (size_t i = 0; i < r->n_blocked; i++) {
		free(r->blocked[i].zone);
		free(r->blocked[i].type);
	}
	free(r->blocked);
	gc_strv_free(r->zones, r->n_zones);
	for (size_t i = 0; i < r->n_images; i++)
		free(r->images[i].id);
	free(r->images);
	free(r->key_name);
	free(r->key_id);
	free(r->authorized_key);
	free(r->secgroup_id);
	for (size_t i = 0; i < r->n_made_placements; i++)
		free(r->made_placements[i]);
	free(r->made_placements);
	free(r->created_group);
	free(r->wstate);
}

static void run_finish(struct run *r)
{
	r->rep->api_calls = r->p->stats.calls - r->calls0;
	r->rep->throttled = r->p->stats.throttled - r->throttled0;
	r->rep->wall_ms = (gc_clock_now_ns(r->e->clock) - r->start_ns) / GC_NS_PER_MS;
}

static uint64_t elapsed_ms(const struct run *r, uint64_t since_ns)
{
	return (gc_clock_now_ns(r->e->clock) - since_ns) / GC_NS_PER_MS;
}

static void emit(struct run *r, const struct gc_engine_event *ev)
{
	if (r->opts.progress)
		r->opts.progress(r->opts.progress_ctx, ev);
}

static void info(struct run *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void info(struct run *r, const char *fmt, ...)
{
	struct gc_engine_event ev = { .kind = GC_EV_INFO };
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	gc_log_info(r->e->log, "%s", msg);
	ev.message = msg;
	emit(r, &ev);
}

static bool cancelled(struct run *r)
{
	if (!r->cancelled && r->opts.cancelled && r->opts.cancelled(r->opts.cancel_ctx)) {
		r->cancelled = true;
		gc_log_warn(r->e->log, "cluster '%s': cancelled, stopping", r->e->spec->name);
	}
	return r->cancelled;
}

static bool run_cancelled(void *ctx)
{
	return cancelled(ctx);
}

/* An error that stops every further call: credentials do not heal within a run. */
static bool check_fatal(struct run *r, const struct gc_error *err)
{
	if (err->code == GC_EAUTH && !r->fatal) {
		r->fatal = true;
		r->fatal_err = *err;
	}
	return r->fatal;
}

static void add_created(struct run *r, struct gc_instance *inst, size_t group)
{
	struct gc_instance_list *l = &r->rep->created;

	if (l->n + 1 > r->alloc_created) {
		size_t a = r->alloc_created ? r->alloc_created * 2 : 16;

		r->created_group = gc_xreallocarray(r->created_group, a, sizeof(*r->created_group));
		r->wstate = gc_xreallocarray(r->wstate, a, sizeof(*r->wstate));
		r->alloc_created = a;
	}
	r->created_group[l->n] = group;
	r->wstate[l->n] = inst->state == GC_STATE_RUNNING ? W_RUNNING : W_PENDING;
	*gc_instance_list_push(l) = *inst;
	memset(inst, 0, sizeof(*inst));
}

static void add_terminated(struct run *r, const char *id)
{
	r->rep->terminated_ids = gc_xreallocarray(r->rep->terminated_ids, r->rep->n_terminated + 1,
						  sizeof(*r->rep->terminated_ids));
	r->rep->terminated_ids[r->rep->n_terminated++] = gc_xstrdup(id);
}

/* ---- discover ------------------------------------------------------------------- */

/* Discover by the cluster tag, and nothing but it (core/teardown.h): what comes back
 * without the tag (a driver bug) is dropped rather than trusted. */
static int discover_cluster(struct gc_engine *e, bool include_terminated,
			    struct gc_instance_list *out, struct gc_error *err)
{
	return gc_teardown_discover(e->provider, e->log, e->spec->name, include_terminated, out,
				    err);
}

int gc_engine_discover(struct gc_engine *e, struct gc_instance_list *out, struct gc_error *err)
{
	return discover_cluster(e, false, out, err);
}

static struct gc_instance *find_instance(const struct gc_instance_list *l, const char *id)
{
	for (size_t i = 0; i < l->n; i++)
		if (l->items[i].id && strcmp(l->items[i].id, id) == 0)
			return &l->items[i];
	return NULL;
}

/* ---- capabilities --------------------------------------------------------------- */

/* How far beyond a cloud's shortest timer lead a TTL must be: the launch happens a few
 * minutes after the plan that checks it (waits, fallbacks, retries). */
#define TTL_SLACK_S 300

static int check_group_caps(struct gc_engine *e, const struct gc_spec_group *g,
			    struct gc_error *err)
{
	const struct gc_provider_ops *ops = e->provider->ops;
	unsigned caps = 0;

	if (g->market != GC_MARKET_ON_DEMAND)
		caps |= GC_CAP_SPOT;
	if (g->market != GC_MARKET_ON_DEMAND && g->max_spot_price > 0)
		caps |= GC_CAP_SPOT_MAX_PRICE;
	if (e->spec->lifecycle.ttl_s)
		caps |= GC_CAP_CLOUD_TTL;
	if (gc_provider_check_caps(e->provider, caps, err) < 0)
		return gc_error_prefix(err, "group '%s' (line %u)", g->name, g->pos.line);
	/* the cloud's own limits, refused here rather than by the first launch */
	if (e->spec->lifecycle.ttl_s && ops->min_ttl_s &&
	    e->spec->lifecycle.ttl_s < (uint64_t)ops->min_ttl_s + TTL_SLACK_S)
		return gc_error_set(err, GC_EINVALID,
				    "lifecycle.ttl: %llu s is too short for %s, whose own timer "
				    "must be set at least %u minutes ahead; use %u minutes or more",
				    (unsigned long long)e->spec->lifecycle.ttl_s, ops->name,
				    ops->min_ttl_s / 60, (ops->min_ttl_s + TTL_SLACK_S) / 60);
	if (ops->max_disk_gb && g->disk_gb > ops->max_disk_gb)
		return gc_error_set(err, GC_EINVALID,
				    "group '%s' (line %u): disk_gb %u is above the %u GB a system "
				    "disk on %s takes",
				    g->name, g->pos.line, g->disk_gb, ops->max_disk_gb, ops->name);
	return 0;
}

/* ---- plan ----------------------------------------------------------------------- */

/*
 * Brings the prices and the spec's cap to one currency for gc_plan_build: the cloud's,
 * with the cap converted (core/money.h); prices stay as the cloud answered them unless no
 * cap or bid needs them. Prices in two currencies at once are refused.
 */
static int plan_money(const struct gc_spec *spec, const struct gc_plan_price *prices,
		      char (*currency)[GC_CURRENCY_SIZE], size_t n, struct gc_plan_inputs *in,
		      struct gc_error *err)
{
	const char *account = NULL;

	for (size_t i = 0; i < n; i++) {
		if (!(prices[i].usd_per_hour >= 0))
			continue;
		if (account && strcmp(account, currency[i]) != 0)
			return gc_error_set(err, GC_EBADRESPONSE,
					    "the cloud priced in both %s and %s", account,
					    currency[i]);
		account = currency[i];
	}
	in->currency = account ? account : gc_money_spec_currency(spec);
	return gc_money_check(spec, account, &in->max_hourly_cost, err);
}

int gc_engine_plan(struct gc_engine *e, struct gc_plan *out, struct gc_instance_list *live,
		   const char *const *override_names, const unsigned *override_counts,
		   size_t n_overrides, struct gc_error *err)
{
	const struct gc_spec *spec = e->spec;
	struct gc_plan_price *prices = NULL;
	char(*currency)[GC_CURRENCY_SIZE] = NULL; /* of each price the cloud answered */
	struct gc_plan_inputs in;
	size_t n_prices = 0;
	bool no_prices = false;
	int ret = -1;

	for (size_t i = 0; i < spec->n_groups; i++)
		if (check_group_caps(e, &spec->groups[i], err) < 0)
			return -1;
	if (gc_cloudcheck_spec(e->provider, spec, err) < 0)
		return -1;
	if (gc_engine_discover(e, live, err) < 0)
		return -1;
	if (gc_netcheck_spec(e->provider, spec, err) < 0)
		return -1;
	gc_plan_price_needs(spec, live, &prices, &n_prices);
	currency = gc_xcalloc(n_prices + 1, sizeof(*currency));
	for (size_t i = 0; i < n_prices && !no_prices; i++) {
		struct gc_error lerr;
		double usd;

		gc_error_init(&lerr);
		if (gc_provider_price(e->provider, prices[i].type, NULL, prices[i].spot, &usd,
				      currency[i], &lerr) == 0) {
			prices[i].usd_per_hour = usd;
			continue;
		}
		/* a missing price only makes the cost unknown; bad credentials stop the plan */
		if (lerr.code == GC_EAUTH) {
			if (err)
				*err = lerr;
			goto out;
		}
		no_prices = lerr.code == GC_EUNSUPPORTED;
		gc_log_debug(e->log, "no price for %s (%s): %s", prices[i].type,
			     market_word(prices[i].spot), lerr.message);
	}

	memset(&in, 0, sizeof(in));
	in.spec = spec;
	in.live = live;
	in.prices = prices;
	in.n_prices = n_prices;
	in.override_names = override_names;
	in.override_counts = override_counts;
	in.n_overrides = n_overrides;
	in.now = wall_now(e);
	if (plan_money(spec, prices, currency, n_prices, &in, err) < 0)
		goto out;
	ret = gc_plan_build(out, &in, err);
	if (ret == 0)
		ret = gc_quotacheck_plan(e->provider, spec, out, err);
out:
	free(prices);
	free(currency);
	return ret;
}

/* ---- key pair and security group ------------------------------------------------ */

/* After the cloud refused to create `name`: when a resource of that name exists without
 * our tag, say so, instead of the cloud's less helpful "duplicate". */
static void explain_foreign(struct run *r, enum gc_resource_kind kind, const char *name,
			    struct gc_error *err)
{
	const char *what = gc_teardown_kind_text(kind);
	struct gc_resource_list all;
	struct gc_error lerr;
	char cloud_said[GC_ERROR_MSG_MAX];

	if (!err)
		return;
	gc_resource_list_init(&all);
	gc_error_init(&lerr);
	if (gc_provider_list_resources(r->p, kind, NULL, 0, &all, &lerr) == 0) {
		for (size_t i = 0; i < all.n; i++) {
			if (!str_eq(all.items[i].name, name) ||
			    resource_is_ours(&all.items[i], r->e->spec->name))
				continue;
			snprintf(cloud_said, sizeof(cloud_said), "%s", err->message);
			gc_error_set(err, GC_EINVALID,
				     "a %s named '%s' already exists without the tag %s=%s: "
				     "gpucluster never uses or deletes what it did not create; "
				     "delete or rename that %s, or rename the cluster (%.300s)",
				     what, name, GC_TAG_CLUSTER, r->e->spec->name, what,
				     cloud_said);
			break;
		}
	}
	gc_resource_list_release(&all);
}

static int ensure_keypair(struct run *r, struct gc_error *err)
{
	const struct gc_spec *spec = r->e->spec;
	struct gc_tag_filter f = { GC_TAG_CLUSTER, spec->name };
	struct gc_resource_list found;
	struct gc_buf line = GC_BUF_INIT(8192);
	struct tagv tags = { 0 };
	struct gc_keypair kp;
	char name[128], *id = NULL;
	int ret = -1;

	gc_keypair_init(&kp);
	gc_resource_list_init(&found);
	if (gc_engine_keypair(r->e, &kp, err) < 0)
		goto out;
	memcpy(r->cluster_seed, kp.priv, sizeof(r->cluster_seed));
	r->have_seed = true;
	gc_engine_keypair_name(name, sizeof(name), spec->provider.ops, spec->name, &kp);
	if (gc_keypair_public_line(&line, &kp) < 0) {
		gc_error_set(err, GC_EGENERIC, "cannot format the public key of cluster '%s'",
			     spec->name);
		goto out;
	}
	if (!(r->p->ops->caps & GC_CAP_ED25519_KEYPAIR)) {
		/* the cloud's ImportKeyPair takes no Ed25519 keys: the key goes to cloud-init
		 * in each launch's user-data instead, and there is no key pair to keep */
		r->authorized_key = gc_buf_detach(&line, NULL);
		/* the name stands for the key in the client tokens' context */
		r->key_name = gc_xstrdup(name);
		ret = 0;
		goto out;
	}
	if (gc_provider_list_resources(r->p, GC_RESOURCE_KEYPAIR, &f, 1, &found, err) < 0) {
		gc_error_prefix(err, "cannot list the key pairs of cluster '%s'", spec->name);
		goto out;
	}
	for (size_t i = 0; i < found.n; i++) {
		if (str_eq(found.items[i].name, name) &&
		    resource_is_ours(&found.items[i], spec->name)) {
			gc_log_debug(r->e->log, "key pair '%s' exists", name);
			r->key_name = gc_xstrdup(name);
			r->key_id = gc_xstrdup(found.items[i].id ? found.items[i].id : name);
			ret = 0;
			goto out;
		}
	}
	if (cancelled(r))
		goto out;
	resource_tags(&tags, r->e, name);
	{
		struct gc_keypair_request req = {
			.name = name, .public_key_line = line.data, .tags = tags.v, .n_tags = tags.n
		};

		if (gc_provider_import_keypair(r->p, &req, &id, err) < 0) {
			explain_foreign(r, GC_RESOURCE_KEYPAIR, name, err);
			gc_error_prefix(err, "cannot import key pair '%s'", name);
			goto out;
		}
	}
	info(r, "imported key pair '%s'", name);
	r->made_keypair = true;
	r->key_name = gc_xstrdup(name);
	r->key_id = id ? id : gc_xstrdup(name);
	id = NULL;
	ret = 0;
out:
	free(id);
	tagv_release(&tags);
	gc_buf_release(&line);
	gc_resource_list_release(&found);
	gc_keypair_release(&kp);
	return ret;
}

/* Trims and checks what a check-ip service or the cloud said our address is; on success
 * *out is the single-host block ("203.0.113.7/32"). */
static int host_block(char **out, const char *text, const char *source, struct gc_error *err)
{
	char addr[GC_CIDR_STRLEN], block[GC_CIDR_STRLEN];
	size_t len;
	struct gc_cidr c;

	while (*text == ' ' || *text == '\t' || *text == '\r' || *text == '\n')
		text++;
	len = strlen(text);
	while (len &&
	       (text[len - 1] == ' ' || text[len - 1] == '\t' || text[len - 1] == '\r' ||
		text[len - 1] == '\n'))
		len--;
	if (len == 0 || len >= sizeof(addr))
		return gc_error_set(err, GC_EINVALID,
				    "%s did not answer with an IP address (set ssh.allow_from)",
				    source);
	memcpy(addr, text, len);
	addr[len] = '\0';
	if (gc_cidr_parse_host(&c, addr) < 0 || gc_cidr_format(&c, block, sizeof(block)) < 0)
		return gc_error_set(err, GC_EINVALID,
				    "%s did not answer with an IP address (set ssh.allow_from)",
				    source);
	if (!gc_cidr_is_unicast(&c))
		return gc_error_set(err, GC_EINVALID,
				    "%s answered %s, which is not one host's address (set "
				    "ssh.allow_from)",
				    source, addr);
	*out = gc_xstrdup(block);
	return 0;
}

static int checkip(struct run *r, char **out, struct gc_error *err)
{
	const char *url = gc_spec_env_get(r->e->env, "GPUCLUSTER_CHECKIP_URL");
	struct gc_http_request req = { 0 };
	struct gc_http_response res;
	struct gc_http *http;
	int ret = -1;

	if (!url)
		url = CHECKIP_DEFAULT;
	if (!(http = gc_http_new(r->e->log, err)))
		return -1;
	req.method = "GET";
	req.url = url;
	req.connect_timeout_ms = 5000;
	req.timeout_ms = 10000;
	req.max_response = CHECKIP_MAX_BYTES;
	if (gc_http_perform(http, &req, &res, err) < 0) {
		gc_error_prefix(err,
				"cannot find this machine's public address at '%s' (set "
				"ssh.allow_from)",
				url);
		goto out;
	}
	if (res.status != 200) {
		gc_error_set(err, GC_EGENERIC,
			     "cannot find this machine's public address: '%s' answered HTTP %d "
			     "(set ssh.allow_from)",
			     url, res.status);
		goto out;
	}
	if (strlen(res.body.data) != res.body.len) {
		gc_error_set(err, GC_EINVALID, "'%s' did not answer with an IP address", url);
		goto out;
	}
	{
		char *source = gc_xasprintf("'%s'", url);

		ret = host_block(out, res.body.data, source, err);
		free(source);
	}
out:
	gc_http_response_release(&res);
	gc_http_free(http);
	return ret;
}

static int caller_block(struct run *r, char **out, struct gc_error *err)
{
	struct gc_error lerr;
	char *addr = NULL;
	int ret;

	gc_error_init(&lerr);
	if (gc_provider_caller_address(r->p, &addr, &lerr) == 0) {
		ret = host_block(out, addr, r->p->ops->name, err);
		free(addr);
		return ret;
	}
	if (lerr.code != GC_EUNSUPPORTED) {
		if (err)
			*err = lerr;
		return gc_error_prefix(err, "cannot find this machine's public address");
	}
	return checkip(r, out, err);
}

/* Finds the cluster's security group and reconciles its rules; makes it only with create
 * (an apply that launches nothing leaves a missing group missing). */
static int ensure_secgroup(struct run *r, bool create, struct gc_error *err)
{
	const struct gc_spec *spec = r->e->spec;
	struct gc_tag_filter f = { GC_TAG_CLUSTER, spec->name };
	struct gc_resource_list found;
	struct tagv tags = { 0 };
	char *name = gc_xasprintf("gpucluster-%s", spec->name), *desc = NULL, *mine = NULL;
	char *id = NULL;
	const struct gc_resource *pick = NULL;
	const char *const *allow = (const char *const *)spec->ssh.allow_from;
	size_t n_allow = spec->ssh.n_allow_from;
	int ret = -1;

	gc_resource_list_init(&found);
	if (gc_provider_list_resources(r->p, GC_RESOURCE_SECGROUP, &f, 1, &found, err) < 0) {
		gc_error_prefix(err, "cannot list the security groups of cluster '%s'", spec->name);
		goto out;
	}
	/* ours by tag; the one with our name first, should a user have copied one */
	for (size_t i = 0; i < found.n; i++) {
		if (!resource_is_ours(&found.items[i], spec->name) || !found.items[i].id)
			continue;
		if (!pick || (str_eq(found.items[i].name, name) && !str_eq(pick->name, name)))
			pick = &found.items[i];
	}
	/* an existing group still has its rules reconciled: a kill between its creation and
	 * its rules, or a changed ssh.allow_from (core/rules.h) */
	if (pick)
		gc_log_debug(r->e->log, "security group '%s' (%s) exists",
			     pick->name ? pick->name : "", pick->id);
	if (!pick && !create) {
		ret = 0;
		goto out;
	}
	if (cancelled(r))
		goto out;
	if (n_allow == 0) {
		if (caller_block(r, &mine, err) < 0)
			goto out;
		allow = (const char *const *)&mine;
		n_allow = 1;
		if (!pick)
			info(r, "allowing SSH from this machine's address %s", mine);
	}
	desc = gc_xasprintf("gpucluster cluster %s: SSH in, and its nodes to each other",
			    spec->name);
	resource_tags(&tags, r->e, name);
	{
		struct gc_secgroup_request req = {
			.id = pick ? pick->id : NULL,
			.name = name,
			.description = desc,
			.vpc_id = spec->provider.network.vpc,
			.ssh_port = spec->ssh.port,
			.allow_from = allow,
			.n_allow_from = n_allow,
			.tags = tags.v,
			.n_tags = tags.n,
			.allow_members =
				true, /* the nodes reach each other (torchrun, NCCL, MPI) */
			.monitoring_port = GC_DCGM_PORT,
			.monitoring_from =
				(const char *const *)spec->bootstrap.monitoring_allow_from,
			.n_monitoring_from = spec->bootstrap.n_monitoring_allow_from,
		};

		if (gc_provider_create_secgroup(r->p, &req, &id, err) < 0) {
			explain_foreign(r, GC_RESOURCE_SECGROUP, name, err);
			if (!pick) /* else the driver says which group it could not update */
				gc_error_prefix(err, "cannot create security group '%s'", name);
			goto out;
		}
	}
	if (!pick)
		info(r, "created security group '%s' (%s)", name, id);
	r->made_secgroup = !pick;
	r->secgroup_id = id;
	id = NULL;
	ret = 0;
out:
	free(id);
	free(mine);
	free(desc);
	free(name);
	tagv_release(&tags);
	gc_resource_list_release(&found);
	return ret;
}

/* ---- creating ------------------------------------------------------------------- */

static const char *image_of(struct run *r, const struct gc_spec_group *g, struct gc_error *err)
{
	char *id = NULL;

	for (size_t i = 0; i < r->n_images; i++)
		if (r->images[i].alias == g->image_is_alias &&
		    strcmp(r->images[i].image, g->image) == 0)
			return r->images[i].id;
	/* the driver's message names the image and the region; the report, the group */
	if (gc_provider_resolve_image(r->p, g->image, g->image_is_alias, &id, err) < 0)
		return NULL;
	GC_ALLOC_GROW(r->images, r->n_images + 1, r->alloc_images);
	r->images[r->n_images].image = g->image;
	r->images[r->n_images].alias = g->image_is_alias;
	r->images[r->n_images].id = id;
	return r->images[r->n_images++].id;
}

static size_t blocked_index(const struct run *r, const char *zone, const char *type, bool spot)
{
	for (size_t i = 0; i < r->n_blocked; i++)
		if (r->blocked[i].spot == spot && str_eq(r->blocked[i].zone, zone) &&
		    strcmp(r->blocked[i].type, type) == 0)
			return i;
	return (size_t)-1;
}

static size_t block(struct run *r, const char *zone, const char *type, bool spot)
{
	size_t i = blocked_index(r, zone, type, spot);

	if (i != (size_t)-1)
		return i;
	GC_ALLOC_GROW(r->blocked, r->n_blocked + 1, r->alloc_blocked);
	r->blocked[r->n_blocked].zone = zone ? gc_xstrdup(zone) : NULL;
	r->blocked[r->n_blocked].type = gc_xstrdup(type);
	r->blocked[r->n_blocked].spot = spot;
	return r->n_blocked++;
}

/* One group's creation: its plan line, its report line, and what it learnt so far. */
struct group_run {
	const struct gc_plan_group *pg;
	const struct gc_spec_group *g;
	size_t gi; /* report group */
	const char *image_id;
	char *context;		 /* the token's launch context (see engine.h) */
	const char *pinned_zone; /* same-zone placement: where the group lives */
	char *pinned_owned;
	double bid;	   /* max_spot_price in the cloud's currency (core/money.h), 0: none */
	size_t *exhausted; /* indices into r->blocked met by this group */
	size_t n_exhausted, alloc_exhausted;
	struct gc_buf skipped; /* candidates skipped for max_hourly_cost, and why */
	const char **types;    /* gc_plan_group_types; one once a type launched, unless mixed */
	size_t n_types;
	char *placement_id; /* placement: cluster: the group's placement resource (fabric.md) */
	char *placement_name;
};

static void note_exhausted(struct group_run *gr, size_t bi)
{
	for (size_t i = 0; i < gr->n_exhausted; i++)
		if (gr->exhausted[i] == bi)
			return;
	GC_ALLOC_GROW(gr->exhausted, gr->n_exhausted + 1, gr->alloc_exhausted);
	gr->exhausted[gr->n_exhausted++] = bi;
}

static void create_tags(struct tagv *t, const struct run *r, const struct group_run *gr)
{
	const struct gc_spec *spec = r->e->spec;
	char name[GC_SPEC_CLUSTER_NAME_MAX + GC_SPEC_GROUP_NAME_MAX + 2];

	/* one Name for the whole group: a create call tags every instance alike, and slot
	 * numbers shift between runs, so a per-slot name would mislead */
	snprintf(name, sizeof(name), "%s-%s", spec->name, gr->pg->name);
	base_tags(t, r->e, name);
	tagv_add(t, GC_TAG_GROUP, gr->pg->name);
	tagv_add(t, GC_TAG_SPEC_HASH, gr->pg->spec_hash);
}

enum attempt {
	ATTEMPT_OK,	    /* the batch was created, possibly over several generations */
	ATTEMPT_CAPACITY,   /* nothing created: try the next candidate */
	ATTEMPT_SPOT_QUOTA, /* nothing created, the spot quota is used up: on-demand next */
	ATTEMPT_STOP,	    /* the group stops here (err set) */
	ATTEMPT_NO_ROOM,    /* nothing created, no room in the group's placement group */
	ATTEMPT_NOT_HERE,   /* nothing created, the type cannot go in that placement group */
};

/* Whether the plan counted this instance already (a live instance of the cluster). */
static bool plan_counts(const struct gc_plan *plan, const char *id)
{
	for (size_t g = 0; g < plan->n_groups; g++)
		for (size_t i = 0; i < plan->groups[g].n_nodes; i++)
			if (plan->groups[g].nodes[i].inst->id &&
			    strcmp(plan->groups[g].nodes[i].inst->id, id) == 0)
				return true;
	return false;
}

/* Whether the cloud's create answers ids only (facts.create_answers_ids) and takes tokens. */
static bool ids_only(const struct run *r)
{
	const struct gc_provider_facts *f = r->p->ops->facts;

	return f && f->create_answers_ids && (r->p->ops->caps & GC_CAP_CLIENT_TOKEN);
}

struct token_look {
	struct run *r;
	const struct gc_plan *plan;
	const char *token;
	int retired; /* the answer once a look settles it */
	bool failed; /* Describe failed: its error is the answer */
};

/* One look for a token's instances: done when some carry it. Live ones the plan does not
 * count mean an earlier launch to count first (not retired); gone ones, and live ones the
 * plan counts already (slots renumber: a lower slot died), leave the token retired. */
static int token_look(void *ctx, struct gc_error *err)
{
	struct token_look *tl = ctx;
	struct gc_instance_list now;
	struct gc_buf live = GC_BUF_INIT(512);
	unsigned found = 0;

	gc_instance_list_init(&now);
	if (discover_cluster(tl->r->e, true, &now, err) < 0) {
		gc_buf_release(&live);
		tl->failed = true;
		tl->r->listing_failed = true;
		return -1;
	}
	for (size_t i = 0; i < now.n; i++) {
		if (!str_eq(now.items[i].client_token, tl->token))
			continue;
		found++;
		if (!gone_state(now.items[i].state) && !plan_counts(tl->plan, now.items[i].id))
			gc_buf_addf(&live, "%s%s", live.len ? ", " : "", now.items[i].id);
	}
	gc_instance_list_release(&now);
	if (live.len) {
		gc_error_set(err, GC_EIDEMPOTENCY,
			     "client token %s was used with other parameters by instances that "
			     "are still there (%s); run apply again to count them",
			     tl->token, live.data);
		tl->retired = 0;
	}
	gc_buf_release(&live);
	return live.len || found ? 0 : 1;
}

/*
 * After the cloud said token was used before with other parameters: whether what it
 * launched then is gone or counted, so a new generation may launch. Describe may lag a
 * launch of seconds ago, so an unseen token is looked for during a grace period before it
 * counts as retired. Returns 1 (retired), 0 (live instances carry it: err says so) or -1.
 */
static int token_retired(struct run *r, const struct gc_plan *plan, const char *token,
			 struct gc_error *err)
{
	struct token_look tl = { r, plan, token, 1, false };
	const struct gc_wait w = {
		.clock = r->e->clock,
		.cancel = &r->cancel,
		.interval_ms = r->opts.poll_ms,
		.timeout_ms = r->opts.wait_timeout_ms < TOKEN_GRACE_MS ? r->opts.wait_timeout_ms
								       : TOKEN_GRACE_MS,
		.what = "a client token's instances",
	};
	struct gc_wait ws = w;
	struct gc_error lerr;

	if (ids_only(r)) {
		ws.timeout_ms = LISTED_GRACE_MS;
		ws.interval_ms = LISTED_GRACE_MS;
	}
	gc_error_init(&lerr);
	if (gc_wait_until(&ws, token_look, &tl, &lerr) == 0) {
		if (!tl.retired && err)
			*err = lerr;
		return tl.retired;
	}
	if (tl.failed) {
		if (err)
			*err = lerr;
		return -1;
	}
	if (lerr.code == GC_ETIMEOUT)
		return 1; /* unseen for the whole grace period */
	return gc_error_set(err, GC_ECANCELLED, "cancelled");
}

struct answer_look {
	struct run *r;
	struct gc_instance_list *got;
	bool *seen;   /* per item of got: listed (its state taken from the listing) */
	bool settled; /* a look failed or was cancelled: trust the answer as it is */
};

/* One look for the ids a create answered: done when each is listed. */
static int answer_look(void *ctx, struct gc_error *err)
{
	struct answer_look *al = ctx;
	struct gc_instance_list now;
	size_t unseen = 0;

	gc_instance_list_init(&now);
	if (discover_cluster(al->r->e, true, &now, err) < 0) {
		gc_instance_list_release(&now);
		al->settled = true; /* the wait for them to run looks again */
		return -1;
	}
	for (size_t i = 0; i < al->got->n; i++) {
		const struct gc_instance *in;

		if (al->seen[i])
			continue;
		if ((in = find_instance(&now, al->got->items[i].id))) {
			al->seen[i] = true;
			al->got->items[i].state = in->state;
		} else {
			unseen++;
		}
	}
	gc_instance_list_release(&now);
	return unseen ? 1 : 0;
}

/*
 * On a cloud whose create answers ids only (no state), a replayed client token answers
 * the ids of its first launch even when those instances were released long ago: ids that
 * stay out of Describe for LISTED_GRACE_MS are marked terminated, so their slots go to the
 * next generation. Such clouds document no Describe lag for a launch. A failed or
 * cancelled look leaves the answer as it was (the wait for them to run decides).
 */
static void check_answer(struct run *r, const struct gc_plan *plan, struct gc_instance_list *got)
{
	struct answer_look al = { r, got, NULL, false };
	const struct gc_wait w = {
		.clock = r->e->clock,
		.cancel = &r->cancel,
		.interval_ms = LISTED_GRACE_MS,
		.timeout_ms = LISTED_GRACE_MS,
		.what = "the instances a create answered",
	};
	struct gc_error lerr;
	bool any = false;

	if (!ids_only(r))
		return;
	al.seen = gc_xcalloc(got->n ? got->n : 1, sizeof(*al.seen));
	for (size_t i = 0; i < got->n; i++) {
		const struct gc_instance *in = &got->items[i];

		/* what needs no look: gone, nameless, or counted by the plan */
		al.seen[i] = gone_state(in->state) || !in->id || plan_counts(plan, in->id);
		any |= !al.seen[i];
	}
	gc_error_init(&lerr);
	if (any && gc_wait_until(&w, answer_look, &al, &lerr) != 0 && !al.settled &&
	    lerr.code == GC_ETIMEOUT) {
		for (size_t i = 0; i < got->n; i++) {
			if (al.seen[i])
				continue;
			gc_log_info(r->e->log,
				    "instance %s, answered by client token %s, is not listed: "
				    "released since that token's first launch",
				    got->items[i].id, got->items[i].client_token);
			got->items[i].state = GC_STATE_TERMINATED;
		}
	}
	free(al.seen);
}

/*
 * The host key of one batch on a cloud without console output: its seed is an HMAC of
 * the client token under the cluster key's seed, so a re-run sends the very same request
 * (the client token demands it) and nobody without the cluster key can predict the key.
 * pem gets the openssh-key-v1 private key for cloud-init, pub its public line.
 */
static int batch_host_key(struct run *r, const char *token, struct gc_buf *pem, struct gc_buf *pub,
			  struct gc_error *err)
{
	static const char label[] = "gpucluster host key\n";
	unsigned char seed[32];
	struct gc_buf msg = GC_BUF_INIT(256);
	struct gc_keypair hk;
	int ret;

	if (!r->have_seed)
		return gc_error_set(err, GC_EGENERIC, "no cluster key to derive host keys from");
	gc_buf_addstr(&msg, label);
	gc_buf_addstr(&msg, token);
	gc_hmac_sha256(r->cluster_seed, sizeof(r->cluster_seed), msg.data, msg.len, seed);
	gc_buf_release(&msg);
	gc_keypair_init(&hk);
	ret = gc_keypair_from_seed(&hk, seed, "", err);
	gc_wipe(seed, sizeof(seed));
	if (ret == 0) {
		gc_keypair_wipe_buf(pem);
		gc_buf_reset(pub);
		if (gc_keypair_private_pem(pem, &hk, err) < 0 ||
		    gc_keypair_public_line(pub, &hk) < 0)
			ret = gc_error_set(err, GC_EGENERIC, "cannot format a host key");
	}
	gc_keypair_release(&hk);
	return ret;
}

/*
 * Creates slots [slot, slot+n) with one candidate. The cloud may answer a token with
 * instances of an earlier run: those still alive and not yet counted fill their slots
 * (Describe had not caught up); those gone, or alive but already counted by the plan
 * (slots renumber when a lower one dies), leave their slots to the next generation's
 * token. *made counts what was created, even when the result is STOP.
 */
/* placement: cluster: the group's placement resource, found by its tag and name or created,
 * before the group's first launch (docs/internals/fabric.md). */
static int ensure_placement(struct run *r, struct group_run *gr, const char *zone, const char *type,
			    struct gc_error *err)
{
	const char *cluster = r->e->spec->name;
	struct gc_tag_filter f = { GC_TAG_CLUSTER, cluster };
	struct gc_resource_list found;
	struct tagv tags = { 0 };
	char *name;
	int ret = 0;

	if (gr->placement_id || gr->g->placement != GC_PLACEMENT_CLUSTER ||
	    !r->p->ops->create_placement)
		return 0;
	name = gc_xasprintf("gpucluster-%s-%s", cluster, gr->g->name);
	gc_resource_list_init(&found);
	if (gc_provider_list_resources(r->p, GC_RESOURCE_PLACEMENT, &f, 1, &found, err) < 0) {
		ret = gc_error_prefix(err,
				      "group '%s': cannot list the placement groups of "
				      "cluster '%s'",
				      gr->g->name, cluster);
		goto out;
	}
	for (size_t i = 0; i < found.n; i++)
		if (resource_is_ours(&found.items[i], cluster) && found.items[i].id &&
		    str_eq(found.items[i].name, name)) {
			gr->placement_id = gc_xstrdup(found.items[i].id);
			gc_log_debug(r->e->log, "placement group '%s' (%s) exists", name,
				     gr->placement_id);
			gr->placement_name = name;
			name = NULL;
			goto out;
		}
	resource_tags(&tags, r->e, name);
	{
		struct gc_placement_request req = { name, zone, tags.v, tags.n, type };
		int rc = gc_provider_create_placement(r->p, &req, &gr->placement_id, err);

		if (rc < 0 && err && err->code == GC_EUNSUPPORTED) { /* type takes none */
			gc_log_debug(r->e->log, "group '%s': %s", gr->g->name, err->message);
			gc_error_init(err);
			goto out;
		}
		if (rc < 0) {
			explain_foreign(r, GC_RESOURCE_PLACEMENT, name, err);
			ret = gc_error_prefix(err, "group '%s': cannot create placement group '%s'",
					      gr->g->name, name);
			goto out;
		}
	}
	info(r, "created placement group '%s' (%s) for group '%s'", name, gr->placement_id,
	     gr->g->name);
	r->made_placements = gc_xreallocarray(r->made_placements, r->n_made_placements + 1,
					      sizeof(*r->made_placements));
	r->made_placements[r->n_made_placements++] = gc_xstrdup(gr->placement_id);
	gr->placement_name = name;
	name = NULL;
out:
	tagv_release(&tags);
	gc_resource_list_release(&found);
	free(name);
	return ret;
}

static enum attempt try_candidate(struct run *r, struct group_run *gr, unsigned slot, unsigned n,
				  const char *zone, const char *type, bool spot,
				  const struct gc_plan *plan, unsigned *made, struct gc_error *err)
{
	const struct gc_spec *spec = r->e->spec;
	struct tagv tags = { 0 };
	unsigned gen = 0, need = n;
	enum attempt res = ATTEMPT_STOP;
	char expires[21], idle[24];
	bool inject_host_key = !(r->p->ops->caps & GC_CAP_CONSOLE_OUTPUT);
	struct gc_buf hk_pem = GC_BUF_INIT(8192), hk_pub = GC_BUF_INIT(512);

	*made = 0;
	create_tags(&tags, r, gr);
	if (plan->expires_at) {
		gc_format_rfc3339(plan->expires_at, expires);
		tagv_add(&tags, GC_TAG_EXPIRES_AT, expires);
	}
	if (spec->lifecycle.idle_s) {
		snprintf(idle, sizeof(idle), "%llu", (unsigned long long)spec->lifecycle.idle_s);
		tagv_add(&tags, GC_TAG_IDLE, idle);
	}
	if (inject_host_key) /* last, so each batch's own key can take its place */
		tagv_add(&tags, GC_TAG_HOST_KEY, "");
	if (ensure_placement(r, gr, zone, type, err) < 0) {
		check_fatal(r, err); /* nothing launches without its placement group */
		goto out;
	}
	while (need > 0) {
		char token[TOKEN_MAX + 1];
		struct gc_instance_list got;
		struct gc_create_request req = { 0 };
		struct gc_engine_event ev = { 0 };
		struct gc_buf ids = GC_BUF_INIT(4096);
		unsigned fresh = 0, stale = 0;

		if (gen >= MAX_GENERATIONS) {
			gc_error_set(err, GC_EGENERIC,
				     "group '%s': the client tokens of %u generations were all "
				     "used before",
				     gr->pg->name, MAX_GENERATIONS);
			break;
		}
		if (cancelled(r))
			break;
		gc_engine_client_token(token, r->p->ops->client_token_max, spec->name, gr->pg->name,
				       gr->pg->spec_hash, gr->context, slot + (n - need), need,
				       zone, type, spot, gen);
		req.group = gr->pg->name;
		req.type = type;
		req.zone = zone;
		req.image_id = gr->image_id;
		req.spot = spot;
		req.spot_max_price = spot ? gr->bid : 0;
		req.count = need;
		req.disk_gb = gr->g->disk_gb;
		/* a cloud without client tokens gets none: the wrapper would refuse one */
		req.client_token = r->p->ops->caps & GC_CAP_CLIENT_TOKEN ? token : NULL;
		req.key_name = r->authorized_key ? NULL : r->key_name;
		req.key_id = r->authorized_key ? NULL : r->key_id;
		req.authorized_key = r->authorized_key;
		if (inject_host_key) {
			if (batch_host_key(r, token, &hk_pem, &hk_pub, err) < 0)
				break;
			req.host_key_private = hk_pem.data;
			req.host_key_public = hk_pub.data;
			free(tags.v[tags.n - 1].value);
			tags.v[tags.n - 1].value = gc_xstrdup(hk_pub.data);
		}
		req.security_group_id = r->secgroup_id;
		req.vpc_id = spec->provider.network.vpc;
		req.subnet_id = gc_spec_subnet(spec, zone) ? gc_spec_subnet(spec, zone)->id : NULL;
		req.expires_at = plan->expires_at;
		req.tags = tags.v;
		req.n_tags = tags.n;
		req.rdma_interfaces = gc_fabric_launch_interfaces(r->p, gr->g, type);
		req.placement_id = gr->placement_id;
		req.instance_role = gr->g->role;

		ev.kind = GC_EV_CREATE_START;
		ev.group = gr->pg->name;
		ev.zone = zone;
		ev.type = type;
		ev.spot = spot;
		ev.count = need;
		emit(r, &ev);
		gc_log_debug(r->e->log, "create %u x %s (%s) in %s for group '%s', token %s", need,
			     type, market_word(spot), zone ? zone : "any zone", gr->pg->name,
			     token);

		gc_instance_list_init(&got);
		if (gc_provider_create(r->p, &req, &got, err) < 0) {
			int retired;

			gc_instance_list_release(&got);
			gc_buf_release(&ids);
			if (err && err->code == GC_EIDEMPOTENCY && req.client_token &&
			    (retired = token_retired(r, plan, token, err)) != 0) {
				if (retired < 0)
					goto out;
				gc_log_info(
					r->e->log,
					"group '%s': client token %s was used before with other "
					"parameters and nothing alive and uncounted carries it; next "
					"generation",
					gr->pg->name, token);
				gen++;
				continue;
			}
			ev.kind = GC_EV_CREATE_FAILED;
			ev.err = err;
			/* outside a placement group, the zone does not sell it: a stock-out */
			if (err && err->code == GC_ENOTHERE && (*made > 0 || !gr->placement_id))
				err->code = GC_ECAPACITY;
			if (err && err->code == GC_ENOTHERE) {
				/* the type, not the rack: the next type may go in (fabric.md) */
				gc_error_prefix(err, "%s cannot launch in placement group '%s'",
						type, gr->placement_name);
				ev.message = "falling back";
				emit(r, &ev);
				res = ATTEMPT_NOT_HERE;
			} else if (err && err->code == GC_ECAPACITY && *made == 0 &&
				   gr->placement_id) {
				/* the group's placement group is full, not the zone (fabric.md) */
				gc_error_prefix(err, "no room in placement group '%s'",
						gr->placement_name);
				ev.message = "falling back";
				emit(r, &ev);
				res = ATTEMPT_NO_ROOM;
			} else if (err && err->code == GC_ECAPACITY && *made == 0) {
				ev.message = "falling back";
				emit(r, &ev);
				res = ATTEMPT_CAPACITY;
			} else if (err && err->code == GC_ESPOTQUOTA && spot && *made == 0) {
				/* quotas are per market: the on-demand one may still have room */
				ev.message = "spot quota";
				emit(r, &ev);
				gc_error_prefix(err, "cannot create instances in %s (%s, %s)",
						zone ? zone : "any zone", type, market_word(spot));
				res = ATTEMPT_SPOT_QUOTA;
			} else {
				ev.message = "giving up";
				emit(r, &ev);
				/* the driver's message says which launch (zone, type) failed */
				check_fatal(r, err);
			}
			goto out;
		}
		check_answer(r, plan, &got);
		for (size_t i = 0; i < got.n; i++) {
			struct gc_instance *inst = &got.items[i];

			if (gone_state(inst->state) || !inst->id || plan_counts(plan, inst->id)) {
				stale++;
				continue;
			}
			if (fresh == need)
				break; /* more than asked: never happens with a sound driver */
			gc_buf_addf(&ids, "%s%s", fresh ? ", " : "", inst->id);
			add_created(r, inst, gr->gi);
			fresh++;
		}
		gc_instance_list_release(&got);
		*made += fresh;
		r->rep->groups[gr->gi].created += fresh;
		if (fresh) {
			ev.kind = GC_EV_CREATED;
			ev.group = gr->pg->name;
			ev.count = fresh;
			ev.message = ids.data;
			emit(r, &ev);
			gc_log_info(r->e->log, "group '%s': created %u in %s (%s, %s): %s",
				    gr->pg->name, fresh, zone ? zone : "any zone", type,
				    market_word(spot), ids.data);
		}
		gc_buf_release(&ids);
		need -= fresh;
		if (need == 0)
			break;
		if (stale == 0) {
			gc_error_set(err, GC_EGENERIC,
				     "group '%s': the cloud created %u of %u instances in one call",
				     gr->pg->name, fresh, fresh + need);
			goto out;
		}
		gc_log_info(r->e->log,
			    "group '%s': client token %s answered with %u instances of an earlier "
			    "run that are gone or counted already; next generation",
			    gr->pg->name, token, stale);
		gen++;
	}
	if (need == 0)
		res = ATTEMPT_OK;
out:
	gc_keypair_wipe_buf(&hk_pem);
	gc_buf_release(&hk_pem);
	gc_buf_release(&hk_pub);
	tagv_release(&tags);
	return res;
}

static int load_zones(struct run *r)
{
	struct gc_error lerr;

	if (r->zones_loaded)
		return r->n_zones ? 0 : -1;
	r->zones_loaded = true;
	gc_error_init(&lerr);
	if (gc_provider_zones(r->p, &r->zones, &r->n_zones, &lerr) < 0) {
		gc_log_warn(r->e->log, "cannot list the zones of %s: %s", r->p->region,
			    lerr.message);
		r->zones = NULL;
		r->n_zones = 0;
		check_fatal(r, &lerr);
		return -1;
	}
	return r->n_zones ? 0 : -1;
}

/* ---- the cost cap ---------------------------------------------------------------- */

/* One instance's price through the provider (the drivers cache prices); false: unknown. */
static bool cap_price(struct run *r, const char *type, const char *zone, bool spot, double *out)
{
	char currency[GC_CURRENCY_SIZE];
	struct gc_error lerr;

	gc_error_init(&lerr);
	if (gc_provider_price(r->p, type, zone, spot, out, currency, &lerr) == 0 && *out >= 0)
		return true;
	check_fatal(r, &lerr);
	return false;
}

/*
 * Whether n instances of (zone, type, spot) keep the cluster within max_hourly_cost: what
 * stays (the plan's kept instances), what this run launched, and the candidate at today's
 * price. When they would not, the candidate is skipped, said in an event and in the
 * group's list (docs/internals/executor.md, "The cost cap").
 */
static bool cap_allows(struct run *r, struct group_run *gr, const struct gc_plan *plan,
		       const char *zone, const char *type, bool spot, unsigned n)
{
	double max = plan->max_hourly_cost, cost = 0, price = 0, one; /* in plan->currency */
	const struct gc_instance_list *made = &r->rep->created;
	struct gc_engine_event ev = { .kind = GC_EV_INFO };
	bool known = true;
	char why[300], msg[GC_ERROR_MSG_MAX / 2];

	if (!(max > 0))
		return true;
	for (size_t i = 0; i < plan->n_groups; i++)
		for (size_t j = 0; j < plan->groups[i].n_nodes; j++) {
			const struct gc_plan_node *node = &plan->groups[i].nodes[j];

			if (node->action == GC_PLAN_KEEP) {
				cost += node->price;
				known = known && node->price_known;
			}
		}
	for (size_t i = 0; i < made->n && known; i++) {
		known = cap_price(r, made->items[i].type, made->items[i].zone, made->items[i].spot,
				  &one);
		cost += known ? one : 0;
	}
	if (known && !cap_price(r, type, zone, spot, &price))
		snprintf(why, sizeof(why),
			 "no price for it, so max_hourly_cost %.2f cannot be checked", max);
	else if (!known)
		snprintf(why, sizeof(why),
			 "the cluster's cost is unknown, so max_hourly_cost %.2f cannot be checked",
			 max);
	else if (cost + n * price <= max + 1e-9)
		return true;
	else
		snprintf(why, sizeof(why),
			 "%u \xc3\x97 %.2f %s/h would take the cluster to %.2f %s/h, over "
			 "max_hourly_cost %.2f",
			 n, price, plan->currency, cost + n * price, plan->currency, max);
	snprintf(msg, sizeof(msg), "skipped %s %s in %s: %s", type, market_word(spot),
		 zone ? zone : "any zone", why);
	ev.group = gr->pg->name;
	ev.message = msg;
	emit(r, &ev);
	gc_log_info(r->e->log, "group '%s': %s", gr->pg->name, msg);
	/* the group's error names each (type, market) once, whatever the zones */
	snprintf(msg, sizeof(msg), "skipped %s %s: %s", type, market_word(spot), why);
	if (!strstr(gr->skipped.data, msg))
		gc_buf_addf(&gr->skipped, "%s%s", gr->skipped.len ? "; " : "", msg);
	return false;
}

/*
 * try_candidate, again after a pause when the driver gave up on throttling or 5xx. The
 * driver already retried with its own backoff; a storm that outlasts that is still
 * transient, and the batch keeps its client token, so sending it again can only land on
 * the same instances. The retry module decides (ENGINE_BATCH_ROUNDS attempts, full
 * jitter from ENGINE_ROUND_PAUSE_MS); the pause itself is a nap, so a cancel cuts it.
 */
static enum attempt try_rounds(struct run *r, struct group_run *gr, unsigned slot, unsigned n,
			       const char *zone, const char *type, bool spot,
			       const struct gc_plan *plan, unsigned *made, struct gc_error *cerr)
{
	const struct gc_retry_policy policy = { .max_attempts = ENGINE_BATCH_ROUNDS,
						.base_transient_ms = ENGINE_ROUND_PAUSE_MS,
						.base_throttle_ms = ENGINE_ROUND_PAUSE_MS,
						.clock = r->e->clock };
	struct gc_retry rt;
	enum attempt res;

	gc_retry_begin(&rt, &policy);
	for (;;) {
		struct gc_retry_decision d;

		gc_error_init(cerr);
		*made = 0;
		res = try_candidate(r, gr, slot, n, zone, type, spot, plan, made, cerr);
		if (res != ATTEMPT_STOP || *made > 0 || r->fatal || cancelled(r))
			break;
		d = gc_retry_decide(&rt, cerr->code, -1);
		if (!d.retry)
			break;
		gc_log_warn(r->e->log,
			    "group '%s': %s; sending the batch again (same client token)",
			    gr->pg->name, cerr->message);
		gc_wait_sleep(r->e->clock, &r->cancel, d.delay_ms);
	}
	return res;
}

/* A spot-then-on-demand group whose spot launch hit the spot quota: says so, naming the
 * quota, then goes on with on-demand (quotas are per market on every cloud). */
static void spot_quota_fallback(struct run *r, struct group_run *gr, const struct gc_error *why)
{
	struct gc_engine_event ev = { 0 };
	char *msg = gc_xasprintf("group '%s': the spot quota is used up, launching on-demand "
				 "instead (%s)",
				 gr->pg->name, why->message);

	gc_log_info(r->e->log, "%s", msg);
	ev.kind = GC_EV_INFO;
	ev.group = gr->pg->name;
	ev.message = msg;
	emit(r, &ev);
	free(msg);
}

/*
 * A capacity error inside the group's placement group (docs/internals/fabric.md): its rack
 * is full, not the zone, so the candidate is blocked under a name no zone has (this group
 * only; the run's report lists it) and the next type of instance_types is tried in the
 * same placement group, which the apply line says. A type the placement group does not
 * take (not_here: GC_ENOTHERE) is blocked and passed over the same way, in its own words.
 */
static size_t placement_full(struct run *r, struct group_run *gr, const char *zone,
			     const char *type, bool spot, const char *next,
			     const struct gc_error *why, bool not_here)
{
	struct gc_engine_event ev = { 0 };
	char *where = gc_xasprintf("placement group '%s'%s%s", gr->placement_name,
				   zone ? " in " : "", zone ? zone : "");
	size_t bi = block(r, where, type, spot);

	gc_log_info(r->e->log, "group '%s': %s", gr->pg->name, why->message);
	if (next || not_here) { /* the group's error does not say why a type cannot go in */
		char *msg = not_here
			? gc_xasprintf("group '%s': %s%s%s%s", gr->pg->name, why->message,
				       next ? "; trying " : "", next ? next : "",
				       next ? ", the next of instance_types" : "")
			: gc_xasprintf("group '%s': no room for %s in placement "
				       "group '%s'; trying %s, the next of "
				       "instance_types",
				       gr->pg->name, type, gr->placement_name, next);

		ev.kind = GC_EV_INFO;
		ev.group = gr->pg->name;
		ev.message = msg;
		emit(r, &ev);
		free(msg);
	}
	free(where);
	return bi;
}

/* Why a group stuck to one of several types, for its capacity error. */
static const char *one_type_note(const struct group_run *gr)
{
	if (gr->g->mixed_types || gr->n_types != 1 || gr->g->n_instance_types < 2)
		return "";
	return "; the group runs one instance type and does not mix in the others of "
	       "instance_types (set mixed_types: true to allow it)";
}

/*
 * Creates one batch, walking the candidates: markets, then types, then zones. Returns
 * what was created; on a shortfall the group's report error says why and *stop is set.
 */
static unsigned create_batch(struct run *r, struct group_run *gr, const struct gc_plan *plan,
			     unsigned slot, unsigned n, bool *stop)
{
	struct gc_engine_group_report *rg = &r->rep->groups[gr->gi];
	const struct gc_spec_group *g = gr->g;
	bool markets[2];
	size_t n_markets = 0;

	if (g->market != GC_MARKET_ON_DEMAND)
		markets[n_markets++] = true;
	if (g->market != GC_MARKET_SPOT)
		markets[n_markets++] = false;

	for (size_t m = 0; m < n_markets; m++) {
		bool spot_quota = false;

		if (markets[m] && r->spot_quota && m + 1 < n_markets)
			continue; /* known since an earlier batch: straight to on-demand */
		for (size_t t = 0; t < gr->n_types && !spot_quota; t++) {
			const char *type = gr->types[t];
			size_t n_zones = gr->pinned_zone ? 1 : g->n_zones ? g->n_zones : 1;

			for (size_t z = 0; z < n_zones && !spot_quota; z++) {
				const char *zone = gr->pinned_zone ? gr->pinned_zone
					: g->n_zones		   ? g->zones[z]
								   : NULL;
				struct gc_error cerr;
				unsigned made = 0;
				size_t bi;

				/* "any zone" out of stock: the cloud's zones, one by one */
				if (!gr->pinned_zone && !g->n_zones && z == 0 &&
				    blocked_index(r, NULL, type, markets[m]) != (size_t)-1 &&
				    load_zones(r) == 0)
					n_zones = 1 + r->n_zones;
				if (!gr->pinned_zone && !g->n_zones && z > 0)
					zone = r->zones[z - 1];

				if ((bi = blocked_index(r, zone, type, markets[m])) != (size_t)-1) {
					note_exhausted(gr, bi);
					continue;
				}
				if (cancelled(r) || r->fatal) {
					*stop = true;
					return 0;
				}
				if (!cap_allows(r, gr, plan, zone, type, markets[m], n))
					continue;
				enum attempt res = try_rounds(r, gr, slot, n, zone, type,
							      markets[m], plan, &made, &cerr);

				switch (res) {
				case ATTEMPT_OK:
					if (!g->mixed_types) { /* the group's type from now on */
						gr->types[0] = type;
						gr->n_types = 1;
					}
					if (g->placement != GC_PLACEMENT_ANY && !gr->pinned_zone) {
						const struct gc_instance *last =
							&r->rep->created
								 .items[r->rep->created.n - 1];

						if (zone || last->zone) {
							gr->pinned_owned = gc_xstrdup(
								zone ? zone : last->zone);
							gr->pinned_zone = gr->pinned_owned;
						}
					}
					return made;
				case ATTEMPT_CAPACITY:
					bi = block(r, zone, type, markets[m]);
					note_exhausted(gr, bi);
					gc_log_info(r->e->log,
						    "group '%s': no capacity in %s (%s, %s): %s",
						    gr->pg->name, zone ? zone : "any zone", type,
						    market_word(markets[m]), cerr.message);
					if (!g->n_zones && !gr->pinned_zone && z == 0 &&
					    load_zones(r) == 0)
						n_zones = 1 + r->n_zones;
					continue;
				case ATTEMPT_NO_ROOM:
				case ATTEMPT_NOT_HERE:
					note_exhausted(gr,
						       placement_full(r, gr, zone, type, markets[m],
								      t + 1 < gr->n_types
									      ? gr->types[t + 1]
									      : NULL,
								      &cerr,
								      res == ATTEMPT_NOT_HERE));
					continue;
				case ATTEMPT_SPOT_QUOTA:
					r->spot_quota = true;
					if (m + 1 < n_markets) {
						spot_quota_fallback(r, gr, &cerr);
						spot_quota = true;
						continue;
					}
					*stop = true;
					if (rg->err.code == GC_OK && !r->cancelled)
						rg->err = cerr;
					return made;
				case ATTEMPT_STOP:
					*stop = true;
					if (rg->err.code == GC_OK && !r->cancelled)
						rg->err = cerr;
					return made;
				}
			}
		}
	}
	/* every candidate is out of stock or over the cap */
	*stop = true;
	if (rg->err.code == GC_OK && gr->skipped.len) {
		gc_error_set(&rg->err, GC_EQUOTA, "%s%s", gr->skipped.data,
			     gr->n_exhausted ? "; the other candidates are out of capacity" : "");
	} else if (rg->err.code == GC_OK) {
		struct gc_buf list = GC_BUF_INIT(GC_ERROR_MSG_MAX - 64);

		for (size_t i = 0; i < gr->n_exhausted; i++) {
			const struct cand *c = &r->blocked[gr->exhausted[i]];

			if (gc_buf_addf(&list, "%s%s/%s/%s", i ? ", " : "",
					c->zone ? c->zone : "any zone", c->type,
					market_word(c->spot)) < 0) {
				gc_buf_addstr(&list, ", ...");
				break;
			}
		}
		gc_error_set(&rg->err, GC_ECAPACITY, "capacity exhausted in %s%s", list.data,
			     one_type_note(gr));
		gc_buf_release(&list);
	}
	return 0;
}

/* The group's bid in the currency the plan's prices are in, the account's: gc_engine_plan
 * refused a bid that needs a rate the spec does not give. */
static void bid_of(const struct run *r, const struct gc_plan *plan, struct group_run *gr)
{
	const struct gc_spec *spec = r->e->spec;
	double bid = gr->g->max_spot_price;

	if (bid > 0 && plan->currency[0] &&
	    gc_money_convert(spec, bid, gc_money_spec_currency(spec), plan->currency, &bid) < 0)
		bid = gr->g->max_spot_price;
	gr->bid = bid;
}

static void create_group(struct run *r, const struct gc_plan *plan, const struct gc_plan_group *pg,
			 size_t gi)
{
	struct gc_engine_group_report *rg = &r->rep->groups[gi];
	struct group_run gr = { 0 };
	unsigned batch = r->p->ops->max_create_batch ? r->p->ops->max_create_batch : 1;
	struct gc_error err;

	gr.pg = pg;
	gr.g = pg->spec;
	gr.gi = gi;
	gc_buf_init(&gr.skipped, GC_ERROR_MSG_MAX - 64);
	gc_error_init(&err);
	if (!gr.g) {
		gc_error_set(&rg->err, GC_EINVALID, "group '%s' is not in the spec", pg->name);
		return;
	}
	if (check_group_caps(r->e, gr.g, &rg->err) < 0)
		return;
	if (!(gr.image_id = image_of(r, gr.g, &err))) {
		rg->err = err;
		check_fatal(r, &err);
		return;
	}
	bid_of(r, plan, &gr);
	gr.context = gc_xasprintf("sg=%s|key=%s|image=%s|price=%.6f", r->secgroup_id, r->key_name,
				  gr.image_id, gr.bid);
	gr.types = gc_xcalloc(gr.g->n_instance_types + 1, sizeof(*gr.types));
	gr.n_types = gc_plan_group_types(pg, gr.types);
	if (gr.g->placement != GC_PLACEMENT_ANY) {
		for (size_t i = 0; i < pg->n_nodes && !gr.pinned_zone; i++)
			if (pg->nodes[i].action == GC_PLAN_KEEP && pg->nodes[i].inst->zone)
				gr.pinned_zone = pg->nodes[i].inst->zone;
	}
	for (unsigned done = 0; done < pg->create;) {
		unsigned n = pg->create - done < batch ? pg->create - done : batch;
		bool stop = false;
		unsigned made = create_batch(r, &gr, plan, pg->first_slot + done, n, &stop);

		done += made;
		if (stop || made < n)
			break;
	}
	free(gr.context);
	free(gr.pinned_owned);
	free(gr.placement_id);
	free(gr.placement_name);
	free(gr.exhausted);
	gc_buf_release(&gr.skipped);
	free(gr.types);
}

/* ---- waiting -------------------------------------------------------------------- */

/* One look while waiting for the launched instances to run; the report's instances are
 * refreshed from it. Done when none is pending. */
static int running_look(void *ctx, struct gc_error *err)
{
	struct run *r = ctx;
	struct gc_instance_list *c = &r->rep->created;
	struct gc_instance_list now;
	struct gc_engine_event ev = { .kind = GC_EV_WAITING };
	unsigned running = 0, pending = 0;

	gc_instance_list_init(&now);
	if (discover_cluster(r->e, true, &now, err) < 0) {
		gc_instance_list_release(&now);
		if (check_fatal(r, err) || !gc_error_is_retryable(err ? err->code : 0) ||
		    ++r->poll_errors >= MAX_POLL_ERRORS) {
			r->look_failed = true;
			r->listing_failed = true;
			return gc_error_prefix(err, "while waiting for instances to run");
		}
		return 1;
	}
	r->poll_errors = 0;
	for (size_t i = 0; i < c->n; i++) {
		struct gc_instance *fresh;

		if (r->wstate[i] == W_FAILED)
			continue;
		if ((fresh = find_instance(&now, c->items[i].id))) {
			gc_instance_release(&c->items[i]);
			c->items[i] = *fresh;
			memset(fresh, 0, sizeof(*fresh));
		}
		if (c->items[i].state == GC_STATE_RUNNING) {
			r->wstate[i] = W_RUNNING;
		} else if (gone_state(c->items[i].state)) {
			/* a spot instance reclaimed while starting, or a failed launch */
			r->wstate[i] = W_FAILED;
			gc_log_warn(r->e->log, "instance %s of group '%s' is %s before it ran",
				    c->items[i].id, r->rep->groups[r->created_group[i]].group,
				    gc_instance_state_name(c->items[i].state));
			continue;
		} else {
			r->wstate[i] = W_PENDING;
		}
		if (r->wstate[i] == W_RUNNING)
			running++;
		else
			pending++;
	}
	gc_instance_list_release(&now);
	r->running = running;
	r->pending = pending;
	r->waited_ms = elapsed_ms(r, r->start_wait_ns);
	ev.done = running;
	ev.total = running + pending;
	ev.elapsed_ms = r->waited_ms;
	ev.message = "running";
	emit(r, &ev);
	return pending ? 1 : 0;
}

/* Waits until every launched instance runs or is gone, the timeout passes, or the user
 * cancels (not an error here: the report says what exists). */
static int wait_running(struct run *r, struct gc_error *err)
{
	const struct gc_wait w = { .clock = r->e->clock,
				   .cancel = &r->cancel,
				   .interval_ms = r->opts.poll_ms,
				   .timeout_ms = r->opts.wait_timeout_ms,
				   .what = "instances to run" };
	char t[32];

	r->poll_errors = 0;
	r->look_failed = false;
	r->start_wait_ns = gc_clock_now_ns(r->e->clock);
	if (gc_wait_until(&w, running_look, r, err) == 0 || r->look_failed)
		return r->look_failed ? -1 : 0;
	if (err && err->code == GC_ECANCELLED) {
		gc_error_init(err); /* the report says what exists; the summary says cancelled */
		return 0;
	}
	format_ms(t, sizeof(t), r->waited_ms);
	return gc_error_set(err, GC_ETIMEOUT,
			    "timed out after %s waiting for instances to run: %u of %u running", t,
			    r->running, r->running + r->pending);
}

/* ---- terminating: the teardown steps (core/teardown.h) ---------------------------- */

static void set_term_err(struct run *r, const struct gc_error *err)
{
	if (r->term_err.code == GC_OK && err)
		r->term_err = *err;
}

static void td_instance(void *ctx, const struct gc_teardown *t, const struct gc_teardown_node *n,
			enum gc_teardown_fate fate, const struct gc_error *err)
{
	struct run *r = ctx;
	struct gc_error e;
	char el[32];

	/* the report counts what the cloud confirmed gone (asked, with --no-wait) */
	if (fate == GC_TEARDOWN_ASKED)
		r->asked++;
	if ((fate == GC_TEARDOWN_ASKED && r->opts.no_wait) ||
	    (fate == GC_TEARDOWN_DONE && n->sent && !r->opts.no_wait)) {
		add_terminated(r, n->id);
		r->rep->groups[n->tag].terminated++;
	} else if (fate == GC_TEARDOWN_FAILED && r->term_err.code == GC_OK) {
		e = *err;
		if (e.code == GC_ETIMEOUT && !t->look_failed) {
			format_ms(el, sizeof(el), t->elapsed_ms);
			gc_error_set(
				&e, GC_ETIMEOUT,
				"timed out after %s waiting for instances to terminate: %zu of "
				"%zu still there",
				el, t->left, t->total);
		}
		set_term_err(r, &e);
	}
}

/*
 * Each look of a terminate wait: with sweeping set (destroy), any other instance of the
 * cluster (carrying the selector's tags) that shows up alive, say from a racing apply
 * elsewhere, is terminated as well and waited for. Then the progress event.
 */
static int td_look(void *ctx, struct gc_teardown *t, const struct gc_instance_list *now,
		   struct gc_error *err)
{
	struct run *r = ctx;
	struct gc_engine_event ev = { .kind = GC_EV_WAITING };
	size_t first_new = t->n, total, left;

	for (size_t i = 0; r->sweeping && i < now->n; i++) {
		const struct gc_instance *inst = &now->items[i];
		bool known = false;

		if (inst->state == GC_STATE_TERMINATED ||
		    !gc_tags_match(inst->tags, inst->n_tags, r->sel, r->n_sel))
			continue;
		for (size_t k = 0; k < t->n && !known; k++)
			known = strcmp(t->nodes[k].id, inst->id) == 0;
		if (!known) /* tagged with its place in now until it is asked */
			gc_teardown_add(t, inst->id, i, inst->state, false);
	}
	if (t->n > first_new) {
		const char **ids = gc_xcalloc(t->n - first_new, sizeof(*ids));
		int rc;

		gc_log_warn(r->e->log,
			    "cluster '%s': %zu more instances appeared while terminating; "
			    "terminating them too",
			    r->e->spec->name, t->n - first_new);
		for (size_t k = first_new; k < t->n; k++)
			ids[k - first_new] = t->nodes[k].id;
		rc = gc_provider_terminate(r->p, ids, t->n - first_new, err);
		free(ids);
		if (rc < 0) {
			check_fatal(r, err);
			return gc_error_prefix(err, "cannot terminate instances");
		}
		for (size_t k = first_new; k < t->n; k++) {
			const char *group = now->items[t->nodes[k].tag].group;

			t->nodes[k].tag = report_group(r->rep, group);
			t->nodes[k].sent = true; /* counted when Describe says it is gone */
		}
	}
	gc_teardown_counts(t, &total, &left);
	ev.done = (unsigned)(total - left);
	ev.total = (unsigned)total;
	ev.elapsed_ms = t->elapsed_ms;
	ev.message = "terminated";
	emit(r, &ev);
	if (left == 0) {
		struct gc_engine_event done = { .kind = GC_EV_TERMINATED };

		done.count = (unsigned)total;
		emit(r, &done);
	}
	return 0;
}

static void td_resource(void *ctx, const struct gc_teardown *t,
			const struct gc_teardown_resource *res, enum gc_teardown_fate fate,
			const struct gc_error *err)
{
	struct run *r = ctx;
	const char *what = gc_teardown_kind_text(res ? res->kind : GC_RESOURCE_SECGROUP);
	struct gc_error e;

	(void)t;
	if (fate == GC_TEARDOWN_DONE) {
		info(r, "deleted %s '%s'", what, res->name ? res->name : res->id);
	} else if (fate == GC_TEARDOWN_REFUSED) {
		e = *err;
		gc_error_prefix(&e, "cannot delete %s '%s' (%s); run destroy again", what,
				res->name ? res->name : "", res->id);
		set_term_err(r, &e);
	} else if (fate == GC_TEARDOWN_FAILED) {
		set_term_err(r, err);
	}
}

/*
 * destroy --selector: the key pair and security group serve every instance of the
 * cluster, selected or not, so they go only when none is left. Asks how many instances
 * of the cluster are still there (terminated ones aside); when that cannot be known,
 * nothing is deleted either. Without a selector nothing is left to ask about.
 */
static bool td_may_delete(void *ctx, struct gc_teardown *t)
{
	struct run *r = ctx;
	struct gc_instance_list live;
	struct gc_error lerr;
	long left;

	(void)t;
	if (!r->n_sel)
		return true;
	gc_instance_list_init(&live);
	gc_error_init(&lerr);
	if (discover_cluster(r->e, false, &live, &lerr) < 0) {
		check_fatal(r, &lerr);
		gc_teardown_doubt(r->p, false, &lerr);
		set_term_err(r, &lerr);
		gc_instance_list_release(&live);
		return false;
	}
	left = (long)live.n;
	gc_instance_list_release(&live);
	if (left > 0)
		info(r,
		     "keeping the %s: %ld instance%s of cluster '%s' outside the selection %s "
		     "still there",
		     r->p->ops->caps & GC_CAP_ED25519_KEYPAIR ? "key pair and security group"
							      : "security group",
		     left, left == 1 ? "" : "s", r->e->spec->name, left == 1 ? "is" : "are");
	return left == 0;
}

static const struct gc_teardown_hooks td_hooks = {
	.instance = td_instance,
	.look = td_look,
	.may_delete = td_may_delete,
	.resource = td_resource,
};

/* A teardown of this cluster on the run's clock, cancel and timeouts. */
static void teardown_init(struct run *r, struct gc_teardown *t)
{
	gc_teardown_init(t);
	t->p = r->p;
	t->log = r->e->log;
	t->wait.clock = r->e->clock;
	t->wait.cancel = &r->cancel;
	t->wait.interval_ms = r->opts.poll_ms;
	t->wait.timeout_ms = r->opts.wait_timeout_ms;
	t->cluster = r->e->spec->name;
	t->sel = r->sel;
	t->n_sel = r->n_sel;
	t->no_wait = r->opts.no_wait;
	t->hooks = &td_hooks;
	t->ctx = r;
	r->asked = 0;
}

/* "cannot terminate N instances: ", unless the driver's message starts so already */
static void prefix_terminate(struct gc_error *err, size_t n)
{
	if (strncmp(err->message, "cannot terminate ", 17) != 0)
		gc_error_prefix(err, "cannot terminate %zu instances", n);
}

/* Terminates the teardown's instances (apply, terminate by id) and waits for them. */
static void terminate_and_wait(struct run *r, struct gc_teardown *t)
{
	struct gc_engine_event ev = { .kind = GC_EV_TERMINATING };
	struct gc_error lerr;
	size_t n = t->n, done;

	if (n == 0)
		return;
	ev.count = (unsigned)n;
	emit(r, &ev);
	gc_error_init(&lerr);
	done = gc_teardown_terminate(t, &lerr);
	check_fatal(r, &t->fatal_err);
	if (done < n && lerr.code != GC_OK) {
		prefix_terminate(&lerr, n - done);
		set_term_err(r, &lerr);
	}
	if (done && !r->opts.no_wait && !r->cancelled && !r->fatal) {
		gc_teardown_wait(t, NULL);
		check_fatal(r, &t->fatal_err);
	}
}

/* ---- public addresses (docs/internals/fabric.md, "A reachable address") --------- */

static const struct gc_spec_group *spec_group(const struct gc_spec *spec, const char *name)
{
	for (size_t i = 0; name && i < spec->n_groups; i++)
		if (strcmp(spec->groups[i].name, name) == 0)
			return &spec->groups[i];
	return NULL;
}

/* Whether some group may launch with several interfaces: only then are the cluster's
 * public addresses looked at after a launch or a scale-down (gc_fabric_launch_interfaces
 * says 0 without asking the cloud for every other group). */
static bool may_have_addresses(const struct run *r)
{
	if (!r->p->ops->create_address)
		return false;
	for (size_t i = 0; i < r->e->spec->n_groups; i++) {
		const struct gc_spec_group *g = &r->e->spec->groups[i];

		if (g->interconnect != GC_INTERCONNECT_STANDARD &&
		    (g->count >= 2 || g->interfaces || g->interconnect == GC_INTERCONNECT_RDMA))
			return true;
	}
	return false;
}

/* A running node without a public address whose group launches with several interfaces,
 * which the cloud gives none: it gets one of its own. */
static bool wants_address(struct run *r, const struct gc_instance *inst)
{
	const struct gc_spec_group *g = spec_group(r->e->spec, inst->group);

	return g && inst->type && inst->state == GC_STATE_RUNNING && !inst->public_ip &&
		gc_fabric_launch_interfaces(r->p, g, inst->type) > 1;
}

/*
 * Gives inst a public address: the one tagged for it, which a run that stopped before
 * attaching it left, or a new one, tagged at allocation with the cluster's tags and the
 * instance's id, so that destroy and gc find it whatever happens next. *out_ip on success.
 */
static int attach_one(struct run *r, const struct gc_instance *inst, struct gc_resource_list *have,
		      char **out_ip, struct gc_error *err)
{
	struct tagv tags = { 0 };
	char *id = NULL, *ip = NULL;
	int ret = -1;

	for (size_t i = 0; i < have->n && !id; i++) {
		const struct gc_resource *a = &have->items[i];

		for (size_t k = 0; k < a->n_tags && !id; k++)
			if (strcmp(a->tags[k].key, GC_TAG_INSTANCE) == 0 &&
			    str_eq(a->tags[k].value, inst->id) && a->id && a->name) {
				id = gc_xstrdup(a->id);
				ip = gc_xstrdup(a->name);
			}
	}
	if (!id) {
		char *name = gc_xasprintf("gpucluster-%s-%s", r->e->spec->name, inst->id);

		resource_tags(&tags, r->e, name);
		free(name);
		tagv_add(&tags, GC_TAG_GROUP, inst->group);
		tagv_add(&tags, GC_TAG_INSTANCE, inst->id);
		if (gc_provider_create_address(r->p, tags.v, tags.n, &id, &ip, err) < 0) {
			gc_error_prefix(err, "cannot allocate a public address for instance '%s'",
					inst->id);
			goto out;
		}
	}
	if (gc_provider_attach_address(r->p, id, inst->id, err) < 0) {
		gc_error_prefix(err, "cannot attach public address %s to instance '%s'", ip,
				inst->id);
		goto out;
	}
	info(r, "instance %s of group '%s': public address %s", inst->id, inst->group, ip);
	*out_ip = ip;
	ip = NULL;
	ret = 0;
out:
	tagv_release(&tags);
	free(id);
	free(ip);
	return ret;
}

/* One node's address; a failure is its group's error (a re-run attaches it). */
static void address_node(struct run *r, const struct gc_instance *inst, size_t gi,
			 struct gc_resource_list *have, bool *listed, char **out_ip)
{
	struct gc_tag_filter f = { GC_TAG_CLUSTER, r->e->spec->name };
	struct gc_error lerr;

	gc_error_init(&lerr);
	if (!*listed &&
	    gc_provider_list_resources(r->p, GC_RESOURCE_ADDRESS, &f, 1, have, &lerr) < 0) {
		gc_error_prefix(&lerr, "cannot list the public addresses of cluster '%s'",
				r->e->spec->name);
	} else {
		*listed = true;
		if (attach_one(r, inst, have, out_ip, &lerr) == 0)
			return;
	}
	check_fatal(r, &lerr);
	if (r->rep->groups[gi].err.code == GC_OK)
		r->rep->groups[gi].err = lerr;
}

/* After the wait: every running node of the plan, launched or kept, that needs a public
 * address gets one; the launched ones show it in the report. */
static void attach_addresses(struct run *r, const struct gc_plan *plan)
{
	struct gc_resource_list have;
	bool listed = false;

	if (!may_have_addresses(r))
		return;
	gc_resource_list_init(&have);
	for (size_t i = 0; i < r->rep->created.n && !cancelled(r) && !r->fatal; i++) {
		struct gc_instance *inst = &r->rep->created.items[i];
		char *ip = NULL;

		if (r->wstate[i] != W_RUNNING || !wants_address(r, inst))
			continue;
		address_node(r, inst, r->created_group[i], &have, &listed, &ip);
		if (ip) {
			free(inst->public_ip);
			inst->public_ip = ip;
		}
	}
	for (size_t i = 0; i < plan->n_groups && !cancelled(r) && !r->fatal; i++) {
		const struct gc_plan_group *pg = &plan->groups[i];

		for (size_t k = 0; k < pg->n_nodes && !cancelled(r) && !r->fatal; k++) {
			char *ip = NULL;

			if (pg->nodes[k].action != GC_PLAN_KEEP ||
			    !wants_address(r, pg->nodes[k].inst))
				continue;
			address_node(r, pg->nodes[k].inst, report_group(r->rep, pg->name), &have,
				     &listed, &ip);
			free(ip);
		}
	}
	gc_resource_list_release(&have);
}

/* After a teardown that waited: the public addresses of the nodes it terminated, which
 * their termination detached, are released (destroy releases all of the cluster's). */
static void release_addresses(struct run *r, const struct gc_teardown *t)
{
	struct gc_tag_filter f = { GC_TAG_CLUSTER, r->e->spec->name };
	struct gc_resource_list have;
	struct gc_error lerr;
	bool gone = false;

	for (size_t k = 0; k < t->n; k++)
		gone |= t->nodes[k].fate == GC_TEARDOWN_DONE;
	if (!gone || r->opts.no_wait || r->cancelled || r->fatal || !may_have_addresses(r))
		return;
	gc_resource_list_init(&have);
	gc_error_init(&lerr);
	if (gc_provider_list_resources(r->p, GC_RESOURCE_ADDRESS, &f, 1, &have, &lerr) < 0) {
		check_fatal(r, &lerr);
		gc_error_prefix(&lerr, "cannot list the public addresses of cluster '%s'",
				r->e->spec->name);
		set_term_err(r, &lerr);
	}
	for (size_t i = 0; i < have.n && !r->fatal; i++) {
		const struct gc_resource *a = &have.items[i];
		const char *of = NULL;

		for (size_t k = 0; k < a->n_tags; k++)
			if (strcmp(a->tags[k].key, GC_TAG_INSTANCE) == 0)
				of = a->tags[k].value;
		for (size_t k = 0; of && a->id && k < t->n; k++) {
			if (t->nodes[k].fate != GC_TEARDOWN_DONE || strcmp(t->nodes[k].id, of) != 0)
				continue;
			if (gc_provider_delete_address(r->p, a->id, &lerr) < 0) {
				check_fatal(r, &lerr);
				gc_error_prefix(&lerr,
						"cannot release public address %s of instance %s; "
						"run destroy or gc",
						a->name ? a->name : a->id, of);
				set_term_err(r, &lerr);
			} else {
				info(r, "released public address %s of instance %s",
				     a->name ? a->name : a->id, of);
			}
			break;
		}
	}
	gc_resource_list_release(&have);
}

/* ---- apply ---------------------------------------------------------------------- */

/* How many of a group's replaced instances may go: as many as the running new instances
 * cover beyond the plain shortfall, so the group never drops below its count. */
static unsigned replace_allowance(const struct run *r, const struct gc_plan_group *pg, size_t gi)
{
	unsigned running = r->rep->groups[gi].running;
	unsigned plain = pg->create - pg->replace;

	if (r->opts.no_wait || running <= plain)
		return 0;
	return running - plain < pg->replace ? running - plain : pg->replace;
}

static void count_running(struct run *r)
{
	for (size_t i = 0; i < r->rep->n_groups; i++) {
		r->rep->groups[i].running = 0;
		r->rep->groups[i].failed = 0;
	}
	for (size_t i = 0; i < r->rep->created.n; i++) {
		struct gc_engine_group_report *rg = &r->rep->groups[r->created_group[i]];

		if (r->wstate[i] == W_RUNNING)
			rg->running++;
		else if (r->wstate[i] == W_FAILED)
			rg->failed++;
	}
}

static void set_wait_errors(struct run *r, const struct gc_error *werr)
{
	for (size_t gi = 0; gi < r->rep->n_groups; gi++) {
		struct gc_engine_group_report *rg = &r->rep->groups[gi];
		struct gc_buf gone = GC_BUF_INIT(600);
		bool spot = false;

		if (rg->err.code != GC_OK || rg->running == rg->created)
			continue;
		if (rg->failed) {
			for (size_t i = 0; i < r->rep->created.n; i++) {
				const struct gc_instance *inst = &r->rep->created.items[i];

				if (r->created_group[i] != gi || r->wstate[i] != W_FAILED)
					continue;
				spot |= inst->spot;
				if (gc_buf_addf(&gone, "%s%s (%s)", gone.len ? ", " : "", inst->id,
						gc_instance_state_name(inst->state)) < 0)
					break;
			}
			gc_error_set(&rg->err, spot ? GC_ECAPACITY : GC_EGENERIC,
				     "%u instances were gone before they ran%s: %s", rg->failed,
				     spot ? " (spot capacity reclaimed)" : "", gone.data);
		} else if (werr && werr->code != GC_OK) {
			rg->err = *werr;
		}
		gc_buf_release(&gone);
	}
}

/* The one-line truth for err: what each group fell short of, then the rest. */
static int summarise(struct run *r, const char *verb, struct gc_error *err)
{
	struct gc_buf s = GC_BUF_INIT(SUMMARY_MAX);
	enum gc_errcode code = GC_OK;
	const char *last = NULL;

	if (r->cancelled) {
		code = GC_ECANCELLED;
		gc_buf_addstr(&s, "cancelled");
	}
	for (size_t i = 0; i < r->rep->n_groups; i++) {
		const struct gc_engine_group_report *g = &r->rep->groups[i];

		if (g->err.code == GC_OK &&
		    (g->running >= g->wanted || (r->opts.no_wait && g->created >= g->wanted)))
			continue;
		if (g->err.code == GC_OK && r->cancelled && g->created >= g->wanted)
			continue;
		if (code == GC_OK)
			code = g->err.code != GC_OK ? g->err.code : GC_EGENERIC;
		if (s.len)
			gc_buf_addstr(&s, "; ");
		if (g->created < g->wanted)
			gc_buf_addf(&s, "%u of %u instances created in group '%s'", g->created,
				    g->wanted, g->group);
		else
			gc_buf_addf(&s, "%u of %u instances running in group '%s'", g->running,
				    g->wanted, g->group);
		/* one cause stopping several groups (a key pair, say) is told once */
		if (g->err.code != GC_OK && last && strcmp(last, g->err.message) == 0)
			gc_buf_addstr(&s, ": the same");
		else if (g->err.code != GC_OK)
			gc_buf_addf(&s, ": %s", g->err.message);
		if (g->err.code != GC_OK)
			last = g->err.message;
	}
	if (r->fatal && code != GC_ECANCELLED) {
		code = GC_EAUTH;
		if (!strstr(s.data, r->fatal_err.message))
			gc_buf_addf(&s, "%s%s", s.len ? "; " : "", r->fatal_err.message);
	}
	if (r->term_err.code != GC_OK) {
		if (code == GC_OK)
			code = r->term_err.code;
		gc_buf_addf(&s, "%s%s", s.len ? "; " : "", r->term_err.message);
	}
	if (code == GC_OK) {
		gc_buf_release(&s);
		return 0;
	}
	/* the command prints err once; the log keeps it at -v */
	gc_log_info(r->e->log, "%s of cluster '%s' fell short: %s", verb, r->e->spec->name, s.data);
	gc_error_set(err, code, "%s", s.data);
	gc_buf_release(&s);
	return -1;
}

/* The plan's instances to terminate: surplus and replaced. */
static size_t doomed(const struct gc_plan *plan)
{
	size_t n = 0;

	for (size_t i = 0; i < plan->n_groups; i++)
		for (size_t k = 0; k < plan->groups[i].n_nodes; k++)
			n += plan->groups[i].nodes[k].action == GC_PLAN_REPLACE ||
				plan->groups[i].nodes[k].action == GC_PLAN_TERMINATE;
	return n;
}

/* The images of every group that launches, before anything is made for the launches. */
static int resolve_images(struct run *r, const struct gc_plan *plan, struct gc_error *err)
{
	for (size_t i = 0; i < plan->n_groups; i++)
		if (plan->groups[i].create && plan->groups[i].spec &&
		    !image_of(r, plan->groups[i].spec, err))
			return -1;
	return 0;
}

/* A first apply (the cluster had no instance) that launched none takes back the key pair
 * and security group it made: a spec the cloud refused leaves nothing behind. */
static void undo_first_apply(struct run *r, const struct gc_plan *plan)
{
	struct gc_error lerr;

	for (size_t i = 0; i < plan->n_groups; i++)
		if (plan->groups[i].n_nodes)
			return;
	if (r->rep->created.n || r->cancelled || r->fatal)
		return;
	/* a launch whose answer was lost may have landed: its group stays for the re-run */
	for (size_t i = 0; i < r->rep->n_groups; i++)
		if (r->rep->groups[i].err.code == GC_EGENERIC ||
		    gc_error_is_retryable(r->rep->groups[i].err.code))
			return;
	gc_error_init(&lerr);
	if (r->made_secgroup && r->secgroup_id) {
		if (gc_provider_delete_secgroup(r->p, r->secgroup_id, &lerr) == 0)
			info(r, "removed security group %s: nothing was launched", r->secgroup_id);
		else
			gc_log_warn(r->e->log, "cannot remove security group %s: %s",
				    r->secgroup_id, lerr.message);
	}
	for (size_t i = 0; i < r->n_made_placements; i++) {
		if (gc_provider_delete_placement(r->p, r->made_placements[i], &lerr) == 0)
			info(r, "removed placement group %s: nothing was launched",
			     r->made_placements[i]);
		else
			gc_log_warn(r->e->log, "cannot remove placement group %s: %s",
				    r->made_placements[i], lerr.message);
	}
	if (r->made_keypair && r->key_id) {
		if (gc_provider_delete_keypair(r->p, r->key_id, &lerr) == 0)
			info(r, "removed key pair '%s': nothing was launched", r->key_name);
		else
			gc_log_warn(r->e->log, "cannot remove key pair '%s': %s", r->key_name,
				    lerr.message);
	}
}

static bool plan_keeps(const struct gc_plan *plan)
{
	for (size_t i = 0; i < plan->n_groups; i++)
		if (plan->groups[i].keep)
			return true;
	return false;
}

int gc_engine_reconcile(struct gc_engine *e, const struct gc_plan *plan, struct gc_error *err)
{
	struct gc_engine_report report;
	struct run r;
	int ret;

	if (!plan_keeps(plan))
		return 0;
	gc_engine_report_init(&report);
	run_init(&r, e, NULL, &report);
	ret = ensure_secgroup(&r, false, err);
	if (ret == 0) /* and the public address a node lacks (fabric.md) */
		attach_addresses(&r, plan);
	for (size_t i = 0; ret == 0 && i < report.n_groups; i++)
		if (report.groups[i].err.code != GC_OK) {
			if (err)
				*err = report.groups[i].err;
			ret = -1;
		}
	run_release(&r);
	gc_engine_report_release(&report);
	return ret;
}

/*
 * Kept nodes whose expiry the spec's TTL moves: the expires-at tag (and the cloud's timer,
 * where it moves) set in place, one call per deadline. A failure is the run's, told once.
 */
static void move_expiries(struct run *r, const struct gc_plan *plan)
{
	for (size_t i = 0; i < plan->n_groups && !cancelled(r) && !r->fatal; i++) {
		const struct gc_plan_group *pg = &plan->groups[i];
		bool *done = gc_xcalloc(pg->n_nodes + 1, sizeof(*done));
		const char **ids = gc_xcalloc(pg->n_nodes + 1, sizeof(*ids));

		for (size_t k = 0; k < pg->n_nodes && !r->fatal; k++) {
			int64_t when = pg->nodes[k].new_expires_at;
			struct gc_error lerr;
			char at[21] = "none";
			size_t n = 0;

			if (!pg->nodes[k].expiry_moves || done[k])
				continue;
			for (size_t j = k; j < pg->n_nodes; j++)
				if (pg->nodes[j].expiry_moves && !done[j] &&
				    pg->nodes[j].new_expires_at == when) {
					done[j] = true;
					ids[n++] = pg->nodes[j].inst->id;
				}
			if (when)
				gc_format_rfc3339(when, at);
			gc_error_init(&lerr);
			if (gc_provider_set_expiry(r->p, ids, n, when, &lerr) < 0) {
				check_fatal(r, &lerr);
				gc_error_prefix(&lerr,
						"group '%s': cannot move the expiry of %zu node%s",
						pg->name, n, n == 1 ? "" : "s");
				set_term_err(r, &lerr);
				continue;
			}
			info(r, "group '%s': expiry of %zu node%s set to %s", pg->name, n,
			     n == 1 ? "" : "s", at);
		}
		free(done);
		free(ids);
	}
}

/*
 * Kept nodes whose gpucluster:idle tag the plan moves (lifecycle.idle changed): set to the
 * plan's value, or removed, in place; one value for the cluster, so one call (batched). A
 * failure is the run's, told once.
 */
static void retag_idle(struct run *r, const struct gc_plan *plan)
{
	const char **ids = gc_xcalloc(plan->n_idle + 1, sizeof(*ids));
	const char *value = plan->idle_tag[0] ? plan->idle_tag : NULL;
	struct gc_error lerr;
	char after[32];
	size_t n = 0;

	for (size_t i = 0; i < plan->n_groups; i++)
		for (size_t k = 0; k < plan->groups[i].n_nodes && n < plan->n_idle; k++)
			if (plan->groups[i].nodes[k].idle_moves)
				ids[n++] = plan->groups[i].nodes[k].inst->id;
	gc_error_init(&lerr);
	if (gc_provider_set_tag(r->p, ids, n, GC_TAG_IDLE, value, &lerr) < 0) {
		check_fatal(r, &lerr);
		gc_error_prefix(&lerr, "cannot set the idle stop of %zu node%s", n,
				n == 1 ? "" : "s");
		set_term_err(r, &lerr);
	} else if (value) {
		gc_format_duration(r->e->spec->lifecycle.idle_s, after, sizeof(after));
		info(r, "idle stop of %zu node%s set to %s", n, n == 1 ? "" : "s", after);
	} else {
		info(r, "idle stop of %zu node%s removed", n, n == 1 ? "" : "s");
	}
	free(ids);
}

int gc_engine_apply(struct gc_engine *e, const struct gc_plan *plan,
		    const struct gc_engine_opts *opts, struct gc_engine_report *report,
		    struct gc_error *err)
{
	struct run r;
	struct gc_teardown t;
	struct gc_error lerr;
	bool creates = false;
	int ret;

	run_init(&r, e, opts, report);
	teardown_init(&r, &t);
	gc_error_init(&lerr);
	for (size_t i = 0; i < plan->n_groups; i++) {
		const struct gc_plan_group *pg = &plan->groups[i];
		size_t gi = report_group(report, pg->name);

		report->groups[gi].wanted += pg->create;
		creates |= pg->create > 0;
	}

	/* 1. what every launch needs, once; the images first, so that a spec the cloud
	 * refuses makes nothing (plan checked the rest: core/cloudcheck.h) */
	if (creates && !cancelled(&r)) {
		if (resolve_images(&r, plan, &lerr) < 0 || ensure_keypair(&r, &lerr) < 0 ||
		    (!cancelled(&r) && ensure_secgroup(&r, true, &lerr) < 0)) {
			check_fatal(&r, &lerr);
			if (!r.cancelled)
				for (size_t i = 0; i < plan->n_groups; i++)
					if (plan->groups[i].create)
						report->groups[report_group(report,
									    plan->groups[i].name)]
							.err = lerr;
			creates = false;
		}
	}

	/* or, launching nothing, the rules of the group the kept nodes use (issue 19) */
	if (!creates && plan_keeps(plan) && !cancelled(&r) &&
	    ensure_secgroup(&r, false, &lerr) < 0) {
		check_fatal(&r, &lerr);
		for (size_t i = 0; i < plan->n_groups; i++)
			if (plan->groups[i].keep)
				report->groups[report_group(report, plan->groups[i].name)].err =
					lerr;
	}

	if (plan->n_expiry && !cancelled(&r))
		move_expiries(&r, plan);
	if (plan->n_idle && !cancelled(&r) && !r.fatal)
		retag_idle(&r, plan);

	/* 2. launch, group by group */
	for (size_t i = 0; creates && i < plan->n_groups; i++) {
		if (cancelled(&r) || r.fatal)
			break;
		if (plan->groups[i].create)
			create_group(&r, plan, &plan->groups[i],
				     report_group(report, plan->groups[i].name));
	}

	/* 3. wait until they run */
	if (report->created.n && !r.opts.no_wait && !cancelled(&r) && !r.fatal) {
		gc_error_init(&lerr);
		wait_running(&r, &lerr);
		check_fatal(&r, &lerr);
		count_running(&r);
		set_wait_errors(&r, &lerr);
	} else {
		count_running(&r);
	}
	if (!r.opts.no_wait && !cancelled(&r) && !r.fatal)
		attach_addresses(&r, plan);

	/* 4. surplus now, replaced ones once their replacements run; none after a listing
	 * that failed (the plan's was whole, one since was not) */
	if (r.listing_failed && doomed(plan)) {
		gc_error_set(&lerr, GC_EGENERIC,
			     "not terminating %zu surplus or replaced instances: a listing of the "
			     "cluster's instances failed; run apply again",
			     doomed(plan));
		set_term_err(&r, &lerr);
	}
	for (size_t i = 0; i < plan->n_groups && !r.listing_failed && !r.cancelled && !r.fatal;
	     i++) {
		const struct gc_plan_group *pg = &plan->groups[i];
		size_t gi = report_group(report, pg->name);
		unsigned allow = replace_allowance(&r, pg, gi), skipped = 0;

		for (size_t k = 0; k < pg->n_nodes; k++) {
			const struct gc_plan_node *node = &pg->nodes[k];

			if (node->action == GC_PLAN_REPLACE) {
				if (!allow) {
					skipped++;
					continue;
				}
				allow--;
			} else if (node->action != GC_PLAN_TERMINATE) {
				continue;
			}
			gc_teardown_add(&t, node->inst->id, gi, node->inst->state, true);
		}
		if (skipped) {
			info(&r,
			     "group '%s': keeping %u instances to be replaced until their "
			     "replacements run",
			     pg->name, skipped);
			if (!r.opts.no_wait && r.term_err.code == GC_OK)
				gc_error_set(&r.term_err, GC_EGENERIC,
					     "%u instances of group '%s' not replaced yet", skipped,
					     pg->name);
		}
	}
	if (t.n && !cancelled(&r) && !r.fatal) {
		terminate_and_wait(&r, &t);
		release_addresses(&r, &t);
	}
	undo_first_apply(&r, plan);

	run_finish(&r);
	ret = summarise(&r, "apply", err);
	gc_teardown_release(&t);
	run_release(&r);
	return ret;
}

/* ---- destroy, terminate by id ---------------------------------------------------- */

/* destroy: every instance of the cluster (carrying the selectors), then the key pairs and
 * security groups once nothing uses them. Terminating ones are on their way: waited for,
 * not asked again. */
static void destroy_all(struct run *r, struct gc_teardown *t, const struct gc_instance_list *live)
{
	struct gc_error lerr;
	size_t n_term = 0;

	r->sweeping = true;
	for (size_t i = 0; i < live->n; i++) {
		const struct gc_instance *inst = &live->items[i];
		bool term = inst->state != GC_STATE_TERMINATING;

		if (!gc_tags_match(inst->tags, inst->n_tags, r->sel, r->n_sel))
			continue;
		gc_teardown_add(t, inst->id, term ? report_group(r->rep, inst->group) : SIZE_MAX,
				inst->state, term);
		n_term += term;
	}
	if (n_term) {
		struct gc_engine_event ev = { .kind = GC_EV_TERMINATING,
					      .count = (unsigned)n_term };

		emit(r, &ev);
	}
	gc_error_init(&lerr);
	gc_teardown_run(t, &lerr);
	check_fatal(r, &t->fatal_err);
	if (lerr.code != GC_OK) {
		prefix_terminate(&lerr, n_term - r->asked);
		set_term_err(r, &lerr);
	}
}

/* terminate by id: only what Describe shows with our cluster tag is ever terminated */
static void terminate_ids(struct run *r, struct gc_teardown *t, const struct gc_instance_list *live,
			  const char *const *ids, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const struct gc_instance *inst = find_instance(live, ids[i]);

		if (inst) {
			gc_teardown_add(t, inst->id, report_group(r->rep, inst->group), inst->state,
					true);
		} else if (r->term_err.code == GC_OK) {
			gc_error_set(&r->term_err, GC_ENOTFOUND,
				     "instance '%s' is not a live instance of cluster '%s': left "
				     "alone",
				     ids[i], r->e->spec->name);
		}
	}
	terminate_and_wait(r, t);
}

/* What destroy and terminate share: a run with its teardown, the cluster's instances,
 * and the summary. */
/* Moves the instances of live that the teardown terminated into report->ended. */
static void report_ended(struct gc_engine_report *report, struct gc_instance_list *live)
{
	for (size_t i = 0; i < live->n; i++) {
		for (size_t k = 0; k < report->n_terminated; k++) {
			if (strcmp(live->items[i].id, report->terminated_ids[k]) == 0) {
				*gc_instance_list_push(&report->ended) = live->items[i];
				memset(&live->items[i], 0, sizeof(live->items[i]));
				break;
			}
		}
	}
}

static int teardown_cluster(struct gc_engine *e, const struct gc_engine_opts *opts,
			    struct gc_engine_report *report, bool destroy,
			    const struct gc_tag_filter *sel, size_t n_sel, const char *const *ids,
			    size_t n, struct gc_error *err)
{
	struct gc_instance_list live;
	struct gc_teardown t;
	struct gc_error lerr;
	struct run r;
	int ret;

	run_init(&r, e, opts, report);
	r.sel = sel;
	r.n_sel = sel ? n_sel : 0;
	teardown_init(&r, &t);
	gc_instance_list_init(&live);
	gc_error_init(&lerr);
	if (!cancelled(&r) && discover_cluster(e, false, &live, &lerr) < 0) {
		check_fatal(&r, &lerr);
		gc_teardown_doubt(r.p, true, &lerr);
		r.term_err = lerr;
	} else if (destroy) {
		destroy_all(&r, &t, &live);
		if (r.n_sel) /* the rest go with the cluster's last node */
			release_addresses(&r, &t);
	} else {
		terminate_ids(&r, &t, &live, ids, n);
		release_addresses(&r, &t);
	}
	run_finish(&r);
	report_ended(report, &live);
	ret = summarise(&r, destroy ? "destroy" : "terminate", err);
	gc_teardown_release(&t);
	gc_instance_list_release(&live);
	run_release(&r);
	return ret;
}

int gc_engine_destroy(struct gc_engine *e, const struct gc_engine_opts *opts,
		      struct gc_engine_report *report, struct gc_error *err)
{
	return gc_engine_destroy_selected(e, NULL, 0, opts, report, err);
}

int gc_engine_destroy_selected(struct gc_engine *e, const struct gc_tag_filter *sel, size_t n_sel,
			       const struct gc_engine_opts *opts, struct gc_engine_report *report,
			       struct gc_error *err)
{
	for (size_t i = 0; i < e->spec->n_groups; i++)
		report_group(report, e->spec->groups[i].name);
	return teardown_cluster(e, opts, report, true, sel, n_sel, NULL, 0, err);
}

int gc_engine_terminate(struct gc_engine *e, const char *const *ids, size_t n,
			const struct gc_engine_opts *opts, struct gc_engine_report *report,
			struct gc_error *err)
{
	return teardown_cluster(e, opts, report, false, NULL, 0, ids, n, err);
}
