/*
 * sim.h: gpucluster-sim, the local cloud. The pieces and how a request flows.
 *
 *   frontend.c   the table of clouds, one row each (frontend.h): port handler, names,
 *                credentials, catalogue, rate limits, id shapes, node details
 *   server.c     libmicrohttpd, one listening port per cloud (127.0.0.1 only) plus a
 *                control port; reads a request into a struct sim_req, hands it to the
 *                cloud's row's handler, sends the struct sim_resp back, writes the request
 *                log line, applies latency, slow responses and dropped connections
 *   aws/         EC2 Query API 2016-11-15 (ec2*.c), STS and the Price List on the same
 *                port; one SigV4 verifier (sigv4.c); XML
 *   alibaba/     ECS 2014-05-26, VPC and STS (ACS3-HMAC-SHA256 and RPC HMAC-SHA1, JSON)
 *   tencent/     CVM 2017-03-12, the VPC security-group actions and STS (TC3, JSON)
 *   world.c      instances, tokens, key pairs, security groups, life cycle
 *   catalog.c    lookups in each cloud's regions, zones, instance types, images, prices
 *                (sim/NAME/offer.c)
 *   faults.c     injected faults, rate limits, latency
 *   hostile.c    the hostile fault's broken answers (endless tokens, HTML, huge bodies...)
 *   node.c       instances as SSH targets (sshd + bubblewrap)
 *   control.c    the control API: state, reset, faults
 *   main.c       flags, start-up, the ticker, shutdown
 *
 * A frontend is a pure function of (sim, request) -> response: it verifies the
 * signature, checks the parameters strictly, consults the faults, locks the world for
 * the action and renders the cloud's response or error. Unit tests call the frontends
 * directly with requests signed by the project's own signers; the SDK tests go through
 * the server.
 */
#ifndef GC_SIM_H
#define GC_SIM_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "core/buf.h"
#include "core/urlenc.h"
#include "sim/faults.h"
#include "sim/world.h"

/* The fake credentials a cloud accepts: an access key id and its secret. */
struct sim_cred {
	char id[128];
	char secret[128];
	bool intl; /* an international-site account (Alibaba, Tencent): prices in USD */
};

#define SIM_MAX_CREDS 4

struct sim_config {
	struct sim_cred creds[SIM_NCLOUDS][SIM_MAX_CREDS];
	unsigned n_creds[SIM_NCLOUDS];
	/* added to the wall clock when checking request timestamps, for skew tests */
	int64_t clock_offset_s;
	/* AWS account id shown as ownerId */
	char aws_account[16];
	/* cap on a request body, bytes */
	size_t max_body;
	/* seals the session tokens STS issues (random per process; see sim/aws/sts.c) */
	unsigned char sts_key[32];
	/* --no-default-vpc: no region has a default VPC, only the user's (sim/network.h) */
	bool no_default_vpc;
};

/* Fills the default credentials (documented in docs/sim.md) and limits. */
void sim_config_defaults(struct sim_config *cfg);

struct sim {
	struct sim_config cfg;
	struct sim_world *world;
	struct sim_faults *faults;
	void *nodes; /* struct sim_nodes *, or NULL without SSH nodes */
	/* Alibaba nonces seen in the last 15 minutes (replay protection) */
	struct sim_nonces *nonces;
	/* the OIDC issuer the accounts trust (sim/oidc.h), or NULL: none registered */
	struct sim_oidc *oidc;
};

/* A received request, as the server hands it to a frontend. Borrowed pointers. */
struct sim_req {
	enum sim_cloud cloud;
	const char *method;
	const char *path;		 /* decoded path, "/" */
	const char *query_string;	 /* raw, "" when none */
	const struct gc_params *query;	 /* decoded query parameters in wire order */
	const struct gc_params *headers; /* as received */
	const char *body;
	size_t body_len;
	time_t now;		 /* wall clock at arrival, seconds */
	const char *remote_addr; /* the client's address, "127.0.0.1" */
};

/* What a frontend answers. Initialise with sim_resp_init, release with sim_resp_release. */
struct sim_resp {
	int status;
	const char *content_type; /* static string */
	struct gc_buf body;
	struct gc_params headers; /* extra response headers */
	bool drop;		  /* close the connection without answering */
	unsigned delay_ms;	  /* hold the response back this long (latency, slow) */
	/* hostile answers (hostile.h): the rule that fired, and how the server sends the body */
	struct sim_fault_hit hostile;
	uint64_t stream_bytes; /* the body is this long: the bytes above body.len are filler */
	unsigned trickle_ms;   /* the body goes out in pieces spread over this long */

	/* for the request log */
	char action[64];
	char version[16];
	char error_code[128];
	json_t *log_params; /* decoded parameters (an object), owned; NULL when unparsed */
};

void sim_resp_init(struct sim_resp *r);
void sim_resp_release(struct sim_resp *r);
/* Answers doc (taken), indented, as application/json with status: the control port's
 * documents. */
void sim_resp_json(struct sim_resp *r, int status, json_t *doc);

/* The frontends: one per cloud, pure functions of (sim, request). */
void sim_ec2_handle(struct sim *sim, const struct sim_req *req, struct sim_resp *resp);
void sim_ecs_handle(struct sim *sim, const struct sim_req *req, struct sim_resp *resp);
void sim_cvm_handle(struct sim *sim, const struct sim_req *req, struct sim_resp *resp);

/*
 * STS 2011-06-15 on the AWS port (sim/aws/sts.c): sim_ec2_handle hands a request over
 * when sim_sts_wants it: its SigV4 scope names the service "sts", or it is unsigned and
 * names an STS action (AssumeRoleWithWebIdentity needs no signature).
 */
bool sim_sts_wants(const struct sim_req *req);
void sim_sts_handle(struct sim *sim, const struct sim_req *req, struct sim_resp *resp);

/*
 * The secret of an AWS access key id: a configured key's (token is then not looked at),
 * or that of temporary credentials STS issued, when token is the session token issued
 * with them and has not expired at now (unix seconds). NULL otherwise. A temporary
 * key's secret is written to out.
 */
#define SIM_AWS_SECRET_MAX 64
const char *sim_aws_secret(const struct sim *sim, const char *key_id, const char *token,
			   int64_t now, char out[SIM_AWS_SECRET_MAX]);

/* --- helpers the frontends share (sim/common.c) -------------------------------------- */

/*
 * Sealed session tokens: the temporary keys the three STS frontends issue need no table.
 * A session token is PREFIX followed by the base64 of "MAGIC\nKEYID\nEXPIRY\nARN" and
 * its HMAC-SHA256 under cfg.sts_key; the secret is derived from the key id under the
 * same key. Any frontend can then check a request made with them without a lock, a reset
 * forgets nothing it should keep, and a restarted emulator no longer accepts old tokens,
 * as real temporary keys expire. Each cloud has its own magic, so a token of one cloud is
 * not taken by another.
 */
#define SIM_SESSION_ARN_MAX   2304
#define SIM_SESSION_TOKEN_MAX 8192 /* longer is not one of ours */

struct sim_session {
	char key_id[64];
	int64_t expiry; /* unix seconds */
	char arn[SIM_SESSION_ARN_MAX];
};

enum sim_session_check {
	SIM_SESSION_OK = 0,
	SIM_SESSION_MALFORMED, /* not a token this emulator sealed with this magic */
	SIM_SESSION_MISMATCH,  /* sealed for another key id */
	SIM_SESSION_EXPIRED,   /* at or past its expiry */
};

/* The token for s (a new string). */
char *sim_session_seal(const struct sim *sim, const char *prefix, const char *magic,
		       const struct sim_session *s);
/* Opens token, sealed with prefix and magic, for key_id at time now; *out is filled when
 * the seal is ours (OK, MISMATCH or EXPIRED). */
enum sim_session_check sim_session_open(const struct sim *sim, const char *prefix,
					const char *magic, const char *token, const char *key_id,
					int64_t now, struct sim_session *out);
/* n characters of alphabet derived from the HMAC of text under cfg.sts_key, NUL-ended: the
 * temporary keys' ids and secrets. */
void sim_session_derive(const struct sim *sim, const char *text, const char *alphabet, char *out,
			size_t n);

/*
 * A fault hit around an action, for the frontends that fail with any kind the rule names
 * (ECS, CVM). Before it: 0 the action runs; -1 nothing runs and the answer is settled
 * (dropped, or replaced by a hostile one); 1 nothing runs and the caller answers with
 * the fault. After it (after=1, the action took effect): 0 its answer stands, -1
 * dropped, 1 the caller answers with the fault (a 5xx).
 */
int sim_fault_before(struct sim_resp *resp, const struct sim_fault_hit *hit);
int sim_fault_after(struct sim_resp *resp, const struct sim_fault_hit *hit);

/* A random request id in the shape of a UUID, upper- or lower-case. */
void sim_request_id(struct sim *sim, bool upper, char out[37]);

/*
 * The headers with Host's port removed, into out (appended), for clients that sign the
 * bare host: an SDK pointed at http://127.0.0.1:PORT may sign either. False when Host
 * has no port (out is then a copy).
 */
bool sim_headers_without_port(const struct gc_params *in, struct gc_params *out);

/* The secret for an access key id of cloud c, or NULL when the id is unknown. */
const char *sim_cred_secret(const struct sim *sim, enum sim_cloud c, const char *id);
/* Whether id is a configured key of an international-site account (--cred ...:intl). */
bool sim_cred_intl(const struct sim *sim, enum sim_cloud c, const char *id);

/*
 * Records an Alibaba nonce seen at time now; returns false when it was seen in the
 * last 15 minutes (SignatureNonceUsed). Thread-safe.
 */
bool sim_nonce_fresh(struct sim *sim, const char *nonce, time_t now);

struct sim_nonces *sim_nonces_new(void);
void sim_nonces_free(struct sim_nonces *n);

/*
 * A parameter-name pattern match for strictness: a pattern is a literal name in which
 * "N" between dots (or at the end) matches a decimal index 1..max. Example:
 * "Filter.N.Value.N" matches "Filter.3.Value.10". Returns the first index that was out
 * of 1..max via *bad_index (0 when none), so the caller can answer with the cloud's
 * InvalidParameterValue rather than UnknownParameter.
 */
bool sim_param_match(const char *pattern, const char *name, unsigned max, unsigned *bad_index);

/* The sha256 hex of the parameters' canonical text, leaving out the names in skip
 * (a NULL-terminated list): the client-token fingerprint. */
void sim_params_fingerprint(const struct gc_params *p, const char *const *skip, char out[65]);

#endif
