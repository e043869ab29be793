/*
 * sim-api.c: API-only throughput of gpucluster-sim with 1000 instances.
 *
 * Usage: sim-api AWS_ENDPOINT [INSTANCES [REQUESTS [IN_FLIGHT]]]
 *
 * Launches INSTANCES (default 1000) instances through EC2 RunInstances in batches of
 * up to 500, then times REQUESTS (default 2000) signed DescribeInstances calls of two
 * shapes, IN_FLIGHT (default 8) at a time over keep-alive connections:
 *   point  one instance by id (the cost of a request itself)
 *   page   a tag-filtered page of 100 instances (what a driver's discovery does)
 * and one full listing of every instance in a single 1000-item page. Prints one line
 * per shape with requests per second. Run the emulator with --no-rate-limits, or the
 * EC2 buckets (rightly) throttle this.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/alloc.h"
#include "core/buf.h"
#include "core/http.h"
#include "core/str.h"
#include "core/urlenc.h"
#include "providers/aws/sigv4.h"

#define AKID   "AKIAGPUCLUSTERSIM001"
#define SECRET "gpucluster-sim-aws-secret-key-0000000000"

struct signed_req {
	char *body;
	char *hdr[8];
	size_t n_hdr;
};

static const char *endpoint;
static char host[256];

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Signs a form body for EC2 and fills sr with what to send. */
static void sign_body(struct signed_req *sr, const char *body)
{
	struct gc_params headers = GC_PARAMS_INIT;
	struct gc_sign_request req = { 0 };
	struct aws_sigv4_input in = { 0 };
	struct gc_sign_result res;
	char ts[AWS_SIGV4_TIMESTAMP_LEN + 1];
	struct gc_error err;

	gc_params_add(&headers, "content-type", "application/x-www-form-urlencoded");
	gc_params_add(&headers, "host", host);
	req.method = "POST";
	req.host = host;
	req.headers = &headers;
	req.body = body;
	req.body_len = strlen(body);
	aws_sigv4_format_time(time(NULL), ts);
	in.access_key_id = AKID;
	in.secret_access_key = SECRET;
	in.timestamp = ts;
	in.region = "us-east-1";
	in.service = "ec2";
	gc_error_init(&err);
	if (aws_sigv4_sign(&res, &req, &in, &err) < 0) {
		fprintf(stderr, "sim-api: signing: %s\n", err.message);
		exit(1);
	}
	memset(sr, 0, sizeof(*sr));
	sr->body = gc_xstrdup(body);
	sr->hdr[sr->n_hdr++] = gc_xstrdup("Content-Type: application/x-www-form-urlencoded");
	for (size_t i = 0; i < res.added_headers.n && sr->n_hdr < 8; i++)
		sr->hdr[sr->n_hdr++] = gc_xasprintf("%s: %s", res.added_headers.items[i].name,
						    res.added_headers.items[i].value);
	gc_sign_result_release(&res);
	gc_params_release(&headers);
}

static void signed_release(struct signed_req *sr)
{
	free(sr->body);
	for (size_t i = 0; i < sr->n_hdr; i++)
		free(sr->hdr[i]);
}

/* Sends n copies of body, in_flight at a time; returns the wall time, exits on failure. */
static double run(struct gc_http *http, const char *body, size_t n, size_t in_flight,
		  struct gc_buf *first_body)
{
	struct gc_http_request *reqs = gc_xcalloc(n, sizeof(*reqs));
	struct gc_http_response *res = gc_xcalloc(n, sizeof(*res));
	struct signed_req sr;
	double t0, t;

	sign_body(&sr, body);
	for (size_t i = 0; i < n; i++) {
		reqs[i].method = "POST";
		reqs[i].url = endpoint;
		reqs[i].headers = (const char *const *)sr.hdr;
		reqs[i].n_headers = sr.n_hdr;
		reqs[i].body = sr.body;
		reqs[i].body_len = strlen(sr.body);
	}
	t0 = now_s();
	gc_http_perform_many(http, reqs, res, n, in_flight);
	t = now_s() - t0;
	for (size_t i = 0; i < n; i++) {
		if (res[i].error.code != GC_OK || res[i].status != 200) {
			fprintf(stderr, "sim-api: request %zu: status %d %s\n%.*s\n", i,
				res[i].status, res[i].error.message, (int)res[i].body.len,
				res[i].body.data ? res[i].body.data : "");
			exit(1);
		}
	}
	if (first_body)
		gc_buf_add(first_body, res[0].body.data, res[0].body.len);
	for (size_t i = 0; i < n; i++)
		gc_http_response_release(&res[i]);
	free(reqs);
	free(res);
	signed_release(&sr);
	return t;
}

/* Counts occurrences of needle in hay. */
static size_t count(const struct gc_buf *hay, const char *needle)
{
	size_t n = 0;
	const char *p = hay->data;

	while (p && (p = strstr(p, needle)) != NULL) {
		n++;
		p += strlen(needle);
	}
	return n;
}

int main(int argc, char **argv)
{
	uint64_t instances = 1000, requests = 2000, in_flight = 8;
	struct gc_buf out = GC_BUF_INIT(64 << 20);
	struct gc_http *http;
	struct gc_error err;
	char body[512], first_id[32] = "";
	const char *p, *slash;
	double t;

	if (argc < 2 || (argc > 2 && gc_parse_u64(argv[2], 100000, &instances) < 0) ||
	    (argc > 3 && gc_parse_u64(argv[3], 1000000, &requests) < 0) ||
	    (argc > 4 && gc_parse_u64(argv[4], 256, &in_flight) < 0) || !requests || !in_flight) {
		fprintf(stderr, "usage: sim-api AWS_ENDPOINT [INSTANCES [REQUESTS [IN_FLIGHT]]]\n");
		return 64;
	}
	endpoint = argv[1];
	p = strstr(endpoint, "://");
	p = p ? p + 3 : endpoint;
	slash = strchr(p, '/');
	snprintf(host, sizeof(host), "%.*s", (int)(slash ? (size_t)(slash - p) : strlen(p)), p);

	gc_error_init(&err);
	http = gc_http_new(NULL, &err);
	if (!http) {
		fprintf(stderr, "sim-api: %s\n", err.message);
		return 1;
	}

	t = 0;
	for (uint64_t left = instances; left;) {
		uint64_t batch = left > 500 ? 500 : left;

		snprintf(body, sizeof(body),
			 "Action=RunInstances&Version=2016-11-15&ImageId=ami-0e8d2a5e1c4f22040"
			 "&InstanceType=g5.xlarge&MinCount=%llu&MaxCount=%llu"
			 "&TagSpecification.1.ResourceType=instance"
			 "&TagSpecification.1.Tag.1.Key=gpucluster%%3Acluster"
			 "&TagSpecification.1.Tag.1.Value=bench",
			 (unsigned long long)batch, (unsigned long long)batch);
		gc_buf_reset(&out);
		t += run(http, body, 1, 1, &out);
		if (!first_id[0] && (p = strstr(out.data, "<instanceId>")) != NULL)
			snprintf(first_id, sizeof(first_id), "%.19s", p + 12);
		left -= batch;
	}
	printf("launch   %llu instances in %.3f s\n", (unsigned long long)instances, t);

	snprintf(body, sizeof(body), "Action=DescribeInstances&Version=2016-11-15&InstanceId.1=%s",
		 first_id);
	t = run(http, body, requests, in_flight, NULL);
	printf("point    %llu requests in %.3f s: %.0f requests/s\n", (unsigned long long)requests,
	       t, (double)requests / t);

	snprintf(body, sizeof(body),
		 "Action=DescribeInstances&Version=2016-11-15&MaxResults=100"
		 "&Filter.1.Name=tag%%3Agpucluster%%3Acluster&Filter.1.Value.1=bench");
	gc_buf_reset(&out);
	t = run(http, body, requests / 4, in_flight, &out);
	if (count(&out, "<instanceId>") != 100) {
		fprintf(stderr, "sim-api: a page held %zu instances, not 100\n",
			count(&out, "<instanceId>"));
		return 1;
	}
	printf("page     %llu requests of 100 instances in %.3f s: %.0f requests/s\n",
	       (unsigned long long)(requests / 4), t, (double)(requests / 4) / t);

	snprintf(body, sizeof(body),
		 "Action=DescribeInstances&Version=2016-11-15&MaxResults=1000"
		 "&Filter.1.Name=tag%%3Agpucluster%%3Acluster&Filter.1.Value.1=bench");
	gc_buf_reset(&out);
	t = run(http, body, 1, 1, &out);
	printf("full     1 listing of %zu instances (%zu bytes) in %.3f s\n",
	       count(&out, "<instanceId>"), out.len, t);

	gc_buf_release(&out);
	gc_http_free(http);
	return 0;
}
