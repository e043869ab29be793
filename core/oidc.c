/*
 * oidc.c: fetching a GitHub Actions OIDC token (see oidc.h for the protocol).
 *
 * What the runner gives is a capability: whoever holds ACTIONS_ID_TOKEN_REQUEST_TOKEN can
 * mint tokens for any audience until the job ends, and each token opens a cloud role. So
 * both are registered with the log's redactor before the request is made, the URL is
 * never logged with its query (core/http.c drops it), and everything that held them is
 * wiped. The service is an HTTP endpoint on the runner's side of the world; it fails now
 * and then, so transport errors, 429 and 5xx are retried through core/retry.h.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

#include "core/alloc.h"
#include "core/buf.h"
#include "core/keygen.h"
#include "core/oidc.h"
#include "core/retry.h"
#include "core/str.h"
#include "core/urlenc.h"

#define OIDC_ATTEMPTS	     3
#define OIDC_TIMEOUT_MS	     30000L
#define OIDC_URL_MAX	     4096
#define OIDC_NEED_PERMISSION "the workflow needs `permissions: id-token: write`"

bool gc_oidc_in_actions(const struct gc_spec_env *env)
{
	const char *v = gc_spec_env_get(env, "GITHUB_ACTIONS");

	return v && strcmp(v, "true") == 0;
}

bool gc_oidc_available(const struct gc_spec_env *env)
{
	return gc_spec_env_get(env, "ACTIONS_ID_TOKEN_REQUEST_URL") != NULL;
}

static char *dup_or_null(const char *s)
{
	return s ? gc_xstrdup(s) : NULL;
}

void gc_spec_oidc_copy(struct gc_spec_oidc *dst, const struct gc_spec_oidc *src)
{
	memset(dst, 0, sizeof(*dst));
	if (!src || !src->role)
		return;
	dst->role = gc_xstrdup(src->role);
	dst->provider = dup_or_null(src->provider);
	dst->audience = dup_or_null(src->audience);
	dst->session_name = dup_or_null(src->session_name);
}

void gc_spec_oidc_release(struct gc_spec_oidc *o)
{
	if (!o)
		return;
	free(o->role);
	free(o->provider);
	free(o->audience);
	free(o->session_name);
	memset(o, 0, sizeof(*o));
}

void gc_oidc_token_free(char *token)
{
	gc_wipe_free(token);
}

static bool b64url_run(const char *s, size_t n)
{
	if (n == 0)
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];

		if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
		      c == '-' || c == '_'))
			return false;
	}
	return true;
}

/* Three non-empty base64url parts joined by dots: what every STS takes. */
static bool jwt_shaped(const char *s)
{
	const char *d1 = strchr(s, '.'), *d2 = d1 ? strchr(d1 + 1, '.') : NULL;

	return d2 && !strchr(d2 + 1, '.') && b64url_run(s, (size_t)(d1 - s)) &&
		b64url_run(d1 + 1, (size_t)(d2 - d1 - 1)) && b64url_run(d2 + 1, strlen(d2 + 1));
}

/* The URL without its query, for messages: the query may carry the job's identity. */
static void url_shown(char *out, size_t size, const char *url)
{
	snprintf(out, size, "%.*s", (int)strcspn(url, "?#"), url);
}

/* One answer read: 0 with *out set; -1 with err set (retryable codes mean "try again"). */
static int read_answer(char **out, const struct gc_http_response *res, const char *shown,
		       struct gc_error *err)
{
	json_t *doc, *value;
	const char *v;
	int ret = -1;

	if (res->status == 401 || res->status == 403)
		return gc_error_set(
			err, GC_EAUTH,
			"the GitHub Actions token service at '%s' refused the request (HTTP %d): "
			"ACTIONS_ID_TOKEN_REQUEST_TOKEN is not valid for this job, or %s",
			shown, res->status, OIDC_NEED_PERMISSION);
	if (res->status != 200)
		return gc_error_set(err, gc_http_status_errcode(res->status),
				    "the GitHub Actions token service at '%s' answered HTTP %d",
				    shown, res->status);
	doc = json_loadb(res->body.data, res->body.len, 0, NULL);
	value = json_object_get(doc, "value");
	v = json_string_value(value);
	if (!json_is_object(doc) || !v) {
		gc_error_set(err, GC_EINVALID,
			     "the GitHub Actions token service at '%s' answered without a token "
			     "(a JSON object with a string \"value\")",
			     shown);
		goto out;
	}
	if (strlen(v) > GC_OIDC_TOKEN_MAX || !jwt_shaped(v)) {
		gc_error_set(
			err, GC_EINVALID,
			"the GitHub Actions token service at '%s' answered a \"value\" that is "
			"not a JWT of at most %d characters",
			shown, GC_OIDC_TOKEN_MAX);
		goto out;
	}
	*out = gc_xstrdup(v);
	ret = 0;
out:
	json_decref(doc);
	return ret;
}

int gc_oidc_fetch(char **out, const struct gc_oidc_request *req, struct gc_error *err)
{
	const char *base = gc_spec_env_get(req->env, "ACTIONS_ID_TOKEN_REQUEST_URL");
	const char *bearer = gc_spec_env_get(req->env, "ACTIONS_ID_TOKEN_REQUEST_TOKEN");
	struct gc_buf url = GC_BUF_INIT(OIDC_URL_MAX);
	struct gc_retry_policy policy;
	struct gc_http_request hr;
	struct gc_retry r;
	char shown[256], *auth = NULL;
	const char *headers[2];
	int ret = -1;

	if (!base)
		return gc_error_set(err, GC_EAUTH,
				    "no ACTIONS_ID_TOKEN_REQUEST_URL: " OIDC_NEED_PERMISSION);
	if (!bearer)
		return gc_error_set(
			err, GC_EAUTH,
			"no ACTIONS_ID_TOKEN_REQUEST_TOKEN (ACTIONS_ID_TOKEN_REQUEST_URL "
			"is set): " OIDC_NEED_PERMISSION);
	if (!req->audience || !*req->audience || strlen(req->audience) > GC_OIDC_AUDIENCE_MAX)
		return gc_error_set(err, GC_EINVALID,
				    "an OIDC token needs an audience of 1-%d characters",
				    GC_OIDC_AUDIENCE_MAX);
	url_shown(shown, sizeof(shown), base);
	if (!gc_starts_with(base, "https://") && !gc_starts_with(base, "http://"))
		return gc_error_set(err, GC_EINVALID,
				    "ACTIONS_ID_TOKEN_REQUEST_URL '%s' is not an http(s) URL",
				    shown);
	gc_log_add_secret(req->log, bearer);

	/* the runner's URL already has a query (api-version); the audience joins it */
	if (gc_buf_addstr(&url, base) != 0 ||
	    gc_buf_addstr(&url, strchr(base, '?') ? "&audience=" : "?audience=") != 0 ||
	    gc_urlenc_str(&url, req->audience) != 0) {
		gc_error_set(err, GC_ETOOBIG, "ACTIONS_ID_TOKEN_REQUEST_URL is over %zu bytes",
			     (size_t)OIDC_URL_MAX);
		goto out;
	}
	auth = gc_xasprintf("Authorization: Bearer %s", bearer);
	headers[0] = auth;
	headers[1] = "Accept: application/json";
	hr = (struct gc_http_request){ .method = "GET",
				       .url = url.data,
				       .headers = headers,
				       .n_headers = 2,
				       .timeout_ms = OIDC_TIMEOUT_MS,
				       .max_response = GC_OIDC_MAX_ANSWER };
	if (!req->http) {
		gc_error_set(err, GC_EINVALID, "an OIDC token request needs an HTTP client");
		goto out;
	}

	policy = (struct gc_retry_policy){ .max_attempts = OIDC_ATTEMPTS, .clock = req->clock };
	gc_retry_begin(&r, &policy);
	gc_log_debug(req->log, "oidc: a token for audience '%s' from '%s'", req->audience, shown);
	for (;;) {
		struct gc_http_response res;
		int rc = gc_http_perform(req->http, &hr, &res, err);

		if (rc == 0)
			rc = read_answer(out, &res, shown, err);
		else
			gc_error_prefix(err,
					"cannot reach the GitHub Actions token service at '%s'",
					shown);
		if (res.body.len)
			gc_wipe(res.body.data, res.body.len);
		gc_http_response_release(&res);
		if (rc == 0) {
			gc_log_add_secret(req->log, *out);
			gc_retry_succeeded(&r);
			ret = 0;
			break;
		}
		if (gc_retry_pause(&r, err, -1) != 0)
			break;
	}
out:
	if (auth)
		gc_oidc_token_free(auth);
	gc_wipe(url.data, url.len);
	gc_buf_release(&url);
	return ret;
}

static bool digits_only(const char *s, size_t max)
{
	size_t n = s ? strlen(s) : 0;

	return n > 0 && n <= max && strspn(s, "0123456789") == n;
}

void gc_oidc_session_name(char out[GC_OIDC_SESSION_MAX + 1], const struct gc_spec_env *env,
			  int64_t now)
{
	const char *run = gc_spec_env_get(env, "GITHUB_RUN_ID");
	const char *attempt = gc_spec_env_get(env, "GITHUB_RUN_ATTEMPT");

	if (digits_only(run, 20) && digits_only(attempt, 6))
		snprintf(out, GC_OIDC_SESSION_MAX + 1, "gpucluster-%s-%s", run, attempt);
	else if (digits_only(run, 20))
		snprintf(out, GC_OIDC_SESSION_MAX + 1, "gpucluster-%s", run);
	else
		snprintf(out, GC_OIDC_SESSION_MAX + 1, "gpucluster-%lld",
			 (long long)(now ? now : (int64_t)time(NULL)));
}
