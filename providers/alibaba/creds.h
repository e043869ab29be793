/*
 * creds.h: Alibaba Cloud credentials, resolved as the aliyun CLI and the Alibaba Cloud
 * Credentials SDK's default chain resolve them.
 *
 * The chain, first match wins:
 *   0. in GitHub Actions (GITHUB_ACTIONS=true), the spec's provider.oidc: a token from the
 *      runner's token service (core/oidc.h) for oidc.audience (default
 *      sts.aliyuncs.com), then STS AssumeRoleWithOIDC of oidc.role with the OIDC provider
 *      oidc.provider (session oidc.session_name, default gpucluster-RUN-ATTEMPT). Outside
 *      GitHub Actions the block is skipped, so the same spec works from a laptop;
 *   1. environment, unless the spec names a profile: ALIBABA_CLOUD_ACCESS_KEY_ID +
 *      ALIBABA_CLOUD_ACCESS_KEY_SECRET (+ ALIBABA_CLOUD_SECURITY_TOKEN); the aliyun CLI's
 *      older ALIBABACLOUD_ACCESS_KEY_ID / _SECRET / _SECURITY_TOKEN and ALICLOUD_ACCESS_KEY_ID
 *      / _SECRET; Terraform's ALICLOUD_ACCESS_KEY + ALICLOUD_SECRET_KEY; the last two sets
 *      take their token from ALICLOUD_SECURITY_TOKEN. One of a pair without the other is
 *      an error, not a fall-through;
 *   2. OIDC, unless the spec names a profile: ALIBABA_CLOUD_ROLE_ARN +
 *      ALIBABA_CLOUD_OIDC_PROVIDER_ARN with ALIBABA_CLOUD_OIDC_TOKEN_FILE (ACK's RRSA), or
 *      without the file but with ACTIONS_ID_TOKEN_REQUEST_URL (GitHub Actions: a token
 *      for audience sts.aliyuncs.com); session ALIBABA_CLOUD_ROLE_SESSION_NAME. STS
 *      AssumeRoleWithOIDC, anonymous (the Credentials SDKs' request: Action, Format,
 *      Version and Timestamp in the query, the rest in a form body), 3600 s;
 *   3. the aliyun CLI's config file (ALIBABA_CLOUD_CONFIG_FILE, else
 *      ~/.aliyun/config.json; ALIBABA_CLOUD_CLI_PROFILE_DISABLED=true skips it), profile
 *      the spec's provider.profile, else ALIBABA_CLOUD_PROFILE, else the file's "current",
 *      else "default". A profile named by the spec or ALIBABA_CLOUD_PROFILE that the file
 *      lacks is an error. Modes: AK, StsToken, RamRoleArn (STS AssumeRole signed with the
 *      profile's keys), ChainableRamRoleArn (the same, signed with source_profile's
 *      credentials, loops refused), EcsRamRole (the instance metadata below, role
 *      ram_role_name), OIDC (ram_role_arn, oidc_provider_arn, oidc_token_file:
 *      AssumeRoleWithOIDC as in 2); the interactive and external modes are refused,
 *      naming the mode;
 *   4. the ECS instance's RAM role from the metadata service (100.100.100.200), unless
 *      ALIBABA_CLOUD_ECS_METADATA_DISABLED=true: PUT /latest/api/token
 *      (X-aliyun-ecs-metadata-token-ttl-seconds), then GET
 *      /latest/meta-data/ram/security-credentials/ROLE with X-aliyun-ecs-metadata-token;
 *      ROLE is ALIBABA_CLOUD_ECS_METADATA or the one the directory lists. Without a
 *      token (an old metadata service) the GETs go without one unless
 *      ALIBABA_CLOUD_IMDSV1_DISABLED=true. Short: 1 s per request, two attempts.
 * ALIBABA_CLOUD_CREDENTIALS_URI and ~/.alibabacloud/credentials are not read; the error
 * says so when the first is set. When nothing applies the error (GC_EAUTH) names every
 * source tried and why it did not apply. A source that applies but fails stops the chain
 * with its own error (STS refusing: GC_EAUTH with STS's code in err->cloud_code).
 *
 * STS: version 2015-04-01, an ACS3-signed POST like every other call (ecs.h,
 * ali_wire_build), at the spec's provider.endpoint when set (the emulator serves every
 * product on one port), else https://sts-vpc.REGION.aliyuncs.com with the profile's
 * enable_vpc or ALIBABA_CLOUD_VPC_ENDPOINT_ENABLED=true, else
 * https://sts.REGION.aliyuncs.com for the profile's sts_region or
 * ALIBABA_CLOUD_STS_REGION, else https://sts.aliyuncs.com. DurationSeconds is the
 * profile's expired_seconds (900..43200, default 3600), RoleSessionName its
 * ram_session_name, else ALIBABA_CLOUD_ROLE_SESSION_NAME, else "gpucluster-UNIXTIME";
 * external_id and policy are passed on.
 *
 * Every variable is read through in->env (HOME included), never getenv. Secrets (key
 * secrets, security tokens, the metadata token) are registered with the log as soon as
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

void ali_creds_init(struct ali_creds *c);
void ali_creds_release(struct ali_creds *c);

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
