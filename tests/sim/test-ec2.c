/*
 * test-ec2.c: the emulator's EC2 frontend called directly, with requests signed by the
 * project's own SigV4 signer and responses read back as XML: launch, describe with tag
 * filters across pages, terminate and the life cycle on a fake clock, client tokens,
 * authentication failures, strict parameters, faults, key pairs and security groups.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cmocka.h>
#include <libxml/parser.h>
#include <libxml/tree.h>

#include "core/alloc.h"
#include "core/keygen.h"
#include "fake-clock.h"
#include "sim-fixture.h"
#include "providers/aws/sigv4.h"
#include "sim/sim.h"

#define AKID   "AKIAGPUCLUSTERSIM001"
#define SECRET "gpucluster-sim-aws-secret-key-0000000000"

struct call {
	const char *secret;  /* default SECRET */
	const char *akid;    /* default AKID */
	const char *region;  /* default us-east-1 */
	int64_t skew_s;	     /* added to the signing time */
	bool unsigned_req;   /* no Authorization at all */
	const char *host;    /* default 127.0.0.1:8000 */
	const char *sign_as; /* host used for signing, default = host */
};

struct reply {
	int status;
	xmlDocPtr doc;
	char code[128];
	bool drop;
	char body[256];
};

static void reply_release(struct reply *r)
{
	if (r->doc)
		xmlFreeDoc(r->doc);
	memset(r, 0, sizeof(*r));
}

/* First element named `name` anywhere below n, depth first. */
static xmlNodePtr find_any(xmlNodePtr n, const char *name)
{
	for (; n; n = n->next) {
		xmlNodePtr f;
		if (n->type == XML_ELEMENT_NODE && strcmp((const char *)n->name, name) == 0)
			return n;
		if ((f = find_any(n->children, name)))
			return f;
	}
	return NULL;
}

/* The first element called name under n; the test fails when there is none. */
static xmlNodePtr find(xmlNodePtr n, const char *name)
{
	xmlNodePtr f = find_any(n, name);

	if (!f) {
		fail_msg("no <%s> in the response", name);
		abort(); /* not reached: fail_msg does not return */
	}
	return f;
}

static size_t count(xmlNodePtr n, const char *name)
{
	size_t k = 0;

	for (; n; n = n->next) {
		if (n->type == XML_ELEMENT_NODE && strcmp((const char *)n->name, name) == 0)
			k++;
		k += count(n->children, name);
	}
	return k;
}

/* The text of the first `name` below the root (static buffer; "" when absent). */
static const char *text(const struct reply *r, const char *name)
{
	static char buf[4096];
	xmlNodePtr n = r->doc ? find_any(xmlDocGetRootElement(r->doc), name) : NULL;
	xmlChar *t;

	buf[0] = '\0';
	if (!n)
		return buf;
	t = xmlNodeGetContent(n);
	snprintf(buf, sizeof(buf), "%s", t ? (const char *)t : "");
	xmlFree(t);
	return buf;
}

static size_t count_in(const struct reply *r, const char *name)
{
	return r->doc ? count(xmlDocGetRootElement(r->doc), name) : 0;
}

/* Sends params (a NULL-terminated name, value, ... list) as a signed POST. */
static void vsend(const struct call *cl, struct reply *out, const char *const *kv)
{
	struct gc_params form = GC_PARAMS_INIT, headers = GC_PARAMS_INIT, query = GC_PARAMS_INIT;
	struct gc_buf body = GC_BUF_INIT(1 << 20);
	struct gc_sign_result sr;
	struct gc_sign_request req;
	struct aws_sigv4_input in;
	struct gc_error err;
	struct sim_req sreq;
	struct sim_resp resp;
	char ts[AWS_SIGV4_TIMESTAMP_LEN + 1];
	const char *host = cl && cl->host ? cl->host : "127.0.0.1:8000";
	time_t now = time(NULL);

	gc_error_init(&err);
	for (size_t i = 0; kv[i]; i += 2)
		gc_params_add(&form, kv[i], kv[i + 1]);
	assert_int_equal(gc_params_encode(&body, &form), 0);
	gc_params_add(&headers, "Content-Type", "application/x-www-form-urlencoded");
	gc_params_add(&headers, "Host", cl && cl->sign_as ? cl->sign_as : host);

	if (!cl || !cl->unsigned_req) {
		memset(&req, 0, sizeof(req));
		req.method = "POST";
		req.path = "/";
		req.headers = &headers;
		req.body = body.data;
		req.body_len = body.len;
		memset(&in, 0, sizeof(in));
		aws_sigv4_format_time(now + (cl ? cl->skew_s : 0), ts);
		in.access_key_id = cl && cl->akid ? cl->akid : AKID;
		in.secret_access_key = cl && cl->secret ? cl->secret : SECRET;
		in.timestamp = ts;
		in.region = cl && cl->region ? cl->region : "us-east-1";
		in.service = "ec2";
		assert_int_equal(aws_sigv4_sign(&sr, &req, &in, &err), 0);
		gc_params_add_all(&headers, &sr.added_headers);
		gc_sign_result_release(&sr);
	}
	/* the server sees the host as the client sent it */
	gc_params_remove(&headers, "Host");
	gc_params_add(&headers, "Host", host);

	memset(&sreq, 0, sizeof(sreq));
	sreq.cloud = SIM_AWS;
	sreq.method = "POST";
	sreq.path = "/";
	sreq.query_string = "";
	sreq.query = &query;
	sreq.headers = &headers;
	sreq.body = body.data;
	sreq.body_len = body.len;
	sreq.now = now;
	sim_resp_init(&resp);
	sim_ec2_handle(&sim, &sreq, &resp);

	memset(out, 0, sizeof(*out));
	out->status = resp.status;
	out->drop = resp.drop;
	snprintf(out->code, sizeof(out->code), "%s", resp.error_code);
	snprintf(out->body, sizeof(out->body), "%s", resp.body.data);
	if (!resp.drop) {
		out->doc = xmlReadMemory(resp.body.data, (int)resp.body.len, "r.xml", NULL,
					 XML_PARSE_NONET);
		assert_non_null(out->doc);
		if (resp.error_code[0]) {
			assert_string_equal(text(out, "Code"), resp.error_code);
			assert_true(strlen(text(out, "RequestID")) == 36);
		} else {
			assert_int_equal(resp.status, 200);
			assert_true(strlen(text(out, "requestId")) == 36);
		}
	}
	/* every answer carries what the request log needs */
	assert_non_null(resp.log_params);
	assert_null(json_object_get(resp.log_params, "Action"));
	sim_resp_release(&resp);
	gc_buf_release(&body);
	gc_params_release(&form);
	gc_params_release(&headers);
	gc_params_release(&query);
}

#define SEND(cl, out, ...)                                       \
	do {                                                     \
		const char *const kv_[] = { __VA_ARGS__, NULL }; \
		vsend((cl), (out), kv_);                         \
	} while (0)
#define EC2(action) "Action", action, "Version", "2016-11-15"

#define AMI  "ami-0d1e5f7a9b3c5e570"
#define TYPE "g5.xlarge"

static void advance_ms(uint64_t ms)
{
	fc.now += ms * MS;
	sim_world_lock(sim.world);
	sim_world_tick(sim.world);
	sim_world_unlock(sim.world);
}

static void test_run_describe_pages_terminate(void **state)
{
	struct reply r;
	char ids[12][32], token[128];
	size_t seen = 0, pages = 0;

	(void)state;
	SEND(NULL, &r, EC2("RunInstances"), "ImageId", AMI, "InstanceType", TYPE, "MinCount", "12",
	     "MaxCount", "12", "ClientToken", "tok-1", "TagSpecification.1.ResourceType",
	     "instance", "TagSpecification.1.Tag.1.Key", "gpucluster:cluster",
	     "TagSpecification.1.Tag.1.Value", "blue", "TagSpecification.1.Tag.2.Key", "Name",
	     "TagSpecification.1.Tag.2.Value", "node");
	assert_int_equal(r.status, 200);
	assert_int_equal(count_in(&r, "instanceId"), 12);
	assert_string_equal(text(&r, "name"), "pending");
	assert_string_equal(text(&r, "availabilityZone"), "us-east-1a");
	assert_string_equal(text(&r, "ownerId"), sim.cfg.aws_account);
	assert_true(strncmp(text(&r, "reservationId"), "r-", 2) == 0);
	reply_release(&r);

	/* an unrelated instance that the tag filter must leave out */
	SEND(NULL, &r, EC2("RunInstances"), "ImageId", AMI, "InstanceType", TYPE, "MinCount", "1",
	     "MaxCount", "1", "TagSpecification.1.ResourceType", "instance",
	     "TagSpecification.1.Tag.1.Key", "gpucluster:cluster", "TagSpecification.1.Tag.1.Value",
	     "green");
	assert_int_equal(r.status, 200);
	reply_release(&r);

	token[0] = '\0';
	do {
		if (token[0])
			SEND(NULL, &r, EC2("DescribeInstances"), "Filter.1.Name",
			     "tag:gpucluster:cluster", "Filter.1.Value.1", "blue", "MaxResults",
			     "5", "NextToken", token);
		else
			SEND(NULL, &r, EC2("DescribeInstances"), "Filter.1.Name",
			     "tag:gpucluster:cluster", "Filter.1.Value.1", "blue", "MaxResults",
			     "5");
		assert_int_equal(r.status, 200);
		size_t n = count_in(&r, "instanceId");
		assert_true(n <= 5);
		xmlNodePtr root = xmlDocGetRootElement(r.doc);
		/* collect the ids of this page */
		{
			xmlNodePtr set = find(root, "reservationSet");
			for (xmlNodePtr res = set->children; res; res = res->next) {
				xmlNodePtr inst = find(res->children, "instancesSet");
				for (xmlNodePtr i = inst->children; i; i = i->next) {
					xmlNodePtr idn = find(i->children, "instanceId");
					xmlChar *t = xmlNodeGetContent(idn);
					assert_true(seen < 12);
					snprintf(ids[seen++], sizeof(ids[0]), "%s", (char *)t);
					xmlFree(t);
				}
			}
		}
		snprintf(token, sizeof(token), "%s", text(&r, "nextToken"));
		pages++;
		/* an instance launched between pages does not disturb the listing */
		if (pages == 1) {
			struct reply x;
			SEND(NULL, &x, EC2("RunInstances"), "ImageId", AMI, "InstanceType", TYPE,
			     "MinCount", "1", "MaxCount", "1");
			reply_release(&x);
		}
		reply_release(&r);
	} while (token[0]);
	assert_int_equal(pages, 3);
	assert_int_equal(seen, 12);
	for (size_t i = 0; i < seen; i++)
		for (size_t k = 0; k < i; k++)
			assert_string_not_equal(ids[i], ids[k]);

	/* a forged token */
	SEND(NULL, &r, EC2("DescribeInstances"), "MaxResults", "5", "NextToken", "sim1i7.zzzz");
	assert_string_equal(r.code, "InvalidParameterValue");
	reply_release(&r);

	/* running after pending-ms */
	advance_ms(1600);
	SEND(NULL, &r, EC2("DescribeInstances"), "InstanceId.1", ids[0]);
	assert_string_equal(text(&r, "name"), "running");
	assert_string_equal(text(&r, "code"), "16");
	assert_true(strncmp(text(&r, "ipAddress"), "127.", 4) == 0);
	reply_release(&r);

	SEND(NULL, &r, EC2("DescribeInstances"), "Filter.1.Name", "instance-state-name",
	     "Filter.1.Value.1", "running", "Filter.2.Name", "tag:gpucluster:cluster",
	     "Filter.2.Value.1", "bl*");
	assert_int_equal(count_in(&r, "instanceId"), 12);
	reply_release(&r);

	SEND(NULL, &r, EC2("TerminateInstances"), "InstanceId.1", ids[0], "InstanceId.2", ids[1]);
	assert_int_equal(r.status, 200);
	assert_int_equal(count_in(&r, "instanceId"), 2);
	assert_string_equal(text(&r, "name"), "shutting-down");
	{
		xmlNodePtr prev = find(xmlDocGetRootElement(r.doc), "previousState");
		xmlChar *t = xmlNodeGetContent(find(prev->children, "name"));
		assert_string_equal((char *)t, "running");
		xmlFree(t);
	}
	reply_release(&r);

	advance_ms(1100);
	SEND(NULL, &r, EC2("DescribeInstances"), "InstanceId.1", ids[0]);
	assert_string_equal(text(&r, "name"), "terminated");
	assert_string_equal(text(&r, "code"), "48");
	reply_release(&r);

	/* terminated instances are listed until terminated-visible-ms, then forgotten */
	advance_ms(3600001);
	SEND(NULL, &r, EC2("DescribeInstances"), "InstanceId.1", ids[0]);
	assert_string_equal(r.code, "InvalidInstanceID.NotFound");
	assert_int_equal(r.status, 400);
	reply_release(&r);

	/* unknown in one id fails the whole call */
	SEND(NULL, &r, EC2("TerminateInstances"), "InstanceId.1", ids[2], "InstanceId.2",
	     "i-0123456789abcdef0");
	assert_string_equal(r.code, "InvalidInstanceID.NotFound");
	reply_release(&r);
	SEND(NULL, &r, EC2("DescribeInstances"), "InstanceId.1", ids[2]);
	assert_string_equal(text(&r, "name"), "running");
	reply_release(&r);

	SEND(NULL, &r, EC2("DescribeInstances"), "InstanceId.1", "i-xyz");
	assert_string_equal(r.code, "InvalidInstanceID.Malformed");
	reply_release(&r);

	/* other regions do not see these instances */
	{
		struct call west = { .region = "us-west-2" };
		SEND(&west, &r, EC2("DescribeInstances"));
		assert_int_equal(r.status, 200);
		assert_int_equal(count_in(&r, "instanceId"), 0);
		reply_release(&r);
	}
}

static void test_client_token(void **state)
{
	struct reply r;
	char id[32], res[32];

	(void)state;
	SEND(NULL, &r, EC2("RunInstances"), "ImageId", AMI, "InstanceType", TYPE, "MinCount", "1",
	     "MaxCount", "1", "ClientToken", "same-token");
	assert_int_equal(r.status, 200);
	snprintf(id, sizeof(id), "%s", text(&r, "instanceId"));
	snprintf(res, sizeof(res), "%s", text(&r, "reservationId"));
	reply_release(&r);

	/* replay: the same instance, nothing new launched */
	SEND(NULL, &r, EC2("RunInstances"), "MaxCount", "1", "MinCount", "1", "InstanceType", TYPE,
	     "ImageId", AMI, "ClientToken", "same-token");
	assert_int_equal(r.status, 200);
	assert_string_equal(text(&r, "instanceId"), id);
	assert_string_equal(text(&r, "reservationId"), res);
	reply_release(&r);
	SEND(NULL, &r, EC2("DescribeInstances"), "Filter.1.Name", "client-token",
	     "Filter.1.Value.1", "same-token");
	assert_int_equal(count_in(&r, "instanceId"), 1);
	reply_release(&r);

	/* the same token with other parameters */
	SEND(NULL, &r, EC2("RunInstances"), "ImageId", AMI, "InstanceType", "g5.2xlarge",
	     "MinCount", "1", "MaxCount", "1", "ClientToken", "same-token");
	assert_int_equal(r.status, 400);
	assert_string_equal(r.code, "IdempotentParameterMismatch");
	reply_release(&r);

	/* too long */
	SEND(NULL, &r, EC2("RunInstances"), "ImageId", AMI, "InstanceType", TYPE, "MinCount", "1",
	     "MaxCount", "1", "ClientToken",
	     "0123456789012345678901234567890123456789012345678901234567890123456789");
	assert_string_equal(r.code, "InvalidParameterValue");
	reply_release(&r);
}

static void test_auth(void **state)
{
	struct reply r;
	struct call wrong = { .secret = "not-the-secret" };
	struct call unknown = { .akid = "AKIANOBODY" };
	struct call old = { .skew_s = -16 * 60 };
	struct call fine_skew = { .skew_s = 14 * 60 };
	struct call none = { .unsigned_req = true };
	struct call bad_region = { .region = "mars-north-1" };
	struct call portless = { .host = "127.0.0.1:8000", .sign_as = "127.0.0.1" };

	(void)state;
	SEND(&wrong, &r, EC2("DescribeRegions"));
	assert_int_equal(r.status, 401);
	assert_string_equal(r.code, "AuthFailure");
	reply_release(&r);

	SEND(&unknown, &r, EC2("DescribeRegions"));
	assert_int_equal(r.status, 401);
	assert_string_equal(r.code, "AuthFailure");
	reply_release(&r);

	SEND(&old, &r, EC2("DescribeRegions"));
	assert_int_equal(r.status, 400);
	assert_string_equal(r.code, "RequestExpired");
	reply_release(&r);

	SEND(&fine_skew, &r, EC2("DescribeRegions"));
	assert_int_equal(r.status, 200);
	assert_int_equal(count_in(&r, "regionName"), 3);
	reply_release(&r);

	SEND(&none, &r, EC2("DescribeRegions"));
	assert_int_equal(r.status, 401);
	assert_string_equal(r.code, "MissingAuthenticationToken");
	reply_release(&r);

	SEND(&bad_region, &r, EC2("DescribeRegions"));
	assert_int_equal(r.status, 403);
	reply_release(&r);

	/* signed for the host without the port: accepted */
	SEND(&portless, &r, EC2("DescribeRegions"));
	assert_int_equal(r.status, 200);
	reply_release(&r);
}

static void test_strictness(void **state)
{
	struct reply r;

	(void)state;
	SEND(NULL, &r, EC2("DescribeInstances"), "InstanceIds.1", "i-0123456789abcdef0");
	assert_string_equal(r.code, "UnknownParameter");
	reply_release(&r);

	SEND(NULL, &r, EC2("DescribeInstances"), "MaxResults", "4");
	assert_string_equal(r.code, "InvalidParameterValue");
	reply_release(&r);
	SEND(NULL, &r, EC2("DescribeInstances"), "MaxResults", "five");
	assert_string_equal(r.code, "InvalidParameterValue");
	reply_release(&r);
	SEND(NULL, &r, EC2("DescribeInstances"), "MaxResults", "5", "InstanceId.1",
	     "i-0123456789abcdef0");
	assert_string_equal(r.code, "InvalidParameterCombination");
	reply_release(&r);
	SEND(NULL, &r, EC2("DescribeInstances"), "Filter.1.Name", "instance-state-name",
	     "Filter.1.Value.1", "sleeping");
	assert_string_equal(r.code, "InvalidParameterValue");
	reply_release(&r);
	SEND(NULL, &r, EC2("DescribeInstances"), "Filter.1.Name", "colour", "Filter.1.Value.1",
	     "red");
	assert_string_equal(r.code, "InvalidParameterValue");
	assert_non_null(strstr(text(&r, "Message"), "colour"));
	reply_release(&r);

	SEND(NULL, &r, EC2("RunInstances"), "ImageId", AMI, "InstanceType", TYPE, "MinCount", "1");
	assert_string_equal(r.code, "MissingParameter");
	reply_release(&r);
	SEND(NULL, &r, EC2("RunInstances"), "ImageId", AMI, "InstanceType", TYPE, "MinCount", "x",
	     "MaxCount", "1");
	assert_string_equal(r.code, "InvalidParameterValue");
	reply_release(&r);
	SEND(NULL, &r, EC2("RunInstances"), "ImageId", "ami-0123456789abcdef0", "InstanceType",
	     TYPE, "MinCount", "1", "MaxCount", "1");
	assert_string_equal(r.code, "InvalidAMIID.NotFound");
	reply_release(&r);
	SEND(NULL, &r, EC2("RunInstances"), "ImageId", "banana", "InstanceType", TYPE, "MinCount",
	     "1", "MaxCount", "1");
	assert_string_equal(r.code, "InvalidAMIID.Malformed");
	reply_release(&r);
	SEND(NULL, &r, EC2("RunInstances"), "ImageId", AMI, "InstanceType", "g99.huge", "MinCount",
	     "1", "MaxCount", "1");
	assert_string_equal(r.code, "InvalidParameterValue");
	reply_release(&r);
	SEND(NULL, &r, EC2("RunInstances"), "ImageId", AMI, "InstanceType", TYPE, "MinCount", "1",
	     "MaxCount", "1", "Placement.AvailabilityZone", "us-west-2a");
	assert_string_equal(r.code, "InvalidParameterValue");
	reply_release(&r);
	SEND(NULL, &r, EC2("RunInstances"), "ImageId", AMI, "InstanceType", TYPE, "MinCount", "1",
	     "MaxCount", "1", "UserData", "!!!not base64");
	assert_string_equal(r.code, "InvalidParameterValue");
	reply_release(&r);
	SEND(NULL, &r, EC2("RunInstances"), "ImageId", AMI, "InstanceType", TYPE, "MinCount", "1",
	     "MaxCount", "1", "KeyName", "nope");
	assert_string_equal(r.code, "InvalidKeyPair.NotFound");
	reply_release(&r);
	SEND(NULL, &r, EC2("RunInstances"), "ImageId", AMI, "InstanceType", TYPE, "MinCount", "1",
	     "MaxCount", "1", "SecurityGroupId.1", "sg-0123456789abcdef0");
	assert_string_equal(r.code, "InvalidGroup.NotFound");
	reply_release(&r);
	SEND(NULL, &r, EC2("RunInstances"), "ImageId", AMI, "InstanceType", TYPE, "MinCount", "1",
	     "MaxCount", "1", "InstanceMarketOptions.MarketType", "spot",
	     "InstanceMarketOptions.SpotOptions.SpotInstanceType", "persistent");
	assert_string_equal(r.code, "InvalidParameterCombination");
	reply_release(&r);
	SEND(NULL, &r, EC2("RunInstances"), "ImageId", AMI, "InstanceType", TYPE, "MinCount", "1",
	     "MaxCount", "1", "DryRun", "true");
	assert_int_equal(r.status, 412);
	assert_string_equal(r.code, "DryRunOperation");
	reply_release(&r);
	SEND(NULL, &r, EC2("RunInstances"), "ImageId", AMI, "InstanceType", TYPE, "MinCount", "1",
	     "MaxCount", "1", "DryRun", "maybe");
	assert_string_equal(r.code, "InvalidParameterValue");
	reply_release(&r);

	SEND(NULL, &r, "Action", "DescribeInstances", "Version", "2014-01-01");
	assert_string_equal(r.code, "NoSuchVersion");
	reply_release(&r);
	SEND(NULL, &r, EC2("LaunchRockets"));
	assert_string_equal(r.code, "InvalidAction");
	reply_release(&r);

	/* a spot launch shows its life cycle */
	SEND(NULL, &r, EC2("RunInstances"), "ImageId", AMI, "InstanceType", TYPE, "MinCount", "1",
	     "MaxCount", "1", "InstanceMarketOptions.MarketType", "spot", "UserData",
	     "I2Nsb3VkLWNvbmZpZwo=", "MetadataOptions.HttpTokens", "required",
	     "BlockDeviceMapping.1.DeviceName", "/dev/sda1", "BlockDeviceMapping.1.Ebs.VolumeSize",
	     "200", "Placement.AvailabilityZone", "us-east-1c");
	assert_int_equal(r.status, 200);
	assert_string_equal(text(&r, "instanceLifecycle"), "spot");
	assert_string_equal(text(&r, "availabilityZone"), "us-east-1c");
	reply_release(&r);
	SEND(NULL, &r, EC2("DescribeInstances"), "Filter.1.Name", "instance-lifecycle",
	     "Filter.1.Value.1", "spot");
	assert_int_equal(count_in(&r, "instanceId"), 1);
	reply_release(&r);
}

static void test_faults(void **state)
{
	struct reply r;
	struct gc_error err;

	(void)state;
	gc_error_init(&err);
	assert_int_equal(sim_faults_add(sim.faults, "aws:DescribeInstances:throttle,times=1", &err),
			 0);
	SEND(NULL, &r, EC2("DescribeInstances"));
	assert_int_equal(r.status, 503);
	assert_string_equal(r.code, "RequestLimitExceeded");
	reply_release(&r);
	SEND(NULL, &r, EC2("DescribeInstances"));
	assert_int_equal(r.status, 200);
	reply_release(&r);

	assert_int_equal(
		sim_faults_add(sim.faults, "aws:RunInstances:capacity,zone=us-east-1b", &err), 0);
	SEND(NULL, &r, EC2("RunInstances"), "ImageId", AMI, "InstanceType", TYPE, "MinCount", "1",
	     "MaxCount", "1", "Placement.AvailabilityZone", "us-east-1b");
	assert_int_equal(r.status, 500);
	assert_string_equal(r.code, "InsufficientInstanceCapacity");
	reply_release(&r);
	SEND(NULL, &r, EC2("RunInstances"), "ImageId", AMI, "InstanceType", TYPE, "MinCount", "1",
	     "MaxCount", "1", "Placement.AvailabilityZone", "us-east-1c");
	assert_int_equal(r.status, 200);
	reply_release(&r);

	/* 5xx after the action: the launch happened although the caller saw an error */
	sim_faults_clear(sim.faults);
	assert_int_equal(sim_faults_add(sim.faults, "aws:RunInstances:5xx,after=1,times=1", &err),
			 0);
	SEND(NULL, &r, EC2("RunInstances"), "ImageId", AMI, "InstanceType", TYPE, "MinCount", "1",
	     "MaxCount", "1", "ClientToken", "after-5xx");
	assert_int_equal(r.status, 500);
	assert_string_equal(r.code, "InternalError");
	reply_release(&r);
	SEND(NULL, &r, EC2("DescribeInstances"), "Filter.1.Name", "client-token",
	     "Filter.1.Value.1", "after-5xx");
	assert_int_equal(count_in(&r, "instanceId"), 1);
	reply_release(&r);

	assert_int_equal(sim_faults_add(sim.faults, "aws:DescribeRegions:drop,times=1", &err), 0);
	SEND(NULL, &r, EC2("DescribeRegions"));
	assert_true(r.drop);
	reply_release(&r);
	sim_faults_clear(sim.faults);
}

static void test_keys_and_groups(void **state)
{
	struct gc_buf b64 = GC_BUF_INIT(4096), pub = GC_BUF_INIT(4096);
	struct gc_keypair kp;
	struct reply r;
	char kid[64], sg[64];

	(void)state;
	assert_int_equal(gc_keypair_generate(&kp, "test@example", NULL), 0);
	assert_int_equal(gc_keypair_public_line(&pub, &kp), 0);
	gc_keypair_release(&kp);
	assert_int_equal(gc_base64_encode(&b64, pub.data, pub.len), 0);
	gc_buf_release(&pub);
	SEND(NULL, &r, EC2("ImportKeyPair"), "KeyName", "k1", "PublicKeyMaterial", b64.data,
	     "TagSpecification.1.ResourceType", "key-pair", "TagSpecification.1.Tag.1.Key", "owner",
	     "TagSpecification.1.Tag.1.Value", "me");
	assert_int_equal(r.status, 200);
	assert_string_equal(text(&r, "keyName"), "k1");
	snprintf(kid, sizeof(kid), "%s", text(&r, "keyPairId"));
	assert_true(strncmp(kid, "key-", 4) == 0);
	reply_release(&r);

	SEND(NULL, &r, EC2("ImportKeyPair"), "KeyName", "k1", "PublicKeyMaterial", b64.data);
	assert_string_equal(r.code, "InvalidKeyPair.Duplicate");
	reply_release(&r);
	SEND(NULL, &r, EC2("ImportKeyPair"), "KeyName", "k2", "PublicKeyMaterial", "bm90IGEga2V5");
	assert_string_equal(r.code, "InvalidKey.Format");
	reply_release(&r);

	SEND(NULL, &r, EC2("DescribeKeyPairs"), "Filter.1.Name", "tag:owner", "Filter.1.Value.1",
	     "me");
	assert_int_equal(count_in(&r, "keyPairId"), 1);
	reply_release(&r);
	SEND(NULL, &r, EC2("DescribeKeyPairs"), "KeyName.1", "missing");
	assert_string_equal(r.code, "InvalidKeyPair.NotFound");
	reply_release(&r);

	SEND(NULL, &r, EC2("CreateSecurityGroup"), "GroupName", "g1", "GroupDescription", "test");
	assert_int_equal(r.status, 200);
	snprintf(sg, sizeof(sg), "%s", text(&r, "groupId"));
	reply_release(&r);
	SEND(NULL, &r, EC2("CreateSecurityGroup"), "GroupName", "g1", "GroupDescription", "test");
	assert_string_equal(r.code, "InvalidGroup.Duplicate");
	reply_release(&r);
	SEND(NULL, &r, EC2("CreateSecurityGroup"), "GroupName", "g2");
	assert_string_equal(r.code, "MissingParameter");
	reply_release(&r);

	SEND(NULL, &r, EC2("AuthorizeSecurityGroupIngress"), "GroupId", sg,
	     "IpPermissions.1.IpProtocol", "tcp", "IpPermissions.1.FromPort", "22",
	     "IpPermissions.1.ToPort", "22", "IpPermissions.1.IpRanges.1.CidrIp", "0.0.0.0/0",
	     "IpPermissions.1.IpRanges.1.Description", "ssh");
	assert_int_equal(r.status, 200);
	reply_release(&r);
	SEND(NULL, &r, EC2("AuthorizeSecurityGroupIngress"), "GroupId", sg,
	     "IpPermissions.1.IpProtocol", "tcp", "IpPermissions.1.FromPort", "22",
	     "IpPermissions.1.ToPort", "22", "IpPermissions.1.IpRanges.1.CidrIp", "0.0.0.0/0");
	assert_string_equal(r.code, "InvalidPermission.Duplicate");
	reply_release(&r);
	SEND(NULL, &r, EC2("DescribeSecurityGroups"), "GroupId.1", sg);
	assert_string_equal(text(&r, "groupName"), "g1");
	assert_string_equal(text(&r, "fromPort"), "22");
	reply_release(&r);

	/* a security group as the source (its members): IpPermissions.N.Groups.M.* */
	SEND(NULL, &r, EC2("AuthorizeSecurityGroupIngress"), "GroupId", sg,
	     "IpPermissions.1.IpProtocol", "-1", "IpPermissions.1.Groups.1.GroupId", sg,
	     "IpPermissions.1.Groups.1.UserId", sim.cfg.aws_account,
	     "IpPermissions.1.Groups.1.Description", "members");
	assert_int_equal(r.status, 200);
	{
		xmlNodePtr ref = find(xmlDocGetRootElement(r.doc), "referencedGroupInfo");
		xmlChar *t = xmlNodeGetContent(find(ref->children, "groupId"));
		assert_string_equal((const char *)t, sg);
		xmlFree(t);
	}
	assert_int_equal(count_in(&r, "cidrIpv4"), 0);
	reply_release(&r);
	sim_world_lock(sim.world);
	{
		struct sim_secgroup *g = sim_world_sg(sim.world, SIM_AWS, "us-east-1", sg);
		assert_int_equal(g->n_rules, 2);
		assert_string_equal(g->rules[1].protocol, "-1");
		assert_string_equal(g->rules[1].source_group, sg);
		assert_string_equal(g->rules[1].cidr, "");
		assert_string_equal(g->rules[1].description, "members");
	}
	sim_world_unlock(sim.world);
	/* the same source again, now by the group's name: a duplicate */
	SEND(NULL, &r, EC2("AuthorizeSecurityGroupIngress"), "GroupId", sg,
	     "IpPermissions.1.IpProtocol", "-1", "IpPermissions.1.Groups.1.GroupName", "g1");
	assert_string_equal(r.code, "InvalidPermission.Duplicate");
	reply_release(&r);
	/* a group that does not exist, or of another account, is refused as EC2 does */
	SEND(NULL, &r, EC2("AuthorizeSecurityGroupIngress"), "GroupId", sg,
	     "IpPermissions.1.IpProtocol", "tcp", "IpPermissions.1.FromPort", "80",
	     "IpPermissions.1.ToPort", "80", "IpPermissions.1.Groups.1.GroupId",
	     "sg-0000000000000dead");
	assert_int_equal(r.status, 400);
	assert_string_equal(r.code, "InvalidGroup.NotFound");
	reply_release(&r);
	SEND(NULL, &r, EC2("AuthorizeSecurityGroupIngress"), "GroupId", sg,
	     "IpPermissions.1.IpProtocol", "-1", "IpPermissions.1.Groups.1.GroupId", sg,
	     "IpPermissions.1.Groups.1.UserId", "999999999999");
	assert_string_equal(r.code, "InvalidGroup.NotFound");
	reply_release(&r);
	SEND(NULL, &r, EC2("AuthorizeSecurityGroupIngress"), "GroupId", sg,
	     "IpPermissions.1.IpProtocol", "-1", "IpPermissions.1.Groups.1.Description", "who");
	assert_string_equal(r.code, "MissingParameter");
	reply_release(&r);
	/* an address range and a group in one call: all or nothing */
	SEND(NULL, &r, EC2("AuthorizeSecurityGroupIngress"), "GroupId", sg,
	     "IpPermissions.1.IpProtocol", "tcp", "IpPermissions.1.FromPort", "8080",
	     "IpPermissions.1.ToPort", "8080", "IpPermissions.1.IpRanges.1.CidrIp", "10.0.0.0/8",
	     "IpPermissions.2.IpProtocol", "udp", "IpPermissions.2.FromPort", "1",
	     "IpPermissions.2.ToPort", "2", "IpPermissions.2.Groups.1.GroupId",
	     "sg-0000000000000dead");
	assert_string_equal(r.code, "InvalidGroup.NotFound");
	reply_release(&r);
	sim_world_lock(sim.world);
	assert_int_equal(sim_world_sg(sim.world, SIM_AWS, "us-east-1", sg)->n_rules, 2);
	sim_world_unlock(sim.world);
	/* DescribeSecurityGroups shows the group under groups, with no address range */
	SEND(NULL, &r, EC2("DescribeSecurityGroups"), "GroupId.1", sg);
	assert_int_equal(count_in(&r, "cidrIp"), 2); /* the SSH rule and the default egress */
	{
		xmlNodePtr perms = find(xmlDocGetRootElement(r.doc), "ipPermissions");
		size_t members = 0;

		for (xmlNodePtr it = perms->children; it; it = it->next) {
			xmlNodePtr groups, gid;
			xmlChar *proto, *t;

			if (it->type != XML_ELEMENT_NODE)
				continue;
			groups = find(it->children, "groups");
			if (!(gid = find_any(groups->children, "groupId")))
				continue;
			proto = xmlNodeGetContent(find(it->children, "ipProtocol"));
			t = xmlNodeGetContent(gid);
			assert_string_equal((const char *)proto, "-1");
			assert_string_equal((const char *)t, sg);
			assert_null(find_any(find(it->children, "ipRanges")->children, "cidrIp"));
			assert_null(find_any(it->children, "fromPort"));
			xmlFree(proto);
			xmlFree(t);
			members++;
		}
		assert_int_equal(members, 1);
	}
	reply_release(&r);

	/* an instance using both: the group cannot go while it lives */
	SEND(NULL, &r, EC2("RunInstances"), "ImageId", AMI, "InstanceType", TYPE, "MinCount", "1",
	     "MaxCount", "1", "KeyName", "k1", "SecurityGroupId.1", sg);
	assert_int_equal(r.status, 200);
	assert_string_equal(text(&r, "keyName"), "k1");
	assert_string_equal(text(&r, "groupId"), sg);
	reply_release(&r);
	SEND(NULL, &r, EC2("DeleteSecurityGroup"), "GroupId", sg);
	assert_string_equal(r.code, "DependencyViolation");
	reply_release(&r);

	SEND(NULL, &r, EC2("DeleteKeyPair"), "KeyName", "k1");
	assert_int_equal(r.status, 200);
	reply_release(&r);
	/* deleting again by name is not an error */
	SEND(NULL, &r, EC2("DeleteKeyPair"), "KeyName", "k1");
	assert_int_equal(r.status, 200);
	reply_release(&r);
	SEND(NULL, &r, EC2("DescribeKeyPairs"));
	assert_int_equal(count_in(&r, "keyPairId"), 0);
	reply_release(&r);
	gc_buf_release(&b64);
}

/*
 * AuthorizeSecurityGroupEgress takes its rules as IpPermissions only: the API reference
 * documents the top-level CidrIp, FromPort, IpProtocol, ToPort, SourceSecurityGroupName and
 * SourceSecurityGroupOwnerId as "Not supported. Use IP permissions instead", and EC2 answers
 * them UnknownParameter (docs/sim.md, "Security group rules"). Nothing is added.
 */
static void test_egress_ip_permissions_only(void **state)
{
	static const char *const flat[][2] = {
		{ "CidrIp", "10.0.0.0/8" },
		{ "FromPort", "22" },
		{ "IpProtocol", "tcp" },
		{ "ToPort", "22" },
		{ "SourceSecurityGroupName", "eg1" },
		{ "SourceSecurityGroupOwnerId", "123456789012" },
	};
	struct reply r;
	char sg[64];

	(void)state;
	SEND(NULL, &r, EC2("CreateSecurityGroup"), "GroupName", "eg1", "GroupDescription",
	     "egress");
	assert_int_equal(r.status, 200);
	snprintf(sg, sizeof(sg), "%s", text(&r, "groupId"));
	reply_release(&r);
	for (size_t i = 0; i < sizeof(flat) / sizeof(flat[0]); i++) {
		SEND(NULL, &r, EC2("AuthorizeSecurityGroupEgress"), "GroupId", sg, flat[i][0],
		     flat[i][1]);
		assert_int_equal(r.status, 400);
		assert_string_equal(r.code, "UnknownParameter");
		assert_non_null(strstr(text(&r, "Message"), flat[i][0]));
		reply_release(&r);
	}
	/* the whole legacy form, as an old client sends it; and beside IpPermissions */
	SEND(NULL, &r, EC2("AuthorizeSecurityGroupEgress"), "GroupId", sg, "CidrIp", "10.0.0.0/8",
	     "FromPort", "-1", "IpProtocol", "-1", "ToPort", "-1");
	assert_string_equal(r.code, "UnknownParameter");
	reply_release(&r);
	SEND(NULL, &r, EC2("AuthorizeSecurityGroupEgress"), "GroupId", sg,
	     "IpPermissions.1.IpProtocol", "-1", "IpPermissions.1.IpRanges.1.CidrIp", "10.0.0.0/8",
	     "CidrIp", "10.0.0.0/8");
	assert_string_equal(r.code, "UnknownParameter");
	reply_release(&r);
	/* GroupName is the ingress actions' (default VPC) only */
	SEND(NULL, &r, EC2("AuthorizeSecurityGroupEgress"), "GroupName", "eg1",
	     "IpPermissions.1.IpProtocol", "-1", "IpPermissions.1.IpRanges.1.CidrIp", "10.0.0.0/8");
	assert_string_equal(r.code, "UnknownParameter");
	reply_release(&r);
	sim_world_lock(sim.world);
	assert_int_equal(sim_world_sg(sim.world, SIM_AWS, "us-east-1", sg)->n_egress, 0);
	sim_world_unlock(sim.world);
	/* what the driver sends (providers/aws/ec2-ops.c, authorize_egress) is taken */
	SEND(NULL, &r, EC2("AuthorizeSecurityGroupEgress"), "GroupId", sg,
	     "IpPermissions.1.IpProtocol", "-1", "IpPermissions.1.Groups.1.GroupId", sg,
	     "IpPermissions.1.Groups.1.Description", "gpucluster members");
	assert_int_equal(r.status, 200);
	assert_string_equal(text(&r, "isEgress"), "true");
	reply_release(&r);
	sim_world_lock(sim.world);
	assert_int_equal(sim_world_sg(sim.world, SIM_AWS, "us-east-1", sg)->n_egress, 1);
	sim_world_unlock(sim.world);
	/* the ingress action keeps the flat form (EC2-Classic's and the default VPC's) */
	SEND(NULL, &r, EC2("AuthorizeSecurityGroupIngress"), "GroupId", sg, "IpProtocol", "tcp",
	     "FromPort", "22", "ToPort", "22", "CidrIp", "10.0.0.0/8");
	assert_int_equal(r.status, 200);
	reply_release(&r);
}

/*
 * An instance has the EFA devices it was launched with: one launched with an EFA
 * interface (NetworkInterface.1.InterfaceType efa) shows it in DescribeInstances and its
 * node gets one RDMA device; one of the same EFA type launched without gets none
 * (https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/efa.html: an EFA is a network
 * device attached to the instance).
 */
static void test_efa_devices_of_launch(void **state)
{
	struct reply r;
	char with[64], without[64];

	(void)state;
	SEND(NULL, &r, EC2("RunInstances"), "ImageId", AMI, "InstanceType", "p4d.24xlarge",
	     "MinCount", "1", "MaxCount", "1", "NetworkInterface.1.DeviceIndex", "0",
	     "NetworkInterface.1.InterfaceType", "efa");
	assert_int_equal(r.status, 200);
	snprintf(with, sizeof(with), "%s", text(&r, "instanceId"));
	assert_string_equal(text(&r, "interfaceType"), "efa");
	reply_release(&r);
	SEND(NULL, &r, EC2("RunInstances"), "ImageId", AMI, "InstanceType", "p4d.24xlarge",
	     "MinCount", "1", "MaxCount", "1");
	assert_int_equal(r.status, 200);
	snprintf(without, sizeof(without), "%s", text(&r, "instanceId"));
	assert_string_equal(text(&r, "interfaceType"), "interface");
	reply_release(&r);
	SEND(NULL, &r, EC2("DescribeInstances"), "InstanceId.1", with);
	assert_string_equal(text(&r, "interfaceType"), "efa");
	reply_release(&r);
	sim_world_lock(sim.world);
	assert_int_equal(sim_world_instance(sim.world, SIM_AWS, with)->rdma_devices, 1);
	assert_int_equal(sim_world_instance(sim.world, SIM_AWS, without)->rdma_devices, 0);
	sim_world_unlock(sim.world);
}

static void test_catalogue(void **state)
{
	struct reply r;

	(void)state;
	SEND(NULL, &r, EC2("DescribeImages"), "Owner.1", "amazon", "Filter.1.Name", "name",
	     "Filter.1.Value.1", "Deep Learning Base OSS Nvidia Driver GPU AMI (Ubuntu 22.04)*");
	assert_int_equal(r.status, 200);
	assert_int_equal(count_in(&r, "imageId"), 2);
	reply_release(&r);

	SEND(NULL, &r, EC2("DescribeInstanceTypes"), "InstanceType.1", "p4d.24xlarge");
	assert_string_equal(text(&r, "totalGpuMemoryInMiB"), "327680");
	assert_string_equal(text(&r, "count"), "8");
	reply_release(&r);
	SEND(NULL, &r, EC2("DescribeInstanceTypes"), "Filter.1.Name", "instance-type",
	     "Filter.1.Value.1", "g5.*");
	assert_int_equal(count_in(&r, "instanceType"), 4);
	reply_release(&r);
	SEND(NULL, &r, EC2("DescribeInstanceTypes"), "InstanceType.1", "g0.nano");
	assert_string_equal(r.code, "InvalidInstanceType");
	reply_release(&r);

	SEND(NULL, &r, EC2("DescribeSpotPriceHistory"), "InstanceType.1", TYPE,
	     "ProductDescription.1", "Linux/UNIX", "AvailabilityZone", "us-east-1a");
	assert_int_equal(count_in(&r, "spotPrice"), 1);
	reply_release(&r);

	SEND(NULL, &r, EC2("DescribeAvailabilityZones"));
	assert_int_equal(count_in(&r, "zoneName"), 5);
	reply_release(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_run_describe_pages_terminate, setup, teardown),
		cmocka_unit_test_setup_teardown(test_client_token, setup, teardown),
		cmocka_unit_test_setup_teardown(test_auth, setup, teardown),
		cmocka_unit_test_setup_teardown(test_strictness, setup, teardown),
		cmocka_unit_test_setup_teardown(test_faults, setup, teardown),
		cmocka_unit_test_setup_teardown(test_keys_and_groups, setup, teardown),
		cmocka_unit_test_setup_teardown(test_egress_ip_permissions_only, setup, teardown),
		cmocka_unit_test_setup_teardown(test_efa_devices_of_launch, setup, teardown),
		cmocka_unit_test_setup_teardown(test_catalogue, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
