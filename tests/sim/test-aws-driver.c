/*
 * test-aws-driver.c: what only the AWS EC2 driver (providers/aws) does, through the
 * provider wrappers, against the emulator served in-process on 127.0.0.1 (its EC2 and
 * Price List frontends behind libmicrohttpd, a world on the fake clock), and against a
 * small fake server for answers no cloud gives. What every driver does is in the
 * conformance suite (driver-conformance.c, sim.driver.aws), with EC2's description in
 * driver-aws.h.
 *
 * Covered: terminated instances listed for an hour, and asked for by state; a spot
 * launch with its TTL timer (systemd, in the user-data) and every RunInstances parameter
 * on the wire (tags on instance and volume, IMDSv2, the root disk); a driver opened
 * without our token buckets; XML answers of the wrong shape, an error document, an
 * endless body; the Price List frontend called directly; filter values with wildcards.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <jansson.h>

#include "core/alloc.h"
#include "core/keygen.h"
#include "core/provider.h"
#include "core/retry.h"
#include "core/str.h"
#include "driver-aws.h"
#include "driver-fixture.h"
#include "providers/aws/ec2.h"
#include "providers/aws/sigv4.h"
#include "sim/catalog.h"
#include "sim/sim.h"

static int test_setup(void **state)
{
	return drv_setup(state, &drv_aws);
}

/* ---- discover -------------------------------------------------------------------------- */

static void test_discover_terminated(void **state)
{
	struct gc_tag_filter mine[] = { { GC_TAG_CLUSTER, CLUSTER } };
	struct gc_discover_query q = { mine, 1, false };
	struct gc_create_request r = launch_req(3, "gc-term");
	struct gc_instance_list got, now;
	const char *ids[1];
	struct gc_error err;

	(void)state;
	gc_instance_list_init(&got);
	gc_instance_list_init(&now);
	gc_error_init(&err);
	launch_ok(&r, &got);
	advance_ms(2000);
	ids[0] = got.items[0].id;
	assert_int_equal(gc_provider_terminate(prov, ids, 1, &err), 0);
	advance_ms(1500);

	assert_int_equal(gc_provider_discover(prov, &q, &now, &err), 0);
	assert_int_equal(now.n, 2);
	for (size_t i = 0; i < now.n; i++) {
		assert_int_equal(now.items[i].state, GC_STATE_RUNNING);
		assert_string_equal(now.items[i].state_name, "running");
		assert_non_null(now.items[i].public_ip);
	}
	gc_instance_list_release(&now);

	q.include_terminated = true;
	assert_int_equal(gc_provider_discover(prov, &q, &now, &err), 0);
	assert_int_equal(now.n, 3);
	for (size_t i = 0; i < now.n; i++)
		if (!strcmp(now.items[i].id, ids[0]))
			assert_int_equal(now.items[i].state, GC_STATE_TERMINATED);
	gc_instance_list_release(&now);
	gc_instance_list_release(&got);
}

/* ---- create ------------------------------------------------------------------------------ */

static void test_create_spot_ttl(void **state)
{
	struct gc_keypair_request kr;
	struct gc_secgroup_request sr;
	const char *cidrs[] = { "203.0.113.7/32" };
	struct gc_create_request r = launch_req(2, "gc-spot-1");
	struct gc_instance_list got;
	struct gc_buf pub = GC_BUF_INIT(4096);
	struct gc_keypair kp;
	struct gc_error err;
	char *key_id = NULL, *sg_id = NULL;
	int64_t expires = (int64_t)time(NULL) + 3600;
	json_t *runs, *run;

	(void)state;
	gc_error_init(&err);
	gc_instance_list_init(&got);
	gc_keypair_init(&kp);
	assert_int_equal(gc_keypair_generate(&kp, "drv@test", NULL), 0);
	assert_int_equal(gc_keypair_public_line(&pub, &kp), 0);
	memset(&kr, 0, sizeof(kr));
	kr.name = "gpucluster-drv";
	kr.public_key_line = pub.data;
	kr.tags = base_tags;
	kr.n_tags = 1;
	assert_int_equal(gc_provider_import_keypair(prov, &kr, &key_id, &err), 0);
	memset(&sr, 0, sizeof(sr));
	sr.name = "gpucluster-drv";
	sr.description = "gpucluster drv";
	sr.ssh_port = 22;
	sr.allow_from = cidrs;
	sr.n_allow_from = 1;
	sr.tags = base_tags;
	sr.n_tags = 1;
	assert_int_equal(gc_provider_create_secgroup(prov, &sr, &sg_id, &err), 0);

	r.zone = "us-east-1b";
	r.spot = true;
	r.spot_max_price = 0.9;
	r.key_name = "gpucluster-drv";
	r.security_group_id = sg_id;
	r.expires_at = expires;
	launch_ok(&r, &got);
	assert_int_equal(got.n, 2);
	for (size_t i = 0; i < got.n; i++) {
		assert_true(got.items[i].spot);
		assert_string_equal(got.items[i].zone, "us-east-1b");
		assert_string_equal(got.items[i].client_token, "gc-spot-1");
		assert_string_equal(got.items[i].cluster, CLUSTER);
		assert_string_equal(gc_instance_tag(&got.items[i], "team"), "research");
	}

	/* what went on the wire: tags on instance and volume, the root disk, IMDSv2 */
	runs = logged("RunInstances");
	assert_int_equal(json_array_size(runs), 1);
	run = json_array_get(runs, 0);
	assert_string_equal(param(run, "MinCount"), "2");
	assert_string_equal(param(run, "MaxCount"), "2");
	assert_string_equal(param(run, "TagSpecification.1.ResourceType"), "instance");
	assert_string_equal(param(run, "TagSpecification.2.ResourceType"), "volume");
	assert_string_equal(param(run, "TagSpecification.2.Tag.1.Key"), GC_TAG_CLUSTER);
	assert_string_equal(param(run, "TagSpecification.2.Tag.4.Value"), "research");
	assert_string_equal(param(run, "InstanceMarketOptions.MarketType"), "spot");
	assert_string_equal(param(run, "InstanceMarketOptions.SpotOptions.SpotInstanceType"),
			    "one-time");
	assert_string_equal(
		param(run, "InstanceMarketOptions.SpotOptions.InstanceInterruptionBehavior"),
		"terminate");
	assert_string_equal(param(run, "InstanceMarketOptions.SpotOptions.MaxPrice"), "0.9");
	assert_string_equal(param(run, "MetadataOptions.HttpTokens"), "required");
	assert_string_equal(param(run, "MetadataOptions.HttpPutResponseHopLimit"), "2");
	assert_string_equal(param(run, "MetadataOptions.HttpEndpoint"), "enabled");
	assert_string_equal(param(run, "BlockDeviceMapping.1.DeviceName"), "/dev/sda1");
	assert_string_equal(param(run, "BlockDeviceMapping.1.Ebs.VolumeSize"), "200");
	assert_string_equal(param(run, "BlockDeviceMapping.1.Ebs.VolumeType"), "gp3");
	assert_string_equal(param(run, "BlockDeviceMapping.1.Ebs.Encrypted"), "true");
	assert_string_equal(param(run, "BlockDeviceMapping.1.Ebs.DeleteOnTermination"), "true");
	assert_string_equal(param(run, "InstanceInitiatedShutdownBehavior"), "terminate");
	assert_string_equal(param(run, "KeyName"), "gpucluster-drv");
	assert_string_equal(param(run, "SecurityGroupId.1"), sg_id);
	assert_string_equal(param(run, "Placement.AvailabilityZone"), "us-east-1b");
	assert_true(gc_starts_with(param(run, "UserData"), "<redacted"));
	json_decref(runs);

	/* what the emulator made of it: the timer, the disk, the spot bid */
	sim_world_lock(sim.world);
	for (size_t i = 0; i < got.n; i++) {
		struct sim_instance *in = sim_world_instance(sim.world, SIM_AWS, got.items[i].id);
		char when[32];
		time_t t = (time_t)expires;
		struct tm tm;

		assert_non_null(in);
		assert_int_equal(in->release_at_wall, expires);
		assert_int_equal(in->disk_gb, 200);
		assert_true(in->spot);
		assert_string_equal(in->spot_max_price, "0.9");
		assert_string_equal(in->key_name, "gpucluster-drv");
		gmtime_r(&t, &tm);
		strftime(when, sizeof(when), "OnCalendar=%Y-%m-%d %H:%M:%S UTC\n", &tm);
		assert_non_null(in->user_data);
		assert_non_null(strstr(in->user_data, when));
		assert_non_null(strstr(in->user_data, "Persistent=true"));
		assert_non_null(strstr(in->user_data, "poweroff"));
	}
	sim_world_unlock(sim.world);

	/* the node's timer fires once the wall clock passes expires-at */
	advance_ms(2000);
	sim_world_lock(sim.world);
	sim.world->wall_offset_s = expires - (int64_t)time(NULL) + 5;
	sim_world_tick(sim.world);
	for (size_t i = 0; i < got.n; i++)
		assert_int_equal(sim_world_instance(sim.world, SIM_AWS, got.items[i].id)->state,
				 SIM_SHUTTING_DOWN);
	sim.world->wall_offset_s = 0;
	sim_world_unlock(sim.world);

	gc_instance_list_release(&got);
	free(key_id);
	free(sg_id);
	gc_buf_release(&pub);
	gc_keypair_release(&kp);
}

/* The group's egress rules beyond EC2's default one, as the emulator holds them; with
 * drop, they are removed (a group an older release made, without the self rule). */
static size_t egress_rules(const char *sg_id, bool drop)
{
	size_t n = 0;

	sim_world_lock(sim.world);
	for (size_t i = 0; i < sim.world->n_secgroups; i++) {
		struct sim_secgroup *g = sim.world->secgroups[i];

		if (strcmp(g->id, sg_id) != 0)
			continue;
		for (size_t k = 0; k < g->n_egress; k++) {
			assert_string_equal(g->egress[k].protocol, "-1");
			assert_string_equal(g->egress[k].source_group, sg_id);
		}
		n = g->n_egress;
		if (drop)
			g->n_egress = 0;
	}
	sim_world_unlock(sim.world);
	return n;
}

/* The all-traffic self egress rule EFA requires beside the members' ingress rule: added to
 * a new group, to a reused group that lacks it, and never twice (fabric.md). */
static void test_egress_self_rule(void **state)
{
	const char *cidrs[] = { "203.0.113.7/32" };
	struct gc_secgroup_request sr;
	struct gc_error err;
	char *sg_id = NULL, *again = NULL;
	size_t before = logged_count("AuthorizeSecurityGroupEgress");
	json_t *calls;

	(void)state;
	gc_error_init(&err);
	memset(&sr, 0, sizeof(sr));
	sr.name = "gpucluster-efa";
	sr.description = "gpucluster efa";
	sr.ssh_port = 22;
	sr.allow_from = cidrs;
	sr.n_allow_from = 1;
	sr.tags = base_tags;
	sr.n_tags = 1;
	sr.allow_members = true;
	assert_int_equal(gc_provider_create_secgroup(prov, &sr, &sg_id, &err), 0);
	assert_int_equal(logged_count("AuthorizeSecurityGroupEgress") - before, 1);
	calls = logged("AuthorizeSecurityGroupEgress");
	{
		json_t *c = json_array_get(calls, json_array_size(calls) - 1);

		assert_string_equal(param(c, "GroupId"), sg_id);
		assert_string_equal(param(c, "IpPermissions.1.IpProtocol"), "-1");
		assert_string_equal(param(c, "IpPermissions.1.Groups.1.GroupId"), sg_id);
		assert_null(param(c, "IpPermissions.1.IpRanges.1.CidrIp"));
	}
	json_decref(calls);
	assert_int_equal(egress_rules(sg_id, true), 1);

	/* reused without the rule: it is added; reused with it: nothing is sent */
	sr.id = sg_id;
	assert_int_equal(gc_provider_create_secgroup(prov, &sr, &again, &err), 0);
	assert_string_equal(again, sg_id);
	assert_int_equal(logged_count("AuthorizeSecurityGroupEgress") - before, 2);
	assert_int_equal(egress_rules(sg_id, false), 1);
	free(again);
	again = NULL;
	assert_int_equal(gc_provider_create_secgroup(prov, &sr, &again, &err), 0);
	assert_int_equal(logged_count("AuthorizeSecurityGroupEgress") - before, 2);
	assert_int_equal(egress_rules(sg_id, false), 1);
	free(again);
	free(sg_id);
}

/* ---- our own buckets, and answers no cloud should give ------------------------------ */

static void test_no_rate_limit(void **state)
{
	struct gc_provider *naive = NULL;
	struct gc_instance_list got;
	struct gc_error err;

	(void)state;
	gc_error_init(&err);
	gc_instance_list_init(&got);
	assert_int_equal(open_with(&naive, endpoint, NULL, true, NULL, &err), 0);
	for (int i = 0; i < 8; i++) {
		struct gc_create_request r = launch_req(1, NULL);
		char tok[32];

		snprintf(tok, sizeof(tok), "gc-naive-%d", i);
		r.client_token = tok;
		assert_int_equal(gc_provider_create(naive, &r, &got, &err), 0);
		r.client_token = tok;
		assert_int_equal(gc_provider_create(prov, &r, &got, &err), 0);
	}
	assert_int_equal(naive->stats.ratelimit_wait_ms, 0);
	/* ours: five RunInstances at once, then two a second: three waits of 500 ms */
	assert_true(prov->stats.ratelimit_wait_ms >= 1500);
	gc_provider_close(naive);
	gc_instance_list_release(&got);
}

/* show-gpus live: the region's GPU types with their zones (every page of both listings),
 * and the price list's Reserved terms (standard, no upfront; the all-upfront term is
 * stepped over), whose product also fills the on-demand price. */
static void test_gpu_types_reserved(void **state)
{
	struct gc_gpu_type *types = NULL;
	size_t n = 0;
	struct gc_error err;
	char cur[GC_CURRENCY_SIZE] = "";
	double rs[2], od;
	const struct sim_itype *p4d = sim_catalog_itype(SIM_AWS, "p4d.24xlarge");
	const struct gc_gpu_type *g6 = NULL;
	unsigned long calls;

	(void)state;
	gc_error_init(&err);
	assert_int_equal(gc_provider_gpu_types(prov, &types, &n, &err), 0);
	assert_true(n >= 10);
	for (size_t i = 0; i < n; i++) {
		assert_true(types[i].facts.gpus > 0); /* t3.medium is left out */
		assert_true(types[i].n_zones > 0);
		if (strcmp(types[i].facts.name, "g6.12xlarge") == 0)
			g6 = &types[i];
	}
	assert_non_null(g6);
	assert_string_equal(g6->facts.gpu_model, "L4");
	assert_int_equal(g6->facts.gpus, 4);
	assert_int_equal(g6->n_zones, 4); /* us-east-1b does not offer it */
	for (size_t i = 0; i < g6->n_zones; i++)
		assert_string_not_equal(g6->zones[i], "us-east-1b");
	gc_gpu_types_free(types, n);

	assert_int_equal(gc_provider_reserved_price(prov, "p4d.24xlarge", rs, cur, &err), 0);
	assert_string_equal(cur, "USD");
	assert_true(fabs(rs[0] - p4d->price * 0.62) < 1e-6);
	assert_true(fabs(rs[1] - p4d->price * 0.40) < 1e-6);
	calls = prov->stats.calls;
	assert_int_equal(gc_provider_price(prov, "p4d.24xlarge", NULL, false, &od, cur, &err), 0);
	assert_true(fabs(od - p4d->price) < 1e-6);
	assert_int_equal(prov->stats.calls, calls); /* from the Reserved lookup's product */
}

/* XML answers no cloud should give (the shared cases are in the conformance suite). */
static void test_bad_xml(void **state)
{
	static const char not_xml[] = "<<<this is not xml & never was";
	static const struct scripted garbage[] = { { 200, not_xml, NULL } };
	static const struct scripted wrong_root[] = {
		{ 200, "<?xml version=\"1.0\"?><Nope><x/></Nope>", NULL },
	};
	static const struct scripted e400[] = {
		{ 400,
		  "<Response><Errors><Error><Code>InvalidParameterValue</Code>"
		  "<Message>no</Message></Error></Errors><RequestID>r-1</RequestID>"
		  "</Response>",
		  NULL },
	};
	static const struct scripted forever[] = { { 200, endless_body, NULL } };
	struct MHD_Daemon *d;
	struct gc_provider *p = NULL;
	struct gc_error err;
	char **zones = NULL;
	size_t n = 0;
	double usd;
	char cur[GC_CURRENCY_SIZE];

	(void)state;
	d = scripted_start(&p);
	gc_error_init(&err);

	/* the Price List API's answers are JSON: garbage there too */
	run_script(p, garbage, 1);
	assert_int_equal(gc_provider_price(p, DRV_AWS_TYPE, NULL, false, &usd, cur, &err), -1);
	assert_int_equal(err.code, GC_EBADRESPONSE);
	assert_int_equal(p->stats.calls, GC_RETRY_BADRESPONSE_MAX_ATTEMPTS);

	/* not the action's own document: refused where it is read, and tried again */
	run_script(p, wrong_root, 1);
	assert_int_equal(gc_provider_zones(p, &zones, &n, &err), -1);
	assert_int_equal(err.code, GC_EBADRESPONSE);
	assert_non_null(strstr(err.message, "is not a DescribeAvailabilityZones answer"));
	assert_int_equal(p->stats.calls, GC_RETRY_BADRESPONSE_MAX_ATTEMPTS);

	run_script(p, e400, 1);
	assert_int_equal(gc_provider_zones(p, &zones, &n, &err), -1);
	assert_int_equal(err.code, GC_EINVALID);
	assert_string_equal(err.cloud_code, "InvalidParameterValue");
	assert_string_equal(err.request_id, "r-1");

	run_script(p, forever, 1);
	assert_int_equal(gc_provider_zones(p, &zones, &n, &err), -1);
	assert_int_equal(err.code, GC_ETOOBIG);
	assert_null(zones);

	scripted_stop(d, p);
}

/* ---- the emulator's Price List frontend, called directly ------------------------------- */

struct pl_reply {
	int status;
	char code[128];
	json_t *doc;
};

/* A signed GetProducts (or target) call with body, straight into sim_ec2_handle. */
/* A signed GetProducts (or target) call with body, straight into sim_ec2_handle. */
static void pl_call(const char *target, const char *body, const char *service, struct pl_reply *out)
{
	struct gc_params headers = GC_PARAMS_INIT, query = GC_PARAMS_INIT;
	struct gc_sign_request req;
	struct gc_sign_result sr;
	struct aws_sigv4_input in;
	struct sim_req sreq;
	struct sim_resp resp;
	struct gc_error err;
	char ts[AWS_SIGV4_TIMESTAMP_LEN + 1];
	time_t now = time(NULL);

	gc_error_init(&err);
	gc_params_add(&headers, "Host", "127.0.0.1:8000");
	gc_params_add(&headers, "Content-Type", "application/x-amz-json-1.1");
	gc_params_add(&headers, "X-Amz-Target", target);
	memset(&req, 0, sizeof(req));
	req.method = "POST";
	req.path = "/";
	req.headers = &headers;
	req.body = body;
	req.body_len = strlen(body);
	memset(&in, 0, sizeof(in));
	aws_sigv4_format_time(now, ts);
	in.access_key_id = DRV_AWS_AKID;
	in.secret_access_key = DRV_AWS_SECRET;
	in.timestamp = ts;
	in.region = "us-east-1";
	in.service = service;
	assert_int_equal(aws_sigv4_sign(&sr, &req, &in, &err), 0);
	gc_params_add_all(&headers, &sr.added_headers);
	gc_sign_result_release(&sr);

	memset(&sreq, 0, sizeof(sreq));
	sreq.cloud = SIM_AWS;
	sreq.method = "POST";
	sreq.path = "/";
	sreq.query_string = "";
	sreq.query = &query;
	sreq.headers = &headers;
	sreq.body = body;
	sreq.body_len = strlen(body);
	sreq.now = now;
	sim_resp_init(&resp);
	sim_ec2_handle(&sim, &sreq, &resp);
	out->status = resp.status;
	snprintf(out->code, sizeof(out->code), "%s", resp.error_code);
	out->doc = json_loadb(resp.body.data, resp.body.len, 0, NULL);
	assert_non_null(out->doc);
	assert_string_equal(resp.content_type, "application/x-amz-json-1.1");
	assert_non_null(gc_params_get_ci(&resp.headers, "x-amzn-RequestId"));
	assert_string_equal(resp.action, strchr(target, '.') + 1);
	sim_resp_release(&resp);
	gc_params_release(&headers);
	gc_params_release(&query);
}

#define GET_PRODUCTS "AWSPriceListService.GetProducts"

static void test_pricing_frontend(void **state)
{
	static const char first[] =
		"{\"ServiceCode\":\"AmazonEC2\",\"FormatVersion\":\"aws_v1\",\"MaxResults\":4,"
		"\"Filters\":[{\"Type\":\"TERM_MATCH\",\"Field\":\"instanceType\","
		"\"Value\":\"g5.xlarge\"},{\"Type\":\"TERM_MATCH\",\"Field\":\"regionCode\","
		"\"Value\":\"us-west-2\"}]}";
	struct pl_reply r;
	char *next_body;
	size_t total = 0, shared_used = 0;
	json_t *entry;
	size_t i;

	(void)state;
	/* the type in one region: 2 tenancies x 3 capacity statuses, over two pages */
	pl_call(GET_PRODUCTS, first, "pricing", &r);
	assert_int_equal(r.status, 200);
	assert_string_equal(json_string_value(json_object_get(r.doc, "FormatVersion")), "aws_v1");
	assert_int_equal(json_array_size(json_object_get(r.doc, "PriceList")), 4);
	assert_non_null(json_string_value(json_object_get(r.doc, "NextToken")));
	for (int page = 0; page < 2; page++) {
		json_array_foreach(json_object_get(r.doc, "PriceList"), i, entry)
		{
			json_t *prod = json_loads(json_string_value(entry), 0, NULL), *od, *term,
			       *dims, *dim, *attrs;
			const char *k1, *k2, *usd = NULL;

			assert_non_null(prod); /* each entry is a document in a string */
			attrs = json_object_get(json_object_get(prod, "product"), "attributes");
			assert_string_equal(
				json_string_value(json_object_get(attrs, "instanceType")),
				"g5.xlarge");
			assert_string_equal(json_string_value(json_object_get(attrs, "location")),
					    "US West (Oregon)");
			od = json_object_get(json_object_get(prod, "terms"), "OnDemand");
			json_object_foreach(od, k1, term)
			{
				dims = json_object_get(term, "priceDimensions");
				json_object_foreach(dims, k2, dim)
				{
					assert_string_equal(
						json_string_value(json_object_get(dim, "unit")),
						"Hrs");
					usd = json_string_value(json_object_get(
						json_object_get(dim, "pricePerUnit"), "USD"));
				}
			}
			assert_non_null(usd);
			if (!strcmp(json_string_value(json_object_get(attrs, "tenancy")),
				    "Shared") &&
			    !strcmp(json_string_value(json_object_get(attrs, "capacitystatus")),
				    "Used")) {
				assert_string_equal(usd, "1.0060000000");
				shared_used++;
			}
			json_decref(prod);
			total++;
		}
		if (page == 0) {
			json_t *req = json_loads(first, 0, NULL);

			json_object_set(req, "NextToken", json_object_get(r.doc, "NextToken"));
			next_body = json_dumps(req, JSON_COMPACT);
			json_decref(req);
			json_decref(r.doc);
			pl_call(GET_PRODUCTS, next_body, "pricing", &r);
			free(next_body);
			assert_int_equal(r.status, 200);
			assert_null(json_object_get(r.doc, "NextToken"));
		}
	}
	json_decref(r.doc);
	assert_int_equal(total, 6);
	assert_int_equal(shared_used, 1);

	/* errors in the JSON protocol's shape */
	pl_call(GET_PRODUCTS, first, "ec2", &r);
	assert_int_equal(r.status, 400);
	assert_string_equal(r.code, "InvalidSignatureException");
	assert_string_equal(json_string_value(json_object_get(r.doc, "__type")),
			    "InvalidSignatureException");
	json_decref(r.doc);
	pl_call(GET_PRODUCTS,
		"{\"ServiceCode\":\"AmazonEC2\",\"Filters\":[{\"Type\":\"CONTAINS\","
		"\"Field\":\"instanceType\",\"Value\":\"g5\"}]}",
		"pricing", &r);
	assert_int_equal(r.status, 400);
	assert_string_equal(json_string_value(json_object_get(r.doc, "__type")),
			    "com.amazon.awspricing#InvalidParameterException");
	json_decref(r.doc);
	pl_call(GET_PRODUCTS, "{\"ServiceCode\":\"AmazonEC2\",\"NextToken\":\"7.forged\"}",
		"pricing", &r);
	assert_string_equal(r.code, "InvalidNextTokenException");
	json_decref(r.doc);
	pl_call("AWSPriceListService.DescribeServices", "{}", "pricing", &r);
	assert_string_equal(r.code, "UnknownOperationException");
	json_decref(r.doc);
}

/* The EC2 frontend's filter values: a backslash makes a wildcard literal. */
static void test_filter_escapes(void **state)
{
	static char k[] = "note", v_star[] = "a*b", v_plain[] = "axxb";
	struct gc_tag star[] = { { k, v_star } }, plain[] = { { k, v_plain } };
	struct gc_tag_filter want[] = { { "note", "a*b" } };
	struct gc_discover_query q = { want, 1, false };
	struct gc_create_request r = launch_req(1, "gc-esc-1");
	struct gc_instance_list got, found;
	struct gc_error err;
	json_t *lines;

	(void)state;
	gc_error_init(&err);
	gc_instance_list_init(&got);
	gc_instance_list_init(&found);
	r.tags = star;
	r.n_tags = 1;
	launch_ok(&r, &got);
	r.tags = plain;
	r.client_token = "gc-esc-2";
	launch_ok(&r, &got);
	assert_int_equal(gc_provider_discover(prov, &q, &found, &err), 0);
	assert_int_equal(found.n, 1);
	assert_string_equal(found.items[0].id, got.items[0].id);
	lines = logged("DescribeInstances");
	assert_string_equal(param(json_array_get(lines, 0), "Filter.1.Value.1"), "a\\*b");
	json_decref(lines);
	gc_instance_list_release(&got);
	gc_instance_list_release(&found);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_discover_terminated, test_setup,
						test_teardown),
		cmocka_unit_test_setup_teardown(test_create_spot_ttl, test_setup, test_teardown),
		cmocka_unit_test_setup_teardown(test_egress_self_rule, test_setup, test_teardown),
		cmocka_unit_test_setup_teardown(test_no_rate_limit, test_setup, test_teardown),
		cmocka_unit_test_setup_teardown(test_bad_xml, test_setup, test_teardown),
		cmocka_unit_test_setup_teardown(test_pricing_frontend, test_setup, test_teardown),
		cmocka_unit_test_setup_teardown(test_filter_escapes, test_setup, test_teardown),
		cmocka_unit_test_setup_teardown(test_gpu_types_reserved, test_setup, test_teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
