/*
 * quotas.c: Service Quotas' GetServiceQuota, as gpucluster-sim serves it, for plan's quota
 * preflight (docs/internals/quota.md).
 *
 * The real service lives on its own endpoint (servicequotas.REGION.amazonaws.com); here it
 * shares the AWS port, told apart by its X-Amz-Target header
 * (ServiceQuotasV20190624.GetServiceQuota). It speaks the JSON 1.1 protocol: POST with
 * Content-Type application/x-amz-json-1.1, SigV4 with the service "servicequotas" scoped
 * to a region of the catalogue, errors as {"__type": "Code", "message": ...} with HTTP 400.
 *
 * ServiceCode ec2 and the EC2 vCPU quota codes of the families the catalogue sells (P,
 * G and VT, standard; on-demand and spot) are served: each answers the market's limit
 * that POST /quotas set for aws (sim/quota.c, in vCPUs). Another code is
 * NoSuchResourceException, another service code too; `aws:denied` answers
 * AccessDeniedException. The use is not this service's: the driver counts it from
 * DescribeInstances.
 */
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/str.h"
#include "sim/aws/aws.h"
#include "sim/catalog.h"
#include "sim/quota.h"

#define QUOTAS_PREFIX  "ServiceQuotasV20190624."
#define QUOTAS_VERSION "2019-06-24"
#define QUOTAS_TYPE    "application/x-amz-json-1.1"

struct quotas {
	struct sim *sim;
	const struct sim_req *req;
	struct sim_resp *resp;
	char rid[37];
	json_t *body;
};

static const struct {
	const char *code, *name, *cls;
	bool spot;
} codes[] = {
	{ "L-417A185B", "Running On-Demand P instances", "P/OnDemand", false },
	{ "L-DB2E81BA", "Running On-Demand G and VT instances", "G/OnDemand", false },
	{ "L-1216C47A", "Running On-Demand Standard (A, C, D, H, I, M, R, T, Z) instances",
	  "Standard/OnDemand", false },
	{ "L-7212CCBC", "All P Spot Instance Requests", "P/Spot", true },
	{ "L-3819A6DF", "All G and VT Spot Instance Requests", "G/Spot", true },
	{ "L-34B43A08", "All Standard (A, C, D, H, I, M, R, T, Z) Spot Instance Requests",
	  "Standard/Spot", true },
};

bool sim_quotas_wants(const struct sim_req *req)
{
	const char *t = gc_params_get_ci(req->headers, "X-Amz-Target");

	return t && gc_starts_with(t, QUOTAS_PREFIX);
}

__attribute__((format(printf, 4, 5))) static int fail(struct quotas *c, int status,
						      const char *code, const char *fmt, ...)
{
	char msg[1024];
	json_t *doc;
	char *text;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	doc = json_pack("{s:s, s:s}", "__type", code, "message", msg);
	text = json_dumps(doc, JSON_COMPACT);
	gc_buf_reset(&c->resp->body);
	gc_buf_addstr(&c->resp->body, text ? text : "{}");
	free(text);
	json_decref(doc);
	c->resp->status = status;
	snprintf(c->resp->error_code, sizeof(c->resp->error_code), "%s", code);
	return -1;
}

static int authenticate(struct quotas *c)
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
		return fail(c, 400, "MissingAuthenticationTokenException",
			    "Missing Authentication Token");
	if (sim_aws_parse_authorization(authz, &auth, &err) != 0)
		return fail(c, 400, "IncompleteSignatureException",
			    "Authorization header is malformed: %s", err.message);
	secret = sim_aws_secret(c->sim, auth.access_key_id,
				gc_params_get_ci(req->headers, "X-Amz-Security-Token"), now,
				session_secret);
	if (!secret) {
		fail(c, 400, "UnrecognizedClientException",
		     "The security token included in the request is invalid.");
		goto out;
	}
	if (!date || sim_aws_parse_amz_date(date, &t) != 0) {
		fail(c, 400, "IncompleteSignatureException",
		     "Authorization header requires existence of a valid 'X-Amz-Date' header.");
		goto out;
	}
	if (!sim_aws_fresh(t, now)) {
		fail(c, 400, "InvalidSignatureException",
		     "Signature expired: %s is now earlier or later than the allowed 15 minutes.",
		     date);
		goto out;
	}
	if (strcmp(auth.service, "servicequotas") != 0 ||
	    !sim_catalog_region(SIM_AWS, auth.region)) {
		fail(c, 400, "InvalidSignatureException",
		     "Credential should be scoped to a valid region and to the service "
		     "'servicequotas', not '%s/%s'.",
		     auth.region, auth.service);
		goto out;
	}
	if (sim_aws_verify(req, &auth, secret, &err) != 0) {
		fail(c, 400, "InvalidSignatureException",
		     "The request signature we calculated does not match the signature you "
		     "provided. Check your AWS Secret Access Key and signing method. Consult the "
		     "service documentation for details.");
		goto out;
	}
	ret = 0;
out:
	aws_sigv4_auth_release(&auth);
	return ret;
}

static int get_service_quota(struct quotas *c, const char *region)
{
	const char *service = json_string_value(json_object_get(c->body, "ServiceCode"));
	const char *code = json_string_value(json_object_get(c->body, "QuotaCode"));
	json_t *out;
	char arn[160];
	char *text;
	size_t i;

	if (!service || !*service || !code || !*code)
		return fail(c, 400, "ValidationException",
			    "1 validation error detected: ServiceCode and QuotaCode are required");
	if (sim_quota_denied(SIM_AWS))
		return fail(c, 400, "AccessDeniedException",
			    "You do not have sufficient access to perform this action.");
	for (i = 0; i < sizeof(codes) / sizeof(codes[0]); i++)
		if (!strcmp(service, "ec2") && !strcmp(code, codes[i].code))
			break;
	if (i == sizeof(codes) / sizeof(codes[0]))
		return fail(c, 400, "NoSuchResourceException",
			    "The request failed because the specified service or quota does "
			    "not exist: %s/%s",
			    service, code);
	snprintf(arn, sizeof(arn), "arn:aws:servicequotas:%s::ec2/%s", region, code);
	out = json_pack("{s:{s:s, s:s, s:s, s:s, s:s, s:f, s:s, s:b, s:b, s:{s:s, s:s, s:{s:s, "
			"s:s, s:s, s:s}, s:s}}}",
			"Quota", "ServiceCode", "ec2", "ServiceName",
			"Amazon Elastic Compute Cloud (Amazon EC2)", "QuotaArn", arn, "QuotaCode",
			code, "QuotaName", codes[i].name, "Value",
			(double)sim_quota_limit(SIM_AWS, codes[i].spot), "Unit", "None",
			"Adjustable", 1, "GlobalQuota", 0, "UsageMetric", "MetricNamespace",
			"AWS/Usage", "MetricName", "ResourceCount", "MetricDimensions", "Class",
			codes[i].cls, "Resource", "vCPU", "Service", "EC2", "Type", "Resource",
			"MetricStatisticRecommendation", "Maximum");
	text = json_dumps(out, JSON_COMPACT | JSON_REAL_PRECISION(17));
	gc_buf_reset(&c->resp->body);
	gc_buf_addstr(&c->resp->body, text ? text : "{}");
	free(text);
	json_decref(out);
	c->resp->status = 200;
	return 0;
}

static void handle(struct quotas *c)
{
	const char *target = gc_params_get_ci(c->req->headers, "X-Amz-Target");
	const char *op = target + strlen(QUOTAS_PREFIX);
	const char *authz = gc_params_get_ci(c->req->headers, "Authorization");
	struct aws_sigv4_auth auth;
	struct gc_error err;
	struct sim_fault_hit hit;
	char region[64] = "us-east-1";

	snprintf(c->resp->action, sizeof(c->resp->action), "%s", op);
	snprintf(c->resp->version, sizeof(c->resp->version), "%s", QUOTAS_VERSION);
	if (c->req->body_len)
		c->body = json_loadb(c->req->body, c->req->body_len, JSON_REJECT_DUPLICATES, NULL);
	c->resp->log_params = c->body ? json_deep_copy(c->body) : json_object();
	if (authenticate(c) != 0)
		return;
	gc_error_init(&err);
	if (authz && sim_aws_parse_authorization(authz, &auth, &err) == 0) {
		snprintf(region, sizeof(region), "%s", auth.region);
		aws_sigv4_auth_release(&auth);
	}
	if (strcmp(op, "GetServiceQuota") != 0) {
		fail(c, 400, "UnknownOperationException", "Operation %s is not served here", op);
		return;
	}
	if (!json_is_object(c->body)) {
		fail(c, 400, "SerializationException", "The request body is not a JSON object");
		return;
	}
	sim_faults_check(c->sim->faults, SIM_AWS, "GetServiceQuota", 0, &hit);
	switch (hit.kind) {
	case SIM_FAULT_THROTTLE: fail(c, 400, "TooManyRequestsException", "Rate exceeded"); return;
	case SIM_FAULT_5XX: fail(c, 500, "ServiceException", "An internal error occurred"); return;
	case SIM_FAULT_DROP: c->resp->drop = true; return;
	case SIM_FAULT_SLOW: c->resp->delay_ms += hit.delay_ms; break;
	case SIM_FAULT_HOSTILE:
		c->resp->hostile = hit;
		if (!sim_hostile_applies(hit.hostile))
			return; /* the answer is replaced */
		break;
	default: break;
	}
	get_service_quota(c, region);
}

/* How the hostile modes imitate a JSON 1.1 service (sim/hostile.h). */
static const struct sim_hostile_style quotas_hostile = {
	.content_type = QUOTAS_TYPE,
	.error_status = 400,
	.error_code = "ValidationException",
	.wrong_document = "{\"Services\":[{\"ServiceCode\":\"ec2\",\"ServiceName\":\"hostile\"}]}",
	.wrong_document_keys = "{\"Services\":[{\"ServiceCode\":\"ec2\",\"ServiceName\":"
			       "\"hostile\"}]}",
};

void sim_quotas_handle(struct sim *sim, const struct sim_req *req, struct sim_resp *resp)
{
	struct quotas c;

	memset(&c, 0, sizeof(c));
	c.sim = sim;
	c.req = req;
	c.resp = resp;
	sim_request_id(sim, false, c.rid);
	resp->content_type = QUOTAS_TYPE;
	gc_params_add(&resp->headers, "x-amzn-RequestId", c.rid);
	handle(&c);
	sim_hostile_answer(&quotas_hostile, resp->action, &resp->hostile, resp);
	json_decref(c.body);
}
