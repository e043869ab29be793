/*
 * hosts.c: the cluster's nodes as hostfiles, torchrun variables, an ssh_config, an
 * Ansible inventory or JSON (see hosts.h), and the atomic write of such a file.
 *
 * Each format is written for the parser that reads it, which is where the care goes:
 * DeepSpeed's hostfile reader rejects anything but "HOST slots=N" lines (older versions
 * even choke on comments), ssh_config expands % tokens and splits unquoted values at
 * spaces, and an Ansible host line is split like a shell line and its ssh arguments are
 * split again before OpenSSH parses them a third time. Exact expected texts live in
 * tests/unit/test-hosts.c.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "bootstrap/hosts.h"
#include "bootstrap/ssh.h"
#include "core/alloc.h"
#include "core/shape.h"

const char *const gc_hosts_format_names[] = {
	[GC_HOSTS_MPI] = "mpi",
	[GC_HOSTS_DEEPSPEED] = "deepspeed",
	[GC_HOSTS_TORCHRUN] = "torchrun",
	[GC_HOSTS_SSH_CONFIG] = "ssh-config",
	[GC_HOSTS_ANSIBLE] = "ansible",
	[GC_HOSTS_JSON] = "json",
	NULL,
};

int gc_hosts_format_find(const char *name, enum gc_hosts_format *out)
{
	for (int i = 0; gc_hosts_format_names[i]; i++) {
		if (strcmp(gc_hosts_format_names[i], name) == 0) {
			*out = (enum gc_hosts_format)i;
			return 0;
		}
	}
	return -1;
}

static char *dup_or_null(const char *s)
{
	return s ? gc_xstrdup(s) : NULL;
}

void gc_hosts_init(struct gc_hosts *h, const char *cluster, const char *user, unsigned port,
		   const char *identity_file, const char *known_hosts_file)
{
	memset(h, 0, sizeof(*h));
	h->cluster = gc_xstrdup(cluster ? cluster : "");
	h->user = gc_xstrdup(user ? user : "");
	h->port = port ? port : 22;
	h->identity_file = dup_or_null(identity_file);
	h->known_hosts_file = dup_or_null(known_hosts_file);
}

void gc_hosts_release(struct gc_hosts *h)
{
	if (!h)
		return;
	for (size_t i = 0; i < h->n; i++) {
		struct gc_hosts_node *n = &h->nodes[i];

		free(n->label);
		free(n->id);
		free(n->group);
		free(n->public_ip);
		free(n->private_ip);
		free(n->type);
		free(n->zone);
		free(n->gpu_model);
	}
	free(h->nodes);
	free(h->cluster);
	free(h->user);
	free(h->identity_file);
	free(h->known_hosts_file);
	memset(h, 0, sizeof(*h));
}

/* An IPv4 or IPv6 literal, the only addresses written into files. */
static bool ip_literal(const char *s)
{
	unsigned char addr[16];

	return s && (inet_pton(AF_INET, s, addr) == 1 || inet_pton(AF_INET6, s, addr) == 1);
}

/* A name from the cloud, with control characters as '?': every format is line based. */
static char *clean(const char *s)
{
	char *c = gc_xstrdup(s ? s : "");

	for (char *p = c; *p; p++)
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = '?';
	return c;
}

void gc_hosts_add_node(struct gc_hosts *h, const struct gc_hosts_node_in *n)
{
	struct gc_hosts_node *c;

	GC_ALLOC_GROW(h->nodes, h->n + 1, h->alloc);
	c = &h->nodes[h->n++];
	memset(c, 0, sizeof(*c));
	c->label = clean(n->label);
	c->id = clean(n->id);
	c->group = clean(n->group);
	c->index = n->index;
	c->public_ip = ip_literal(n->public_ip) ? gc_xstrdup(n->public_ip) : NULL;
	c->private_ip = ip_literal(n->private_ip) ? gc_xstrdup(n->private_ip) : NULL;
	c->type = n->type && *n->type ? clean(n->type) : NULL;
	c->zone = n->zone && *n->zone ? clean(n->zone) : NULL;
	c->have_facts = n->have_facts;
	c->gpus = n->have_facts ? n->gpus : 0;
	c->gpu_model = n->have_facts && n->gpu_model && *n->gpu_model ? clean(n->gpu_model) : NULL;
	c->pinned = n->pinned;
}

int gc_hosts_add_boot(struct gc_hosts *h, const struct gc_boot *b,
		      const struct gc_instance_list *live, const struct gc_known_hosts *kh,
		      struct gc_error *err)
{
	for (size_t i = 0; i < b->n_nodes; i++) {
		const struct gc_boot_node *bn = &b->info[i];
		const struct gc_instance *in = NULL;
		struct gc_hosts_node_in n;

		for (size_t k = 0; k < live->n && !in; k++)
			if (live->items[k].id && strcmp(live->items[k].id, bn->id) == 0)
				in = &live->items[k];
		if (!in)
			return gc_error_set(err, GC_ENOTFOUND,
					    "node '%s' (%s) is not among the cluster's instances",
					    bn->label, bn->id);
		memset(&n, 0, sizeof(n));
		n.label = bn->label;
		n.id = bn->id;
		n.group = bn->group;
		n.index = bn->index;
		n.public_ip = in->public_ip;
		n.private_ip = in->private_ip;
		n.type = bn->type;
		n.zone = in->zone;
		n.have_facts = bn->have_facts;
		n.gpus = bn->facts.gpus;
		n.gpu_model = bn->facts.gpu_model;
		n.pinned = kh && bn->host &&
			gc_known_hosts_pinned(kh, bn->host, b->port, bn->id, true);
		gc_hosts_add_node(h, &n);
	}
	return 0;
}

const char *gc_hosts_address(const struct gc_hosts *h, size_t i)
{
	const struct gc_hosts_node *n = &h->nodes[i];

	return n->public_ip ? n->public_ip : n->private_ip;
}

const char *gc_hosts_master_addr(const struct gc_hosts *h)
{
	if (!h->n)
		return NULL;
	return h->nodes[0].private_ip ? h->nodes[0].private_ip : h->nodes[0].public_ip;
}

unsigned gc_hosts_slots(const struct gc_hosts *h, size_t i)
{
	const struct gc_hosts_node *n = &h->nodes[i];

	return n->have_facts && n->gpus ? n->gpus : 1;
}

void gc_hosts_env(const struct gc_hosts *h, size_t i, unsigned master_port,
		  struct gc_hosts_var out[GC_HOSTS_N_ENV])
{
	const char *master = gc_hosts_master_addr(h);

	out[0].name = "MASTER_ADDR";
	snprintf(out[0].value, sizeof(out[0].value), "%s", master ? master : "");
	out[1].name = "MASTER_PORT";
	snprintf(out[1].value, sizeof(out[1].value), "%u",
		 master_port ? master_port : GC_HOSTS_MASTER_PORT);
	out[2].name = "NNODES";
	snprintf(out[2].value, sizeof(out[2].value), "%zu", h->n);
	out[3].name = "NODE_RANK";
	snprintf(out[3].value, sizeof(out[3].value), "%zu", i);
	out[4].name = "NPROC_PER_NODE";
	snprintf(out[4].value, sizeof(out[4].value), "%u", gc_hosts_slots(h, i));
}

void gc_hosts_pet_env(const struct gc_hosts *h, size_t i, unsigned master_port,
		      struct gc_hosts_var out[GC_HOSTS_N_ENV])
{
	static const char *const pet[GC_HOSTS_N_ENV] = { "PET_MASTER_ADDR", "PET_MASTER_PORT",
							 "PET_NNODES", "PET_NODE_RANK",
							 "PET_NPROC_PER_NODE" };

	gc_hosts_env(h, i, master_port, out);
	for (size_t k = 0; k < GC_HOSTS_N_ENV; k++)
		out[k].name = pet[k];
}

/* ---- quoting ------------------------------------------------------------------------- */

/* Words safe as they are in an ssh_config Host pattern (no * ? ! , space or quote). */
static bool pattern_word(const char *s)
{
	return gc_word_of(s, "._/-");
}

/*
 * A path as OpenSSH reads a quoted config value: inside "...", with % doubled (ssh expands
 * %d, %h, ... in IdentityFile and UserKnownHostsFile). A double quote, a backslash or a
 * control character has no spelling every OpenSSH version reads the same: refused.
 */
static int ssh_path(struct gc_buf *out, const char *what, const char *path, const char *fmt,
		    struct gc_error *err)
{
	if (!path || !*path)
		return gc_error_set(err, GC_EINVALID, "%s needs the cluster's %s", fmt, what);
	for (const char *p = path; *p; p++) {
		unsigned char c = (unsigned char)*p;

		if (c == '"' || c == '\\' || c < 0x20 || c == 0x7f)
			return gc_error_set(err, GC_EINVALID,
					    "cannot write the %s path '%s' into %s: it holds a "
					    "quote, a backslash or a control character",
					    what, path, fmt);
	}
	gc_buf_addch(out, '"');
	for (const char *p = path; *p; p++) {
		if (*p == '%')
			gc_buf_addstr(out, "%%");
		else
			gc_buf_addch(out, *p);
	}
	gc_buf_addch(out, '"');
	return 0;
}

/* A user name written as it is: the spec allows [a-z_][a-z0-9_-]*. Anything else would
 * need another quoting for ssh and for Ansible (whose literal_eval would even turn a
 * user called True or 123 into something other than a string): refused. The key and
 * known_hosts paths are quoted into key and kh. */
static int ssh_inputs(const struct gc_hosts *h, const char *fmt, struct gc_buf *key,
		      struct gc_buf *kh, struct gc_error *err)
{
	const char *u = h->user;

	if (!((*u >= 'a' && *u <= 'z') || *u == '_') || !gc_shape_chars(u, strlen(u), false, "._-"))
		return gc_error_set(err, GC_EINVALID,
				    "cannot write the user '%s' into %s: use a-z, 0-9, '.', '_' "
				    "and '-', starting with a letter or '_'",
				    h->user, fmt);
	if (ssh_path(key, "key", h->identity_file, fmt, err) < 0)
		return -1;
	return ssh_path(kh, "known_hosts", h->known_hosts_file, fmt, err);
}

/* s for a POSIX shell (and Python's shlex): as it is when it is one plain word, else
 * single-quoted. */
static void sh_word(struct gc_buf *out, const char *s)
{
	if (gc_word_of(s, "._/:@%+=,-"))
		gc_buf_addstr(out, s);
	else
		gc_sh_quote(out, s);
}

/* ---- the formats ------------------------------------------------------------------- */

static void hostfile(struct gc_buf *out, const struct gc_hosts *h, bool comments, bool private)
{
	/* older DeepSpeed versions split every line into host and slots, comments included */
	if (comments)
		gc_buf_addf(out,
			    "# Open MPI hostfile of cluster '%s' (gpucluster hosts): "
			    "slots = GPUs per node\n",
			    h->cluster);
	for (size_t i = 0; i < h->n; i++)
		gc_buf_addf(out, "%s slots=%u\n",
			    private ? h->nodes[i].private_ip : gc_hosts_address(h, i),
			    gc_hosts_slots(h, i));
}

static void torchrun(struct gc_buf *out, const struct gc_hosts *h, const struct gc_hosts_opts *o)
{
	struct gc_hosts_var env[GC_HOSTS_N_ENV];

	for (size_t i = 0; i < h->n; i++) {
		if (o->only != SIZE_MAX && o->only != i)
			continue;
		gc_hosts_env(h, i, o->master_port, env);
		if (o->only == SIZE_MAX)
			gc_buf_addf(out, "%s# %s\n", i ? "\n" : "", h->nodes[i].label);
		for (size_t k = 0; k < GC_HOSTS_N_ENV; k++) {
			gc_buf_addf(out, "%s%s=", o->only == SIZE_MAX ? "" : "export ",
				    env[k].name);
			sh_word(out, env[k].value);
			gc_buf_addch(out, '\n');
		}
	}
}

static int ssh_config(struct gc_buf *out, const struct gc_hosts *h, struct gc_error *err)
{
	static const char fmt[] = "an ssh config";
	struct gc_buf key = GC_BUF_INIT(0), kh = GC_BUF_INIT(0);
	int rc = -1;

	if (ssh_inputs(h, fmt, &key, &kh, err) < 0)
		goto out;
	gc_buf_addf(out,
		    "# OpenSSH client config of cluster '%s' (gpucluster hosts): "
		    "ssh -F THIS-FILE NODE\n",
		    h->cluster);
	for (size_t i = 0; i < h->n; i++) {
		const struct gc_hosts_node *n = &h->nodes[i];
		const char *addr = gc_hosts_address(h, i);

		gc_buf_addstr(out, "\nHost");
		if (pattern_word(n->label))
			gc_buf_addf(out, " %s", n->label);
		if (pattern_word(n->id) && strcmp(n->id, n->label) != 0)
			gc_buf_addf(out, " %s", n->id);
		gc_buf_addf(out, " %s\n", addr);
		gc_buf_addf(out, "\tHostName %s\n\tPort %u\n\tUser %s\n", addr, h->port, h->user);
		gc_buf_addf(out, "\tIdentityFile %s\n\tIdentitiesOnly yes\n", key.data);
		gc_buf_addf(out, "\tUserKnownHostsFile %s\n", kh.data);
		gc_buf_addstr(out,
			      "\tGlobalKnownHostsFile /dev/null\n"
			      "\tStrictHostKeyChecking yes\n"
			      "\tUpdateHostKeys no\n");
	}
	rc = 0;
out:
	gc_buf_release(&key);
	gc_buf_release(&kh);
	return rc;
}

/* An Ansible group name: letters, digits and '_', not starting with a digit (others make
 * Ansible warn, or transform them itself). */
static void ansible_group(struct gc_buf *out, const char *group)
{
	if (*group >= '0' && *group <= '9')
		gc_buf_addch(out, '_');
	for (const char *p = group; *p; p++) {
		unsigned char c = (unsigned char)*p;
		bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			(c >= '0' && c <= '9') || c == '_';

		gc_buf_addch(out, ok ? (char)c : '_');
	}
}

/* A host line: its label and how to reach it (values Ansible reads as they are). */
static void ansible_host(struct gc_buf *out, const struct gc_hosts *h, size_t i)
{
	sh_word(out, h->nodes[i].label);
	gc_buf_addf(out, " ansible_host=%s ansible_port=%u ansible_user=%s\n",
		    gc_hosts_address(h, i), h->port, h->user);
}

/*
 * The inventory. A host line is split like a shell line, but a value under [all:vars] is
 * taken as it is (after a Python literal_eval, which a path or "-o ..." never passes);
 * Ansible's ssh connection then splits ansible_ssh_common_args like a shell line and
 * OpenSSH reads each -o as a config line, so the known_hosts path is quoted for OpenSSH
 * ("...", % doubled) inside a token quoted for that split ('...'). The key file reaches
 * OpenSSH as IdentityFile="PATH" (Ansible adds the quotes), so only its % are doubled.
 */
static int ansible(struct gc_buf *out, const struct gc_hosts *h, struct gc_error *err)
{
	static const char fmt[] = "an Ansible inventory";
	struct gc_buf key = GC_BUF_INIT(0), kh = GC_BUF_INIT(0), arg = GC_BUF_INIT(0);
	bool *done = gc_xcalloc(h->n + 1, sizeof(*done));
	int rc = -1;

	if (ssh_inputs(h, fmt, &key, &kh, err) < 0)
		goto out;
	gc_buf_addf(out,
		    "# Ansible inventory of cluster '%s' (gpucluster hosts): "
		    "ansible -i THIS-FILE all -m ping\n",
		    h->cluster);
	/* nodes without a group tag: before any section, in Ansible's "ungrouped" */
	for (size_t i = 0; i < h->n; i++) {
		if (!*h->nodes[i].group) {
			ansible_host(out, h, i);
			done[i] = true;
		}
	}
	for (size_t i = 0; i < h->n; i++) {
		if (done[i])
			continue;
		gc_buf_addstr(out, "\n[");
		ansible_group(out, h->nodes[i].group);
		gc_buf_addstr(out, "]\n");
		for (size_t k = i; k < h->n; k++) {
			if (done[k] || strcmp(h->nodes[k].group, h->nodes[i].group) != 0)
				continue;
			ansible_host(out, h, k);
			done[k] = true;
		}
	}
	gc_buf_addf(&arg, "UserKnownHostsFile=%s", kh.data);
	gc_buf_addstr(out, "\n[all:vars]\nansible_ssh_private_key_file=");
	gc_buf_add(out, key.data + 1, key.len - 2); /* without the quotes */
	gc_buf_addstr(out, "\nansible_ssh_common_args=-o ");
	gc_sh_quote(out, arg.data);
	gc_buf_addstr(out,
		      " -o GlobalKnownHostsFile=/dev/null -o StrictHostKeyChecking=yes "
		      "-o IdentitiesOnly=yes -o UpdateHostKeys=no\n");
	rc = 0;
out:
	free(done);
	gc_buf_release(&key);
	gc_buf_release(&kh);
	gc_buf_release(&arg);
	return rc;
}

/* A string for the document; cloud text and paths need not be UTF-8, which JSON must be:
 * *bad is set then (jansson refuses such a string). */
static json_t *jstr(const char *s, bool *bad)
{
	json_t *j;

	if (!s)
		return json_null();
	j = json_string(s);
	if (!j) {
		*bad = true;
		return json_null();
	}
	return j;
}

static int json_format(struct gc_buf *out, const struct gc_hosts *h, unsigned master_port,
		       struct gc_error *err)
{
	json_t *nodes = json_array(), *doc;
	bool bad = false;
	char *text = NULL;
	int rc = 0;

	for (size_t i = 0; i < h->n; i++) {
		const struct gc_hosts_node *n = &h->nodes[i];
		json_t *o = json_object();

		json_object_set_new(o, "label", jstr(n->label, &bad));
		json_object_set_new(o, "id", jstr(n->id, &bad));
		json_object_set_new(o, "group", jstr(n->group, &bad));
		json_object_set_new(o, "index", json_integer(n->index));
		json_object_set_new(o, "address", jstr(gc_hosts_address(h, i), &bad));
		json_object_set_new(o, "public_address", jstr(n->public_ip, &bad));
		json_object_set_new(o, "private_address", jstr(n->private_ip, &bad));
		json_object_set_new(o, "port", json_integer(h->port));
		json_object_set_new(o, "user", jstr(h->user, &bad));
		json_object_set_new(o, "gpus", n->have_facts ? json_integer(n->gpus) : json_null());
		json_object_set_new(o, "gpu_model", jstr(n->gpu_model, &bad));
		json_object_set_new(o, "slots", json_integer(gc_hosts_slots(h, i)));
		json_object_set_new(o, "type", jstr(n->type, &bad));
		json_object_set_new(o, "zone", jstr(n->zone, &bad));
		json_object_set_new(o, "host_key_pinned", json_boolean(n->pinned));
		json_array_append_new(nodes, o);
	}
	doc = json_object();
	json_object_set_new(doc, "cluster", jstr(h->cluster, &bad));
	json_object_set_new(doc, "user", jstr(h->user, &bad));
	json_object_set_new(doc, "port", json_integer(h->port));
	json_object_set_new(doc, "identity_file", jstr(h->identity_file, &bad));
	json_object_set_new(doc, "known_hosts_file", jstr(h->known_hosts_file, &bad));
	json_object_set_new(doc, "master_addr", jstr(gc_hosts_master_addr(h), &bad));
	json_object_set_new(doc, "master_port",
			    json_integer(master_port ? master_port : GC_HOSTS_MASTER_PORT));
	json_object_set_new(doc, "nodes", nodes);
	if (!bad)
		text = json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	if (!text)
		rc = gc_error_set(err, GC_EINVALID,
				  "cannot write the nodes as JSON: a name or path is not UTF-8");
	else
		gc_buf_addf(out, "%s\n", text);
	free(text);
	json_decref(doc);
	return rc;
}

int gc_hosts_format(struct gc_buf *out, const struct gc_hosts *h, const struct gc_hosts_opts *o,
		    struct gc_error *err)
{
	struct gc_buf text = GC_BUF_INIT(0);
	int rc = 0;

	if (!h->n)
		return gc_error_set(err, GC_ENOTFOUND, "cluster '%s' has no running nodes",
				    h->cluster);
	for (size_t i = 0; i < h->n; i++)
		if (!gc_hosts_address(h, i))
			return gc_error_set(err, GC_EINVALID, "node '%s' (%s) has no address",
					    h->nodes[i].label, h->nodes[i].id);
	for (size_t i = 0; i < h->n && o->private_addrs; i++)
		if (!h->nodes[i].private_ip)
			return gc_error_set(err, GC_EINVALID,
					    "node '%s' (%s) has no private address",
					    h->nodes[i].label, h->nodes[i].id);
	if (o->format == GC_HOSTS_TORCHRUN && o->only != SIZE_MAX && o->only >= h->n)
		return gc_error_set(err, GC_EINVALID, "no node %zu: the cluster has %zu", o->only,
				    h->n);
	/* written whole into text first, so out never holds half a file */
	switch (o->format) {
	case GC_HOSTS_MPI: hostfile(&text, h, true, o->private_addrs); break;
	case GC_HOSTS_DEEPSPEED: hostfile(&text, h, false, o->private_addrs); break;
	case GC_HOSTS_TORCHRUN: torchrun(&text, h, o); break;
	case GC_HOSTS_SSH_CONFIG: rc = ssh_config(&text, h, err); break;
	case GC_HOSTS_ANSIBLE: rc = ansible(&text, h, err); break;
	case GC_HOSTS_JSON: rc = json_format(&text, h, o->master_port, err); break;
	default: rc = gc_error_set(err, GC_EINVALID, "unknown hosts format %d", (int)o->format);
	}
	if (rc == 0 && gc_buf_add(out, text.data, text.len) < 0)
		rc = gc_error_set(err, GC_ETOOBIG, "the %s text is larger than %zu bytes",
				  gc_hosts_format_names[o->format], out->max);
	gc_buf_release(&text);
	return rc;
}

/* ---- writing the file -------------------------------------------------------------- */

int gc_hosts_write_file(const char *path, const void *data, size_t len, struct gc_error *err)
{
	const char *slash = strrchr(path, '/');
	char *tmp;
	size_t off = 0;
	int fd, rc = -1;

	if (!*path)
		return gc_error_set(err, GC_EINVALID, "no file name to write to");
	tmp = slash ? gc_xasprintf("%.*s/.%s.XXXXXX", (int)(slash - path), path, slash + 1)
		    : gc_xasprintf(".%s.XXXXXX", path);
	/* mkstemp creates it 0600: what it describes is how to reach the cluster */
	fd = mkstemp(tmp);
	if (fd < 0) {
		gc_error_set(err, GC_EIO, "cannot create a file beside '%s': %s", path,
			     strerror(errno));
		free(tmp);
		return -1;
	}
	while (off < len) {
		ssize_t w = write(fd, (const char *)data + off, len - off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			gc_error_set(err, GC_EIO, "cannot write '%s': %s", path,
				     w < 0 ? strerror(errno) : "short write");
			goto out;
		}
		off += (size_t)w;
	}
	if (fsync(fd) < 0) {
		gc_error_set(err, GC_EIO, "cannot write '%s': %s", path, strerror(errno));
		goto out;
	}
	if (close(fd) < 0) {
		fd = -1;
		gc_error_set(err, GC_EIO, "cannot write '%s': %s", path, strerror(errno));
		goto out;
	}
	fd = -1;
	if (rename(tmp, path) < 0) {
		gc_error_set(err, GC_EIO, "cannot write '%s': %s", path, strerror(errno));
		goto out;
	}
	rc = 0;
out:
	if (fd >= 0)
		close(fd);
	if (rc < 0)
		unlink(tmp);
	free(tmp);
	return rc;
}
