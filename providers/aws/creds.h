/*
 * creds.h: AWS credentials, region and endpoint, resolved as the AWS CLI resolves them.
 *
 * The chain, first match wins (profile-selected sources only when a profile applies):
 *   0. in GitHub Actions (GITHUB_ACTIONS=true), the spec's provider.oidc: a token from the
 *      runner's token service (core/oidc.h) for oidc.audience (default
 *      sts.amazonaws.com), then STS AssumeRoleWithWebIdentity of oidc.role (session
 *      oidc.session_name, default gpucluster-RUN-ATTEMPT). Outside GitHub Actions the
 *      block is skipped, so the same spec works from a laptop;
 *   1. environment: AWS_ACCESS_KEY_ID + AWS_SECRET_ACCESS_KEY (+ AWS_SESSION_TOKEN, or
 *      the older AWS_SECURITY_TOKEN; AWS_CREDENTIAL_EXPIRATION), unless a profile was
 *      named explicitly (the spec's provider.profile; AWS_PROFILE does not count, as in
 *      the CLI). One of the pair without the other is an error, not a fall-through;
 *   2. the profile (the spec's, else AWS_PROFILE, else "default") from the shared files
 *      (AWS_SHARED_CREDENTIALS_FILE or ~/.aws/credentials; AWS_CONFIG_FILE or
 *      ~/.aws/config, where sections are "[profile NAME]" except "[default]"; where
 *      both files set a key, the credentials file wins). A profile named by the spec or
 *      AWS_PROFILE that is in neither file is an error naming both files. Within it:
 *        - role_arn + source_profile: the source profile's credentials, then STS
 *          AssumeRole (role_session_name, default "gpucluster-<unix time>",
 *          external_id, duration_seconds 900..43200); chains of source profiles are
 *          followed with a loop check; a profile may name itself when it has its own
 *          keys; mfa_serial is refused (nothing below cmd/ may prompt);
 *        - role_arn + credential_source (Environment, Ec2InstanceMetadata; EcsContainer
 *          is refused);
 *        - role_arn + web_identity_token_file: STS AssumeRoleWithWebIdentity, unsigned;
 *        - role_arn with none of those three: an error;
 *        - aws_access_key_id + aws_secret_access_key (+ aws_session_token);
 *        - credential_process: the command split as the CLI splits it (shell-like
 *          quoting, no shell), found along PATH, run with the terminal's stdin and
 *          stderr; its JSON ({"Version": 1, "AccessKeyId", "SecretAccessKey",
 *          "SessionToken", "Expiration"}) read from at most 64 KiB of output within
 *          60 s (process_timeout_ms), else it is killed;
 *        - sso_* settings are not read: the error says to add a credential_process;
 *   3. AWS_ROLE_ARN + AWS_WEB_IDENTITY_TOKEN_FILE (+ AWS_ROLE_SESSION_NAME):
 *      AssumeRoleWithWebIdentity (EKS, a token a workflow wrote); AWS_ROLE_ARN without a
 *      token file but with ACTIONS_ID_TOKEN_REQUEST_URL: the same with a token fetched
 *      from GitHub Actions (audience sts.amazonaws.com);
 *   4. the container credentials endpoint is NOT used (not a GPU host case);
 *   5. IMDSv2: PUT /latest/api/token, then the role under
 *      /latest/meta-data/iam/security-credentials/ (AWS_EC2_METADATA_DISABLED=true
 *      skips it; AWS_EC2_METADATA_SERVICE_ENDPOINT overrides http://169.254.169.254,
 *      AWS_EC2_METADATA_SERVICE_ENDPOINT_MODE=IPv6 picks [fd00:ec2::254]). Short,
 *      because on a laptop it is absent: 1 s per request, two attempts
 *      (AWS_METADATA_SERVICE_TIMEOUT, AWS_METADATA_SERVICE_NUM_ATTEMPTS). No IMDSv1.
 * When nothing applies the error (GC_EAUTH) names every source tried and why each did
 * not, e.g. "no AWS credentials found; tried: environment (AWS_ACCESS_KEY_ID not set),
 * profile 'default' (no such profile in ~/.aws/credentials or ~/.aws/config), web
 * identity (AWS_ROLE_ARN not set), instance metadata (disabled by
 * AWS_EC2_METADATA_DISABLED)". A source that applies but fails stops the chain with its
 * own error: a misconfigured profile (GC_EINVALID, GC_EUNSUPPORTED), STS refusing
 * (GC_EAUTH with the STS code in err->cloud_code), STS throttling or failing after the
 * retries of core/retry.h (GC_ETHROTTLED, GC_ETRANSIENT), a credential_process exiting
 * non-zero (GC_EAUTH), printing something else than its JSON (GC_EINVALID), too much
 * (GC_ETOOBIG) or for too long (GC_ETIMEOUT).
 *
 * Region: the spec's, else AWS_REGION, else AWS_DEFAULT_REGION, else the profile's
 * `region`; it must look like a region name. Endpoints, per service (ec2, sts,
 * pricing): the spec's provider.endpoint (it acts as AWS_ENDPOINT_URL does, for every
 * service: that is how the emulator and proxies are used), else AWS_ENDPOINT_URL_EC2 /
 * _STS / _PRICING, else AWS_ENDPOINT_URL, else the profile's "services" block
 * ("[services NAME]" with "ec2 =" and an indented "endpoint_url = ..."), else the
 * profile's endpoint_url, else the public one: https://ec2.REGION.amazonaws.com (.com.cn
 * for cn- regions), https://sts.REGION.amazonaws.com, and
 * https://api.pricing.us-east-1.amazonaws.com (the Price List API's home region;
 * cn-northwest-1 and .com.cn for cn- regions). AWS_IGNORE_CONFIGURED_ENDPOINT_URLS=true
 * (or the profile's ignore_configured_endpoint_urls) skips the environment and profile
 * endpoints, not the spec's. Endpoints are http(s) URLs without a trailing slash.
 *
 * Every environment variable is read through in->env, never getenv (HOME included), so
 * tests and callers decide what is set; a credential_process inherits the real
 * environment, as there is no way to list a gc_spec_env. Secrets (secret keys, session
 * tokens, web identity and IMDS tokens) are registered with the log (gc_log_add_secret)
 * as soon as they are read, and wiped from memory on release.
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

void aws_creds_init(struct aws_creds *c);
void aws_creds_release(struct aws_creds *c);
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
