/*
 * ecs.c: the Alibaba Cloud ECS frontend (API 2014-05-26, RPC style, JSON answers).
 *
 * Accepts both signatures the official SDKs send (WIRE.md 2.3, 2.4): ACS3-HMAC-SHA256
 * (Authorization header, x-acs-action / x-acs-version headers, parameters in the query
 * string and an optional form body) and RPC HMAC-SHA1 (a Signature parameter among the
 * others). Checks the clock window (15 minutes), the nonce (replays are refused for 15
 * minutes), the credentials and the signature, then the parameter names strictly against
 * the action's table, then the injected faults; the action itself runs with the world
 * locked. Errors are the ECS JSON error document with the HTTP status ECS uses.
 *
 * The version a request names picks the product: ECS 2014-05-26, VPC 2016-04-28 (vpc.c)
 * or STS 2015-04-01 (sts.c), all on this one port with the same signature checks, as a
 * client that sends every product to one endpoint override expects; STS's
 * AssumeRoleWithOIDC alone comes unsigned, as it does to the real STS. Temporary keys that
 * STS issued ("STS.…" with a security token) are accepted by all three.
 *
 * Pure function of (sim, request) apart from the world, the faults and the nonce set,
 * all of which are thread-safe; called from the server's connection threads.
 */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/alloc.h"
#include "core/str.h"
#include "providers/alibaba/sign.h"
#include "sim/alibaba/ecs.h"
#include "sim/catalog.h"

#define ECS_WINDOW_S	 (15 * 60)
#define ECS_CONTENT_TYPE "application/json;charset=utf-8"

/* Common parameters of the RPC syntax: not the action's, not logged, not fingerprinted. */
static const char *const ecs_common[] = {
	"Action",
	"Version",
	"Format",
	"AccessKeyId",
	"Signature",
	"SignatureMethod",
	"SignatureVersion",
	"SignatureNonce",
	"SignatureType",
	"Timestamp",
	"SecurityToken",
	"BearerToken",
	NULL,
};

static bool is_common(const char *name)
{
	for (const char *const *p = ecs_common; *p; p++)
		if (!strcmp(*p, name))
			return true;
	return false;
}

int ecs_fail(struct ecs_call *c, int status, const char *code, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;
	json_t *body;
	char *text;

	if (c->failed)
		return -1;
	c->failed = true;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);

	char host[160];
	const char *product = c->product ? c->product : "ecs";
	if (c->region)
		snprintf(host, sizeof(host), "%s.%s.aliyuncs.com", product, c->region);
	else
		snprintf(host, sizeof(host), "%s.aliyuncs.com", product);
	char recommend[256];
	const char *name = "Ecs";
	if (!strcmp(product, "vpc"))
		name = "Vpc";
	else if (!strcmp(product, "sts"))
		name = "Sts";
	snprintf(recommend, sizeof(recommend),
		 "https://api.aliyun.com/troubleshoot?q=%s&product=%s", code, name);

	body = json_pack("{s:s, s:s, s:s, s:s, s:s}", "RequestId", c->request_id, "HostId", host,
			 "Code", code, "Message", msg, "Recommend", recommend);
	text = json_dumps(body, JSON_COMPACT);
	gc_buf_reset(&c->resp->body);
	(void)gc_buf_addstr(&c->resp->body, text);
	free(text);
	json_decref(body);
	c->resp->status = status;
	c->resp->content_type = ECS_CONTENT_TYPE;
	snprintf(c->resp->error_code, sizeof(c->resp->error_code), "%s", code);
	return -1;
}

/* --- parameter helpers ----------------------------------------------------------------- */

const char *ecs_get(const struct ecs_call *c, const char *name)
{
	return gc_params_get(&c->params, name);
}

int ecs_need(struct ecs_call *c, const char *name, const char **out)
{
	const char *v = ecs_get(c, name);

	if (!v || !*v)
		return ecs_fail(c, 400, "MissingParameter",
				"The input parameter \"%s\" that is mandatory for processing this "
				"request is not supplied.",
				name);
	*out = v;
	return 0;
}

int ecs_uint(struct ecs_call *c, const char *name, uint64_t min, uint64_t max, uint64_t def,
	     uint64_t *out)
{
	const char *v = ecs_get(c, name);
	uint64_t n;

	if (!v) {
		*out = def;
		return 0;
	}
	if (gc_parse_u64(v, UINT64_MAX, &n) || n < min || n > max)
		return ecs_fail(
			c, 400, "InvalidParameter",
			"The specified parameter \"%s\" is not valid: '%s' is not an integer "
			"in %llu..%llu.",
			name, v, (unsigned long long)min, (unsigned long long)max);
	*out = n;
	return 0;
}

int ecs_bool(struct ecs_call *c, const char *name, bool def, bool *out)
{
	const char *v = ecs_get(c, name);

	if (!v) {
		*out = def;
		return 0;
	}
	if (!strcmp(v, "true")) {
		*out = true;
		return 0;
	}
	if (!strcmp(v, "false")) {
		*out = false;
		return 0;
	}
	return ecs_fail(c, 400, "InvalidParameter",
			"The specified parameter \"%s\" is not valid: expected true or false.",
			name);
}

int ecs_tags(struct ecs_call *c, const char *prefix, struct sim_tags *tags)
{
	char kname[64], vname[64];

	for (unsigned i = 1; i <= 20; i++) {
		snprintf(kname, sizeof(kname), "%s.%u.Key", prefix, i);
		snprintf(vname, sizeof(vname), "%s.%u.Value", prefix, i);
		const char *k = ecs_get(c, kname), *v = ecs_get(c, vname);
		if (!k && !v)
			continue;
		if (!k || !*k)
			return ecs_fail(c, 400, "InvalidTagKey.Malformed",
					"The specified Tag.n.Key is not valid: %s is missing.",
					kname);
		if (strlen(k) > 128 || gc_starts_with(k, "aliyun") || gc_starts_with(k, "acs:") ||
		    strstr(k, "http://") || strstr(k, "https://"))
			return ecs_fail(c, 400, "InvalidTagKey.Malformed",
					"The specified Tag.n.Key is not valid: '%s'.", k);
		if (v && strlen(v) > 128)
			return ecs_fail(c, 400, "InvalidTagValue.Malformed",
					"The specified Tag.n.Value is not valid.");
		sim_tags_set(tags, k, v ? v : "");
	}
	return 0;
}

int ecs_json_ids(struct ecs_call *c, const char *name, size_t max, json_t **out)
{
	const char *v = ecs_get(c, name);
	json_t *arr;
	size_t i;
	json_t *item;

	*out = NULL;
	if (!v)
		return 0;
	arr = json_loads(v, JSON_REJECT_DUPLICATES, NULL);
	if (!json_is_array(arr))
		goto bad;
	json_array_foreach(arr, i, item)
	{
		if (!json_is_string(item))
			goto bad;
	}
	if (json_array_size(arr) > max) {
		json_decref(arr);
		return ecs_fail(c, 400, "InvalidParameter",
				"The specified parameter \"%s\" is not valid: at most %zu items.",
				name, max);
	}
	*out = arr;
	return 0;
bad:
	json_decref(arr);
	return ecs_fail(c, 400, "InvalidParameter",
			"The specified parameter \"%s\" is not valid: expected a JSON array of "
			"strings such as [\"a\",\"b\"].",
			name);
}

json_t *ecs_list(const struct ecs_call *c, const char *prefix, unsigned max)
{
	json_t *arr = json_array();
	char name[96];

	for (unsigned i = 1; i <= max; i++) {
		snprintf(name, sizeof(name), "%s.%u", prefix, i);
		const char *v = ecs_get(c, name);
		if (v)
			json_array_append_new(arr, json_string(v));
	}
	return arr;
}

/* Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm). */
static int64_t days_from_civil(int64_t y, unsigned m, unsigned d)
{
	y -= m <= 2;
	int64_t era = (y >= 0 ? y : y - 399) / 400;
	unsigned yoe = (unsigned)(y - era * 400);
	unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + (int64_t)doe - 719468;
}

static int digits(const char *s, int n, unsigned *out)
{
	unsigned v = 0;

	for (int i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (unsigned)(s[i] - '0');
	}
	*out = v;
	return 0;
}

int ecs_parse_time(const char *s, int64_t *out)
{
	unsigned y, mo, d, h, mi, sec = 0;
	size_t len = strlen(s);

	if (len != 20 && len != 17)
		return -1;
	if (digits(s, 4, &y) || s[4] != '-' || digits(s + 5, 2, &mo) || s[7] != '-' ||
	    digits(s + 8, 2, &d) || s[10] != 'T' || digits(s + 11, 2, &h) || s[13] != ':' ||
	    digits(s + 14, 2, &mi))
		return -1;
	if (len == 20 && (s[16] != ':' || digits(s + 17, 2, &sec) || s[19] != 'Z'))
		return -1;
	if (len == 17 && s[16] != 'Z')
		return -1;
	if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 59)
		return -1;
	*out = days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + sec;
	return 0;
}

void ecs_format_time(int64_t t, bool seconds, char out[32])
{
	time_t tt = (time_t)t;
	struct tm tm;

	if (!gmtime_r(&tt, &tm)) {
		snprintf(out, 32, "1970-01-01T00:00Z");
		return;
	}
	strftime(out, 32, seconds ? "%Y-%m-%dT%H:%M:%SZ" : "%Y-%m-%dT%H:%MZ", &tm);
}

bool ecs_name_ok(const char *s, const char *punct)
{
	size_t n = strlen(s);

	if (n < 2 || n > 128 || !isalpha((unsigned char)s[0]) || gc_starts_with(s, "http://") ||
	    gc_starts_with(s, "https://"))
		return false;
	for (const char *p = s; *p; p++)
		if (!isalnum((unsigned char)*p) && !strchr(punct, *p))
			return false;
	return true;
}

bool ecs_wildcard(const char *p, const char *s)
{
	if (!*p)
		return !*s;
	if (*p == '*') {
		for (;;) {
			if (ecs_wildcard(p + 1, s))
				return true;
			if (!*s)
				return false;
			s++;
		}
	}
	return *s && *p == *s && ecs_wildcard(p + 1, s + 1);
}

json_t *ecs_tags_json(const struct sim_tags *t)
{
	json_t *arr = json_array();

	for (size_t i = 0; i < t->n; i++)
		json_array_append_new(arr,
				      json_pack("{s:s, s:s}", "TagKey", t->items[i].key, "TagValue",
						t->items[i].value));
	return json_pack("{s:o}", "Tag", arr);
}

bool ecs_tags_match(const struct ecs_call *c, const struct sim_tags *t)
{
	char kname[64], vname[64];

	for (unsigned i = 1; i <= 20; i++) {
		snprintf(kname, sizeof(kname), "Tag.%u.Key", i);
		snprintf(vname, sizeof(vname), "Tag.%u.Value", i);
		const char *k = ecs_get(c, kname), *v = ecs_get(c, vname);
		if (!k)
			continue;
		const char *have = sim_tags_get(t, k);
		if (!have)
			return false;
		if (v && strcmp(v, have))
			return false;
	}
	return true;
}

void ecs_next_token(uint64_t seq, char out[40])
{
	/* opaque to clients, but a position rather than an offset so deletions between
	 * pages neither skip nor repeat anything */
	snprintf(out, 40, "e5c%029llx", (unsigned long long)seq);
}

int ecs_parse_next_token(struct ecs_call *c, uint64_t *seq)
{
	const char *v = ecs_get(c, "NextToken");
	unsigned long long n = 0;

	*seq = 0;
	if (!v || !*v || sim_hostile_token(v))
		return 0;
	if (strlen(v) != 32 || strncmp(v, "e5c", 3))
		goto bad;
	for (const char *p = v + 3; *p; p++) {
		int d;
		if (*p >= '0' && *p <= '9')
			d = *p - '0';
		else if (*p >= 'a' && *p <= 'f')
			d = *p - 'a' + 10;
		else
			goto bad;
		if (n >> 60)
			goto bad;
		n = n * 16 + (unsigned)d;
	}
	*seq = n;
	return 0;
bad:
	return ecs_fail(c, 400, "InvalidNextToken.Malformed",
			"The specified parameter NextToken is not valid.");
}

/* --- authentication -------------------------------------------------------------------- */

static int check_time(struct ecs_call *c, const char *name, const char *value)
{
	int64_t t, now = (int64_t)c->req->now + c->sim->cfg.clock_offset_s;

	if (ecs_parse_time(value, &t) || strlen(value) != 20)
		return ecs_fail(c, 400, "InvalidTimeStamp.Format",
				"Specified time stamp or date value is not well formatted: %s='%s' "
				"(expected yyyy-MM-ddTHH:mm:ssZ).",
				name, value);
	if (t < now - ECS_WINDOW_S || t > now + ECS_WINDOW_S)
		return ecs_fail(
			c, 400, "InvalidTimeStamp.Expired",
			"Specified time stamp or date value is expired: %s='%s' is more than "
			"15 minutes from the server time.",
			name, value);
	return 0;
}

static int check_nonce(struct ecs_call *c, const char *nonce)
{
	time_t now = (time_t)((int64_t)c->req->now + c->sim->cfg.clock_offset_s);

	if (!sim_nonce_fresh(c->sim, nonce, now))
		return ecs_fail(c, 400, "SignatureNonceUsed",
				"Specified signature nonce was used already: '%s'.", nonce);
	return 0;
}

/*
 * The secret of the key id that signed: a configured key's (a token is then not looked
 * at), or an STS key's when its security token is the one issued with it and has not
 * expired. Records the caller for the action (STS limits what a temporary key may ask).
 */
static const char *secret_for(struct ecs_call *c, const char *id, const char *token,
			      char tmp[ECS_STS_SECRET_MAX])
{
	const char *secret = sim_cred_secret(c->sim, SIM_ALIBABA, id), *code = NULL;
	int64_t now = (int64_t)c->req->now + c->sim->cfg.clock_offset_s;

	if (!secret && (secret = ecs_sts_secret(c->sim, id, token, now, tmp, &code)))
		c->caller_temporary = true;
	if (secret) {
		snprintf(c->caller, sizeof(c->caller), "%s", id);
		return secret;
	}
	if (!strcmp(code, "InvalidAccessKeyId.NotFound"))
		ecs_fail(c, 404, code, "Specified access key is not found.");
	else if (!strcmp(code, "MissingSecurityToken"))
		ecs_fail(c, 400, code, "SecurityToken is mandatory for this action.");
	else if (!strcmp(code, "InvalidSecurityToken.Expired"))
		ecs_fail(c, 400, code, "Specified SecurityToken is expired.");
	else if (!strcmp(code, "InvalidSecurityToken.MismatchWithAccessKey"))
		ecs_fail(c, 400, code, "Specified SecurityToken mismatch with the AccessKey.");
	else
		ecs_fail(c, 400, code, "Specified SecurityToken is malformed.");
	return NULL;
}

static int auth_acs3(struct ecs_call *c, const struct gc_sign_request *sreq, const char *authz,
		     const char **action, const char **version)
{
	const struct gc_params *h = c->req->headers;
	struct gc_sign_auth auth;
	struct gc_sign_result dbg;
	struct gc_error err;
	const char *secret, *date, *nonce, *hash, *missing;
	char tmp[ECS_STS_SECRET_MAX];
	int rc = -1;

	gc_error_init(&err);
	gc_sign_result_init(&dbg);
	if (ali_acs3_parse_authorization(&auth, authz, &err)) {
		gc_sign_result_release(&dbg);
		return ecs_fail(c, 400, "IncompleteSignature",
				"The request signature does not conform to Aliyun standards: %s.",
				err.message);
	}

	date = gc_params_get_ci(h, "x-acs-date");
	nonce = gc_params_get_ci(h, "x-acs-signature-nonce");
	hash = gc_params_get_ci(h, "x-acs-content-sha256");
	*action = gc_params_get_ci(h, "x-acs-action");
	*version = gc_params_get_ci(h, "x-acs-version");
	missing = !*action  ? "x-acs-action"
		: !*version ? "x-acs-version"
		: !date	    ? "x-acs-date"
		: !nonce    ? "x-acs-signature-nonce"
		: !hash	    ? "x-acs-content-sha256"
			    : NULL;
	if (missing) {
		ecs_fail(c, 400, "MissingParameter",
			 "The input parameter \"%s\" that is mandatory for processing this request "
			 "is not supplied.",
			 missing);
		goto out;
	}
	if (!strstr(auth.signed_headers, "x-acs-content-sha256") ||
	    !strstr(auth.signed_headers, "host")) {
		ecs_fail(c, 400, "IncompleteSignature",
			 "The request signature does not conform to Aliyun standards: host and "
			 "every x-acs-* header must be signed.");
		goto out;
	}
	if (check_time(c, "x-acs-date", date))
		goto out;
	secret = secret_for(c, auth.credential, gc_params_get_ci(h, "x-acs-security-token"), tmp);
	if (!secret)
		goto out;
	rc = ali_acs3_verify(sreq, &auth, secret, &dbg, &err);
	if (rc) {
		/* the SDK may have signed the host without the port */
		struct gc_params bare = GC_PARAMS_INIT;
		if (sim_headers_without_port(h, &bare)) {
			struct gc_sign_request alt = *sreq;
			struct gc_sign_result dbg2;
			alt.headers = &bare;
			gc_sign_result_init(&dbg2);
			rc = ali_acs3_verify(&alt, &auth, secret, &dbg2, &err);
			gc_sign_result_release(&dbg2);
		}
		gc_params_release(&bare);
	}
	if (rc) {
		ecs_fail(
			c, 400, "SignatureDoesNotMatch",
			"Specified signature is not matched with our calculation. server string to "
			"sign is:%s",
			dbg.string_to_sign.data);
		goto out;
	}
	rc = check_nonce(c, nonce);
out:
	gc_sign_result_release(&dbg);
	gc_sign_auth_release(&auth);
	return rc;
}

static int auth_rpc(struct ecs_call *c, const struct gc_sign_request *sreq,
		    const struct gc_params *all, const char **action, const char **version)
{
	static const char *const required[] = { "AccessKeyId",	    "SignatureMethod",
						"SignatureVersion", "SignatureNonce",
						"Timestamp",	    "Action",
						"Version",	    NULL };
	struct gc_error err;
	int rc;

	*action = gc_params_get(all, "Action");
	*version = gc_params_get(all, "Version");
	for (const char *const *r = required; *r; r++) {
		if (gc_params_count(all, *r) != 1)
			return ecs_fail(
				c, 400, "MissingParameter",
				"The input parameter \"%s\" that is mandatory for processing "
				"this request is not supplied.",
				*r);
	}
	if (gc_params_count(all, "Signature") != 1)
		return ecs_fail(
			c, 400, "IncompleteSignature",
			"The request signature does not conform to Aliyun standards: exactly "
			"one Signature parameter is needed.");
	if (strcmp(gc_params_get(all, "SignatureMethod"), "HMAC-SHA1"))
		return ecs_fail(c, 400, "IncompleteSignature",
				"The request signature does not conform to Aliyun standards: "
				"SignatureMethod must be HMAC-SHA1.");
	if (strcmp(gc_params_get(all, "SignatureVersion"), "1.0"))
		return ecs_fail(c, 400, "IncompleteSignature",
				"The request signature does not conform to Aliyun standards: "
				"SignatureVersion must be 1.0.");
	const char *format = gc_params_get(all, "Format");
	if (format && strcasecmp(format, "JSON"))
		return ecs_fail(c, 400, "InvalidParameter",
				"The specified parameter \"Format\" is not valid: gpucluster-sim "
				"answers JSON only (send Format=JSON).");
	if (check_time(c, "Timestamp", gc_params_get(all, "Timestamp")))
		return -1;
	char tmp[ECS_STS_SECRET_MAX];
	const char *secret = secret_for(c, gc_params_get(all, "AccessKeyId"),
					gc_params_get(all, "SecurityToken"), tmp);
	if (!secret)
		return -1;
	struct ali_rpc_result dbg;
	ali_rpc_result_init(&dbg);
	gc_error_init(&err);
	rc = ali_rpc_verify(sreq, secret, &dbg, &err);
	if (rc) {
		ecs_fail(
			c, 400, "SignatureDoesNotMatch",
			"Specified signature is not matched with our calculation. server string to "
			"sign is:%s",
			dbg.string_to_sign.data);
		ali_rpc_result_release(&dbg);
		return -1;
	}
	ali_rpc_result_release(&dbg);
	return check_nonce(c, gc_params_get(all, "SignatureNonce"));
}

/*
 * An unsigned request STS takes: AssumeRoleWithOIDC, named RPC-style (Action and Version
 * among the parameters, as the Credentials SDKs send it) or ACS3-style (x-acs-action and
 * x-acs-version headers, as the API SDKs' anonymous calls do).
 */
static bool anonymous(struct ecs_call *c, const struct gc_params *all, const char **action,
		      const char **version)
{
	const char *a = gc_params_get_ci(c->req->headers, "x-acs-action");
	const char *v = gc_params_get_ci(c->req->headers, "x-acs-version");

	if (!a)
		a = gc_params_get(all, "Action");
	if (!v)
		v = gc_params_get(all, "Version");
	if (!a || !v || strcmp(a, "AssumeRoleWithOIDC") != 0 || strcmp(v, STS_VERSION) != 0)
		return false;
	*action = a;
	*version = v;
	return true;
}

/* --- dispatch ---------------------------------------------------------------------------- */

/* The product a version names ("ecs", "vpc", "sts"), or NULL. */
static const char *product_of(const char *version)
{
	if (!strcmp(version, ECS_VERSION))
		return "ecs";
	if (!strcmp(version, VPC_VERSION))
		return "vpc";
	if (!strcmp(version, STS_VERSION))
		return "sts";
	return NULL;
}

static const struct ecs_action *find_action(const char *product, const char *name)
{
	const struct ecs_action *ecs[] = { ecs_instance_actions, ecs_resource_actions,
					   ecs_catalog_actions, ecs_placement_actions };
	const struct ecs_action *vpc[] = { ecs_vpc_actions }, *sts[] = { ecs_sts_actions };
	const struct ecs_action *const *tables = ecs;
	size_t n = sizeof(ecs) / sizeof(ecs[0]);

	if (!strcmp(product, "vpc")) {
		tables = vpc;
		n = 1;
	} else if (!strcmp(product, "sts")) {
		tables = sts;
		n = 1;
	}

	for (size_t t = 0; t < n; t++)
		for (const struct ecs_action *a = tables[t]; a->name; a++)
			if (!strcmp(a->name, name))
				return a;
	return NULL;
}

static int check_params(struct ecs_call *c, const struct ecs_action *a)
{
	for (size_t i = 0; i < c->params.n; i++) {
		const char *name = c->params.items[i].name;
		bool ok = false;
		unsigned bad = 0;

		if (gc_params_count(&c->params, name) > 1)
			return ecs_fail(c, 400, "InvalidParameter",
					"The parameter \"%s\" is given more than once.", name);
		/* the account parameters every ECS request model carries */
		if (!strcmp(name, "OwnerId") || !strcmp(name, "OwnerAccount") ||
		    !strcmp(name, "ResourceOwnerId") || !strcmp(name, "ResourceOwnerAccount"))
			continue;
		for (const struct ecs_param *p = a->params; p->pattern; p++) {
			if (sim_param_match(p->pattern, name, p->max, &bad)) {
				ok = true;
				if (bad) {
					if (gc_starts_with(name, "Tag."))
						return ecs_fail(c, 400, "InvalidTagCount",
								"The specified tags are beyond the "
								"permitted range: %s (at most %u).",
								name, p->max);
					return ecs_fail(c, 400, "InvalidParameter",
							"The specified parameter \"%s\" is not "
							"valid: index %u is above the limit of %u.",
							name, bad, p->max);
				}
				break;
			}
		}
		if (!ok)
			return ecs_fail(c, 400, "InvalidParameter",
					"The parameter \"%s\" is not recognized by %s.", name,
					a->name);
	}
	return 0;
}

static void fault_fail(struct ecs_call *c, const struct sim_fault_hit *hit)
{
	switch (hit->kind) {
	case SIM_FAULT_THROTTLE:
		ecs_fail(c, 400, "Throttling.User", "Request was denied due to user flow control.");
		break;
	case SIM_FAULT_QUOTA:
		ecs_fail(c, 403, "QuotaExceed.ElasticQuota",
			 "The number of vCPUs assigned to the ECS instances has exceeded the quota "
			 "in the zone.");
		break;
	case SIM_FAULT_CAPACITY:
		ecs_fail(
			c, 403, "OperationDenied.NoStock",
			"The requested resource is sold out in the specified zone; try other types "
			"of resources or other regions and zones.");
		break;
	case SIM_FAULT_5XX:
		ecs_fail(
			c, 500, "InternalError",
			"The request processing has failed due to some unknown error, exception or "
			"failure.");
		break;
	default: break;
	}
}

static json_t *log_object(const struct gc_params *p)
{
	json_t *o = json_object();

	for (size_t i = 0; i < p->n; i++)
		if (!json_object_get(o, p->items[i].name))
			json_object_set_new(o, p->items[i].name, json_string(p->items[i].value));
	return o;
}

/* Everything between reading the request and rendering the answer; -1 when answered
 * with an error (or dropped). */
static int process(struct ecs_call *c, struct gc_params *all)
{
	struct sim *sim = c->sim;
	const struct sim_req *req = c->req;
	struct sim_resp *resp = c->resp;
	struct gc_error err;
	const char *action = NULL, *version = NULL, *authz, *region;
	const struct ecs_action *a;
	struct sim_fault_hit hit;
	int rc;

	gc_error_init(&err);
	struct gc_sign_request sreq = {
		.method = req->method,
		.host = gc_params_get_ci(req->headers, "host"),
		.path = req->path,
		.query = req->query,
		.query_string = req->query_string,
		.headers = req->headers,
		.body = req->body,
		.body_len = req->body_len,
	};
	if (strcmp(req->method, "GET") && strcmp(req->method, "POST"))
		return ecs_fail(c, 400, "UnsupportedHTTPMethod",
				"Specified HTTP method is not supported.");
	if (ali_rpc_collect_params(all, &sreq, &err))
		return ecs_fail(c, 400, "InvalidParameter",
				"The request parameters are malformed: %s.", err.message);
	for (size_t i = 0; i < all->n; i++)
		if (!is_common(all->items[i].name))
			gc_params_add(&c->params, all->items[i].name, all->items[i].value);
	resp->log_params = log_object(&c->params);

	authz = gc_params_get_ci(req->headers, "authorization");
	if (authz && gc_starts_with(authz, ALI_ACS3_ALGORITHM)) {
		rc = auth_acs3(c, &sreq, authz, &action, &version);
	} else if (authz) {
		return ecs_fail(c, 400, "IncompleteSignature",
				"The request signature does not conform to Aliyun standards: "
				"unsupported Authorization scheme.");
	} else if (gc_params_get(all, "Signature") || gc_params_get(all, "AccessKeyId")) {
		rc = auth_rpc(c, &sreq, all, &action, &version);
	} else if (anonymous(c, all, &action, &version)) {
		rc = 0; /* the OIDC token in the parameters is the proof (sts.c checks it) */
	} else {
		return ecs_fail(
			c, 400, "MissingParameter",
			"The input parameter \"AccessKeyId\" that is mandatory for processing "
			"this request is not supplied.");
	}
	/* a refused request is logged under the action it named, as AWS and Tencent do */
	snprintf(resp->action, sizeof(resp->action), "%s", action ? action : "");
	snprintf(resp->version, sizeof(resp->version), "%s", version ? version : "");
	if (rc)
		return -1;
	c->product = product_of(version);
	if (!c->product)
		return ecs_fail(c, 400, "InvalidVersion",
				"Specified parameter Version is not valid: this endpoint speaks "
				"ECS " ECS_VERSION ", VPC " VPC_VERSION ", STS " STS_VERSION);
	a = find_action(c->product, action);
	if (!a)
		return ecs_fail(c, 404, "InvalidAction.NotFound",
				"Specified api is not found, please check your url and method: %s.",
				action);
	c->action = a->name;
	if (check_params(c, a))
		return -1;

	region = ecs_get(c, "RegionId");
	if (region) {
		if (!sim_catalog_region(SIM_ALIBABA, region))
			return ecs_fail(c, 404, "InvalidRegionId.NotFound",
					"The specified RegionId does not exist: '%s'.", region);
		c->region = region;
	} else if (a->region_required) {
		return ecs_need(c, "RegionId", &region);
	}

	sim_faults_check(sim->faults, SIM_ALIBABA, a->name, 0, &hit);
	rc = sim_fault_before(resp, &hit);
	if (rc == 0) {
		sim_world_lock(sim->world);
		sim_world_tick(sim->world);
		rc = a->run(c) ? -1 : 0;
		sim_world_unlock(sim->world);
		/* after=1: the action took effect, the caller sees a failure */
		if (rc == 0)
			rc = sim_fault_after(resp, &hit);
	}
	if (rc > 0)
		fault_fail(c, &hit);
	return rc ? -1 : 0;
}

/* How the hostile modes imitate ECS (sim/hostile.h). */
static const struct sim_hostile_style ecs_hostile = {
	.content_type = ECS_CONTENT_TYPE,
	.next_token = "NextToken",
	.error_status = 400,
	.error_code = "InvalidParameter",
	.wrong_document = "{\"KeyPairs\":{\"KeyPair\":[{\"KeyPairName\":\"hostile\","
			  "\"KeyPairFingerPrint\":\"00\"}]},\"TotalCount\":1,\"PageNumber\":1,"
			  "\"PageSize\":10,\"RequestId\":\"00000000-0000-4000-8000-000000000001\"}",
	.wrong_document_keys = "{\"Regions\":{\"Region\":[{\"RegionId\":\"cn-hangzhou\","
			       "\"LocalName\":\"hostile\"}]},\"RequestId\":"
			       "\"00000000-0000-4000-8000-000000000001\"}",
};

void sim_ecs_handle(struct sim *sim, const struct sim_req *req, struct sim_resp *resp)
{
	struct ecs_call call;
	struct ecs_call *c = &call;
	struct gc_params all = GC_PARAMS_INIT;
	char *text;

	memset(c, 0, sizeof(*c));
	c->sim = sim;
	c->req = req;
	c->resp = resp;
	gc_params_init(&c->params);
	sim_request_id(sim, true, c->request_id);

	if (process(c, &all) == 0) {
		if (!c->out)
			c->out = json_object();
		json_object_set_new(c->out, "RequestId", json_string(c->request_id));
		text = json_dumps(c->out, JSON_COMPACT);
		gc_buf_reset(&resp->body);
		(void)gc_buf_addstr(&resp->body, text);
		free(text);
		resp->status = 200;
		resp->content_type = ECS_CONTENT_TYPE;
	}
	sim_hostile_answer(&ecs_hostile, resp->action, &resp->hostile, resp);
	json_decref(c->out);
	gc_params_release(&c->params);
	gc_params_release(&all);
}

/* --- the frontend's row ----------------------------------------------------------------- */

/*
 * Alibaba publishes no per-API figures (they live in each account's Quota Center), so
 * the emulator uses one-minute windows, throttled in minute T means allowed again in
 * T+1 as Alibaba documents: 600 calls a minute per API, and the documented 5000
 * instances a minute through RunInstances.
 */
static void ecs_rate(const char *action, enum sim_bucket kind, struct sim_rate *out)
{
	out->per_minute = kind == SIM_BUCKET_RESOURCE ? 5000 : 600;
	snprintf(out->desc, sizeof(out->desc), "Alibaba %s limit for %s (%llu a minute)",
		 kind == SIM_BUCKET_RESOURCE ? "instance" : "call", action,
		 (unsigned long long)out->per_minute);
}

/* iZ<id>Z: what ECS's images name themselves */
static void ecs_hostname(const struct sim_instance *inst, const char *ip, char *out, size_t size)
{
	const char *tail = strchr(inst->id, '-');

	(void)ip;
	snprintf(out, size, "iZ%.40sZ", tail ? tail + 1 : inst->id);
}

const struct sim_frontend sim_frontend_alibaba = {
	.name = "alibaba",
	.title = "Alibaba ECS",
	.endpoint = "ECS",
	.handle = sim_ecs_handle,
	.key_id = "LTAIgpuclustersim001",
	.secret = "gpucluster-sim-alibaba-secret-000000",
	.catalog = &sim_alibaba_offer,
	.audience = "sts.aliyuncs.com",
	.states = { "Pending", "Running", "Stopped", "Stopping", "Deleted", "Deleted", "Stopped" },
	.id_len = 20,
	.id_alphabet = "0123456789abcdefghijklmnopqrstuvwxyz",
	.instance_prefix = "i-",
	.key_prefix = NULL, /* a key pair's id is its name */
	.private_net = "172.16",
	.spot_reclaim_reason = "Recycling: the preemptible instance is reclaimed",
	.rate = ecs_rate,
	.buckets = SIM_RATE_LAUNCH,
	.kernels = { "5.15.0-113-generic", "6.8.0-41-generic" },
	.hostname = ecs_hostname,
};
