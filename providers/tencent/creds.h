/*
 * creds.h: Tencent Cloud credentials, resolved as the SDKs and tccli resolve them.
 *
 * The chain, first match wins:
 *   0. in GitHub Actions (GITHUB_ACTIONS=true), the spec's provider.oidc: a token from the
 *      runner's token service (core/oidc.h) for oidc.audience (default
 *      sts.cloud.tencent.com), then STS AssumeRoleWithWebIdentity of oidc.role with
 *      ProviderId oidc.provider (session oidc.session_name, default
 *      gpucluster-RUN-ATTEMPT). Outside GitHub Actions the block is skipped, so the same
 *      spec works from a laptop;
 *   1. environment: TENCENTCLOUD_SECRET_ID + TENCENTCLOUD_SECRET_KEY (the SDKs'
 *      EnvProvider), with TENCENTCLOUD_SESSION_TOKEN (or tccli's TENCENTCLOUD_TOKEN) for
 *      temporary keys; skipped when the spec names a profile (tccli also ignores the
 *      environment under --profile). One of the pair without the other is an error, not
 *      a fall-through;
 *   2. the profile (the spec's provider.profile, else TENCENTCLOUD_PROFILE, else tccli's
 *      TCCLI_PROFILE, else "default"), in two files:
 *        a. the SDKs' INI file: TENCENTCLOUD_CREDENTIALS_FILE (set but empty is an
 *           error, as in the Go SDK), else ~/.tencentcloud/credentials, else
 *           /etc/tencentcloud/credentials (the Python SDK); section [PROFILE], keys
 *           secret_id and secret_key (a surrounding pair of double quotes is dropped);
 *        b. tccli's ~/.tccli/PROFILE.credential (JSON: secretId, secretKey, token; type
 *           "cvm-role" means the instance role, below; "oauth" / "sso" and role-arn
 *           profiles are refused with a message, since they need a log-in or STS);
 *      a profile named by the spec or a variable that is in neither file is an error
 *      naming both;
 *   3. web identity: TKE_ROLE_ARN + TKE_PROVIDER_ID with TKE_WEB_IDENTITY_TOKEN_FILE (TKE's
 *      pod identity; X-TC-Region from TKE_REGION), or without the file but with
 *      ACTIONS_ID_TOKEN_REQUEST_URL (GitHub Actions: a token for audience
 *      sts.cloud.tencent.com). STS AssumeRoleWithWebIdentity (version 2018-08-13,
 *      unsigned as the SDKs send it: Authorization SKIP), 7200 s, at the spec's
 *      provider.endpoint when set, else https://sts.tencentcloudapi.com;
 *   4. the CVM instance role: GET http://metadata.tencentyun.com/latest/meta-data/
 *      cam/security-credentials/ for the role name, then that path plus the name for
 *      {TmpSecretId, TmpSecretKey, Token, ExpiredTime, Code}. Short, because off CVM it
 *      is absent: 1 s per request, two attempts. TENCENTCLOUD_CVM_ROLE_DISABLED=true
 *      skips it (gpucluster's own switch; the SDKs have none).
 * When nothing applies the error (GC_EAUTH) names every source tried and why each did
 * not. A source that applies but fails stops the chain with its own error.
 *
 * Every variable is read through in->env, never getenv (HOME included). Secrets are
 * registered with the log (gc_log_add_secret) as soon as they are read and wiped on
 * release.
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

void tc_creds_init(struct tc_creds *c);
void tc_creds_release(struct tc_creds *c);

/* Resolves credentials through the chain above; out is written only on success. */
int tc_creds_resolve(struct tc_creds *out, const struct tc_creds_input *in, struct gc_error *err);

#endif
