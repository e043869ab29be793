/*
 * sts.c: Alibaba Cloud STS (2015-04-01) on the emulator's Alibaba port: AssumeRole, so
 * the credential chain's RamRoleArn profiles run end to end without an account, and
 * the temporary keys it issues, which every product on the port (ECS, VPC, STS itself)
 * accepts with their security token until they expire.
 *
 * As for AWS (sim/aws/sts.c), temporary credentials need no table. The security token
 * carries the key id, the expiry, the assumed role's ARN and the caller, sealed with an
 * HMAC under the emulator's random sts_key; the secret is an HMAC of the key id under
 * the same key. Any request can then be checked without a lock, a reset forgets nothing
 * it should keep, and a restarted emulator no longer accepts old tokens, as real STS
 * keys expire.
 *
 * The emulator's RAM is one account (ECS_SIM_ACCOUNT): any well-formed role ARN in it may
 * be assumed by any caller; a role in another account is NoPermission. A caller that is
 * itself an STS key may assume a role for at most an hour, as in role chaining.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "core/hash.h"
#include "core/str.h"
#include "sim/alibaba/ecs.h"

#define ECS_SIM_ACCOUNT	  "5123456789012345"
#define STS_TOKEN_MAGIC	  "gcsimali1"
#define STS_TOKEN_PREFIX  "CAIS" /* how real STS tokens begin */
#define STS_TOKEN_MAX	  4096
#define STS_ARN_MAX	  512
#define STS_KEY_PREFIX	  "STS."
#define STS_MIN_S	  900
#define STS_MAX_S	  43200 /* the longest a role may allow */
#define STS_CHAINED_MAX_S 3600
#define STS_DEFAULT_S	  3600

static const char alnum[] = "ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz123456789";

/* n characters of alnum derived from the HMAC of text under the emulator's key. */
static void derive(const struct sim *sim, const char *text, char *out, size_t n)
{
	unsigned char mac[GC_SHA256_LEN], block[GC_SHA256_LEN];
	size_t i = 0;

	gc_hmac_sha256(sim->cfg.sts_key, sizeof(sim->cfg.sts_key), text, strlen(text), mac);
	memcpy(block, mac, sizeof(block));
	while (i < n) {
		for (size_t k = 0; k < sizeof(block) && i < n; k++)
			out[i++] = alnum[block[k] % (sizeof(alnum) - 1)];
		gc_hmac_sha256(sim->cfg.sts_key, sizeof(sim->cfg.sts_key), block, sizeof(block),
			       block);
	}
	out[n] = '\0';
}

static void derive_secret(const struct sim *sim, const char *key_id,
			  char out[ECS_STS_SECRET_MAX])
{
	char text[160];

	snprintf(text, sizeof(text), "ali-secret\n%s", key_id);
	derive(sim, text, out, 44); /* the length of a real STS AccessKeySecret */
}

struct session {
	char key_id[64];
	int64_t expiry;
	char arn[STS_ARN_MAX];
};

/* "CAIS" + base64 of "MAGIC\nKEYID\nEXPIRY\nARN" and its HMAC. */
static char *seal(const struct sim *sim, const struct session *s)
{
	struct gc_buf payload = GC_BUF_INIT(STS_TOKEN_MAX);
	struct gc_buf out = GC_BUF_INIT(STS_TOKEN_MAX * 2);
	unsigned char mac[GC_SHA256_LEN];

	gc_buf_addf(&payload, "%s\n%s\n%lld\n%s", STS_TOKEN_MAGIC, s->key_id, (long long)s->expiry,
		    s->arn);
	gc_hmac_sha256(sim->cfg.sts_key, sizeof(sim->cfg.sts_key), payload.data, payload.len, mac);
	gc_buf_add(&payload, mac, sizeof(mac));
	gc_buf_addstr(&out, STS_TOKEN_PREFIX);
	gc_base64_encode(&out, payload.data, payload.len);
	gc_buf_release(&payload);
	return gc_buf_detach(&out, NULL);
}

const char *ecs_sts_secret(const struct sim *sim, const char *key_id, const char *token,
			   int64_t now, char out[ECS_STS_SECRET_MAX], const char **code)
{
	struct gc_buf raw = GC_BUF_INIT(STS_TOKEN_MAX);
	unsigned char mac[GC_SHA256_LEN];
	char want[GC_SHA256_HEX_LEN], got[GC_SHA256_HEX_LEN], num[24];
	const char *p, *nl, *ret = NULL;
	size_t plen;
	int64_t expiry;

	*code = "InvalidAccessKeyId.NotFound";
	if (!key_id || !gc_starts_with(key_id, STS_KEY_PREFIX))
		return NULL;
	*code = "MissingSecurityToken";
	if (!token || !*token)
		return NULL;
	*code = "InvalidSecurityToken.Malformed";
	if (strlen(token) > STS_TOKEN_MAX || !gc_starts_with(token, STS_TOKEN_PREFIX) ||
	    gc_base64_decode(&raw, token + strlen(STS_TOKEN_PREFIX),
			     strlen(token) - strlen(STS_TOKEN_PREFIX)) != 0 ||
	    raw.len <= sizeof(mac))
		goto out;
	plen = raw.len - sizeof(mac);
	gc_hmac_sha256(sim->cfg.sts_key, sizeof(sim->cfg.sts_key), raw.data, plen, mac);
	gc_hex(mac, sizeof(mac), want);
	gc_hex((const unsigned char *)raw.data + plen, sizeof(mac), got);
	if (!gc_sign_equal(want, got))
		goto out;
	raw.data[plen] = '\0';
	/* sealed by us, so well-formed: magic, key id, expiry, arn */
	p = raw.data;
	if (!gc_starts_with(p, STS_TOKEN_MAGIC "\n"))
		goto out;
	p += strlen(STS_TOKEN_MAGIC "\n");
	nl = strchr(p, '\n');
	if (!nl)
		goto out;
	*code = "InvalidSecurityToken.MismatchWithAccessKey";
	if (strncmp(p, key_id, (size_t)(nl - p)) != 0 || key_id[nl - p] != '\0')
		goto out;
	p = nl + 1;
	nl = strchr(p, '\n');
	*code = "InvalidSecurityToken.Malformed";
	if (!nl || (size_t)(nl - p) >= sizeof(num))
		goto out;
	snprintf(num, sizeof(num), "%.*s", (int)(nl - p), p);
	if (gc_parse_i64(num, 0, INT64_MAX, &expiry) != 0)
		goto out;
	*code = "InvalidSecurityToken.Expired";
	if (now >= expiry)
		goto out;
	derive_secret(sim, key_id, out);
	*code = NULL;
	ret = out;
out:
	gc_buf_release(&raw);
	return ret;
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

static int assume_role(struct ecs_call *c)
{
	const char *arn, *session, *ext = ecs_get(c, "ExternalId"), *policy = ecs_get(c, "Policy");
	char account[32], role[80], key_id[64], secret[ECS_STS_SECRET_MAX], when[32];
	char role_id[128];
	uint64_t duration, max;
	struct session s;
	char *token;
	int64_t now = (int64_t)c->req->now + c->sim->cfg.clock_offset_s;

	if (ecs_need(c, "RoleArn", &arn) || ecs_need(c, "RoleSessionName", &session))
		return -1;
	if (!parse_role_arn(arn, account, role))
		return ecs_fail(c, 400, "InvalidParameter.RoleArn",
				"The parameter RoleArn is wrongly formed: '%s' (expected "
				"acs:ram::ACCOUNT:role/NAME).",
				arn);
	if (!session_name_ok(session))
		return ecs_fail(c, 400, "InvalidParameter.RoleSessionName",
				"The parameter RoleSessionName is wrongly formed: 2 to 64 of "
				"letters, digits and . @ - _.");
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

	memset(&s, 0, sizeof(s));
	{
		char seed[256];

		/* unique per call: the request id is random */
		snprintf(seed, sizeof(seed), "ali-key\n%s\n%s", c->request_id, session);
		snprintf(key_id, sizeof(key_id), STS_KEY_PREFIX "N");
		derive(c->sim, seed, key_id + strlen(key_id), 24);
	}
	snprintf(s.key_id, sizeof(s.key_id), "%s", key_id);
	s.expiry = now + (int64_t)duration;
	snprintf(s.arn, sizeof(s.arn), "acs:ram::%s:role/%s/%s", account, role, session);
	token = seal(c->sim, &s);
	derive_secret(c->sim, key_id, secret);
	ecs_format_time(s.expiry, true, when);
	snprintf(role_id, sizeof(role_id), "300000000000000001:%s", session);
	c->out = json_pack("{s:{s:s, s:s}, s:{s:s, s:s, s:s, s:s}}", "AssumedRoleUser", "Arn", s.arn,
			   "AssumedRoleId", role_id, "Credentials", "AccessKeyId", key_id,
			   "AccessKeySecret", secret, "SecurityToken", token, "Expiration", when);
	free(token);
	return 0;
}

static const struct ecs_param assume_role_params[] = {
	{ "RoleArn", 0 },	{ "RoleSessionName", 0 }, { "DurationSeconds", 0 },
	{ "Policy", 0 },	{ "ExternalId", 0 },	  { "SourceIdentity", 0 },
	{ NULL, 0 },
};

const struct ecs_action ecs_sts_actions[] = {
	{ "AssumeRole", assume_role, assume_role_params, false },
	{ NULL, NULL, NULL, false },
};
