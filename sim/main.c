/*
 * main.c: gpucluster-sim, the program. Parses the flags (one table drives parsing and
 * --help), builds the world, the faults and the node manager, starts the server, writes
 * the ready file once every port listens, then waits for SIGINT or SIGTERM and takes
 * everything down in reverse order.
 *
 * Signals are blocked before any thread starts, so every thread inherits the mask and
 * only the main thread's sigwait ever sees them.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <arpa/inet.h>

#include "core/alloc.h"
#include "core/hash.h"
#include "core/log.h"
#include "core/str.h"
#include "sim/node.h"
#include "sim/oidc.h"
#include "sim/server.h"
#include "sim/sim.h"

enum opt_id {
	OPT_LISTEN = 256,
	OPT_CONTROL_PORT,
	OPT_READY_FILE,
	OPT_STATE_DIR,
	OPT_REQUEST_LOG,
	OPT_LATENCY,
	OPT_FAULT,
	OPT_NODE_FAULT,
	OPT_NO_RATE_LIMITS,
	OPT_SEED,
	OPT_PENDING,
	OPT_TERMINATE,
	OPT_TERMINATED_VISIBLE,
	OPT_RECYCLE,
	OPT_EVENTUAL,
	OPT_NO_DEFAULT_VPC,
	OPT_NO_SSH,
	OPT_SSH_PORT,
	OPT_NODE_NET,
	OPT_REBOOT,
	OPT_CRED,
	OPT_OIDC_CLIENT_ID,
	OPT_HELP = 'h',
	OPT_VERBOSE = 'v',
	OPT_PORT = 512, /* + enum sim_cloud: --NAME-port, one for each row of the frontend table */
};

struct opt_doc {
	struct option opt;
	const char *arg;
	const char *help;
};

/* clang-format off */
static const struct opt_doc opts[] = {
	{ { "listen", required_argument, NULL, OPT_LISTEN }, "ADDR",
	  "address every port binds to, inside 127.0.0.0/8 (default 127.0.0.1)" },
	/* here all_opts puts the clouds' --NAME-port */
	{ { "control-port", required_argument, NULL, OPT_CONTROL_PORT }, "N",
	  "control API port (default 0: a free port)" },
	{ { "ready-file", required_argument, NULL, OPT_READY_FILE }, "FILE",
	  "write the endpoints as JSON here once everything listens" },
	{ { "state-dir", required_argument, NULL, OPT_STATE_DIR }, "DIR",
	  "where node roots live (default: a temporary directory removed at exit)" },
	{ { "request-log", required_argument, NULL, OPT_REQUEST_LOG }, "FILE",
	  "append one JSON line per cloud API call" },
	{ { "latency-ms", required_argument, NULL, OPT_LATENCY }, "N",
	  "add N ms to every cloud API call" },
	{ { "fault", required_argument, NULL, OPT_FAULT }, "RULE",
	  "inject a fault, CLOUD:ACTION:KIND[,key=value...], hostile,mode=M for broken "
	  "answers (repeatable; see docs/sim.md)" },
	{ { "node-fault", required_argument, NULL, OPT_NODE_FAULT }, "RULE",
	  "node fault for new instances, KIND[,p=P][,call=N] (repeatable)" },
	{ { "no-rate-limits", no_argument, NULL, OPT_NO_RATE_LIMITS }, NULL,
	  "turn the clouds' documented rate limits off" },
	{ { "seed", required_argument, NULL, OPT_SEED }, "N",
	  "seed for ids and fault dice (default: random)" },
	{ { "pending-ms", required_argument, NULL, OPT_PENDING }, "N",
	  "launch -> running (default 1500)" },
	{ { "terminate-ms", required_argument, NULL, OPT_TERMINATE }, "N",
	  "terminate -> terminated (default 1000)" },
	{ { "terminated-visible-ms", required_argument, NULL, OPT_TERMINATED_VISIBLE }, "N",
	  "how long EC2 lists terminated instances (default 3600000)" },
	{ { "tencent-recycle-bin", no_argument, NULL, OPT_RECYCLE }, NULL,
	  "Tencent TerminateInstances moves to the recycle bin first" },
	{ { "eventual-consistency", no_argument, NULL, OPT_EVENTUAL }, NULL,
	  "EC2 and ECS: a new instance, security group or key pair is unknown to the first "
	  "call of each kind that names it, as their guides warn (docs/sim.md)" },
	{ { "no-default-vpc", no_argument, NULL, OPT_NO_DEFAULT_VPC }, NULL,
	  "no region has a default VPC: a launch must name a subnet of the user's VPC" },
	{ { "no-ssh", no_argument, NULL, OPT_NO_SSH }, NULL,
	  "API only: instances are not SSH targets" },
	{ { "ssh-port", required_argument, NULL, OPT_SSH_PORT }, "N",
	  "port of every node's sshd (default 2222)" },
	{ { "node-net", required_argument, NULL, OPT_NODE_NET }, "CIDR",
	  "loopback network node addresses come from (default 127.77.0.0/16)" },
	{ { "reboot-ms", required_argument, NULL, OPT_REBOOT }, "N",
	  "how long a node reboot keeps SSH down (default 3000)" },
	{ { "cred", required_argument, NULL, OPT_CRED }, "CLOUD:ID:SECRET[:SITE]",
	  "accept another access key (repeatable, up to 3 per cloud); SITE intl: an "
	  "international-site account, priced in USD (default china: CNY)" },
	{ { "oidc-client-id", required_argument, NULL, OPT_OIDC_CLIENT_ID }, "CLOUD:ID",
	  "an audience CLOUD's identity provider trusts instead of the default (repeatable)" },
	{ { "verbose", no_argument, NULL, OPT_VERBOSE }, NULL,
	  "log every API call on stderr" },
	{ { "help", no_argument, NULL, OPT_HELP }, NULL, "show this help" },
};
/* clang-format on */
#define N_OPTS (sizeof(opts) / sizeof(opts[0]))
#define N_ALL  (N_OPTS + SIM_NCLOUDS)

/* The text of the clouds' port options. */
struct port_opts {
	char name[SIM_NCLOUDS][32];
	char help[SIM_NCLOUDS][64];
};

/* Every option: the table's --listen, a --NAME-port for each cloud, the rest of the table. */
static void all_opts(struct opt_doc out[N_ALL], struct port_opts *p)
{
	size_t n = 0;

	out[n++] = opts[0];
	for (int c = 0; c < SIM_NCLOUDS; c++) {
		const struct sim_frontend *fe = sim_frontend((enum sim_cloud)c);

		snprintf(p->name[c], sizeof(p->name[c]), "%s-port", fe->name);
		snprintf(p->help[c], sizeof(p->help[c]),
			 "%s endpoint port (default 0: a free port)", fe->endpoint);
		out[n++] = (struct opt_doc){ { p->name[c], required_argument, NULL, OPT_PORT + c },
					     "N",
					     p->help[c] };
	}
	for (size_t i = 1; i < N_OPTS; i++)
		out[n++] = opts[i];
}

struct args {
	const char *listen;
	int ports[SIM_NCLOUDS + 1];
	const char *ready_file;
	const char *state_dir;
	const char *request_log;
	unsigned latency_ms;
	const char **faults;
	size_t n_faults;
	const char **node_faults;
	size_t n_node_faults;
	bool no_rate_limits;
	bool seed_given;
	uint64_t seed;
	struct sim_timing timing;
	bool recycle;
	bool eventual;
	bool no_ssh;
	int ssh_port;
	const char *node_net;
	unsigned reboot_ms;
	const char **client_ids; /* --oidc-client-id values, CLOUD:ID */
	size_t n_client_ids;
	bool verbose;
};

static void usage(FILE *out)
{
	struct opt_doc all[N_ALL];
	struct port_opts ports;

	all_opts(all, &ports);
	fprintf(out, "usage: gpucluster-sim [options]\n\nA local emulator of the ");
	for (int c = 0; c < SIM_NCLOUDS; c++) {
		const char *sep = c == 0 ? "" : c == SIM_NCLOUDS - 1 ? " and " : ", ";

		fprintf(out, "%s%s", sep, sim_frontend((enum sim_cloud)c)->title);
	}
	fprintf(out,
		" APIs whose\n"
		"instances are SSH targets. Stop it with SIGINT or SIGTERM.\n\n"
		"options:\n");
	for (size_t i = 0; i < N_ALL; i++) {
		const struct opt_doc *o = &all[i];
		char left[64];
		if (o->opt.val < 256)
			snprintf(left, sizeof(left), "-%c, --%s%s%s", o->opt.val, o->opt.name,
				 o->arg ? " " : "", o->arg ? o->arg : "");
		else
			snprintf(left, sizeof(left), "    --%s%s%s", o->opt.name, o->arg ? " " : "",
				 o->arg ? o->arg : "");
		fprintf(out, "  %-36s %s\n", left, o->help);
	}
	fprintf(out,
		"\nDefault credentials, the ready file, the control API and the fault syntax\n"
		"are described in docs/sim.md.\n");
}

static int parse_uint(const char *flag, const char *s, uint64_t max, uint64_t *out)
{
	if (gc_parse_u64(s, max, out) != 0) {
		fprintf(stderr, "gpucluster-sim: --%s: '%s' is not a number from 0 to %llu\n", flag,
			s, (unsigned long long)max);
		return -1;
	}
	return 0;
}

static int add_cred(struct sim_config *cfg, const char *spec)
{
	char *copy = gc_xstrdup(spec);
	char *id = strchr(copy, ':'), *secret = NULL, *site;
	char names[SIM_CLOUD_NAMES_MAX];
	enum sim_cloud c;
	int ret = -1;

	if (id) {
		*id++ = '\0';
		secret = strchr(id, ':');
	}
	if (!secret || sim_cloud_parse(copy, &c) != 0) {
		sim_cloud_names(names, sizeof(names));
		fprintf(stderr,
			"gpucluster-sim: --cred: expected CLOUD:ID:SECRET[:SITE], with CLOUD one "
			"of %s\n",
			names);
		goto out;
	}
	*secret++ = '\0';
	/* an optional :SITE after the secret: china (the default) or intl */
	if ((site = strrchr(secret, ':')) && (!strcmp(site, ":intl") || !strcmp(site, ":china")))
		*site++ = '\0';
	else
		site = NULL;
	if (!*id || !*secret || strlen(id) >= sizeof(cfg->creds[0][0].id) ||
	    strlen(secret) >= sizeof(cfg->creds[0][0].secret)) {
		fprintf(stderr, "gpucluster-sim: --cred: empty or too long id or secret\n");
		goto out;
	}
	if (cfg->n_creds[c] >= SIM_MAX_CREDS) {
		fprintf(stderr, "gpucluster-sim: --cred: at most %d credentials per cloud\n",
			SIM_MAX_CREDS);
		goto out;
	}
	snprintf(cfg->creds[c][cfg->n_creds[c]].id, sizeof(cfg->creds[c][0].id), "%s", id);
	snprintf(cfg->creds[c][cfg->n_creds[c]].secret, sizeof(cfg->creds[c][0].secret), "%s",
		 secret);
	cfg->creds[c][cfg->n_creds[c]].intl = site && !strcmp(site, "intl");
	cfg->n_creds[c]++;
	ret = 0;
out:
	free(copy);
	return ret;
}

/* Returns 0 to run, 1 to exit successfully (--help), 2 on a usage error. */
static int parse_args(int argc, char **argv, struct args *a, struct sim_config *cfg)
{
	struct option longopts[N_ALL + 1];
	struct opt_doc all[N_ALL];
	struct port_opts ports;
	uint64_t v;
	int c;

	all_opts(all, &ports);
	memset(longopts, 0, sizeof(longopts));
	for (size_t i = 0; i < N_ALL; i++)
		longopts[i] = all[i].opt;

	while ((c = getopt_long(argc, argv, "hv", longopts, NULL)) != -1) {
		const char *name = NULL;
		for (size_t i = 0; i < N_ALL; i++)
			if (all[i].opt.val == c)
				name = all[i].opt.name;
		if (c >= OPT_PORT && c < OPT_PORT + SIM_NCLOUDS) {
			if (parse_uint(name, optarg, 65535, &v) != 0)
				return 2;
			a->ports[c - OPT_PORT] = (int)v;
			continue;
		}
		switch (c) {
		case OPT_LISTEN: a->listen = optarg; break;
		case OPT_CONTROL_PORT:
			if (parse_uint(name, optarg, 65535, &v) != 0)
				return 2;
			a->ports[SIM_SERVER_CONTROL] = (int)v;
			break;
		case OPT_READY_FILE: a->ready_file = optarg; break;
		case OPT_STATE_DIR: a->state_dir = optarg; break;
		case OPT_REQUEST_LOG: a->request_log = optarg; break;
		case OPT_LATENCY:
			if (parse_uint(name, optarg, 600000, &v) != 0)
				return 2;
			a->latency_ms = (unsigned)v;
			break;
		case OPT_FAULT:
			a->faults = gc_xreallocarray(a->faults, a->n_faults + 1, sizeof(char *));
			a->faults[a->n_faults++] = optarg;
			break;
		case OPT_NODE_FAULT:
			a->node_faults = gc_xreallocarray(a->node_faults, a->n_node_faults + 1,
							  sizeof(char *));
			a->node_faults[a->n_node_faults++] = optarg;
			break;
		case OPT_NO_RATE_LIMITS: a->no_rate_limits = true; break;
		case OPT_SEED:
			if (parse_uint(name, optarg, UINT64_MAX, &a->seed) != 0)
				return 2;
			a->seed_given = true;
			break;
		case OPT_PENDING:
		case OPT_TERMINATE:
		case OPT_TERMINATED_VISIBLE:
		case OPT_REBOOT:
			if (parse_uint(name, optarg, 86400000, &v) != 0)
				return 2;
			if (c == OPT_PENDING)
				a->timing.pending_ms = (unsigned)v;
			else if (c == OPT_TERMINATE)
				a->timing.terminate_ms = (unsigned)v;
			else if (c == OPT_TERMINATED_VISIBLE)
				a->timing.terminated_visible_ms = (unsigned)v;
			else
				a->reboot_ms = (unsigned)v;
			break;
		case OPT_RECYCLE: a->recycle = true; break;
		case OPT_EVENTUAL: a->eventual = true; break;
		case OPT_NO_SSH: a->no_ssh = true; break;
		case OPT_NO_DEFAULT_VPC: cfg->no_default_vpc = true; break;
		case OPT_SSH_PORT:
			if (parse_uint(name, optarg, 65535, &v) != 0 || v == 0) {
				if (v == 0)
					fprintf(stderr,
						"gpucluster-sim: --ssh-port must not be 0\n");
				return 2;
			}
			a->ssh_port = (int)v;
			break;
		case OPT_NODE_NET: a->node_net = optarg; break;
		case OPT_CRED:
			if (add_cred(cfg, optarg) != 0)
				return 2;
			break;
		case OPT_OIDC_CLIENT_ID:
			a->client_ids = gc_xreallocarray(a->client_ids, a->n_client_ids + 1,
							 sizeof(char *));
			a->client_ids[a->n_client_ids++] = optarg;
			break;
		case OPT_VERBOSE: a->verbose = true; break;
		case OPT_HELP: usage(stdout); return 1;
		default: fprintf(stderr, "gpucluster-sim: try --help\n"); return 2;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "gpucluster-sim: unexpected argument '%s' (try --help)\n",
			argv[optind]);
		return 2;
	}
	return 0;
}

static int check_listen(const char *addr)
{
	struct in_addr in;

	if (inet_pton(AF_INET, addr, &in) != 1) {
		fprintf(stderr, "gpucluster-sim: --listen: '%s' is not an IPv4 address\n", addr);
		return -1;
	}
	if ((ntohl(in.s_addr) >> 24) != 127) {
		fprintf(stderr,
			"gpucluster-sim: --listen: '%s' is outside 127.0.0.0/8; the emulator "
			"accepts any credentials it was given and must only be reachable from "
			"this machine\n",
			addr);
		return -1;
	}
	return 0;
}

/* Removes dir and everything under it, not following symbolic links. */
static void remove_tree_at(int parent, const char *name)
{
	int fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	DIR *d;
	struct dirent *e;

	if (fd < 0) {
		unlinkat(parent, name, 0);
		return;
	}
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return;
	}
	while ((e = readdir(d)) != NULL) {
		struct stat st;
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		if (fstatat(fd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode)) {
			/* a sandboxed tool may have left a directory without write permission */
			fchmodat(fd, e->d_name, 0700, 0);
			remove_tree_at(fd, e->d_name);
		} else {
			unlinkat(fd, e->d_name, 0);
		}
	}
	closedir(d);
	unlinkat(parent, name, AT_REMOVEDIR);
}

/* The issuer and what a workflow's runner would export for it (sim/oidc.h). */
static json_t *oidc_json(const struct sim *sim)
{
	char issuer[SIM_OIDC_ISSUER_MAX + 1], *url;
	json_t *o;

	sim_oidc_issuer(sim->oidc, issuer);
	url = gc_xasprintf("%s/oidc/token?api-version=2.0", issuer);
	o = json_pack("{s:s, s:s, s:s}", "issuer", issuer, "token_url", url, "request_token",
		      sim_oidc_request_token(sim->oidc));
	free(url);
	return o;
}

/* Adds the --oidc-client-id values to the issuer. */
static int oidc_client_ids(struct sim_oidc *o, const struct args *a)
{
	for (size_t i = 0; i < a->n_client_ids; i++) {
		const char *colon = strchr(a->client_ids[i], ':');
		char cloud[16], names[SIM_CLOUD_NAMES_MAX];
		enum sim_cloud c;

		if (!colon || (size_t)(colon - a->client_ids[i]) >= sizeof(cloud)) {
			fprintf(stderr, "gpucluster-sim: --oidc-client-id: expected CLOUD:ID\n");
			return -1;
		}
		snprintf(cloud, sizeof(cloud), "%.*s", (int)(colon - a->client_ids[i]),
			 a->client_ids[i]);
		if (sim_cloud_parse(cloud, &c) != 0 ||
		    sim_oidc_add_client_id(o, c, colon + 1) != 0) {
			sim_cloud_names(names, sizeof(names));
			fprintf(stderr,
				"gpucluster-sim: --oidc-client-id '%s': expected CLOUD:ID with CLOUD "
				"one of %s, an ID of 1-%d characters, at most %d per cloud\n",
				a->client_ids[i], names, SIM_OIDC_CLIENT_ID_MAX,
				SIM_OIDC_MAX_CLIENT_IDS);
			return -1;
		}
	}
	return 0;
}

static int write_ready_file(const char *path, const struct args *a, const struct sim_server *srv,
			    const char *state_dir, const struct sim *sim)
{
	const char *host = a->listen;
	char *tmp = gc_xasprintf("%s.tmp.%ld", path, (long)getpid());
	json_t *doc = json_object();
	int ret = -1;

	json_object_set_new(doc, "pid", json_integer(getpid()));
	for (int i = 0; i <= SIM_NCLOUDS; i++) {
		char *url = gc_xasprintf("http://%s:%d", host, sim_server_port(srv, i));
		json_object_set_new(doc,
				    i < SIM_NCLOUDS ? sim_cloud_name((enum sim_cloud)i) : "control",
				    json_string(url));
		free(url);
	}
	json_object_set_new(doc, "ssh_port", a->no_ssh ? json_null() : json_integer(a->ssh_port));
	json_object_set_new(doc, "node_net", a->no_ssh ? json_null() : json_string(a->node_net));
	json_object_set_new(doc, "state_dir", json_string(state_dir));
	json_object_set_new(doc, "oidc", oidc_json(sim));
	/* written under another name and renamed, so a reader never sees half a file */
	if (json_dump_file(doc, tmp, JSON_INDENT(2) | JSON_PRESERVE_ORDER) != 0) {
		fprintf(stderr, "gpucluster-sim: cannot write '%s'\n", tmp);
		goto out;
	}
	if (rename(tmp, path) != 0) {
		fprintf(stderr, "gpucluster-sim: cannot rename '%s' to '%s': %s\n", tmp, path,
			strerror(errno));
		unlink(tmp);
		goto out;
	}
	ret = 0;
out:
	json_decref(doc);
	free(tmp);
	return ret;
}

static void log_to_stderr(void *ctx, enum gc_log_level level, const char *line)
{
	(void)ctx;
	(void)level;
	fprintf(stderr, "gpucluster-sim: %s\n", line);
}

int main(int argc, char **argv)
{
	struct args a;
	struct sim sim;
	struct sim_server_config scfg;
	struct sim_server *srv = NULL;
	struct sim_nodes *nodes = NULL;
	struct gc_log log;
	struct gc_error err;
	char *temp_dir = NULL, *gh_sock = NULL;
	const char *state_dir;
	sigset_t sigs;
	int sig, rc, status = 1;

	memset(&a, 0, sizeof(a));
	memset(&sim, 0, sizeof(sim));
	a.listen = "127.0.0.1";
	a.timing.pending_ms = 1500;
	a.timing.terminate_ms = 1000;
	a.timing.terminated_visible_ms = 3600000;
	a.ssh_port = 2222;
	a.node_net = "127.77.0.0/16";
	a.reboot_ms = 3000;
	sim_config_defaults(&sim.cfg);
	gc_error_init(&err);

	rc = parse_args(argc, argv, &a, &sim.cfg);
	if (rc != 0) {
		free(a.faults);
		free(a.node_faults);
		free(a.client_ids);
		return rc == 1 ? 0 : 2;
	}
	if (check_listen(a.listen) != 0) {
		free(a.faults);
		free(a.node_faults);
		free(a.client_ids);
		return 2;
	}
	if (!a.seed_given && gc_random_bytes(&a.seed, sizeof(a.seed)) != 0)
		a.seed = (uint64_t)time(NULL) ^ (uint64_t)getpid();
	gc_log_init(&log, a.verbose ? GC_LOG_INFO : GC_LOG_WARN, log_to_stderr, NULL);

	/* SIGINT and SIGTERM are taken by sigwait below; every thread inherits this mask */
	sigemptyset(&sigs);
	sigaddset(&sigs, SIGINT);
	sigaddset(&sigs, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &sigs, NULL);
	signal(SIGPIPE, SIG_IGN);

	if (a.state_dir) {
		if (mkdir(a.state_dir, 0700) != 0 && errno != EEXIST) {
			fprintf(stderr, "gpucluster-sim: cannot create state dir '%s': %s\n",
				a.state_dir, strerror(errno));
			goto out;
		}
		state_dir = a.state_dir;
	} else {
		const char *tmpdir = getenv("TMPDIR");
		temp_dir = gc_xasprintf("%s/gpucluster-sim.XXXXXX",
					tmpdir && *tmpdir ? tmpdir : "/tmp");
		if (!mkdtemp(temp_dir)) {
			fprintf(stderr, "gpucluster-sim: cannot create a temporary directory: %s\n",
				strerror(errno));
			free(temp_dir);
			temp_dir = NULL;
			goto out;
		}
		state_dir = temp_dir;
	}

	sim.world = sim_world_new(&a.timing, a.seed, NULL);
	sim.world->tencent_recycle = a.recycle;
	sim.world->eventual = a.eventual ? 1 : 0;
	sim.faults = sim_faults_new(a.seed ^ 0x9e3779b97f4a7c15ull, NULL);
	sim.nonces = sim_nonces_new();
	sim_faults_set_rate_limits(sim.faults, !a.no_rate_limits);
	sim.oidc = sim_oidc_new(&err);
	if (!sim.oidc) {
		fprintf(stderr, "gpucluster-sim: %s\n", err.message);
		goto out;
	}
	if (oidc_client_ids(sim.oidc, &a) != 0)
		goto out;
	sim_faults_set_latency(sim.faults, a.latency_ms);
	for (size_t i = 0; i < a.n_faults; i++) {
		if (sim_faults_add(sim.faults, a.faults[i], &err) != 0) {
			fprintf(stderr, "gpucluster-sim: --fault '%s': %s\n", a.faults[i],
				err.message);
			goto out;
		}
	}
	if (!a.no_ssh) {
		struct sim_nodes_config ncfg;

		memset(&ncfg, 0, sizeof(ncfg));
		ncfg.state_dir = state_dir;
		ncfg.net = a.node_net;
		ncfg.ssh_port = a.ssh_port;
		ncfg.reboot_ms = a.reboot_ms;
		nodes = sim_nodes_new(&ncfg, &err);
		if (!nodes) {
			fprintf(stderr,
				"gpucluster-sim: cannot start the SSH nodes: %s (--no-ssh runs "
				"the APIs alone)\n",
				err.message);
			goto out;
		}
		sim.nodes = nodes;
		sim.world->node_ops = sim_nodes_ops();
		sim.world->node_ctx = nodes;
	} else if (a.n_node_faults) {
		fprintf(stderr, "gpucluster-sim: --node-fault needs SSH nodes (drop --no-ssh)\n");
		goto out;
	}
	for (size_t i = 0; i < a.n_node_faults; i++) {
		if (sim_nodes_add_fault_rule(nodes, a.node_faults[i], &err) != 0) {
			fprintf(stderr, "gpucluster-sim: --node-fault '%s': %s\n", a.node_faults[i],
				err.message);
			goto out;
		}
	}

	memset(&scfg, 0, sizeof(scfg));
	scfg.listen = a.listen;
	memcpy(scfg.ports, a.ports, sizeof(scfg.ports));
	scfg.request_log = a.request_log;
	scfg.log = a.verbose ? &log : NULL;
	if (nodes)
		scfg.control_unix = gh_sock = gc_xasprintf("%s/github.sock", state_dir);
	srv = sim_server_start(&sim, &scfg, &err);
	if (!srv) {
		fprintf(stderr, "gpucluster-sim: %s\n", err.message);
		goto out;
	}
	{
		/* the issuer is the control port: only now is its port known */
		char *issuer = gc_xasprintf("http://%s:%d", a.listen,
					    sim_server_port(srv, SIM_SERVER_CONTROL));
		sim_oidc_set_issuer(sim.oidc, issuer);
		free(issuer);
	}
	if (a.ready_file && write_ready_file(a.ready_file, &a, srv, state_dir, &sim) != 0)
		goto out;
	if (a.verbose) {
		fprintf(stderr, "gpucluster-sim:");
		for (int i = 0; i < SIM_NCLOUDS; i++)
			fprintf(stderr, " %s :%d,", sim_cloud_name((enum sim_cloud)i),
				sim_server_port(srv, i));
		fprintf(stderr, " control :%d on %s\n", sim_server_port(srv, SIM_SERVER_CONTROL),
			a.listen);
	}

	while (sigwait(&sigs, &sig) != 0)
		;
	if (a.verbose)
		fprintf(stderr, "gpucluster-sim: %s, shutting down\n", strsignal(sig));
	status = 0;
out:
	sim_server_stop(srv);
	free(gh_sock);
	/* the world stops its nodes through the hooks, then the manager goes */
	if (sim.world)
		sim_world_free(sim.world);
	if (nodes)
		sim_nodes_free(nodes);
	if (sim.faults)
		sim_faults_free(sim.faults);
	sim_nonces_free(sim.nonces);
	sim_oidc_free(sim.oidc);
	if (a.ready_file && status == 0)
		unlink(a.ready_file);
	if (temp_dir) {
		remove_tree_at(AT_FDCWD, temp_dir);
		free(temp_dir);
	}
	gc_log_release(&log);
	free(a.faults);
	free(a.node_faults);
	free(a.client_ids);
	return status;
}
