/*
 * oidc.h: the emulator's OpenID Connect issuer, and the token checks its three STS
 * frontends share.
 *
 * The issuer stands in for GitHub Actions' token service (token.actions.githubusercontent.com)
 * on the control port:
 *
 *   GET /oidc/token?audience=AUD    with "Authorization: Bearer REQUEST-TOKEN": {"value": JWT},
 *                                   what ACTIONS_ID_TOKEN_REQUEST_URL answers on a runner
 *   GET /.well-known/openid-configuration   the discovery document (issuer, jwks_uri)
 *   GET /.well-known/jwks           the public key, as a JWK set
 *
 * Tokens are RS256 JWTs signed with an RSA key made at start-up, with iss = the issuer URL
 * (the control port's base URL), the audience asked for (default https://github.com/OWNER),
 * sub "repo:gpucluster-sim/ci:ref:refs/heads/main" and GitHub's other claims, valid for
 * SIM_OIDC_TOKEN_TTL seconds. The request token is random per process; the ready file
 * gives it, with the URL, so a test can export ACTIONS_ID_TOKEN_REQUEST_URL/_TOKEN.
 *
 * Each cloud's account in the emulator has this issuer registered as its identity
 * provider, trusting the audiences (client ids) sim_oidc_client_ids lists: by default the
 * one each cloud documents (sim_frontend.audience: AWS sts.amazonaws.com, Alibaba
 * sts.aliyuncs.com, Tencent sts.cloud.tencent.com). The provider's name is the cloud's
 * own (SIM_OIDC_ALIBABA_PROVIDER in sim/alibaba/ecs.h, SIM_OIDC_TENCENT_PROVIDER in
 * sim/tencent/cvm.h; AWS names the issuer itself). sim_oidc_verify checks a token as the clouds' STS do: shape,
 * algorithm, a registered issuer, the signature against the issuer's key, the claims,
 * expiry and not-before (SIM_OIDC_LEEWAY_S of clock skew), and the audience.
 *
 * Life cycle: sim_oidc_new (before the server starts) -> sim_oidc_set_issuer (once the
 * control port is known) -> use from any thread -> sim_oidc_free (after the server stops).
 * A struct sim without one (sim->oidc NULL) has no identity provider registered: every
 * token is refused as coming from an unknown issuer.
 */
#ifndef GC_SIM_OIDC_H
#define GC_SIM_OIDC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/error.h"
#include "sim/sim.h"

#define SIM_OIDC_TOKEN_TTL	   300 /* seconds a token lives, as GitHub's do (minutes) */
#define SIM_OIDC_LEEWAY_S	   300 /* clock skew allowed on nbf and iat */
#define SIM_OIDC_OWNER		   "gpucluster-sim"
#define SIM_OIDC_REPOSITORY	   SIM_OIDC_OWNER "/ci"
#define SIM_OIDC_SUBJECT	   "repo:" SIM_OIDC_REPOSITORY ":ref:refs/heads/main"
#define SIM_OIDC_MAX_CLIENT_IDS	   4
#define SIM_OIDC_CLIENT_ID_MAX	   255
#define SIM_OIDC_ISSUER_MAX	   255
#define SIM_OIDC_REQUEST_TOKEN_LEN 48
#define SIM_OIDC_JWT_MAX	   20000 /* what the clouds' STS take */

struct sim_oidc;

/* Makes the signing key and the request token; NULL with err set when OpenSSL fails. */
struct sim_oidc *sim_oidc_new(struct gc_error *err);
void sim_oidc_free(struct sim_oidc *o);

/* The issuer URL ("http://127.0.0.1:PORT", no trailing '/'); thread-safe. */
void sim_oidc_set_issuer(struct sim_oidc *o, const char *issuer);
void sim_oidc_issuer(const struct sim_oidc *o, char out[SIM_OIDC_ISSUER_MAX + 1]);

/* The bearer token /oidc/token wants (ACTIONS_ID_TOKEN_REQUEST_TOKEN). */
const char *sim_oidc_request_token(const struct sim_oidc *o);

/* The key's id, as the JWT header's kid and the JWK's. */
const char *sim_oidc_kid(const struct sim_oidc *o);

/*
 * Replaces cloud c's trusted audiences with id on the first call for c, adds it on later
 * ones (--oidc-client-id). Call before the server starts. -1 when there are already
 * SIM_OIDC_MAX_CLIENT_IDS or id is empty or too long.
 */
int sim_oidc_add_client_id(struct sim_oidc *o, enum sim_cloud c, const char *id);
/* Cloud c's trusted audiences, in order; *n their number. */
const char *const *sim_oidc_client_ids(const struct sim_oidc *o, enum sim_cloud c, size_t *n);

/* What a token says; NULL / 0 fields take the defaults described above. */
struct sim_oidc_claims {
	const char *audience;
	const char *subject;
	const char *issuer; /* NULL: this issuer's URL */
	int64_t iat;	    /* unix seconds; 0: now */
	int64_t exp;	    /* 0: iat + SIM_OIDC_TOKEN_TTL */
	int64_t nbf;	    /* 0: iat */
};

/* Signs a token (a new string); NULL only if OpenSSL fails. */
char *sim_oidc_issue(const struct sim_oidc *o, const struct sim_oidc_claims *c);

/* The control port's OIDC paths: true when path is one of them (resp is then the answer),
 * false to let the caller answer. */
bool sim_oidc_handle(struct sim *sim, const struct sim_req *req, struct sim_resp *resp);

enum sim_jwt_check {
	SIM_JWT_OK = 0,
	SIM_JWT_MALFORMED, /* not three base64url parts, header and claims JSON objects */
	SIM_JWT_ALGORITHM, /* alg is not RS256 */
	SIM_JWT_ISSUER,	   /* iss is no identity provider of the account */
	SIM_JWT_SIGNATURE, /* no key of the issuer's with that kid, or a bad signature */
	SIM_JWT_CLAIMS,	   /* sub, aud, iat or exp missing or of the wrong type */
	SIM_JWT_EXPIRED,   /* now is at or past exp */
	SIM_JWT_NOT_YET,   /* nbf or iat in the future, past the leeway */
	SIM_JWT_AUDIENCE,  /* no aud the cloud's identity provider trusts */
};

struct sim_jwt {
	char iss[SIM_OIDC_ISSUER_MAX + 1];
	char sub[256];
	char aud[SIM_OIDC_CLIENT_ID_MAX + 1]; /* the trusted one, or the first given */
	int64_t iat, exp, nbf;
	char why[256]; /* what failed, for the cloud's error message */
};

/* Checks token for cloud c at unix time now; out holds the claims read so far either way. */
enum sim_jwt_check sim_oidc_verify(const struct sim *sim, enum sim_cloud c, const char *token,
				   int64_t now, struct sim_jwt *out);

#endif
