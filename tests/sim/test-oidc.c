/*
 * test-oidc.c: the emulator's OpenID Connect issuer and the three STS exchanges that trust
 * it, through the real drivers' credential chains, served in-process on 127.0.0.1.
 *
 * The issuer: its discovery document and JWK set (a token's signature verifies with the
 * published key, rebuilt from n and e), the token endpoint's bearer check, audience and
 * claims, and the rules sim_oidc_verify applies (issuer, key, algorithm, claims, time,
 * audience, configured client ids). core/oidc.c fetching from it. Then, per cloud: a
 * provider opened as a GitHub Actions job with the spec's provider.oidc and no keys at
 * all exchanges the token at that cloud's STS and then lists instances with the
 * temporary keys; the STS refuses, with that cloud's code, a token signed by another key,
 * one from another issuer, one for another audience and an expired one; Tencent's CVM
 * takes the temporary keys only with the token they came with; the Alibaba driver's
 * AssumeRoleWithOIDC hook works on its own.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/param_build.h>

#include "core/alloc.h"
#include "core/hash.h"
#include "core/http.h"
#include "core/oidc.h"
#include "core/provider.h"
#include "core/str.h"
#include "fake-clock.h"
#include "providers/alibaba/creds.h"
#include "providers/tencent/creds.h"
#include "providers/tencent/tc3.h"
#include "sim-fixture.h"
#include "sim/alibaba/ecs.h"
#include "sim/oidc.h"
#include "sim/server.h"
#include "sim/sim.h"
#include "sim/tencent/cvm.h"

#define MAX_VARS 16

struct env_var {
	const char *name;
	char *value;
};

static struct {
	char dir[64];
	char log_path[128];
	char control[64];
	char endpoint[SIM_NCLOUDS][64];
	char token_url[128];
	struct sim_server *srv;
	struct gc_http *http;
	struct env_var vars[MAX_VARS];
	size_t n;
	struct gc_spec_env env;
} t;

static const char *lookup(void *ctx, const char *name)
{
	(void)ctx;
	for (size_t i = 0; i < t.n; i++)
		if (strcmp(t.vars[i].name, name) == 0)
			return t.vars[i].value;
	return NULL;
}

static void set_env(const char *name, const char *value)
{
	for (size_t i = 0; i < t.n; i++)
		if (strcmp(t.vars[i].name, name) == 0) {
			free(t.vars[i].value);
			t.vars[i].value = value ? gc_xstrdup(value) : NULL;
			return;
		}
	assert_true(t.n < MAX_VARS);
	t.vars[t.n].name = name;
	t.vars[t.n++].value = value ? gc_xstrdup(value) : NULL;
}

static int oidc_setup(void **state)
{
	struct sim_server_config cfg;
	struct gc_error err;

	setup(state);
	memset(&t, 0, sizeof(t));
	snprintf(t.dir, sizeof(t.dir), "/tmp/gc-oidc-XXXXXX");
	if (!mkdtemp(t.dir))
		return -1;
	snprintf(t.log_path, sizeof(t.log_path), "%s/requests.log", t.dir);
	gc_error_init(&err);
	sim.oidc = sim_oidc_new(&err);
	if (!sim.oidc)
		return -1;
	memset(&cfg, 0, sizeof(cfg));
	cfg.listen = "127.0.0.1";
	cfg.request_log = t.log_path;
	t.srv = sim_server_start(&sim, &cfg, &err);
	if (!t.srv)
		return -1;
	snprintf(t.control, sizeof(t.control), "http://127.0.0.1:%d",
		 sim_server_port(t.srv, SIM_SERVER_CONTROL));
	for (int c = 0; c < SIM_NCLOUDS; c++)
		snprintf(t.endpoint[c], sizeof(t.endpoint[c]), "http://127.0.0.1:%d",
			 sim_server_port(t.srv, c));
	/* the issuer is the control port, as gpucluster-sim sets it */
	sim_oidc_set_issuer(sim.oidc, t.control);
	snprintf(t.token_url, sizeof(t.token_url), "%s/oidc/token?api-version=2.0", t.control);
	t.http = gc_http_new(NULL, &err);
	t.env.lookup = lookup;
	set_env("HOME", t.dir);
	/* a GitHub Actions job with `permissions: id-token: write`, and no keys at all */
	set_env("GITHUB_ACTIONS", "true");
	set_env("GITHUB_RUN_ID", "777");
	set_env("GITHUB_RUN_ATTEMPT", "3");
	set_env("ACTIONS_ID_TOKEN_REQUEST_URL", t.token_url);
	set_env("ACTIONS_ID_TOKEN_REQUEST_TOKEN", sim_oidc_request_token(sim.oidc));
	return t.http ? 0 : -1;
}

static int oidc_teardown(void **state)
{
	sim_server_stop(t.srv);
	gc_http_free(t.http);
	unlink(t.log_path);
	rmdir(t.dir);
	for (size_t i = 0; i < t.n; i++)
		free(t.vars[i].value);
	sim_oidc_free(sim.oidc);
	sim.oidc = NULL;
	return teardown(state);
}

/* --- HTTP -------------------------------------------------------------------------------- */

/* One request; the status, the body into out (NUL-terminated). */
static int http(const char *method, const char *url, const char *const *headers, size_t n_headers,
		const char *body, struct gc_buf *out)
{
	struct gc_http_request req;
	struct gc_http_response res;
	struct gc_error err;
	int status;

	memset(&req, 0, sizeof(req));
	req.method = method;
	req.url = url;
	req.headers = headers;
	req.n_headers = n_headers;
	req.body = body;
	req.body_len = body ? strlen(body) : 0;
	gc_error_init(&err);
	assert_int_equal(gc_http_perform(t.http, &req, &res, &err), 0);
	status = res.status;
	gc_buf_reset(out);
	gc_buf_add(out, res.body.data, res.body.len);
	gc_http_response_release(&res);
	return status;
}

static json_t *get_json(const char *path, const char *authz, int *status)
{
	struct gc_buf body = GC_BUF_INIT(1 << 20);
	char *url = gc_xasprintf("%s%s", t.control, path);
	const char *h[1] = { authz };
	json_t *j;

	*status = http("GET", url, h, authz ? 1 : 0, NULL, &body);
	j = json_loadb(body.data, body.len, 0, NULL);
	gc_buf_release(&body);
	free(url);
	return j;
}

/* --- JWT pieces ---------------------------------------------------------------------------- */

static void b64url_decode(struct gc_buf *out, const char *s, size_t n)
{
	struct gc_buf b = GC_BUF_INIT(n + 4);

	for (size_t i = 0; i < n; i++)
		gc_buf_addch(&b, s[i] == '-' ? '+' : s[i] == '_' ? '/' : s[i]);
	while (b.len % 4)
		gc_buf_addch(&b, '=');
	assert_int_equal(gc_base64_decode(out, b.data, b.len), 0);
	gc_buf_release(&b);
}

/* Part i (0: header, 1: claims) of a JWT, as JSON. */
static json_t *jwt_part(const char *jwt, int i)
{
	struct gc_buf raw = GC_BUF_INIT(1 << 16);
	const char *p = jwt, *end;
	json_t *j;

	for (int k = 0; k < i; k++)
		p = strchr(p, '.') + 1;
	end = strchr(p, '.');
	b64url_decode(&raw, p, (size_t)(end - p));
	j = json_loadb(raw.data, raw.len, 0, NULL);
	gc_buf_release(&raw);
	assert_true(json_is_object(j));
	return j;
}

static BIGNUM *jwk_bn(json_t *key, const char *name)
{
	struct gc_buf raw = GC_BUF_INIT(4096);
	const char *v = json_string_value(json_object_get(key, name));
	BIGNUM *bn;

	assert_non_null(v);
	b64url_decode(&raw, v, strlen(v));
	bn = BN_bin2bn((const unsigned char *)raw.data, (int)raw.len, NULL);
	gc_buf_release(&raw);
	return bn;
}

/* Whether jwt's RS256 signature verifies with the JWK (n, e) alone. */
static bool verifies_with_jwk(const char *jwt, json_t *key)
{
	BIGNUM *n = jwk_bn(key, "n"), *e = jwk_bn(key, "e");
	OSSL_PARAM_BLD *bld = OSSL_PARAM_BLD_new();
	EVP_PKEY_CTX *ctx = EVP_PKEY_CTX_new_from_name(NULL, "RSA", NULL);
	EVP_MD_CTX *md = EVP_MD_CTX_new();
	struct gc_buf sig = GC_BUF_INIT(4096);
	const char *dot = strrchr(jwt, '.');
	EVP_PKEY *pkey = NULL;
	OSSL_PARAM *params;
	bool ok;

	assert_true(OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_N, n) == 1);
	assert_true(OSSL_PARAM_BLD_push_BN(bld, OSSL_PKEY_PARAM_RSA_E, e) == 1);
	params = OSSL_PARAM_BLD_to_param(bld);
	assert_true(EVP_PKEY_fromdata_init(ctx) == 1);
	assert_true(EVP_PKEY_fromdata(ctx, &pkey, EVP_PKEY_PUBLIC_KEY, params) == 1);
	b64url_decode(&sig, dot + 1, strlen(dot + 1));
	assert_true(EVP_DigestVerifyInit(md, NULL, EVP_sha256(), NULL, pkey) == 1);
	ok = EVP_DigestVerify(md, (const unsigned char *)sig.data, sig.len,
			      (const unsigned char *)jwt, (size_t)(dot - jwt)) == 1;
	gc_buf_release(&sig);
	EVP_MD_CTX_free(md);
	EVP_PKEY_free(pkey);
	EVP_PKEY_CTX_free(ctx);
	OSSL_PARAM_free(params);
	OSSL_PARAM_BLD_free(bld);
	BN_free(n);
	BN_free(e);
	return ok;
}

static char *issue(const struct sim_oidc *o, const char *aud, int64_t iat)
{
	struct sim_oidc_claims c;
	char *jwt;

	memset(&c, 0, sizeof(c));
	c.audience = aud;
	c.iat = iat;
	jwt = sim_oidc_issue(o, &c);
	assert_non_null(jwt);
	return jwt;
}

/* --- the issuer ----------------------------------------------------------------------------- */

static void test_issuer_documents(void **state)
{
	char *jwks_uri = gc_xasprintf("%s/.well-known/jwks", t.control), *jwt;
	json_t *doc, *key;
	int status;

	(void)state;
	doc = get_json("/.well-known/openid-configuration", NULL, &status);
	assert_int_equal(status, 200);
	assert_string_equal(json_string_value(json_object_get(doc, "issuer")), t.control);
	assert_string_equal(json_string_value(json_object_get(doc, "jwks_uri")), jwks_uri);
	assert_string_equal(
		json_string_value(json_array_get(
			json_object_get(doc, "id_token_signing_alg_values_supported"), 0)),
		"RS256");
	json_decref(doc);

	doc = get_json("/.well-known/jwks", NULL, &status);
	assert_int_equal(status, 200);
	assert_int_equal(json_array_size(json_object_get(doc, "keys")), 1);
	key = json_array_get(json_object_get(doc, "keys"), 0);
	assert_string_equal(json_string_value(json_object_get(key, "kty")), "RSA");
	assert_string_equal(json_string_value(json_object_get(key, "alg")), "RS256");
	assert_string_equal(json_string_value(json_object_get(key, "use")), "sig");
	assert_string_equal(json_string_value(json_object_get(key, "kid")), sim_oidc_kid(sim.oidc));
	/* the published key is the one that signs: a token verifies with n and e alone */
	jwt = issue(sim.oidc, "sts.amazonaws.com", 0);
	assert_true(verifies_with_jwk(jwt, key));
	jwt[strlen(jwt) - 5] = jwt[strlen(jwt) - 5] == 'A' ? 'B' : 'A';
	assert_false(verifies_with_jwk(jwt, key));
	free(jwt);
	json_decref(doc);

	/* only GET */
	{
		struct gc_buf body = GC_BUF_INIT(1 << 16);
		assert_int_equal(http("POST", jwks_uri, NULL, 0, "", &body), 405);
		gc_buf_release(&body);
	}
	free(jwks_uri);
}

static void test_token_endpoint(void **state)
{
	char *bearer = gc_xasprintf("Authorization: bearer %s", sim_oidc_request_token(sim.oidc));
	int64_t before = (int64_t)time(NULL);
	json_t *doc, *header, *claims;
	const char *jwt;
	int status;

	(void)state;
	/* the runner's request token is required, as a bearer token */
	doc = get_json("/oidc/token?audience=x", NULL, &status);
	assert_int_equal(status, 401);
	json_decref(doc);
	doc = get_json("/oidc/token?audience=x", "Authorization: Bearer not-the-token", &status);
	assert_int_equal(status, 401);
	json_decref(doc);
	doc = get_json("/oidc/token?audience=", bearer, &status);
	assert_int_equal(status, 400);
	json_decref(doc);

	/* GitHub's answer: {"value": JWT}, RS256 with the key's id, the audience asked for */
	doc = get_json("/oidc/token?api-version=2.0&audience=sts.aliyuncs.com", bearer, &status);
	assert_int_equal(status, 200);
	jwt = json_string_value(json_object_get(doc, "value"));
	assert_non_null(jwt);
	header = jwt_part(jwt, 0);
	claims = jwt_part(jwt, 1);
	assert_string_equal(json_string_value(json_object_get(header, "alg")), "RS256");
	assert_string_equal(json_string_value(json_object_get(header, "typ")), "JWT");
	assert_string_equal(json_string_value(json_object_get(header, "kid")),
			    sim_oidc_kid(sim.oidc));
	assert_string_equal(json_string_value(json_object_get(claims, "iss")), t.control);
	assert_string_equal(json_string_value(json_object_get(claims, "aud")), "sts.aliyuncs.com");
	assert_string_equal(json_string_value(json_object_get(claims, "sub")),
			    "repo:gpucluster-sim/ci:ref:refs/heads/main");
	assert_string_equal(json_string_value(json_object_get(claims, "repository")),
			    "gpucluster-sim/ci");
	{
		json_int_t iat = json_integer_value(json_object_get(claims, "iat"));
		json_int_t nbf = json_integer_value(json_object_get(claims, "nbf"));
		json_int_t exp = json_integer_value(json_object_get(claims, "exp"));

		assert_true(iat >= before && iat <= (json_int_t)time(NULL));
		assert_true(nbf == iat);
		assert_int_equal(exp - iat, SIM_OIDC_TOKEN_TTL);
	}
	json_decref(header);
	json_decref(claims);
	json_decref(doc);

	/* without an audience: GitHub's default, the owner's URL */
	doc = get_json("/oidc/token?api-version=2.0", bearer, &status);
	assert_int_equal(status, 200);
	claims = jwt_part(json_string_value(json_object_get(doc, "value")), 1);
	assert_string_equal(json_string_value(json_object_get(claims, "aud")),
			    "https://github.com/gpucluster-sim");
	json_decref(claims);
	json_decref(doc);
	free(bearer);
}

static void test_verify_rules(void **state)
{
	int64_t now = (int64_t)time(NULL);
	struct sim_oidc *stranger = sim_oidc_new(NULL);
	struct sim_oidc_claims c;
	struct sim_jwt j;
	char *jwt;

	(void)state;
	assert_non_null(stranger);
	jwt = issue(sim.oidc, "sts.amazonaws.com", now);
	assert_int_equal(sim_oidc_verify(&sim, SIM_AWS, jwt, now, &j), SIM_JWT_OK);
	assert_string_equal(j.iss, t.control);
	assert_string_equal(j.aud, "sts.amazonaws.com");
	/* each cloud trusts its own audience only */
	assert_int_equal(sim_oidc_verify(&sim, SIM_ALIBABA, jwt, now, &j), SIM_JWT_AUDIENCE);
	assert_int_equal(sim_oidc_verify(&sim, SIM_TENCENT, jwt, now, &j), SIM_JWT_AUDIENCE);
	/* time: expired at exp, not yet before nbf (with five minutes of skew) */
	assert_int_equal(sim_oidc_verify(&sim, SIM_AWS, jwt, now + SIM_OIDC_TOKEN_TTL, &j),
			 SIM_JWT_EXPIRED);
	assert_int_equal(sim_oidc_verify(&sim, SIM_AWS, jwt, now - SIM_OIDC_LEEWAY_S, &j),
			 SIM_JWT_OK);
	assert_int_equal(sim_oidc_verify(&sim, SIM_AWS, jwt, now - SIM_OIDC_LEEWAY_S - 2, &j),
			 SIM_JWT_NOT_YET);
	free(jwt);

	/* another issuer; the right issuer's name on another key's token */
	sim_oidc_set_issuer(stranger, "https://oidc.example.com");
	jwt = issue(stranger, "sts.amazonaws.com", 0);
	assert_int_equal(sim_oidc_verify(&sim, SIM_AWS, jwt, now, &j), SIM_JWT_ISSUER);
	assert_string_equal(j.iss, "https://oidc.example.com");
	free(jwt);
	sim_oidc_set_issuer(stranger, t.control);
	jwt = issue(stranger, "sts.amazonaws.com", 0);
	assert_int_equal(sim_oidc_verify(&sim, SIM_AWS, jwt, now, &j), SIM_JWT_SIGNATURE);
	free(jwt);

	/* a token without a subject; shapes that are no JWT */
	memset(&c, 0, sizeof(c));
	c.audience = "sts.amazonaws.com";
	c.subject = "";
	jwt = sim_oidc_issue(sim.oidc, &c);
	assert_int_equal(sim_oidc_verify(&sim, SIM_AWS, jwt, now, &j), SIM_JWT_CLAIMS);
	assert_non_null(strstr(j.why, "sub"));
	free(jwt);
	assert_int_equal(sim_oidc_verify(&sim, SIM_AWS, "a.b.c", now, &j), SIM_JWT_MALFORMED);
	assert_int_equal(sim_oidc_verify(&sim, SIM_AWS, "", now, &j), SIM_JWT_MALFORMED);
	assert_int_equal(sim_oidc_verify(&sim, SIM_AWS, "e30.e30.", now, &j), SIM_JWT_MALFORMED);
	/* alg none, however well-formed otherwise */
	assert_int_equal(sim_oidc_verify(&sim, SIM_AWS, "eyJhbGciOiJub25lIn0.e30.c2ln", now, &j),
			 SIM_JWT_ALGORITHM);

	/* --oidc-client-id replaces a cloud's default audience, then adds to it */
	assert_int_equal(sim_oidc_add_client_id(stranger, SIM_AWS, "my-client"), 0);
	assert_int_equal(sim_oidc_add_client_id(stranger, SIM_AWS, "other-client"), 0);
	{
		struct sim other;
		size_t n;
		const char *const *ids = sim_oidc_client_ids(stranger, SIM_AWS, &n);

		assert_int_equal(n, 2);
		assert_string_equal(ids[0], "my-client");
		memset(&other, 0, sizeof(other));
		other.oidc = stranger;
		jwt = issue(stranger, "sts.amazonaws.com", 0);
		assert_int_equal(sim_oidc_verify(&other, SIM_AWS, jwt, now, &j), SIM_JWT_AUDIENCE);
		free(jwt);
		jwt = issue(stranger, "other-client", 0);
		assert_int_equal(sim_oidc_verify(&other, SIM_AWS, jwt, now, &j), SIM_JWT_OK);
		free(jwt);
		/* untouched clouds keep theirs */
		ids = sim_oidc_client_ids(stranger, SIM_TENCENT, &n);
		assert_int_equal(n, 1);
		assert_string_equal(ids[0], "sts.cloud.tencent.com");
	}
	assert_int_equal(sim_oidc_add_client_id(stranger, SIM_AWS, ""), -1);
	sim_oidc_free(stranger);
}

/* --- core/oidc.c against the issuer ----------------------------------------------------------- */

static void test_fetch(void **state)
{
	struct gc_oidc_request req;
	struct gc_error err;
	struct sim_jwt j;
	char *jwt = NULL;

	(void)state;
	memset(&req, 0, sizeof(req));
	req.audience = "sts.cloud.tencent.com";
	req.env = &t.env;
	req.http = t.http;
	req.clock = &fake;
	gc_error_init(&err);
	assert_int_equal(gc_oidc_fetch(&jwt, &req, &err), 0);
	assert_int_equal(sim_oidc_verify(&sim, SIM_TENCENT, jwt, (int64_t)time(NULL), &j),
			 SIM_JWT_OK);
	gc_oidc_token_free(jwt);
	/* a request token of another job: the service says no, and nothing is retried */
	set_env("ACTIONS_ID_TOKEN_REQUEST_TOKEN", "stale");
	fc.sleeps = 0;
	assert_int_equal(gc_oidc_fetch(&jwt, &req, &err), -1);
	assert_int_equal(err.code, GC_EAUTH);
	assert_non_null(strstr(err.message, "refused the request (HTTP 401)"));
	assert_int_equal(fc.sleeps, 0);
	set_env("ACTIONS_ID_TOKEN_REQUEST_TOKEN", sim_oidc_request_token(sim.oidc));
}

/* --- the exchanges ---------------------------------------------------------------------------- */

struct cloud_case {
	const char *cloud; /* its name in the registry */
	enum sim_cloud sim;
	const char *region;
	const char *role;
	const char *provider;
	const char *audience;
	const char *exchange; /* the STS action */
	/* the codes for: another key's signature, another issuer, another audience, expired */
	const char *codes[4];
};

static const struct cloud_case cases[] = {
	{ "aws",
	  SIM_AWS,
	  "us-east-1",
	  "arn:aws:iam::111122223333:role/gpucluster-ci",
	  NULL,
	  "sts.amazonaws.com",
	  "AssumeRoleWithWebIdentity",
	  { "InvalidIdentityToken", "InvalidIdentityToken", "InvalidIdentityToken",
	    "ExpiredTokenException" } },
	{ "alibaba",
	  SIM_ALIBABA,
	  "cn-hangzhou",
	  "acs:ram::5123456789012345:role/gpucluster-ci",
	  SIM_OIDC_ALIBABA_PROVIDER,
	  "sts.aliyuncs.com",
	  "AssumeRoleWithOIDC",
	  { "AuthenticationFail.OIDCToken.InvalidSignature",
	    "AuthenticationFail.OIDCToken.IssuerNotMatch",
	    "AuthenticationFail.OIDCToken.AudienceNotMatch",
	    "AuthenticationFail.OIDCToken.Expired" } },
	{ "tencent",
	  SIM_TENCENT,
	  "ap-guangzhou",
	  "qcs::cam::uin/100000000001:roleName/gpucluster-ci",
	  SIM_OIDC_TENCENT_PROVIDER,
	  "sts.cloud.tencent.com",
	  "AssumeRoleWithWebIdentity",
	  { "InvalidParameter.WebIdentityTokenError", "InvalidParameter.WebIdentityTokenError",
	    "InvalidParameter.WebIdentityTokenError", "InvalidParameter.WebIdentityTokenError" } },
};

/* The request log's lines, in order. */
static json_t *logged(void)
{
	FILE *f = fopen(t.log_path, "r");
	json_t *all = json_array();
	char line[16384];

	assert_non_null(f);
	while (fgets(line, sizeof(line), f)) {
		json_t *j = json_loads(line, 0, NULL);
		if (j)
			json_array_append_new(all, j);
	}
	fclose(f);
	return all;
}

/* Sends token to the cloud's STS as its SDKs do; the error code into code ("" on success),
 * the HTTP status returned. */
static int sts_try(const struct cloud_case *k, const char *token, char code[128])
{
	struct gc_buf body = GC_BUF_INIT(1 << 16), out = GC_BUF_INIT(1 << 20);
	struct gc_params p = GC_PARAMS_INIT;
	char *url = NULL, ts[48];
	int status;
	json_t *j = NULL;
	const char *v;

	code[0] = '\0';
	switch (k->sim) {
	case SIM_AWS: {
		const char *h[1] = { "Content-Type: application/x-www-form-urlencoded" };
		gc_params_add(&p, "Action", k->exchange);
		gc_params_add(&p, "Version", "2011-06-15");
		gc_params_add(&p, "RoleArn", k->role);
		gc_params_add(&p, "RoleSessionName", "t1");
		gc_params_add(&p, "WebIdentityToken", token);
		gc_params_encode(&body, &p);
		url = gc_xasprintf("%s/", t.endpoint[k->sim]);
		status = http("POST", url, h, 1, body.data, &out);
		v = strstr(out.data, "<Code>");
		if (v)
			snprintf(code, 128, "%.*s", (int)strcspn(v + 6, "<"), v + 6);
		break;
	}
	case SIM_ALIBABA: {
		const char *h[1] = { "Content-Type: application/x-www-form-urlencoded" };
		gc_params_add(&p, "OIDCProviderArn", k->provider);
		gc_params_add(&p, "OIDCToken", token);
		gc_params_add(&p, "RoleArn", k->role);
		gc_params_add(&p, "RoleSessionName", "t1");
		gc_params_encode(&body, &p);
		url = gc_xasprintf("%s/?Action=AssumeRoleWithOIDC&Format=JSON&Version=2015-04-01",
				   t.endpoint[k->sim]);
		status = http("POST", url, h, 1, body.data, &out);
		j = json_loadb(out.data, out.len, 0, NULL);
		if ((v = json_string_value(json_object_get(j, "Code"))))
			snprintf(code, 128, "%s", v);
		break;
	}
	case SIM_TENCENT:
	default: {
		const char *h[6] = { "Authorization: SKIP",
				     "Content-Type: application/json",
				     "X-TC-Action: AssumeRoleWithWebIdentity",
				     "X-TC-Version: 2018-08-13",
				     ts,
				     "X-TC-Region: ap-guangzhou" };
		json_t *req = json_pack("{s:s, s:s, s:s, s:s}", "ProviderId", k->provider,
					"WebIdentityToken", token, "RoleArn", k->role,
					"RoleSessionName", "t1");
		char *text = json_dumps(req, JSON_COMPACT);

		snprintf(ts, sizeof(ts), "X-TC-Timestamp: %lld", (long long)time(NULL));
		url = gc_xasprintf("%s/", t.endpoint[k->sim]);
		status = http("POST", url, h, 6, text, &out);
		free(text);
		json_decref(req);
		j = json_loadb(out.data, out.len, 0, NULL);
		if ((v = json_string_value(json_object_get(
			     json_object_get(json_object_get(j, "Response"), "Error"), "Code"))))
			snprintf(code, 128, "%s", v);
		break;
	}
	}
	json_decref(j);
	free(url);
	gc_params_release(&p);
	gc_buf_release(&body);
	gc_buf_release(&out);
	return status;
}

static void exchange(const struct cloud_case *k)
{
	struct gc_spec_oidc oidc = { NULL, NULL, NULL, NULL };
	struct gc_provider_config cfg;
	struct gc_tag_filter tf = { "gpucluster:cluster", "oidc-test" };
	struct gc_discover_query q = { &tf, 1, false };
	struct gc_instance_list list;
	struct gc_provider *p = NULL;
	struct sim_oidc *stranger = sim_oidc_new(NULL);
	struct gc_error err;
	char code[128], *jwt;
	size_t first_exchange = SIZE_MAX, first_call = SIZE_MAX, i;
	json_t *lines, *line;
	int64_t now = (int64_t)time(NULL);

	assert_non_null(stranger);
	/* the provider as a GitHub Actions job opens it: the spec's role, no keys */
	oidc.role = (char *)(uintptr_t)k->role;
	oidc.provider = (char *)(uintptr_t)k->provider;
	memset(&cfg, 0, sizeof(cfg));
	cfg.region = k->region;
	cfg.endpoint = t.endpoint[k->sim];
	cfg.env = &t.env;
	cfg.clock = &fake;
	cfg.oidc = &oidc;
	gc_error_init(&err);
	assert_int_equal(truncate(t.log_path, 0), 0);
	assert_int_equal(gc_provider_open(&p, gc_provider_by_name(k->cloud), &cfg, &err), 0);
	gc_instance_list_init(&list);
	assert_int_equal(gc_provider_discover(p, &q, &list, &err), 0);
	gc_instance_list_release(&list);
	gc_provider_close(p);

	/* the request log: the exchange, named after the run, then the instances listed with
	 * the keys it gave (an unknown or unsigned key would have been refused) */
	lines = logged();
	json_array_foreach(lines, i, line)
	{
		const char *action = json_string_value(json_object_get(line, "action"));
		bool ok = json_is_null(json_object_get(line, "error_code"));

		if (!strcmp(action, k->exchange) && ok && first_exchange == SIZE_MAX) {
			first_exchange = i;
			assert_string_equal(
				json_string_value(json_object_get(json_object_get(line, "params"),
								  "RoleSessionName")),
				"gpucluster-777-3");
		}
		if (!strcmp(action, "DescribeInstances") && ok && first_call == SIZE_MAX)
			first_call = i;
	}
	assert_true(first_exchange != SIZE_MAX);
	assert_true(first_call != SIZE_MAX && first_call > first_exchange);
	json_decref(lines);

	/* what the STS refuses, each with the cloud's own code */
	jwt = issue(sim.oidc, k->audience, 0);
	assert_true(sts_try(k, jwt, code) == 200 && code[0] == '\0');
	/* the same token signed again by another key under our issuer's name */
	free(jwt);
	sim_oidc_set_issuer(stranger, t.control);
	jwt = issue(stranger, k->audience, 0);
	sts_try(k, jwt, code);
	assert_string_equal(code, k->codes[0]);
	free(jwt);
	sim_oidc_set_issuer(stranger, "https://token.actions.example.com");
	jwt = issue(stranger, k->audience, 0);
	sts_try(k, jwt, code);
	assert_string_equal(code, k->codes[1]);
	free(jwt);
	jwt = issue(sim.oidc, "https://github.com/acme", 0);
	sts_try(k, jwt, code);
	assert_string_equal(code, k->codes[2]);
	free(jwt);
	jwt = issue(sim.oidc, k->audience, now - 3600);
	sts_try(k, jwt, code);
	assert_string_equal(code, k->codes[3]);
	free(jwt);

	/* and through the chain, a refusal is an authentication failure with STS's code */
	oidc.audience = (char *)(uintptr_t) "https://github.com/acme";
	assert_int_equal(gc_provider_open(&p, gc_provider_by_name(k->cloud), &cfg, &err), -1);
	assert_int_equal(err.code, GC_EAUTH);
	assert_string_equal(err.cloud_code, k->codes[2]);
	assert_non_null(strstr(err.message, "with the GitHub Actions OIDC token"));
	/* outside GitHub Actions the block is skipped, and with no keys nothing is found */
	set_env("GITHUB_ACTIONS", NULL);
	set_env("AWS_EC2_METADATA_DISABLED", "true");
	set_env("ALIBABA_CLOUD_ECS_METADATA_DISABLED", "true");
	set_env("TENCENTCLOUD_CVM_ROLE_DISABLED", "true");
	assert_int_equal(gc_provider_open(&p, gc_provider_by_name(k->cloud), &cfg, &err), -1);
	assert_int_equal(err.code, GC_EAUTH);
	assert_non_null(
		strstr(err.message, "the spec's provider.oidc (GITHUB_ACTIONS is not true)"));
	set_env("GITHUB_ACTIONS", "true");
	/* a job without the id-token permission: the error says which permission */
	set_env("ACTIONS_ID_TOKEN_REQUEST_URL", NULL);
	oidc.audience = NULL;
	assert_int_equal(gc_provider_open(&p, gc_provider_by_name(k->cloud), &cfg, &err), -1);
	assert_int_equal(err.code, GC_EAUTH);
	assert_non_null(strstr(err.message,
			       "no ACTIONS_ID_TOKEN_REQUEST_URL: the workflow needs "
			       "`permissions: id-token: write`"));
	set_env("ACTIONS_ID_TOKEN_REQUEST_URL", t.token_url);
	sim_oidc_free(stranger);
}

static void test_exchange_aws(void **state)
{
	(void)state;
	exchange(&cases[0]);
}

static void test_exchange_alibaba(void **state)
{
	(void)state;
	exchange(&cases[1]);
}

static void test_exchange_tencent(void **state)
{
	(void)state;
	exchange(&cases[2]);
}

/* A CVM DescribeRegions signed with keys and token; the error code into code. */
static void cvm_call(const struct tc_creds *c, const char *token, char code[128])
{
	struct gc_params hdrs = GC_PARAMS_INIT;
	struct gc_sign_request sr;
	struct gc_sign_result sig;
	struct tc_sign_input in;
	struct gc_buf out = GC_BUF_INIT(1 << 20);
	struct gc_error err;
	const char *host = t.endpoint[SIM_TENCENT] + strlen("http://");
	char *lines[16], *url = gc_xasprintf("%s/", t.endpoint[SIM_TENCENT]);
	size_t n = 0;
	json_t *j;
	const char *v;

	gc_params_add(&hdrs, "Host", host);
	gc_params_add(&hdrs, "Content-Type", "application/json");
	memset(&sr, 0, sizeof(sr));
	sr.method = "POST";
	sr.host = host;
	sr.path = "/";
	sr.headers = &hdrs;
	sr.body = "{}";
	sr.body_len = 2;
	memset(&in, 0, sizeof(in));
	in.secret_id = c->secret_id;
	in.secret_key = c->secret_key;
	in.token = token;
	in.timestamp = (int64_t)time(NULL);
	in.service = "cvm";
	in.action = "DescribeRegions";
	in.version = "2017-03-12";
	gc_error_init(&err);
	assert_int_equal(tc_sign(&sig, &sr, &in, &err), 0);
	gc_params_add_all(&hdrs, &sig.added_headers);
	gc_sign_result_release(&sig);
	for (; n < hdrs.n && n < 16; n++)
		lines[n] = gc_xasprintf("%s: %s", hdrs.items[n].name, hdrs.items[n].value);
	http("POST", url, (const char *const *)lines, n, "{}", &out);
	j = json_loadb(out.data, out.len, 0, NULL);
	v = json_string_value(
		json_object_get(json_object_get(json_object_get(j, "Response"), "Error"), "Code"));
	snprintf(code, 128, "%s", v ? v : "");
	json_decref(j);
	for (size_t i = 0; i < n; i++)
		free(lines[i]);
	free(url);
	gc_params_release(&hdrs);
	gc_buf_release(&out);
}

static void test_tencent_temporary_keys(void **state)
{
	struct gc_spec_oidc oidc = { NULL, NULL, NULL, NULL };
	struct tc_creds_input in;
	struct tc_creds c;
	struct gc_error err;
	char code[128];

	(void)state;
	oidc.role = (char *)(uintptr_t) "qcs::cam::uin/100000000001:roleName/ci";
	oidc.provider = (char *)(uintptr_t)SIM_OIDC_TENCENT_PROVIDER;
	memset(&in, 0, sizeof(in));
	in.region = "ap-guangzhou";
	in.endpoint = t.endpoint[SIM_TENCENT];
	in.env = &t.env;
	in.http = t.http;
	in.clock = &fake;
	in.oidc = &oidc;
	tc_creds_init(&c);
	gc_error_init(&err);
	assert_int_equal(tc_creds_resolve(&c, &in, &err), 0);
	assert_true(gc_starts_with(c.secret_id, "AKID"));
	assert_non_null(c.token);
	assert_true(c.expiration > (int64_t)time(NULL) + 3600);
	assert_string_equal(c.source,
			    "GitHub Actions OIDC (role '"
			    "qcs::cam::uin/100000000001:"
			    "roleName/ci')");
	cvm_call(&c, c.token, code);
	assert_string_equal(code, "");
	cvm_call(&c, "Z2Fy", code);
	assert_string_equal(code, "AuthFailure.TokenFailure");
	cvm_call(&c, NULL, code);
	assert_string_equal(code, "AuthFailure.SecretIdNotFound");
	tc_creds_release(&c);
}

/* The Alibaba driver's AssumeRoleWithOIDC as a function of its own (the chain's hook). */
static void test_alibaba_hook(void **state)
{
	struct ali_creds_input in;
	struct ali_creds c;
	struct gc_error err;
	char *jwt = issue(sim.oidc, "sts.aliyuncs.com", 0);

	(void)state;
	memset(&in, 0, sizeof(in));
	in.region = "cn-hangzhou";
	in.endpoint = t.endpoint[SIM_ALIBABA];
	in.env = &t.env;
	in.http = t.http;
	in.clock = &fake;
	ali_creds_init(&c);
	gc_error_init(&err);
	assert_int_equal(ali_assume_role_with_oidc(&c, &in, "acs:ram::5123456789012345:role/ci",
						   SIM_OIDC_ALIBABA_PROVIDER, jwt, "hook-1", &err),
			 0);
	assert_true(gc_starts_with(c.access_key_id, "STS."));
	assert_true(gc_starts_with(c.security_token, "CAIS"));
	assert_true(c.expiration > (int64_t)time(NULL) + 3000);
	assert_string_equal(c.source, "OIDC (role 'acs:ram::5123456789012345:role/ci')");
	ali_creds_release(&c);
	/* another provider ARN: STS's own refusal, as an authentication failure */
	assert_int_equal(ali_assume_role_with_oidc(&c, &in, "acs:ram::5123456789012345:role/ci",
						   "acs:ram::5123456789012345:oidc-provider/other",
						   jwt, NULL, &err),
			 -1);
	assert_int_equal(err.code, GC_EAUTH);
	assert_string_equal(err.cloud_code, "AuthenticationFail.NoPermission");
	assert_int_equal(err.http_status, 401);
	assert_null(c.access_key_id);
	free(jwt);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_issuer_documents, oidc_setup, oidc_teardown),
		cmocka_unit_test_setup_teardown(test_token_endpoint, oidc_setup, oidc_teardown),
		cmocka_unit_test_setup_teardown(test_verify_rules, oidc_setup, oidc_teardown),
		cmocka_unit_test_setup_teardown(test_fetch, oidc_setup, oidc_teardown),
		cmocka_unit_test_setup_teardown(test_exchange_aws, oidc_setup, oidc_teardown),
		cmocka_unit_test_setup_teardown(test_exchange_alibaba, oidc_setup, oidc_teardown),
		cmocka_unit_test_setup_teardown(test_exchange_tencent, oidc_setup, oidc_teardown),
		cmocka_unit_test_setup_teardown(test_tencent_temporary_keys, oidc_setup,
						oidc_teardown),
		cmocka_unit_test_setup_teardown(test_alibaba_hook, oidc_setup, oidc_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
