/*
 * oidc.h: GitHub Actions' OpenID Connect tokens, for the clouds' STS exchanges. This module
 * only fetches the token (the protocol: docs/internals/credentials.md, "GitHub Actions
 * tokens"); the drivers exchange it (providers/CLOUD/creds.c) and fetch a new one whenever
 * their temporary keys need renewing.
 *
 * Invariants: the variables are read through a struct gc_spec_env, never getenv; the
 * request token and every token fetched are registered with the log's redactor before
 * anything else can print them, and wiped from memory when freed; the answer is capped
 * (GC_OIDC_MAX_ANSWER) and must hold one JWT-shaped value. Stateless: nothing to set up.
 */
#ifndef GC_OIDC_H
#define GC_OIDC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/clock.h"
#include "core/error.h"
#include "core/http.h"
#include "core/log.h"
#include "core/spec.h"

#define GC_OIDC_MAX_ANSWER   ((size_t)64 << 10) /* the token service's JSON answer */
#define GC_OIDC_TOKEN_MAX    20000		/* the longest token the clouds' STS take */
#define GC_OIDC_AUDIENCE_MAX 256
#define GC_OIDC_SESSION_MAX  64 /* role session names: 2-64 characters on every cloud */

/* Whether this runs in GitHub Actions (GITHUB_ACTIONS=true); env NULL: the process's. */
bool gc_oidc_in_actions(const struct gc_spec_env *env);

/* Whether the runner offers tokens (ACTIONS_ID_TOKEN_REQUEST_URL is set and not empty). */
bool gc_oidc_available(const struct gc_spec_env *env);

struct gc_oidc_request {
	const char *audience;	       /* the token's aud; required */
	const struct gc_spec_env *env; /* NULL: the process environment */
	struct gc_http *http;	       /* must outlive the call */
	struct gc_log *log;	       /* where the tokens are registered as secrets; may be NULL */
	const struct gc_clock *clock;  /* retry waits; NULL: the real clock */
};

/*
 * Fetches a token for req->audience. On success *out is the JWT (free it with
 * gc_oidc_token_free). Fails with GC_EAUTH when the variables are missing (the message
 * says the workflow needs `permissions: id-token: write`) or the service refuses
 * (401/403), GC_ETRANSIENT / GC_ETIMEOUT when it cannot be reached after the retries,
 * GC_ETOOBIG past the cap, GC_EINVALID for an answer without a JWT-shaped "value".
 */
int gc_oidc_fetch(char **out, const struct gc_oidc_request *req, struct gc_error *err);

/* A copy of a spec's oidc block for a driver to keep (src NULL: an empty one), and its
 * release. */
void gc_spec_oidc_copy(struct gc_spec_oidc *dst, const struct gc_spec_oidc *src);
void gc_spec_oidc_release(struct gc_spec_oidc *o);

/* Wipes and frees a token; NULL is fine. */
void gc_oidc_token_free(char *token);

/*
 * The role session name to use when none is configured: "gpucluster-RUN-ATTEMPT" from
 * GITHUB_RUN_ID and GITHUB_RUN_ATTEMPT (so the cloud's audit log names the run), else
 * "gpucluster-NOW". Always 2-64 characters of [A-Za-z0-9_.@-], which every cloud takes.
 */
void gc_oidc_session_name(char out[GC_OIDC_SESSION_MAX + 1], const struct gc_spec_env *env,
			  int64_t now);

#endif
