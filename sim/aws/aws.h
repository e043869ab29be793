/*
 * aws.h: what the AWS services on the emulator's AWS port share (private to sim/aws).
 *
 * One port serves them all, as AWS_ENDPOINT_URL does: sim_ec2_handle (ec2.c) hands a
 * request to STS (sts.c) when sim_sts_wants it and to the Price List Query API
 * (pricing.c, GetProducts) when sim_pricing_wants it (an X-Amz-Target of
 * AWSPriceListService.*); everything else is EC2 (ec2.h). Each service verifies SigV4
 * with the one verifier here (sigv4.c) and answers with its own error codes; EC2 and STS
 * write their XML through xml.c, the JSON 1.1 services (pricing.c, quotas.c) their
 * requests, SigV4 scope and errors through json.c.
 *
 * Everything here is a pure function, safe from any connection thread.
 */
#ifndef GC_SIM_AWS_H
#define GC_SIM_AWS_H

#include <jansson.h>
#include <libxml/xmlwriter.h>
#include <stdbool.h>
#include <stdint.h>

#include "core/error.h"
#include "providers/aws/sigv4.h"
#include "sim/sim.h"

/* How far X-Amz-Date may be from the emulator's clock, as every AWS service allows. */
#define SIM_AWS_SKEW_S (15 * 60)

bool sim_pricing_wants(const struct sim_req *req);
void sim_pricing_handle(struct sim *sim, const struct sim_req *req, struct sim_resp *resp);
/* Service Quotas (quotas.c, GetServiceQuota): an X-Amz-Target of ServiceQuotasV20190624.* */
bool sim_quotas_wants(const struct sim_req *req);
void sim_quotas_handle(struct sim *sim, const struct sim_req *req, struct sim_resp *resp);

/*
 * Parses a SigV4 Authorization header into *out (release it with
 * aws_sigv4_auth_release). -1 when it is not AWS4-HMAC-SHA256 (err untouched, *out not
 * to be released) or malformed (err says why).
 */
int sim_aws_parse_authorization(const char *authz, struct aws_sigv4_auth *out,
				struct gc_error *err);

/* X-Amz-Date (20261111T100000Z) to unix seconds; -1 when malformed. */
int sim_aws_parse_amz_date(const char *s, int64_t *out);

/* "2026-11-11T10:00:00Z", with fractional seconds or "+00:00" allowed; -1 when malformed. */
int sim_aws_parse_iso(const char *s, int64_t *out);

/* Whether a request signed at t (unix seconds) is within SIM_AWS_SKEW_S of now. */
bool sim_aws_fresh(int64_t t, int64_t now);

/*
 * Verifies req's signature, described by auth, with secret: against the Host as
 * received, then without its port (an SDK pointed at http://127.0.0.1:PORT may sign
 * either). 0, or -1 with err set (GC_EAUTH: the signature does not match).
 */
int sim_aws_verify(const struct sim_req *req, const struct aws_sigv4_auth *auth, const char *secret,
		   struct gc_error *err);

/* An XML response being written (xml.c); all NULL when none is. */
struct sim_aws_xml {
	xmlBufferPtr buf;
	xmlTextWriterPtr w;
};

/* Starts a document: <?xml version="1.0" encoding="UTF-8"?>. */
void sim_aws_xml_start(struct sim_aws_xml *x);
/* Ends the document and makes it resp's body, with status; x is empty again. */
void sim_aws_xml_send(struct sim_aws_xml *x, struct sim_resp *resp, int status);
/* Drops a document being written, if any. */
void sim_aws_xml_discard(struct sim_aws_xml *x);

/* A request to one of the JSON 1.1 services (json.c: pricing.c, quotas.c). */
#define SIM_AWS_JSON_TYPE "application/x-amz-json-1.1"
struct sim_aws_json {
	struct sim *sim;
	const struct sim_req *req;
	struct sim_resp *resp;
	const char *ns; /* the namespace of the service's own error codes; NULL: none */
	char rid[37];
	json_t *body; /* the request's JSON; NULL when it is not JSON */
};

/* Starts the answer to op: request id, content type, the logged body. */
void sim_aws_json_begin(struct sim_aws_json *c, struct sim *sim, const struct sim_req *req,
			struct sim_resp *resp, const char *op, const char *version);
void sim_aws_json_end(struct sim_aws_json *c);
/* out (taken) as the 200 answer, dumped with JSON_COMPACT | flags. */
void sim_aws_json_reply(struct sim_aws_json *c, json_t *out, size_t flags);
/* The error answer, code namespaced with c->ns unless the protocol's own; -1. */
int sim_aws_json_fail(struct sim_aws_json *c, int status, const char *code, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* SigV4 for service in a region region_ok accepts (copied to region when not NULL); 0, or
 * -1 with the error answered. */
int sim_aws_json_authenticate(struct sim_aws_json *c, const char *service,
			      bool (*region_ok)(const char *region), char region[64]);

/* One JSON 1.1 service's constants, for sim_aws_json_admit. */
struct sim_aws_json_service {
	const char *service;		       /* SigV4's service name */
	bool (*region_ok)(const char *region); /* the regions its credentials may be scoped to */
	const char *op;			       /* the one operation served (and faulted) */
	const char *throttle_code, *internal_code; /* its throttling and 5xx error codes */
};

/* Authentication, the operation, the body and the injected faults of a request: 0 when it
 * goes on (hit says which fault applies still, a hostile one or none), -1 when answered
 * (or dropped). */
int sim_aws_json_admit(struct sim_aws_json *c, const struct sim_aws_json_service *svc,
		       const char *op, char region[64], struct sim_fault_hit *hit);

/* What the cloud sells (offer.c), for its row of the frontend table. */
extern const struct sim_catalog sim_aws_offer;

#endif
