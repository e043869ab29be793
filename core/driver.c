/*
 * driver.c: the one request pipeline of the cloud drivers, their common state and life
 * cycle, and the waits on busy resources that every driver needs alike (driver.h has the
 * flow). The cloud's hooks build, sign and read; everything between them is here, so the
 * clouds cannot drift apart on retries, rate limits, clock complaints or cancels.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/alloc.h"
#include "core/driver.h"
#include "core/oidc.h"
#include "core/str.h"
#include "core/urlenc.h"

/* ---- classification --------------------------------------------------------------- */

static bool code_matches(enum gc_driver_match how, const char *text, const char *code)
{
	switch (how) {
	case GC_MATCH_EXACT: return strcmp(code, text) == 0;
	case GC_MATCH_PREFIX: return gc_starts_with(code, text);
	case GC_MATCH_SUFFIX: return strlen(code) > strlen(text) && gc_ends_with(code, text);
	case GC_MATCH_CONTAINS: return strstr(code, text) != NULL;
	}
	return false;
}

enum gc_errcode gc_driver_classify(const struct gc_driver_code *table, const char *code, int status)
{
	for (const struct gc_driver_code *row = table; code && *code && row->texts; row++)
		for (const char *const *t = row->texts; *t; t++)
			if (code_matches(row->how, *t, code))
				return row->code;
	if (status >= 500)
		return GC_ETRANSIENT;
	if (status == 429)
		return GC_ETHROTTLED;
	if (code && *code)
		return GC_EINVALID; /* every other code: the request itself is wrong */
	return gc_http_status_errcode(status);
}

static bool in_list(const char *code, const char *const *list)
{
	for (; code && list && *list; list++)
		if (strcmp(code, *list) == 0)
			return true;
	return false;
}

/* ---- the wire --------------------------------------------------------------------- */

void gc_driver_wire_add(struct gc_driver_wire *w, const char *name, const char *value)
{
	w->headers = gc_xreallocarray(w->headers, w->n_headers + 1, sizeof(*w->headers));
	w->headers[w->n_headers++] = gc_xasprintf("%s: %s", name, value);
}

void gc_driver_wire_add_all(struct gc_driver_wire *w, const struct gc_params *params)
{
	for (size_t i = 0; i < params->n; i++)
		gc_driver_wire_add(w, params->items[i].name, params->items[i].value);
}

void gc_driver_wire_release(struct gc_driver_wire *w)
{
	if (!w)
		return;
	free(w->url);
	for (size_t i = 0; i < w->n_headers; i++) {
		/* header lines carry the session token */
		for (volatile char *s = w->headers[i]; *s; s++)
			*s = '\0';
		free(w->headers[i]);
	}
	free(w->headers);
	memset(w, 0, sizeof(*w));
}

/* ---- life cycle ------------------------------------------------------------------- */

static void driver_free(struct gc_provider *p)
{
	struct gc_driver *d = gc_driver(p);

	if (!d)
		return;
	d->hooks->close(p);
	gc_http_free(d->http);
	gc_creds_release(d->creds);
	free(d->profile);
	free(d->endpoint);
	for (size_t i = 0; i < d->n_made; i++)
		free(d->made[i]);
	free(d->made);
	gc_spec_oidc_release(&d->oidc);
	gc_retry_quota_release(&d->quota);
	for (size_t i = 0; i < d->n_buckets; i++) {
		gc_ratelimit_release(&d->buckets[i]->rl);
		free(d->buckets[i]);
	}
	free(d->buckets);
	free(d);
	p->impl = NULL;
}

int gc_driver_open(struct gc_provider *p, const struct gc_provider_config *cfg,
		   const struct gc_driver_hooks *hooks, struct gc_error *err)
{
	struct gc_driver *d = gc_xcalloc(1, hooks->size);

	p->impl = d;
	d->hooks = hooks;
	d->creds = (struct gc_creds *)((char *)d + hooks->creds_at);
	gc_creds_init(d->creds);
	gc_retry_quota_init(&d->quota, 0);
	d->policy.max_attempts = hooks->max_attempts;
	d->policy.quota = &d->quota;
	d->policy.clock = p->clock;
	d->rate_limit = !cfg->no_rate_limit;
	d->profile = cfg->profile ? gc_xstrdup(cfg->profile) : NULL;
	gc_spec_oidc_copy(&d->oidc, cfg->oidc);
	d->http = gc_http_new(p->log, err);
	if (!d->http || hooks->open(p, cfg, err) != 0) {
		driver_free(p);
		return gc_error_prefix(err, "cannot open %s in '%s'", hooks->title, p->region);
	}
	return 0;
}

void gc_driver_close(struct gc_provider *p)
{
	driver_free(p);
}

int gc_driver_resolve_creds(struct gc_provider *p, struct gc_error *err)
{
	struct gc_driver *d = gc_driver(p);

	return d->hooks->resolve_creds(p, d->creds, err);
}

/* The chain again; the fresh credentials replace the old ones. */
static int renew_creds(struct gc_provider *p, struct gc_error *err)
{
	struct gc_driver *d = gc_driver(p);
	struct gc_creds fresh;

	gc_creds_init(&fresh);
	if (d->hooks->resolve_creds(p, &fresh, err) != 0) {
		gc_creds_release(&fresh);
		return -1;
	}
	gc_log_debug(p->log, "%s: renewed the credentials from %s", p->ops->name,
		     fresh.source ? fresh.source : "the chain");
	gc_creds_release(d->creds);
	*d->creds = fresh;
	return 0;
}

/* Seconds before their expiry that temporary credentials are renewed. */
#define CREDS_REFRESH_AHEAD 300

/* Before a call: a failed renewal is only a warning while the old credentials still hold
 * (the next call tries again). */
static int refresh_creds(struct gc_provider *p, struct gc_error *err)
{
	struct gc_driver *d = gc_driver(p);
	int64_t expiration = d->creds->expiration;
	int64_t now = (int64_t)time(NULL);
	struct gc_error e;

	if (!expiration || now + CREDS_REFRESH_AHEAD < expiration)
		return 0;
	gc_error_init(&e);
	if (renew_creds(p, &e) == 0)
		return 0;
	if (now < expiration) {
		const char *source = d->creds->source;

		/* still valid for a few minutes: keep going, try again next call */
		gc_log_warn(p->log, "%s: cannot renew credentials from %s: %s", p->ops->name,
			    source ? source : "the chain", e.message);
		return 0;
	}
	if (err)
		*err = e;
	return gc_error_prefix(err, "the %s credentials expired", d->hooks->title);
}

/* ---- our own rate limits ---------------------------------------------------------- */

/* The caller's cancel (gc_provider_config.cancelled) as core/wait.h takes it. */
static void cancel_of(const struct gc_provider *p, struct gc_cancel *out)
{
	out->fn = p->cancelled;
	out->ctx = p->cancel_ctx;
}

/* The longest a call waits on our own buckets (longer than any bucket needs to refill):
 * past it the call fails at once. */
#define RATE_WAIT_MAX_MS (15u * 60 * 1000)

/* Takes n tokens from rl, sleeping (cancellable) as long as the bucket needs. */
static int take_tokens(struct gc_provider *p, struct gc_ratelimit *rl, uint64_t n,
		       const char *action, struct gc_error *err)
{
	struct gc_cancel cancel;
	uint64_t waited = 0, wait;

	cancel_of(p, &cancel);
	for (;;) {
		uint64_t t0;

		if (gc_ratelimit_take(rl, n, &wait, err) != 0)
			return gc_error_prefix(err, "%s", action);
		if (wait == 0)
			break;
		if (waited + wait > RATE_WAIT_MAX_MS)
			return gc_error_set(err, GC_ETIMEOUT,
					    "%s: our own rate limit would hold the call for more "
					    "than %u s",
					    action, RATE_WAIT_MAX_MS / 1000);
		t0 = gc_clock_now_ns(p->clock);
		if (gc_wait_sleep(p->clock, &cancel, wait) != 0) {
			waited += (gc_clock_now_ns(p->clock) - t0) / GC_NS_PER_MS;
			p->stats.ratelimit_wait_ms += waited;
			return gc_error_set(err, GC_ECANCELLED,
					    "%s: cancelled while waiting on our own rate limit",
					    action);
		}
		waited += wait;
	}
	p->stats.ratelimit_wait_ms += waited;
	return 0;
}

static struct gc_ratelimit *bucket_for(struct gc_provider *p, const char *name,
				       struct gc_error *err)
{
	struct gc_driver *d = gc_driver(p);
	struct gc_driver_bucket *b;
	uint64_t cap, refill, interval_ms;

	for (size_t i = 0; i < d->n_buckets; i++)
		if (strcmp(d->buckets[i]->name, name) == 0)
			return &d->buckets[i]->rl;
	d->hooks->bucket(name, &cap, &refill, &interval_ms);
	b = gc_xcalloc(1, sizeof(*b));
	snprintf(b->name, sizeof(b->name), "%s", name);
	if (gc_ratelimit_init(&b->rl, cap, refill, interval_ms, p->clock, err) != 0) {
		free(b);
		return NULL;
	}
	GC_ALLOC_GROW(d->buckets, d->n_buckets + 1, d->alloc_buckets);
	d->buckets[d->n_buckets++] = b;
	return &b->rl;
}

static int throttle_ourselves(struct gc_provider *p, const struct gc_driver_request *req,
			      struct gc_error *err)
{
	struct gc_ratelimit *rl;

	if (!gc_driver(p)->rate_limit)
		return 0;
	if (!(rl = bucket_for(p, req->bucket ? req->bucket : req->action, err)))
		return gc_error_prefix(err, "%s", req->action);
	if (take_tokens(p, rl, 1, req->action, err) != 0)
		return -1;
	if (req->resource && req->resource_tokens)
		return take_tokens(p, req->resource, req->resource_tokens, req->action, err);
	return 0;
}

/* ---- paging ----------------------------------------------------------------------- */

/* FNV-1a, never 0 (a free slot): tokens and ids are remembered by it, so what a listing
 * keeps of them stays small whatever the cloud sends. */
static uint64_t hash64(const char *s)
{
	uint64_t h = 14695981039346656037ull;

	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 1099511628211ull;
	}
	return h ? h : 1;
}

/* What looked wrong with a page just read, as an error; 0 when the loop may go on. */
static int page_bounds(const struct gc_pager *pager, const struct gc_page *pg, size_t max_items,
		       struct gc_error *err)
{
	const char *a = pager->action;

	if (pg->total >= 0 && (uint64_t)pg->total > max_items)
		return gc_error_set(err, GC_EBADRESPONSE,
				    "%s: a TotalCount of %lld on page %u, more than this cluster "
				    "can have (%zu)",
				    a, (long long)pg->total, pg->number + 1, max_items);
	if (pg->counted && pg->seen > max_items)
		return gc_error_set(err, GC_EBADRESPONSE,
				    "%s: more than %zu items by page %u, more than this cluster "
				    "can have",
				    a, max_items, pg->number + 1);
	return 0;
}

int gc_driver_pages(struct gc_provider *p, const struct gc_pager *pager, void *ctx,
		    struct gc_error *err)
{
	const struct gc_driver *d = p ? gc_driver(p) : NULL;
	size_t max_items = d && d->max_items ? d->max_items : GC_DRIVER_MAX_ITEMS;
	unsigned max_pages = d && d->max_pages ? d->max_pages : GC_DRIVER_MAX_PAGES;
	/* the hash of each page's NextToken, by page: any of them again is a loop */
	uint64_t *tokens = gc_xcalloc(max_pages, sizeof(*tokens));
	struct gc_page pg = { 0 };
	unsigned empty = 0;
	char *token = NULL;
	int ret = -1;

	for (;; pg.number++) {
		struct gc_buf body = GC_BUF_INIT(0);

		if (pg.number >= max_pages) {
			ret = gc_error_set(err, GC_EBADRESPONSE, "%s: more than %u pages%s",
					   pager->action, max_pages,
					   pager->cap_note ? pager->cap_note : "");
			break;
		}
		pg.token = token;
		pg.next = NULL;
		pg.items = 0;
		pg.counted = false;
		pg.total = -1;
		ret = pager->send(p, ctx, &pg, &body, err);
		if (ret == 0)
			ret = pager->parse(p, ctx, &body, &pg, err);
		gc_buf_release(&body);
		free(token);
		token = pg.next;
		if (ret != 0)
			break;
		pg.counted |= pg.total >= 0;
		pg.seen += pg.items;
		if ((ret = page_bounds(pager, &pg, max_items, err)) != 0)
			break;
		if (pg.total < 0 && token) {
			/* a token seen before is a loop, even on a page that ends the listing */
			tokens[pg.number] = hash64(token);
			for (unsigned i = 0; i < pg.number && ret == 0; i++)
				if (tokens[i] == tokens[pg.number])
					ret = gc_error_set(
						err, GC_EBADRESPONSE,
						"%s: the NextToken of page %u came back on page %u",
						pager->action, i + 1, pg.number + 1);
			empty = pg.counted && pg.items == 0 ? empty + 1 : 0;
			if (ret == 0 && !pg.done && empty > GC_DRIVER_EMPTY_PAGES)
				ret = gc_error_set(err, GC_EBADRESPONSE,
						   "%s: page %u is empty but carries a NextToken",
						   pager->action, pg.number + 1);
			if (ret != 0)
				break;
		}
		if (pg.total >= 0 && (pg.items == 0 || pg.seen >= (uint64_t)pg.total))
			pg.done = true;
		if (pg.done || (pg.total < 0 && !token))
			break;
	}
	free(token);
	free(tokens);
	return ret;
}

/* Remembers id; true when it was handed before in this listing. */
static bool id_twice(struct gc_driver_discover *d, const char *id)
{
	uint64_t h = hash64(id);
	size_t mask;

	if ((d->handed + 1) * 2 > d->ids_cap) {
		size_t cap = d->ids_cap ? d->ids_cap * 2 : 64;
		uint64_t *ids = gc_xcalloc(cap, sizeof(*ids));

		for (size_t i = 0; i < d->ids_cap; i++) {
			size_t k = d->ids[i] & (cap - 1);

			while (d->ids[i] && ids[k])
				k = (k + 1) & (cap - 1);
			if (d->ids[i])
				ids[k] = d->ids[i];
		}
		free(d->ids);
		d->ids = ids;
		d->ids_cap = cap;
	}
	mask = d->ids_cap - 1;
	for (size_t k = h & mask;; k = (k + 1) & mask) {
		if (d->ids[k] == h)
			return true;
		if (!d->ids[k]) {
			d->ids[k] = h;
			return false;
		}
	}
}

void gc_driver_discover_keep(struct gc_driver_discover *d, struct gc_instance *inst)
{
	const struct gc_discover_query *q = d->q;
	size_t max = d->max_items;

	d->page_items++;
	/* past the cap (the pager fails after this page) or listed twice: not kept */
	if (d->handed >= max || (inst->id && id_twice(d, inst->id))) {
		if (d->handed < max && !d->twice)
			d->twice = gc_xstrdup(inst->id);
		gc_instance_release(inst);
		return;
	}
	d->handed++;
	if (gc_tags_match(inst->tags, inst->n_tags, q->tags, q->n_tags) &&
	    (q->include_terminated || inst->state != GC_STATE_TERMINATED))
		*gc_instance_list_push(&d->found) = *inst;
	else
		gc_instance_release(inst);
}

/* The cloud's parse, counting the page's items; an id listed twice ends the listing. */
static int discover_parse(struct gc_provider *p, void *ctx, const struct gc_buf *body,
			  struct gc_page *pg, struct gc_error *err)
{
	struct gc_driver_discover *d = ctx;
	int ret;

	d->page_items = 0;
	ret = d->hooks->parse(p, ctx, body, pg, err);
	pg->items = d->page_items;
	pg->counted = true;
	if (d->twice && !d->twice_page) {
		/* ends the listing, an error once the page's token has been checked */
		d->twice_page = pg->number + 1;
		pg->done = true;
	}
	return ret;
}

int gc_driver_discover(struct gc_provider *p, const struct gc_pager *hooks,
		       const struct gc_discover_query *q, struct gc_instance_list *out,
		       struct gc_error *err)
{
	struct gc_pager pager = { "DescribeInstances", "; the paging loops", hooks->send,
				  discover_parse };
	struct gc_driver_discover d = { .q = q, .hooks = hooks };
	int ret;

	d.max_items = p && gc_driver(p) && gc_driver(p)->max_items ? gc_driver(p)->max_items
								   : GC_DRIVER_MAX_ITEMS;
	gc_instance_list_init(&d.found);
	ret = gc_driver_pages(p, &pager, &d, err);
	if (ret == 0 && d.twice)
		ret = gc_error_set(err, GC_EBADRESPONSE,
				   "DescribeInstances: instance '%s' is listed twice (page %u)",
				   d.twice, d.twice_page);
	if (ret == 0)
		gc_instance_list_take(out, &d.found);
	gc_instance_list_release(&d.found);
	free(d.ids);
	free(d.twice);
	return ret;
}

/* ---- the pipeline ----------------------------------------------------------------- */

int gc_driver_fail(struct gc_provider *p, const struct gc_driver_request *req, int status,
		   const char *code, const char *message, const char *request_id,
		   struct gc_error *err)
{
	enum gc_errcode ec = gc_driver_classify(gc_driver(p)->hooks->codes, code, status);
	const char *rid = request_id && *request_id ? request_id : NULL;

	if (ec == GC_OK) /* a failure under a 2xx or 3xx status, without a code we know */
		ec = GC_EINVALID;
	if ((!code || !*code) && !message) {
		/* a gateway or transport answer: the status is all there is */
		gc_error_set(err, ec, "%s: HTTP %d from '%s'", req->action, status, req->host);
		gc_error_set_cloud(err, NULL, rid, status);
		return -1;
	}
	if (rid)
		gc_error_set(err, ec, "%s: %s: %s (request %s)", req->action,
			     code && *code ? code : "?", message ? message : "", rid);
	else
		gc_error_set(err, ec, "%s: %s: %s", req->action, code && *code ? code : "?",
			     message ? message : "");
	gc_error_set_cloud(err, code && *code ? code : NULL, rid, status);
	gc_error_set_action(err, req->action);
	return -1;
}

static int attempt(struct gc_provider *p, const struct gc_driver_request *req, struct gc_buf *out,
		   int64_t *retry_after_ms, struct gc_error *err)
{
	struct gc_driver *d = gc_driver(p);
	struct gc_driver_wire w;
	struct gc_http_request hr;
	struct gc_http_response res;
	int ret = -1;

	*retry_after_ms = -1;
	if (throttle_ourselves(p, req, err) != 0 || refresh_creds(p, err) != 0)
		return -1;
	memset(&w, 0, sizeof(w));
	if (d->hooks->sign(p, req, &w, err) != 0) {
		gc_driver_wire_release(&w);
		return -1;
	}
	memset(&hr, 0, sizeof(hr));
	hr.method = "POST";
	hr.url = w.url;
	hr.headers = (const char *const *)w.headers;
	hr.n_headers = w.n_headers;
	hr.body = w.body;
	hr.body_len = w.body_len;
	hr.max_response = d->hooks->max_response;

	p->stats.calls++;
	gc_log_trace(p->log, "%s: %s to '%s'", p->ops->name, req->action, req->host);
	if (gc_http_perform(d->http, &hr, &res, err) != 0) {
		gc_error_prefix(err, "%s", req->action);
		goto out;
	}
	if (d->hooks->answer(p, req, &res, retry_after_ms, err) != 0)
		goto out;
	if (out) {
		/* handed over, not copied: a page of 1000 instances is megabytes */
		gc_buf_release(out);
		*out = res.body;
		gc_buf_init(&res.body, d->hooks->max_response);
	}
	ret = 0;
out:
	gc_http_response_release(&res);
	gc_driver_wire_release(&w);
	return ret;
}

int gc_driver_send(struct gc_provider *p, const struct gc_driver_request *req, struct gc_buf *out,
		   struct gc_error *err)
{
	struct gc_driver *d = gc_driver(p);
	struct gc_retry r;
	struct gc_error e;
	bool resigned = false;

	if (out)
		gc_buf_init(out, d->hooks->max_response);
	gc_retry_begin(&r, &d->policy);
	for (unsigned n = 0;; n++) {
		int64_t hint;

		gc_error_init(&e);
		if (n)
			p->stats.retries++;
		if (attempt(p, req, out, &hint, &e) == 0) {
			gc_retry_succeeded(&r);
			return 0;
		}
		if (e.code == GC_ETHROTTLED)
			p->stats.throttled++;
		if (e.code == GC_ECANCELLED)
			break;
		/* a clock complaint: a fresh time, once; a second one means the clock really is
		 * off */
		if (in_list(e.cloud_code, d->hooks->clock_codes)) {
			if (resigned) {
				gc_error_prefix(&e, "check this machine's clock");
				break;
			}
			resigned = true;
			gc_log_debug(p->log, "%s: signing %s again after: %s", p->ops->name,
				     req->action, e.message);
			continue;
		}
		/* a launch without a client token may have happened: never repeat it */
		if (req->unsafe && e.code != GC_ETHROTTLED)
			break;
		if (gc_retry_pause(&r, &e, hint) != 0)
			break;
		gc_log_debug(p->log, "%s: retrying %s after: %s", p->ops->name, req->action,
			     e.message);
	}
	if (err)
		*err = e;
	return -1;
}

/* ---- busy resources --------------------------------------------------------------- */

/* The loop of gc_driver_wait_busy and gc_driver_retry_unseen: keep says whether err
 * keeps the cloud's own code when the attempts run out (else GC_ETRANSIENT). */
static int wait_out(struct gc_provider *p, unsigned max_attempts, bool keep,
		    gc_busy_attempt_fn attempt_fn, void *ctx, const char *waiting,
		    struct gc_error *err)
{
	const struct gc_retry_policy busy = {
		.max_attempts = max_attempts,
		.base_transient_ms = 2000,
		.max_backoff_ms = 20000,
		.clock = p->clock,
	};
	struct gc_cancel cancel;
	struct gc_retry r;
	struct gc_error e;

	cancel_of(p, &cancel);
	gc_retry_begin(&r, &busy);
	for (;;) {
		struct gc_retry_decision dec;
		enum gc_errcode code;
		int rc;

		gc_error_init(&e);
		rc = attempt_fn(p, ctx, &e);
		if (rc == 0)
			return 0;
		if (rc < 0)
			break;
		code = e.code;
		e.code = GC_ETRANSIENT;
		dec = gc_retry_decide(&r, e.code, -1);
		if (!dec.retry) {
			gc_error_prefix(&e, "gave up after %u attempt%s (%s)", r.attempts,
					r.attempts == 1 ? "" : "s",
					gc_retry_reason_name(dec.reason));
			e.code = keep ? code : GC_ETRANSIENT;
			break;
		}
		if (gc_wait_sleep(p->clock, &cancel, dec.delay_ms) != 0) {
			gc_error_set(&e, GC_ECANCELLED, "cancelled while waiting: %s", waiting);
			break;
		}
		gc_log_debug(p->log, "%s: %s; waiting", p->ops->name, waiting);
	}
	if (err)
		*err = e;
	return -1;
}

int gc_driver_wait_busy(struct gc_provider *p, gc_busy_attempt_fn attempt_fn, void *ctx,
			const char *waiting, struct gc_error *err)
{
	return wait_out(p, 10, false, attempt_fn, ctx, waiting, err);
}

/* ---- resources just made: eventual consistency ------------------------------------ */

void gc_driver_made(struct gc_provider *p, const char *id)
{
	struct gc_driver *d = gc_driver(p);

	if (!id || gc_driver_just_made(p, id))
		return;
	GC_ALLOC_GROW(d->made, d->n_made + 1, d->alloc_made);
	d->made[d->n_made++] = gc_xstrdup(id);
}

bool gc_driver_just_made(struct gc_provider *p, const char *id)
{
	struct gc_driver *d = gc_driver(p);

	for (size_t i = 0; id && i < d->n_made; i++)
		if (strcmp(d->made[i], id) == 0)
			return true;
	return false;
}

struct unseen {
	gc_busy_attempt_fn attempt;
	void *ctx;
	const char *const *ids;
	size_t n_ids;
	const char *const *codes;
};

static int unseen_attempt(struct gc_provider *p, void *ctx, struct gc_error *err)
{
	const struct unseen *u = ctx;
	bool ours = false;

	if (u->attempt(p, u->ctx, err) == 0)
		return 0;
	if (!in_list(err->cloud_code, u->codes))
		return -1;
	for (size_t i = 0; i < u->n_ids && !ours; i++)
		ours = gc_driver_just_made(p, u->ids[i]);
	return ours ? 1 : -1;
}

int gc_driver_call_attempt(struct gc_provider *p, void *ctx, struct gc_error *err)
{
	const struct gc_driver_call *c = ctx;

	gc_buf_release(c->body);
	return c->call(p, c->action, c->params, c->tokens, c->unsafe, c->body, err);
}

int gc_driver_retry_unseen(struct gc_provider *p, gc_busy_attempt_fn attempt_fn, void *ctx,
			   const char *const *ids, size_t n_ids, const char *const *codes,
			   const char *waiting, struct gc_error *err)
{
	struct unseen u = { attempt_fn, ctx, ids, n_ids, codes };

	return wait_out(p, GC_DRIVER_UNSEEN_ATTEMPTS, true, unseen_attempt, &u, waiting, err);
}

struct secgroup_delete {
	const char *id;
	int (*once)(struct gc_provider *p, const char *id, struct gc_error *err);
};

static int secgroup_delete_attempt(struct gc_provider *p, void *ctx, struct gc_error *err)
{
	const struct secgroup_delete *sd = ctx;
	int rc = sd->once(p, sd->id, err);

	return rc != 0 && err->code == GC_ENOTFOUND ? 0 : rc;
}

int gc_driver_delete_secgroup(struct gc_provider *p, const char *id,
			      int (*once)(struct gc_provider *p, const char *id,
					  struct gc_error *err),
			      struct gc_error *err)
{
	struct secgroup_delete sd = { id, once };
	char *waiting = gc_xasprintf("security group '%s' still in use", id);
	int rc = gc_driver_wait_busy(p, secgroup_delete_attempt, &sd, waiting, err);

	free(waiting);
	if (rc != 0)
		return gc_error_prefix(err, "cannot delete security group '%s'", id);
	return 0;
}

int gc_driver_secgroup_failed(const struct gc_secgroup_request *req, struct gc_error *err)
{
	if (req->id)
		return gc_error_prefix(err, "cannot update the rules of security group '%s' (%s)",
				       req->name, req->id);
	return gc_error_prefix(err, "cannot create security group '%s'", req->name);
}

void gc_driver_discard_secgroup(struct gc_provider *p, const char *id,
				int (*del)(struct gc_provider *p, const char *id,
					   struct gc_error *err))
{
	struct gc_error e;

	gc_error_init(&e);
	if (del(p, id, &e) != 0)
		gc_log_warn(p->log, "%s: cannot delete security group '%s': %s", p->ops->name, id,
			    e.message);
}

int gc_driver_terminate_dropping_gone(struct gc_provider *p, const char *const *ids, size_t n,
				      unsigned max,
				      int (*call)(struct gc_provider *p, const char *const *ids,
						  size_t n, struct gc_error *err),
				      const char *gone_code, struct gc_error *err)
{
	const char **left;
	size_t n_left = n;
	int ret = -1;

	if (n > max)
		return gc_error_set(err, GC_EINVALID,
				    "cannot terminate %zu instances in one call (at most %u)", n,
				    max);
	if (n == 0)
		return 0;
	left = gc_xcalloc(n, sizeof(*left));
	memcpy(left, ids, n * sizeof(*left));
	while (n_left) {
		struct gc_error e;
		size_t kept = 0;

		gc_error_init(&e);
		if (call(p, left, n_left, &e) == 0)
			break;
		if (strcmp(e.cloud_code, gone_code) != 0) {
			if (err)
				*err = e;
			gc_error_prefix(err, "cannot terminate %zu instance%s", n_left,
					n_left == 1 ? "" : "s");
			goto out;
		}
		for (size_t i = 0; i < n_left; i++) {
			if (gc_names_id(e.message, left[i]))
				gc_log_debug(p->log,
					     "%s: '%s' is not found (gone, or not yet known)",
					     p->ops->name, left[i]);
			else
				left[kept++] = left[i];
		}
		if (n_left == 1 || kept == 0)
			break; /* the only one, or every one, is gone */
		if (kept == n_left) {
			/* the message named none of ours: one at a time, gone meaning done */
			for (size_t i = 0; i < n_left; i++) {
				gc_error_init(&e);
				if (call(p, &left[i], 1, &e) != 0 &&
				    strcmp(e.cloud_code, gone_code) != 0) {
					if (err)
						*err = e;
					gc_error_prefix(err, "cannot terminate '%s'", left[i]);
					goto out;
				}
			}
			break;
		}
		n_left = kept;
	}
	ret = 0;
out:
	free(left);
	return ret;
}

char *gc_driver_url_host(const char *url)
{
	const char *s = strstr(url, "://"), *e;

	if (!s)
		return NULL;
	s += 3;
	e = s + strcspn(s, "/?#");
	if (e == s)
		return NULL;
	return gc_xstrndup(s, (size_t)(e - s));
}

/* The "TYPE BASE64" part of an OpenSSH public key line (no comment); a new string. */
static char *key_body(const char *line)
{
	const char *s = line, *e;

	while (*s == ' ' || *s == '\t')
		s++;
	e = s + strcspn(s, " \t");
	if (*e)
		e += 1 + strcspn(e + 1, " \t\r\n");
	return gc_xstrndup(s, (size_t)(e - s));
}

int gc_driver_import_keypair(struct gc_provider *p, const struct gc_driver_keypair *k,
			     const struct gc_keypair_request *req, char **out_id,
			     struct gc_error *err)
{
	char code[128], *line = NULL, *id = NULL, *want = NULL, *have = NULL;
	int ret = -1;

	if (!req->name || !req->public_key_line || !*req->public_key_line)
		return gc_error_set(err, GC_EINVALID,
				    "cannot import a key pair without a name and a public key");
	if (k->import(p, req, out_id, err) == 0)
		return 0;
	if (!err || !in_list(err->cloud_code, k->duplicates))
		goto out;
	snprintf(code, sizeof(code), "%s", err->cloud_code);
	if (k->lookup(p, req->name, &line, &id, err) != 0)
		goto out;
	want = key_body(req->public_key_line);
	have = line ? key_body(line) : NULL;
	if (have && id && *id && strcmp(want, have) == 0) {
		gc_error_init(err);
		*out_id = id;
		id = NULL;
		ret = 0;
		goto out;
	}
	if (k->key_taken && strcmp(code, k->key_taken) == 0)
		gc_error_set(err, GC_EINVALID, "this public key is already imported, not as '%s'",
			     req->name);
	else
		gc_error_set(err, GC_EINVALID,
			     "a key pair named '%s' already exists with another public key",
			     req->name);
	gc_error_set_cloud(err, code, NULL, k->status);
out:
	if (ret != 0)
		gc_error_prefix(err, "cannot import key pair '%s'", req->name);
	free(line);
	free(id);
	free(want);
	free(have);
	return ret;
}
