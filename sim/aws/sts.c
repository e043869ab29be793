/*
 * sts.c: AWS STS, Query API 2011-06-15, on the emulator's AWS port: AssumeRole,
 * AssumeRoleWithWebIdentity and GetCallerIdentity, so the credential chain's role
 * profiles, CI's web identity and the EC2 calls made with the temporary keys run end to
 * end without an account. XML shapes and error codes are STS's (docs/sim.md, "AWS STS").
 *
 * Temporary credentials need no table: the session token carries the key id, the expiry
 * and the assumed-role ARN, sealed as sim.h describes (sim_session_seal); the secret is
 * an HMAC of the key id under the same key, so any frontend can check a request made
 * with them (sim_aws_secret).
 *
 * The emulator's IAM is one account (cfg.aws_account): any well-formed role ARN in it
 * may be assumed by any caller, a role in another account is AccessDenied. The account
 * has one OpenID Connect provider, the emulator's own issuer (sim/oidc.h), trusting
 * sts.amazonaws.com unless configured: web identity tokens are checked as STS checks
 * them (issuer, signature, claims, expiry, audience) by sim_oidc_verify.
 *
 * A pure function of (sim, request); safe from any connection thread.
 */
#include <libxml/xmlwriter.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "core/alloc.h"
#include "core/hash.h"
#include "core/str.h"
#include "sim/aws/aws.h"
#include "sim/catalog.h"
#include "sim/oidc.h"
#include "sim/sim.h"

#define STS_VERSION	  "2011-06-15"
#define STS_XMLNS	  "https://sts.amazonaws.com/doc/2011-06-15/"
#define STS_TOKEN_MAGIC	  "gcsim1"
#define STS_TOKEN_MAX	  4096	/* a session token we could have issued is far shorter */
#define STS_JWT_MAX	  20000 /* STS's own limit on WebIdentityToken */
#define STS_ARN_MAX	  2048
#define STS_CHAINED_MAX_S 3600 /* role chaining caps a session at one hour */
#define STS_USER_NAME	  "gpucluster-sim"

static const char base32[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";

/* --- sealed session tokens (sim_session_seal) ------------------------------------------ */

enum session_check {
	SESSION_OK = 0,
	SESSION_UNKNOWN, /* not a temporary key id, or no token */
	SESSION_INVALID, /* a token we did not issue, or not for this key id */
	SESSION_EXPIRED,
};

static void derive_secret(const struct sim *sim, const char *key_id, char out[SIM_AWS_SECRET_MAX])
{
	struct gc_buf text = GC_BUF_INIT(256);
	struct gc_buf b64 = GC_BUF_INIT(128);
	unsigned char mac[GC_SHA256_LEN];

	gc_buf_addf(&text, "secret\n%s", key_id);
	gc_hmac_sha256(sim->cfg.sts_key, sizeof(sim->cfg.sts_key), text.data, text.len, mac);
	gc_base64_encode(&b64, mac, sizeof(mac));
	/* 40 characters, the length of a real secret access key */
	snprintf(out, SIM_AWS_SECRET_MAX, "%.40s", b64.data);
	gc_buf_release(&text);
	gc_buf_release(&b64);
}

static char *seal(const struct sim *sim, const struct sim_session *s)
{
	return sim_session_seal(sim, "", STS_TOKEN_MAGIC, s);
}

static enum session_check unseal(const struct sim *sim, const char *key_id, const char *token,
				 int64_t now, struct sim_session *out)
{
	if (!key_id || !gc_starts_with(key_id, "ASIA") || !token || !*token)
		return SESSION_UNKNOWN;
	if (strlen(token) > STS_TOKEN_MAX)
		return SESSION_INVALID;
	switch (sim_session_open(sim, "", STS_TOKEN_MAGIC, token, key_id, now, out)) {
	case SIM_SESSION_OK: return SESSION_OK;
	case SIM_SESSION_EXPIRED: return SESSION_EXPIRED;
	default: return SESSION_INVALID;
	}
}

const char *sim_aws_secret(const struct sim *sim, const char *key_id, const char *token,
			   int64_t now, char out[SIM_AWS_SECRET_MAX])
{
	const char *s = sim_cred_secret(sim, SIM_AWS, key_id);
	struct sim_session sess;

	if (s)
		return s;
	if (unseal(sim, key_id, token, now, &sess) != SESSION_OK)
		return NULL;
	derive_secret(sim, key_id, out);
	return out;
}

/* --- routing -------------------------------------------------------------------------- */

/* The service of the credential scope in an Authorization value, without allocating:
 * "AWS4-HMAC-SHA256 Credential=AKID/DATE/REGION/SERVICE/aws4_request, ..." */
static bool scope_is(const char *authz, const char *service)
{
	const char *cred = strstr(authz, "Credential=");
	size_t n = strlen(service);

	if (!cred)
		return false;
	cred += strlen("Credential=");
	for (int slash = 0; slash < 3; slash++) {
		cred += strcspn(cred, "/, ");
		if (*cred != '/')
			return false;
		cred++;
	}
	return strncmp(cred, service, n) == 0 && cred[n] == '/';
}

/* STS's actions; none of them is also an EC2 action. */
static bool sts_action(const char *action)
{
	static const char *const names[] = {
		"AssumeRole",	     "AssumeRoleWithSAML",	   "AssumeRoleWithWebIdentity",
		"AssumeRoot",	     "DecodeAuthorizationMessage", "GetAccessKeyInfo",
		"GetCallerIdentity", "GetFederationToken",	   "GetSessionToken",
	};

	for (size_t i = 0; action && i < sizeof(names) / sizeof(names[0]); i++)
		if (strcmp(action, names[i]) == 0)
			return true;
	return false;
}

bool sim_sts_wants(const struct sim_req *req)
{
	const char *authz = gc_params_get_ci(req->headers, "Authorization");
	struct gc_params form = GC_PARAMS_INIT;
	const char *action;
	bool yes;

	if (authz)
		return scope_is(authz, "sts");
	/* unsigned: STS answers its own actions (AssumeRoleWithWebIdentity needs no
	 * signature; the others get STS's MissingAuthenticationToken) */
	action = req->query ? gc_params_get(req->query, "Action") : NULL;
	if (action)
		return sts_action(action);
	if (!req->body_len || memchr(req->body, '\0', req->body_len) ||
	    gc_params_parse(&form, req->body, req->body_len, GC_URLDEC_FORM, NULL) != 0)
		return false;
	yes = sts_action(gc_params_get(&form, "Action"));
	gc_params_release(&form);
	return yes;
}

/* --- responses ------------------------------------------------------------------------ */

struct sts {
	struct sim *sim;
	const struct sim_req *req;
	struct sim_resp *resp;
	struct gc_params p;
	const char *action;
	char rid[37];
	int64_t now;
	struct sim_aws_xml x; /* the response being written */
	/* the caller, once authenticated */
	char caller_arn[SIM_SESSION_ARN_MAX];
	bool caller_is_role;
};

/* Replaces whatever was being written with STS's error document; returns -1. */
__attribute__((format(printf, 4, 5))) static int sts_fail(struct sts *c, int status,
							  const char *code, const char *fmt, ...)
{
	xmlTextWriterPtr w;
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	sim_aws_xml_discard(&c->x);
	sim_aws_xml_start(&c->x);
	w = c->x.w;
	xmlTextWriterStartElement(w, BAD_CAST "ErrorResponse");
	xmlTextWriterWriteAttribute(w, BAD_CAST "xmlns", BAD_CAST STS_XMLNS);
	xmlTextWriterStartElement(w, BAD_CAST "Error");
	xmlTextWriterWriteElement(w, BAD_CAST "Type",
				  BAD_CAST(status >= 500 ? "Receiver" : "Sender"));
	xmlTextWriterWriteElement(w, BAD_CAST "Code", BAD_CAST code);
	xmlTextWriterWriteElement(w, BAD_CAST "Message", BAD_CAST msg);
	xmlTextWriterEndElement(w);
	xmlTextWriterWriteElement(w, BAD_CAST "RequestId", BAD_CAST c->rid);
	sim_aws_xml_send(&c->x, c->resp, status);
	snprintf(c->resp->error_code, sizeof(c->resp->error_code), "%s", code);
	return -1;
}

static int invalid(struct sts *c, const char *what, const char *value, const char *constraint)
{
	if (!value)
		return sts_fail(c, 400, "ValidationError",
				"1 validation error detected: Value null at '%s' failed to "
				"satisfy constraint: Member must not be null",
				what);
	return sts_fail(c, 400, "ValidationError",
			"1 validation error detected: Value '%s' at '%s' failed to satisfy "
			"constraint: %s",
			value, what, constraint);
}

static void begin(struct sts *c)
{
	char name[96];

	snprintf(name, sizeof(name), "%sResponse", c->action);
	sim_aws_xml_start(&c->x);
	xmlTextWriterStartElement(c->x.w, BAD_CAST name);
	xmlTextWriterWriteAttribute(c->x.w, BAD_CAST "xmlns", BAD_CAST STS_XMLNS);
	snprintf(name, sizeof(name), "%sResult", c->action);
	xmlTextWriterStartElement(c->x.w, BAD_CAST name);
}

static void finish(struct sts *c)
{
	xmlTextWriterEndElement(c->x.w); /* ...Result */
	xmlTextWriterStartElement(c->x.w, BAD_CAST "ResponseMetadata");
	xmlTextWriterWriteElement(c->x.w, BAD_CAST "RequestId", BAD_CAST c->rid);
	xmlTextWriterEndElement(c->x.w);
	sim_aws_xml_send(&c->x, c->resp, 200);
}

static void el(struct sts *c, const char *name, const char *text)
{
	xmlTextWriterWriteElement(c->x.w, BAD_CAST name, BAD_CAST text);
}

static void iso8601(int64_t t, char out[32])
{
	time_t tt = (time_t)t;
	struct tm tm;

	if (!gmtime_r(&tt, &tm) || !strftime(out, 32, "%Y-%m-%dT%H:%M:%SZ", &tm))
		snprintf(out, 32, "1970-01-01T00:00:00Z");
}

/* "PREFIX" + 17 base32 characters derived from text: stable ids (AROA..., AIDA...). */
static void derived_id(const char *prefix, const char *text, char out[32])
{
	unsigned char h[GC_SHA256_LEN];
	size_t n = strlen(prefix);

	gc_sha256(text, strlen(text), h);
	snprintf(out, 32, "%s", prefix);
	for (size_t i = 0; i < 17; i++)
		out[n + i] = base32[h[i] % 32];
	out[n + 17] = '\0';
}

/* The AROA... id of the role behind an assumed-role ARN (the ARN without its session). */
static void role_id_of(const char *assumed_arn, char out[32])
{
	const char *slash = strrchr(assumed_arn, '/');
	char *role = gc_xstrndup(assumed_arn, slash ? (size_t)(slash - assumed_arn) : 0);

	derived_id("AROA", role, out);
	free(role);
}

/* --- authentication ------------------------------------------------------------------- */

static int authenticate(struct sts *c)
{
	const struct sim_req *req = c->req;
	const char *authz = gc_params_get_ci(req->headers, "Authorization");
	const char *date = gc_params_get_ci(req->headers, "X-Amz-Date");
	const char *token = gc_params_get_ci(req->headers, "X-Amz-Security-Token");
	char secret[SIM_AWS_SECRET_MAX];
	struct aws_sigv4_auth auth;
	struct sim_session sess;
	struct gc_error err;
	const char *known;
	int64_t t;
	int ret = -1;

	gc_error_init(&err);
	if (!authz)
		return sts_fail(c, 403, "MissingAuthenticationToken",
				"Request is missing Authentication Token");
	if (sim_aws_parse_authorization(authz, &auth, &err) != 0)
		return sts_fail(c, 400, "IncompleteSignature",
				"Authorization header is malformed: %s", err.message);
	if (!date || sim_aws_parse_amz_date(date, &t) != 0) {
		sts_fail(c, 400, "IncompleteSignature",
			 "Authorization header requires a valid 'X-Amz-Date' header");
		goto out;
	}
	if (!sim_aws_fresh(t, c->now)) {
		char nowtxt[AWS_SIGV4_TIMESTAMP_LEN + 1];
		aws_sigv4_format_time((time_t)c->now, nowtxt);
		sts_fail(c, 403, "SignatureDoesNotMatch",
			 "Signature expired: %s is now earlier or later than %s +/- 15 min.", date,
			 nowtxt);
		goto out;
	}
	if (strcmp(auth.service, "sts") != 0 || !sim_catalog_region(SIM_AWS, auth.region)) {
		sts_fail(c, 403, "SignatureDoesNotMatch",
			 "Credential should be scoped to a valid region and the service 'sts'.");
		goto out;
	}
	known = sim_cred_secret(c->sim, SIM_AWS, auth.access_key_id);
	if (known) {
		snprintf(secret, sizeof(secret), "%s", known);
		snprintf(c->caller_arn, sizeof(c->caller_arn), "arn:aws:iam::%s:user/%s",
			 c->sim->cfg.aws_account, STS_USER_NAME);
	} else {
		switch (unseal(c->sim, auth.access_key_id, token, c->now, &sess)) {
		case SESSION_OK: break;
		case SESSION_EXPIRED:
			sts_fail(c, 400, "ExpiredToken",
				 "The security token included in the request is expired");
			goto out;
		default:
			sts_fail(c, 403, "InvalidClientTokenId",
				 "The security token included in the request is invalid.");
			goto out;
		}
		derive_secret(c->sim, auth.access_key_id, secret);
		snprintf(c->caller_arn, sizeof(c->caller_arn), "%s", sess.arn);
		c->caller_is_role = true;
	}
	if (sim_aws_verify(req, &auth, secret, &err) != 0) {
		if (err.code == GC_EAUTH)
			sts_fail(c, 403, "SignatureDoesNotMatch",
				 "The request signature we calculated does not match the signature "
				 "you provided. Check your AWS Secret Access Key and signing "
				 "method. Consult the service documentation for details.");
		else
			sts_fail(c, 400, "IncompleteSignature", "%s", err.message);
		goto out;
	}
	ret = 0;
out:
	aws_sigv4_auth_release(&auth);
	return ret;
}

/* --- the actions ---------------------------------------------------------------------- */

static bool chars_in(const char *s, const char *extra)
{
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || *s == '_' || strchr(extra, *s)))
			return false;
	return true;
}

/* A role ARN: arn:PARTITION:iam::ACCOUNT:role/[PATH/]NAME. Fills its parts. */
static bool parse_role_arn(const char *arn, char partition[16], char account[16], const char **name)
{
	const char *p = arn, *colon;
	size_t n = strlen(arn);

	if (n < 20 || n > STS_ARN_MAX || !gc_starts_with(p, "arn:"))
		return false;
	p += 4;
	colon = strchr(p, ':');
	if (!colon || colon - p < 3 || colon - p > 15)
		return false;
	snprintf(partition, 16, "%.*s", (int)(colon - p), p);
	if (strcmp(partition, "aws") && strcmp(partition, "aws-cn") &&
	    strcmp(partition, "aws-us-gov"))
		return false;
	p = colon + 1;
	if (!gc_starts_with(p, "iam::"))
		return false;
	p += 5;
	if (strspn(p, "0123456789") != 12 || p[12] != ':')
		return false;
	snprintf(account, 16, "%.12s", p);
	p += 13;
	if (!gc_starts_with(p, "role/") || !p[5] || !chars_in(p + 5, "+=,.@/-") ||
	    p[strlen(p) - 1] == '/')
		return false;
	*name = strrchr(p, '/') + 1;
	return true;
}

/* DurationSeconds: absent is 3600; out of 900..43200 is a validation error. */
static int duration(struct sts *c, int64_t *out)
{
	const char *v = gc_params_get(&c->p, "DurationSeconds");
	int64_t d;

	*out = 3600;
	if (!v)
		return 0;
	if (gc_parse_i64(v, INT64_MIN, INT64_MAX, &d) != 0)
		return invalid(c, "durationSeconds", v, "Member must be a number");
	if (d < 900)
		return invalid(c, "durationSeconds", v,
			       "Member must have value greater than or equal to 900");
	if (d > 43200)
		return invalid(c, "durationSeconds", v,
			       "Member must have value less than or equal to 43200");
	*out = d;
	return 0;
}

/* Checks RoleArn and RoleSessionName; the assumed-role ARN into arn. */
static int role_and_session(struct sts *c, char *arn, size_t arn_size, char role_id[32])
{
	const char *role = gc_params_get(&c->p, "RoleArn");
	const char *session = gc_params_get(&c->p, "RoleSessionName");
	char partition[16], account[16];
	const char *name;

	if (!role)
		return invalid(c, "roleArn", NULL, NULL);
	if (!session)
		return invalid(c, "roleSessionName", NULL, NULL);
	if (strlen(session) < 2 || strlen(session) > 64)
		return invalid(c, "roleSessionName", session,
			       "Member must have length between 2 and 64");
	if (!chars_in(session, "+=,.@-"))
		return invalid(c, "roleSessionName", session,
			       "Member must satisfy regular expression pattern: [\\w+=,.@-]*");
	if (!parse_role_arn(role, partition, account, &name))
		return sts_fail(c, 400, "ValidationError", "%s is invalid", role);
	if (strcmp(account, c->sim->cfg.aws_account) != 0)
		return sts_fail(c, 403, "AccessDenied",
				"User: %s is not authorized to perform: sts:%s on resource: %s",
				c->caller_arn[0] ? c->caller_arn : "anonymous", c->action, role);
	snprintf(arn, arn_size, "arn:%s:sts::%s:assumed-role/%s/%s", partition, account, name,
		 session);
	role_id_of(arn, role_id);
	return 0;
}

/* Issues credentials for the assumed-role ARN until expiry and writes them with the
 * AssumedRoleUser block. */
static void write_session(struct sts *c, const char *arn, const char *role_id, int64_t expiry)
{
	struct sim_session s;
	char secret[SIM_AWS_SECRET_MAX], when[32], id[80];
	unsigned char rnd[16];
	char *token;

	memset(&s, 0, sizeof(s));
	if (gc_random_bytes(rnd, sizeof(rnd)) != 0)
		memset(rnd, 0x5a, sizeof(rnd));
	memcpy(s.key_id, "ASIA", 4);
	for (size_t i = 0; i < 16; i++)
		s.key_id[4 + i] = base32[rnd[i] % 32];
	s.expiry = expiry;
	snprintf(s.arn, sizeof(s.arn), "%s", arn);
	token = seal(c->sim, &s);
	derive_secret(c->sim, s.key_id, secret);
	iso8601(expiry, when);
	snprintf(id, sizeof(id), "%s:%s", role_id, strrchr(arn, '/') + 1);

	xmlTextWriterStartElement(c->x.w, BAD_CAST "AssumedRoleUser");
	el(c, "AssumedRoleId", id);
	el(c, "Arn", arn);
	xmlTextWriterEndElement(c->x.w);
	xmlTextWriterStartElement(c->x.w, BAD_CAST "Credentials");
	el(c, "AccessKeyId", s.key_id);
	el(c, "SecretAccessKey", secret);
	el(c, "SessionToken", token);
	el(c, "Expiration", when);
	xmlTextWriterEndElement(c->x.w);
	free(token);
}

static int assume_role(struct sts *c)
{
	const char *external = gc_params_get(&c->p, "ExternalId");
	char arn[STS_ARN_MAX + 128], role_id[32];
	int64_t d;

	if (role_and_session(c, arn, sizeof(arn), role_id) != 0 || duration(c, &d) != 0)
		return -1;
	if (external &&
	    (strlen(external) < 2 || strlen(external) > 1224 || !chars_in(external, "+=,.@:/-")))
		return invalid(c, "externalId", external,
			       "Member must have length between 2 and 1224 and satisfy regular "
			       "expression pattern: [\\w+=,.@:\\/-]*");
	if (c->caller_is_role && d > STS_CHAINED_MAX_S)
		return sts_fail(c, 400, "ValidationError",
				"The requested DurationSeconds exceeds the 1 hour session limit "
				"for roles assumed by role chaining.");
	begin(c);
	write_session(c, arn, role_id, c->now + d);
	finish(c);
	return 0;
}

static int assume_role_with_web_identity(struct sts *c)
{
	const char *jwt = gc_params_get(&c->p, "WebIdentityToken");
	char arn[STS_ARN_MAX + 128], role_id[32];
	struct sim_jwt j;
	int64_t d;

	if (!jwt)
		return invalid(c, "webIdentityToken", NULL, NULL);
	if (strlen(jwt) < 4 || strlen(jwt) > STS_JWT_MAX)
		return sts_fail(c, 400, "ValidationError",
				"1 validation error detected: Value at 'webIdentityToken' failed "
				"to satisfy constraint: Member must have length between 4 and %d",
				STS_JWT_MAX);
	/* STS finds the identity provider by the token's issuer, in the role's account */
	switch (sim_oidc_verify(c->sim, SIM_AWS, jwt, c->now, &j)) {
	case SIM_JWT_OK: break;
	case SIM_JWT_MALFORMED:
		return sts_fail(c, 400, "InvalidIdentityToken", "Couldn't parse the token");
	case SIM_JWT_ISSUER:
		return sts_fail(c, 400, "InvalidIdentityToken",
				"No OpenIDConnect provider found in your account for %s", j.iss);
	case SIM_JWT_CLAIMS:
		return sts_fail(c, 400, "InvalidIdentityToken", "Missing a required claim: %s",
				strrchr(j.why, ' ') + 1);
	case SIM_JWT_EXPIRED:
		return sts_fail(c, 400, "ExpiredTokenException",
				"Token expired: current date/time %lld must be before the "
				"expiration date/time %lld",
				(long long)c->now, (long long)j.exp);
	case SIM_JWT_AUDIENCE:
		return sts_fail(c, 400, "InvalidIdentityToken", "Incorrect token audience");
	case SIM_JWT_ALGORITHM:
	case SIM_JWT_SIGNATURE:
	case SIM_JWT_NOT_YET:
	default:
		return sts_fail(c, 400, "InvalidIdentityToken", "The token is not valid: %s",
				j.why);
	}
	if (role_and_session(c, arn, sizeof(arn), role_id) != 0 || duration(c, &d) != 0)
		return -1;
	begin(c);
	el(c, "SubjectFromWebIdentityToken", j.sub);
	el(c, "Audience", j.aud);
	write_session(c, arn, role_id, c->now + d);
	/* for OpenID Connect tokens, the issuer (ProviderId is for OAuth 2.0 tokens) */
	el(c, "Provider", j.iss);
	finish(c);
	return 0;
}

static int get_caller_identity(struct sts *c)
{
	char user_id[96], id[32];
	const char *slash = strrchr(c->caller_arn, '/');

	if (c->caller_is_role) {
		/* the role's id, then the session name, as STS shows an assumed role */
		role_id_of(c->caller_arn, id);
		snprintf(user_id, sizeof(user_id), "%s:%s", id, slash ? slash + 1 : "");
	} else {
		derived_id("AIDA", c->caller_arn, id);
		snprintf(user_id, sizeof(user_id), "%s", id);
	}
	begin(c);
	el(c, "Arn", c->caller_arn);
	el(c, "UserId", user_id);
	el(c, "Account", c->sim->cfg.aws_account);
	finish(c);
	return 0;
}

/* --- the entry point ------------------------------------------------------------------ */

static void log_params(struct sts *c)
{
	json_t *o = json_object();

	for (size_t i = 0; i < c->p.n; i++) {
		const char *n = c->p.items[i].name, *v = c->p.items[i].value;
		char note[64];

		if (!strcmp(n, "Action") || !strcmp(n, "Version") || gc_starts_with(n, "X-Amz-"))
			continue;
		if (!strcmp(n, "WebIdentityToken")) {
			/* a bearer token: whoever reads the log could use it */
			snprintf(note, sizeof(note), "<redacted: %zu characters>", strlen(v));
			v = note;
		}
		json_object_set_new(o, n, json_string(v));
	}
	c->resp->log_params = o;
}

static void handle(struct sts *c)
{
	static const struct {
		const char *name;
		int (*fn)(struct sts *c);
		bool is_signed;
	} actions[] = {
		{ "AssumeRole", assume_role, true },
		{ "AssumeRoleWithWebIdentity", assume_role_with_web_identity, false },
		{ "GetCallerIdentity", get_caller_identity, true },
	};
	const struct sim_req *req = c->req;
	const char *version;
	struct sim_fault_hit hit;
	struct gc_error err;
	int a = -1;

	gc_error_init(&err);
	if (req->body_len &&
	    (memchr(req->body, '\0', req->body_len) ||
	     gc_params_parse(&c->p, req->body, req->body_len, GC_URLDEC_FORM, &err) != 0)) {
		sts_fail(c, 400, "MalformedQueryString", "The request body is malformed");
		return;
	}
	if (req->query)
		gc_params_add_all(&c->p, req->query);
	log_params(c);
	c->action = gc_params_get(&c->p, "Action");
	version = gc_params_get(&c->p, "Version");
	snprintf(c->resp->action, sizeof(c->resp->action), "%s", c->action ? c->action : "");
	snprintf(c->resp->version, sizeof(c->resp->version), "%s", version ? version : "");

	for (size_t i = 0; c->action && i < sizeof(actions) / sizeof(actions[0]); i++)
		if (strcmp(actions[i].name, c->action) == 0)
			a = (int)i;
	if ((a < 0 || actions[a].is_signed) && authenticate(c) != 0)
		return;
	if (!c->action || !*c->action) {
		sts_fail(c, 400, "MissingAction", "The request must contain the parameter Action");
		return;
	}
	if (a < 0 || !version || strcmp(version, STS_VERSION) != 0) {
		sts_fail(c, 400, "InvalidAction", "Could not find operation %s for version %s",
			 c->action, version ? version : "NO_VERSION_SPECIFIED");
		return;
	}

	sim_faults_check(c->sim->faults, SIM_AWS, c->action, 0, &hit);
	switch (hit.kind) {
	case SIM_FAULT_THROTTLE: sts_fail(c, 400, "Throttling", "Rate exceeded"); return;
	case SIM_FAULT_5XX:
		if (!hit.after) {
			sts_fail(c, 500, "InternalFailure",
				 "The request processing has failed because of an unknown error, "
				 "exception or failure.");
			return;
		}
		break;
	case SIM_FAULT_DROP:
		if (!hit.after) {
			c->resp->drop = true;
			return;
		}
		break;
	case SIM_FAULT_SLOW: c->resp->delay_ms += hit.delay_ms; break;
	default: break; /* capacity and quota mean nothing to STS */
	}

	actions[a].fn(c);

	if (hit.after && hit.kind == SIM_FAULT_5XX)
		sts_fail(c, 500, "InternalFailure",
			 "The request processing has failed because of an unknown error, "
			 "exception or failure.");
	else if (hit.after && hit.kind == SIM_FAULT_DROP)
		c->resp->drop = true;
}

void sim_sts_handle(struct sim *sim, const struct sim_req *req, struct sim_resp *resp)
{
	struct sts c;

	memset(&c, 0, sizeof(c));
	c.sim = sim;
	c.req = req;
	c.resp = resp;
	c.now = (int64_t)req->now + sim->cfg.clock_offset_s;
	gc_params_init(&c.p);
	sim_request_id(sim, false, c.rid);
	resp->content_type = "text/xml";
	handle(&c);
	sim_aws_xml_discard(&c.x);
	gc_params_release(&c.p);
}
