/*
 * ecs.c: the Alibaba driver's hooks for core/driver.h's request pipeline: ACS3-signed
 * requests sent as the official SDK sends them, the error answers and their code table,
 * the clock complaints, our token buckets' figures (docs/internals/alibaba.md, "One
 * request", has the why of each; retries, waits and counting are the pipeline's).
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "core/alloc.h"
#include "core/hash.h"
#include "core/str.h"
#include "providers/alibaba/ecs.h"
#include "providers/alibaba/sign.h"

#define ALI_API_PER_MINUTE	300  /* see above: 600 in any minute at most */
#define ALI_PROCESSING_RETRY_MS 1000 /* IdempotentProcessing: the first call is still running */
#define ALI_RETRY_AFTER_HEADER	"x-acs-retry-after"
#define ALI_REQUEST_ID_HEADER	"x-acs-request-id"

/* ---- small helpers ------------------------------------------------------------------------ */

char *ali_url_host(const char *url)
{
	bool tls = gc_starts_with(url, "https://");
	const char *h, *dflt = tls ? ":443" : ":80";
	size_t n, dl = strlen(dflt);

	if (!tls && !gc_starts_with(url, "http://"))
		return NULL;
	h = url + (tls ? 8 : 7);
	n = strcspn(h, "/?#");
	if (n == 0)
		return NULL;
	if (n > dl && memcmp(h + n - dl, dflt, dl) == 0)
		n -= dl;
	return gc_xstrndup(h, n);
}

static bool two_digits(const char *s, int *out)
{
	if (s[0] < '0' || s[0] > '9' || s[1] < '0' || s[1] > '9')
		return false;
	*out = (s[0] - '0') * 10 + (s[1] - '0');
	return true;
}

int ali_parse_time(const char *s, int64_t *out)
{
	int y1, y2, mo, d, h, mi, se = 0;
	const char *p;

	if (!s || strlen(s) < 17 || !two_digits(s, &y1) || !two_digits(s + 2, &y2) || s[4] != '-' ||
	    !two_digits(s + 5, &mo) || s[7] != '-' || !two_digits(s + 8, &d) || s[10] != 'T' ||
	    !two_digits(s + 11, &h) || s[13] != ':' || !two_digits(s + 14, &mi))
		return -1;
	p = s + 16;
	if (*p == ':') { /* seconds, and maybe a fraction */
		if (!two_digits(p + 1, &se))
			return -1;
		p += 3;
		if (*p == '.') {
			p++;
			if (*p < '0' || *p > '9')
				return -1;
			while (*p >= '0' && *p <= '9')
				p++;
		}
	}
	if (strcmp(p, "Z") != 0 || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 ||
	    se > 60)
		return -1;
	*out = gc_days_from_civil(y1 * 100 + y2, (unsigned)mo, (unsigned)d) * 86400;
	*out += h * 3600 + mi * 60 + se;
	return 0;
}

/* ---- the wire ------------------------------------------------------------------------------ */

int ali_wire_build(struct gc_driver_wire *out, const struct ali_wire_input *in,
		   struct gc_error *err)
{
	struct gc_params headers = GC_PARAMS_INIT;
	struct gc_buf query = GC_BUF_INIT(1 << 20); /* ECS refuses longer URLs anyway */
	struct gc_sign_result sig;
	unsigned char rnd[16];
	char nonce[33], ts[ALI_TIMESTAMP_LEN + 1];
	char *host = ali_url_host(in->base_url);
	struct gc_sign_request sr = { .method = "POST",
				      .host = host,
				      .path = "/",
				      .query = in->params,
				      .headers = &headers };
	struct ali_acs3_input ai = { .access_key_id = in->access_key_id,
				     .access_key_secret = in->access_key_secret,
				     .security_token = in->security_token,
				     .timestamp = ts,
				     .nonce = nonce };
	int ret = -1;

	memset(out, 0, sizeof(*out));
	if (!host) {
		gc_error_set(err, GC_EINVALID, "endpoint '%s' is not an http(s) URL", in->base_url);
		goto out;
	}
	if (gc_random_bytes(rnd, sizeof(rnd)) != 0) {
		gc_error_set(err, GC_EGENERIC, "%s: no random bytes for the signature nonce",
			     in->action);
		goto out;
	}
	gc_hex(rnd, sizeof(rnd), nonce);
	ali_format_time(in->now, ts);
	if (in->params && gc_params_encode_sorted(&query, in->params) != 0) {
		gc_error_set(err, GC_ETOOBIG, "%s: the request is over 1 MiB", in->action);
		goto out;
	}
	gc_params_add(&headers, "Host", host);
	gc_params_add(&headers, "x-acs-action", in->action);
	gc_params_add(&headers, "x-acs-version", in->version);
	if (ali_acs3_sign(&sig, &sr, &ai, err) != 0) {
		gc_error_prefix(err, "cannot sign %s", in->action);
		goto out;
	}
	out->url = gc_xasprintf("%s/%s%s", in->base_url, query.len ? "?" : "", query.data);
	gc_driver_wire_add_all(out, &headers);
	gc_driver_wire_add_all(out, &sig.added_headers);
	gc_sign_result_release(&sig);
	gc_driver_wire_add(out, "Accept", "application/json");
	/* no body, so no Content-Type: curl would add an unsigned form one */
	out->headers = gc_xreallocarray(out->headers, out->n_headers + 1, sizeof(*out->headers));
	out->headers[out->n_headers++] = gc_xstrdup("Content-Type:");
	ret = 0;
out:
	free(host);
	gc_params_release(&headers);
	gc_buf_release(&query);
	return ret;
}

/* ---- errors --------------------------------------------------------------------------------- */

int ali_json_error(const char *body, size_t len, char code[128], char message[512],
		   char request_id[128])
{
	json_t *j = json_loadb(body, len, 0, NULL);
	const char *v;
	int ret = -1;

	code[0] = message[0] = request_id[0] = '\0';
	if (json_is_object(j) && (v = gc_jstr(j, "Code")) && *v) {
		snprintf(code, 128, "%s", v);
		snprintf(message, 512, "%s", (v = gc_jstr(j, "Message")) ? v : "");
		snprintf(request_id, 128, "%s", (v = gc_jstr(j, "RequestId")) ? v : "");
		ret = 0;
	}
	json_decref(j);
	return ret;
}

/* A clock complaint: signed again with a fresh time, once; twice means the clock is off. */
static const char *const ali_clock_codes[] = { "InvalidTimeStamp.Expired", "IllegalTimestamp",
					       NULL };

/* The first call with this client token is still being processed: ask again later. */
static bool processing_code(const char *code)
{
	return code &&
		(strcmp(code, "IdempotentProcessing") == 0 ||
		 strcmp(code, "LastTokenProcessing") == 0);
}

static const struct gc_driver_code ali_codes[] = {
	/* as the SDK decides ThrottlingError */
	GC_CODES(GC_MATCH_CONTAINS, GC_ETHROTTLED, "Throttling"),
	GC_CODES(GC_MATCH_EXACT, GC_ECAPACITY, "OperationDenied.NoStock", "Zone.NotOnSale",
		 "Zone.NotOpen", "InstanceType.Offline",
		 "InvalidSpotPriceLimit.LowerThanPublicPrice",
		 "OperationDenied.SpotPriceLowerThanPublicPrice", "ResourceNotAvailable",
		 /* a full deployment set: no room in the group's placement (fabric.md) */
		 "DeploymentSet.InstanceLimitExceeded"),
	/* the type cannot launch there (fabric.md, "Type not supported here") */
	GC_CODES(GC_MATCH_EXACT, GC_ENOTHERE, "InvalidResourceType.NotSupported",
		 "InvalidInstanceType.ZoneNotSupported"),
	GC_CODES(GC_MATCH_PREFIX, GC_EQUOTA, "QuotaExceed"),
	GC_CODES(GC_MATCH_EXACT, GC_EQUOTA, "InvalidTagCount"),
	/* "Forbbiden", sic: ECS's own spelling in some answers; the account that cannot
	 * buy (InsufficientBalance...) is auth too: nothing else will work either */
	GC_CODES(GC_MATCH_EXACT, GC_EAUTH, "SignatureDoesNotMatch", "IncompleteSignature",
		 "InvalidAccessKeyId.NotFound", "InvalidAccessKeyId.Inactive", "InvalidAccessKeyId",
		 "Forbidden.RAM", "Forbidden.Unauthorized", "Forbidden", "Forbbiden",
		 "NoPermission", "MissingSecurityToken", "InvalidSecurityToken.Expired",
		 "InvalidSecurityToken.Malformed", "InvalidSecurityToken.MismatchWithAccessKey",
		 "InvalidTimeStamp.Expired", "IllegalTimestamp", "InsufficientBalance",
		 "Account.Arrearage", "RealNameAuthenticationError", "PaymentMethodNotFound"),
	GC_CODES(GC_MATCH_PREFIX, GC_EAUTH, "Forbidden."),
	GC_CODES(GC_MATCH_EXACT, GC_EIDEMPOTENCY, "IdempotentParameterMismatch"),
	GC_CODES(GC_MATCH_EXACT, GC_ETRANSIENT, "IdempotentProcessing", "LastTokenProcessing"),
	GC_CODES(GC_MATCH_SUFFIX, GC_ENOTFOUND, ".NotFound"),
	/* SignatureNonceUsed: an earlier attempt of ours reached the server (libcurl resends
	 * a request whose reused connection died before the answer, nonce and all); every
	 * attempt is signed afresh, so it is a retry like any lost answer */
	GC_CODES(GC_MATCH_EXACT, GC_ETRANSIENT, "InternalError", "ServiceUnavailable",
		 "UnknownError", "SignatureNonceUsed"),
	{ 0 },
};

enum gc_errcode ali_classify(const char *code, int status)
{
	return gc_driver_classify(ali_codes, code, status);
}

/* ---- rate limiting ---------------------------------------------------------------------------- */

/* One bucket per API ("ecs:RunInstances"): see the top of this file. */
static void ali_bucket(const char *api, uint64_t *cap, uint64_t *refill, uint64_t *interval_ms)
{
	(void)api;
	*cap = ALI_API_PER_MINUTE;
	*refill = ALI_API_PER_MINUTE;
	*interval_ms = 60000;
}

/* ---- signing and answers ------------------------------------------------------------------------ */

enum ali_product {
	ALI_ECS,
	ALI_VPC,
};

struct ali_call {
	enum ali_product product;
	const char *action;
	const struct gc_params *params; /* RegionId is added in front, where it belongs */
	unsigned launch_tokens;		/* RunInstances: instances */
	bool unsafe; /* a launch without a client token (gc_driver_request.unsafe) */
};

/* What the pipeline carries for one call: the product and the parameters, RegionId in. */
struct ali_req {
	const struct ali_call *call;
	const struct gc_params *params;
};

static int ali_sign(struct gc_provider *p, const struct gc_driver_request *req,
		    struct gc_driver_wire *out, struct gc_error *err)
{
	struct ali_driver *d = ali_driver(p);
	const struct ali_req *r = req->ctx;
	struct ali_wire_input wi;

	memset(&wi, 0, sizeof(wi));
	wi.base_url = r->call->product == ALI_VPC ? d->vpc_url : d->ecs_url;
	wi.action = req->action;
	wi.version = r->call->product == ALI_VPC ? ALI_VPC_VERSION : ALI_ECS_VERSION;
	wi.params = r->params;
	wi.access_key_id = d->creds.access_key_id;
	wi.access_key_secret = d->creds.access_key_secret;
	wi.security_token = d->creds.security_token;
	wi.now = time(NULL);
	return ali_wire_build(out, &wi, err);
}

/* Whether a 2xx body is an answer of the cloud's at all: a JSON object with a RequestId
 * (every ECS and VPC answer has one). An HTML page, "{}" or a cut document is not, and is
 * refused here, inside the pipeline, so that it is retried like a lost answer. */
static int envelope_ok(const struct gc_driver_request *req, const struct gc_http_response *res,
		       struct gc_error *err)
{
	json_t *j = json_loadb(res->body.data ? res->body.data : "", res->body.len, 0, NULL);
	const char *rid = json_is_object(j) ? gc_jstr(j, "RequestId") : NULL;
	int ret = 0;

	if (!json_is_object(j))
		ret = gc_error_set(err, GC_EBADRESPONSE,
				   "%s: a %d answer that is not a JSON object", req->action,
				   res->status);
	else if (!rid || !*rid)
		ret = gc_error_set(err, GC_EBADRESPONSE, "%s: a %d answer without a RequestId",
				   req->action, res->status);
	json_decref(j);
	return ret;
}

/* A 2xx is a success when it is an answer at all; otherwise the JSON error, and the
 * server's hint for a retry. */
static int ali_answer(struct gc_provider *p, const struct gc_driver_request *req,
		      const struct gc_http_response *res, int64_t *retry_after_ms,
		      struct gc_error *err)
{
	char code[128], msg[512], rid[128];
	const char *v;
	uint64_t ms;

	if (res->status >= 200 && res->status <= 299)
		return envelope_ok(req, res, err);
	if ((v = gc_http_response_header(res, ALI_RETRY_AFTER_HEADER)) &&
	    gc_parse_u64(v, 24 * 3600 * 1000ull, &ms) == 0)
		*retry_after_ms = (int64_t)ms;
	if (ali_json_error(res->body.data, res->body.len, code, msg, rid) != 0)
		return gc_driver_fail(p, req, res->status, NULL, NULL,
				      gc_http_response_header(res, ALI_REQUEST_ID_HEADER), err);
	if (!rid[0] && (v = gc_http_response_header(res, ALI_REQUEST_ID_HEADER)))
		snprintf(rid, sizeof(rid), "%s", v);
	if (processing_code(code) && *retry_after_ms < ALI_PROCESSING_RETRY_MS)
		*retry_after_ms = ALI_PROCESSING_RETRY_MS;
	return gc_driver_fail(p, req, res->status, code, msg, rid, err);
}

/* ---- credentials ------------------------------------------------------------------------------- */

static int creds_resolve(struct gc_provider *p, void *creds, struct gc_error *err)
{
	struct ali_driver *d = ali_driver(p);
	struct ali_creds_input in;

	memset(&in, 0, sizeof(in));
	in.profile = d->base.profile;
	in.region = p->region;
	in.endpoint = d->base.endpoint;
	in.env = p->env;
	in.http = d->base.http;
	in.log = p->log;
	in.now = (int64_t)time(NULL);
	in.clock = p->clock;
	in.oidc = &d->base.oidc;
	return ali_creds_resolve(creds, &in, err);
}

const struct gc_driver_hooks ali_hooks = {
	.title = "Alibaba Cloud",
	.size = sizeof(struct ali_driver),
	.open = ali_driver_open,
	.close = ali_driver_close,
	.max_response = ALI_MAX_RESPONSE,
	.max_attempts = ALI_MAX_ATTEMPTS,
	.codes = ali_codes,
	.clock_codes = ali_clock_codes,
	.bucket = ali_bucket,
	.sign = ali_sign,
	.answer = ali_answer,
	.creds_at = offsetof(struct ali_driver, creds),
	.resolve_creds = creds_resolve,
};

/* ---- the calls ------------------------------------------------------------------------------------ */

static int ali_send(struct gc_provider *p, const struct ali_call *c, struct gc_buf *out,
		    struct gc_error *err)
{
	struct ali_driver *d = ali_driver(p);
	struct gc_params params = GC_PARAMS_INIT;
	struct ali_req r = { c, &params };
	char api[80];
	struct gc_driver_request req = {
		.action = c->action,
		.bucket = api,
		.host = c->product == ALI_VPC ? d->vpc_host : d->ecs_host,
		.resource = c->launch_tokens ? &d->launch_bucket : NULL,
		.resource_tokens = c->launch_tokens,
		.unsafe = c->unsafe,
		.ctx = &r,
	};
	int ret;

	snprintf(api, sizeof(api), "%s:%s", c->product == ALI_VPC ? "vpc" : "ecs", c->action);
	/* the two catalogue actions that are not per region take no RegionId (their SDK
	 * models have none) */
	if (strcmp(c->action, "DescribeRegions") != 0 &&
	    strcmp(c->action, "DescribeInstanceTypes") != 0)
		gc_params_add(&params, "RegionId", p->region);
	if (c->params)
		gc_params_add_all(&params, c->params);
	ret = gc_driver_send(p, &req, out, err);
	gc_params_release(&params);
	return ret;
}

int ali_ecs_call(struct gc_provider *p, const char *action, const struct gc_params *params,
		 unsigned launch_tokens, bool unsafe, struct gc_buf *out, struct gc_error *err)
{
	struct ali_call c = { ALI_ECS, action, params, launch_tokens, unsafe };

	return ali_send(p, &c, out, err);
}

int ali_vpc_call(struct gc_provider *p, const char *action, const struct gc_params *params,
		 struct gc_buf *out, struct gc_error *err)
{
	struct ali_call c = { ALI_VPC, action, params, 0, false };

	return ali_send(p, &c, out, err);
}
