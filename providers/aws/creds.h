/*
 * creds.h: AWS credentials, region and endpoint, resolved as the AWS CLI resolves them.
 * The chain, the files, STS, credential_process, IMDS, region and endpoints, and where
 * they differ from the CLI, are in docs/internals/credentials.md.
 *
 * A source that applies but fails stops the chain with its own error: a misconfigured
 * profile (GC_EINVALID, GC_EUNSUPPORTED), STS refusing (GC_EAUTH with the STS code in
 * err->cloud_code), STS throttling or failing after the retries of core/retry.h
 * (GC_ETHROTTLED, GC_ETRANSIENT), a credential_process exiting non-zero (GC_EAUTH),
 * printing something else than its JSON (GC_EINVALID), too much (GC_ETOOBIG) or for too
 * long (GC_ETIMEOUT). Secrets are registered with the log as soon as they are read, and
 * wiped from memory on release.
 *
 * Life cycle: aws_config_init -> aws_config_resolve -> aws_creds_init ->
 * aws_creds_resolve -> use -> aws_creds_release, aws_config_release. Temporary
 * credentials (expiration != 0) expire: a long operation calls aws_creds_resolve again
 * before then. A call uses in->http, which belongs to one thread at a time; calls share
 * no other state.
 */
#ifndef GC_AWS_CREDS_H
#define GC_AWS_CREDS_H

#include <stdint.h>

#include "core/clock.h"
#include "core/creds.h"
#include "core/error.h"
#include "core/http.h"
#include "core/log.h"
#include "core/spec.h"

/* The fields of struct gc_creds (core/creds.h, whose helpers fill `base`) by their AWS
 * names. */
struct aws_creds {
	union {
		struct gc_creds base;
		struct {
			char *access_key_id;
			char *secret_access_key;
			char *session_token; /* NULL for long-term keys */
			int64_t expiration;  /* unix seconds; 0: does not expire */
			char *source; /* where they came from: "environment", "profile 'ci'" */
		};
	};
};

struct aws_config {
	char *region;
	char *ec2_endpoint; /* no trailing slash */
	char *sts_endpoint;
	char *pricing_endpoint;
	char *pricing_region; /* the region pricing requests are signed for: us-east-1 */
	char *profile;	      /* the profile in effect; NULL when no file has it */
	/* Service Quotas (servicequotas.REGION) */
	char *quotas_endpoint;
};

struct aws_creds_input {
	const char *profile;		 /* the spec's provider.profile, or NULL */
	const char *region;		 /* the spec's provider.region, or NULL */
	const char *endpoint;		 /* the spec's provider.endpoint, or NULL */
	const struct gc_spec_env *env;	 /* NULL: the process environment */
	struct gc_http *http;		 /* for STS and IMDS; must outlive the call */
	struct gc_log *log;		 /* may be NULL */
	int64_t now;			 /* unix seconds, for signing STS calls; 0: time() */
	const struct gc_clock *clock;	 /* for retry waits (STS, IMDS); NULL: the real one */
	long process_timeout_ms;	 /* credential_process time limit; 0: 60 s */
	const struct gc_spec_oidc *oidc; /* the spec's provider.oidc, or NULL */
};

/* The shared view's life cycle; release takes NULL. */
#define aws_creds_init(c) gc_creds_init(&(c)->base)
static inline void aws_creds_release(struct aws_creds *c)
{
	gc_creds_release(c ? &c->base : NULL);
}
void aws_config_init(struct aws_config *c);
void aws_config_release(struct aws_config *c);

/* Resolves region and endpoints (no network); out is written only on success. Fails
 * with GC_EINVALID when no region is set anywhere (naming the places looked at), on a
 * malformed region or endpoint, a profile named but missing, or a shared file that does
 * not parse (naming file and line); GC_EIO / GC_ETOOBIG for an unreadable or oversized
 * file (1 MiB cap). */
int aws_config_resolve(struct aws_config *out, const struct aws_creds_input *in,
		       struct gc_error *err);

/* Resolves credentials through the chain above; out is written only on success. cfg is
 * the resolved config (the STS endpoint, and the region STS calls are signed for). */
int aws_creds_resolve(struct aws_creds *out, const struct aws_config *cfg,
		      const struct aws_creds_input *in, struct gc_error *err);

#endif
