/*
 * creds.c: where the Alibaba driver's keys come from (creds.h, docs/credentials.md). The
 * rules are the aliyun CLI's and the Credentials SDK's default chain, so a user's existing
 * ~/.aliyun/config.json, CI secrets and instance roles work unchanged; where the CLI
 * would open a browser or run a helper (OAuth, CloudSSO, External) we fail with a message
 * saying what to use instead, because nothing below cmd/ may talk to the terminal. The
 * plumbing is core/creds.h's.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "core/alloc.h"
#include "core/buf.h"
#include "core/creds.h"
#include "core/keygen.h"
#include "core/oidc.h"
#include "core/str.h"
#include "providers/alibaba/alibaba.h"
#include "providers/alibaba/creds.h"
#include "providers/alibaba/ecs.h"
#include "providers/alibaba/sign.h"

#define CONFIG_MAX	     ((size_t)1 << 20)
#define TOKEN_FILE_MAX	     ((size_t)64 << 10)
#define STS_MAX_RESPONSE     ((size_t)1 << 20)
#define DURATION_MIN	     900
#define DURATION_MAX	     43200 /* the longest session a RAM role may allow */
#define DURATION_DEFAULT     3600
#define METADATA_TOKEN_TTL   "21600" /* seconds; what the SDKs ask for */
#define METADATA_TIMEOUT_MS  1000    /* the SDKs' 1 s: on a laptop there is no service */
#define METADATA_ATTEMPTS    2
#define METADATA_CREDS_PATH  "/latest/meta-data/ram/security-credentials/"
#define DEFAULT_STS_ENDPOINT "https://sts.aliyuncs.com"

/* --- the chain's state ---------------------------------------------------------------- */

struct chain {
	const struct ali_creds_input *in;
	struct gc_creds_ctx cx;
	json_t *config;		     /* the aliyun CLI's config.json, NULL when absent */
	char *config_name;	     /* as messages show it */
	struct gc_creds_stack stack; /* profiles being resolved */
};

static void chain_init(struct chain *ch, const struct ali_creds_input *in)
{
	memset(ch, 0, sizeof(*ch));
	ch->in = in;
	ch->cx = (struct gc_creds_ctx){ .env = in->env,
					.http = in->http,
					.log = in->log,
					.clock = in->clock,
					.now = in->now ? in->now : (int64_t)time(NULL) };
}

/* --- STS ------------------------------------------------------------------------------- */

/* Where STS is: the spec's endpoint, else the profile's or the environment's region. */
static int sts_base(char **out, const struct chain *ch, json_t *profile, struct gc_error *err)
{
	const char *region = profile ? gc_jstr_set(profile, "sts_region") : NULL;
	bool vpc = (profile && json_is_true(json_object_get(profile, "enable_vpc"))) ||
		gc_spec_env_true(ch->in->env, "ALIBABA_CLOUD_VPC_ENDPOINT_ENABLED");

	if (ch->in->endpoint && *ch->in->endpoint)
		return gc_creds_endpoint(out, ch->in->endpoint, "the spec's provider.endpoint",
					 err);
	if (!region)
		region = gc_spec_env_get(ch->in->env, "ALIBABA_CLOUD_STS_REGION");
	if (region && strspn(region, "abcdefghijklmnopqrstuvwxyz0123456789-") != strlen(region))
		return gc_error_set(err, GC_EINVALID, "STS region '%s' is not a region name",
				    region);
	if (region)
		*out = gc_xasprintf("https://%s.%s.aliyuncs.com", vpc ? "sts-vpc" : "sts", region);
	else
		*out = gc_xstrdup(DEFAULT_STS_ENDPOINT);
	return 0;
}

struct assume {
	const char *role_arn;
	const char *session_name; /* NULL: the default */
	const char *external_id;
	const char *policy;
	int64_t duration; /* 0: the default */
	json_t *profile;  /* for sts_region / enable_vpc, or NULL */
	const char *what; /* for messages: "assume role 'arn' for profile 'x'" */
};

static enum gc_errcode sts_errcode(const char *code, int status)
{
	/* a role that is not there, or not ours to assume: not allowed, as AWS says; and
	 * every refusal of an OIDC token (AuthenticationFail.OIDCToken.*, HTTP 401) */
	if (code &&
	    (gc_starts_with(code, "EntityNotExist") || strcmp(code, "NoPermission") == 0 ||
	     gc_starts_with(code, "AuthenticationFail")))
		return GC_EAUTH;
	return ali_classify(code, status);
}

static int sts_parse(struct ali_creds *out, struct chain *ch, const struct assume *a,
		     const char *base, const struct gc_http_response *res, char *source,
		     struct gc_error *err)
{
	json_t *j = json_loadb(res->body.data, res->body.len, 0, NULL);
	json_t *c = json_object_get(j, "Credentials");
	const char *akid = gc_jstr_set(c, "AccessKeyId"),
		   *secret = gc_jstr_set(c, "AccessKeySecret");
	const char *token = gc_jstr_set(c, "SecurityToken"), *exp = gc_jstr_set(c, "Expiration");
	int64_t expiration;
	int ret = -1;

	if (!akid || !secret || !token || !exp || ali_parse_time(exp, &expiration) != 0) {
		gc_error_set(err, GC_EINVALID,
			     "cannot %s: the STS answer from '%s' has no complete Credentials "
			     "(AccessKeyId, AccessKeySecret, SecurityToken, Expiration)",
			     a->what, base);
		free(source);
		goto out;
	}
	gc_creds_set(&out->base, ch->in->log, akid, secret, token, expiration, source);
	ret = 0;
out:
	json_decref(j);
	return ret;
}

/* One STS call: AssumeRole signed with signer's credentials (params), or
 * AssumeRoleWithOIDC, anonymous, with its form body. */
struct sts_call {
	struct ali_creds *out;
	struct chain *ch;
	const struct assume *a;
	const char *base;
	char *source; /* taken by the answer that is read */
	const struct ali_creds *signer;
	const struct gc_params *params;
	const struct gc_buf *body;
};

/* One attempt at a call (for gc_creds_retried), with a fresh timestamp and signature. An
 * answer of 200 ends the call, read or not. */
static int sts_attempt(void *arg, bool *last, struct gc_error *err)
{
	static const char *const oidc_headers[2] = {
		"Content-Type: application/x-www-form-urlencoded", "Accept: application/json"
	};
	struct sts_call *c = arg;
	struct gc_driver_wire w = { 0 };
	struct gc_http_request req = { .method = "POST", .max_response = STS_MAX_RESPONSE };
	struct gc_http_response res;
	char *url = NULL;
	int rc;

	if (c->signer) {
		struct ali_wire_input wi = { .base_url = c->base,
					     .action = "AssumeRole",
					     .version = ALI_STS_VERSION,
					     .params = c->params,
					     .access_key_id = c->signer->access_key_id,
					     .access_key_secret = c->signer->access_key_secret,
					     .security_token = c->signer->security_token,
					     .now = (time_t)time(NULL) };

		if (ali_wire_build(&w, &wi, err) != 0) {
			*last = true;
			return gc_error_prefix(err, "cannot %s", c->a->what);
		}
		req.url = w.url;
		req.headers = (const char *const *)w.headers;
		req.n_headers = w.n_headers;
	} else {
		struct gc_params query = GC_PARAMS_INIT;
		struct gc_buf qs = GC_BUF_INIT(4096);
		char ts[ALI_TIMESTAMP_LEN + 1];

		ali_format_time((time_t)time(NULL), ts);
		gc_params_add(&query, "Action", "AssumeRoleWithOIDC");
		gc_params_add(&query, "Format", "JSON");
		gc_params_add(&query, "Version", ALI_STS_VERSION);
		gc_params_add(&query, "Timestamp", ts);
		(void)gc_params_encode(&qs, &query);
		url = gc_xasprintf("%s/?%s", c->base, qs.data);
		gc_params_release(&query);
		gc_buf_release(&qs);
		req.url = url;
		req.headers = oidc_headers;
		req.n_headers = 2;
		req.body = c->body->data;
		req.body_len = c->body->len;
	}
	rc = gc_http_perform(c->ch->in->http, &req, &res, err);
	gc_driver_wire_release(&w);
	free(url);
	if (rc != 0) {
		gc_error_prefix(err, "cannot %s at '%s'", c->a->what, c->base);
	} else if (res.status == 200) {
		*last = true;
		rc = sts_parse(c->out, c->ch, c->a, c->base, &res, c->source, err);
		c->source = NULL;
	} else {
		char code[128], msg[512], rid[128];
		bool ok = ali_json_error(res.body.data, res.body.len, code, msg, rid) == 0;

		gc_error_set(err, sts_errcode(ok ? code : NULL, res.status),
			     "cannot %s: %s%s%s (HTTP %d from '%s'%s%s)", c->a->what,
			     ok ? code : "no error code", ok ? ": " : "", ok ? msg : "", res.status,
			     c->base, ok && rid[0] ? ", request " : "", ok ? rid : "");
		gc_error_set_cloud(err, ok ? code : NULL, ok && rid[0] ? rid : NULL, res.status);
		rc = -1;
	}
	gc_http_response_release(&res);
	return rc;
}

/* STS AssumeRole signed with signer's credentials; retried on throttling and 5xx. */
static int assume_role(struct ali_creds *out, struct chain *ch, const struct ali_creds *signer,
		       const struct assume *a, char *source, struct gc_error *err)
{
	struct gc_params params = GC_PARAMS_INIT;
	struct sts_call call;
	char *base = NULL, dflt[48], num[24];
	int ret;

	if (!ch->in->http) {
		free(source);
		return gc_error_set(err, GC_EINVALID, "cannot %s: no HTTP client was given",
				    a->what);
	}
	if (sts_base(&base, ch, a->profile, err) != 0) {
		gc_error_prefix(err, "cannot %s", a->what);
		free(source);
		return -1;
	}
	snprintf(dflt, sizeof(dflt), "gpucluster-%lld", (long long)ch->cx.now);
	snprintf(num, sizeof(num), "%lld",
		 (long long)(a->duration ? a->duration : DURATION_DEFAULT));
	gc_params_add(&params, "RoleArn", a->role_arn);
	gc_params_add(&params, "RoleSessionName", a->session_name ? a->session_name : dflt);
	gc_params_add(&params, "DurationSeconds", num);
	if (a->external_id)
		gc_params_add(&params, "ExternalId", a->external_id);
	if (a->policy)
		gc_params_add(&params, "Policy", a->policy);
	gc_log_debug(ch->in->log, "alibaba: sts AssumeRole '%s' at '%s'", a->role_arn, base);
	call = (struct sts_call){ .out = out,
				  .ch = ch,
				  .a = a,
				  .base = base,
				  .source = source,
				  .signer = signer,
				  .params = &params };
	ret = gc_creds_retried(&ch->cx, "alibaba: retrying sts AssumeRole", sts_attempt, &call,
			       err);
	source = call.source;
	free(source);
	free(base);
	gc_params_release(&params);
	return ret;
}

/* --- OIDC ------------------------------------------------------------------------------- */

/* STS AssumeRoleWithOIDC as the Credentials SDKs send it (docs/internals/alibaba.md,
 * "Credentials"): no signature, the token is the proof. Retried on throttling and 5xx.
 * Takes source. */
static int assume_oidc(struct ali_creds *out, struct chain *ch, const char *role_arn,
		       const char *provider_arn, const char *token, const char *session_name,
		       const char *what, char *source, struct gc_error *err)
{
	struct gc_params form = GC_PARAMS_INIT;
	struct gc_buf body = GC_BUF_INIT(GC_BUF_DEFAULT_MAX);
	struct sts_call call;
	char *base = NULL, dflt[48], num[24];
	struct assume a;
	int ret = -1;

	a = (struct assume){ .role_arn = role_arn, .what = what };
	if (!ch->in->http) {
		gc_error_set(err, GC_EINVALID, "cannot %s: no HTTP client was given", what);
		goto out;
	}
	if (sts_base(&base, ch, NULL, err) != 0) {
		gc_error_prefix(err, "cannot %s", what);
		goto out;
	}
	snprintf(dflt, sizeof(dflt), "gpucluster-%lld", (long long)ch->cx.now);
	snprintf(num, sizeof(num), "%d", DURATION_DEFAULT);
	gc_params_add(&form, "OIDCProviderArn", provider_arn);
	gc_params_add(&form, "OIDCToken", token);
	gc_params_add(&form, "RoleArn", role_arn);
	gc_params_add(&form, "RoleSessionName", session_name ? session_name : dflt);
	gc_params_add(&form, "DurationSeconds", num);
	if (gc_params_encode(&body, &form) != 0) {
		gc_error_set(err, GC_ETOOBIG, "cannot %s: the request is too large", what);
		goto out;
	}
	gc_log_debug(ch->in->log, "alibaba: sts AssumeRoleWithOIDC '%s' at '%s'", role_arn, base);
	call = (struct sts_call){
		.out = out, .ch = ch, .a = &a, .base = base, .source = source, .body = &body
	};
	ret = gc_creds_retried(&ch->cx, "alibaba: retrying sts AssumeRoleWithOIDC", sts_attempt,
			       &call, err);
	source = call.source;
out:
	free(source);
	free(base);
	gc_keypair_wipe_buf(&body);
	for (size_t i = 0; i < form.n; i++)
		if (strcmp(form.items[i].name, "OIDCToken") == 0)
			memset(form.items[i].value, 0, strlen(form.items[i].value));
	gc_params_release(&form);
	return ret;
}

int ali_assume_role_with_oidc(struct ali_creds *out, const struct ali_creds_input *in,
			      const char *role_arn, const char *oidc_provider_arn,
			      const char *oidc_token, const char *session_name,
			      struct gc_error *err)
{
	struct chain ch;
	char *what = gc_xasprintf("assume role '%s' with OIDC provider '%s'", role_arn,
				  oidc_provider_arn);
	int ret;

	chain_init(&ch, in);
	ret = assume_oidc(out, &ch, role_arn, oidc_provider_arn, oidc_token, session_name, what,
			  gc_xasprintf("OIDC (role '%s')", role_arn), err);
	free(what);
	return ret;
}

/* Reads the token file and hands over to AssumeRoleWithOIDC. */
static int oidc(struct ali_creds *out, struct chain *ch, const char *role_arn,
		const char *provider_arn, const char *token_file, const char *session_name,
		struct gc_error *err)
{
	char *path = gc_creds_expand_home(ch->in->env, token_file), *token = NULL, *what;
	bool found;
	int ret = -1;

	if (gc_creds_read_file(&token, path, path, TOKEN_FILE_MAX, true, &found, err) != 0) {
		gc_error_prefix(err, "OIDC token file");
		goto out;
	}
	if (!found || !*token) {
		gc_error_set(err, GC_EAUTH, "OIDC token file '%s' is %s", path,
			     found ? "empty" : "missing");
		goto out;
	}
	gc_log_add_secret(ch->in->log, token);
	what = gc_xasprintf("assume role '%s' with the OIDC token in '%s'", role_arn, path);
	ret = assume_oidc(out, ch, role_arn, provider_arn, token, session_name, what,
			  gc_xasprintf("OIDC (role '%s')", role_arn), err);
	free(what);
out:
	gc_wipe_free(token);
	free(path);
	return ret;
}

/* AssumeRoleWithOIDC with a fresh token from GitHub Actions' token service (each renewal
 * fetches another: they live minutes). */
static int actions_oidc(struct ali_creds *out, struct chain *ch, const char *role_arn,
			const char *provider_arn, const char *audience, const char *session_name,
			const char *named_by, struct gc_error *err)
{
	char *token = NULL, *what, session[GC_OIDC_SESSION_MAX + 1];
	int ret;

	what = gc_xasprintf("assume role '%s' (%s) with the GitHub Actions OIDC token", role_arn,
			    named_by);
	if (!provider_arn) {
		ret = gc_error_set(err, GC_EINVALID,
				   "cannot %s: no OIDC provider ARN (provider.oidc.provider)",
				   what);
		goto out;
	}
	ret = gc_creds_actions_token(&token, &ch->cx, audience, ali_facts.oidc_audience, what, err);
	if (ret != 0)
		goto out;
	if (!session_name) {
		gc_oidc_session_name(session, ch->in->env, ch->cx.now);
		session_name = session;
	}
	ret = assume_oidc(out, ch, role_arn, provider_arn, token, session_name, what,
			  gc_xasprintf("GitHub Actions OIDC (role '%s')", role_arn), err);
out:
	gc_oidc_token_free(token);
	free(what);
	return ret;
}

/* --- environment keys ------------------------------------------------------------------ */

struct env_set {
	const char *id, *secret, *token;
};

/* 0 found, 1 not set (*why), -1 partial. */
static int env_keys(struct ali_creds *out, struct chain *ch, char **why, struct gc_error *err)
{
	static const struct env_set sets[] = {
		{ "ALIBABA_CLOUD_ACCESS_KEY_ID", "ALIBABA_CLOUD_ACCESS_KEY_SECRET",
		  "ALIBABA_CLOUD_SECURITY_TOKEN" },
		{ "ALIBABACLOUD_ACCESS_KEY_ID", "ALIBABACLOUD_ACCESS_KEY_SECRET",
		  "ALIBABACLOUD_SECURITY_TOKEN" },
		{ "ALICLOUD_ACCESS_KEY_ID", "ALICLOUD_ACCESS_KEY_SECRET",
		  "ALICLOUD_SECURITY_TOKEN" },
		{ "ALICLOUD_ACCESS_KEY", "ALICLOUD_SECRET_KEY", "ALICLOUD_SECURITY_TOKEN" },
	};

	for (size_t i = 0; i < sizeof(sets) / sizeof(sets[0]); i++) {
		const char *akid = gc_spec_env_get(ch->in->env, sets[i].id);
		const char *secret = gc_spec_env_get(ch->in->env, sets[i].secret);

		if (!akid && !secret)
			continue;
		if (!akid || !secret)
			return gc_error_set(err, GC_EAUTH,
					    "partial Alibaba Cloud credentials in the environment: "
					    "%s is set but %s is not",
					    akid ? sets[i].id : sets[i].secret,
					    akid ? sets[i].secret : sets[i].id);
		gc_creds_set(&out->base, ch->in->log, akid, secret,
			     gc_spec_env_get(ch->in->env, sets[i].token), 0,
			     gc_xasprintf("environment (%s)", sets[i].id));
		return 0;
	}
	*why = gc_xstrdup("ALIBABA_CLOUD_ACCESS_KEY_ID not set");
	return 1;
}

/* --- the ECS metadata service ------------------------------------------------------------ */

static bool role_name_ok(const char *s)
{
	size_t n = strlen(s);

	return n > 0 && n <= 64 &&
		strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-_") == n;
}

/* The instance's RAM role credentials: 0 found; 1 not available here (*why); -1 a broken
 * answer. role may be NULL: the one the directory lists. */
static int metadata_creds(struct ali_creds *out, struct chain *ch, const char *role, char **why,
			  struct gc_error *err)
{
	struct gc_http_response res;
	struct gc_error e;
	struct gc_metadata m;
	char *listed = NULL, *path = NULL, *what = NULL;
	json_t *j = NULL;
	const char *v, *base = ch->in->metadata_url ? ch->in->metadata_url : ALI_METADATA_URL;
	int status, ret = 1;

	*why = NULL;
	if (!ch->in->http) {
		*why = gc_xstrdup("no HTTP client was given");
		return 1;
	}
	m = (struct gc_metadata){ .cx = &ch->cx,
				  .base = base,
				  .timeout_ms = METADATA_TIMEOUT_MS,
				  .attempts = METADATA_ATTEMPTS };
	gc_error_init(&e);
	switch (gc_metadata_token(&m, "/latest/api/token",
				  "X-aliyun-ecs-metadata-token-ttl-seconds: " METADATA_TOKEN_TTL,
				  "X-aliyun-ecs-metadata-token", &status, &e)) {
	case -1: *why = gc_xasprintf("no answer from %s: %s", base, e.message); goto out;
	case 1: /* an old service: IMDSv1 */
		if (gc_spec_env_true(ch->in->env, "ALIBABA_CLOUD_IMDSV1_DISABLED")) {
			*why = gc_xasprintf("%s refused a session token (HTTP %d) and "
					    "ALIBABA_CLOUD_IMDSV1_DISABLED is true",
					    base, status);
			goto out;
		}
		break;
	default: break;
	}
	if (!role) {
		if (gc_metadata_role(&m, METADATA_CREDS_PATH,
				     "no RAM role is attached to this instance", false,
				     role_name_ok, &listed, why) != 0)
			goto out;
		role = listed;
	}
	if (!role_name_ok(role)) {
		*why = gc_xasprintf("%s gave no usable role name", base);
		goto out;
	}
	path = gc_xasprintf("%s%s", METADATA_CREDS_PATH, role);
	if (gc_metadata_request(&m, "GET", path, NULL, &res, &e) != 0) {
		*why = gc_xasprintf("%s failed: %s", base, e.message);
		goto out;
	}
	if (res.status != 200) {
		*why = gc_xasprintf("%s answered HTTP %d for the credentials of role '%s'", base,
				    res.status, role);
		gc_http_response_release(&res);
		goto out;
	}
	what = gc_xasprintf("the ECS metadata service at %s (role '%s')", base, role);
	j = json_loadb(res.body.data, res.body.len, 0, NULL);
	gc_http_response_release(&res);
	ret = -1;
	if (!json_is_object(j)) {
		gc_error_set(err, GC_EINVALID, "%s answered with no JSON object", what);
		goto out;
	}
	if ((v = gc_jstr_set(j, "Code")) && strcmp(v, "Success") != 0) {
		gc_error_set(err, GC_EAUTH, "%s answered Code '%s'", what, v);
		goto out;
	}
	{
		const char *akid = gc_jstr_set(j, "AccessKeyId"),
			   *secret = gc_jstr_set(j, "AccessKeySecret");
		const char *tok = gc_jstr_set(j, "SecurityToken"),
			   *exp = gc_jstr_set(j, "Expiration");
		int64_t expiration = 0;

		if (!akid || !secret || !tok) {
			gc_error_set(err, GC_EINVALID,
				     "%s gave no AccessKeyId, AccessKeySecret and SecurityToken",
				     what);
			goto out;
		}
		gc_log_add_secret(ch->in->log, secret);
		gc_log_add_secret(ch->in->log, tok);
		if (!exp || ali_parse_time(exp, &expiration) != 0) {
			gc_error_set(err, GC_EINVALID, "%s gave no Expiration in ISO 8601", what);
			goto out;
		}
		if (expiration <= ch->cx.now) {
			gc_error_set(err, GC_EAUTH, "%s gave credentials that expired at %s", what,
				     exp);
			goto out;
		}
		gc_creds_set(&out->base, ch->in->log, akid, secret, tok, expiration,
			     gc_xasprintf("ECS RAM role '%s'", role));
	}
	ret = 0;
out:
	json_decref(j);
	gc_metadata_release(&m);
	free(listed);
	free(path);
	free(what);
	return ret;
}

/* --- the aliyun CLI's config.json ----------------------------------------------------------- */

static int config_load(struct chain *ch, struct gc_error *err)
{
	struct gc_buf text = GC_BUF_INIT(CONFIG_MAX);
	json_error_t jerr;
	char *path = gc_creds_home_file(ch->in->env, "ALIBABA_CLOUD_CONFIG_FILE",
					".aliyun/config.json", &ch->config_name);
	bool found;
	int ret = -1;

	if (!path)
		return 0; /* nowhere to look */
	if (gc_buf_read_file(&text, path, ch->config_name, &found, err) != 0)
		goto out;
	if (!found) {
		ret = 0;
		goto out;
	}
	/* the parser's message quotes the text near the error, which may be a secret: only
	 * the position is shown */
	ch->config = json_loadb(text.data, text.len, JSON_REJECT_DUPLICATES, &jerr);
	if (!ch->config) {
		gc_error_set(err, GC_EINVALID, "'%s' is not valid JSON (line %d, column %d)",
			     ch->config_name, jerr.line, jerr.column);
		goto out;
	}
	if (!json_is_object(ch->config) ||
	    (json_object_get(ch->config, "profiles") &&
	     !json_is_array(json_object_get(ch->config, "profiles")))) {
		gc_error_set(err, GC_EINVALID,
			     "'%s' is not an aliyun CLI configuration (an object with a "
			     "\"profiles\" array)",
			     ch->config_name);
		json_decref(ch->config);
		ch->config = NULL;
		goto out;
	}
	ret = 0;
out:
	gc_keypair_wipe_buf(&text);
	free(path);
	return ret;
}

static json_t *config_profile(const struct chain *ch, const char *name)
{
	json_t *list = json_object_get(ch->config, "profiles"), *p;
	size_t i;

	json_array_foreach(list, i, p)
	{
		const char *n = gc_jstr_set(p, "name");

		if (json_is_object(p) && n && strcmp(n, name) == 0)
			return p;
	}
	return NULL;
}

/* The profile in effect: the spec's, else ALIBABA_CLOUD_PROFILE, else the file's current,
 * else "default". *named_by is NULL for the last two. */
static const char *profile_name(const struct chain *ch, const char **named_by)
{
	const char *v;

	if (ch->in->profile && *ch->in->profile) {
		*named_by = "the spec's provider.profile";
		return ch->in->profile;
	}
	if ((v = gc_spec_env_get(ch->in->env, "ALIBABA_CLOUD_PROFILE"))) {
		*named_by = "ALIBABA_CLOUD_PROFILE";
		return v;
	}
	*named_by = NULL;
	v = ch->config ? gc_jstr_set(ch->config, "current") : NULL;
	return v ? v : "default";
}

static int from_profile(struct ali_creds *out, struct chain *ch, const char *name, const char *via,
			struct gc_error *err);

/* The keys a profile holds itself (AK and StsToken modes, and what signs a RamRoleArn). */
static int profile_keys(struct ali_creds *out, struct chain *ch, json_t *p, const char *name,
			const char *mode, bool with_token, struct gc_error *err)
{
	const char *akid = gc_jstr_set(p, "access_key_id"),
		   *secret = gc_jstr_set(p, "access_key_secret");
	const char *token = gc_jstr_set(p, "sts_token");

	if (!akid || !secret)
		return gc_error_set(err, GC_EAUTH, "profile '%s' (mode %s) in %s has no %s", name,
				    mode, ch->config_name,
				    akid ? "access_key_secret" : "access_key_id");
	if (with_token && !token)
		return gc_error_set(err, GC_EAUTH,
				    "profile '%s' (mode StsToken) in %s has no sts_token", name,
				    ch->config_name);
	gc_creds_set(&out->base, ch->in->log, akid, secret, token, 0,
		     gc_xasprintf("profile '%s'", name));
	return 0;
}

static int profile_role(struct ali_creds *out, struct chain *ch, json_t *p, const char *name,
			const char *mode, const struct ali_creds *signer, struct gc_error *err)
{
	const char *arn = gc_jstr_set(p, "ram_role_arn");
	json_t *secs = json_object_get(p, "expired_seconds");
	struct assume a;
	char *what;
	int ret;

	if (!arn)
		return gc_error_set(err, GC_EINVALID,
				    "profile '%s' (mode %s) in %s has no ram_role_arn", name, mode,
				    ch->config_name);
	memset(&a, 0, sizeof(a));
	if (json_is_integer(secs) && json_integer_value(secs) != 0) {
		a.duration = json_integer_value(secs);
		if (a.duration < DURATION_MIN || a.duration > DURATION_MAX)
			return gc_error_set(err, GC_EINVALID,
					    "profile '%s' in %s: expired_seconds %lld is not "
					    "from %d to %d",
					    name, ch->config_name, (long long)a.duration,
					    DURATION_MIN, DURATION_MAX);
	} else if (secs && !json_is_integer(secs)) {
		return gc_error_set(err, GC_EINVALID,
				    "profile '%s' in %s: expired_seconds is not a number", name,
				    ch->config_name);
	}
	a.role_arn = arn;
	a.session_name = gc_jstr_set(p, "ram_session_name");
	if (!a.session_name)
		a.session_name = gc_spec_env_get(ch->in->env, "ALIBABA_CLOUD_ROLE_SESSION_NAME");
	a.external_id = gc_jstr_set(p, "external_id");
	a.policy = gc_jstr_set(p, "policy");
	a.profile = p;
	what = gc_xasprintf("assume role '%s' for profile '%s'", arn, name);
	a.what = what;
	ret = assume_role(out, ch, signer, &a, gc_xasprintf("profile '%s' (role '%s')", name, arn),
			  err);
	free(what);
	return ret;
}

/* Credentials from a profile found in the file. */
static int profile_creds(struct ali_creds *out, struct chain *ch, json_t *p, const char *name,
			 struct gc_error *err)
{
	const char *mode = gc_jstr_set(p, "mode");
	struct ali_creds src;
	char *why = NULL;
	int rc;

	if (!mode)
		return gc_error_set(err, GC_EINVALID,
				    "profile '%s' in %s has no mode; run 'aliyun configure "
				    "--profile %s'",
				    name, ch->config_name, name);
	if (strcasecmp(mode, "AK") == 0)
		return profile_keys(out, ch, p, name, "AK", false, err);
	if (strcasecmp(mode, "StsToken") == 0)
		return profile_keys(out, ch, p, name, "StsToken", true, err);
	if (strcasecmp(mode, "RamRoleArn") == 0 || strcasecmp(mode, "ChainableRamRoleArn") == 0) {
		bool chained = strcasecmp(mode, "ChainableRamRoleArn") == 0;
		const char *source = gc_jstr_set(p, "source_profile");

		ali_creds_init(&src);
		if (chained && !source)
			rc = gc_error_set(err, GC_EINVALID,
					  "profile '%s' (mode ChainableRamRoleArn) in %s has no "
					  "source_profile",
					  name, ch->config_name);
		else if (chained)
			rc = from_profile(&src, ch, source, name, err);
		else
			rc = profile_keys(&src, ch, p, name, "RamRoleArn", false, err);
		if (rc == 0)
			rc = profile_role(out, ch, p, name, mode, &src, err);
		ali_creds_release(&src);
		return rc;
	}
	if (strcasecmp(mode, "EcsRamRole") == 0) {
		const char *role = gc_jstr_set(p, "ram_role_name");

		if (gc_spec_env_true(ch->in->env, "ALIBABA_CLOUD_ECS_METADATA_DISABLED"))
			return gc_error_set(err, GC_EAUTH,
					    "profile '%s' has mode EcsRamRole, but "
					    "ALIBABA_CLOUD_ECS_METADATA_DISABLED is true",
					    name);
		rc = metadata_creds(
			out, ch,
			role ? role : gc_spec_env_get(ch->in->env, "ALIBABA_CLOUD_ECS_METADATA"),
			&why, err);
		if (rc == 1)
			rc = gc_error_set(err, GC_EAUTH,
					  "profile '%s' has mode EcsRamRole, but the ECS "
					  "metadata service: %s",
					  name, why);
		free(why);
		return rc;
	}
	if (strcasecmp(mode, "OIDC") == 0) {
		const char *arn = gc_jstr_set(p, "ram_role_arn"),
			   *prov = gc_jstr_set(p, "oidc_provider_arn");
		const char *file = gc_jstr_set(p, "oidc_token_file");

		if (!arn || !prov || !file)
			return gc_error_set(err, GC_EINVALID,
					    "profile '%s' (mode OIDC) in %s needs ram_role_arn, "
					    "oidc_provider_arn and oidc_token_file",
					    name, ch->config_name);
		return oidc(out, ch, arn, prov, file, gc_jstr_set(p, "ram_session_name"), err);
	}
	return gc_error_set(
		err, GC_EUNSUPPORTED,
		"profile '%s' in %s has mode '%s', which gpucluster does not use "
		"(it cannot open a browser or run a helper); use a profile of mode "
		"AK, StsToken, RamRoleArn, ChainableRamRoleArn, EcsRamRole or OIDC, or the "
		"ALIBABA_CLOUD_ACCESS_KEY_ID variables",
		name, ch->config_name, mode);
}

static int from_profile(struct ali_creds *out, struct chain *ch, const char *name, const char *via,
			struct gc_error *err)
{
	json_t *p = ch->config ? config_profile(ch, name) : NULL;
	int rc;

	if (!p)
		return gc_error_set(err, GC_EINVALID,
				    "source_profile '%s' of profile '%s' not found in %s", name,
				    via, ch->config_name);
	if (gc_creds_stack_push(&ch->stack, name, ch->config_name, err) != 0)
		return -1;
	rc = profile_creds(out, ch, p, name, err);
	ch->stack.depth--;
	return rc;
}

/* --- the chain -------------------------------------------------------------------------- */

int ali_creds_resolve(struct ali_creds *out, const struct ali_creds_input *in, struct gc_error *err)
{
	struct gc_creds_tried tried;
	struct ali_creds got;
	struct chain ch;
	const char *named_by, *name, *role_arn, *prov, *file;
	bool spec_profile = in->profile && *in->profile;
	char *why = NULL;
	int rc = -1;

	chain_init(&ch, in);
	ali_creds_init(&got);
	gc_creds_tried_init(&tried);

	/* 0. the spec's OIDC role, in GitHub Actions: the spec asks for it by name */
	if (gc_creds_spec_oidc(&tried, in->oidc, in->env)) {
		rc = actions_oidc(&got, &ch, in->oidc->role, in->oidc->provider, in->oidc->audience,
				  in->oidc->session_name, "the spec's provider.oidc", err);
		goto done;
	}

	/* 1. the environment, unless the spec names a profile */
	if (spec_profile) {
		gc_creds_tried_add(&tried, "environment (skipped: the spec names profile '%s')",
				   in->profile);
	} else {
		rc = env_keys(&got, &ch, &why, err);
		if (gc_creds_tried_stop(&tried, rc, &why, "environment"))
			goto done;
	}

	/* 2. OIDC from the environment (GitHub Actions, ACK RRSA) */
	role_arn = gc_spec_env_get(in->env, "ALIBABA_CLOUD_ROLE_ARN");
	prov = gc_spec_env_get(in->env, "ALIBABA_CLOUD_OIDC_PROVIDER_ARN");
	file = gc_spec_env_get(in->env, "ALIBABA_CLOUD_OIDC_TOKEN_FILE");
	if (!spec_profile && role_arn && prov && file) {
		rc = oidc(&got, &ch, role_arn, prov, file,
			  gc_spec_env_get(in->env, "ALIBABA_CLOUD_ROLE_SESSION_NAME"), err);
		goto done;
	}
	/* GitHub Actions without a token file: the runner's token service gives one */
	if (!spec_profile && role_arn && prov && gc_oidc_available(in->env)) {
		rc = actions_oidc(&got, &ch, role_arn, prov, in->oidc ? in->oidc->audience : NULL,
				  gc_spec_env_get(in->env, "ALIBABA_CLOUD_ROLE_SESSION_NAME"),
				  "ALIBABA_CLOUD_ROLE_ARN", err);
		goto done;
	}
	gc_creds_tried_add(&tried, "OIDC (%s)",
			   spec_profile	       ? "skipped: the spec names a profile"
				   : !role_arn ? "ALIBABA_CLOUD_ROLE_ARN not set"
				   : !prov     ? "ALIBABA_CLOUD_OIDC_PROVIDER_ARN not set"
					       : "ALIBABA_CLOUD_OIDC_TOKEN_FILE not set");

	/* 3. the aliyun CLI's profile */
	if (gc_spec_env_true(in->env, "ALIBABA_CLOUD_CLI_PROFILE_DISABLED") && !spec_profile) {
		gc_creds_tried_add(&tried,
				   "aliyun CLI profile (disabled by "
				   "ALIBABA_CLOUD_CLI_PROFILE_DISABLED)");
	} else {
		json_t *p;

		if (config_load(&ch, err) != 0) {
			rc = -1;
			goto done;
		}
		name = profile_name(&ch, &named_by);
		p = ch.config ? config_profile(&ch, name) : NULL;
		if (!p && named_by) {
			rc = gc_error_set(err, GC_EINVALID,
					  "Alibaba Cloud profile '%s' (named by %s) not found in "
					  "%s%s",
					  name, named_by, ch.config_name,
					  ch.config ? "" : " (no such file)");
			goto done;
		}
		if (p) {
			ch.stack.names[ch.stack.depth++] = name;
			rc = profile_creds(&got, &ch, p, name, err);
			goto done;
		}
		gc_creds_tried_add(&tried, "aliyun CLI profile '%s' (%s %s)", name,
				   ch.config ? "not in" : "no", ch.config_name);
	}

	/* 4. the instance's RAM role */
	if (gc_spec_env_true(in->env, "ALIBABA_CLOUD_ECS_METADATA_DISABLED")) {
		gc_creds_tried_add(
			&tried, "ECS RAM role (disabled by ALIBABA_CLOUD_ECS_METADATA_DISABLED)");
	} else {
		rc = metadata_creds(&got, &ch,
				    gc_spec_env_get(in->env, "ALIBABA_CLOUD_ECS_METADATA"), &why,
				    err);
		if (gc_creds_tried_stop(&tried, rc, &why, "ECS RAM role"))
			goto done;
	}
	if (gc_spec_env_get(in->env, "ALIBABA_CLOUD_CREDENTIALS_URI"))
		gc_creds_tried_add(&tried,
				   "ALIBABA_CLOUD_CREDENTIALS_URI (set, but gpucluster "
				   "does not use it)");
	rc = gc_creds_tried_fail(&tried, "Alibaba Cloud", err);
done:
	free(why);
	gc_creds_tried_release(&tried);
	json_decref(ch.config);
	free(ch.config_name);
	return gc_creds_finish(&out->base, &got.base, rc, &ch.cx, "alibaba");
}
