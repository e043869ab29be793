/*
 * ecs.c: the Alibaba driver's one road to the cloud: ACS3-signed requests, error
 * classification, our own token buckets and retries (ecs.h has the flow).
 *
 * Requests are sent the way the official SDK (@alicloud/openapi-core, WIRE.md 2.1-2.3)
 * sends them: POST / with every parameter in the query string and no body, the action and
 * version in x-acs-action / x-acs-version, signed with ACS3-HMAC-SHA256 over host and
 * every x-acs-* header. curl's default form Content-Type is suppressed, so nothing unsigned
 * describes the (empty) body.
 *
 * Rate limits: Alibaba publishes no per-API figures (each account sees its own in Quota
 * Center) and counts calls in one-minute windows: throttled in minute T, allowed again in
 * T+1 (WIRE.md 2.8). A token bucket of capacity C refilling C a minute lets at most 2C
 * through in any 60 s, so C = 300 keeps each API under 600 a minute; launches are also
 * counted in instances against Alibaba's documented 5000 a minute the same way (2500 +
 * 2500 a minute). Throttling that still happens is retried, waiting at least the
 * x-acs-retry-after the answer carries.
 */
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

static bool in_list(const char *code, const char *const *list)
{
	for (; *list; list++)
		if (strcmp(code, *list) == 0)
			return true;
	return false;
}

/* ---- the wire ------------------------------------------------------------------------------ */

void ali_wire_release(struct ali_wire *w)
{
	if (!w)
		return;
	free(w->url);
	for (size_t i = 0; i < w->n_headers; i++) {
		/* header lines carry the security token */
		for (volatile char *s = w->headers[i]; *s; s++)
			*s = '\0';
		free(w->headers[i]);
	}
	free(w->headers);
	memset(w, 0, sizeof(*w));
}

static void wire_add(struct ali_wire *w, const char *name, const char *value)
{
	w->headers = gc_xreallocarray(w->headers, w->n_headers + 1, sizeof(*w->headers));
	w->headers[w->n_headers++] = gc_xasprintf("%s: %s", name, value);
}

int ali_wire_build(struct ali_wire *out, const struct ali_wire_input *in, struct gc_error *err)
{
	struct gc_params headers = GC_PARAMS_INIT;
	struct gc_buf query = GC_BUF_INIT(1 << 20); /* ECS refuses longer URLs anyway */
	struct gc_sign_request sr;
	struct gc_sign_result sig;
	struct ali_acs3_input ai;
	struct ali_wire w = { NULL, NULL, 0 };
	unsigned char rnd[16];
	char nonce[33], ts[ALI_TIMESTAMP_LEN + 1];
	char *host = ali_url_host(in->base_url);
	int ret = -1;

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
	memset(&sr, 0, sizeof(sr));
	sr.method = "POST";
	sr.host = host;
	sr.path = "/";
	sr.query = in->params;
	sr.headers = &headers;
	memset(&ai, 0, sizeof(ai));
	ai.access_key_id = in->access_key_id;
	ai.access_key_secret = in->access_key_secret;
	ai.security_token = in->security_token;
	ai.timestamp = ts;
	ai.nonce = nonce;
	if (ali_acs3_sign(&sig, &sr, &ai, err) != 0) {
		gc_error_prefix(err, "cannot sign %s", in->action);
		goto out;
	}
	w.url = gc_xasprintf("%s/%s%s", in->base_url, query.len ? "?" : "", query.data);
	for (size_t i = 0; i < headers.n; i++)
		wire_add(&w, headers.items[i].name, headers.items[i].value);
	for (size_t i = 0; i < sig.added_headers.n; i++)
		wire_add(&w, sig.added_headers.items[i].name, sig.added_headers.items[i].value);
	gc_sign_result_release(&sig);
	wire_add(&w, "Accept", "application/json");
	/* no body, so no Content-Type: curl would add an unsigned form one */
	w.headers = gc_xreallocarray(w.headers, w.n_headers + 1, sizeof(*w.headers));
	w.headers[w.n_headers++] = gc_xstrdup("Content-Type:");
	*out = w;
	ret = 0;
out:
	free(host);
	gc_params_release(&headers);
	gc_buf_release(&query);
	return ret;
}

/* ---- errors --------------------------------------------------------------------------------- */

static const char *jstr(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);

	return json_is_string(v) ? json_string_value(v) : NULL;
}

int ali_json_error(const char *body, size_t len, char code[128], char message[512],
		   char request_id[128])
{
	json_t *j = json_loadb(body, len, 0, NULL);
	const char *v;
	int ret = -1;

	code[0] = message[0] = request_id[0] = '\0';
	if (json_is_object(j) && (v = jstr(j, "Code")) && *v) {
		snprintf(code, 128, "%s", v);
		snprintf(message, 512, "%s", (v = jstr(j, "Message")) ? v : "");
		snprintf(request_id, 128, "%s", (v = jstr(j, "RequestId")) ? v : "");
		ret = 0;
	}
	json_decref(j);
	return ret;
}

/* A clock complaint: signed again with a fresh time, once; twice means the clock is off. */
static bool clock_code(const char *code)
{
	static const char *const list[] = { "InvalidTimeStamp.Expired", "IllegalTimestamp", NULL };

	return code && in_list(code, list);
}

/* The first call with this client token is still being processed: ask again later. */
static bool processing_code(const char *code)
{
	return code &&
		(strcmp(code, "IdempotentProcessing") == 0 ||
		 strcmp(code, "LastTokenProcessing") == 0);
}

enum gc_errcode ali_classify(const char *code, int status)
{
	static const char *const capacity[] = {
		"OperationDenied.NoStock",
		"Zone.NotOnSale",
		"Zone.NotOpen",
		"InvalidResourceType.NotSupported",
		"InstanceType.Offline",
		"InvalidInstanceType.ZoneNotSupported",
		"InvalidSpotPriceLimit.LowerThanPublicPrice",
		"OperationDenied.SpotPriceLowerThanPublicPrice",
		"ResourceNotAvailable",
		NULL,
	};
	static const char *const auth[] = {
		"SignatureDoesNotMatch",
		"IncompleteSignature",
		"InvalidAccessKeyId.NotFound",
		"InvalidAccessKeyId.Inactive",
		"InvalidAccessKeyId",
		"Forbidden.RAM",
		"Forbidden.Unauthorized",
		"Forbidden",
		"Forbbiden", /* sic: ECS's own spelling in some answers */
		"NoPermission",
		"MissingSecurityToken",
		"InvalidSecurityToken.Expired",
		"InvalidSecurityToken.Malformed",
		"InvalidSecurityToken.MismatchWithAccessKey",
		"InvalidTimeStamp.Expired",
		"IllegalTimestamp",
		/* the account itself cannot buy: nothing else will work either */
		"InsufficientBalance",
		"Account.Arrearage",
		"RealNameAuthenticationError",
		"PaymentMethodNotFound",
		NULL,
	};
	/* SignatureNonceUsed: an earlier attempt of ours reached the server (libcurl resends
	 * a request whose reused connection died before the answer, nonce and all); every
	 * attempt is signed afresh, so it is a retry like any lost answer */
	static const char *const transient[] = { "InternalError", "ServiceUnavailable",
						 "UnknownError", "SignatureNonceUsed", NULL };

	if (code && *code) {
		if (strstr(code, "Throttling")) /* as the SDK decides ThrottlingError */
			return GC_ETHROTTLED;
		if (in_list(code, capacity))
			return GC_ECAPACITY;
		if (gc_starts_with(code, "QuotaExceed") || strcmp(code, "InvalidTagCount") == 0)
			return GC_EQUOTA;
		if (in_list(code, auth) || gc_starts_with(code, "Forbidden."))
			return GC_EAUTH;
		if (strcmp(code, "IdempotentParameterMismatch") == 0)
			return GC_EIDEMPOTENCY;
		if (processing_code(code))
			return GC_ETRANSIENT;
		if (gc_ends_with(code, ".NotFound"))
			return GC_ENOTFOUND;
		if (in_list(code, transient))
			return GC_ETRANSIENT;
	}
	if (status >= 500)
		return GC_ETRANSIENT;
	if (status == 429)
		return GC_ETHROTTLED;
	if (code && *code && status >= 400)
		return GC_EINVALID; /* every other 4xx: the request itself is wrong */
	return gc_http_status_errcode(status);
}

/* ---- rate limiting ---------------------------------------------------------------------------- */

static struct gc_ratelimit *bucket_for(struct gc_provider *p, const char *api, struct gc_error *err)
{
	struct ali_driver *d = ali_driver(p);
	struct ali_bucket *b;

	for (size_t i = 0; i < d->n_buckets; i++)
		if (strcmp(d->buckets[i]->api, api) == 0)
			return &d->buckets[i]->rl;
	b = gc_xcalloc(1, sizeof(*b));
	snprintf(b->api, sizeof(b->api), "%s", api);
	if (gc_ratelimit_init(&b->rl, ALI_API_PER_MINUTE, ALI_API_PER_MINUTE, 60000, p->clock,
			      err) != 0) {
		free(b);
		return NULL;
	}
	GC_ALLOC_GROW(d->buckets, d->n_buckets + 1, d->alloc_buckets);
	d->buckets[d->n_buckets++] = b;
	return &b->rl;
}

static const char *product_name(enum ali_product product)
{
	return product == ALI_VPC ? "vpc" : "ecs";
}

static int throttle_ourselves(struct gc_provider *p, const struct ali_call *c, struct gc_error *err)
{
	struct ali_driver *d = ali_driver(p);
	struct gc_ratelimit *rl;
	char api[80];

	if (!d->rate_limit)
		return 0;
	snprintf(api, sizeof(api), "%s:%s", product_name(c->product), c->action);
	if (!(rl = bucket_for(p, api, err)) || gc_driver_take(p, rl, 1, c->action, err) != 0)
		return -1;
	if (c->launch_tokens)
		return gc_driver_take(p, &d->launch_bucket, c->launch_tokens, c->action, err);
	return 0;
}

/* ---- one attempt -------------------------------------------------------------------------------- */

/* The cloud's error out of a non-2xx answer, classified, into err; *retry_after_ms gets
 * the server's hint or stays negative. */
static void answer_error(const struct ali_call *c, const char *host,
			 const struct gc_http_response *res, int64_t *retry_after_ms,
			 struct gc_error *err)
{
	char code[128], msg[512], rid[128];
	const char *v;
	uint64_t ms;

	if ((v = gc_http_response_header(res, ALI_RETRY_AFTER_HEADER)) &&
	    gc_parse_u64(v, 24 * 3600 * 1000ull, &ms) == 0)
		*retry_after_ms = (int64_t)ms;
	if (ali_json_error(res->body.data, res->body.len, code, msg, rid) != 0) {
		v = gc_http_response_header(res, ALI_REQUEST_ID_HEADER);
		gc_error_set(err, ali_classify(NULL, res->status), "%s: HTTP %d from '%s'",
			     c->action, res->status, host);
		gc_error_set_cloud(err, NULL, v, res->status);
		return;
	}
	if (!rid[0] && (v = gc_http_response_header(res, ALI_REQUEST_ID_HEADER)))
		snprintf(rid, sizeof(rid), "%s", v);
	if (rid[0])
		gc_error_set(err, ali_classify(code, res->status), "%s: %s: %s (request %s)",
			     c->action, code, msg, rid);
	else
		gc_error_set(err, ali_classify(code, res->status), "%s: %s: %s", c->action, code,
			     msg);
	gc_error_set_cloud(err, code, rid[0] ? rid : NULL, res->status);
}

static int attempt(struct gc_provider *p, const struct ali_call *c, const struct gc_params *params,
		   struct gc_buf *out, int64_t *retry_after_ms, struct gc_error *err)
{
	struct ali_driver *d = ali_driver(p);
	struct ali_wire_input wi;
	struct ali_wire w = { NULL, NULL, 0 };
	struct gc_http_request req;
	struct gc_http_response res;
	const char *host = c->product == ALI_VPC ? d->vpc_host : d->ecs_host;
	int ret = -1;

	*retry_after_ms = -1;
	if (throttle_ourselves(p, c, err) != 0 || ali_refresh_creds(p, err) != 0)
		return -1;
	memset(&wi, 0, sizeof(wi));
	wi.base_url = c->product == ALI_VPC ? d->vpc_url : d->ecs_url;
	wi.action = c->action;
	wi.version = c->product == ALI_VPC ? ALI_VPC_VERSION : ALI_ECS_VERSION;
	wi.params = params;
	wi.access_key_id = d->creds.access_key_id;
	wi.access_key_secret = d->creds.access_key_secret;
	wi.security_token = d->creds.security_token;
	wi.now = time(NULL);
	if (ali_wire_build(&w, &wi, err) != 0)
		return -1;
	memset(&req, 0, sizeof(req));
	req.method = "POST";
	req.url = w.url;
	req.headers = (const char *const *)w.headers;
	req.n_headers = w.n_headers;
	req.max_response = ALI_MAX_RESPONSE;

	p->stats.calls++;
	gc_log_trace(p->log, "alibaba: %s to '%s'", c->action, host);
	if (gc_http_perform(d->http, &req, &res, err) != 0) {
		gc_error_prefix(err, "%s", c->action);
		goto out;
	}
	if (res.status < 200 || res.status > 299) {
		answer_error(c, host, &res, retry_after_ms, err);
		goto out;
	}
	gc_buf_reset(out);
	if (gc_buf_add(out, res.body.data, res.body.len) != 0) {
		gc_error_set(err, GC_ETOOBIG, "%s: the answer is over %zu bytes", c->action,
			     (size_t)ALI_MAX_RESPONSE);
		goto out;
	}
	ret = 0;
out:
	gc_http_response_release(&res);
	ali_wire_release(&w);
	return ret;
}

int ali_send(struct gc_provider *p, const struct ali_call *c, struct gc_buf *out,
	     struct gc_error *err)
{
	struct ali_driver *d = ali_driver(p);
	struct gc_params params = GC_PARAMS_INIT;
	struct gc_retry r;
	struct gc_error e;
	bool resigned = false;
	int ret = -1;

	gc_buf_init(out, ALI_MAX_RESPONSE);
	/* the two catalogue actions that are not per region take no RegionId (their SDK
	 * models have none) */
	if (strcmp(c->action, "DescribeRegions") != 0 &&
	    strcmp(c->action, "DescribeInstanceTypes") != 0)
		gc_params_add(&params, "RegionId", p->region);
	if (c->params)
		gc_params_add_all(&params, c->params);
	gc_retry_begin(&r, &d->policy);
	for (unsigned n = 0;; n++) {
		int64_t hint;

		gc_error_init(&e);
		if (n)
			p->stats.retries++;
		if (attempt(p, c, &params, out, &hint, &e) == 0) {
			gc_retry_succeeded(&r);
			ret = 0;
			break;
		}
		if (e.code == GC_ETHROTTLED)
			p->stats.throttled++;
		/* a clock complaint: a fresh time, once; a second one means the clock really is
		 * off */
		if (clock_code(e.cloud_code)) {
			if (resigned) {
				gc_error_prefix(&e, "check this machine's clock");
				break;
			}
			resigned = true;
			gc_log_debug(p->log, "alibaba: signing %s again after: %s", c->action,
				     e.message);
			continue;
		}
		/* a launch without a client token may have happened: never repeat it */
		if (c->unsafe && e.code != GC_ETHROTTLED)
			break;
		if (processing_code(e.cloud_code) && hint < ALI_PROCESSING_RETRY_MS)
			hint = ALI_PROCESSING_RETRY_MS;
		if (gc_retry_pause(&r, &e, hint) != 0)
			break;
		gc_log_debug(p->log, "alibaba: retrying %s after: %s", c->action, e.message);
	}
	gc_params_release(&params);
	if (ret != 0 && err)
		*err = e;
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
