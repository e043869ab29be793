/*
 * cvm.c: the Tencent driver's hooks for core/driver.h's request pipeline, and tc_call, for
 * CVM and VPC API 3.0 actions; docs/internals/tencent.md, "One request", has the buckets,
 * the signing and the error codes. The TC3 service is named explicitly ("cvm" or "vpc")
 * so an endpoint override such as the emulator's 127.0.0.1:PORT signs the same; Tencent
 * reports errors with HTTP 200, so the body, not the status, decides.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/alloc.h"
#include "core/keygen.h"
#include "core/str.h"
#include "providers/tencent/cvm.h"
#include "providers/tencent/tc3.h"

#define TC_CONTENT_TYPE "application/json" /* what the SDK sends and signs */

/* ---- classification ------------------------------------------------------------------ */

static const struct gc_driver_code tc_codes[] = {
	GC_CODES(GC_MATCH_PREFIX, GC_ETHROTTLED, "RequestLimitExceeded"),
	/* the spot quotas, apart from the pay-as-you-go one (LimitExceeded.InstanceQuota):
	 * "竞价实例类型配额不足" / "竞价实例配额不足" in the SDK's cvm/v20170312/errors.go
	 * (the English SDK's "the spot offerings are out of stock" mistranslates the first) */
	GC_CODES(GC_MATCH_EXACT, GC_ESPOTQUOTA, "LimitExceeded.SpotQuota",
		 "LimitExceeded.UserSpotQuota"),
	/* stock-outs that are not prefixed like the rest: the engine falls back on them (spot
	 * out of stock, a bid below the spot price, the type not sold in the zone) */
	GC_CODES(GC_MATCH_EXACT, GC_ECAPACITY, "InvalidParameterValue.InsufficientOffering",
		 "InvalidParameterValue.InsufficientPrice",
		 "UnsupportedOperation.NoInstanceTypeSupportSpot",
		 "UnsupportedOperation.SpotUnsupportedRegion"),
	/* the type cannot launch there: not sold in the zone, cannot join the HPC cluster
	 * (fabric.md, "Type not supported here"); the engine falls back */
	GC_CODES(GC_MATCH_EXACT, GC_ENOTHERE, "ResourceNotFound.InvalidZoneInstanceType",
		 "InvalidParameterValue.InstanceTypeNotSupportHpcCluster"),
	GC_CODES(GC_MATCH_CONTAINS, GC_EQUOTA, "Quota"),
	GC_CODES(GC_MATCH_EXACT, GC_EQUOTA, "InstancesQuotaLimitExceeded",
		 "InvalidKeyPair.LimitExceeded", "InvalidAccount.InsufficientBalance",
		 "InvalidAccount.UnpaidOrder", "OverQuota"),
	GC_CODES(GC_MATCH_PREFIX, GC_ECAPACITY, "ResourceInsufficient", "ResourcesSoldOut",
		 "ResourceUnavailable"),
	GC_CODES(GC_MATCH_PREFIX, GC_EQUOTA, "LimitExceeded"),
	GC_CODES(GC_MATCH_PREFIX, GC_EAUTH, "AuthFailure", "UnauthorizedOperation"),
	GC_CODES(GC_MATCH_EXACT, GC_EAUTH, "InvalidPermission"),
	GC_CODES(GC_MATCH_SUFFIX, GC_ENOTFOUND, ".NotFound"),
	GC_CODES(GC_MATCH_PREFIX, GC_ENOTFOUND, "ResourceNotFound"),
	/* MutexOperation.TaskRunning: an identical job is running; InstanceOperationInProgress:
	 * try again later */
	GC_CODES(GC_MATCH_EXACT, GC_ETRANSIENT, "InternalError", "InternalServerError",
		 "ServiceUnavailable", "MutexOperation.TaskRunning",
		 "OperationDenied.InstanceOperationInProgress"),
	GC_CODES(GC_MATCH_PREFIX, GC_ETRANSIENT, "InternalError."),
	{ 0 },
};

/* Our timestamp more than five minutes off the server's (as after a long wait, a slow
 * link): signed again once; a clock that is really off fails again and is reported. */
static const char *const tc_clock_codes[] = { "AuthFailure.SignatureExpire", NULL };

enum gc_errcode tc_classify(const char *code, int status)
{
	return gc_driver_classify(tc_codes, code, status);
}

/* ---- rate limiting ---------------------------------------------------------------------- */

/* A second's worth at once, as the server counts per second. */
static void tc_bucket(const char *action, uint64_t *cap, uint64_t *per_s, uint64_t *interval_ms)
{
	if (strcmp(action, "RunInstances") == 0 || strcmp(action, "TerminateInstances") == 0 ||
	    strcmp(action, "InquiryPriceRunInstances") == 0)
		*per_s = 10;
	else if (strcmp(action, "DescribeInstances") == 0)
		*per_s = 40;
	else
		*per_s = 20;
	*cap = *per_s;
	*interval_ms = 1000;
}

/* ---- signing and answers -------------------------------------------------------------------- */

struct tc_req {
	enum tc_service svc;
	const char *url;
	const char *host;
	const char *body;
	size_t body_len;
	json_t **out; /* the Response object of a success */
};

static int tc_sign_hook(struct gc_provider *p, const struct gc_driver_request *req,
			struct gc_driver_wire *out, struct gc_error *err)
{
	struct tc_driver *d = tc_driver(p);
	const struct tc_req *c = req->ctx;
	struct gc_params headers = GC_PARAMS_INIT;
	struct gc_sign_request sr = { .method = "POST",
				      .host = c->host,
				      .path = "/",
				      .headers = &headers,
				      .body = c->body,
				      .body_len = c->body_len };
	struct gc_sign_result sig;
	struct tc_sign_input in = {
		.secret_id = d->creds.secret_id,
		.secret_key = d->creds.secret_key,
		.token = d->creds.token,
		.timestamp = (int64_t)time(NULL),
		.service = c->svc == TC_VPC ? "vpc"
			: c->svc == TC_TAG  ? "tag"
					    : "cvm",
		.action = req->action,
		.version = c->svc == TC_TAG ? TC_TAG_VERSION : TC_API_VERSION,
		.region = p->region,
	};

	gc_params_add(&headers, "Host", c->host);
	gc_params_add(&headers, "Content-Type", TC_CONTENT_TYPE);
	gc_params_add(&headers, "X-TC-Language", "en-US");
	if (tc_sign(&sig, &sr, &in, err) != 0) {
		gc_params_release(&headers);
		return gc_error_prefix(err, "cannot sign %s", req->action);
	}
	out->url = gc_xstrdup(c->url);
	gc_driver_wire_add_all(out, &headers);
	gc_driver_wire_add_all(out, &sig.added_headers);
	out->body = c->body;
	out->body_len = c->body_len;
	gc_sign_result_release(&sig);
	gc_params_release(&headers);
	return 0;
}

/* The answer's Response object, or its Error: Tencent answers errors with HTTP 200, so
 * the body, not the status, decides. */
static int tc_answer(struct gc_provider *p, const struct gc_driver_request *req,
		     const struct gc_http_response *res, int64_t *retry_after_ms,
		     struct gc_error *err)
{
	const struct tc_req *c = req->ctx;
	json_t *doc, *resp, *e;
	const char *rid, *msg;
	int ret = -1;

	(void)retry_after_ms;
	if (res->status != 200) /* a gateway or transport answer: the status is all there is */
		return gc_driver_fail(p, req, res->status, NULL, NULL, NULL, err);
	doc = json_loadb(res->body.data, res->body.len, 0, NULL);
	resp = json_object_get(doc, "Response");
	if (!json_is_object(resp)) {
		gc_error_set(err, GC_EBADRESPONSE,
			     "%s: the answer from '%s' is not a Response document", req->action,
			     c->host);
		gc_error_set_cloud(err, NULL, NULL, res->status);
		goto out;
	}
	rid = gc_jstr(resp, "RequestId");
	e = json_object_get(resp, "Error");
	if (e) {
		msg = gc_jstr(e, "Message");
		gc_driver_fail(p, req, res->status, gc_jstr(e, "Code"), msg ? msg : "", rid, err);
		goto out;
	}
	/* every answer of the API carries its RequestId: one without is not the cloud's (an
	 * empty envelope, a proxy's page), never an empty result; retried by the pipeline */
	if (!rid || !*rid) {
		gc_error_set(err, GC_EBADRESPONSE,
			     "%s: the answer from '%s' has no RequestId: not an answer of the "
			     "API",
			     req->action, c->host);
		gc_error_set_cloud(err, NULL, NULL, res->status);
		goto out;
	}
	*c->out = json_incref(resp);
	ret = 0;
out:
	json_decref(doc);
	return ret;
}

/* ---- credentials ---------------------------------------------------------------------------- */

static int creds_resolve(struct gc_provider *p, void *creds, struct gc_error *err)
{
	struct tc_driver *d = tc_driver(p);
	struct tc_creds_input in;

	memset(&in, 0, sizeof(in));
	in.profile = d->base.profile;
	in.env = p->env;
	in.http = d->base.http;
	in.log = p->log;
	in.clock = p->clock;
	in.region = p->region;
	in.endpoint = d->base.endpoint;
	in.oidc = &d->base.oidc;
	return tc_creds_resolve(creds, &in, err);
}

const struct gc_driver_hooks tc_hooks = {
	.title = "Tencent Cloud",
	.size = sizeof(struct tc_driver),
	.open = tc_driver_open,
	.close = tc_driver_close,
	.max_response = TC_MAX_RESPONSE,
	.max_attempts = TC_MAX_ATTEMPTS,
	.codes = tc_codes,
	.clock_codes = tc_clock_codes,
	.bucket = tc_bucket,
	.sign = tc_sign_hook,
	.answer = tc_answer,
	.creds_at = offsetof(struct tc_driver, creds),
	.resolve_creds = creds_resolve,
};

/* ---- the call ------------------------------------------------------------------------------ */

int tc_call(struct gc_provider *p, enum tc_service svc, const char *action, json_t *params,
	    bool unsafe, json_t **out, struct gc_error *err)
{
	struct tc_driver *d = tc_driver(p);
	struct tc_req c;
	struct gc_driver_request req;
	char *body;
	int ret;

	*out = NULL;
	/* the body may hold a host's private key (a launch's user-data): wiped when freed */
	body = params ? json_dumps(params, JSON_COMPACT) : gc_xstrdup("{}");
	if (!body)
		return gc_error_set(err, GC_EINVALID, "%s: cannot write the request body", action);
	if (strlen(body) > TC_MAX_REQUEST) {
		gc_wipe_free(body);
		return gc_error_set(err, GC_ETOOBIG, "%s: the request is over %zu bytes", action,
				    (size_t)TC_MAX_REQUEST);
	}
	memset(&c, 0, sizeof(c));
	c.svc = svc;
	c.url = svc == TC_VPC ? d->vpc_url : svc == TC_TAG ? d->tag_url : d->cvm_url;
	c.host = svc == TC_VPC ? d->vpc_host : svc == TC_TAG ? d->tag_host : d->cvm_host;
	c.body = body;
	c.body_len = strlen(body);
	c.out = out;
	memset(&req, 0, sizeof(req));
	req.action = action;
	req.host = c.host;
	req.unsafe = unsafe;
	req.ctx = &c;
	ret = gc_driver_send(p, &req, NULL, err);
	gc_wipe_free(body);
	return ret;
}
