/*
 * ec2.c: the AWS driver's hooks for core/driver.h's request pipeline, and its tables: the
 * token buckets at EC2's documented rates, SigV4, the error answers (EC2's XML and the
 * Price List API's JSON) and their codes (WIRE.md 1.5), and the clock complaints
 * (docs/internals/providers.md, "One request"). Retries, waits and counting are the
 * pipeline's.
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/alloc.h"
#include "core/str.h"
#include "providers/aws/ec2.h"
#include "providers/aws/sigv4.h"

#define AWS_FORM_TYPE "application/x-www-form-urlencoded" /* as the SDK sends it */

/* ---- classification ----------------------------------------------------------------- */

static const struct gc_driver_code aws_codes[] = {
	GC_CODES(GC_MATCH_EXACT, GC_ETHROTTLED, "RequestLimitExceeded", "Throttling",
		 "ThrottlingException", "RequestThrottled", "RequestThrottledException"),
	GC_CODES(GC_MATCH_EXACT, GC_ECAPACITY, "InsufficientInstanceCapacity",
		 "InsufficientCapacity", "InsufficientHostCapacity",
		 "InsufficientReservedInstanceCapacity", "UnfulfillableCapacity",
		 "SpotMaxPriceTooLow"),
	/* the type cannot launch there: not in the zone, not in a cluster placement group
	 * (fabric.md, "Type not supported here"); the engine falls back */
	GC_CODES(GC_MATCH_EXACT, GC_ENOTHERE, "Unsupported"),
	/* quotas are per market: the spot one apart from the on-demand ones (EC2 user guide,
	 * "Spot Instance quotas", "On-Demand Instance quotas") */
	GC_CODES(GC_MATCH_EXACT, GC_ESPOTQUOTA, "MaxSpotInstanceCountExceeded"),
	GC_CODES(GC_MATCH_EXACT, GC_EQUOTA, "VcpuLimitExceeded", "InstanceLimitExceeded"),
	/* ResourceLimitExceeded, SecurityGroupLimitExceeded, KeyPairLimitExceeded... */
	GC_CODES(GC_MATCH_SUFFIX, GC_EQUOTA, "LimitExceeded"),
	GC_CODES(GC_MATCH_EXACT, GC_EAUTH, "AuthFailure", "SignatureDoesNotMatch",
		 "InvalidClientTokenId", "UnauthorizedOperation", "OptInRequired", "RequestExpired",
		 "IncompleteSignature", "MissingAuthenticationToken", "InvalidSignatureException",
		 "UnrecognizedClientException", "AccessDeniedException",
		 "IncompleteSignatureException", "MissingAuthenticationTokenException",
		 "ExpiredTokenException", "Blocked"),
	GC_CODES(GC_MATCH_EXACT, GC_EIDEMPOTENCY, "IdempotentParameterMismatch"),
	/* no default VPC, and the request names none (ec2-ops.c says what to set) */
	GC_CODES(GC_MATCH_EXACT, GC_EINVALID, "VPCIdNotSpecified"),
	GC_CODES(GC_MATCH_SUFFIX, GC_ENOTFOUND, ".NotFound"),
	GC_CODES(GC_MATCH_EXACT, GC_ENOTFOUND, "NotFoundException", "NoSuchResourceException"),
	GC_CODES(GC_MATCH_EXACT, GC_ETRANSIENT, "InternalError", "InternalFailure",
		 "ServiceUnavailable", "Unavailable", "InternalErrorException",
		 "ServiceUnavailableException"),
	{ 0 },
};

/* Our timestamp is off AWS's by more than five minutes (EC2, S3 and the JSON services'
 * words for it): signed again once with a fresh time. */
static const char *const aws_clock_codes[] = { "RequestExpired", "RequestTimeTooSkewed",
					       "RequestInTheFuture", NULL };

/* ---- rate limiting ------------------------------------------------------------------ */

/*
 * The request bucket of an action, at the devguide's figures. Describe* and the other
 * read-only prefixes are "non-mutating" (100, 20/s; we always filter or page, so never
 * the smaller unfiltered bucket); RunInstances (5, 2/s) and TerminateInstances (100,
 * 5/s) have their own; everything else is "mutating" or "resource-intensive", both 50,
 * 5/s. GetProducts (pricing) has no published figure and gets the non-mutating one.
 */
static void aws_bucket(const char *action, uint64_t *cap, uint64_t *per_s, uint64_t *interval_ms)
{
	*interval_ms = 1000;
	if (gc_starts_with(action, "Describe") || gc_starts_with(action, "Get") ||
	    gc_starts_with(action, "List") || gc_starts_with(action, "Search")) {
		*cap = 100;
		*per_s = 20;
	} else if (strcmp(action, "RunInstances") == 0) {
		*cap = 5;
		*per_s = 2;
	} else if (strcmp(action, "TerminateInstances") == 0) {
		*cap = 100;
		*per_s = 5;
	} else {
		*cap = 50;
		*per_s = 5;
	}
}

/* ---- signing and answers ------------------------------------------------------------- */

static int aws_sign(struct gc_provider *p, const struct gc_driver_request *req,
		    struct gc_driver_wire *out, struct gc_error *err)
{
	struct aws_driver *d = aws_driver(p);
	const struct aws_call *c = req->ctx;
	struct gc_params headers = GC_PARAMS_INIT;
	struct gc_sign_request sr = { .method = "POST",
				      .host = c->host,
				      .path = "/",
				      .headers = &headers,
				      .body = c->body,
				      .body_len = c->body_len };
	struct gc_sign_result sig;
	char ts[AWS_SIGV4_TIMESTAMP_LEN + 1];
	struct aws_sigv4_input in = { .access_key_id = d->creds.access_key_id,
				      .secret_access_key = d->creds.secret_access_key,
				      .session_token = d->creds.session_token,
				      .timestamp = ts,
				      .region = c->region,
				      .service = c->service };

	gc_params_add(&headers, "Host", c->host);
	gc_params_add(&headers, "Content-Type", c->content_type);
	if (c->target)
		gc_params_add(&headers, "X-Amz-Target", c->target);
	aws_sigv4_format_time(time(NULL), ts);
	if (aws_sigv4_sign(&sig, &sr, &in, err) != 0) {
		gc_params_release(&headers);
		return gc_error_prefix(err, "cannot sign %s", c->action);
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

/* A 2xx is a success; otherwise the cloud's error, from the body the protocol has. */
static int aws_answer(struct gc_provider *p, const struct gc_driver_request *req,
		      const struct gc_http_response *res, int64_t *retry_after_ms,
		      struct gc_error *err)
{
	const struct aws_call *c = req->ctx;
	char code[128], msg[512], rid[128] = "";
	int parsed;

	(void)retry_after_ms;
	if (res->status >= 200 && res->status <= 299) {
		bool ok = c->proto == AWS_PROTO_QUERY
			? aws_xml_is_answer(res->body.data, res->body.len, req->action)
			: res->body.len && res->body.data[0] == '{';

		if (ok)
			return 0;
		return gc_error_set(err, GC_EBADRESPONSE,
				    "%s: the answer from '%s' is not a %s answer (HTTP %d, %zu "
				    "bytes: an HTML page, another document, an empty envelope?)",
				    req->action, req->host, req->action, res->status,
				    res->body.len);
	}
	if (c->proto == AWS_PROTO_QUERY)
		parsed = aws_xml_error(res->body.data, res->body.len, code, msg, rid);
	else
		parsed = aws_json_error(res->body.data, res->body.len, code, msg);
	if (c->proto == AWS_PROTO_JSON || !rid[0]) {
		const char *h = gc_http_response_header(res, "x-amzn-requestid");

		if (!h)
			h = gc_http_response_header(res, "x-amz-request-id");
		snprintf(rid, sizeof(rid), "%s", h ? h : "");
	}
	if (parsed != 0)
		return gc_driver_fail(p, req, res->status, NULL, NULL, rid, err);
	return gc_driver_fail(p, req, res->status, code, msg, rid, err);
}

/* ---- credentials ----------------------------------------------------------------------- */

void aws_creds_input(struct gc_provider *p, struct aws_creds_input *in)
{
	struct aws_driver *d = aws_driver(p);

	memset(in, 0, sizeof(*in));
	in->profile = d->base.profile;
	in->region = p->region;
	in->endpoint = d->base.endpoint;
	in->env = p->env;
	in->http = d->base.http;
	in->log = p->log;
	in->now = (int64_t)time(NULL);
	in->oidc = &d->base.oidc;
}

static int creds_resolve(struct gc_provider *p, void *creds, struct gc_error *err)
{
	struct aws_creds_input in;

	aws_creds_input(p, &in);
	return aws_creds_resolve(creds, &aws_driver(p)->cfg, &in, err);
}

const struct gc_driver_hooks aws_hooks = {
	.title = "AWS",
	.size = sizeof(struct aws_driver),
	.open = aws_driver_open,
	.close = aws_driver_close,
	.max_response = AWS_MAX_RESPONSE,
	.max_attempts = AWS_MAX_ATTEMPTS,
	.codes = aws_codes,
	.clock_codes = aws_clock_codes,
	.bucket = aws_bucket,
	.sign = aws_sign,
	.answer = aws_answer,
	.creds_at = offsetof(struct aws_driver, creds),
	.resolve_creds = creds_resolve,
};

/* ---- the calls ---------------------------------------------------------------------------- */

int aws_send(struct gc_provider *p, const struct aws_call *c, struct gc_buf *out,
	     struct gc_error *err)
{
	struct aws_driver *d = aws_driver(p);
	struct gc_driver_request req = {
		.action = c->action,
		.host = c->host,
		.resource_tokens = c->resource_tokens,
		.unsafe = c->unsafe,
		.ctx = c,
	};

	if (strcmp(c->action, "RunInstances") == 0)
		req.resource = &d->run_resource;
	else if (strcmp(c->action, "TerminateInstances") == 0)
		req.resource = &d->terminate_resource;
	return gc_driver_send(p, &req, out, err);
}

int aws_ec2_call(struct gc_provider *p, const char *action, const struct gc_params *params,
		 unsigned resource_tokens, bool unsafe, struct gc_buf *out, struct gc_error *err)
{
	struct aws_driver *d = aws_driver(p);
	struct gc_params all = GC_PARAMS_INIT;
	struct gc_buf body = GC_BUF_INIT(1 << 20); /* EC2 refuses larger requests anyway */
	struct aws_call c;
	int ret;

	gc_params_add(&all, "Action", action);
	gc_params_add(&all, "Version", AWS_EC2_VERSION);
	if (params)
		gc_params_add_all(&all, params);
	if (gc_params_encode(&body, &all) != 0) {
		gc_params_release(&all);
		gc_buf_init(out, AWS_MAX_RESPONSE);
		return gc_error_set(err, GC_ETOOBIG, "%s: the request is over 1 MiB", action);
	}
	gc_params_release(&all);
	memset(&c, 0, sizeof(c));
	c.proto = AWS_PROTO_QUERY;
	c.service = "ec2";
	c.region = d->cfg.region;
	c.url = d->cfg.ec2_endpoint;
	c.host = d->ec2_host;
	c.action = action;
	c.content_type = AWS_FORM_TYPE;
	c.body = body.data;
	c.body_len = body.len;
	c.resource_tokens = resource_tokens;
	c.unsafe = unsafe;
	ret = aws_send(p, &c, out, err);
	gc_buf_release(&body);
	return ret;
}
