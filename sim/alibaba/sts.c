/*
 * sts.c: Alibaba Cloud STS (2015-04-01) on the emulator's Alibaba port: AssumeRole, so
 * the credential chain's RamRoleArn profiles run end to end without an account;
 * AssumeRoleWithOIDC (anonymous), so GitHub Actions' and ACK's OIDC tokens do; and the
 * temporary keys they issue, which every product on the port (ECS, VPC, STS itself)
 * accepts with their security token until they expire.
 *
 * As for AWS (sim/aws/sts.c), temporary credentials need no table: the security token
 * carries the key id, the expiry and the assumed role's ARN, sealed as sim.h describes
 * (sim_session_seal, "CAIS" in front as real tokens have); the secret is derived from
 * the key id under the same key.
 *
 * The emulator's RAM is one account (ECS_SIM_ACCOUNT): any well-formed role ARN in it may
 * be assumed by any caller; a role in another account is NoPermission. A caller that is
 * itself an STS key may assume a role for at most an hour, as in role chaining. The
 * account has one OIDC provider (SIM_OIDC_ALIBABA_PROVIDER): the emulator's own issuer,
 * trusting sts.aliyuncs.com unless configured (sim/oidc.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "core/hash.h"
#include "core/str.h"
#include "sim/alibaba/ecs.h"
#include "sim/oidc.h"

#define ECS_SIM_ACCOUNT	  "5123456789012345"
#define STS_TOKEN_MAGIC	  "gcsimali1"
#define STS_TOKEN_PREFIX  "CAIS" /* how real STS tokens begin */
#define STS_KEY_PREFIX	  "STS."
#define STS_MIN_S	  900
#define STS_MAX_S	  43200 /* the longest a role may allow */
#define STS_CHAINED_MAX_S 3600
#define STS_DEFAULT_S	  3600

static const char alnum[] = "ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz123456789";

static void derive_secret(const struct sim *sim, const char *key_id, char out[ECS_STS_SECRET_MAX])
{
	char text[160];

	snprintf(text, sizeof(text), "ali-secret\n%s", key_id);
	sim_session_derive(sim, text, alnum, out, 44); /* a real AccessKeySecret's length */
}

const char *ecs_sts_secret(const struct sim *sim, const char *key_id, const char *token,
			   int64_t now, char out[ECS_STS_SECRET_MAX], const char **code)
{
	struct sim_session s;

	*code = "InvalidAccessKeyId.NotFound";
	if (!key_id || !gc_starts_with(key_id, STS_KEY_PREFIX))
		return NULL;
	*code = "MissingSecurityToken";
	if (!token || !*token)
		return NULL;
	switch (sim_session_open(sim, STS_TOKEN_PREFIX, STS_TOKEN_MAGIC, token, key_id, now, &s)) {
	case SIM_SESSION_OK: break;
	case SIM_SESSION_MISMATCH:
		*code = "InvalidSecurityToken.MismatchWithAccessKey";
		return NULL;
	case SIM_SESSION_EXPIRED: *code = "InvalidSecurityToken.Expired"; return NULL;
	default: *code = "InvalidSecurityToken.Malformed"; return NULL;
	}
	derive_secret(sim, key_id, out);
	*code = NULL;
	return out;
}

/* --- AssumeRole ----------------------------------------------------------------------- */

static bool session_name_ok(const char *s)
{
	size_t n = strlen(s);

	if (n < 2 || n > 64)
		return false;
	for (const char *p = s; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
		      (*p >= '0' && *p <= '9') || strchr(".@-_", *p)))
			return false;
	return true;
}

/* acs:ram::ACCOUNT:role/NAME: the account into *account, the name into *name. */
static bool parse_role_arn(const char *arn, char account[32], char name[80])
{
	const char *p = arn, *slash;
	size_t n;

	if (!gc_starts_with(p, "acs:ram::"))
		return false;
	p += strlen("acs:ram::");
	n = strspn(p, "0123456789");
	if (n == 0 || n >= 32 || p[n] != ':')
		return false;
	snprintf(account, 32, "%.*s", (int)n, p);
	p += n + 1;
	if (strncasecmp(p, "role/", 5) != 0)
		return false;
	slash = p + 5;
	n = strlen(slash);
	if (n == 0 || n > 64 ||
	    strspn(slash, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-") != n)
		return false;
	snprintf(name, 80, "%s", slash);
	return true;
}

/*
 * Issues temporary keys for role (in account) as session, valid for duration seconds,
 * into c->out with the AssumedRoleUser block; extra (taken) is merged into the answer.
 */
static int issue(struct ecs_call *c, const char *account, const char *role, const char *session,
		 uint64_t duration, json_t *extra)
{
	char key_id[64], secret[ECS_STS_SECRET_MAX], when[32], role_id[128], seed[256];
	int64_t now = (int64_t)c->req->now + c->sim->cfg.clock_offset_s;
	struct sim_session s;
	char *token;

	memset(&s, 0, sizeof(s));
	/* unique per call: the request id is random */
	snprintf(seed, sizeof(seed), "ali-key\n%s\n%s", c->request_id, session);
	snprintf(key_id, sizeof(key_id), STS_KEY_PREFIX "N");
	sim_session_derive(c->sim, seed, alnum, key_id + strlen(key_id), 24);
	snprintf(s.key_id, sizeof(s.key_id), "%s", key_id);
	s.expiry = now + (int64_t)duration;
	snprintf(s.arn, sizeof(s.arn), "acs:ram::%s:role/%s/%s", account, role, session);
	token = sim_session_seal(c->sim, STS_TOKEN_PREFIX, STS_TOKEN_MAGIC, &s);
	derive_secret(c->sim, key_id, secret);
	ecs_format_time(s.expiry, true, when);
	snprintf(role_id, sizeof(role_id), "300000000000000001:%s", session);
	c->out = json_pack("{s:{s:s, s:s}, s:{s:s, s:s, s:s, s:s}}", "AssumedRoleUser", "Arn",
			   s.arn, "AssumedRoleId", role_id, "Credentials", "AccessKeyId", key_id,
			   "AccessKeySecret", secret, "SecurityToken", token, "Expiration", when);
	if (extra)
		json_object_update(c->out, extra);
	json_decref(extra);
	free(token);
	return 0;
}

/* RoleArn and RoleSessionName, checked; the role's account and name into account, role. */
static int role_and_session(struct ecs_call *c, char account[32], char role[80],
			    const char **session)
{
	const char *arn;

	if (ecs_need(c, "RoleArn", &arn) || ecs_need(c, "RoleSessionName", session))
		return -1;
	if (!parse_role_arn(arn, account, role))
		return ecs_fail(c, 400, "InvalidParameter.RoleArn",
				"The parameter RoleArn is wrongly formed: '%s' (expected "
				"acs:ram::ACCOUNT:role/NAME).",
				arn);
	if (!session_name_ok(*session))
		return ecs_fail(c, 400, "InvalidParameter.RoleSessionName",
				"The parameter RoleSessionName is wrongly formed: 2 to 64 of "
				"letters, digits and . @ - _.");
	return 0;
}

static int assume_role(struct ecs_call *c)
{
	const char *session, *ext = ecs_get(c, "ExternalId"), *policy = ecs_get(c, "Policy");
	char account[32], role[80];
	uint64_t duration, max;

	if (role_and_session(c, account, role, &session))
		return -1;
	if (ext && (strlen(ext) < 2 || strlen(ext) > 1224))
		return ecs_fail(c, 400, "InvalidParameter.ExternalId",
				"The parameter ExternalId is wrongly formed.");
	if (policy && strlen(policy) > 2048)
		return ecs_fail(c, 400, "InvalidParameter.PolicyGrammar",
				"The parameter Policy has not passed grammar check.");
	max = c->caller_temporary ? STS_CHAINED_MAX_S : STS_MAX_S;
	if (ecs_uint(c, "DurationSeconds", 0, UINT32_MAX, STS_DEFAULT_S, &duration))
		return -1;
	if (duration < STS_MIN_S || duration > max)
		return ecs_fail(c, 400, "InvalidParameter.DurationSeconds",
				"The Min/Max value of DurationSeconds is %ds/%llus.", STS_MIN_S,
				(unsigned long long)max);
	if (strcmp(account, ECS_SIM_ACCOUNT) != 0)
		return ecs_fail(c, 403, "NoPermission",
				"You are not authorized to do this action. You should be "
				"authorized by RAM: role '%s' is in account %s, not %s.",
				role, account, ECS_SIM_ACCOUNT);

	return issue(c, account, role, session, duration, NULL);
}

/*
 * AssumeRoleWithOIDC: anonymous, the token being the proof. The account's one OIDC
 * provider is the emulator's issuer (SIM_OIDC_ALIBABA_PROVIDER); the token is checked as
 * STS checks it, with STS's codes (401 AuthenticationFail.*).
 */
static int assume_role_with_oidc(struct ecs_call *c)
{
	const char *provider, *token, *session, *policy = ecs_get(c, "Policy");
	char account[32], role[80];
	int64_t now = (int64_t)c->req->now + c->sim->cfg.clock_offset_s;
	uint64_t duration;
	struct sim_jwt j;

	if (ecs_need(c, "OIDCProviderArn", &provider) || ecs_need(c, "OIDCToken", &token) ||
	    role_and_session(c, account, role, &session))
		return -1;
	if (strlen(token) < 4 || strlen(token) > SIM_OIDC_JWT_MAX)
		return ecs_fail(c, 400, "InvalidParameter.OIDCToken",
				"The parameter OIDCToken must be 4 to 20000 characters.");
	if (policy && strlen(policy) > 2048)
		return ecs_fail(c, 400, "InvalidParameter.PolicyGrammar",
				"The parameter Policy has not passed grammar check.");
	if (ecs_uint(c, "DurationSeconds", 0, UINT32_MAX, STS_DEFAULT_S, &duration))
		return -1;
	if (duration < STS_MIN_S || duration > STS_MAX_S)
		return ecs_fail(c, 400, "InvalidParameter.DurationSeconds",
				"The Min/Max value of DurationSeconds is %ds/%ds.", STS_MIN_S,
				STS_MAX_S);
	if (strcmp(provider, SIM_OIDC_ALIBABA_PROVIDER) != 0 || !c->sim->oidc)
		return ecs_fail(c, 401, "AuthenticationFail.NoPermission",
				"No such OIDC Provider registered.");
	if (strcmp(account, ECS_SIM_ACCOUNT) != 0)
		return ecs_fail(c, 401, "AuthenticationFail.NoPermission",
				"There is no permission: role '%s' is in account %s, not %s.", role,
				account, ECS_SIM_ACCOUNT);
	switch (sim_oidc_verify(c->sim, SIM_ALIBABA, token, now, &j)) {
	case SIM_JWT_OK: break;
	case SIM_JWT_ISSUER:
		return ecs_fail(c, 401, "AuthenticationFail.OIDCToken.IssuerNotMatch",
				"The issuer '%s' of the token is not the OIDC provider's.", j.iss);
	case SIM_JWT_SIGNATURE:
		return ecs_fail(c, 401, "AuthenticationFail.OIDCToken.InvalidSignature",
				"OIDC token validate failed: invalid signature.");
	case SIM_JWT_EXPIRED:
		return ecs_fail(c, 401, "AuthenticationFail.OIDCToken.Expired",
				"This JsonWebToken is expired.");
	case SIM_JWT_AUDIENCE:
		return ecs_fail(c, 401, "AuthenticationFail.OIDCToken.AudienceNotMatch",
				"Invalid audience.");
	case SIM_JWT_MALFORMED:
	case SIM_JWT_ALGORITHM:
	case SIM_JWT_CLAIMS:
	case SIM_JWT_NOT_YET:
	default:
		return ecs_fail(c, 401, "AuthenticationFail.OIDCToken.Invalid",
				"The Jwt content is invalid that cannot be recognized: %s.", j.why);
	}
	return issue(c, account, role, session, duration,
		     json_pack("{s:{s:s, s:s, s:s}}", "OIDCTokenInfo", "Subject", j.sub, "Issuer",
			       j.iss, "ClientIds", j.aud));
}

static const struct ecs_param assume_role_params[] = {
	{ "RoleArn", 0 }, { "RoleSessionName", 0 }, { "DurationSeconds", 0 },
	{ "Policy", 0 },  { "ExternalId", 0 },	    { "SourceIdentity", 0 },
	{ NULL, 0 },
};

static const struct ecs_param assume_role_with_oidc_params[] = {
	{ "OIDCProviderArn", 0 }, { "OIDCToken", 0 }, { "RoleArn", 0 }, { "RoleSessionName", 0 },
	{ "DurationSeconds", 0 }, { "Policy", 0 },    { NULL, 0 },
};

const struct ecs_action ecs_sts_actions[] = {
	{ "AssumeRole", assume_role, assume_role_params, false },
	{ "AssumeRoleWithOIDC", assume_role_with_oidc, assume_role_with_oidc_params, false },
	{ NULL, NULL, NULL, false },
};
