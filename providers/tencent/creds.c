/*
 * creds.c: where the Tencent driver's keys come from (creds.h has the order). The rules
 * are those of the Tencent Cloud SDKs' default chain (environment, profile file, CVM
 * role) and of tccli (its per-profile credential files), so that a user's existing set-up,
 * CI secrets and instance roles work unchanged; where those tools would need a log-in
 * (tccli's OAuth and SSO profiles) we fail with a message saying what to do instead,
 * because nothing below cmd/ may talk to the terminal.
 *
 * Every environment variable is read through the input's struct gc_spec_env, never
 * getenv(), so tests decide what is set (HOME included). Every failure says which source
 * failed and why; when nothing applies, the error lists each source tried. Secrets are
 * registered with the log as soon as they are read.
 *
 * The network parts: the CVM metadata service, and STS AssumeRoleWithWebIdentity
 * (unsigned, the token being the proof) with a token from TKE's file or from GitHub
 * Actions (core/oidc.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "core/alloc.h"
#include "core/buf.h"
#include "core/keygen.h"
#include "core/oidc.h"
#include "core/retry.h"
#include "core/str.h"
#include "providers/aws/ini.h"
#include "providers/tencent/tencent.h"
#include "providers/tencent/creds.h"
#include "providers/tencent/cvm.h"

#define METADATA_BASE	     "http://metadata.tencentyun.com"
#define METADATA_CREDS_PATH  "/latest/meta-data/cam/security-credentials/"
#define METADATA_MAX	     ((size_t)64 << 10)
#define METADATA_TIMEOUT_MS  1000L
#define METADATA_ATTEMPTS    2
#define ETC_CREDENTIALS	     "/etc/tencentcloud/credentials"
#define TCCLI_CREDENTIAL_MAX ((size_t)64 << 10)
#define TOKEN_FILE_MAX	     ((size_t)64 << 10)
#define STS_DEFAULT_URL	     "https://sts.tencentcloudapi.com"
#define STS_DEFAULT_REGION   "ap-guangzhou" /* X-TC-Region when none is known */
#define STS_VERSION	     "2018-08-13"
#define STS_DURATION	     7200 /* the SDKs' default, seconds */
#define STS_MAX_RESPONSE     ((size_t)1 << 20)

/* --- small helpers -------------------------------------------------------------------- */

static const char *env_get(const struct tc_creds_input *in, const char *name)
{
	return gc_spec_env_get(in->env, name);
}

/* Whether name is set at all, empty included (TENCENTCLOUD_CREDENTIALS_FILE=""). */
static bool env_isset(const struct tc_creds_input *in, const char *name)
{
	const struct gc_spec_env *e = in->env ? in->env : &gc_spec_env_process;

	return e->lookup && e->lookup(e->ctx, name) != NULL;
}

void tc_creds_init(struct tc_creds *c)
{
	memset(c, 0, sizeof(*c));
}

void tc_creds_release(struct tc_creds *c)
{
	if (!c)
		return;
	free(c->secret_id);
	gc_wipe_free(c->secret_key);
	gc_wipe_free(c->token);
	free(c->source);
	memset(c, 0, sizeof(*c));
}

/* Fills c, taking source; registers the secrets with the log. */
static void creds_fill(struct tc_creds *c, struct gc_log *log, const char *id, const char *key,
		       const char *token, int64_t expiration, char *source)
{
	tc_creds_release(c);
	gc_log_add_secret(log, key);
	gc_log_add_secret(log, token);
	c->secret_id = gc_xstrdup(id);
	c->secret_key = gc_xstrdup(key);
	c->token = token && *token ? gc_xstrdup(token) : NULL;
	c->expiration = expiration;
	c->source = source;
}

/* A value from the SDKs' INI file without one surrounding pair of double quotes (the
 * Python SDK's documented example writes secret_id="..."). */
static char *unquote(const char *v)
{
	size_t n = strlen(v);

	if (n >= 2 && v[0] == '"' && v[n - 1] == '"')
		return gc_xstrndup(v + 1, n - 2);
	return gc_xstrdup(v);
}

/* Reads a small file whole; *found false (and 0) when it does not exist. */
static int read_file(char **out, bool *found, const char *path, size_t cap, struct gc_error *err)
{
	struct gc_buf b = GC_BUF_INIT(cap);
	int ret = gc_buf_read_file(&b, path, NULL, found, err);

	if (ret == 0 && *found)
		*out = gc_buf_detach(&b, NULL);
	gc_keypair_wipe_buf(&b); /* it holds a secret key */
	return ret;
}

/* --- the chain's state ------------------------------------------------------------------ */

struct chain {
	const struct tc_creds_input *in;
	const char *profile;  /* the profile in effect */
	const char *named_by; /* what named it ("the spec", "TENCENTCLOUD_PROFILE"), or NULL */
	bool want_role;	      /* a tccli profile of type cvm-role */
};

/* --- 1. the environment ------------------------------------------------------------------ */

/* 0 found, 1 not set (*why), -1 a half-set pair. */
static int env_keys(struct tc_creds *out, struct chain *ch, char **why, struct gc_error *err)
{
	const char *id = env_get(ch->in, "TENCENTCLOUD_SECRET_ID");
	const char *key = env_get(ch->in, "TENCENTCLOUD_SECRET_KEY");
	const char *token = env_get(ch->in, "TENCENTCLOUD_SESSION_TOKEN");

	if (!id && !key) {
		*why = gc_xstrdup("TENCENTCLOUD_SECRET_ID not set");
		return 1;
	}
	if (!id || !key)
		return gc_error_set(err, GC_EINVALID,
				    "TENCENTCLOUD_SECRET_%s is set but TENCENTCLOUD_SECRET_%s is "
				    "not; set both or neither",
				    id ? "ID" : "KEY", id ? "KEY" : "ID");
	if (!token)
		token = env_get(ch->in, "TENCENTCLOUD_TOKEN"); /* tccli's name */
	creds_fill(out, ch->in->log, id, key, token, 0, gc_xstrdup("environment"));
	return 0;
}

/* --- 2a. the SDKs' credentials file ---------------------------------------------------- */

/*
 * The file in effect: TENCENTCLOUD_CREDENTIALS_FILE, else ~/.tencentcloud/credentials if
 * it exists, else /etc/tencentcloud/credentials. *path is NULL when none exists (*shown
 * then names the ones looked at).
 */
static int sdk_file(struct chain *ch, char **path, char **shown, struct gc_error *err)
{
	const struct tc_creds_input *in = ch->in;
	const char *home = env_get(in, "HOME");
	const char *etc = in->etc_credentials ? in->etc_credentials : ETC_CREDENTIALS;
	struct stat st;

	*path = NULL;
	if (env_isset(in, "TENCENTCLOUD_CREDENTIALS_FILE")) {
		const char *set = env_get(in, "TENCENTCLOUD_CREDENTIALS_FILE");

		if (!set)
			return gc_error_set(err, GC_EINVALID,
					    "TENCENTCLOUD_CREDENTIALS_FILE is set but empty");
		*shown = gc_xstrdup(set);
		if (stat(set, &st) == 0)
			*path = gc_xstrdup(set);
		return 0;
	}
	if (home) {
		char *p = gc_xasprintf("%s/.tencentcloud/credentials", home);

		if (stat(p, &st) == 0) {
			*path = p;
			*shown = gc_xstrdup("~/.tencentcloud/credentials");
			return 0;
		}
		free(p);
	}
	if (stat(etc, &st) == 0) {
		*path = gc_xstrdup(etc);
		*shown = gc_xstrdup(etc);
		return 0;
	}
	*shown = gc_xasprintf("~/.tencentcloud/credentials or %s", etc);
	return 0;
}

/* 0 found, 1 not there (*why), -1 broken. */
static int sdk_profile(struct tc_creds *out, struct chain *ch, char **why, struct gc_error *err)
{
	struct gc_ini ini;
	const struct gc_ini_section *s;
	char *path = NULL, *shown = NULL, *id = NULL, *key = NULL;
	const char *v;
	bool found = false;
	int ret = -1;

	gc_ini_init(&ini);
	if (sdk_file(ch, &path, &shown, err) != 0)
		goto out;
	if (!path) {
		*why = gc_xasprintf("no %s", shown);
		ret = 1;
		goto out;
	}
	if (gc_ini_load_file(&ini, path, shown, &found, err) != 0)
		goto out;
	s = found ? gc_ini_section(&ini, ch->profile) : NULL;
	if (!s) {
		*why = gc_xasprintf("no [%s] in %s", ch->profile, shown);
		ret = 1;
		goto out;
	}
	if ((v = gc_ini_get(s, "secret_id")) && *v)
		id = unquote(v);
	if ((v = gc_ini_get(s, "secret_key")) && *v)
		key = unquote(v);
	if ((!id || !*id) && (!key || !*key)) {
		*why = gc_xasprintf("[%s] in %s has no secret_id", ch->profile, shown);
		ret = 1;
		goto out;
	}
	if (!id || !*id || !key || !*key) {
		gc_error_set(err, GC_EINVALID, "[%s] in %s has %s but no %s", ch->profile, shown,
			     id && *id ? "secret_id" : "secret_key",
			     id && *id ? "secret_key" : "secret_id");
		goto out;
	}
	creds_fill(out, ch->in->log, id, key, NULL, 0,
		   gc_xasprintf("profile '%s' (%s)", ch->profile, shown));
	ret = 0;
out:
	free(path);
	free(shown);
	free(id);
	gc_wipe_free(key);
	gc_ini_release(&ini);
	return ret;
}

/* --- 2b. tccli's credential file ---------------------------------------------------------- */

static const char *jstr(json_t *o, const char *key)
{
	const char *v = json_string_value(json_object_get(o, key));

	return v && *v ? v : NULL;
}

/* 0 found, 1 not there (*why), 2 a cvm-role profile, -1 broken. */
static int tccli_profile(struct tc_creds *out, struct chain *ch, char **why, struct gc_error *err)
{
	const char *home = env_get(ch->in, "HOME");
	char *path, *shown, *text = NULL;
	const char *id, *key, *type;
	json_error_t jerr;
	json_t *j = NULL;
	bool found = false;
	int ret = -1;

	shown = gc_xasprintf("~/.tccli/%s.credential", ch->profile);
	if (!home || strchr(ch->profile, '/')) {
		*why = gc_xasprintf("no %s", shown);
		free(shown);
		return 1;
	}
	path = gc_xasprintf("%s/.tccli/%s.credential", home, ch->profile);
	if (read_file(&text, &found, path, TCCLI_CREDENTIAL_MAX, err) != 0)
		goto out;
	if (!found) {
		*why = gc_xasprintf("no %s", shown);
		ret = 1;
		goto out;
	}
	j = json_loads(text, 0, &jerr);
	if (!json_is_object(j)) {
		gc_error_set(err, GC_EINVALID, "%s: not a JSON object (line %d: %s)", shown,
			     jerr.line, jerr.text);
		goto out;
	}
	type = jstr(j, "type");
	if (type && strcmp(type, "cvm-role") == 0) {
		ret = 2;
		goto out;
	}
	if (type && (strcmp(type, "oauth") == 0 || strcmp(type, "sso") == 0)) {
		gc_error_set(err, GC_EUNSUPPORTED,
			     "%s is a tccli %s log-in, which gpucluster cannot renew; export "
			     "TENCENTCLOUD_SECRET_ID and TENCENTCLOUD_SECRET_KEY (and "
			     "TENCENTCLOUD_SESSION_TOKEN) instead",
			     shown, type);
		goto out;
	}
	if (jstr(j, "role-arn")) {
		gc_error_set(err, GC_EUNSUPPORTED,
			     "%s assumes role '%s' through STS, which gpucluster does not do yet; "
			     "export the role's temporary keys instead",
			     shown, jstr(j, "role-arn"));
		goto out;
	}
	id = jstr(j, "secretId");
	key = jstr(j, "secretKey");
	if (!id && !key) {
		*why = gc_xasprintf("%s has no secretId", shown);
		ret = 1;
		goto out;
	}
	if (!id || !key) {
		gc_error_set(err, GC_EINVALID, "%s has %s but no %s", shown,
			     id ? "secretId" : "secretKey", id ? "secretKey" : "secretId");
		goto out;
	}
	creds_fill(out, ch->in->log, id, key, jstr(j, "token"), 0,
		   gc_xasprintf("tccli profile '%s'", ch->profile));
	ret = 0;
out:
	if (text) {
		for (char *p = text; *p; p++)
			*p = '\0';
		free(text);
	}
	json_decref(j);
	free(path);
	free(shown);
	return ret;
}

/* --- 4. the CVM instance role -------------------------------------------------------------- */

/* One metadata GET with its retries; 0 when an answer arrived (any status below 500). */
static int metadata_get(const struct chain *ch, const char *base, const char *path,
			struct gc_http_response *res, struct gc_error *err)
{
	struct gc_retry_policy policy;
	struct gc_http_request req;
	long timeout =
		ch->in->metadata_timeout_ms ? ch->in->metadata_timeout_ms : METADATA_TIMEOUT_MS;
	char *url = gc_xasprintf("%s%s", base, path);
	int ret;

	memset(&policy, 0, sizeof(policy));
	policy.max_attempts = METADATA_ATTEMPTS;
	policy.clock = ch->in->clock;
	memset(&req, 0, sizeof(req));
	req.method = "GET";
	req.url = url;
	req.connect_timeout_ms = timeout;
	req.timeout_ms = timeout;
	req.max_response = METADATA_MAX;
	ret = gc_http_perform_retried(ch->in->http, &req, res, &policy, err);
	free(url);
	return ret;
}

static bool role_name_ok(const char *s)
{
	return *s &&
		strspn(s,
		       "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
		       "0123456789+=,.@_-") == strlen(s);
}

/* 0 found; 1 not available here (*why); -1 a broken answer. */
static int cvm_role(struct tc_creds *out, struct chain *ch, char **why, struct gc_error *err)
{
	const char *base = ch->in->metadata_base ? ch->in->metadata_base : METADATA_BASE;
	const char *v, *id, *key, *token;
	struct gc_http_response res;
	struct gc_error e;
	char *role = NULL, *path = NULL;
	json_t *j = NULL, *exp;
	int ret = 1;

	*why = NULL;
	if (!ch->want_role && (v = env_get(ch->in, "TENCENTCLOUD_CVM_ROLE_DISABLED")) &&
	    strcasecmp(v, "true") == 0) {
		*why = gc_xstrdup("disabled by TENCENTCLOUD_CVM_ROLE_DISABLED");
		return 1;
	}
	if (!ch->in->http) {
		*why = gc_xstrdup("no HTTP client was given");
		return 1;
	}
	gc_error_init(&e);
	if (metadata_get(ch, base, METADATA_CREDS_PATH, &res, &e) != 0) {
		*why = gc_xasprintf("no answer from %s: %s", base, e.message);
		goto out;
	}
	if (res.status == 404) {
		*why = gc_xasprintf("no CAM role is bound to this instance (%s)", base);
		gc_http_response_release(&res);
		goto out;
	}
	if (res.status != 200) {
		*why = gc_xasprintf("%s answered HTTP %d for the role name", base, res.status);
		gc_http_response_release(&res);
		goto out;
	}
	role = gc_xstrndup(res.body.data, strcspn(res.body.data, "\r\n"));
	gc_http_response_release(&res);
	if (!role_name_ok(role)) {
		*why = gc_xasprintf("%s gave no usable role name", base);
		goto out;
	}
	path = gc_xasprintf("%s%s", METADATA_CREDS_PATH, role);
	if (metadata_get(ch, base, path, &res, &e) != 0) {
		*why = gc_xasprintf("%s failed: %s", base, e.message);
		goto out;
	}
	ret = -1;
	if (res.status != 200) {
		gc_error_set(err, GC_EAUTH, "%s answered HTTP %d for the keys of role '%s'", base,
			     res.status, role);
		gc_http_response_release(&res);
		goto out;
	}
	j = json_loadb(res.body.data, res.body.len, 0, NULL);
	gc_http_response_release(&res);
	if (!json_is_object(j)) {
		gc_error_set(err, GC_EINVALID, "%s: the keys of role '%s' are not a JSON object",
			     base, role);
		goto out;
	}
	if ((v = jstr(j, "Code")) && strcmp(v, "Success") != 0) {
		gc_error_set(err, GC_EAUTH, "%s: role '%s' answered Code '%s'", base, role, v);
		goto out;
	}
	id = jstr(j, "TmpSecretId");
	key = jstr(j, "TmpSecretKey");
	token = jstr(j, "Token");
	exp = json_object_get(j, "ExpiredTime");
	if (!id || !key || !token || !json_is_integer(exp) || json_integer_value(exp) <= 0) {
		gc_error_set(err, GC_EINVALID,
			     "%s: the keys of role '%s' lack TmpSecretId, TmpSecretKey, Token or "
			     "ExpiredTime",
			     base, role);
		goto out;
	}
	creds_fill(out, ch->in->log, id, key, token, (int64_t)json_integer_value(exp),
		   gc_xasprintf("instance role '%s'", role));
	ret = 0;
out:
	json_decref(j);
	free(role);
	free(path);
	return ret;
}

/* --- 3. web identity: STS AssumeRoleWithWebIdentity ------------------------------------------ */

static enum gc_errcode sts_errcode(const char *code, int status)
{
	/* a token STS does not take, or a role it will not give: not allowed, whatever the
	 * code's family says */
	if (code &&
	    (strcmp(code, "InvalidParameter.WebIdentityTokenError") == 0 ||
	     strcmp(code, "ResourceNotFound.RoleNotFound") == 0 ||
	     strcmp(code, "InvalidParameter.AccountNotAvaliable") == 0))
		return GC_EAUTH;
	return tc_classify(code, status);
}

/* Where STS is: the spec's endpoint (the emulator serves every product on one port), else
 * the public one. */
static char *sts_url(const struct chain *ch)
{
	const char *e = ch->in->endpoint;
	size_t n = e ? strlen(e) : 0;

	while (n > 0 && e[n - 1] == '/')
		n--;
	return n ? gc_xstrndup(e, n) : gc_xstrdup(STS_DEFAULT_URL);
}

/* One answer read: 0 with the credentials in out; -1 with err set. Takes nothing. */
static int sts_read(struct tc_creds *out, struct chain *ch, const struct gc_http_response *res,
		    const char *what, const char *url, const char *source, struct gc_error *err)
{
	json_t *doc = json_loadb(res->body.data, res->body.len, 0, NULL);
	json_t *resp = json_object_get(doc, "Response"), *e, *c, *exp;
	const char *rid, *code, *msg, *id, *key, *token;
	int ret = -1;

	if (res->status != 200 || !json_is_object(resp)) {
		gc_error_set(err, res->status == 200 ? GC_EINVALID : tc_classify(NULL, res->status),
			     "cannot %s: HTTP %d from '%s' without a Response document", what,
			     res->status, url);
		gc_error_set_cloud(err, NULL, NULL, res->status);
		goto out;
	}
	rid = json_string_value(json_object_get(resp, "RequestId"));
	if ((e = json_object_get(resp, "Error"))) {
		code = json_string_value(json_object_get(e, "Code"));
		msg = json_string_value(json_object_get(e, "Message"));
		gc_error_set(err, sts_errcode(code, res->status), "cannot %s: %s: %s (from '%s')",
			     what, code ? code : "?", msg ? msg : "", url);
		gc_error_set_cloud(err, code, rid, res->status);
		goto out;
	}
	c = json_object_get(resp, "Credentials");
	id = jstr(c, "TmpSecretId");
	key = jstr(c, "TmpSecretKey");
	token = jstr(c, "Token");
	exp = json_object_get(resp, "ExpiredTime");
	if (!id || !key || !token || !json_is_integer(exp) || json_integer_value(exp) <= 0) {
		gc_error_set(err, GC_EINVALID,
			     "cannot %s: the STS answer from '%s' lacks Credentials (TmpSecretId, "
			     "TmpSecretKey, Token) or ExpiredTime",
			     what, url);
		goto out;
	}
	creds_fill(out, ch->in->log, id, key, token, (int64_t)json_integer_value(exp),
		   gc_xstrdup(source));
	ret = 0;
out:
	json_decref(doc);
	return ret;
}

/*
 * STS AssumeRoleWithWebIdentity, unsigned as the SDKs send it (Authorization: SKIP, the
 * token being the proof), in API 3.0's JSON form; retried on throttling and 5xx. The
 * region goes in X-TC-Region as the SDKs send it.
 */
static int web_identity_token(struct tc_creds *out, struct chain *ch, const char *role_arn,
			      const char *provider_id, const char *token, const char *session_name,
			      const char *region, const char *what, const char *source,
			      struct gc_error *err)
{
	struct gc_retry_policy policy;
	struct gc_retry r;
	char *url = sts_url(ch), *body = NULL, *h_region = NULL;
	char session[GC_OIDC_SESSION_MAX + 1], h_ts[48];
	json_t *params;
	int ret = -1;

	if (!ch->in->http) {
		free(url);
		return gc_error_set(err, GC_EINVALID, "cannot %s: no HTTP client was given", what);
	}
	if (!session_name) {
		gc_oidc_session_name(session, ch->in->env, 0);
		session_name = session;
	}
	params = json_pack("{s:s, s:s, s:s, s:s, s:i}", "ProviderId", provider_id,
			   "WebIdentityToken", token, "RoleArn", role_arn, "RoleSessionName",
			   session_name, "DurationSeconds", STS_DURATION);
	body = params ? json_dumps(params, JSON_COMPACT) : NULL;
	json_decref(params);
	if (!body) {
		gc_error_set(err, GC_EINVALID, "cannot %s: the request cannot be written", what);
		goto out;
	}
	h_region = gc_xasprintf("X-TC-Region: %s", region ? region : STS_DEFAULT_REGION);
	memset(&policy, 0, sizeof(policy));
	policy.clock = ch->in->clock;
	gc_retry_begin(&r, &policy);
	gc_log_debug(ch->in->log, "tencent: sts AssumeRoleWithWebIdentity '%s' at '%s'", role_arn,
		     url);
	for (;;) {
		const char *headers[6];
		struct gc_http_request req;
		struct gc_http_response res;
		int rc;

		snprintf(h_ts, sizeof(h_ts), "X-TC-Timestamp: %lld", (long long)time(NULL));
		headers[0] = "Authorization: SKIP";
		headers[1] = "Content-Type: application/json";
		headers[2] = "X-TC-Action: AssumeRoleWithWebIdentity";
		headers[3] = "X-TC-Version: " STS_VERSION;
		headers[4] = h_ts;
		headers[5] = h_region;
		memset(&req, 0, sizeof(req));
		req.method = "POST";
		req.url = url;
		req.headers = headers;
		req.n_headers = 6;
		req.body = body;
		req.body_len = strlen(body);
		req.max_response = STS_MAX_RESPONSE;
		rc = gc_http_perform(ch->in->http, &req, &res, err);
		if (rc != 0)
			gc_error_prefix(err, "cannot %s at '%s'", what, url);
		else
			rc = sts_read(out, ch, &res, what, url, source, err);
		gc_http_response_release(&res);
		if (rc == 0) {
			gc_retry_succeeded(&r);
			ret = 0;
			break;
		}
		if (gc_retry_pause(&r, err, -1) != 0)
			break;
		gc_log_debug(ch->in->log, "tencent: retrying sts AssumeRoleWithWebIdentity: %s",
			     err->message);
	}
out:
	if (body) {
		for (char *p = body; *p; p++) /* it holds the token */
			*p = '\0';
		free(body);
	}
	free(h_region);
	free(url);
	return ret;
}

/* The web identity token from TKE's token file. */
static int web_identity_file(struct tc_creds *out, struct chain *ch, const char *role_arn,
			     const char *provider_id, const char *file, struct gc_error *err)
{
	char *text = NULL, *what = NULL, *source = NULL;
	bool found = false;
	size_t n;
	int ret = -1;

	if (read_file(&text, &found, file, TOKEN_FILE_MAX, err) != 0)
		return gc_error_prefix(err, "TKE_WEB_IDENTITY_TOKEN_FILE");
	n = text ? strlen(text) : 0;
	while (n && (text[n - 1] == '\n' || text[n - 1] == '\r' || text[n - 1] == ' '))
		text[--n] = '\0';
	if (!found || !n) {
		gc_error_set(err, GC_EAUTH,
			     "web identity token file '%s' (TKE_WEB_IDENTITY_TOKEN_FILE) "
			     "is %s",
			     file, found ? "empty" : "missing");
		goto out;
	}
	gc_log_add_secret(ch->in->log, text);
	what = gc_xasprintf("assume role '%s' (TKE_ROLE_ARN) with the web identity token in '%s'",
			    role_arn, file);
	source = gc_xasprintf("web identity (role '%s')", role_arn);
	ret = web_identity_token(out, ch, role_arn, provider_id, text, NULL,
				 env_get(ch->in, "TKE_REGION"), what, source, err);
out:
	gc_wipe_free(text);
	free(what);
	free(source);
	return ret;
}

/* A fresh token from GitHub Actions' token service (each renewal fetches another). */
static int web_identity_actions(struct tc_creds *out, struct chain *ch, const char *role_arn,
				const char *provider_id, const char *audience,
				const char *session_name, const char *region, const char *named_by,
				struct gc_error *err)
{
	struct gc_oidc_request req;
	char *token = NULL, *what, *source;
	int ret = -1;

	what = gc_xasprintf("assume role '%s' (%s) with the GitHub Actions OIDC token", role_arn,
			    named_by);
	source = gc_xasprintf("GitHub Actions OIDC (role '%s')", role_arn);
	if (!provider_id) {
		gc_error_set(err, GC_EINVALID,
			     "cannot %s: no OIDC provider id (provider.oidc.provider)", what);
		goto out;
	}
	memset(&req, 0, sizeof(req));
	req.audience = audience && *audience ? audience : tc_facts.oidc_audience;
	req.env = ch->in->env;
	req.http = ch->in->http;
	req.log = ch->in->log;
	req.clock = ch->in->clock;
	if (gc_oidc_fetch(&token, &req, err) != 0) {
		gc_error_prefix(err, "cannot %s", what);
		goto out;
	}
	ret = web_identity_token(out, ch, role_arn, provider_id, token, session_name, region, what,
				 source, err);
out:
	gc_oidc_token_free(token);
	free(what);
	free(source);
	return ret;
}

/* --- the chain ----------------------------------------------------------------------------- */

/* The profile in effect and what named it (NULL for the default). */
static void pick_profile(struct chain *ch)
{
	const char *v;

	if (ch->in->profile && *ch->in->profile) {
		ch->profile = ch->in->profile;
		ch->named_by = "the spec (provider.profile)";
	} else if ((v = env_get(ch->in, "TENCENTCLOUD_PROFILE"))) {
		ch->profile = v;
		ch->named_by = "TENCENTCLOUD_PROFILE";
	} else if ((v = env_get(ch->in, "TCCLI_PROFILE"))) {
		ch->profile = v;
		ch->named_by = "TCCLI_PROFILE";
	} else {
		ch->profile = "default";
		ch->named_by = NULL;
	}
}

int tc_creds_resolve(struct tc_creds *out, const struct tc_creds_input *in, struct gc_error *err)
{
	struct gc_buf tried = GC_BUF_INIT(GC_ERROR_MSG_MAX * 4);
	struct tc_creds got;
	struct chain ch;
	char *why = NULL, *why2 = NULL;
	int rc, ret = -1;

	memset(&ch, 0, sizeof(ch));
	ch.in = in;
	pick_profile(&ch);
	tc_creds_init(&got);

	/* 0. the spec's OIDC role, in GitHub Actions: the spec asks for it by name */
	if (in->oidc && in->oidc->role) {
		if (gc_oidc_in_actions(in->env)) {
			rc = web_identity_actions(&got, &ch, in->oidc->role, in->oidc->provider,
						  in->oidc->audience, in->oidc->session_name,
						  in->region, "the spec's provider.oidc", err);
			goto done;
		}
		gc_buf_addstr(&tried, "the spec's provider.oidc (GITHUB_ACTIONS is not true), ");
	}

	/* 1. the environment, unless the spec names a profile */
	if (in->profile && *in->profile) {
		gc_buf_addf(&tried, "environment (skipped: the spec names profile '%s')",
			    ch.profile);
	} else {
		rc = env_keys(&got, &ch, &why, err);
		if (rc <= 0)
			goto done;
		gc_buf_addf(&tried, "environment (%s)", why);
		free(why), why = NULL;
	}

	/* 2. the profile: the SDKs' file, then tccli's */
	rc = sdk_profile(&got, &ch, &why, err);
	if (rc <= 0)
		goto done;
	rc = tccli_profile(&got, &ch, &why2, err);
	if (rc < 0 || rc == 0)
		goto done;
	if (rc == 2) {
		ch.want_role = true; /* tccli's use-cvm-role: straight to the instance role */
		free(why), why = NULL;
		rc = cvm_role(&got, &ch, &why, err);
		if (rc > 0)
			rc = gc_error_set(err, GC_EAUTH,
					  "tccli profile '%s' uses the instance role, but %s",
					  ch.profile, why);
		goto done;
	}
	if (ch.named_by) {
		rc = gc_error_set(err, GC_EINVALID,
				  "profile '%s' (named by %s) is not in either file: %s; %s",
				  ch.profile, ch.named_by, why, why2);
		goto done;
	}
	gc_buf_addf(&tried, ", profile '%s' (%s; %s)", ch.profile, why, why2);
	free(why), why = NULL;
	free(why2), why2 = NULL;

	/* 3. web identity (TKE's variables), before the instance role as AWS has it before
	 * IMDS: a token file, else GitHub Actions' token service */
	{
		const char *role = env_get(in, "TKE_ROLE_ARN");
		const char *prov = env_get(in, "TKE_PROVIDER_ID");
		const char *file = env_get(in, "TKE_WEB_IDENTITY_TOKEN_FILE");

		if (role && prov && file) {
			rc = web_identity_file(&got, &ch, role, prov, file, err);
			goto done;
		}
		if (role && prov && gc_oidc_available(in->env)) {
			const char *region = env_get(in, "TKE_REGION");

			rc = web_identity_actions(
				&got, &ch, role, prov, in->oidc ? in->oidc->audience : NULL, NULL,
				region ? region : in->region, "TKE_ROLE_ARN", err);
			goto done;
		}
		if (!role)
			gc_buf_addstr(&tried, ", web identity (TKE_ROLE_ARN not set)");
		else if (!prov)
			gc_buf_addstr(&tried, ", web identity (TKE_PROVIDER_ID not set)");
		else
			gc_buf_addstr(&tried,
				      ", web identity (neither TKE_WEB_IDENTITY_TOKEN_FILE "
				      "nor ACTIONS_ID_TOKEN_REQUEST_URL set)");
	}

	/* 4. the instance's CAM role */
	rc = cvm_role(&got, &ch, &why, err);
	if (rc <= 0)
		goto done;
	gc_buf_addf(&tried, ", instance role (%s)", why);
	rc = gc_error_set(err, GC_EAUTH, "no Tencent Cloud credentials found; tried: %s",
			  tried.data);
done:
	if (rc == 0) {
		gc_log_debug(in->log, "tencent: credentials from %s", got.source);
		*out = got;
		tc_creds_init(&got);
		ret = 0;
	}
	free(why);
	free(why2);
	tc_creds_release(&got);
	gc_buf_release(&tried);
	return ret;
}
