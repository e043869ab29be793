/*
 * bootstrap-runner.c: gpucluster's side of the bootstrap benchmark (bench/bootstrap.sh),
 * and the two chores the other tools' side needs.
 *
 * Usage:
 *   bootstrap-runner launch AWS_ENDPOINT COUNT DIR [--image AMI] [--type TYPE] [--port N]
 *   bootstrap-runner run DIR [--concurrency N] [--no-smoke]
 *   bootstrap-runner tree OUT -- COMMAND [ARG...]
 *
 * launch: COUNT instances (default image: plain Ubuntu 22.04, g5.xlarge) through the AWS
 * driver (gc_providers) against gpucluster-sim's EC2 endpoint with its test credentials,
 * authorising DIR/key (made on first use; OpenSSH's format). Every host key is pinned from
 * GetConsoleOutput into DIR/known_hosts by gc_boot_pin, as a bootstrap does (strict: no
 * trust on first use); that file is OpenSSH's format
 * too, so ssh under Ansible and parallel-ssh checks against the same pins. Then it waits
 * until every node accepts TCP on its SSH port and writes DIR/nodes, one "ID ADDRESS
 * PORT" line per node. Nothing of this is timed: every tool starts from launched, pinned,
 * listening nodes.
 *
 * run: the bootstrap as gpucluster runs it: gc_runner_run with the embedded files and the
 * steps of the step table (core/steps.h: detect, driver, cuda, cudnn, container and
 * smoke, smoke per boot, as in gpucluster's full bootstrap: on a re-run of a ready node
 * every step is skipped by its marker), set up by gc_boot_set_steps from the spec
 * below, the runner's default
 * options (64 connections, 2 s between SSH attempts). bench/bootstrap.yml and
 * bench/bootstrap-pssh.sh give the other tools the same inputs. Prints one summary line
 * (wall time of the run, user+sys CPU of this process during it, its peak RSS), the mean
 * time per node to connect, to upload and from a reboot request to connected again, and
 * one line per step (states, mean and longest time per node, reboots). Exits 1 when a
 * node failed, after naming it.
 *
 * tree: runs COMMAND as a child subreaper and waits for it. Ansible's ssh ControlPersist
 * masters detach from the tool and would escape /usr/bin/time's accounting; as orphans
 * they come to us instead, are sent SIGTERM once COMMAND has exited, and are reaped, so
 * the time and CPU of the whole process tree reach whoever waits for us. Every 250 ms it
 * sums the RSS of every process in the tree, every second their PSS (GNU time's max RSS
 * is the largest single process, not the sum), and writes the peaks to OUT with its own
 * CPU time, which GNU time counts too and the caller subtracts. Exits with COMMAND's
 * status.
 */
#define _GNU_SOURCE /* PR_SET_CHILD_SUBREAPER */

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bootstrap/cluster.h"
#include "bootstrap/known_hosts.h"
#include "bootstrap/runner.h"
#include "bootstrap/scripts.h"
#include "core/alloc.h"
#include "core/buf.h"
#include "core/clock.h"
#include "core/error.h"
#include "core/keygen.h"
#include "core/log.h"
#include "core/provider.h"
#include "core/steps.h"
#include "core/str.h"
#include "core/wait.h"
#include "providers/aws/aws.h"

#define SIM_AKID       "AKIAGPUCLUSTERSIM001"
#define SIM_SECRET     "gpucluster-sim-aws-secret-key-0000000000"
#define UBUNTU_2204    "ami-0e8d2a5e1c4f22040"
#define LAUNCH_WAIT_S  120
#define WAIT_POLL_MS   100
#define TREE_SAMPLE_MS 250
#define TREE_PSS_EVERY 4 /* PSS on every 4th sample: reading it costs a page-table walk */
#define TREE_TERM_WAIT 5 /* seconds a leftover gets between SIGTERM and SIGKILL */
#define NODES_LINE_MAX 256
#define MAX_NODES      4096
#define TREE_MAX_PROCS 65536

static double now_s(void)
{
	return (double)gc_clock_now_ns(NULL) / 1e9;
}

static double tv_s(struct timeval tv)
{
	return (double)tv.tv_sec + (double)tv.tv_usec / 1e6;
}

static void log_sink(void *ctx, enum gc_log_level level, const char *line)
{
	(void)ctx;
	fprintf(stderr, "bootstrap-runner: %s: %s\n", level == GC_LOG_ERROR ? "error" : "warning",
		line);
}

/*
 * The spec the steps and their inputs come from (the step table, core/steps.h, read
 * through gc_boot_set_steps as a real bootstrap does); bench/bootstrap.yml and
 * bench/bootstrap-pssh.sh give the other tools the same inputs. The launched nodes are
 * g5.xlarge: the smoke step expects what that type's facts say.
 */
static void bench_spec(struct gc_spec *spec)
{
	static char user[] = "ubuntu", driver[] = "570", cuda[] = "12.8", cudnn[] = "9";

	memset(spec, 0, sizeof(*spec));
	spec->ssh.user = user;
	spec->bootstrap.driver = driver;
	spec->bootstrap.cuda = cuda;
	spec->bootstrap.cudnn = cudnn;
	spec->bootstrap.container = GC_CONTAINER_DOCKER;
	spec->bootstrap.smoke = GC_SMOKE_DRIVER | GC_SMOKE_CUDA | GC_SMOKE_CONTAINER;
}

/* ---- launch ---------------------------------------------------------------------------- */

static const char *sim_env_lookup(void *ctx, const char *name)
{
	(void)ctx;
	if (strcmp(name, "AWS_ACCESS_KEY_ID") == 0)
		return SIM_AKID;
	if (strcmp(name, "AWS_SECRET_ACCESS_KEY") == 0)
		return SIM_SECRET;
	if (strcmp(name, "AWS_EC2_METADATA_DISABLED") == 0)
		return "true";
	if (strcmp(name, "AWS_CONFIG_FILE") == 0 ||
	    strcmp(name, "AWS_SHARED_CREDENTIALS_FILE") == 0)
		return "/nonexistent/gpucluster-bench"; /* no profiles */
	return NULL; /* nothing else of the caller's environment (HOME, profiles) */
}

static const struct gc_spec_env sim_env = { sim_env_lookup, NULL };

/* DIR/key, made and written on first use. */
static int load_or_make_key(struct gc_keypair *out, const char *path, struct gc_error *err)
{
	if (gc_keypair_load(out, path, err) == 0)
		return 0;
	if (err->code != GC_ENOTFOUND)
		return -1;
	gc_error_init(err);
	if (gc_keypair_generate(out, "gpucluster-bench", err) < 0)
		return -1;
	if (gc_keypair_write(out, path, err) < 0) {
		gc_keypair_release(out);
		return -1;
	}
	return 0;
}

/* Whether something accepts TCP connections on host:port (the node has booted). */
static bool tcp_listening(const char *host, unsigned port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	int fd, rc;

	if (inet_pton(AF_INET, host, &sa.sin_addr) != 1)
		return false;
	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return false;
	rc = connect(fd, (struct sockaddr *)&sa, sizeof(sa));
	close(fd);
	return rc == 0;
}

static const struct gc_instance *find_instance(const struct gc_instance_list *l, const char *id)
{
	for (size_t i = 0; i < l->n; i++)
		if (strcmp(l->items[i].id, id) == 0)
			return &l->items[i];
	return NULL;
}

/* Whether every launched instance runs with an address; live gets the last listing. */
struct running_wait {
	struct gc_provider *p;
	const char *cluster;
	char **ids;
	size_t n, ready;
	struct gc_instance_list *live;
};

static int poll_running(void *arg, struct gc_error *err)
{
	struct running_wait *w = arg;
	struct gc_tag_filter mine[] = { { GC_TAG_CLUSTER, w->cluster } };
	struct gc_discover_query q = { mine, 1, false };

	gc_instance_list_release(w->live);
	gc_instance_list_init(w->live);
	if (gc_provider_discover(w->p, &q, w->live, err) < 0)
		return -1;
	w->ready = 0;
	for (size_t i = 0; i < w->n; i++) {
		const struct gc_instance *in = find_instance(w->live, w->ids[i]);

		if (in && in->state == GC_STATE_RUNNING && in->public_ip)
			w->ready++;
	}
	return w->ready == w->n ? 0 : 1;
}

/* Whether every node accepts TCP on its SSH port (it has booted). */
struct listen_wait {
	const struct gc_boot *b;
	size_t next; /* the nodes before it listen */
};

static int poll_listening(void *arg, struct gc_error *err)
{
	struct listen_wait *w = arg;

	(void)err;
	while (w->next < w->b->n_nodes && tcp_listening(w->b->info[w->next].host, w->b->port))
		w->next++;
	return w->next == w->b->n_nodes ? 0 : 1;
}

/*
 * The launched instances as a bootstrap sees them, every host key pinned from the
 * console output (as gpucluster does; strict: a node whose console never shows its key
 * fails the launch), and every node listening.
 */
static int pin_and_listen(struct gc_provider *p, const struct gc_instance_list *live, unsigned port,
			  struct gc_known_hosts *kh, struct gc_log *log, struct gc_error *err)
{
	const struct gc_boot_pin_opts po = { .console_wait_ms = LAUNCH_WAIT_S * 1000,
					     .console_retry_ms = WAIT_POLL_MS,
					     .strict = true,
					     .log = log };
	struct gc_wait w = { .interval_ms = WAIT_POLL_MS,
			     .timeout_ms = LAUNCH_WAIT_S * 1000,
			     .what = "the nodes to listen on SSH" };
	struct gc_spec spec;
	struct gc_boot b;
	struct listen_wait lw = { &b, 0 };
	bool tofu;
	int rc = -1;

	bench_spec(&spec);
	spec.ssh.port = port;
	gc_boot_init(&b);
	if (gc_boot_add_nodes(&b, &spec, live, NULL, log, err) == 0 &&
	    gc_boot_pin(&b, p, kh, &po, &tofu, err) == 0)
		rc = gc_wait_until(&w, poll_listening, &lw, err);
	gc_boot_release(&b);
	return rc;
}

static int cmd_launch(int argc, char **argv)
{
	const char *endpoint, *dir, *image = UBUNTU_2204, *type = "g5.xlarge";
	uint64_t count = 0, port = 2222;
	struct gc_provider_config cfg = { 0 };
	struct gc_provider *p = NULL;
	struct gc_keypair key;
	struct gc_known_hosts kh = { 0 };
	bool kh_open = false;
	struct gc_instance_list made, live;
	struct gc_buf pub = GC_BUF_INIT(4096);
	struct gc_error err;
	struct gc_log log;
	char *key_path = NULL, *kh_path = NULL, *nodes_path = NULL, *cluster = NULL;
	char *key_id = NULL;
	char **ids = NULL;
	struct gc_keypair_request kreq = { 0 };
	char tag_key[] = GC_TAG_CLUSTER;
	struct gc_tag tags[1];
	struct running_wait rw;
	const struct gc_wait running = { .interval_ms = WAIT_POLL_MS,
					 .timeout_ms = LAUNCH_WAIT_S * 1000,
					 .what = "the instances to run" };
	FILE *f = NULL;
	double t0 = now_s();
	int rc = 1;

	if (argc < 5) {
		fprintf(stderr,
			"usage: bootstrap-runner launch AWS_ENDPOINT COUNT DIR "
			"[--image AMI] [--type TYPE] [--port N]\n");
		return 64;
	}
	endpoint = argv[2];
	dir = argv[4];
	if (gc_parse_u64(argv[3], MAX_NODES, &count) != 0 || count == 0) {
		fprintf(stderr, "bootstrap-runner: COUNT must be 1 to %d, not '%s'\n", MAX_NODES,
			argv[3]);
		return 64;
	}
	for (int i = 5; i < argc; i++) {
		if (i + 1 < argc && strcmp(argv[i], "--image") == 0) {
			image = argv[++i];
		} else if (i + 1 < argc && strcmp(argv[i], "--type") == 0) {
			type = argv[++i];
		} else if (i + 1 < argc && strcmp(argv[i], "--port") == 0) {
			if (gc_parse_u64(argv[++i], 65535, &port) != 0 || port == 0) {
				fprintf(stderr, "bootstrap-runner: bad port '%s'\n", argv[i]);
				return 64;
			}
		} else {
			fprintf(stderr, "bootstrap-runner: unknown launch option '%s'\n", argv[i]);
			return 64;
		}
	}

	gc_error_init(&err);
	gc_log_init(&log, GC_LOG_WARN, log_sink, NULL);
	gc_keypair_init(&key);
	gc_instance_list_init(&made);
	gc_instance_list_init(&live);
	key_path = gc_xasprintf("%s/key", dir);
	kh_path = gc_xasprintf("%s/known_hosts", dir);
	nodes_path = gc_xasprintf("%s/nodes", dir);
	/* one key pair and one tag per launch: the emulator serves every tool's nodes */
	cluster = gc_xasprintf("bench-%ld-%ld", (long)time(NULL), (long)getpid());
	tags[0] = (struct gc_tag){ tag_key, cluster };

	if (load_or_make_key(&key, key_path, &err) < 0 ||
	    gc_known_hosts_open(&kh, kh_path, &err) < 0)
		goto fail;
	kh_open = true;
	cfg.region = "us-east-1";
	cfg.endpoint = endpoint;
	cfg.env = &sim_env;
	cfg.log = &log;
	cfg.no_rate_limit = true;
	if (gc_provider_open(&p, &gc_provider_aws, &cfg, &err) < 0)
		goto fail;
	gc_keypair_public_line(&pub, &key);
	kreq.name = cluster;
	kreq.public_key_line = pub.data;
	if (gc_provider_import_keypair(p, &kreq, &key_id, &err) < 0)
		goto fail;

	for (uint64_t done = 0; done < count;) {
		unsigned batch = gc_provider_aws.max_create_batch;
		char *token = gc_xasprintf("%s-%" PRIu64, cluster, done);
		struct gc_create_request req = {
			.group = "bench",
			.type = type,
			.image_id = image,
			.count = count - done < batch ? (unsigned)(count - done) : batch,
			.disk_gb = 100,
			.client_token = token,
			.key_name = cluster,
			.tags = tags,
			.n_tags = 1,
		};
		int crc = gc_provider_create(p, &req, &made, &err);

		free(token);
		if (crc < 0)
			goto fail;
		done += req.count;
	}
	ids = gc_xcalloc(made.n, sizeof(*ids));
	for (size_t i = 0; i < made.n; i++)
		ids[i] = made.items[i].id;
	rw = (struct running_wait){ p, cluster, ids, made.n, 0, &live };
	if (gc_wait_until(&running, poll_running, &rw, &err) < 0 ||
	    pin_and_listen(p, &live, (unsigned)port, &kh, &log, &err) < 0)
		goto fail;
	f = fopen(nodes_path, "w");
	if (!f) {
		gc_error_set(&err, GC_EIO, "cannot write '%s': %s", nodes_path, strerror(errno));
		goto fail;
	}
	for (size_t i = 0; i < made.n; i++) {
		const struct gc_instance *in = find_instance(&live, ids[i]);

		fprintf(f, "%s %s %u\n", in->id, in->public_ip, (unsigned)port);
	}
	if (fclose(f) != 0) {
		f = NULL;
		gc_error_set(&err, GC_EIO, "cannot write '%s'", nodes_path);
		goto fail;
	}
	f = NULL;
	fprintf(stderr,
		"bootstrap-runner: %zu instances launched, pinned and listening in %.1f s\n",
		made.n, now_s() - t0);
	rc = 0;
	goto out;
fail:
	fprintf(stderr, "bootstrap-runner: launch: %s\n", err.message);
out:
	if (f)
		fclose(f);
	free(ids);
	free(key_id);
	gc_instance_list_release(&made);
	gc_instance_list_release(&live);
	gc_provider_close(p);
	if (kh_open)
		gc_known_hosts_release(&kh);
	gc_keypair_release(&key);
	gc_buf_release(&pub);
	gc_log_release(&log);
	free(key_path);
	free(kh_path);
	free(nodes_path);
	free(cluster);
	return rc;
}

/* ---- run ------------------------------------------------------------------------------- */

static const struct gc_runner_var bench_expect[] = {
	{ .name = "EXPECT_GPUS", .value = "1" },
	{ .name = "EXPECT_GPU_MODEL", .value = "A10G" },
};
#define N_EXPECT (sizeof(bench_expect) / sizeof(bench_expect[0]))

struct node_list {
	struct gc_runner_node *v;
	char **strings; /* what v's pointers point into */
	size_t n, alloc, n_strings, alloc_strings;
};

static char *keep(struct node_list *l, const char *s)
{
	GC_ALLOC_GROW(l->strings, l->n_strings + 1, l->alloc_strings);
	l->strings[l->n_strings] = gc_xstrdup(s);
	return l->strings[l->n_strings++];
}

static void node_list_release(struct node_list *l)
{
	for (size_t i = 0; i < l->n_strings; i++)
		free(l->strings[i]);
	free(l->strings);
	free(l->v);
}

static int read_nodes(struct node_list *out, const char *path, struct gc_error *err)
{
	char line[NODES_LINE_MAX], id[NODES_LINE_MAX], host[NODES_LINE_MAX];
	unsigned port;
	FILE *f = fopen(path, "r");
	int rc = 0;

	if (!f)
		return gc_error_set(err, GC_EIO, "cannot read '%s': %s", path, strerror(errno));
	while (fgets(line, sizeof(line), f)) {
		struct gc_runner_node *nd;

		if (sscanf(line, "%255s %255s %u", id, host, &port) != 3 || port == 0 ||
		    port > 65535 || out->n >= MAX_NODES) {
			rc = gc_error_set(err, GC_EINVALID, "'%s': bad line '%s'", path, line);
			break;
		}
		GC_ALLOC_GROW(out->v, out->n + 1, out->alloc);
		nd = &out->v[out->n++];
		memset(nd, 0, sizeof(*nd));
		nd->name = keep(out, id);
		nd->instance_id = nd->name;
		nd->host = keep(out, host);
		nd->port = port;
	}
	fclose(f);
	if (rc == 0 && out->n == 0)
		rc = gc_error_set(err, GC_EINVALID, "'%s' lists no nodes", path);
	return rc;
}

/* When a node reached each phase (its elapsed ms; 0: not yet), for the phase means. */
struct node_times {
	uint64_t connected;  /* the first connection */
	uint64_t uploading;  /* the upload began */
	uint64_t first_step; /* the first step began: the upload is over */
	uint64_t rebooting;  /* the last reboot was asked for */
	uint64_t back;	     /* connected again after it */
};

struct run_counts {
	size_t reboots_asked; /* GC_RUN_REBOOTING events */
	size_t reconnects;
	size_t waits;		 /* GC_RUN_WAITING_SSH: an attempt refused or timed out */
	struct node_times *node; /* one per node */
};

static void on_event(void *ctx, const struct gc_runner_event *ev)
{
	struct run_counts *c = ctx;
	struct node_times *t = &c->node[ev->node];

	switch (ev->phase) {
	case GC_RUN_REBOOTING:
		c->reboots_asked++;
		t->rebooting = ev->node_elapsed_ms;
		t->back = 0;
		break;
	case GC_RUN_RECONNECTING: c->reconnects++; break;
	case GC_RUN_WAITING_SSH: c->waits++; break;
	case GC_RUN_CONNECTED:
		if (!t->connected)
			t->connected = ev->node_elapsed_ms;
		else if (t->rebooting && !t->back)
			t->back = ev->node_elapsed_ms;
		break;
	case GC_RUN_UPLOADING: t->uploading = ev->node_elapsed_ms; break;
	case GC_RUN_STEP_START:
		if (!t->first_step)
			t->first_step = ev->node_elapsed_ms;
		break;
	case GC_RUN_STEP_DONE:
	case GC_RUN_NODE_DONE: break;
	}
}

/* Where a node's time went outside its steps: means over the nodes that had the phase. */
static void print_phases(const struct run_counts *c, size_t n)
{
	uint64_t sum[3] = { 0 };
	size_t cnt[3] = { 0 };

	for (size_t i = 0; i < n; i++) {
		const struct node_times *t = &c->node[i];

		if (t->connected) {
			sum[0] += t->connected;
			cnt[0]++;
		}
		if (t->uploading && t->first_step >= t->uploading) {
			sum[1] += t->first_step - t->uploading;
			cnt[1]++;
		}
		if (t->rebooting && t->back) {
			sum[2] += t->back - t->rebooting;
			cnt[2]++;
		}
	}
	printf("  phases per node (mean): connect %.2f s, upload %.2f s (%zu nodes), "
	       "reboot asked to connected again %.2f s (%zu nodes)\n",
	       cnt[0] ? (double)sum[0] / 1000.0 / (double)cnt[0] : 0.0,
	       cnt[1] ? (double)sum[1] / 1000.0 / (double)cnt[1] : 0.0, cnt[1],
	       cnt[2] ? (double)sum[2] / 1000.0 / (double)cnt[2] : 0.0, cnt[2]);
}

static void print_report(const struct gc_runner_report *rep, const struct gc_runner_node *nodes,
			 size_t n_steps, const struct gc_runner_step *steps)
{
	for (size_t k = 0; k < n_steps; k++) {
		size_t st[GC_STEP_NOT_NEEDED + 1] = { 0 };
		uint64_t sum = 0, max = 0;
		unsigned reboots = 0, attempts = 0;

		for (size_t i = 0; i < rep->n_nodes; i++) {
			const struct gc_runner_step_result *r = &rep->nodes[i].steps[k];

			st[r->state]++;
			sum += r->elapsed_ms;
			max = r->elapsed_ms > max ? r->elapsed_ms : max;
			reboots += r->reboots;
			attempts += r->attempts;
		}
		printf("  step %-9s ok %3zu  skipped %3zu  failed %3zu  per node: mean %6.2f s, "
		       "max %6.2f s; %u runs, %u reboots\n",
		       steps[k].name, st[GC_STEP_OK], st[GC_STEP_SKIPPED], st[GC_STEP_FAILED],
		       (double)sum / 1000.0 / (double)rep->n_nodes, (double)max / 1000.0, attempts,
		       reboots);
	}
	for (size_t i = 0; i < rep->n_nodes; i++) {
		const struct gc_runner_node_result *nr = &rep->nodes[i];

		if (nr->err.code == GC_OK)
			continue;
		printf("  FAILED %s: %s\n", nodes[i].name, nr->err.message);
		for (size_t k = 0; k < nr->n_steps; k++)
			if (nr->steps[k].state == GC_STEP_FAILED)
				printf("    %s stderr: %s\n    history: %s\n", steps[k].name,
				       nr->steps[k].err.data, nr->steps[k].history.data);
	}
}

static int cmd_run(int argc, char **argv)
{
	const char *dir;
	uint64_t concurrency = 0;
	bool smoke = true;
	struct gc_spec spec;
	struct gc_boot boot;
	struct gc_runner_var *vars = NULL;
	size_t n_vars = 0;
	struct node_list nodes = { 0 };
	struct gc_keypair key;
	struct gc_known_hosts kh = { 0 };
	bool kh_open = false;
	struct gc_runner_opts o = { 0 };
	struct gc_runner_report rep;
	struct run_counts counts = { 0 };
	struct rusage ru0, ru1;
	struct gc_error err;
	struct gc_log log;
	char *path = NULL;
	double t0, wall;
	size_t connects = 0, uploads = 0;
	int rc = 1, run_rc;

	if (argc < 3) {
		fprintf(stderr, "usage: bootstrap-runner run DIR [--concurrency N] [--no-smoke]\n");
		return 64;
	}
	dir = argv[2];
	for (int i = 3; i < argc; i++) {
		if (i + 1 < argc && strcmp(argv[i], "--concurrency") == 0) {
			if (gc_parse_u64(argv[++i], 100000, &concurrency) != 0) {
				fprintf(stderr, "bootstrap-runner: bad concurrency '%s'\n",
					argv[i]);
				return 64;
			}
		} else if (strcmp(argv[i], "--no-smoke") == 0) {
			smoke = false;
		} else {
			fprintf(stderr, "bootstrap-runner: unknown run option '%s'\n", argv[i]);
			return 64;
		}
	}

	gc_error_init(&err);
	gc_log_init(&log, GC_LOG_WARN, log_sink, NULL);
	gc_keypair_init(&key);
	gc_runner_report_init(&rep);
	bench_spec(&spec);
	gc_boot_init(&boot);
	if (gc_boot_set_steps(&boot, &spec, GC_BOOT_FULL, NULL, 0, false, &err) < 0)
		goto fail;
	if (!smoke) /* the last step */
		boot.n_steps = boot.smoke_step;
	/* the inputs of the steps that run, and the nodes' own (the instance type's facts)
	 * for every one that takes them */
	vars = gc_xcalloc(boot.n_vars + N_EXPECT * gc_n_steps + 1, sizeof(*vars));
	for (size_t i = 0; i < boot.n_vars; i++)
		if (!boot.vars[i].step || gc_boot_step_index(&boot, boot.vars[i].step) != SIZE_MAX)
			vars[n_vars++] = boot.vars[i];
	for (size_t k = 0; k < gc_n_steps; k++)
		for (size_t i = 0; gc_steps[k].node_facts && i < N_EXPECT; i++) {
			if (gc_boot_step_index(&boot, gc_steps[k].name) == SIZE_MAX)
				break;
			vars[n_vars] = bench_expect[i];
			vars[n_vars++].step = gc_steps[k].name;
		}

	path = gc_xasprintf("%s/key", dir);
	if (gc_keypair_load(&key, path, &err) < 0)
		goto fail;
	free(path);
	path = gc_xasprintf("%s/known_hosts", dir);
	if (gc_known_hosts_open(&kh, path, &err) < 0)
		goto fail;
	kh_open = true;
	free(path);
	path = gc_xasprintf("%s/nodes", dir);
	if (read_nodes(&nodes, path, &err) < 0)
		goto fail;

	o.key = &key;
	o.known_hosts = &kh;
	gc_boot_runner_opts(&boot, &o);
	o.user = "ubuntu";
	o.vars = vars;
	o.n_vars = n_vars;
	o.concurrency = (unsigned)concurrency;
	counts.node = gc_xcalloc(nodes.n, sizeof(*counts.node));
	o.cb.progress = on_event;
	o.cb.progress_ctx = &counts;
	o.log = &log;

	getrusage(RUSAGE_SELF, &ru0);
	t0 = now_s();
	run_rc = gc_runner_run(&o, nodes.v, nodes.n, &rep, &err);
	wall = now_s() - t0;
	getrusage(RUSAGE_SELF, &ru1);

	for (size_t i = 0; i < rep.n_nodes; i++) {
		connects += rep.nodes[i].connects;
		uploads += rep.nodes[i].uploaded;
	}
	printf("gpucluster runner: %zu nodes, %zu ok, %zu failed; wall %.2f s; CPU %.2f s "
	       "(user %.2f, sys %.2f); max RSS %ld KiB; %zu sessions at most; %zu connects, "
	       "%zu uploads, %zu reboots, %zu refused/timed-out attempts, %zu reconnects\n",
	       rep.n_nodes, rep.n_ok, rep.n_failed, wall,
	       tv_s(ru1.ru_utime) - tv_s(ru0.ru_utime) + tv_s(ru1.ru_stime) - tv_s(ru0.ru_stime),
	       tv_s(ru1.ru_utime) - tv_s(ru0.ru_utime), tv_s(ru1.ru_stime) - tv_s(ru0.ru_stime),
	       ru1.ru_maxrss, rep.peak_sessions, connects, uploads, counts.reboots_asked,
	       counts.waits, counts.reconnects);
	print_phases(&counts, nodes.n);
	print_report(&rep, nodes.v, boot.n_steps, boot.steps);
	if (run_rc < 0)
		goto fail;
	rc = 0;
	goto out;
fail:
	fprintf(stderr, "bootstrap-runner: run: %s\n", err.message);
out:
	fflush(stdout);
	gc_runner_report_release(&rep);
	node_list_release(&nodes);
	if (kh_open)
		gc_known_hosts_release(&kh);
	gc_keypair_release(&key);
	gc_log_release(&log);
	free(counts.node);
	free(vars);
	gc_boot_release(&boot);
	free(path);
	return rc;
}

/* ---- tree ------------------------------------------------------------------------------ */

struct tree_sample {
	uint64_t rss_kib, pss_kib;
	size_t procs;
};

/* Appends pid's children (from every thread) to v. */
static void children_of(pid_t pid, pid_t *v, size_t *n)
{
	char path[64];
	DIR *d;
	struct dirent *e;

	snprintf(path, sizeof(path), "/proc/%ld/task", (long)pid);
	d = opendir(path);
	if (!d)
		return;
	while ((e = readdir(d))) {
		char cpath[320];
		FILE *f;
		long c;

		if (e->d_name[0] == '.')
			continue;
		snprintf(cpath, sizeof(cpath), "/proc/%ld/task/%s/children", (long)pid, e->d_name);
		f = fopen(cpath, "r");
		if (!f)
			continue;
		while (*n < TREE_MAX_PROCS && fscanf(f, "%ld", &c) == 1)
			v[(*n)++] = (pid_t)c;
		fclose(f);
	}
	closedir(d);
}

/* Every process below us, breadth first, into v (TREE_MAX_PROCS long); the count. */
static size_t descendants(pid_t *v)
{
	size_t n = 0;

	children_of(getpid(), v, &n);
	for (size_t i = 0; i < n; i++)
		children_of(v[i], v, &n);
	return n;
}

static uint64_t proc_field_kib(pid_t pid, const char *file, const char *field)
{
	char path[64], line[256];
	size_t len = strlen(field);
	uint64_t v = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%ld/%s", (long)pid, file);
	f = fopen(path, "r");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (strncmp(line, field, len) == 0 && line[len] == ':') {
			char *p = line + len + 1, *end;

			while (*p == ' ' || *p == '\t')
				p++;
			end = strchr(p, ' ');
			if (end)
				*end = '\0';
			if (gc_parse_u64(p, UINT64_MAX, &v) != 0)
				v = 0;
			break;
		}
	fclose(f);
	return v;
}

/* Resident KiB from statm: far cheaper than status or smaps_rollup. */
static uint64_t proc_rss_kib(pid_t pid)
{
	char path[64];
	unsigned long size, resident;
	FILE *f;
	int n;

	snprintf(path, sizeof(path), "/proc/%ld/statm", (long)pid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	n = fscanf(f, "%lu %lu", &size, &resident);
	fclose(f);
	return n == 2 ? (uint64_t)resident * ((uint64_t)sysconf(_SC_PAGESIZE) / 1024) : 0;
}

/* One sample of the tree; PSS (a page-table walk per process) only when with_pss. */
static void tree_sample(pid_t *v, bool with_pss, struct tree_sample *peak)
{
	struct tree_sample s = { 0 };

	s.procs = descendants(v);
	for (size_t i = 0; i < s.procs; i++) {
		s.rss_kib += proc_rss_kib(v[i]);
		if (with_pss)
			s.pss_kib += proc_field_kib(v[i], "smaps_rollup", "Pss");
	}
	if (s.rss_kib > peak->rss_kib)
		peak->rss_kib = s.rss_kib;
	if (s.pss_kib > peak->pss_kib)
		peak->pss_kib = s.pss_kib;
	if (s.procs > peak->procs)
		peak->procs = s.procs;
}

static int cmd_tree(int argc, char **argv)
{
	const char *out_path;
	struct tree_sample peak = { 0 };
	struct timespec tick = { 0, TREE_SAMPLE_MS * 1000000L };
	struct rusage self;
	sigset_t chld;
	pid_t main_pid, *pids;
	int main_status = 0, status;
	bool main_done = false;
	double t0 = now_s(), main_wall = 0, term_at = 0;
	size_t leftovers = 0, samples = 0;
	FILE *f;

	if (argc < 5 || strcmp(argv[3], "--") != 0) {
		fprintf(stderr, "usage: bootstrap-runner tree OUT -- COMMAND [ARG...]\n");
		return 64;
	}
	out_path = argv[2];
	if (prctl(PR_SET_CHILD_SUBREAPER, 1L, 0L, 0L, 0L) != 0) {
		fprintf(stderr, "bootstrap-runner: PR_SET_CHILD_SUBREAPER: %s\n", strerror(errno));
		return 1;
	}
	/* SIGCHLD is taken with sigtimedwait, so a child's end wakes us at once */
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sigprocmask(SIG_BLOCK, &chld, NULL);
	main_pid = fork();
	if (main_pid < 0) {
		fprintf(stderr, "bootstrap-runner: fork: %s\n", strerror(errno));
		return 1;
	}
	if (main_pid == 0) {
		sigprocmask(SIG_UNBLOCK, &chld, NULL);
		execvp(argv[4], argv + 4);
		fprintf(stderr, "bootstrap-runner: cannot run '%s': %s\n", argv[4],
			strerror(errno));
		_exit(127);
	}
	pids = gc_xcalloc(TREE_MAX_PROCS, sizeof(*pids));
	for (;;) {
		pid_t w;

		/* waiting first: a sample now would see COMMAND before its exec */
		sigtimedwait(&chld, NULL, &tick);
		while ((w = waitpid(-1, &status, WNOHANG)) > 0)
			if (w == main_pid) {
				main_status = status;
				main_done = true;
				main_wall = now_s() - t0;
			}
		if (w < 0 && errno == ECHILD)
			break;
		if (main_done) {
			/* COMMAND is over: what is left of its tree (ssh ControlPersist
			 * masters) is asked to end, then made to */
			size_t n = descendants(pids);
			int sig = term_at > 0 && now_s() - term_at > TREE_TERM_WAIT ? SIGKILL
										    : SIGTERM;

			if (term_at == 0) {
				term_at = now_s();
				leftovers = n;
			}
			for (size_t i = 0; i < n; i++)
				kill(pids[i], sig);
		} else {
			tree_sample(pids, samples++ % TREE_PSS_EVERY == 0, &peak);
		}
	}
	getrusage(RUSAGE_SELF, &self);
	f = fopen(out_path, "w");
	if (f) {
		fprintf(f,
			"main_wall_s=%.2f peak_rss_sum_kib=%" PRIu64 " peak_pss_sum_kib=%" PRIu64
			" peak_procs=%zu leftovers=%zu samples=%zu sampler_cpu_s=%.2f\n",
			main_wall, peak.rss_kib, peak.pss_kib, peak.procs, leftovers, samples,
			tv_s(self.ru_utime) + tv_s(self.ru_stime));
		fclose(f);
	} else {
		fprintf(stderr, "bootstrap-runner: cannot write '%s': %s\n", out_path,
			strerror(errno));
	}
	free(pids);
	if (WIFEXITED(main_status))
		return WEXITSTATUS(main_status);
	return 128 + (WIFSIGNALED(main_status) ? WTERMSIG(main_status) : 0);
}

int main(int argc, char **argv)
{
	if (argc >= 2 && strcmp(argv[1], "launch") == 0)
		return cmd_launch(argc, argv);
	if (argc >= 2 && strcmp(argv[1], "run") == 0)
		return cmd_run(argc, argv);
	if (argc >= 2 && strcmp(argv[1], "tree") == 0)
		return cmd_tree(argc, argv);
	fprintf(stderr,
		"usage: bootstrap-runner launch AWS_ENDPOINT COUNT DIR [--image AMI] "
		"[--type TYPE] [--port N]\n"
		"       bootstrap-runner run DIR [--concurrency N] [--no-smoke]\n"
		"       bootstrap-runner tree OUT -- COMMAND [ARG...]\n");
	return 64;
}
