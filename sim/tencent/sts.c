/*
 * sts.c: Tencent Cloud STS (2018-08-13) on the emulator's Tencent port:
 * AssumeRoleWithWebIdentity, which the SDKs send unsigned (Authorization: SKIP), so
 * GitHub Actions' and TKE's OIDC tokens run end to end without an account; and the
 * temporary keys it issues (TmpSecretId, TmpSecretKey, Token), which CVM and VPC on the
 * same port accept with their X-TC-Token until they expire (tc_sts_secret). cvm.c tells
 * STS apart by the version a request names.
 *
 * As for AWS and Alibaba, the temporary keys need no table: the token carries the key
 * id, the expiry and the assumed role, sealed as sim.h describes (sim_session_seal); the
 * secret is derived from the key id under the same key.
 *
 * The emulator's CAM is one account (TC_SIM_UIN): any well-formed role ARN in it may be
 * assumed; a role in another account is ResourceNotFound.RoleNotFound. Its one OIDC
 * identity provider is the emulator's own issuer under the ProviderId
 * SIM_OIDC_TENCENT_PROVIDER, trusting sts.cloud.tencent.com unless configured
 * (sim/oidc.h). Every token problem is InvalidParameter.WebIdentityTokenError, as the
 * real STS answers it, with a message saying which check failed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/str.h"
#include "sim/oidc.h"
#include "sim/tencent/cvm.h"

#define TC_SIM_UIN	"100000000001"
#define STS_TOKEN_MAGIC "gcsimtc1"
#define STS_KEY_PREFIX	"AKID"
#define STS_DEFAULT_S	7200
#define STS_MAX_S	43200
#define STS_SESSION_MAX 64

static const char alnum[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

static void derive_secret(const struct sim *sim, const char *key_id, char out[TC_STS_SECRET_MAX])
{
	char text[160];

	snprintf(text, sizeof(text), "tc-secret\n%s", key_id);
	sim_session_derive(sim, text, alnum, out, 32);
}

const char *tc_sts_secret(const struct sim *sim, const char *key_id, const char *token, int64_t now,
			  char out[TC_STS_SECRET_MAX], const char **code)
{
	struct sim_session s;

	*code = "AuthFailure.SecretIdNotFound";
	if (!key_id || !gc_starts_with(key_id, STS_KEY_PREFIX) || !token || !*token)
		return NULL;
	switch (sim_session_open(sim, "", STS_TOKEN_MAGIC, token, key_id, now, &s)) {
	case SIM_SESSION_OK: break;
	case SIM_SESSION_EXPIRED: *code = "AuthFailure.TokenFailure"; return NULL;
	default: *code = "AuthFailure.TokenFailure"; return NULL;
	}
	derive_secret(sim, key_id, out);
	*code = NULL;
	return out;
}

/* qcs::cam::uin/UIN:roleName/NAME or qcs::cam::uin/UIN:role/ID: the account and the name. */
static bool parse_role_arn(const char *arn, char uin[32], char name[160])
{
	const char *p = arn;
	size_t n;

	if (!gc_starts_with(p, "qcs::cam::uin/"))
		return false;
	p += strlen("qcs::cam::uin/");
	n = strspn(p, "0123456789");
	if (n == 0 || n >= 32 || p[n] != ':')
		return false;
	snprintf(uin, 32, "%.*s", (int)n, p);
	p += n + 1;
	if (gc_starts_with(p, "roleName/"))
		p += strlen("roleName/");
	else if (gc_starts_with(p, "role/") && strspn(p + 5, "0123456789") == strlen(p + 5))
		p += strlen("role/");
	else
		return false;
	n = strlen(p);
	if (n == 0 || n > 128 ||
	    strspn(p, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_+=,.@-") != n)
		return false;
	snprintf(name, 160, "%s", p);
	return true;
}

static bool session_name_ok(const char *s)
{
	size_t n = strlen(s);

	return n >= 2 && n <= STS_SESSION_MAX &&
		strspn(s,
		       "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_+=,.@-") ==
		n;
}

static int assume_role_with_web_identity(struct tc_call *c)
{
	const char *provider, *token, *arn, *session;
	char uin[32], role[160], secret[TC_STS_SECRET_MAX], seed[256], when[32];
	int64_t now = (int64_t)c->req->now + c->sim->cfg.clock_offset_s, duration;
	struct sim_session s;
	struct sim_jwt j;
	char *sealed;

	if (tc_need_str(c, "ProviderId", &provider) || tc_need_str(c, "WebIdentityToken", &token) ||
	    tc_need_str(c, "RoleArn", &arn) || tc_need_str(c, "RoleSessionName", &session))
		return -1;
	if (tc_int(c, "DurationSeconds", 1, INT32_MAX, STS_DEFAULT_S, &duration))
		return -1;
	if (duration > STS_MAX_S)
		return tc_fail(c, "InvalidParameter.OverTimeError",
			       "DurationSeconds %lld is over the longest session, %d seconds.",
			       (long long)duration, STS_MAX_S);
	if (!parse_role_arn(arn, uin, role))
		return tc_fail(c, "InvalidParameter.ParamError",
			       "RoleArn '%s' is not qcs::cam::uin/UIN:roleName/NAME.", arn);
	if (!session_name_ok(session))
		return tc_fail(c, "InvalidParameter.ParamError",
			       "RoleSessionName must be 2-64 characters of letters, digits and "
			       "_+=,.@-.");
	if (strcmp(provider, SIM_OIDC_TENCENT_PROVIDER) != 0 || !c->sim->oidc)
		return tc_fail(c, "InvalidParameter.WebIdentityTokenError",
			       "ProviderId '%s' is no identity provider of the account.", provider);
	if (sim_oidc_verify(c->sim, SIM_TENCENT, token, now, &j) != SIM_JWT_OK)
		return tc_fail(c, "InvalidParameter.WebIdentityTokenError",
			       "The WebIdentityToken is not valid: %s.", j.why);
	if (strcmp(uin, TC_SIM_UIN) != 0)
		return tc_fail(c, "ResourceNotFound.RoleNotFound",
			       "The role '%s' does not exist in account %s.", arn, TC_SIM_UIN);

	memset(&s, 0, sizeof(s));
	/* unique per call: the request id is random */
	snprintf(seed, sizeof(seed), "tc-key\n%s\n%s", c->request_id, session);
	snprintf(s.key_id, sizeof(s.key_id), STS_KEY_PREFIX);
	sim_session_derive(c->sim, seed, alnum, s.key_id + strlen(STS_KEY_PREFIX), 32);
	s.expiry = now + duration;
	snprintf(s.arn, sizeof(s.arn), "qcs::sts:%s:assumed-role/%s/%s", TC_SIM_UIN, role, session);
	sealed = sim_session_seal(c->sim, "", STS_TOKEN_MAGIC, &s);
	derive_secret(c->sim, s.key_id, secret);
	tc_format_time(s.expiry, true, when);
	c->out = json_pack("{s:I, s:s, s:{s:s, s:s, s:s}}", "ExpiredTime", (json_int_t)s.expiry,
			   "Expiration", when, "Credentials", "Token", sealed, "TmpSecretId",
			   s.key_id, "TmpSecretKey", secret);
	free(sealed);
	return 0;
}

static const struct tc_field s_web_identity[] = {
	{ "ProviderId", TC_STR, NULL },	     { "WebIdentityToken", TC_STR, NULL },
	{ "RoleArn", TC_STR, NULL },	     { "RoleSessionName", TC_STR, NULL },
	{ "DurationSeconds", TC_INT, NULL }, { NULL, 0, NULL },
};

const struct tc_action tc_sts_actions[] = {
	{ "AssumeRoleWithWebIdentity", assume_role_with_web_identity, s_web_identity, false },
	{ NULL, NULL, NULL, false },
};
