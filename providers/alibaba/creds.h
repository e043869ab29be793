/*
 * creds.h: Alibaba Cloud credentials, resolved as the aliyun CLI and the Alibaba Cloud
 * Credentials SDK's default chain resolve them. The chain (spec OIDC, environment, OIDC,
 * the aliyun CLI's config.json and its modes, the ECS RAM role) is in docs/credentials.md,
 * the STS and metadata requests in docs/internals/alibaba.md, "Credentials".
 *
 * When nothing applies the error (GC_EAUTH) names every source tried and why it did not
 * apply. A source that applies but fails stops the chain with its own error (STS
 * refusing: GC_EAUTH with STS's code in err->cloud_code). Every variable is read through
 * in->env (HOME included), never getenv. Secrets are registered with the log as soon as
 * they are read and wiped from memory on release.
 *
 * Life cycle: ali_creds_init -> ali_creds_resolve -> use -> ali_creds_release. Temporary
 * credentials (expiration != 0) expire: the driver resolves the chain again before then
 * (alibaba.c). A call uses in->http, which belongs to one thread at a time.
 */
#ifndef GC_ALI_CREDS_H
#define GC_ALI_CREDS_H

#include <stdint.h>

#include "core/clock.h"
#include "core/creds.h"
#include "core/error.h"
#include "core/http.h"
#include "core/log.h"
#include "core/spec.h"

#define ALI_METADATA_URL "http://100.100.100.200"

/* The fields of struct gc_creds (core/creds.h, whose helpers fill `base`) by their
 * Alibaba Cloud names. */
struct ali_creds {
	union {
		struct gc_creds base;
		struct {
			char *access_key_id;
			char *access_key_secret;
			char *security_token; /* NULL for long-term keys */
			int64_t expiration;   /* unix seconds; 0: does not expire */
			char *source; /* where they came from: "environment", "profile 'ci'" */
		};
	};
};

struct ali_creds_input {
	const char *profile;	       /* the spec's provider.profile, or NULL */
	const char *region;	       /* the spec's provider.region */
	const char *endpoint;	       /* the spec's provider.endpoint (STS goes there too) */
	const struct gc_spec_env *env; /* NULL: the process environment */
	struct gc_http *http;	       /* for STS and the metadata service */
	struct gc_log *log;	       /* may be NULL */
	int64_t now;		       /* unix seconds, for signing; 0: time() */
	const struct gc_clock *clock;  /* retry waits; NULL: the real one */
	/* The metadata service's base URL, for tests (no SDK documents an override); NULL:
	 * ALI_METADATA_URL. */
	const char *metadata_url;
	const struct gc_spec_oidc *oidc; /* the spec's provider.oidc, or NULL */
};

/* The shared view's life cycle; release takes NULL. */
#define ali_creds_init(c) gc_creds_init(&(c)->base)
static inline void ali_creds_release(struct ali_creds *c)
{
	gc_creds_release(c ? &c->base : NULL);
}

/* Resolves credentials through the chain above; out is written only on success. */
int ali_creds_resolve(struct ali_creds *out, const struct ali_creds_input *in,
		      struct gc_error *err);

/*
 * STS AssumeRoleWithOIDC: role_arn assumed with the OIDC token (a JWT) through the OIDC
 * provider oidc_provider_arn, for GitHub Actions and ACK's RRSA, as the chain does it
 * (in's endpoint, environment and HTTP client; session_name NULL: gpucluster-NOW).
 * STS refusing the token is GC_EAUTH with STS's code (AuthenticationFail.*) in
 * err->cloud_code.
 */
int ali_assume_role_with_oidc(struct ali_creds *out, const struct ali_creds_input *in,
			      const char *role_arn, const char *oidc_provider_arn,
			      const char *oidc_token, const char *session_name,
			      struct gc_error *err);

#endif
