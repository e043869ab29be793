/*
 * creds.c: where the Tencent driver's keys come from (creds.h, docs/credentials.md). The
 * rules are the Tencent Cloud SDKs' default chain and tccli's, so that a user's existing
 * set-up, CI secrets and instance roles work unchanged; where those tools would need a
 * log-in (tccli's OAuth and SSO profiles) we fail with a message saying what to do
 * instead, because nothing below cmd/ may talk to the terminal. The plumbing is
 * core/creds.h's.
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
#include "core/creds.h"
#include "core/ini.h"
#include "core/keygen.h"
#include "core/oidc.h"
#include "core/str.h"
#include "providers/tencent/tencent.h"
#include "providers/tencent/creds.h"
#include "providers/tencent/cvm.h"

#define METADATA_BASE	     "http://metadata.tencentyun.com"
#define METADATA_CREDS_PATH  "/latest/meta-data/cam/security-credentials/"
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

/* Whether name is set at all, empty included (TENCENTCLOUD_CREDENTIALS_FILE=""). */
static bool env_isset(const struct tc_creds_input *in, const char *name)
{
	const struct gc_spec_env *e = in->env ? in->env : &gc_spec_env_process;

	return e->lookup && e->lookup(e->ctx, name) != NULL;
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

/* --- the chain's state ------------------------------------------------------------------ */

struct chain {
	const struct tc_creds_input *in;
	struct gc_creds_ctx cx;
	const char *profile;  /* the profile in effect */
	const char *named_by; /* what named it ("the spec", "TENCENTCLOUD_PROFILE"), or NULL */
	bool want_role;	      /* a tccli profile of type cvm-role */
};

/* --- 1. the environment ------------------------------------------------------------------ */

/* 0 found, 1 not set (*why), -1 a half-set pair. */
static int env_keys(struct tc_creds *out, struct chain *ch, char **why, struct gc_error *err)
{
	const char *id = gc_spec_env_get(ch->in->env, "TENCENTCLOUD_SECRET_ID");
	const char *key = gc_spec_env_get(ch->in->env, "TENCENTCLOUD_SECRET_KEY");
	const char *token = gc_spec_env_get(ch->in->env, "TENCENTCLOUD_SESSION_TOKEN");

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
		token = gc_spec_env_get(ch->in->env, "TENCENTCLOUD_TOKEN"); /* tccli's name */
	gc_creds_set(&out->base, ch->in->log, id, key, token, 0, gc_xstrdup("environment"));
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
	const char *home = gc_spec_env_get(in->env, "HOME");
	const char *etc = in->etc_credentials ? in->etc_credentials : ETC_CREDENTIALS;
	struct stat st;

	*path = NULL;
	if (env_isset(in, "TENCENTCLOUD_CREDENTIALS_FILE")) {
		const char *set = gc_spec_env_get(in->env, "TENCENTCLOUD_CREDENTIALS_FILE");

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
	gc_creds_set(&out->base, ch->in->log, id, key, NULL, 0,
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

/* 0 found, 1 not there (*why), 2 a cvm-role profile, -1 broken. */
static int tccli_profile(struct tc_creds *out, struct chain *ch, char **why, struct gc_error *err)
{
	const char *home = gc_spec_env_get(ch->in->env, "HOME");
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
	if (gc_creds_read_file(&text, path, NULL, TCCLI_CREDENTIAL_MAX, false, &found, err) != 0)
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
	type = gc_jstr_set(j, "type");
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
	if (gc_jstr_set(j, "role-arn")) {
		gc_error_set(err, GC_EUNSUPPORTED,
			     "%s assumes role '%s' through STS, which gpucluster does not do yet; "
			     "export the role's temporary keys instead",
			     shown, gc_jstr_set(j, "role-arn"));
		goto out;
	}
	id = gc_jstr_set(j, "secretId");
	key = gc_jstr_set(j, "secretKey");
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
	gc_creds_set(&out->base, ch->in->log, id, key, gc_jstr_set(j, "token"), 0,
		     gc_xasprintf("tccli profile '%s'", ch->profile));
	ret = 0;
out:
	gc_wipe_free(text);
	json_decref(j);
	free(path);
	free(shown);
	return ret;
}

/* --- 4. the CVM instance role -------------------------------------------------------------- */

/* 0 found; 1 not available here (*why); -1 a broken answer. */
static int cvm_role(struct tc_creds *out, struct chain *ch, char **why, struct gc_error *err)
{
	const char *base = ch->in->metadata_base ? ch->in->metadata_base : METADATA_BASE;
	const char *v, *id, *key, *token;
	struct gc_metadata m = { .cx = &ch->cx, .base = base, .attempts = METADATA_ATTEMPTS };
	struct gc_http_response res;
	struct gc_error e;
	char *role = NULL, *path = NULL;
	json_t *j = NULL, *exp;
	int ret = 1;

	*why = NULL;
	if (!ch->want_role &&
	    (v = gc_spec_env_get(ch->in->env, "TENCENTCLOUD_CVM_ROLE_DISABLED")) &&
	    strcasecmp(v, "true") == 0) {
		*why = gc_xstrdup("disabled by TENCENTCLOUD_CVM_ROLE_DISABLED");
		return 1;
	}
	if (!ch->in->http) {
		*why = gc_xstrdup("no HTTP client was given");
		return 1;
	}
	gc_error_init(&e);
	m.timeout_ms =
		ch->in->metadata_timeout_ms ? ch->in->metadata_timeout_ms : METADATA_TIMEOUT_MS;
	if (gc_metadata_role(&m, METADATA_CREDS_PATH, "no CAM role is bound to this instance", true,
			     gc_creds_role_name_ok, &role, why) != 0)
		goto out;
	path = gc_xasprintf("%s%s", METADATA_CREDS_PATH, role);
	if (gc_metadata_request(&m, "GET", path, NULL, &res, &e) != 0) {
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
	if ((v = gc_jstr_set(j, "Code")) && strcmp(v, "Success") != 0) {
		gc_error_set(err, GC_EAUTH, "%s: role '%s' answered Code '%s'", base, role, v);
		goto out;
	}
	id = gc_jstr_set(j, "TmpSecretId");
	key = gc_jstr_set(j, "TmpSecretKey");
	token = gc_jstr_set(j, "Token");
	exp = json_object_get(j, "ExpiredTime");
	if (!id || !key || !token || !json_is_integer(exp) || json_integer_value(exp) <= 0) {
		gc_error_set(err, GC_EINVALID,
			     "%s: the keys of role '%s' lack TmpSecretId, TmpSecretKey, Token or "
			     "ExpiredTime",
			     base, role);
		goto out;
	}
	gc_creds_set(&out->base, ch->in->log, id, key, token, (int64_t)json_integer_value(exp),
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
	id = gc_jstr_set(c, "TmpSecretId");
	key = gc_jstr_set(c, "TmpSecretKey");
	token = gc_jstr_set(c, "Token");
	exp = json_object_get(resp, "ExpiredTime");
	if (!id || !key || !token || !json_is_integer(exp) || json_integer_value(exp) <= 0) {
		gc_error_set(err, GC_EINVALID,
			     "cannot %s: the STS answer from '%s' lacks Credentials (TmpSecretId, "
			     "TmpSecretKey, Token) or ExpiredTime",
			     what, url);
		goto out;
	}
	gc_creds_set(&out->base, ch->in->log, id, key, token, (int64_t)json_integer_value(exp),
		     gc_xstrdup(source));
	ret = 0;
out:
	json_decref(doc);
	return ret;
}

/* One AssumeRoleWithWebIdentity call: its body (the token in it) and where it goes. */
struct sts_call {
	struct tc_creds *out;
	struct chain *ch;
	const char *url, *body, *h_region, *what, *source;
};

/* One attempt at a call (for gc_creds_retried), with a fresh timestamp. */
static int sts_attempt(void *arg, bool *last, struct gc_error *err)
{
	struct sts_call *c = arg;
	char h_ts[48];
	const char *headers[] = { "Authorization: SKIP",
				  "Content-Type: application/json",
				  "X-TC-Action: AssumeRoleWithWebIdentity",
				  "X-TC-Version: " STS_VERSION,
				  h_ts,
				  c->h_region };
	struct gc_http_request req = { .method = "POST",
				       .url = c->url,
				       .headers = headers,
				       .n_headers = 6,
				       .body = c->body,
				       .body_len = strlen(c->body),
				       .max_response = STS_MAX_RESPONSE };
	struct gc_http_response res;
	int rc;

	(void)last;
	snprintf(h_ts, sizeof(h_ts), "X-TC-Timestamp: %lld", (long long)time(NULL));
	rc = gc_http_perform(c->ch->in->http, &req, &res, err);
	if (rc != 0)
		gc_error_prefix(err, "cannot %s at '%s'", c->what, c->url);
	else
		rc = sts_read(c->out, c->ch, &res, c->what, c->url, c->source, err);
	gc_http_response_release(&res);
	return rc;
}

/* STS AssumeRoleWithWebIdentity as the SDKs send it (docs/internals/tencent.md,
 * "Credentials"); retried on throttling and 5xx. */
static int web_identity_token(struct tc_creds *out, struct chain *ch, const char *role_arn,
			      const char *provider_id, const char *token, const char *session_name,
			      const char *region, const char *what, const char *source,
			      struct gc_error *err)
{
	struct sts_call call;
	char *url = sts_url(ch), *body = NULL, *h_region = NULL;
	char session[GC_OIDC_SESSION_MAX + 1];
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
	gc_log_debug(ch->in->log, "tencent: sts AssumeRoleWithWebIdentity '%s' at '%s'", role_arn,
		     url);
	call = (struct sts_call){ .out = out,
				  .ch = ch,
				  .url = url,
				  .body = body,
				  .h_region = h_region,
				  .what = what,
				  .source = source };
	ret = gc_creds_retried(&ch->cx, "tencent: retrying sts AssumeRoleWithWebIdentity",
			       sts_attempt, &call, err);
out:
	gc_wipe_free(body); /* it holds the token */
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
	int ret = -1;

	if (gc_creds_read_file(&text, file, NULL, TOKEN_FILE_MAX, true, &found, err) != 0)
		return gc_error_prefix(err, "TKE_WEB_IDENTITY_TOKEN_FILE");
	if (!found || !*text) {
		gc_error_set(err, GC_EAUTH,
			     "web identity token file '%s' (TKE_WEB_IDENTITY_TOKEN_FILE) is %s",
			     file, found ? "empty" : "missing");
		goto out;
	}
	gc_log_add_secret(ch->in->log, text);
	what = gc_xasprintf("assume role '%s' (TKE_ROLE_ARN) with the web identity token in '%s'",
			    role_arn, file);
	source = gc_xasprintf("web identity (role '%s')", role_arn);
	ret = web_identity_token(out, ch, role_arn, provider_id, text, NULL,
				 gc_spec_env_get(ch->in->env, "TKE_REGION"), what, source, err);
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
	if (gc_creds_actions_token(&token, &ch->cx, audience, tc_facts.oidc_audience, what, err) !=
	    0)
		goto out;
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
	} else if ((v = gc_spec_env_get(ch->in->env, "TENCENTCLOUD_PROFILE"))) {
		ch->profile = v;
		ch->named_by = "TENCENTCLOUD_PROFILE";
	} else if ((v = gc_spec_env_get(ch->in->env, "TCCLI_PROFILE"))) {
		ch->profile = v;
		ch->named_by = "TCCLI_PROFILE";
	} else {
		ch->profile = "default";
		ch->named_by = NULL;
	}
}

int tc_creds_resolve(struct tc_creds *out, const struct tc_creds_input *in, struct gc_error *err)
{
	struct gc_creds_tried tried;
	struct tc_creds got;
	struct chain ch;
	char *why = NULL, *why2 = NULL;
	int rc;

	ch = (struct chain){ .in = in };
	ch.cx = (struct gc_creds_ctx){
		.env = in->env, .http = in->http, .log = in->log, .clock = in->clock
	};
	pick_profile(&ch);
	tc_creds_init(&got);
	gc_creds_tried_init(&tried);

	/* 0. the spec's OIDC role, in GitHub Actions: the spec asks for it by name */
	if (gc_creds_spec_oidc(&tried, in->oidc, in->env)) {
		rc = web_identity_actions(&got, &ch, in->oidc->role, in->oidc->provider,
					  in->oidc->audience, in->oidc->session_name, in->region,
					  "the spec's provider.oidc", err);
		goto done;
	}

	/* 1. the environment, unless the spec names a profile */
	if (in->profile && *in->profile) {
		gc_creds_tried_add(&tried, "environment (skipped: the spec names profile '%s')",
				   ch.profile);
	} else {
		rc = env_keys(&got, &ch, &why, err);
		if (gc_creds_tried_stop(&tried, rc, &why, "environment"))
			goto done;
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
	gc_creds_tried_add(&tried, "profile '%s' (%s; %s)", ch.profile, why, why2);
	free(why), why = NULL;
	free(why2), why2 = NULL;

	/* 3. web identity (TKE's variables), before the instance role as AWS has it before
	 * IMDS: a token file, else GitHub Actions' token service */
	{
		const char *role = gc_spec_env_get(in->env, "TKE_ROLE_ARN");
		const char *prov = gc_spec_env_get(in->env, "TKE_PROVIDER_ID");
		const char *file = gc_spec_env_get(in->env, "TKE_WEB_IDENTITY_TOKEN_FILE");

		if (role && prov && file) {
			rc = web_identity_file(&got, &ch, role, prov, file, err);
			goto done;
		}
		if (role && prov && gc_oidc_available(in->env)) {
			const char *region = gc_spec_env_get(in->env, "TKE_REGION");

			rc = web_identity_actions(
				&got, &ch, role, prov, in->oidc ? in->oidc->audience : NULL, NULL,
				region ? region : in->region, "TKE_ROLE_ARN", err);
			goto done;
		}
		if (!role)
			gc_creds_tried_add(&tried, "web identity (TKE_ROLE_ARN not set)");
		else if (!prov)
			gc_creds_tried_add(&tried, "web identity (TKE_PROVIDER_ID not set)");
		else
			gc_creds_tried_add(&tried,
					   "web identity (neither TKE_WEB_IDENTITY_TOKEN_FILE "
					   "nor ACTIONS_ID_TOKEN_REQUEST_URL set)");
	}

	/* 4. the instance's CAM role */
	rc = cvm_role(&got, &ch, &why, err);
	if (gc_creds_tried_stop(&tried, rc, &why, "instance role"))
		goto done;
	rc = gc_creds_tried_fail(&tried, "Tencent Cloud", err);
done:
	free(why);
	free(why2);
	gc_creds_tried_release(&tried);
	return gc_creds_finish(&out->base, &got.base, rc, &ch.cx, "tencent");
}
