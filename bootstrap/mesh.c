/*
 * mesh.c: the cluster's internal SSH key and the launchers' files on every node (see
 * mesh.h; the design is in docs/internals/ssh-runner.md, "The mesh").
 *
 * One step, the same script on every node: the key, its public half and the files travel
 * as quoted here-documents inside the script (the runner sends a step's script on the
 * channel's stdin), and the script deletes its own copy first, so no file under the
 * runner's directory keeps the key.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bootstrap/hosts.h"
#include "bootstrap/known_hosts.h"
#include "bootstrap/mesh.h"
#include "core/alloc.h"
#include "core/engine.h"
#include "core/keygen.h"
#include "core/state.h"
#include "core/shape.h"

#define MESH_TIMEOUT_MS 120000
#define MESH_EOF	"GC_MESH_EOF"

/* Whether an instance that was given the key (a line of the members file) is gone. */
static bool member_gone(const struct gc_boot *b, const char *members)
{
	const char *p = members;

	while (*p) {
		size_t len = strcspn(p, "\n");
		bool here = len == 0;

		for (size_t i = 0; i < b->n_nodes && !here; i++)
			here = strlen(b->info[i].id) == len && memcmp(b->info[i].id, p, len) == 0;
		if (!here)
			return true;
		p += len + (p[len] == '\n');
	}
	return false;
}

/*
 * The internal key into pem (secret) and its public line into pub: the state directory's,
 * or a new one when there is none or an instance that held it is no longer a node (it
 * left by scale-in, or was replaced): the old key stays on its disk.
 */
static int mesh_key(struct gc_buf *pem, struct gc_buf *pub, const struct gc_boot *b,
		    const char *dir, const char *cluster, struct gc_error *err)
{
	char *key_path = gc_state_path(dir, GC_STATE_MESH_KEY);
	char *nodes_path = gc_state_path(dir, GC_STATE_MESH_NODES);
	struct gc_buf members = GC_BUF_INIT(1 << 20), ids = GC_BUF_INIT(1 << 20);
	struct gc_keypair kp;
	bool have_key = false, have_members = false;
	char *comment = gc_xasprintf("gpucluster-mesh:%s", cluster);
	int rc = -1;

	gc_keypair_init(&kp);
	if (gc_buf_read_file(&members, nodes_path, NULL, &have_members, err) < 0)
		goto out;
	if (have_members && !member_gone(b, members.data)) {
		struct gc_error e;

		gc_error_init(&e);
		have_key = gc_keypair_load(&kp, key_path, &e) == 0;
	}
	if (!have_key &&
	    (gc_keypair_generate(&kp, comment, err) < 0 ||
	     gc_keypair_write(&kp, key_path, err) < 0))
		goto out;
	for (size_t i = 0; i < b->n_nodes; i++)
		gc_buf_addf(&ids, "%s\n", b->info[i].id);
	if (gc_hosts_write_file(nodes_path, ids.data, ids.len, err) < 0)
		goto out;
	if (gc_keypair_private_pem(pem, &kp, err) < 0 || gc_keypair_public_line(pub, &kp) < 0)
		goto out;
	/* "TYPE BASE64 COMMENT": the comment is what authorized_keys lines are found by */
	{
		char *sp = strchr(pub->data, ' ');

		sp = sp ? strchr(sp + 1, ' ') : NULL;
		if (sp)
			gc_buf_truncate(pub, (size_t)(sp - pub->data));
		while (pub->len && pub->data[pub->len - 1] == '\n')
			gc_buf_truncate(pub, pub->len - 1);
		gc_buf_addf(pub, " %s", comment);
	}
	rc = 0;
out:
	gc_keypair_release(&kp);
	gc_buf_release(&members);
	gc_buf_release(&ids);
	free(key_path);
	free(nodes_path);
	free(comment);
	return rc;
}

/* "workers/0" -> "workers-0", the node's name on the others; "" when it is no plain word. */
static void alias_of(const char *label, char *out, size_t size)
{
	snprintf(out, size, "%s", label);
	for (char *p = out; *p; p++)
		if (*p == '/')
			*p = '-';
	if (!gc_word_of(out, "._-"))
		out[0] = '\0';
}

/* ADDR or [ADDR]:PORT, as known_hosts and ssh name a host */
static void kh_name(struct gc_buf *b, const char *host, unsigned port)
{
	if (port == 22)
		gc_buf_addstr(b, host);
	else
		gc_buf_addf(b, "[%s]:%u", host, port);
}

/* The known_hosts lines of node i: its pinned keys under its private address and name. */
static int mesh_known_hosts(struct gc_buf *out, const struct gc_session *s,
			    const struct gc_hosts *h, const struct gc_known_hosts *kh, size_t i,
			    struct gc_error *err)
{
	const struct gc_runner_node *rn = &s->boot.nodes[i];
	struct gc_buf ep = GC_BUF_INIT(0);
	char alias[128];
	size_t found = 0;

	kh_name(&ep, rn->host, rn->port ? rn->port : 22);
	alias_of(h->nodes[i].label, alias, sizeof(alias));
	for (size_t k = 0; k < kh->n; k++) {
		const struct gc_known_host *e = &kh->v[k];

		if (!e->type || strcmp(e->host, ep.data) != 0)
			continue;
		kh_name(out, h->nodes[i].private_ip, h->port);
		if (alias[0]) {
			gc_buf_addch(out, ',');
			kh_name(out, alias, h->port);
		}
		gc_buf_addf(out, " %s %s\n", e->type, e->base64);
		found++;
	}
	if (!found)
		gc_error_set(err, GC_ENOTFOUND, "%s (%s): no host key pinned for %s",
			     h->nodes[i].label, h->nodes[i].id, ep.data);
	gc_buf_release(&ep);
	return found ? 0 : -1;
}

static void heredoc(struct gc_buf *out, const char *file, const char *text)
{
	gc_buf_addf(out, "cat >\"$t/%s\" <<'" MESH_EOF "'\n%s%s" MESH_EOF "\n", file, text,
		    text[0] && text[strlen(text) - 1] != '\n' ? "\n" : "");
}

/* The files every node gets: the same text on each. */
static int mesh_files(struct gc_buf *out, const struct gc_session *s, const struct gc_hosts *h,
		      const struct gc_known_hosts *kh, struct gc_error *err)
{
	struct gc_buf mpi = GC_BUF_INIT(0), ds = GC_BUF_INIT(0), list = GC_BUF_INIT(0),
		      cfg = GC_BUF_INIT(0), known = GC_BUF_INIT(0), all = GC_BUF_INIT(0);
	struct gc_hosts_opts ho = { .format = GC_HOSTS_MPI, .private_addrs = true };
	int rc = -1;

	if (gc_hosts_format(&mpi, h, &ho, err) < 0)
		goto out;
	ho.format = GC_HOSTS_DEEPSPEED;
	if (gc_hosts_format(&ds, h, &ho, err) < 0)
		goto out;
	gc_buf_addstr(&cfg, "# the cluster's own SSH, with its internal key (gpucluster)\n");
	for (size_t i = 0; i < h->n; i++) {
		const struct gc_hosts_node *n = &h->nodes[i];
		char alias[128];

		alias_of(n->label, alias, sizeof(alias));
		gc_buf_addf(&list, "%s\n", n->private_ip);
		gc_buf_addf(&cfg, "Host %s%s%s\n\tHostName %s\n", n->private_ip,
			    alias[0] ? " " : "", alias, n->private_ip);
		gc_buf_addf(&all, " %s%s%s", n->private_ip, alias[0] ? " " : "", alias);
		if (mesh_known_hosts(&known, s, h, kh, i, err) < 0)
			goto out;
	}
	gc_buf_addf(&cfg,
		    "Host%s\n\tUser %s\n\tPort %u\n\tIdentityFile ~/.ssh/" GC_MESH_KEY_NAME "\n"
		    "\tIdentitiesOnly yes\n\tUserKnownHostsFile " GC_MESH_DIR "/known_hosts\n"
		    "\tStrictHostKeyChecking yes\n\tBatchMode yes\n",
		    all.data, h->user, h->port);
	heredoc(out, "hostfile", mpi.data);
	heredoc(out, "deepspeed_hostfile", ds.data);
	heredoc(out, "hosts", list.data);
	heredoc(out, "ssh_config", cfg.data);
	heredoc(out, "known_hosts", known.data);
	rc = 0;
out:
	gc_buf_release(&mpi);
	gc_buf_release(&ds);
	gc_buf_release(&list);
	gc_buf_release(&cfg);
	gc_buf_release(&known);
	gc_buf_release(&all);
	return rc;
}

int gc_mesh_script(struct gc_buf *out, const struct gc_session *s, const char *state_dir,
		   const char *cluster, struct gc_error *err)
{
	struct gc_hosts h;
	struct gc_known_hosts kh = { 0 };
	struct gc_buf pem = GC_BUF_INIT(0), pub = GC_BUF_INIT(0);
	char *kh_path = gc_state_path(state_dir, GC_STATE_KNOWN_HOSTS);
	int rc = -1;

	gc_hosts_init(&h, cluster, s->boot.user, s->boot.port, NULL, NULL);
	if (gc_hosts_add_boot(&h, &s->boot, s->live, NULL, err) < 0 ||
	    gc_known_hosts_open(&kh, kh_path, err) < 0 ||
	    mesh_key(&pem, &pub, &s->boot, state_dir, cluster, err) < 0)
		goto out;
	gc_buf_addstr(out,
		      "# the cluster's mesh (gpucluster): internal key, hostfiles, ssh_config\n"
		      "rm -f -- \"$0\" # it holds the internal key: no copy stays behind\n"
		      "set -eu\n"
		      "umask 077\n"
		      "if [ \"$(id -u)\" = 0 ]; then S=; else S='sudo -n'; fi\n"
		      "t=$(mktemp -d)\n"
		      "trap 'rm -rf \"$t\"' EXIT\n");
	heredoc(out, "key", pem.data);
	heredoc(out, "key.pub", pub.data);
	if (mesh_files(out, s, &h, &kh, err) < 0)
		goto out;
	gc_buf_addf(
		out,
		"mkdir -p \"$HOME/.ssh\" && chmod 700 \"$HOME/.ssh\"\n"
		"install -m 600 \"$t/key\" \"$HOME/.ssh/" GC_MESH_KEY_NAME "\"\n"
		"install -m 644 \"$t/key.pub\" \"$HOME/.ssh/" GC_MESH_KEY_NAME ".pub\"\n"
		"ak=\"$HOME/.ssh/authorized_keys\"\n"
		"{ grep -v ' gpucluster-mesh:%s$' \"$ak\" 2>/dev/null || true; cat \"$t/key.pub\"; "
		"} >\"$t/ak\"\n"
		"install -m 600 \"$t/ak\" \"$ak\"\n"
		"c=\"$HOME/.ssh/config\"\n"
		"if ! grep -qx 'Include " GC_MESH_DIR "/ssh_config' \"$c\" 2>/dev/null; then\n"
		"\t{ echo 'Include " GC_MESH_DIR "/ssh_config'; cat \"$c\" 2>/dev/null || true; } "
		">\"$t/config\"\n"
		"\tinstall -m 600 \"$t/config\" \"$c\"\n"
		"fi\n"
		"$S mkdir -p " GC_MESH_DIR "\n"
		"for f in hostfile deepspeed_hostfile hosts ssh_config known_hosts; do\n"
		"\t$S install -m 644 \"$t/$f\" \"" GC_MESH_DIR "/$f\"\n"
		"done\n",
		cluster);
	rc = 0;
out:
	gc_keypair_wipe_buf(&pem);
	gc_buf_release(&pub);
	gc_known_hosts_release(&kh);
	gc_hosts_release(&h);
	free(kh_path);
	return rc;
}

struct mesh_ctx {
	struct gc_buf script;
	const char *state_dir, *cluster;
};

/* The nodes are known: the exec step's command becomes the mesh script. */
static int mesh_prepare(void *arg, struct gc_session *s, struct gc_error *err)
{
	struct mesh_ctx *m = arg;

	if (!s->boot.n_steps)
		return 0;
	if (gc_mesh_script(&m->script, s, m->state_dir, m->cluster, err) < 0)
		return -1;
	s->boot.steps[0].script = m->script.data;
	s->boot.steps[0].script_len = m->script.len;
	return 0;
}

int gc_mesh_run(struct gc_engine *e, const struct gc_instance_list *live, struct gc_error *err)
{
	struct mesh_ctx m = { .script = GC_BUF_INIT(0),
			      .state_dir = e->state_dir,
			      .cluster = e->spec->name };
	struct gc_session_opts o = { .mode = GC_BOOT_EXEC,
				     .command = "true",
				     .timeout_ms = MESH_TIMEOUT_MS,
				     .prepare = mesh_prepare,
				     .prepare_ctx = &m };
	struct gc_session s;
	int rc = -1;

	gc_session_init(&s);
	if (gc_session_open(&s, e, live, &o, err) < 0)
		goto out;
	if (!s.boot.n_nodes) {
		rc = 0;
		goto out;
	}
	if (gc_session_run(&s, &o, err) < 0) {
		for (size_t i = 0; i < s.boot.n_nodes; i++) {
			const struct gc_runner_node_result *nr = &s.report.nodes[i];
			const struct gc_runner_step_result *sr = &nr->steps[0];

			if (nr->err.code == GC_OK)
				continue;
			gc_error_set(err, nr->err.code, "the mesh step failed on %s: %s%s%.200s",
				     s.boot.info[i].label, nr->err.message, sr->err.len ? ": " : "",
				     sr->err.data);
			break;
		}
		goto out;
	}
	rc = 0;
out:
	gc_session_release(&s);
	gc_keypair_wipe_buf(&m.script);
	return rc;
}
