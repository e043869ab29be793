/*
 * creds.c: where the AWS driver's keys, region and endpoints come from (creds.h,
 * docs/internals/credentials.md). The rules are the AWS CLI's, so that a user's existing
 * ~/.aws set-up, CI secrets and instance roles work unchanged; where the CLI would prompt
 * (MFA, SSO log-in) we fail with a message saying what to run instead, because nothing
 * below cmd/ may talk to the terminal. The plumbing is core/creds.h's.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>
#include <libxml/parser.h>
#include <libxml/tree.h>

#include "core/alloc.h"
#include "core/buf.h"
#include "core/creds.h"
#include "core/ini.h"
#include "core/keygen.h"
#include "core/oidc.h"
#include "core/provider.h"
#include "core/str.h"
#include "core/urlenc.h"
#include "providers/aws/aws.h"
#include "providers/aws/creds.h"
#include "providers/aws/ec2.h"
#include "providers/aws/sigv4.h"

extern char **environ;

#define STS_VERSION	      "2011-06-15"
#define STS_MAX_RESPONSE      ((size_t)1 << 20)
#define DURATION_MIN	      900		 /* STS's bounds on DurationSeconds */
#define DURATION_MAX	      43200		 /* 12 h, the longest a role may allow */
#define TOKEN_FILE_MAX	      ((size_t)64 << 10) /* STS takes JWTs of up to 20000 chars */
#define PROCESS_MAX_OUTPUT    ((size_t)64 << 10)
#define PROCESS_TIMEOUT_MS    60000L
#define IMDS_DEFAULT_ENDPOINT "http://169.254.169.254"
#define IMDS_IPV6_ENDPOINT    "http://[fd00:ec2::254]"
#define IMDS_TOKEN_TTL	      "21600" /* seconds; the SDKs ask for 6 h */
#define IMDS_CREDS_PATH	      "/latest/meta-data/iam/security-credentials/"

/* --- small helpers -------------------------------------------------------------------- */

void aws_config_init(struct aws_config *c)
{
	memset(c, 0, sizeof(*c));
}

void aws_config_release(struct aws_config *c)
{
	if (!c)
		return;
	free(c->region);
	free(c->ec2_endpoint);
	free(c->sts_endpoint);
	free(c->pricing_endpoint);
	free(c->pricing_region);
	free(c->profile);
	free(c->quotas_endpoint);
	memset(c, 0, sizeof(*c));
}

/*
 * An ISO 8601 / RFC 3339 time as STS, IMDS and credential_process write it:
 * "2026-03-14T15:09:27Z", with optional fractional seconds, a ' ' for the 'T', or a
 * "+HH:MM" offset for the 'Z': core's RFC 3339 parser, once those are undone.
 */
static int parse_time(const char *s, int64_t *out)
{
	size_t len = strlen(s), n = len;
	const char *o = len > 6 ? s + len - 6 : "";
	int64_t off = 0;
	char *utc;
	int ret;

	if ((o[0] == '+' || o[0] == '-') && strspn(o + 1, "0123456789") == 2 && o[3] == ':' &&
	    strspn(o + 4, "0123456789") == 2) {
		off = ((o[1] - '0') * 10 + (o[2] - '0')) * 3600 +
			((o[4] - '0') * 10 + (o[5] - '0')) * 60;
		off = o[0] == '+' ? off : -off;
		n -= 6;
	}
	utc = gc_xasprintf("%.*s%s", (int)n, s, n < len ? "Z" : "");
	if (n > 10 && utc[10] == ' ')
		utc[10] = 'T';
	ret = gc_parse_rfc3339(utc, out);
	free(utc);
	if (ret == 0)
		*out -= off;
	return ret;
}

/* --- the shared files ----------------------------------------------------------------- */

struct shared {
	struct gc_ini creds, config;
	char *creds_name, *config_name; /* as messages show them */
	bool creds_found, config_found;
};

static void shared_release(struct shared *sh)
{
	gc_ini_release(&sh->creds);
	gc_ini_release(&sh->config);
	free(sh->creds_name);
	free(sh->config_name);
}

static int load_one(const struct aws_creds_input *in, const char *var, const char *dflt,
		    struct gc_ini *ini, char **name, bool *found, struct gc_error *err)
{
	char *path = gc_creds_home_file(in->env, var, dflt, name);
	int rc;

	gc_ini_init(ini);
	*found = false;
	if (!path)
		return 0; /* nowhere to look */
	rc = gc_ini_load_file(ini, path, *name, found, err);
	free(path);
	return rc;
}

static int shared_load(struct shared *sh, const struct aws_creds_input *in, struct gc_error *err)
{
	memset(sh, 0, sizeof(*sh));
	if (load_one(in, "AWS_SHARED_CREDENTIALS_FILE", ".aws/credentials", &sh->creds,
		     &sh->creds_name, &sh->creds_found, err) != 0 ||
	    load_one(in, "AWS_CONFIG_FILE", ".aws/config", &sh->config, &sh->config_name,
		     &sh->config_found, err) != 0) {
		shared_release(sh);
		return -1;
	}
	return 0;
}

/*
 * A profile as the two files give it: "[NAME]" in the credentials file, "[profile NAME]"
 * in the config file, where the default profile may also be "[default]". Where both
 * files set a key, the credentials file wins.
 */
struct profile {
	const char *name;
	const struct gc_ini_section *sec[3];
};

static bool profile_find(const struct shared *sh, const char *name, struct profile *p)
{
	char *conf = gc_xasprintf("profile %s", name);

	memset(p, 0, sizeof(*p));
	p->name = name;
	p->sec[0] = gc_ini_section(&sh->creds, name);
	p->sec[1] = gc_ini_section(&sh->config, conf);
	if (strcmp(name, "default") == 0)
		p->sec[2] = gc_ini_section(&sh->config, "default");
	free(conf);
	return p->sec[0] || p->sec[1] || p->sec[2];
}

/* A key's value, NULL when absent or empty. */
static const char *pget(const struct profile *p, const char *key)
{
	for (size_t i = 0; i < 3; i++) {
		const char *v = gc_ini_get(p->sec[i], key);
		if (v && *v)
			return v;
	}
	return NULL;
}

/* The profile in effect: the spec's, else AWS_PROFILE, else "default". */
static const char *profile_name(const struct aws_creds_input *in, const char **named_by)
{
	const char *env = gc_spec_env_get(in->env, "AWS_PROFILE");

	if (in->profile && *in->profile) {
		*named_by = "the spec's provider.profile";
		return in->profile;
	}
	if (env) {
		*named_by = "AWS_PROFILE";
		return env;
	}
	*named_by = NULL;
	return "default";
}

static int missing_profile(const struct shared *sh, const char *name, const char *named_by,
			   struct gc_error *err)
{
	return gc_error_set(err, GC_EINVALID,
			    "AWS profile '%s' (named by %s) not found in %s%s or %s%s", name,
			    named_by, sh->creds_name, sh->creds_found ? "" : " (no such file)",
			    sh->config_name, sh->config_found ? "" : " (no such file)");
}

/* --- region and endpoints ------------------------------------------------------------- */

struct service {
	const char *id;	 /* as in "[services NAME]" blocks: "ec2" */
	const char *env; /* AWS_ENDPOINT_URL_EC2 */
};

/* The configured endpoint of one service, in the order of docs/internals/credentials.md
 * ("Region and endpoints"); NULL when none (the caller then uses the public one). */
static int configured_endpoint(char **out, const struct aws_creds_input *in,
			       const struct shared *sh, const struct profile *p, bool have_profile,
			       const struct service *svc, struct gc_error *err)
{
	const char *v;
	bool ignore = gc_spec_env_true(in->env, "AWS_IGNORE_CONFIGURED_ENDPOINT_URLS");

	*out = NULL;
	if (in->endpoint && *in->endpoint)
		return gc_creds_endpoint(out, in->endpoint, "the spec's provider.endpoint", err);
	if (have_profile) {
		v = pget(p, "ignore_configured_endpoint_urls");
		if (v && strcasecmp(v, "true") == 0)
			ignore = true;
	}
	if (ignore)
		return 0;
	if ((v = gc_spec_env_get(in->env, svc->env)))
		return gc_creds_endpoint(out, v, svc->env, err);
	if ((v = gc_spec_env_get(in->env, "AWS_ENDPOINT_URL")))
		return gc_creds_endpoint(out, v, "AWS_ENDPOINT_URL", err);
	if (!have_profile)
		return 0;
	if ((v = pget(p, "services"))) {
		char *sec_name = gc_xasprintf("services %s", v);
		char *key = gc_xasprintf("%s.endpoint_url", svc->id);
		const char *u = gc_ini_get(gc_ini_section(&sh->config, sec_name), key);
		int rc = 0;

		if (u && *u) {
			char *from = gc_xasprintf("[services %s] in %s", v, sh->config_name);
			rc = gc_creds_endpoint(out, u, from, err);
			free(from);
		}
		free(sec_name);
		free(key);
		if (rc != 0 || *out)
			return rc;
	}
	if ((v = pget(p, "endpoint_url"))) {
		char *from = gc_xasprintf("endpoint_url of profile '%s'", p->name);
		int rc = gc_creds_endpoint(out, v, from, err);
		free(from);
		return rc;
	}
	return 0;
}

int aws_config_resolve(struct aws_config *out, const struct aws_creds_input *in,
		       struct gc_error *err)
{
	static const struct service ec2 = { "ec2", "AWS_ENDPOINT_URL_EC2" };
	static const struct service sts = { "sts", "AWS_ENDPOINT_URL_STS" };
	static const struct service pricing = { "pricing", "AWS_ENDPOINT_URL_PRICING" };
	static const struct service quotas = { "service_quotas",
					       "AWS_ENDPOINT_URL_SERVICE_QUOTAS" };
	struct aws_config c;
	struct shared sh;
	struct profile p;
	const char *named_by, *name, *region, *from;
	const char *suffix;
	bool have;
	int ret = -1;

	aws_config_init(&c);
	if (shared_load(&sh, in, err) != 0)
		return -1;
	name = profile_name(in, &named_by);
	have = profile_find(&sh, name, &p);
	if (!have && named_by) {
		missing_profile(&sh, name, named_by, err);
		goto out;
	}

	if (in->region && *in->region) {
		region = in->region;
		from = "the spec's provider.region";
	} else if ((region = gc_spec_env_get(in->env, "AWS_REGION"))) {
		from = "AWS_REGION";
	} else if ((region = gc_spec_env_get(in->env, "AWS_DEFAULT_REGION"))) {
		from = "AWS_DEFAULT_REGION";
	} else if (have && (region = pget(&p, "region"))) {
		from = "the profile's region";
	} else {
		gc_error_set(err, GC_EINVALID,
			     "no AWS region set; looked at the spec's provider.region, AWS_REGION, "
			     "AWS_DEFAULT_REGION and the 'region' of profile '%s' in %s",
			     name, sh.config_name);
		goto out;
	}
	if (!gc_creds_region_ok(region)) {
		gc_error_set(err, GC_EINVALID, "AWS region '%s' (from %s) is not a region name",
			     region, from);
		goto out;
	}
	c.region = gc_xstrdup(region);
	suffix = gc_starts_with(region, "cn-") ? ".com.cn" : ".com";

	if (configured_endpoint(&c.ec2_endpoint, in, &sh, &p, have, &ec2, err) != 0 ||
	    configured_endpoint(&c.sts_endpoint, in, &sh, &p, have, &sts, err) != 0 ||
	    configured_endpoint(&c.pricing_endpoint, in, &sh, &p, have, &pricing, err) != 0 ||
	    configured_endpoint(&c.quotas_endpoint, in, &sh, &p, have, &quotas, err) != 0)
		goto out;
	if (!c.ec2_endpoint)
		c.ec2_endpoint = gc_xasprintf("https://ec2.%s.amazonaws%s", region, suffix);
	if (!c.sts_endpoint)
		c.sts_endpoint = gc_xasprintf("https://sts.%s.amazonaws%s", region, suffix);
	/* the Price List API lives in one region per partition */
	c.pricing_region =
		gc_xstrdup(gc_starts_with(region, "cn-") ? "cn-northwest-1" : "us-east-1");
	if (!c.pricing_endpoint)
		c.pricing_endpoint = gc_xasprintf("https://api.pricing.%s.amazonaws%s",
						  c.pricing_region, suffix);
	if (!c.quotas_endpoint)
		c.quotas_endpoint =
			gc_xasprintf("https://servicequotas.%s.amazonaws%s", region, suffix);
	c.profile = have ? gc_xstrdup(name) : NULL;
	*out = c;
	aws_config_init(&c);
	ret = 0;
out:
	aws_config_release(&c);
	shared_release(&sh);
	return ret;
}

/* --- the chain's state ---------------------------------------------------------------- */

struct chain {
	const struct aws_creds_input *in;
	const struct aws_config *cfg;
	struct gc_creds_ctx cx;
	struct shared sh;
	struct gc_creds_stack stack; /* profiles being resolved */
};

/* --- STS ------------------------------------------------------------------------------ */

/* The first element child of n with this local name (namespaces ignored). */
static xmlNodePtr xchild(xmlNodePtr n, const char *name)
{
	for (xmlNodePtr c = n ? n->children : NULL; c; c = c->next)
		if (c->type == XML_ELEMENT_NODE && strcmp((const char *)c->name, name) == 0)
			return c;
	return NULL;
}

/* The text of a child element, copied; NULL when absent or empty. */
static char *xtext(xmlNodePtr n, const char *name)
{
	xmlNodePtr c = xchild(n, name);
	xmlChar *t = c ? xmlNodeGetContent(c) : NULL;
	char *s = NULL;

	if (t && *t)
		s = gc_xstrdup((const char *)t);
	xmlFree(t);
	return s;
}

static enum gc_errcode sts_errcode(const char *code, int status)
{
	static const struct {
		const char *code;
		enum gc_errcode ec;
	} map[] = {
		{ "AccessDenied", GC_EAUTH },
		{ "AccessDeniedException", GC_EAUTH },
		{ "ExpiredToken", GC_EAUTH },
		{ "ExpiredTokenException", GC_EAUTH },
		{ "IDPCommunicationError", GC_ETRANSIENT }, /* the SDKs retry it */
		{ "IDPRejectedClaim", GC_EAUTH },
		{ "IncompleteSignature", GC_EAUTH },
		{ "InvalidClientTokenId", GC_EAUTH },
		{ "InvalidIdentityToken", GC_EAUTH },
		{ "MissingAuthenticationToken", GC_EAUTH },
		{ "RegionDisabledException", GC_EAUTH },
		{ "SignatureDoesNotMatch", GC_EAUTH },
		{ "Throttling", GC_ETHROTTLED },
		{ "ThrottlingException", GC_ETHROTTLED },
		{ "RequestLimitExceeded", GC_ETHROTTLED },
		{ "InternalFailure", GC_ETRANSIENT },
		{ "ServiceUnavailable", GC_ETRANSIENT },
		{ "MalformedPolicyDocument", GC_EINVALID },
		{ "PackedPolicyTooLarge", GC_EINVALID },
		{ "ValidationError", GC_EINVALID },
	};

	for (size_t i = 0; code && i < sizeof(map) / sizeof(map[0]); i++)
		if (strcmp(map[i].code, code) == 0)
			return map[i].ec;
	if (status >= 500)
		return GC_ETRANSIENT;
	if (status >= 200 && status < 300)
		return GC_EINVALID;
	return gc_http_status_errcode(status);
}

/* Host (with a port only when it is not the scheme's default, as curl sends it) and
 * path of an http(s) URL. */
static void url_parts(const char *url, char **host, char **path)
{
	bool tls = gc_starts_with(url, "https://");
	const char *h = url + (tls ? 8 : 7);
	size_t n = strcspn(h, "/");
	const char *dflt = tls ? ":443" : ":80";
	size_t dl = strlen(dflt);

	if (n > dl && memcmp(h + n - dl, dflt, dl) == 0)
		*host = gc_xstrndup(h, n - dl);
	else
		*host = gc_xstrndup(h, n);
	*path = gc_xstrdup(h[n] ? h + n : "/");
}

struct sts_call {
	const char *action;		/* "AssumeRole" */
	const struct gc_params *params; /* without Action and Version */
	const struct aws_creds *signer; /* NULL: unsigned (AssumeRoleWithWebIdentity) */
	const char *what;		/* for messages: "assume role 'arn' for profile 'x'" */
};

static int sts_parse_creds(struct aws_creds *out, struct chain *ch, const struct sts_call *call,
			   const struct gc_http_response *res, const char *source,
			   struct gc_error *err)
{
	xmlDocPtr doc;
	xmlNodePtr creds;
	char result[64];
	char *akid = NULL, *secret = NULL, *token = NULL, *exp = NULL;
	int64_t expiration = 0;
	int ret = -1;

	aws_xml_quiet();
	doc = xmlReadMemory(res->body.data, (int)res->body.len, "sts.xml", NULL,
			    XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
	snprintf(result, sizeof(result), "%sResult", call->action);
	creds = doc ? xchild(xchild(xmlDocGetRootElement(doc), result), "Credentials") : NULL;
	if (creds) {
		akid = xtext(creds, "AccessKeyId");
		secret = xtext(creds, "SecretAccessKey");
		token = xtext(creds, "SessionToken");
		exp = xtext(creds, "Expiration");
	}
	if (!akid || !secret || !token || !exp || parse_time(exp, &expiration) != 0) {
		gc_error_set(err, GC_EINVALID,
			     "cannot %s: the STS answer at '%s' has no complete %s/Credentials "
			     "(AccessKeyId, SecretAccessKey, SessionToken, Expiration)",
			     call->what, ch->cfg->sts_endpoint, result);
		goto out;
	}
	gc_creds_set(&out->base, ch->in->log, akid, secret, token, expiration, gc_xstrdup(source));
	ret = 0;
out:
	free(akid);
	gc_wipe_free(secret);
	gc_wipe_free(token);
	free(exp);
	if (doc)
		xmlFreeDoc(doc);
	return ret;
}

static int sts_fail(struct chain *ch, const struct sts_call *call,
		    const struct gc_http_response *res, struct gc_error *err)
{
	xmlDocPtr doc;
	xmlNodePtr root, e;
	char *code = NULL, *msg = NULL, *rid = NULL;
	const char *hdr_rid = gc_http_response_header(res, "x-amzn-requestid");

	aws_xml_quiet();
	doc = xmlReadMemory(res->body.data, (int)res->body.len, "sts-error.xml", NULL,
			    XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING);
	root = doc ? xmlDocGetRootElement(doc) : NULL;
	e = xchild(root, "Error");
	if (e) {
		code = xtext(e, "Code");
		msg = xtext(e, "Message");
	}
	rid = xtext(root, "RequestId");
	if (!rid && hdr_rid)
		rid = gc_xstrdup(hdr_rid);
	gc_error_set(err, sts_errcode(code, res->status),
		     "cannot %s: %s%s%s (HTTP %d from '%s'%s%s)", call->what,
		     code ? code : "no error code", msg ? ": " : "", msg ? msg : "", res->status,
		     ch->cfg->sts_endpoint, rid ? ", request " : "", rid ? rid : "");
	gc_error_set_cloud(err, code, rid, res->status);
	free(code);
	free(msg);
	free(rid);
	if (doc)
		xmlFreeDoc(doc);
	return -1;
}

static int sts_attempt(struct chain *ch, const struct sts_call *call, const char *url,
		       const struct gc_buf *body, struct gc_http_response *res,
		       struct gc_error *err)
{
	static const char ctype[] = "application/x-www-form-urlencoded; charset=utf-8";
	struct gc_params hdrs = GC_PARAMS_INIT;
	struct gc_sign_result sr;
	struct gc_http_request req;
	char **lines = NULL;
	size_t n_lines = 0;
	char *host = NULL, *path = NULL;
	bool signed_ok = false;
	int ret = -1;

	gc_params_add(&hdrs, "Content-Type", ctype);
	if (call->signer) {
		struct aws_sigv4_input in;
		struct gc_sign_request sreq;
		char ts[AWS_SIGV4_TIMESTAMP_LEN + 1];

		url_parts(url, &host, &path);
		aws_sigv4_format_time((time_t)ch->cx.now, ts);
		sreq = (struct gc_sign_request){ .method = "POST",
						 .host = host,
						 .path = path,
						 .headers = &hdrs,
						 .body = body->data,
						 .body_len = body->len };
		in = (struct aws_sigv4_input){ .access_key_id = call->signer->access_key_id,
					       .secret_access_key = call->signer->secret_access_key,
					       .session_token = call->signer->session_token,
					       .timestamp = ts,
					       .region = ch->cfg->region,
					       .service = "sts" };
		if (aws_sigv4_sign(&sr, &sreq, &in, err) != 0) {
			gc_error_prefix(err, "cannot %s", call->what);
			goto out;
		}
		signed_ok = true;
		gc_params_add_all(&hdrs, &sr.added_headers);
	}
	lines = gc_xcalloc(hdrs.n, sizeof(*lines));
	for (; n_lines < hdrs.n; n_lines++)
		lines[n_lines] =
			gc_xasprintf("%s: %s", hdrs.items[n_lines].name, hdrs.items[n_lines].value);
	req = (struct gc_http_request){ .method = "POST",
					.url = url,
					.headers = (const char *const *)lines,
					.n_headers = n_lines,
					.body = body->data,
					.body_len = body->len,
					.max_response = STS_MAX_RESPONSE };
	if (gc_http_perform(ch->in->http, &req, res, err) != 0) {
		gc_error_prefix(err, "cannot %s", call->what);
		goto out;
	}
	ret = 0;
out:
	for (size_t i = 0; i < n_lines; i++)
		gc_wipe_free(lines[i]);
	free(lines);
	if (signed_ok)
		gc_sign_result_release(&sr);
	gc_params_release(&hdrs);
	free(host);
	free(path);
	return ret;
}

struct sts_try {
	struct aws_creds *out;
	struct chain *ch;
	const struct sts_call *call;
	const char *url, *source;
	const struct gc_buf *body;
};

/* One attempt at an STS call (for gc_creds_retried), signed afresh. */
static int sts_try(void *arg, bool *last, struct gc_error *err)
{
	struct sts_try *t = arg;
	struct gc_http_response res;
	int rc = sts_attempt(t->ch, t->call, t->url, t->body, &res, err);

	(void)last;
	if (rc == 0 && res.status == 200)
		rc = sts_parse_creds(t->out, t->ch, t->call, &res, t->source, err);
	else if (rc == 0)
		rc = sts_fail(t->ch, t->call, &res, err);
	gc_http_response_release(&res);
	return rc;
}

/* One STS call, retried on throttling and transient failures; credentials into out. */
static int sts_credentials(struct aws_creds *out, struct chain *ch, const struct sts_call *call,
			   char *source, struct gc_error *err)
{
	struct gc_params form = GC_PARAMS_INIT;
	struct gc_buf body = GC_BUF_INIT(GC_BUF_DEFAULT_MAX);
	struct sts_try t;
	char *url = gc_xasprintf("%s/", ch->cfg->sts_endpoint), *retry_what;
	int ret = -1;

	if (!ch->in->http) {
		free(url);
		return gc_error_set(err, GC_EINVALID, "cannot %s: no HTTP client was given",
				    call->what);
	}
	gc_params_add(&form, "Action", call->action);
	gc_params_add(&form, "Version", STS_VERSION);
	gc_params_add_all(&form, call->params);
	if (gc_params_encode(&body, &form) != 0) {
		gc_error_set(err, GC_ETOOBIG, "cannot %s: the request is too large", call->what);
		goto out;
	}
	gc_log_debug(ch->in->log, "aws: sts %s at %s", call->action, ch->cfg->sts_endpoint);
	retry_what = gc_xasprintf("aws: retrying sts %s", call->action);
	t = (struct sts_try){
		.out = out, .ch = ch, .call = call, .url = url, .source = source, .body = &body
	};
	ret = gc_creds_retried(&ch->cx, retry_what, sts_try, &t, err);
	free(retry_what);
out:
	free(source);
	free(url);
	/* the form holds a web identity token */
	for (size_t i = 0; i < body.len; i++)
		body.data[i] = '\0';
	gc_buf_release(&body);
	gc_params_release(&form);
	return ret;
}

/* The parameters every assume-role call shares. */
static void role_params(struct gc_params *p, const struct chain *ch, const char *role_arn,
			const char *session_name, const char *duration)
{
	char dflt[48];

	snprintf(dflt, sizeof(dflt), "gpucluster-%lld", (long long)ch->cx.now);
	gc_params_add(p, "RoleArn", role_arn);
	gc_params_add(p, "RoleSessionName", session_name ? session_name : dflt);
	if (duration)
		gc_params_add(p, "DurationSeconds", duration);
}

static int check_duration(const char *v, const char *profile, struct gc_error *err)
{
	uint64_t d;

	if (!v)
		return 0;
	if (gc_parse_u64(v, DURATION_MAX, &d) != 0 || d < DURATION_MIN)
		return gc_error_set(
			err, GC_EINVALID,
			"profile '%s': duration_seconds '%s' is not a number of seconds "
			"from %d to %d",
			profile, v, DURATION_MIN, DURATION_MAX);
	return 0;
}

/* AssumeRoleWithWebIdentity with a token in memory (already a secret of the log's); no
 * credentials needed. Takes source. */
static int web_identity_token(struct aws_creds *out, struct chain *ch, const char *role_arn,
			      const char *token, const char *session_name, const char *duration,
			      const char *what, char *source, struct gc_error *err)
{
	struct gc_params p = GC_PARAMS_INIT;
	struct sts_call call;
	int ret;

	role_params(&p, ch, role_arn, session_name, duration);
	gc_params_add(&p, "WebIdentityToken", token);
	call = (struct sts_call){ .action = "AssumeRoleWithWebIdentity",
				  .params = &p,
				  .what = what };
	ret = sts_credentials(out, ch, &call, source, err);
	for (size_t i = 0; i < p.n; i++)
		if (strcmp(p.items[i].name, "WebIdentityToken") == 0)
			memset(p.items[i].value, 0, strlen(p.items[i].value));
	gc_params_release(&p);
	return ret;
}

/* AssumeRoleWithWebIdentity with the token in token_file. Takes source. */
static int web_identity(struct aws_creds *out, struct chain *ch, const char *role_arn,
			const char *token_file, const char *session_name, const char *duration,
			const char *what, char *source, struct gc_error *err)
{
	char *path = gc_creds_expand_home(ch->in->env, token_file), *token = NULL;
	int ret = -1;

	if (gc_creds_read_file(&token, path, NULL, TOKEN_FILE_MAX, true, NULL, err) != 0) {
		gc_error_prefix(err, "cannot %s: web identity token file", what);
		goto out;
	}
	if (!*token) {
		gc_error_set(err, GC_EAUTH, "cannot %s: web identity token file '%s' is empty",
			     what, path);
		goto out;
	}
	gc_log_add_secret(ch->in->log, token);
	ret = web_identity_token(out, ch, role_arn, token, session_name, duration, what, source,
				 err);
	source = NULL;
out:
	free(source);
	free(path);
	gc_wipe_free(token);
	return ret;
}

/* AssumeRoleWithWebIdentity with a fresh token from GitHub Actions' token service (each
 * renewal fetches another: they live minutes). Takes source. */
static int actions_identity(struct aws_creds *out, struct chain *ch, const char *role_arn,
			    const char *audience, const char *session_name, const char *what,
			    char *source, struct gc_error *err)
{
	char *token = NULL, session[GC_OIDC_SESSION_MAX + 1];
	int ret;

	if (gc_creds_actions_token(&token, &ch->cx, audience, aws_facts.oidc_audience, what, err) !=
	    0) {
		free(source);
		return -1;
	}
	if (!session_name) {
		gc_oidc_session_name(session, ch->in->env, ch->cx.now);
		session_name = session;
	}
	ret = web_identity_token(out, ch, role_arn, token, session_name, NULL, what, source, err);
	gc_oidc_token_free(token);
	return ret;
}

/* --- environment keys ----------------------------------------------------------------- */

/* 0 found, 1 not set (*why), -1 partial. */
static int env_keys(struct aws_creds *out, struct chain *ch, char **why, struct gc_error *err)
{
	const char *akid = gc_spec_env_get(ch->in->env, "AWS_ACCESS_KEY_ID");
	const char *secret = gc_spec_env_get(ch->in->env, "AWS_SECRET_ACCESS_KEY");
	const char *token = gc_spec_env_get(ch->in->env, "AWS_SESSION_TOKEN");
	const char *exp = gc_spec_env_get(ch->in->env, "AWS_CREDENTIAL_EXPIRATION");
	int64_t expiration = 0;

	if (!token) /* the name older SDKs used */
		token = gc_spec_env_get(ch->in->env, "AWS_SECURITY_TOKEN");
	if (!akid && !secret) {
		*why = gc_xstrdup("AWS_ACCESS_KEY_ID not set");
		return 1;
	}
	if (!akid || !secret)
		return gc_error_set(err, GC_EAUTH,
				    "partial AWS credentials in the environment: %s is set but %s "
				    "is not",
				    akid ? "AWS_ACCESS_KEY_ID" : "AWS_SECRET_ACCESS_KEY",
				    akid ? "AWS_SECRET_ACCESS_KEY" : "AWS_ACCESS_KEY_ID");
	if (exp && parse_time(exp, &expiration) != 0)
		return gc_error_set(err, GC_EINVALID,
				    "AWS_CREDENTIAL_EXPIRATION '%s' is not an ISO 8601 time", exp);
	gc_creds_set(&out->base, ch->in->log, akid, secret, token, expiration,
		     gc_xstrdup("environment"));
	return 0;
}

/* --- credential_process --------------------------------------------------------------- */

struct argv {
	char **v; /* NULL-terminated */
	size_t n, alloc;
};

static void argv_release(struct argv *a)
{
	for (size_t i = 0; i < a->n; i++)
		free(a->v[i]);
	free(a->v);
	memset(a, 0, sizeof(*a));
}

static void argv_push(struct argv *a, struct gc_buf *word)
{
	GC_ALLOC_GROW(a->v, a->n + 2, a->alloc);
	a->v[a->n++] = gc_buf_detach(word, NULL);
	a->v[a->n] = NULL;
}

/* Splits a command line as the AWS CLI does on POSIX (Python's shlex.split; the rules:
 * docs/internals/credentials.md, "credential_process"). */
static int split_command(struct argv *out, const char *cmd, struct gc_error *err)
{
	struct gc_buf w = GC_BUF_INIT(GC_BUF_DEFAULT_MAX);
	struct argv a = { NULL, 0, 0 };
	bool in_word = false;
	const char *p = cmd;

	while (*p) {
		char c = *p++;

		if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
			if (in_word)
				argv_push(&a, &w);
			in_word = false;
			continue;
		}
		in_word = true;
		if (c == '\\') {
			if (!*p)
				goto dangling;
			gc_buf_addch(&w, *p++);
		} else if (c == '\'') {
			const char *close = strchr(p, '\'');
			if (!close)
				goto unclosed;
			gc_buf_add(&w, p, (size_t)(close - p));
			p = close + 1;
		} else if (c == '"') {
			for (;;) {
				if (!*p)
					goto unclosed;
				if (*p == '"') {
					p++;
					break;
				}
				if (*p == '\\' && (p[1] == '"' || p[1] == '\\'))
					p++;
				gc_buf_addch(&w, *p++);
			}
		} else {
			gc_buf_addch(&w, c);
		}
	}
	if (in_word)
		argv_push(&a, &w);
	gc_buf_release(&w);
	if (a.n == 0) {
		argv_release(&a);
		return gc_error_set(err, GC_EINVALID, "the command is empty");
	}
	*out = a;
	return 0;
unclosed:
	gc_buf_release(&w);
	argv_release(&a);
	return gc_error_set(err, GC_EINVALID, "the command has an unclosed quote");
dangling:
	gc_buf_release(&w);
	argv_release(&a);
	return gc_error_set(err, GC_EINVALID, "the command ends in a lone backslash");
}

/* The program to execute: argv0 itself when it holds a '/', else the first executable
 * match along PATH (the input's PATH, as the environment is the input's). */
static char *find_program(const struct chain *ch, const char *argv0)
{
	const char *path = gc_spec_env_get(ch->in->env, "PATH");
	const char *p;

	if (strchr(argv0, '/'))
		return gc_xstrdup(argv0);
	for (p = path ? path : "/usr/local/bin:/usr/bin:/bin"; *p;) {
		size_t n = strcspn(p, ":");
		char *cand = gc_xasprintf("%.*s/%s", (int)n, n ? p : ".", argv0);
		struct stat st;

		if (access(cand, X_OK) == 0 && stat(cand, &st) == 0 && S_ISREG(st.st_mode))
			return cand;
		free(cand);
		p += n;
		if (*p == ':')
			p++;
	}
	return NULL;
}

static uint64_t mono_ms(void)
{
	return gc_clock_now_ns(NULL) / GC_NS_PER_MS;
}

/* Runs argv under the caps of docs/internals/credentials.md, "credential_process";
 * returns 0 when it exited with status 0. */
static int run_process(struct gc_buf *out, const struct chain *ch, const struct argv *a,
		       const char *what, struct gc_error *err)
{
	posix_spawn_file_actions_t fa;
	long limit =
		ch->in->process_timeout_ms > 0 ? ch->in->process_timeout_ms : PROCESS_TIMEOUT_MS;
	uint64_t deadline = mono_ms() + (uint64_t)limit;
	char *prog = find_program(ch, a->v[0]);
	char chunk[4096];
	int fds[2] = { -1, -1 }, status = 0, rc;
	enum { RUNNING, DONE, TIMED_OUT, TOO_BIG, READ_FAILED } state = RUNNING;
	pid_t pid = -1;
	int ret = -1;

	if (!prog)
		return gc_error_set(err, GC_EIO, "cannot run %s: '%s' not found in PATH", what,
				    a->v[0]);
	if (pipe(fds) != 0 || fcntl(fds[0], F_SETFD, FD_CLOEXEC) != 0 ||
	    fcntl(fds[1], F_SETFD, FD_CLOEXEC) != 0) {
		gc_error_set(err, GC_EIO, "cannot run %s: pipe: %s", what, strerror(errno));
		goto out;
	}
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, fds[1], STDOUT_FILENO);
	rc = posix_spawn(&pid, prog, &fa, NULL, a->v, environ);
	posix_spawn_file_actions_destroy(&fa);
	close(fds[1]);
	fds[1] = -1;
	if (rc != 0) {
		pid = -1;
		gc_error_set(err, GC_EIO, "cannot run %s ('%s'): %s", what, prog, strerror(rc));
		goto out;
	}

	while (state == RUNNING) {
		struct pollfd pfd = { fds[0], POLLIN, 0 };
		uint64_t now = mono_ms();
		ssize_t n;

		if (now >= deadline) {
			state = TIMED_OUT;
			break;
		}
		rc = poll(&pfd, 1, (int)(deadline - now));
		if (rc < 0 && errno == EINTR)
			continue;
		if (rc < 0) {
			state = READ_FAILED;
			break;
		}
		if (rc == 0)
			continue;
		n = read(fds[0], chunk, sizeof(chunk));
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n < 0)
			state = READ_FAILED;
		else if (n == 0)
			state = DONE;
		else if (gc_buf_add(out, chunk, (size_t)n) != 0)
			state = TOO_BIG;
	}
	/* a process may close its output and go on running: the limit covers its exit too */
	while (state == DONE) {
		pid_t w = waitpid(pid, &status, WNOHANG);

		if (w == pid || (w < 0 && errno != EINTR)) {
			pid = -1;
			break;
		}
		if (mono_ms() >= deadline)
			state = TIMED_OUT;
		else
			gc_clock_sleep_ms(NULL, 5);
	}
	if (pid > 0) {
		kill(pid, SIGKILL);
		while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
			;
	}
	switch (state) {
	case TIMED_OUT:
		gc_error_set(err, GC_ETIMEOUT, "%s did not finish within %ld ms; it was stopped",
			     what, limit);
		goto out;
	case TOO_BIG:
		gc_error_set(err, GC_ETOOBIG, "%s printed more than %zu KiB; it was stopped", what,
			     PROCESS_MAX_OUTPUT >> 10);
		goto out;
	case READ_FAILED:
		gc_error_set(err, GC_EIO, "cannot read the output of %s: %s", what,
			     strerror(errno));
		goto out;
	default: break;
	}
	if (WIFSIGNALED(status)) {
		gc_error_set(err, GC_EAUTH, "%s was killed by signal %d", what, WTERMSIG(status));
		goto out;
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		gc_error_set(err, GC_EAUTH, "%s exited with status %d", what,
			     WIFEXITED(status) ? WEXITSTATUS(status) : -1);
		goto out;
	}
	ret = 0;
out:
	if (fds[0] >= 0)
		close(fds[0]);
	if (fds[1] >= 0)
		close(fds[1]);
	free(prog);
	return ret;
}

/* Credentials from a JSON object with AccessKeyId, SecretAccessKey, the token under
 * token_key, Expiration. Shared by credential_process and IMDS. */
static int creds_from_json(struct aws_creds *out, const struct chain *ch, json_t *o,
			   const char *token_key, const char *what, char *source,
			   struct gc_error *err)
{
	const char *akid = gc_jstr_set(o, "AccessKeyId"),
		   *secret = gc_jstr_set(o, "SecretAccessKey");
	const char *token = gc_jstr_set(o, token_key), *exp = gc_jstr_set(o, "Expiration");
	int64_t expiration = 0;

	if (!akid || !secret) {
		free(source);
		return gc_error_set(err, GC_EINVALID, "%s gave no %s", what,
				    akid ? "SecretAccessKey" : "AccessKeyId");
	}
	gc_log_add_secret(ch->in->log, secret);
	gc_log_add_secret(ch->in->log, token);
	if (exp && parse_time(exp, &expiration) != 0) {
		free(source);
		return gc_error_set(err, GC_EINVALID,
				    "%s gave an Expiration that is not an ISO 8601 time", what);
	}
	if (exp && expiration <= ch->cx.now) {
		char when[21];
		gc_format_rfc3339(expiration, when);
		free(source);
		return gc_error_set(err, GC_EAUTH, "%s gave credentials that expired at %s", what,
				    when);
	}
	gc_creds_set(&out->base, ch->in->log, akid, secret, token, expiration, source);
	return 0;
}

static int process_creds(struct aws_creds *out, struct chain *ch, const struct profile *p,
			 const char *cmd, struct gc_error *err)
{
	struct gc_buf text = GC_BUF_INIT(PROCESS_MAX_OUTPUT);
	struct argv a = { NULL, 0, 0 };
	json_error_t jerr;
	json_t *j = NULL, *version;
	char *what = gc_xasprintf("the credential_process of profile '%s'", p->name);
	int ret = -1;

	if (split_command(&a, cmd, err) != 0) {
		gc_error_prefix(err, "cannot run %s", what);
		goto out;
	}
	gc_log_debug(ch->in->log, "aws: running the credential_process of profile '%s' (%s)",
		     p->name, a.v[0]);
	if (run_process(&text, ch, &a, what, err) != 0)
		goto out;
	/* the jansson message quotes the text near the error: it may be a secret, so only
	 * the position is shown */
	j = json_loadb(text.data, text.len, JSON_REJECT_DUPLICATES, &jerr);
	if (!j || !json_is_object(j)) {
		if (j)
			gc_error_set(err, GC_EINVALID, "%s printed JSON that is not an object",
				     what);
		else
			gc_error_set(err, GC_EINVALID,
				     "%s printed no valid JSON (error at line %d, column %d)", what,
				     jerr.line, jerr.column);
		goto out;
	}
	version = json_object_get(j, "Version");
	if (!json_is_integer(version) || json_integer_value(version) != 1) {
		gc_error_set(err, GC_EINVALID, "%s printed %s; only \"Version\": 1 is supported",
			     what, version ? "another Version" : "no Version");
		goto out;
	}
	ret = creds_from_json(out, ch, j, "SessionToken", what,
			      gc_xasprintf("profile '%s' (credential_process)", p->name), err);
out:
	gc_keypair_wipe_buf(&text);
	json_decref(j);
	argv_release(&a);
	free(what);
	return ret;
}

/* --- IMDSv2 --------------------------------------------------------------------------- */

/* 0 found; 1 not available here (*why); -1 a broken answer. */
static int imds_creds(struct aws_creds *out, struct chain *ch, char **why, struct gc_error *err)
{
	const struct gc_spec_env *env = ch->in->env;
	struct gc_http_response res;
	struct gc_error e;
	struct gc_metadata m;
	const char *v;
	char *base = NULL, *role = NULL, *path = NULL, *what = NULL;
	json_t *j = NULL;
	uint64_t n;
	int status, ret = 1;

	*why = NULL;
	if (gc_spec_env_true(env, "AWS_EC2_METADATA_DISABLED")) {
		*why = gc_xstrdup("disabled by AWS_EC2_METADATA_DISABLED");
		return 1;
	}
	if (!ch->in->http) {
		*why = gc_xstrdup("no HTTP client was given");
		return 1;
	}
	gc_error_init(&e);
	if ((v = gc_spec_env_get(env, "AWS_EC2_METADATA_SERVICE_ENDPOINT"))) {
		if (gc_creds_endpoint(&base, v, "AWS_EC2_METADATA_SERVICE_ENDPOINT", err) != 0)
			return -1;
	} else {
		v = gc_spec_env_get(env, "AWS_EC2_METADATA_SERVICE_ENDPOINT_MODE");
		base = gc_xstrdup(v && strcasecmp(v, "IPv6") == 0 ? IMDS_IPV6_ENDPOINT
								  : IMDS_DEFAULT_ENDPOINT);
	}
	/* short: on a laptop there is no IMDS, and every run would wait for it */
	m = (struct gc_metadata){ .cx = &ch->cx, .base = base, .timeout_ms = 1000, .attempts = 2 };
	if ((v = gc_spec_env_get(env, "AWS_METADATA_SERVICE_TIMEOUT")) &&
	    gc_parse_u64(v, 60, &n) == 0 && n > 0)
		m.timeout_ms = (long)n * 1000;
	if ((v = gc_spec_env_get(env, "AWS_METADATA_SERVICE_NUM_ATTEMPTS")) &&
	    gc_parse_u64(v, 10, &n) == 0 && n > 0)
		m.attempts = (unsigned)n;

	switch (gc_metadata_token(&m, "/latest/api/token",
				  "X-aws-ec2-metadata-token-ttl-seconds: " IMDS_TOKEN_TTL,
				  "X-aws-ec2-metadata-token", &status, &e)) {
	case -1: *why = gc_xasprintf("no usable answer from %s: %s", base, e.message); goto out;
	case 1: *why = gc_xasprintf("%s refused a session token (HTTP %d)", base, status); goto out;
	default: break;
	}
	if (gc_metadata_role(&m, IMDS_CREDS_PATH, "no IAM role is attached to this instance", false,
			     gc_creds_role_name_ok, &role, why) != 0)
		goto out;
	path = gc_xasprintf("%s%s", IMDS_CREDS_PATH, role);
	if (gc_metadata_request(&m, "GET", path, NULL, &res, &e) != 0) {
		*why = gc_xasprintf("%s failed: %s", base, e.message);
		goto out;
	}
	what = gc_xasprintf("the instance metadata service at %s (role '%s')", base, role);
	if (res.status != 200) {
		*why = gc_xasprintf("%s answered HTTP %d for the credentials of role '%s'", base,
				    res.status, role);
		gc_http_response_release(&res);
		goto out;
	}
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
	ret = creds_from_json(out, ch, j, "Token", what,
			      gc_xasprintf("instance metadata (role '%s')", role), err);
out:
	json_decref(j);
	gc_metadata_release(&m);
	free(role);
	free(path);
	free(what);
	free(base);
	return ret;
}

/* --- profiles ------------------------------------------------------------------------- */

static int from_profile(struct aws_creds *out, struct chain *ch, const char *name, const char *via,
			char **why, struct gc_error *err);

static int static_keys(struct aws_creds *out, struct chain *ch, const struct profile *p,
		       struct gc_error *err)
{
	const char *akid = pget(p, "aws_access_key_id");
	const char *secret = pget(p, "aws_secret_access_key");

	if (!akid || !secret)
		return gc_error_set(err, GC_EAUTH, "profile '%s' sets %s but not %s", p->name,
				    akid ? "aws_access_key_id" : "aws_secret_access_key",
				    akid ? "aws_secret_access_key" : "aws_access_key_id");
	gc_creds_set(&out->base, ch->in->log, akid, secret, pget(p, "aws_session_token"), 0,
		     gc_xasprintf("profile '%s'", p->name));
	return 0;
}

/* The credentials that sign a role profile's AssumeRole call. */
static int role_source(struct aws_creds *src, struct chain *ch, const struct profile *p,
		       struct gc_error *err)
{
	const char *source_profile = pget(p, "source_profile");
	const char *cs = pget(p, "credential_source");
	char *why = NULL;
	int rc;

	if (source_profile) {
		/* a profile may name itself to mean "my own keys sign for my role" */
		if (strcmp(source_profile, p->name) == 0 && pget(p, "aws_access_key_id"))
			return static_keys(src, ch, p, err);
		rc = from_profile(src, ch, source_profile, p->name, &why, err);
		free(why);
		return rc;
	}
	if (strcmp(cs, "Environment") == 0) {
		rc = env_keys(src, ch, &why, err);
		if (rc == 1)
			gc_error_set(err, GC_EAUTH,
				     "profile '%s' has credential_source Environment, but %s",
				     p->name, why);
		free(why);
		return rc == 0 ? 0 : -1;
	}
	if (strcmp(cs, "Ec2InstanceMetadata") == 0) {
		rc = imds_creds(src, ch, &why, err);
		if (rc == 1)
			gc_error_set(err, GC_EAUTH,
				     "profile '%s' has credential_source Ec2InstanceMetadata, but "
				     "the instance metadata service: %s",
				     p->name, why);
		free(why);
		return rc == 0 ? 0 : -1;
	}
	if (strcmp(cs, "EcsContainer") == 0)
		return gc_error_set(err, GC_EUNSUPPORTED,
				    "profile '%s' has credential_source EcsContainer: gpucluster "
				    "does not use the container credentials endpoint",
				    p->name);
	return gc_error_set(err, GC_EINVALID,
			    "profile '%s' has credential_source '%s'; expected Environment or "
			    "Ec2InstanceMetadata",
			    p->name, cs);
}

static int role_profile(struct aws_creds *out, struct chain *ch, const struct profile *p,
			const char *role_arn, struct gc_error *err)
{
	const char *source_profile = pget(p, "source_profile");
	const char *cs = pget(p, "credential_source");
	const char *token_file = pget(p, "web_identity_token_file");
	const char *session = pget(p, "role_session_name");
	const char *duration = pget(p, "duration_seconds");
	const char *external_id = pget(p, "external_id");
	struct gc_params params = GC_PARAMS_INIT;
	struct aws_creds src;
	struct sts_call call;
	char *what;
	int ret = -1;

	if (check_duration(duration, p->name, err) != 0)
		return -1;
	if (pget(p, "mfa_serial"))
		return gc_error_set(err, GC_EUNSUPPORTED,
				    "profile '%s' needs an MFA code (mfa_serial), which gpucluster "
				    "cannot ask for; use credentials from 'aws sts "
				    "get-session-token' or a credential_process instead",
				    p->name);
	if (source_profile && cs)
		return gc_error_set(err, GC_EINVALID,
				    "profile '%s' sets both source_profile and credential_source; "
				    "keep one",
				    p->name);
	what = gc_xasprintf("assume role '%s' for profile '%s'", role_arn, p->name);
	if (token_file && !source_profile && !cs) {
		ret = web_identity(
			out, ch, role_arn, token_file, session, duration, what,
			gc_xasprintf("profile '%s' (web identity, role '%s')", p->name, role_arn),
			err);
		free(what);
		return ret;
	}
	if (!source_profile && !cs) {
		free(what);
		return gc_error_set(err, GC_EINVALID,
				    "profile '%s' sets role_arn but none of source_profile, "
				    "credential_source or web_identity_token_file, so nothing can "
				    "sign the AssumeRole call",
				    p->name);
	}

	aws_creds_init(&src);
	if (role_source(&src, ch, p, err) != 0)
		goto out;
	role_params(&params, ch, role_arn, session, duration);
	if (external_id)
		gc_params_add(&params, "ExternalId", external_id);
	call = (struct sts_call){
		.action = "AssumeRole", .params = &params, .signer = &src, .what = what
	};
	ret = sts_credentials(out, ch, &call,
			      gc_xasprintf("profile '%s' (role '%s')", p->name, role_arn), err);
out:
	aws_creds_release(&src);
	gc_params_release(&params);
	free(what);
	return ret;
}

/*
 * Credentials from profile `name`: 0 found; 1 nothing to offer (*why says so), which
 * is an error when the profile is another one's source (via names that one).
 */
static int profile_creds(struct aws_creds *out, struct chain *ch, const struct profile *p,
			 const char *via, char **why, struct gc_error *err)
{
	const char *v;

	if ((v = pget(p, "role_arn")))
		return role_profile(out, ch, p, v, err);
	if (pget(p, "aws_access_key_id") || pget(p, "aws_secret_access_key"))
		return static_keys(out, ch, p, err);
	if ((v = pget(p, "credential_process")))
		return process_creds(out, ch, p, v, err);
	if (pget(p, "sso_session") || pget(p, "sso_start_url"))
		*why = gc_xasprintf(
			"it uses IAM Identity Center (sso_*), which gpucluster does not "
			"read; add credential_process = aws configure "
			"export-credentials --profile %s --format process",
			p->name);
	else
		*why = gc_xstrdup(
			"it has no aws_access_key_id, role_arn, web_identity_token_file or "
			"credential_process");
	if (via)
		return gc_error_set(err, GC_EAUTH,
				    "source_profile '%s' of profile '%s' gives no credentials: %s",
				    p->name, via, *why);
	return 1;
}

static int from_profile(struct aws_creds *out, struct chain *ch, const char *name, const char *via,
			char **why, struct gc_error *err)
{
	struct profile p;
	int rc;

	if (!profile_find(&ch->sh, name, &p)) {
		if (via)
			return gc_error_set(
				err, GC_EINVALID,
				"source_profile '%s' of profile '%s' not found in %s or %s", name,
				via, ch->sh.creds_name, ch->sh.config_name);
		*why = gc_xasprintf("no such profile in %s or %s", ch->sh.creds_name,
				    ch->sh.config_name);
		return 1;
	}
	if (gc_creds_stack_push(&ch->stack, name, NULL, err) != 0)
		return -1;
	rc = profile_creds(out, ch, &p, via, why, err);
	ch->stack.depth--;
	return rc;
}

/* --- the chain ------------------------------------------------------------------------ */

int aws_creds_resolve(struct aws_creds *out, const struct aws_config *cfg,
		      const struct aws_creds_input *in, struct gc_error *err)
{
	struct gc_creds_tried tried;
	struct aws_creds got;
	struct chain ch;
	const char *named_by, *name, *role_arn, *token_file;
	char *why = NULL;
	int rc = -1;

	ch = (struct chain){ .in = in, .cfg = cfg };
	ch.cx = (struct gc_creds_ctx){ .env = in->env,
				       .http = in->http,
				       .log = in->log,
				       .clock = in->clock,
				       .now = in->now ? in->now : (int64_t)time(NULL) };
	if (shared_load(&ch.sh, in, err) != 0)
		return -1;
	aws_creds_init(&got);
	gc_creds_tried_init(&tried);
	name = profile_name(in, &named_by);

	/* 0. the spec's OIDC role, in GitHub Actions: the spec asks for it by name */
	if (gc_creds_spec_oidc(&tried, in->oidc, in->env)) {
		char *what = gc_xasprintf("assume role '%s' (the spec's provider.oidc) "
					  "with the GitHub Actions OIDC token",
					  in->oidc->role);
		rc = actions_identity(
			&got, &ch, in->oidc->role, in->oidc->audience, in->oidc->session_name, what,
			gc_xasprintf("GitHub Actions OIDC (role '%s')", in->oidc->role), err);
		free(what);
		goto done;
	}

	/* 1. the environment, unless the spec names a profile */
	if (in->profile && *in->profile) {
		gc_creds_tried_add(&tried, "environment (skipped: the spec names profile '%s')",
				   name);
	} else {
		rc = env_keys(&got, &ch, &why, err);
		if (gc_creds_tried_stop(&tried, rc, &why, "environment"))
			goto done;
	}

	/* 2. the profile */
	if (named_by) {
		struct profile p;
		if (!profile_find(&ch.sh, name, &p)) {
			rc = missing_profile(&ch.sh, name, named_by, err);
			goto done;
		}
	}
	rc = from_profile(&got, &ch, name, NULL, &why, err);
	if (gc_creds_tried_stop(&tried, rc, &why, "profile '%s'", name))
		goto done;

	/* 3. web identity from the environment (GitHub Actions OIDC, EKS) */
	role_arn = gc_spec_env_get(in->env, "AWS_ROLE_ARN");
	token_file = gc_spec_env_get(in->env, "AWS_WEB_IDENTITY_TOKEN_FILE");
	if (role_arn && token_file) {
		char *what =
			gc_xasprintf("assume role '%s' (AWS_ROLE_ARN) with web identity", role_arn);
		rc = web_identity(&got, &ch, role_arn, token_file,
				  gc_spec_env_get(in->env, "AWS_ROLE_SESSION_NAME"), NULL, what,
				  gc_xasprintf("web identity (role '%s')", role_arn), err);
		free(what);
		goto done;
	}
	/* GitHub Actions without a token file: the runner's token service gives one */
	if (role_arn && gc_oidc_available(in->env)) {
		char *what = gc_xasprintf("assume role '%s' (AWS_ROLE_ARN) with the GitHub Actions "
					  "OIDC token",
					  role_arn);
		rc = actions_identity(&got, &ch, role_arn, in->oidc ? in->oidc->audience : NULL,
				      gc_spec_env_get(in->env, "AWS_ROLE_SESSION_NAME"), what,
				      gc_xasprintf("GitHub Actions OIDC (role '%s')", role_arn),
				      err);
		free(what);
		goto done;
	}
	gc_creds_tried_add(&tried, "web identity (%s not set)",
			   role_arn ? "AWS_WEB_IDENTITY_TOKEN_FILE" : "AWS_ROLE_ARN");

	/* 4. the container endpoint is not used; say so when it is configured */
	if (gc_spec_env_get(in->env, "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI") ||
	    gc_spec_env_get(in->env, "AWS_CONTAINER_CREDENTIALS_FULL_URI"))
		gc_creds_tried_add(&tried,
				   "container credentials (set, but gpucluster does not use them)");

	/* 5. the instance's role */
	rc = imds_creds(&got, &ch, &why, err);
	if (gc_creds_tried_stop(&tried, rc, &why, "instance metadata"))
		goto done;
	rc = gc_creds_tried_fail(&tried, "AWS", err);
done:
	free(why);
	gc_creds_tried_release(&tried);
	shared_release(&ch.sh);
	return gc_creds_finish(&out->base, &got.base, rc, &ch.cx, "aws");
}
