/*
 * driver.h: the one request pipeline of the cloud drivers, with the session state and the
 * waits on busy resources they share, so that the clouds cannot drift apart on retries,
 * rate limits, renewals, clock complaints or cancels. A cloud gives only its differences,
 * as hooks (signer, code table, answer parser, bucket figures, credential chain), and its
 * driver struct (p->impl) starts with a struct gc_driver. For providers/, never the
 * engine. The flow and life cycle: docs/internals/providers.md, "The request pipeline".
 * Threads: one at a time, as the provider.
 */
#ifndef GC_DRIVER_H
#define GC_DRIVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "core/buf.h"
#include "core/creds.h"
#include "core/error.h"
#include "core/http.h"
#include "core/provider.h"
#include "core/ratelimit.h"
#include "core/retry.h"
#include "core/spec.h"
#include "core/wait.h"

/* ---- the cloud's hooks ------------------------------------------------------------ */

/* How a row of a code table matches the cloud's error code. */
enum gc_driver_match {
	GC_MATCH_EXACT = 0,
	GC_MATCH_PREFIX,
	GC_MATCH_SUFFIX, /* the code is longer than the text and ends with it */
	GC_MATCH_CONTAINS,
};

/* One row of a cloud's code table: any of the codes, matched as `how` says, means `code`.
 * The first row that matches decides. */
struct gc_driver_code {
	enum gc_driver_match how;
	enum gc_errcode code;
	const char *const *texts; /* NULL-terminated; a NULL texts ends the table */
};

/* A row: GC_CODES(GC_MATCH_EXACT, GC_EAUTH, "AuthFailure", "Blocked"). */
/* clang-format off */
#define GC_CODES(how, code, ...) { (how), (code), (const char *const[]){ __VA_ARGS__, NULL } }
/* clang-format on */

/* A cloud's error code and HTTP status classified (providers.md, "One request"). */
enum gc_errcode gc_driver_classify(const struct gc_driver_code *table, const char *code,
				   int status);

/* What one attempt sends, built and signed afresh by the cloud's sign hook. */
struct gc_driver_wire {
	char *url;
	char **headers; /* "Name: value"; wiped when released (they carry tokens) */
	size_t n_headers;
	const char *body; /* not owned: the hook points it at the request's body */
	size_t body_len;
};

struct gc_params;

void gc_driver_wire_add(struct gc_driver_wire *w, const char *name, const char *value);
/* Adds every pair of params (a signer's headers). */
void gc_driver_wire_add_all(struct gc_driver_wire *w, const struct gc_params *params);
void gc_driver_wire_release(struct gc_driver_wire *w);

struct gc_driver_request;

struct gc_driver_hooks {
	/* The cloud's name in messages: "cannot open <title> in 'REGION'", "the <title>
	 * credentials expired". */
	const char *title;
	size_t size; /* sizeof the cloud's driver struct, which starts with a struct gc_driver */
	/* The cloud's part of open, after the common part (its endpoints, its credentials
	 * through gc_driver_resolve_creds); on failure gc_driver_open closes. */
	int (*open)(struct gc_provider *p, const struct gc_provider_config *cfg,
		    struct gc_error *err);
	/* Frees what the cloud's part made (its caches too); safe on a half-open driver. */
	void (*close)(struct gc_provider *p);

	size_t max_response;		    /* every answer is capped at this */
	unsigned max_attempts;		    /* the retry policy's */
	const struct gc_driver_code *codes; /* the cloud's code table */
	/* Codes that mean our timestamp is off: signed again once (NULL: none). */
	const char *const *clock_codes;
	/* The figures of the request bucket called name (gc_driver_request.bucket). */
	void (*bucket)(const char *name, uint64_t *capacity, uint64_t *refill,
		       uint64_t *interval_ms);
	/* Builds and signs req into *out (zeroed); fails with err prefixed. */
	int (*sign)(struct gc_provider *p, const struct gc_driver_request *req,
		    struct gc_driver_wire *out, struct gc_error *err);
	/*
	 * The answer res to req: 0 a success (the pipeline keeps the body), -1 a failure
	 * described in err, with gc_driver_fail for what the cloud said. *retry_after_ms
	 * (-1 on entry) gets the server's hint for the next attempt, if any.
	 */
	int (*answer)(struct gc_provider *p, const struct gc_driver_request *req,
		      const struct gc_http_response *res, int64_t *retry_after_ms,
		      struct gc_error *err);
	/* The cloud's credentials, renewed by the pipeline: a struct of its own that starts
	 * with (a union over) a struct gc_creds, at creds_at in its driver struct. */
	size_t creds_at;
	/* Resolves the cloud's credential chain into creds (initialised, empty). */
	int (*resolve_creds)(struct gc_provider *p, void *creds, struct gc_error *err);
};

/* ---- the common state ------------------------------------------------------------- */

/* A request bucket, made on first use. */
struct gc_driver_bucket {
	char name[80];
	struct gc_ratelimit rl;
};

struct gc_driver {
	const struct gc_driver_hooks *hooks;
	struct gc_http *http;
	struct gc_retry_quota quota;
	struct gc_retry_policy policy;
	bool rate_limit; /* our own buckets; off for benchmarks of the naive client */
	struct gc_driver_bucket **buckets;
	size_t n_buckets, alloc_buckets;
	struct gc_creds *creds; /* inside the cloud's driver struct (hooks->creds_at) */
	/* what the credential chain was resolved from, to resolve it again before expiry */
	char *profile;
	char *endpoint; /* the spec's provider.endpoint as the cloud keeps it, or NULL */
	struct gc_spec_oidc oidc;
	/* the bounds of every listing (gc_driver_pages); 0: GC_DRIVER_MAX_ITEMS, _PAGES */
	size_t max_items;
	unsigned max_pages;
	/* ids (or names) of what this session created, which the cloud may not know everywhere
	 * yet (gc_driver_retry_unseen) */
	char **made;
	size_t n_made, alloc_made;
};

static inline struct gc_driver *gc_driver(struct gc_provider *p)
{
	return (struct gc_driver *)p->impl;
}

/* The JSON clouds' readers: the string under key, NULL when absent or not a string;
 * gc_jstr_set also NULL when empty (credential files, where "" means unset). */
static inline const char *gc_jstr(json_t *o, const char *key)
{
	return json_string_value(json_object_get(o, key));
}

static inline const char *gc_jstr_set(json_t *o, const char *key)
{
	const char *v = gc_jstr(o, key);

	return v && *v ? v : NULL;
}

/* Every ops table's open, with the cloud's hooks: on failure p->impl is NULL again and
 * err is prefixed "cannot open <title> in 'REGION'". */
int gc_driver_open(struct gc_provider *p, const struct gc_provider_config *cfg,
		   const struct gc_driver_hooks *hooks, struct gc_error *err);
/* Every ops table's close: the cloud's close hook, then the common part. */
void gc_driver_close(struct gc_provider *p);

/* Resolves the credential chain into the driver's credentials (open). */
int gc_driver_resolve_creds(struct gc_provider *p, struct gc_error *err);

/* ---- the pipeline ----------------------------------------------------------------- */

struct gc_driver_request {
	const char *action; /* for messages, logs and (without bucket) the request bucket */
	const char *bucket; /* the request bucket's name; NULL: action */
	const char *host;   /* named in "HTTP 502 from 'host'" */
	/* A second bucket the call draws from, counted in units (instances launched), or
	 * NULL; used only while the driver's buckets are on. */
	struct gc_ratelimit *resource;
	uint64_t resource_tokens;
	/* Not safe to repeat after an ambiguous failure (a launch without a client token):
	 * only throttling, which means nothing happened, is retried. */
	bool unsafe;
	const void *ctx; /* the cloud's own description of the call, for its hooks */
};

/*
 * Sends req through the pipeline and, on success, hands the answer's body over to out
 * (moved, never copied: a page of 1000 instances is megabytes; NULL: not kept). out is
 * initialised here and released by the caller, also on failure. On failure err carries
 * the classified code, the cloud's code, request id and HTTP status.
 */
int gc_driver_send(struct gc_provider *p, const struct gc_driver_request *req, struct gc_buf *out,
		   struct gc_error *err);

/*
 * For answer hooks: fills err with what the cloud said about req, classified with the
 * cloud's code table: "ACTION: CODE: MESSAGE (request ID)"; without a code and a message,
 * "ACTION: HTTP STATUS from 'HOST'". Returns -1.
 */
int gc_driver_fail(struct gc_provider *p, const struct gc_driver_request *req, int status,
		   const char *code, const char *message, const char *request_id,
		   struct gc_error *err);

/* ---- paging (docs/internals/providers.md, "Paging") ------------------------------ */

/*
 * The bounds of one listing, whatever the cloud sends. Items: the largest cluster a spec
 * can describe (GC_SPEC_MAX_GROUPS x GC_SPEC_MAX_GROUP_COUNT) twice over, for the
 * terminated ones still listed and for gc, which lists every cluster's. Pages: that many
 * items at the smallest page we ask for (100), with room for the empty pages a cloud
 * sends when it filters after paging. Empty pages that still carry a token: this many in
 * a row. Why these figures: providers.md, "Paging".
 */
#define GC_DRIVER_MAX_ITEMS   (2u * GC_SPEC_MAX_GROUPS * GC_SPEC_MAX_GROUP_COUNT)
#define GC_DRIVER_MAX_PAGES   1000
#define GC_DRIVER_EMPTY_PAGES 3

/* One page of a listing, between the pager and the cloud's hooks. */
struct gc_page {
	unsigned number;   /* 0 for the first page */
	const char *token; /* the token to send; NULL on the first page */
	size_t seen;	   /* the items of the pages before (an Offset) */
	/* set by parse: */
	char *next;    /* the next page's token (taken), NULL when none */
	size_t items;  /* its items, for a listing with a total or counted */
	bool counted;  /* items is the page's count (implied by a total) */
	int64_t total; /* the listing's total count, or -1 (token paging) */
	bool done;     /* the listing ends here (found what it wanted) */
};

/* One listing: send builds and sends the request for a page (the answer into body, or
 * kept in ctx by a cloud whose call hands back a document); parse reads it into ctx. */
struct gc_pager {
	const char *action;   /* named in the errors */
	const char *cap_note; /* or NULL: "ACTION: more than 1000 pages" + cap_note */
	int (*send)(struct gc_provider *p, void *ctx, const struct gc_page *pg, struct gc_buf *body,
		    struct gc_error *err);
	int (*parse)(struct gc_provider *p, void *ctx, const struct gc_buf *body,
		     struct gc_page *pg, struct gc_error *err);
};

/* Every page, until done, no next token, or (with a total) an empty page or the total
 * reached. A token seen before in the loop, empty pages with a token past the allowance,
 * more pages or items (or a total) than the bounds: an error (GC_EBADRESPONSE) naming the
 * action and what looked wrong. The caller collects into ctx and hands the items out
 * only on 0 (all or nothing). */
int gc_driver_pages(struct gc_provider *p, const struct gc_pager *pager, void *ctx,
		    struct gc_error *err);

/* Discover's ctx; its parse hook hands each instance to gc_driver_discover_keep, which
 * keeps (moves) those with every filter tag and, unless asked for, not terminated; it
 * counts the page's items, keeps nothing past max_items and notes an id listed twice. */
struct gc_driver_discover {
	const struct gc_discover_query *q;
	struct gc_instance_list found;
	/* the pager's own */
	const struct gc_pager *hooks;
	size_t max_items; /* the driver's bound */
	size_t handed, page_items;
	uint64_t *ids; /* hashes of the ids handed, open addressing (0: free) */
	size_t ids_cap;
	char *twice; /* the first id listed twice */
	unsigned twice_page;
};

void gc_driver_discover_keep(struct gc_driver_discover *d, struct gc_instance *inst);
/* DescribeInstances over hooks' send and parse, all or nothing into out. */
int gc_driver_discover(struct gc_provider *p, const struct gc_pager *hooks,
		       const struct gc_discover_query *q, struct gc_instance_list *out,
		       struct gc_error *err);

/* ---- busy resources --------------------------------------------------------------- */

/*
 * One attempt at something a cloud refuses for a while because a resource is busy:
 * 0 done, 1 the cloud said to wait (err holds its answer), -1 failed (err filled).
 */
typedef int (*gc_busy_attempt_fn)(struct gc_provider *p, void *ctx, struct gc_error *err);

/* Makes attempts until one is done or fails, waiting out "busy" answers with a policy of
 * its own outside the retry quota (the endpoint is fine; providers.md has the figures); a
 * cancel ends them. When they run out, err keeps the cloud's code, with GC_ETRANSIENT. */
int gc_driver_wait_busy(struct gc_provider *p, gc_busy_attempt_fn attempt, void *ctx,
			const char *waiting, struct gc_error *err);

/*
 * Eventual consistency: a call naming a resource this session just created (a security
 * group, a key pair) may be answered NotFound until the cloud has caught up (the clouds'
 * pages on eventual consistency: docs/internals/retry.md). gc_driver_made records such an id; gc_driver_retry_unseen makes
 * attempts like gc_driver_wait_busy while one fails with a cloud code in `codes` (NULL
 * ended) and one of ids was made by this session, at most GC_DRIVER_UNSEEN_ATTEMPTS in
 * all (about a minute and a half of backoff, the guide's "up to a few minutes"); what is
 * not ours fails at once. When they run out, err keeps the cloud's code.
 */
#define GC_DRIVER_UNSEEN_ATTEMPTS 8
void gc_driver_made(struct gc_provider *p, const char *id);
bool gc_driver_just_made(struct gc_provider *p, const char *id);
int gc_driver_retry_unseen(struct gc_provider *p, gc_busy_attempt_fn attempt, void *ctx,
			   const char *const *ids, size_t n_ids, const char *const *codes,
			   const char *waiting, struct gc_error *err);

/* One call of a cloud's action as an attempt (ctx: struct gc_driver_call), for
 * gc_driver_retry_unseen: body is emptied before each. call is the driver's own
 * (action, params, request tokens, unsafe to repeat, answer). */
struct gc_driver_call {
	int (*call)(struct gc_provider *p, const char *action, const struct gc_params *params,
		    unsigned tokens, bool unsafe, struct gc_buf *out, struct gc_error *err);
	const char *action;
	const struct gc_params *params;
	unsigned tokens;
	bool unsafe;
	struct gc_buf *body;
};
int gc_driver_call_attempt(struct gc_provider *p, void *ctx, struct gc_error *err);

/* Deletes security group id with once (one call: 0 deleted, 1 still in use, -1 failed),
 * waiting "in use" out; not found counts as deleted. */
int gc_driver_delete_secgroup(struct gc_provider *p, const char *id,
			      int (*once)(struct gc_provider *p, const char *id,
					  struct gc_error *err),
			      struct gc_error *err);

/* Prefixes a create_secgroup failure: "cannot update the rules of security group 'NAME'
 * (ID)" when req names a group, else "cannot create security group 'NAME'". Returns -1. */
int gc_driver_secgroup_failed(const struct gc_secgroup_request *req, struct gc_error *err);

/* Deletes a security group just made whose rules could not be added (a group without its
 * rule is of no use) with del; a failure is only a warning, as the caller's error wins. */
void gc_driver_discard_secgroup(struct gc_provider *p, const char *id,
				int (*del)(struct gc_provider *p, const char *id,
					   struct gc_error *err));

/*
 * Terminates ids (max at most) with `call` (one request for a batch) on a cloud that fails
 * a whole batch when one id is gone and names the missing ids in its message. After an
 * error with the cloud code gone_code, the ids the message names are dropped (logged at
 * debug) and the rest asked again, each round dropping one at least; a lone id is gone; a
 * message naming none of ours sends each id alone, gone_code meaning done. "Gone" is only
 * the cloud's word: it may be eventual consistency, and the teardown checks with Describe. Failures are
 * prefixed "cannot terminate N instances" or "cannot terminate 'id'".
 */
int gc_driver_terminate_dropping_gone(struct gc_provider *p, const char *const *ids, size_t n,
				      unsigned max,
				      int (*call)(struct gc_provider *p, const char *const *ids,
						  size_t n, struct gc_error *err),
				      const char *gone_code, struct gc_error *err);

/* The Host header value for an endpoint URL ("http://127.0.0.1:4566" -> "127.0.0.1:4566");
 * NULL when the URL has no authority. */
char *gc_driver_url_host(const char *url);

/* A cloud's key-pair import, for gc_driver_import_keypair. */
struct gc_driver_keypair {
	/* ImportKeyPair: the new key's id into *out_id. */
	int (*import)(struct gc_provider *p, const struct gc_keypair_request *req, char **out_id,
		      struct gc_error *err);
	/* The public key line and id of the key named name; NULLs when there is none. */
	int (*lookup)(struct gc_provider *p, const char *name, char **line, char **id,
		      struct gc_error *err);
	const char *const *duplicates; /* the codes ImportKeyPair refuses a duplicate with */
	const char *key_taken; /* the one saying the key is there under another name, or NULL */
	int status;	       /* the HTTP status of those answers */
};

/*
 * Imports req. A duplicate is our own earlier import when the key of that name holds the
 * same public key (compared without the comment: a retry after a lost answer, a re-run);
 * then its id is the answer. Anything else is someone else's key, never reused. Failures
 * are prefixed "cannot import key pair 'NAME'".
 */
int gc_driver_import_keypair(struct gc_provider *p, const struct gc_driver_keypair *k,
			     const struct gc_keypair_request *req, char **out_id,
			     struct gc_error *err);

#endif
