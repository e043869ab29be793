/*
 * oidc.c: the emulator's OpenID Connect issuer and the JWT checks the STS frontends share
 * (see oidc.h for the endpoints and the rules).
 *
 * One RSA-2048 key per process, made at start-up with OpenSSL; its public half is served
 * as a JWK set, and every token is RS256 (RSASSA-PKCS1-v1_5 over SHA-256 of
 * "header.claims"). Verification does not fetch the JWK set over HTTP as a real STS
 * would: the issuer is in the same process, so the key is looked up by its kid directly,
 * which keeps the checks (and their failures) the same without a network round trip.
 *
 * The key and the client ids are fixed before the server starts; the issuer URL is set
 * once the control port listens, under a mutex, since connection threads may already
 * read it. Everything else is read-only and safe from any thread.
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include <jansson.h>
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/rsa.h>

#include "core/alloc.h"
#include "core/buf.h"
#include "core/hash.h"
#include "core/str.h"
#include "sim/oidc.h"

#define RSA_BITS	 2048
#define KID_LEN		 16
#define DEFAULT_AUDIENCE "https://github.com/" SIM_OIDC_OWNER

struct sim_oidc {
	EVP_PKEY *key;
	char kid[KID_LEN + 1];
	char *jwk_n, *jwk_e; /* base64url, for the JWK set */
	char request_token[SIM_OIDC_REQUEST_TOKEN_LEN + 1];
	pthread_mutex_t *lock; /* the issuer's; a pointer, so const readers can take it */
	char issuer[SIM_OIDC_ISSUER_MAX + 1];
	char client_ids[SIM_NCLOUDS][SIM_OIDC_MAX_CLIENT_IDS][SIM_OIDC_CLIENT_ID_MAX + 1];
	const char *client_id_ptrs[SIM_NCLOUDS][SIM_OIDC_MAX_CLIENT_IDS];
	size_t n_client_ids[SIM_NCLOUDS];
	bool client_ids_set[SIM_NCLOUDS]; /* the defaults were replaced */
	uint64_t jti;			  /* counts tokens, for unique jti claims */
};

/* --- base64url ------------------------------------------------------------------------ */

static void b64url(struct gc_buf *out, const void *data, size_t len)
{
	struct gc_buf b = GC_BUF_INIT(len * 2 + 8);

	gc_base64_encode(&b, data, len);
	for (size_t i = 0; i < b.len && b.data[i] != '='; i++) {
		char c = b.data[i];
		gc_buf_addch(out, c == '+' ? '-' : c == '/' ? '_' : c);
	}
	gc_buf_release(&b);
}

/* Decodes one base64url part into out; -1 on a character outside the alphabet. */
static int b64url_decode(struct gc_buf *out, const char *s, size_t n)
{
	struct gc_buf b = GC_BUF_INIT(n + 4);
	int rc = -1;

	for (size_t i = 0; i < n; i++) {
		char c = s[i];

		if (c == '-')
			c = '+';
		else if (c == '_')
			c = '/';
		else if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			   (c >= '0' && c <= '9')))
			goto out;
		gc_buf_addch(&b, c);
	}
	while (b.len % 4)
		gc_buf_addch(&b, '=');
	rc = gc_base64_decode(out, b.data, b.len);
out:
	gc_buf_release(&b);
	return rc;
}

/* --- the key --------------------------------------------------------------------------- */

static char *bn_b64url(const EVP_PKEY *key, const char *param)
{
	struct gc_buf out = GC_BUF_INIT(1024);
	BIGNUM *bn = NULL;
	unsigned char *bytes;
	int n;

	if (EVP_PKEY_get_bn_param(key, param, &bn) != 1)
		return NULL;
	n = BN_num_bytes(bn);
	bytes = gc_xmalloc((size_t)n + 1);
	BN_bn2bin(bn, bytes);
	b64url(&out, bytes, (size_t)n);
	free(bytes);
	BN_free(bn);
	return gc_buf_detach(&out, NULL);
}

struct sim_oidc *sim_oidc_new(struct gc_error *err)
{
	struct sim_oidc *o = gc_xcalloc(1, sizeof(*o));
	unsigned char rnd[SIM_OIDC_REQUEST_TOKEN_LEN / 2], h[GC_SHA256_LEN];
	char hex[GC_SHA256_HEX_LEN];

	o->lock = gc_xmalloc(sizeof(*o->lock));
	pthread_mutex_init(o->lock, NULL);
	o->key = EVP_RSA_gen(RSA_BITS);
	if (!o->key) {
		gc_error_set(err, GC_EGENERIC, "cannot make the OIDC issuer's RSA key");
		goto fail;
	}
	o->jwk_n = bn_b64url(o->key, OSSL_PKEY_PARAM_RSA_N);
	o->jwk_e = bn_b64url(o->key, OSSL_PKEY_PARAM_RSA_E);
	if (!o->jwk_n || !o->jwk_e) {
		gc_error_set(err, GC_EGENERIC, "cannot read the OIDC issuer's public key");
		goto fail;
	}
	/* the kid names the key: a prefix of the modulus's hash, as stable as the key */
	gc_sha256(o->jwk_n, strlen(o->jwk_n), h);
	gc_hex(h, sizeof(h), hex);
	snprintf(o->kid, sizeof(o->kid), "%.*s", KID_LEN, hex);
	if (gc_random_bytes(rnd, sizeof(rnd)) != 0) {
		gc_error_set(err, GC_EGENERIC, "no random bytes for the OIDC request token");
		goto fail;
	}
	gc_hex(rnd, sizeof(rnd), o->request_token);
	for (int c = 0; c < SIM_NCLOUDS; c++) {
		snprintf(o->client_ids[c][0], sizeof(o->client_ids[c][0]), "%s",
			 sim_frontend((enum sim_cloud)c)->audience);
		o->n_client_ids[c] = 1;
		for (size_t i = 0; i < SIM_OIDC_MAX_CLIENT_IDS; i++)
			o->client_id_ptrs[c][i] = o->client_ids[c][i];
	}
	snprintf(o->issuer, sizeof(o->issuer), "http://127.0.0.1");
	return o;
fail:
	sim_oidc_free(o);
	return NULL;
}

void sim_oidc_free(struct sim_oidc *o)
{
	if (!o)
		return;
	EVP_PKEY_free(o->key);
	free(o->jwk_n);
	free(o->jwk_e);
	pthread_mutex_destroy(o->lock);
	free(o->lock);
	free(o);
}

void sim_oidc_set_issuer(struct sim_oidc *o, const char *issuer)
{
	size_t n = strlen(issuer);

	while (n > 0 && issuer[n - 1] == '/')
		n--;
	pthread_mutex_lock(o->lock);
	snprintf(o->issuer, sizeof(o->issuer), "%.*s", (int)n, issuer);
	pthread_mutex_unlock(o->lock);
}

void sim_oidc_issuer(const struct sim_oidc *o, char out[SIM_OIDC_ISSUER_MAX + 1])
{
	pthread_mutex_lock(o->lock);
	snprintf(out, SIM_OIDC_ISSUER_MAX + 1, "%s", o->issuer);
	pthread_mutex_unlock(o->lock);
}

const char *sim_oidc_request_token(const struct sim_oidc *o)
{
	return o->request_token;
}

const char *sim_oidc_kid(const struct sim_oidc *o)
{
	return o->kid;
}

int sim_oidc_add_client_id(struct sim_oidc *o, enum sim_cloud c, const char *id)
{
	if ((unsigned)c >= SIM_NCLOUDS || !id || !*id || strlen(id) > SIM_OIDC_CLIENT_ID_MAX)
		return -1;
	if (!o->client_ids_set[c]) {
		o->client_ids_set[c] = true;
		o->n_client_ids[c] = 0;
	}
	if (o->n_client_ids[c] >= SIM_OIDC_MAX_CLIENT_IDS)
		return -1;
	snprintf(o->client_ids[c][o->n_client_ids[c]++], SIM_OIDC_CLIENT_ID_MAX + 1, "%s", id);
	return 0;
}

const char *const *sim_oidc_client_ids(const struct sim_oidc *o, enum sim_cloud c, size_t *n)
{
	*n = o->n_client_ids[c];
	return o->client_id_ptrs[c];
}

/* --- issuing ----------------------------------------------------------------------------- */

static char *sign_b64url(const struct sim_oidc *o, const char *data, size_t len)
{
	EVP_MD_CTX *md = EVP_MD_CTX_new();
	unsigned char *sig = NULL;
	size_t siglen = 0;
	struct gc_buf out = GC_BUF_INIT(1024);
	char *ret = NULL;

	if (!md || EVP_DigestSignInit(md, NULL, EVP_sha256(), NULL, o->key) != 1 ||
	    EVP_DigestSign(md, NULL, &siglen, (const unsigned char *)data, len) != 1)
		goto out;
	sig = gc_xmalloc(siglen);
	if (EVP_DigestSign(md, sig, &siglen, (const unsigned char *)data, len) != 1)
		goto out;
	b64url(&out, sig, siglen);
	ret = gc_buf_detach(&out, NULL);
out:
	free(sig);
	gc_buf_release(&out);
	EVP_MD_CTX_free(md);
	return ret;
}

static void add_json_part(struct gc_buf *out, json_t *j)
{
	char *text = json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER);

	if (text)
		b64url(out, text, strlen(text));
	free(text);
}

char *sim_oidc_issue(const struct sim_oidc *o, const struct sim_oidc_claims *c)
{
	struct gc_buf jwt = GC_BUF_INIT(SIM_OIDC_JWT_MAX);
	char issuer[SIM_OIDC_ISSUER_MAX + 1], jti[64], *sig, *ret = NULL;
	int64_t iat = c->iat ? c->iat : (int64_t)time(NULL);
	json_t *header, *claims;
	unsigned char rnd[8];

	sim_oidc_issuer(o, issuer);
	if (gc_random_bytes(rnd, sizeof(rnd)) != 0)
		memset(rnd, 0x5a, sizeof(rnd));
	gc_hex(rnd, sizeof(rnd), jti);
	header = json_pack("{s:s, s:s, s:s, s:s}", "typ", "JWT", "alg", "RS256", "x5t", o->kid,
			   "kid", o->kid);
	/* GitHub's claims, in its order, with this emulator's repository */
	claims = json_pack(
		"{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:I, s:I, s:I}", "jti",
		jti, "sub", c->subject ? c->subject : SIM_OIDC_SUBJECT, "aud",
		c->audience ? c->audience : DEFAULT_AUDIENCE, "ref", "refs/heads/main",
		"repository", SIM_OIDC_REPOSITORY, "repository_owner", SIM_OIDC_OWNER, "run_id",
		"1", "run_attempt", "1", "event_name", "push", "ref_type", "branch", "iss",
		c->issuer ? c->issuer : issuer, "nbf", (json_int_t)(c->nbf ? c->nbf : iat), "exp",
		(json_int_t)(c->exp ? c->exp : iat + SIM_OIDC_TOKEN_TTL), "iat", (json_int_t)iat);
	if (!header || !claims)
		goto out;
	add_json_part(&jwt, header);
	gc_buf_addch(&jwt, '.');
	add_json_part(&jwt, claims);
	sig = sign_b64url(o, jwt.data, jwt.len);
	if (!sig)
		goto out;
	gc_buf_addch(&jwt, '.');
	gc_buf_addstr(&jwt, sig);
	free(sig);
	ret = gc_buf_detach(&jwt, NULL);
out:
	json_decref(header);
	json_decref(claims);
	gc_buf_release(&jwt);
	return ret;
}

/* --- the control port's paths ----------------------------------------------------------- */

static void token_endpoint(struct sim *sim, const struct sim_req *req, struct sim_resp *resp)
{
	const struct sim_oidc *o = sim->oidc;
	const char *authz = gc_params_get_ci(req->headers, "Authorization");
	const char *aud = req->query ? gc_params_get(req->query, "audience") : NULL;
	struct sim_oidc_claims c;
	char *jwt;

	/* the scheme's name is case-insensitive (RFC 9110); the runner's clients write
	 * "Bearer", curl users often "bearer" */
	if (!authz || strncasecmp(authz, "bearer ", 7) != 0 ||
	    strcmp(authz + 7, o->request_token) != 0) {
		sim_resp_json(
			resp, 401,
			json_pack("{s:s}", "message",
				  "the request needs Authorization: Bearer with the request token "
				  "(ACTIONS_ID_TOKEN_REQUEST_TOKEN, in the ready file)"));
		return;
	}
	if (aud && (!*aud || strlen(aud) > SIM_OIDC_CLIENT_ID_MAX)) {
		sim_resp_json(resp, 400,
			      json_pack("{s:s}", "message", "audience must be 1-255 characters"));
		return;
	}
	memset(&c, 0, sizeof(c));
	c.audience = aud;
	c.iat = (int64_t)req->now + sim->cfg.clock_offset_s;
	jwt = sim_oidc_issue(o, &c);
	if (!jwt) {
		sim_resp_json(resp, 500, json_pack("{s:s}", "message", "cannot sign the token"));
		return;
	}
	sim_resp_json(resp, 200, json_pack("{s:s, s:i}", "value", jwt, "count", 1));
	free(jwt);
}

static void discovery(const struct sim_oidc *o, struct sim_resp *resp)
{
	char issuer[SIM_OIDC_ISSUER_MAX + 1], *jwks;

	sim_oidc_issuer(o, issuer);
	jwks = gc_xasprintf("%s/.well-known/jwks", issuer);
	sim_resp_json(resp, 200,
		      json_pack("{s:s, s:s, s:[s], s:[s], s:[s], s:[s], s:[s,s,s,s,s,s,s,s,s]}",
				"issuer", issuer, "jwks_uri", jwks, "subject_types_supported",
				"public", "response_types_supported", "id_token",
				"id_token_signing_alg_values_supported", "RS256",
				"scopes_supported", "openid", "claims_supported", "sub", "aud",
				"exp", "iat", "iss", "jti", "nbf", "ref", "repository"));
	free(jwks);
}

static void jwk_set(const struct sim_oidc *o, struct sim_resp *resp)
{
	sim_resp_json(resp, 200,
		      json_pack("{s:[{s:s, s:s, s:s, s:s, s:s, s:s}]}", "keys", "kty", "RSA", "alg",
				"RS256", "use", "sig", "kid", o->kid, "n", o->jwk_n, "e",
				o->jwk_e));
}

bool sim_oidc_handle(struct sim *sim, const struct sim_req *req, struct sim_resp *resp)
{
	const char *p = req->path;
	bool get = strcmp(req->method, "GET") == 0;

	if (strcmp(p, "/oidc/token") != 0 && strcmp(p, "/.well-known/openid-configuration") != 0 &&
	    strcmp(p, "/.well-known/jwks") != 0)
		return false;
	if (!sim->oidc)
		sim_resp_json(resp, 404,
			      json_pack("{s:b, s:s}", "ok", 0, "error", "no OIDC issuer"));
	else if (!get)
		sim_resp_json(resp, 405,
			      json_pack("{s:b, s:s}", "ok", 0, "error", "method not allowed"));
	else if (strcmp(p, "/oidc/token") == 0)
		token_endpoint(sim, req, resp);
	else if (strcmp(p, "/.well-known/jwks") == 0)
		jwk_set(sim->oidc, resp);
	else
		discovery(sim->oidc, resp);
	return true;
}

/* --- verifying ---------------------------------------------------------------------------- */

static json_t *json_part(const char *s, size_t n)
{
	struct gc_buf raw = GC_BUF_INIT(SIM_OIDC_JWT_MAX);
	json_t *j = NULL;

	if (n && b64url_decode(&raw, s, n) == 0)
		j = json_loadb(raw.data, raw.len, JSON_REJECT_DUPLICATES, NULL);
	if (j && !json_is_object(j)) {
		json_decref(j);
		j = NULL;
	}
	gc_buf_release(&raw);
	return j;
}

static bool signature_ok(const struct sim_oidc *o, const char *signed_part, size_t n,
			 const char *sig_b64, size_t sig_n)
{
	struct gc_buf sig = GC_BUF_INIT(4096);
	EVP_MD_CTX *md = EVP_MD_CTX_new();
	bool ok = false;

	if (md && b64url_decode(&sig, sig_b64, sig_n) == 0 && sig.len &&
	    EVP_DigestVerifyInit(md, NULL, EVP_sha256(), NULL, o->key) == 1)
		ok = EVP_DigestVerify(md, (const unsigned char *)sig.data, sig.len,
				      (const unsigned char *)signed_part, n) == 1;
	EVP_MD_CTX_free(md);
	gc_buf_release(&sig);
	return ok;
}

static void copy_str(char *out, size_t size, json_t *v)
{
	snprintf(out, size, "%s", json_is_string(v) ? json_string_value(v) : "");
}

static enum sim_jwt_check fail(struct sim_jwt *out, enum sim_jwt_check why, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static enum sim_jwt_check fail(struct sim_jwt *out, enum sim_jwt_check why, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(out->why, sizeof(out->why), fmt, ap);
	va_end(ap);
	return why;
}

/* The audience of claims trusted by cloud c into out->aud; false when none is. */
static bool audience_ok(const struct sim_oidc *o, enum sim_cloud c, json_t *aud,
			struct sim_jwt *out)
{
	size_t n_ids, i;
	const char *const *ids = sim_oidc_client_ids(o, c, &n_ids);
	json_t *one;

	if (json_is_string(aud))
		copy_str(out->aud, sizeof(out->aud), aud);
	else
		copy_str(out->aud, sizeof(out->aud), json_array_get(aud, 0));
	for (size_t k = 0; k < n_ids; k++) {
		if (json_is_string(aud) && strcmp(json_string_value(aud), ids[k]) == 0)
			return true;
		json_array_foreach(aud, i, one)
		{
			if (json_is_string(one) && strcmp(json_string_value(one), ids[k]) == 0) {
				copy_str(out->aud, sizeof(out->aud), one);
				return true;
			}
		}
	}
	return false;
}

static bool int_claim(json_t *claims, const char *name, int64_t *out)
{
	json_t *v = json_object_get(claims, name);

	if (!json_is_integer(v))
		return false;
	*out = (int64_t)json_integer_value(v);
	return true;
}

enum sim_jwt_check sim_oidc_verify(const struct sim *sim, enum sim_cloud c, const char *token,
				   int64_t now, struct sim_jwt *out)
{
	const struct sim_oidc *o = sim->oidc;
	const char *d1, *d2, *alg, *kid;
	char issuer[SIM_OIDC_ISSUER_MAX + 1];
	json_t *header = NULL, *claims = NULL, *aud;
	enum sim_jwt_check ret;
	size_t len = token ? strlen(token) : 0;

	memset(out, 0, sizeof(*out));
	d1 = len ? strchr(token, '.') : NULL;
	d2 = d1 ? strchr(d1 + 1, '.') : NULL;
	if (len > SIM_OIDC_JWT_MAX || !d2 || strchr(d2 + 1, '.') || !d2[1] ||
	    !(header = json_part(token, (size_t)(d1 - token))) ||
	    !(claims = json_part(d1 + 1, (size_t)(d2 - d1 - 1)))) {
		ret = fail(out, SIM_JWT_MALFORMED,
			   "the token is not a JWT: three base64url parts, the first two JSON "
			   "objects");
		goto out;
	}
	copy_str(out->iss, sizeof(out->iss), json_object_get(claims, "iss"));
	copy_str(out->sub, sizeof(out->sub), json_object_get(claims, "sub"));
	alg = json_string_value(json_object_get(header, "alg"));
	if (!alg || strcmp(alg, "RS256") != 0) {
		ret = fail(out, SIM_JWT_ALGORITHM,
			   "the algorithm '%s' in the JWT header is not RS256", alg ? alg : "");
		goto out;
	}
	if (o)
		sim_oidc_issuer(o, issuer);
	if (!o || strcmp(out->iss, issuer) != 0) {
		ret = fail(out, SIM_JWT_ISSUER,
			   "no identity provider is registered for issuer '%s'", out->iss);
		goto out;
	}
	kid = json_string_value(json_object_get(header, "kid"));
	if (!kid || strcmp(kid, o->kid) != 0) {
		ret = fail(out, SIM_JWT_SIGNATURE, "the issuer has no key '%s' in its JWK set",
			   kid ? kid : "");
		goto out;
	}
	if (!signature_ok(o, token, (size_t)(d2 - token), d2 + 1, strlen(d2 + 1))) {
		ret = fail(out, SIM_JWT_SIGNATURE,
			   "the signature does not verify with the issuer's key '%s'", kid);
		goto out;
	}
	aud = json_object_get(claims, "aud");
	if (!out->sub[0] || !(json_is_string(aud) || json_array_size(aud) > 0) ||
	    !int_claim(claims, "exp", &out->exp) || !int_claim(claims, "iat", &out->iat)) {
		ret = fail(out, SIM_JWT_CLAIMS, "a required claim is missing: %s",
			   !out->sub[0]						      ? "sub"
				   : !(json_is_string(aud) || json_array_size(aud))   ? "aud"
				   : !json_is_integer(json_object_get(claims, "exp")) ? "exp"
										      : "iat");
		goto out;
	}
	if (!int_claim(claims, "nbf", &out->nbf))
		out->nbf = out->iat;
	if (now >= out->exp) {
		ret = fail(out, SIM_JWT_EXPIRED, "the token expired at %lld, it is now %lld",
			   (long long)out->exp, (long long)now);
		goto out;
	}
	if (out->nbf > now + SIM_OIDC_LEEWAY_S || out->iat > now + SIM_OIDC_LEEWAY_S) {
		ret = fail(out, SIM_JWT_NOT_YET,
			   "the token is not valid before %lld, it is now %lld",
			   (long long)(out->nbf > out->iat ? out->nbf : out->iat), (long long)now);
		goto out;
	}
	if (!audience_ok(o, c, aud, out)) {
		ret = fail(out, SIM_JWT_AUDIENCE,
			   "the audience '%s' is not a client id of the identity provider",
			   out->aud);
		goto out;
	}
	ret = SIM_JWT_OK;
out:
	json_decref(header);
	json_decref(claims);
	return ret;
}
