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

static bool any_region(const char *region)
{
	return sim_catalog_region(SIM_AWS, region);
}

static int get_service_quota(struct sim_aws_json *c, const char *region)
{
	const char *service = json_string_value(json_object_get(c->body, "ServiceCode"));
	const char *code = json_string_value(json_object_get(c->body, "QuotaCode"));
	json_t *out;
	char arn[160];
	size_t i;

	if (!service || !*service || !code || !*code)
		return sim_aws_json_fail(
			c, 400, "ValidationException",
			"1 validation error detected: ServiceCode and QuotaCode are required");
	if (sim_quota_denied(SIM_AWS))
		return sim_aws_json_fail(
			c, 400, "AccessDeniedException",
			"You do not have sufficient access to perform this action.");
	for (i = 0; i < sizeof(codes) / sizeof(codes[0]); i++)
		if (!strcmp(service, "ec2") && !strcmp(code, codes[i].code))
			break;
	if (i == sizeof(codes) / sizeof(codes[0]))
		return sim_aws_json_fail(
			c, 400, "NoSuchResourceException",
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
	sim_aws_json_reply(c, out, JSON_REAL_PRECISION(17));
	return 0;
}

static const struct sim_aws_json_service quotas_service = {
	"servicequotas",    any_region, "GetServiceQuota", "TooManyRequestsException",
	"ServiceException",
};

static void handle(struct sim_aws_json *c, const char *op)
{
	struct sim_fault_hit hit;
	char region[64];

	if (sim_aws_json_admit(c, &quotas_service, op, region, &hit) != 0)
		return;
	if (hit.kind == SIM_FAULT_HOSTILE) {
		c->resp->hostile = hit;
		if (!sim_hostile_applies(hit.hostile))
			return; /* the answer is replaced */
	}
	get_service_quota(c, region);
}

/* How the hostile modes imitate a JSON 1.1 service (sim/hostile.h). */
static const struct sim_hostile_style quotas_hostile = {
	.content_type = SIM_AWS_JSON_TYPE,
	.error_status = 400,
	.error_code = "ValidationException",
	.wrong_document = "{\"Services\":[{\"ServiceCode\":\"ec2\",\"ServiceName\":\"hostile\"}]}",
	.wrong_document_keys = "{\"Services\":[{\"ServiceCode\":\"ec2\",\"ServiceName\":"
			       "\"hostile\"}]}",
};

void sim_quotas_handle(struct sim *sim, const struct sim_req *req, struct sim_resp *resp)
{
	const char *op = gc_params_get_ci(req->headers, "X-Amz-Target") + strlen(QUOTAS_PREFIX);
	struct sim_aws_json c;

	sim_aws_json_begin(&c, sim, req, resp, op, QUOTAS_VERSION);
	handle(&c, op);
	sim_hostile_answer(&quotas_hostile, resp->action, &resp->hostile, resp);
	sim_aws_json_end(&c);
}
