/*
 * creds.h: the plumbing every provider's credential chain stands on, so that each cloud's
 * creds.c keeps only its own order, files, STS calls and metadata paths (the pieces:
 * docs/internals/credentials.md). Every source reads through a gc_creds_ctx, never
 * getenv (tests decide what is set); secrets are registered with the log as they are
 * stored and wiped when freed. The helpers share no state; ctx->http is one thread's.
 */
#ifndef GC_CREDS_H
#define GC_CREDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/buf.h"
#include "core/clock.h"
#include "core/error.h"
#include "core/http.h"
#include "core/log.h"
#include "core/spec.h"

#define GC_CREDS_MAX_HOPS 16 /* source_profile chains longer than this are a mistake */

/* Each cloud's struct names these fields in its own words (see providers' creds.h). */
struct gc_creds {
	char *id;	    /* the key id */
	char *secret;	    /* its secret */
	char *token;	    /* the session token; NULL for long-term keys */
	int64_t expiration; /* unix seconds; 0: does not expire */
	char *source;	    /* where they came from: "environment", "profile 'ci'", ... */
};

struct gc_creds_ctx {
	const struct gc_spec_env *env; /* NULL: the process environment */
	struct gc_http *http;	       /* NULL: no source that needs the network applies */
	struct gc_log *log;	       /* may be NULL */
	const struct gc_clock *clock;  /* retry waits; NULL: the real one */
	int64_t now;		       /* unix seconds */
};

void gc_creds_init(struct gc_creds *c);
void gc_creds_release(struct gc_creds *c);

/* Fills c (releasing what it held), taking source; registers secret and token with log.
 * An empty token is stored as NULL. */
void gc_creds_set(struct gc_creds *c, struct gc_log *log, const char *id, const char *secret,
		  const char *token, int64_t expiration, char *source);

/* Moves got into out when rc is 0 (logging "PREFIX: credentials from SOURCE"), and
 * releases got either way; returns 0 when moved, else -1. The end of every chain. */
int gc_creds_finish(struct gc_creds *out, struct gc_creds *got, int rc,
		    const struct gc_creds_ctx *cx, const char *prefix);

/* path with a leading "~/" (or a lone "~") replaced by env's HOME, as the CLIs expand
 * them. */
char *gc_creds_expand_home(const struct gc_spec_env *env, const char *path);

/* A CLI's file: var's value when set ("~/" expanded; var NULL: none), else HOME/dflt;
 * NULL when neither is set. *shown (always set) is how messages name it. */
char *gc_creds_home_file(const struct gc_spec_env *env, const char *var, const char *dflt,
			 char **shown);

/* A configured endpoint checked into *out, its trailing '/' dropped; from names where it
 * was configured, for the GC_EINVALID message. */
int gc_creds_endpoint(char **out, const char *url, const char *from, struct gc_error *err);

/*
 * A small file (a key, a token) read whole under cap, what was read wiped; a token is
 * trimmed and refused with a NUL byte. found as gc_buf_read_file's; name: how messages
 * name it (NULL: path).
 */
int gc_creds_read_file(char **out, const char *path, const char *name, size_t cap, bool token,
		       bool *found, struct gc_error *err);

/* --- the instance metadata services ---------------------------------------------------- */

struct gc_metadata {
	const struct gc_creds_ctx *cx;
	const char *base;   /* "http://169.254.169.254", no trailing '/' */
	char *token_header; /* "NAME: TOKEN" once gc_metadata_token got one, else NULL */
	long timeout_ms;    /* per request, connecting included */
	unsigned attempts;
};

/* Frees the session token's header (wiped). base is the caller's. */
void gc_metadata_release(struct gc_metadata *m);

/* One request to base+path with its retries (core/http.h, gc_http_perform_retried), with
 * header (NULL: none) and the session token's header when there is one; 0 when an answer
 * below 500 arrived, whatever its status. The answer is capped at 64 KiB. */
int gc_metadata_request(const struct gc_metadata *m, const char *method, const char *path,
			const char *header, struct gc_http_response *res, struct gc_error *err);

/*
 * The session token: a PUT of path with ttl_header ("NAME-ttl-seconds: 21600"). 0: the
 * token is registered with the log and m->token_header is "token_name: TOKEN"; 1: the
 * service answered without one (*status: its HTTP status); -1: no answer (err).
 */
int gc_metadata_token(struct gc_metadata *m, const char *path, const char *ttl_header,
		      const char *token_name, int *status, struct gc_error *err);

/* The role the directory dir lists (its first line): 0 with *role; 1 with *why when
 * there is none to use (404: "NO_ROLE (BASE)"; no answer: "no answer from BASE" when
 * first, else "BASE failed"; another status; a line role_ok refuses). */
int gc_metadata_role(const struct gc_metadata *m, const char *dir, const char *no_role, bool first,
		     bool (*role_ok)(const char *), char **role, char **why);

/* A role name as the metadata services and STS take it: [A-Za-z0-9+=,.@_-]+. */
bool gc_creds_role_name_ok(const char *s);
/* A region name: [a-z0-9-], 1 to 32 of them, no '-' at either end; NULL is not one. */
bool gc_creds_region_ok(const char *r);

/* --- GitHub Actions, the sources tried, profile loops, STS retries --------------------- */

/* A web identity token from GitHub Actions for audience (NULL or empty: dflt); failures
 * prefixed "cannot WHAT". Free *token with gc_oidc_token_free. */
int gc_creds_actions_token(char **token, const struct gc_creds_ctx *cx, const char *audience,
			   const char *dflt, const char *what, struct gc_error *err);

/* The sources tried and why each did not apply, ", "-separated. */
struct gc_creds_tried {
	struct gc_buf buf;
};

void gc_creds_tried_init(struct gc_creds_tried *t);
void gc_creds_tried_release(struct gc_creds_tried *t);
void gc_creds_tried_add(struct gc_creds_tried *t, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/*
 * After a source that returned rc: whether the chain stops there (0: found; -1: it
 * applies but failed). Otherwise (1: it does not apply) adds "NAME (WHY)", NAME from fmt,
 * to t, and frees *why.
 */
bool gc_creds_tried_stop(struct gc_creds_tried *t, int rc, char **why, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

/* Whether the spec's provider.oidc, every chain's first source, applies: it names a role
 * and this runs in GitHub Actions (elsewhere it is skipped, so that a spec works from a
 * laptop too, and t says so). */
bool gc_creds_spec_oidc(struct gc_creds_tried *t, const struct gc_spec_oidc *oidc,
			const struct gc_spec_env *env);

/* GC_EAUTH "no CLOUD credentials found; tried: ..."; returns -1. */
int gc_creds_tried_fail(const struct gc_creds_tried *t, const char *cloud, struct gc_error *err);

/* The profiles being resolved, outermost first. */
struct gc_creds_stack {
	const char *names[GC_CREDS_MAX_HOPS];
	size_t depth;
};

/* Pushes name, refusing a loop ("source_profile loop[ in FILE]: 'a' -> 'b' -> 'a'") and
 * a chain deeper than GC_CREDS_MAX_HOPS (GC_EINVALID). Pop with depth--. */
int gc_creds_stack_push(struct gc_creds_stack *s, const char *name, const char *file,
			struct gc_error *err);

/* Calls attempt(arg, &last, err) until it returns 0, or fails setting *last (an error
 * that will not go away), or the retry policy (three attempts, cx's clock) gives up;
 * retries logged as "LOG_WHAT: message". Returns attempt's last result. */
int gc_creds_retried(const struct gc_creds_ctx *cx, const char *log_what,
		     int (*attempt)(void *arg, bool *last, struct gc_error *err), void *arg,
		     struct gc_error *err);

#endif
