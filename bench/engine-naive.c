/*
 * engine-naive.c: the "one instance per call" apply that bench/engine.sh compares the
 * batched apply against.
 *
 * Usage: engine-naive SPEC [BATCH]
 *
 * Terraform's aws_instance launches every instance with its own RunInstances call. To
 * measure what that costs under EC2's rate limits with nothing else changed, this program
 * runs the real engine (gc_engine_plan, then gc_engine_apply) through the real AWS driver,
 * opened from a copy of gc_provider_aws whose max_create_batch is BATCH (default 1): the
 * same HTTP client, the same client-side token buckets, the same client tokens and wait;
 * only the batch size differs. Credentials and GPUCLUSTER_CHECKIP_URL come from the
 * environment, as for gpucluster itself.
 *
 * Prints one line: instances created, wall time of plan + apply, API calls, throttling
 * errors received, and the time the driver held calls back on its own buckets. Exits 0
 * when the apply reached the spec's counts.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/diag.h"
#include "core/engine.h"
#include "core/error.h"
#include "core/log.h"
#include "core/plan.h"
#include "core/provider.h"
#include "core/spec.h"
#include "core/str.h"
#include "providers/aws/aws.h"

/* Progress lines: one per this many instances created, so a long run shows it is alive. */
#define PROGRESS_EVERY 100u

struct progress {
	unsigned created;
	unsigned next_report;
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void log_sink(void *ctx, enum gc_log_level level, const char *line)
{
	(void)ctx;
	fprintf(stderr, "engine-naive: %s: %s\n",
		level == GC_LOG_ERROR	       ? "error"
			: level == GC_LOG_WARN ? "warning"
					       : "info",
		line);
}

static void on_progress(void *ctx, const struct gc_engine_event *ev)
{
	struct progress *pr = ctx;

	if (ev->kind == GC_EV_CREATED) {
		pr->created += ev->count;
		if (pr->created >= pr->next_report) {
			fprintf(stderr, "engine-naive: %u created\n", pr->created);
			pr->next_report += PROGRESS_EVERY;
		}
	} else if (ev->kind == GC_EV_CREATE_FAILED) {
		fprintf(stderr, "engine-naive: a create failed: %s\n",
			ev->err ? ev->err->message : "?");
	}
}

int main(int argc, char **argv)
{
	struct gc_provider_ops ops = gc_provider_aws;
	struct gc_provider_config cfg = { 0 };
	struct gc_provider *p = NULL;
	struct gc_spec *spec = NULL;
	struct gc_engine e;
	bool engine_up = false;
	struct gc_engine_opts opts = { 0 };
	struct gc_engine_report report;
	struct gc_instance_list live;
	struct gc_plan plan;
	struct gc_diags diags;
	struct gc_error err;
	struct gc_log log;
	struct progress pr = { 0, PROGRESS_EVERY };
	uint64_t batch = 1;
	double t0;
	int rc = 1;

	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: engine-naive SPEC [BATCH]\n");
		return 64;
	}
	if (argc == 3 && (gc_parse_u64(argv[2], 1000, &batch) != 0 || batch == 0)) {
		fprintf(stderr, "engine-naive: BATCH must be 1 to 1000, not '%s'\n", argv[2]);
		return 64;
	}
	gc_error_init(&err);
	gc_log_init(&log, GC_LOG_WARN, log_sink, NULL);
	gc_instance_list_init(&live);
	gc_plan_init(&plan);
	gc_engine_report_init(&report);
	gc_diags_init(&diags, argv[1]);

	if (gc_spec_load_file(&spec, argv[1], &gc_spec_env_process, &diags, &err) < 0) {
		fprintf(stderr, "engine-naive: '%s': %s\n", argv[1], err.message);
		goto out;
	}
	if (strcmp(spec->provider.name, "aws") != 0) {
		fprintf(stderr, "engine-naive: '%s' is not an aws spec\n", argv[1]);
		goto out;
	}
	/* the only difference from gpucluster apply: how many instances one call launches */
	ops.max_create_batch = (unsigned)batch;
	cfg.region = spec->provider.region;
	cfg.profile = spec->provider.profile;
	cfg.endpoint = spec->provider.endpoint;
	cfg.log = &log;

	t0 = now_s();
	if (gc_provider_open(&p, &ops, &cfg, &err) < 0) {
		fprintf(stderr, "engine-naive: %s\n", err.message);
		goto out;
	}
	if (gc_engine_init(&e, spec, p, NULL, &log, &err) < 0) {
		fprintf(stderr, "engine-naive: %s\n", err.message);
		goto out;
	}
	engine_up = true;
	if (gc_engine_plan(&e, &plan, &live, NULL, NULL, 0, &err) < 0) {
		fprintf(stderr, "engine-naive: plan: %s\n", err.message);
		goto out;
	}
	opts.progress = on_progress;
	opts.progress_ctx = &pr;
	if (gc_engine_apply(&e, &plan, &opts, &report, &err) < 0)
		fprintf(stderr, "engine-naive: apply: %s\n", err.message);
	else
		rc = 0;
	printf("naive: %zu created (batch %u) in %.2f s, %lu API calls, %lu throttled, "
	       "%.2f s held by our own rate limiter\n",
	       report.created.n, ops.max_create_batch, now_s() - t0, p->stats.calls,
	       p->stats.throttled, (double)p->stats.ratelimit_wait_ms / 1000.0);
out:
	gc_engine_report_release(&report);
	gc_plan_release(&plan);
	gc_instance_list_release(&live);
	if (engine_up)
		gc_engine_release(&e);
	gc_provider_close(p);
	gc_spec_free(spec);
	gc_diags_release(&diags);
	gc_log_release(&log);
	return rc;
}
