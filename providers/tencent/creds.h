/*
 * creds.h: Tencent Cloud credentials, resolved as the SDKs and tccli resolve them. The
 * chain (spec OIDC, environment, the SDKs' INI file and tccli's PROFILE.credential, web
 * identity, the CVM role) is in docs/credentials.md, the STS and metadata requests and
 * the details in docs/internals/tencent.md, "Credentials".
 *
 * When nothing applies the error (GC_EAUTH) names every source tried and why each did
 * not. A source that applies but fails stops the chain with its own error. Every
 * variable is read through in->env, never getenv (HOME included). Secrets are registered
 * with the log as soon as they are read and wiped on release.
 *
 * Life cycle: tc_creds_init -> tc_creds_resolve -> use -> tc_creds_release. Temporary
 * credentials (expiration != 0) are resolved again before they expire (tencent.c).
 */
#ifndef GC_TC_CREDS_H
#define GC_TC_CREDS_H

#include <stdint.h>

#include "core/clock.h"
#include "core/creds.h"
#include "core/error.h"
#include "core/http.h"
#include "core/log.h"
#include "core/spec.h"

/* The fields of struct gc_creds (core/creds.h, whose helpers fill `base`) by their
 * Tencent Cloud names. */
struct tc_creds {
	union {
		struct gc_creds base;
		struct {
			char *secret_id;
			char *secret_key;
			char *token;	    /* NULL for long-term keys */
			int64_t expiration; /* unix seconds; 0: does not expire */
			char *source; /* where they came from: "environment", "profile 'ci'" */
		};
	};
};

struct tc_creds_input {
	const char *profile;		 /* the spec's provider.profile, or NULL */
	const char *region;		 /* the spec's provider.region (STS's X-TC-Region) */
	const char *endpoint;		 /* the spec's provider.endpoint (STS goes there too) */
	const struct gc_spec_oidc *oidc; /* the spec's provider.oidc, or NULL */
	const struct gc_spec_env *env;	 /* NULL: the process environment */
	struct gc_http *http;		 /* for the metadata service; must outlive the call */
	struct gc_log *log;		 /* may be NULL */
	const struct gc_clock *clock;	 /* retry waits; NULL: the real one */
	/* for tests only; NULL or 0: the real ones */
	const char *metadata_base;   /* "http://metadata.tencentyun.com" */
	const char *etc_credentials; /* "/etc/tencentcloud/credentials" */
	long metadata_timeout_ms;    /* 1000 */
};

/* The shared view's life cycle; release takes NULL. */
#define tc_creds_init(c) gc_creds_init(&(c)->base)
static inline void tc_creds_release(struct tc_creds *c)
{
	gc_creds_release(c ? &c->base : NULL);
}

/* Resolves credentials through the chain above; out is written only on success. */
int tc_creds_resolve(struct tc_creds *out, const struct tc_creds_input *in, struct gc_error *err);

#endif
