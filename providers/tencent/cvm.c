/*
 * cvm.c: the Tencent driver's one road to the cloud: tc_call, for CVM and VPC API 3.0
 * actions (version 2017-03-12 both).
 *
 * Per attempt: our token bucket for the action (the per-API limits of the intl CVM API
 * overview: RunInstances, TerminateInstances and InquiryPriceRunInstances 10/s,
 * DescribeInstances 40/s, everything else 20/s, the DescribeZones figure; the emulator
 * enforces the same), the credentials renewed when temporary ones run out, the JSON body
 * signed with TC3-HMAC-SHA256 as WIRE.md 3.1/3.2 have it (POST /, Content-Type
 * application/json, X-TC-Action, X-TC-Version, X-TC-Timestamp, X-TC-Region, X-TC-Token
 * with temporary keys; the service is the product, "cvm" or "vpc", which is the first
 * label of the public hosts and is named explicitly so an endpoint override such as the
 * emulator's 127.0.0.1:PORT signs the same), then the answer: Tencent reports errors
 * with HTTP 200 and {"Response":{"Error":{"Code","Message"},"RequestId"}}, so the body,
 * not the status, decides. Error codes are classified as WIRE.md 3.5 lists them and
 * retried with core/retry.h; AuthFailure.SignatureExpire (our timestamp more than five
 * minutes off the server's, as after a long wait) is re-signed with a fresh timestamp and
 * sent once more.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/alloc.h"
#include "core/str.h"
#include "providers/tencent/cvm.h"
#include "providers/tencent/tc3.h"

#define TC_CONTENT_TYPE "application/json" /* what the SDK sends and signs */

char *tc_url_host(const char *url)
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

/* ---- classification ------------------------------------------------------------------ */

static bool in_list(const char *code, const char *const *list)
{
	for (; *list; list++)
		if (strcmp(code, *list) == 0)
			return true;
	return false;
}

enum gc_errcode tc_classify(const char *code, int status)
{
	/* stock-outs that are not prefixed like the rest: the engine falls back on them */
	static const char *const capacity[] = {
		"InvalidParameterValue.InsufficientOffering", /* spot out of stock */
		"InvalidParameterValue.InsufficientPrice",    /* bid below the spot price */
		"UnsupportedOperation.NoInstanceTypeSupportSpot",
		"UnsupportedOperation.SpotUnsupportedRegion",
		"LimitExceeded.SpotQuota", /* "the spot offerings are out of stock" */
		"ResourceNotFound.InvalidZoneInstanceType", /* the type is not sold in the zone */
		NULL,
	};
	static const char *const quota[] = {
		"InstancesQuotaLimitExceeded",
		"InvalidKeyPair.LimitExceeded",
		"InvalidAccount.InsufficientBalance",
		"InvalidAccount.UnpaidOrder",
		"OverQuota",
		NULL,
	};
	static const char *const transient[] = {
		"InternalError",
		"InternalServerError",
		"ServiceUnavailable",
		"MutexOperation.TaskRunning",		       /* an identical job is running */
		"OperationDenied.InstanceOperationInProgress", /* try again later */
		NULL,
	};

	if (code && *code) {
		if (gc_starts_with(code, "RequestLimitExceeded"))
			return GC_ETHROTTLED;
		if (in_list(code, capacity))
			return GC_ECAPACITY;
		if (strstr(code, "Quota") || in_list(code, quota))
			return GC_EQUOTA;
		if (gc_starts_with(code, "ResourceInsufficient") ||
		    gc_starts_with(code, "ResourcesSoldOut") ||
		    gc_starts_with(code, "ResourceUnavailable"))
			return GC_ECAPACITY;
		if (gc_starts_with(code, "LimitExceeded"))
			return GC_EQUOTA;
		if (gc_starts_with(code, "AuthFailure") ||
		    gc_starts_with(code, "UnauthorizedOperation") ||
		    strcmp(code, "InvalidPermission") == 0)
			return GC_EAUTH;
		if (gc_ends_with(code, ".NotFound") || gc_starts_with(code, "ResourceNotFound"))
			return GC_ENOTFOUND;
		if (in_list(code, transient) || gc_starts_with(code, "InternalError."))
			return GC_ETRANSIENT;
	}
	if (status >= 500)
		return GC_ETRANSIENT;
	if (status == 429)
		return GC_ETHROTTLED;
	if (code && *code)
		return GC_EINVALID; /* every other code: the request itself is wrong */
	return gc_http_status_errcode(status);
}

/* ---- rate limiting ---------------------------------------------------------------------- */

static uint64_t bucket_rate(const char *action)
{
	if (strcmp(action, "RunInstances") == 0 || strcmp(action, "TerminateInstances") == 0 ||
	    strcmp(action, "InquiryPriceRunInstances") == 0)
		return 10;
	if (strcmp(action, "DescribeInstances") == 0)
		return 40;
	return 20;
}

static struct gc_ratelimit *bucket_for(struct gc_provider *p, const char *action,
				       struct gc_error *err)
{
	struct tc_driver *d = tc_driver(p);
	struct tc_bucket *b;
	uint64_t rate = bucket_rate(action);

	for (size_t i = 0; i < d->n_buckets; i++)
		if (strcmp(d->buckets[i]->action, action) == 0)
			return &d->buckets[i]->rl;
	b = gc_xcalloc(1, sizeof(*b));
	snprintf(b->action, sizeof(b->action), "%s", action);
	/* a second's worth at once, as the server counts per second */
	if (gc_ratelimit_init(&b->rl, rate, rate, 1000, p->clock, err) != 0) {
		free(b);
		return NULL;
	}
	GC_ALLOC_GROW(d->buckets, d->n_buckets + 1, d->alloc_buckets);
	d->buckets[d->n_buckets++] = b;
	return &b->rl;
}

/* Takes a token, sleeping on the provider's clock in slices so that a cancel stops it. */
static int take(struct gc_provider *p, const char *action, struct gc_error *err)
{
	struct gc_ratelimit *rl;

	if (!tc_driver(p)->rate_limit)
		return 0;
	if (!(rl = bucket_for(p, action, err)))
		return gc_error_prefix(err, "%s", action);
	return gc_driver_take(p, rl, 1, action, err);
}

/* ---- one attempt -------------------------------------------------------------------------- */

struct tc_req {
	enum tc_service svc;
	const char *action;
	const char *url;
	const char *host;
	const char *body;
	size_t body_len;
};

/* The answer's Response object, or its Error classified into err. */
static int read_answer(const struct tc_req *c, const struct gc_http_response *res, json_t **out,
		       struct gc_error *err)
{
	json_t *doc, *resp, *e;
	const char *rid, *code, *msg;

	doc = json_loadb(res->body.data, res->body.len, 0, NULL);
	resp = json_object_get(doc, "Response");
	if (res->status != 200) {
		/* a gateway or transport answer: the status is all there is */
		gc_error_set(err, tc_classify(NULL, res->status), "%s: HTTP %d from '%s'",
			     c->action, res->status, c->host);
		gc_error_set_cloud(err, NULL, NULL, res->status);
		json_decref(doc);
		return -1;
	}
	if (!json_is_object(resp)) {
		gc_error_set(err, GC_EINVALID,
			     "%s: the answer from '%s' is not a Response document", c->action,
			     c->host);
		gc_error_set_cloud(err, NULL, NULL, res->status);
		json_decref(doc);
		return -1;
	}
	rid = json_string_value(json_object_get(resp, "RequestId"));
	e = json_object_get(resp, "Error");
	if (e) {
		code = json_string_value(json_object_get(e, "Code"));
		msg = json_string_value(json_object_get(e, "Message"));
		if (rid)
			gc_error_set(err, tc_classify(code, res->status), "%s: %s: %s (request %s)",
				     c->action, code ? code : "?", msg ? msg : "", rid);
		else
			gc_error_set(err, tc_classify(code, res->status), "%s: %s: %s", c->action,
				     code ? code : "?", msg ? msg : "");
		gc_error_set_cloud(err, code, rid, res->status);
		json_decref(doc);
		return -1;
	}
	*out = json_incref(resp);
	json_decref(doc);
	return 0;
}

static int attempt(struct gc_provider *p, const struct tc_req *c, json_t **out,
		   struct gc_error *err)
{
	struct tc_driver *d = tc_driver(p);
	struct gc_params headers = GC_PARAMS_INIT;
	struct gc_sign_request sr;
	struct gc_sign_result sig;
	struct tc_sign_input in;
	struct gc_http_response res;
	int ret = -1;

	if (take(p, c->action, err) != 0 || tc_refresh_creds(p, err) != 0)
		return -1;
	gc_params_add(&headers, "Host", c->host);
	gc_params_add(&headers, "Content-Type", TC_CONTENT_TYPE);
	gc_params_add(&headers, "X-TC-Language", "en-US");
	memset(&sr, 0, sizeof(sr));
	sr.method = "POST";
	sr.host = c->host;
	sr.path = "/";
	sr.headers = &headers;
	sr.body = c->body;
	sr.body_len = c->body_len;
	memset(&in, 0, sizeof(in));
	in.secret_id = d->creds.secret_id;
	in.secret_key = d->creds.secret_key;
	in.token = d->creds.token;
	in.timestamp = (int64_t)time(NULL);
	in.service = c->svc == TC_VPC ? "vpc" : "cvm";
	in.action = c->action;
	in.version = TC_API_VERSION;
	in.region = p->region;
	if (tc_sign(&sig, &sr, &in, err) != 0) {
		gc_params_release(&headers);
		return gc_error_prefix(err, "cannot sign %s", c->action);
	}
	gc_params_add_all(&headers, &sig.added_headers);
	gc_sign_result_release(&sig);

	p->stats.calls++;
	gc_log_trace(p->log, "tencent: %s to '%s'", c->action, c->host);
	if (gc_http_post(d->http, c->url, &headers, c->body, c->body_len, TC_MAX_RESPONSE, &res,
			 err) != 0) {
		gc_error_prefix(err, "%s", c->action);
		goto out;
	}
	ret = read_answer(c, &res, out, err);
out:
	gc_http_response_release(&res);
	gc_params_release(&headers);
	return ret;
}

/* The body may hold a host's private key (a launch's user-data): wiped before it is freed. */
static void body_free(char *body)
{
	for (volatile char *q = body; q && *q; q++)
		*q = '\0';
	free(body);
}

int tc_call(struct gc_provider *p, enum tc_service svc, const char *action, json_t *params,
	    bool unsafe, json_t **out, struct gc_error *err)
{
	struct tc_driver *d = tc_driver(p);
	struct tc_req c;
	struct gc_retry r;
	struct gc_error e;
	bool resigned = false;
	char *body;

	*out = NULL;
	body = params ? json_dumps(params, JSON_COMPACT) : gc_xstrdup("{}");
	if (!body)
		return gc_error_set(err, GC_EINVALID, "%s: cannot write the request body", action);
	if (strlen(body) > TC_MAX_REQUEST) {
		body_free(body);
		return gc_error_set(err, GC_ETOOBIG, "%s: the request is over %zu bytes", action,
				    (size_t)TC_MAX_REQUEST);
	}
	memset(&c, 0, sizeof(c));
	c.svc = svc;
	c.action = action;
	c.url = svc == TC_VPC ? d->vpc_url : d->cvm_url;
	c.host = svc == TC_VPC ? d->vpc_host : d->cvm_host;
	c.body = body;
	c.body_len = strlen(body);

	gc_retry_begin(&r, &d->policy);
	for (unsigned n = 0;; n++) {
		gc_error_init(&e);
		if (n)
			p->stats.retries++;
		if (attempt(p, &c, out, &e) == 0) {
			gc_retry_succeeded(&r);
			body_free(body);
			return 0;
		}
		if (e.code == GC_ETHROTTLED)
			p->stats.throttled++;
		if (e.code == GC_ECANCELLED)
			break;
		/* our timestamp was stale (a long wait, a slow link): once more, freshly
		 * signed; a clock that is really off fails again and is reported */
		if (!resigned && strcmp(e.cloud_code, "AuthFailure.SignatureExpire") == 0) {
			resigned = true;
			gc_log_debug(p->log, "tencent: %s: signature expired; signing again",
				     action);
			continue;
		}
		/* a launch or create whose answer was lost may have happened: not repeated */
		if (unsafe && e.code != GC_ETHROTTLED)
			break;
		if (gc_retry_pause(&r, &e, -1) != 0)
			break;
		gc_log_debug(p->log, "tencent: retrying %s after: %s", action, e.message);
	}
	body_free(body);
	if (err)
		*err = e;
	return -1;
}
