/*
 * json.c: what the emulator's JSON 1.1 services on the AWS port share (pricing.c,
 * quotas.c): the request's JSON body, SigV4 scoped to the service, and the answers and
 * errors in the protocol's shape ({"__type": ..., "message": ...}).
 */
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/str.h"
#include "sim/aws/aws.h"

void sim_aws_json_begin(struct sim_aws_json *c, struct sim *sim, const struct sim_req *req,
			struct sim_resp *resp, const char *op, const char *version)
{
	memset(c, 0, sizeof(*c));
	c->sim = sim;
	c->req = req;
	c->resp = resp;
	sim_request_id(sim, false, c->rid);
	resp->content_type = SIM_AWS_JSON_TYPE;
	gc_params_add(&resp->headers, "x-amzn-RequestId", c->rid);
	snprintf(resp->action, sizeof(resp->action), "%s", op);
	snprintf(resp->version, sizeof(resp->version), "%s", version);
	if (req->body_len)
		c->body = json_loadb(req->body, req->body_len, JSON_REJECT_DUPLICATES, NULL);
	resp->log_params = c->body ? json_deep_copy(c->body) : json_object();
}

void sim_aws_json_end(struct sim_aws_json *c)
{
	json_decref(c->body);
	c->body = NULL;
}

void sim_aws_json_reply(struct sim_aws_json *c, json_t *out, size_t flags)
{
	char *text = json_dumps(out, JSON_COMPACT | flags);

	gc_buf_reset(&c->resp->body);
	gc_buf_addstr(&c->resp->body, text ? text : "{}");
	free(text);
	json_decref(out);
	c->resp->status = 200;
}

/* The protocol's own errors carry no namespace, whatever the service's are. */
static bool protocol_error(const char *code)
{
	return gc_ends_with(code, "ClientException") || gc_starts_with(code, "InvalidSignature") ||
		gc_starts_with(code, "MissingAuthentication") ||
		gc_starts_with(code, "IncompleteSignature") ||
		gc_starts_with(code, "UnknownOperation") || gc_starts_with(code, "Serialization");
}

int sim_aws_json_fail(struct sim_aws_json *c, int status, const char *code, const char *fmt, ...)
{
	char msg[1024];
	json_t *doc;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	doc = json_pack("{s:s+, s:s}", "__type", c->ns && !protocol_error(code) ? c->ns : "", code,
			"message", msg);
	sim_aws_json_reply(c, doc, 0);
	c->resp->status = status;
	snprintf(c->resp->error_code, sizeof(c->resp->error_code), "%s", code);
	return -1;
}

int sim_aws_json_authenticate(struct sim_aws_json *c, const char *service,
			      bool (*region_ok)(const char *region), char region[64])
{
	const struct sim_req *req = c->req;
	const char *authz = gc_params_get_ci(req->headers, "Authorization");
	const char *date = gc_params_get_ci(req->headers, "X-Amz-Date");
	struct aws_sigv4_auth auth;
	struct gc_error err;
	const char *secret;
	char session_secret[SIM_AWS_SECRET_MAX];
	int64_t t, now = (int64_t)req->now + c->sim->cfg.clock_offset_s;
	int ret = -1;

	gc_error_init(&err);
	if (!authz)
		return sim_aws_json_fail(c, 400, "MissingAuthenticationTokenException",
					 "Missing Authentication Token");
	if (sim_aws_parse_authorization(authz, &auth, &err) != 0)
		return sim_aws_json_fail(c, 400, "IncompleteSignatureException",
					 "Authorization header is malformed: %s", err.message);
	/* long-term keys, or temporary ones STS issued with their session token */
	secret = sim_aws_secret(c->sim, auth.access_key_id,
				gc_params_get_ci(req->headers, "X-Amz-Security-Token"), now,
				session_secret);
	if (!secret) {
		sim_aws_json_fail(c, 400, "UnrecognizedClientException",
				  "The security token included in the request is invalid.");
		goto out;
	}
	if (!date || sim_aws_parse_amz_date(date, &t) != 0) {
		sim_aws_json_fail(c, 400, "IncompleteSignatureException",
				  "Authorization header requires existence of a valid "
				  "'X-Amz-Date' header.");
		goto out;
	}
	if (!sim_aws_fresh(t, now)) {
		sim_aws_json_fail(c, 400, "InvalidSignatureException",
				  "Signature expired: %s is now earlier or later than the allowed "
				  "15 minutes.",
				  date);
		goto out;
	}
	if (strcmp(auth.service, service) != 0 || !region_ok(auth.region)) {
		sim_aws_json_fail(c, 400, "InvalidSignatureException",
				  "Credential should be scoped to a valid region and to the "
				  "service '%s', not '%s/%s'.",
				  service, auth.region, auth.service);
		goto out;
	}
	if (sim_aws_verify(req, &auth, secret, &err) != 0) {
		sim_aws_json_fail(c, 400, "InvalidSignatureException",
				  "The request signature we calculated does not match the "
				  "signature you provided. Check your AWS Secret Access Key and "
				  "signing method. Consult the service documentation for details.");
		goto out;
	}
	if (region)
		snprintf(region, 64, "%s", auth.region);
	ret = 0;
out:
	aws_sigv4_auth_release(&auth);
	return ret;
}

int sim_aws_json_admit(struct sim_aws_json *c, const struct sim_aws_json_service *svc,
		       const char *op, char region[64], struct sim_fault_hit *hit)
{
	memset(hit, 0, sizeof(*hit));
	if (sim_aws_json_authenticate(c, svc->service, svc->region_ok, region) != 0)
		return -1;
	if (strcmp(op, svc->op) != 0)
		return sim_aws_json_fail(c, 400, "UnknownOperationException",
					 "Operation %s is not served here", op);
	if (!json_is_object(c->body))
		return sim_aws_json_fail(c, 400, "SerializationException",
					 "The request body is not a JSON object");
	sim_faults_check(c->sim->faults, SIM_AWS, svc->op, 0, hit);
	switch (hit->kind) {
	case SIM_FAULT_THROTTLE:
		return sim_aws_json_fail(c, 400, svc->throttle_code, "Rate exceeded");
	case SIM_FAULT_5XX:
		return sim_aws_json_fail(c, 500, svc->internal_code, "An internal error occurred");
	case SIM_FAULT_DROP: c->resp->drop = true; return -1;
	case SIM_FAULT_SLOW: c->resp->delay_ms += hit->delay_ms; break;
	default: break;
	}
	return 0;
}
