/*
 * state.c: the engine's local state: where a cluster's directory lives, creating it, and
 * the cluster's SSH key pair in it (see engine.h).
 *
 * The directory holds nothing the cloud does not also know except the private key, so it
 * is created private (0700, parents included) and never anywhere under ~/.ssh: a cluster
 * key must not end up offered to every host the user logs into.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/alloc.h"
#include "core/engine.h"
#include "core/keygen.h"
#include "core/state.h"

char *gc_engine_state_dir(const struct gc_spec *spec, const struct gc_spec_env *env,
			  struct gc_error *err)
{
	const char *v;
	char *base, *dir;

	/* an empty variable counts as unset, as the XDG base directory spec says */
	if ((v = gc_spec_env_get(env, "GPUCLUSTER_STATE_DIR")))
		base = gc_xstrdup(v);
	else if ((v = gc_spec_env_get(env, "XDG_STATE_HOME")) && v[0] == '/')
		base = gc_xasprintf("%s/gpucluster", v);
	else if ((v = gc_spec_env_get(env, "HOME")))
		base = gc_xasprintf("%s/.local/state/gpucluster", v);
	else {
		gc_error_set(err, GC_EINVALID,
			     "cannot place the local state of cluster '%s': HOME is not set (set "
			     "GPUCLUSTER_STATE_DIR)",
			     spec->name);
		return NULL;
	}
	/* cloud, region and name are validated to [a-z0-9-], so they are safe path parts */
	dir = gc_xasprintf("%s/clusters/%s/%s/%s", base, spec->provider.name, spec->provider.region,
			   spec->name);
	free(base);
	return dir;
}

/* mkdir -p with mode 0700 for what it creates; the last component is made private even
 * when it already existed (it holds a private key). */
static int mkdir_private(const char *path, struct gc_error *err)
{
	char *p = gc_xstrdup(path);
	struct stat st;
	int ret = -1;

	for (char *s = p + 1; *s; s++) {
		if (*s != '/')
			continue;
		*s = '\0';
		if (mkdir(p, 0700) < 0 && errno != EEXIST) {
			gc_error_set(err, GC_EIO, "cannot create directory '%s': %s", p,
				     strerror(errno));
			goto out;
		}
		*s = '/';
	}
	if (mkdir(p, 0700) < 0 && errno != EEXIST) {
		gc_error_set(err, GC_EIO, "cannot create directory '%s': %s", p, strerror(errno));
		goto out;
	}
	if (stat(p, &st) < 0 || !S_ISDIR(st.st_mode)) {
		gc_error_set(err, GC_EIO, "state directory '%s' is not a directory", p);
		goto out;
	}
	if ((st.st_mode & 077) && chmod(p, 0700) < 0) {
		gc_error_set(err, GC_EIO, "cannot make state directory '%s' private: %s", p,
			     strerror(errno));
		goto out;
	}
	ret = 0;
out:
	free(p);
	return ret;
}

int gc_engine_init(struct gc_engine *e, const struct gc_spec *spec, struct gc_provider *p,
		   const struct gc_spec_env *env, struct gc_log *log, struct gc_error *err)
{
	char *dir = gc_engine_state_dir(spec, env, err);

	if (!dir)
		return -1;
	if (mkdir_private(dir, err) < 0) {
		free(dir);
		return -1;
	}
	memset(e, 0, sizeof(*e));
	e->spec = spec;
	e->provider = p;
	e->log = log;
	e->env = env;
	e->state_dir = dir;
	return 0;
}

void gc_engine_release(struct gc_engine *e)
{
	if (!e)
		return;
	free(e->state_dir);
	e->state_dir = NULL;
}

char *gc_state_path(const char *state_dir, enum gc_state_file file)
{
	static const char *const names[] = {
		[GC_STATE_KEY] = "id_ed25519",
		[GC_STATE_KNOWN_HOSTS] = "known_hosts",
		[GC_STATE_LOCK] = "lock",
		[GC_STATE_MESH_KEY] = "mesh_ed25519",
		[GC_STATE_MESH_NODES] = "mesh_nodes",
	};

	return gc_xasprintf("%s/%s", state_dir, names[file]);
}

int gc_engine_keypair(struct gc_engine *e, struct gc_keypair *out, struct gc_error *err)
{
	char *path = gc_state_path(e->state_dir, GC_STATE_KEY);
	char *comment = NULL;
	struct gc_keypair kp;
	struct gc_error lerr;
	int ret = -1;

	gc_error_init(&lerr);
	if (gc_keypair_load(&kp, path, &lerr) == 0) {
		*out = kp;
		ret = 0;
		goto out;
	}
	if (lerr.code != GC_ENOTFOUND) {
		gc_error_prefix(&lerr, "cluster '%s'", e->spec->name);
		goto out;
	}
	comment = gc_xasprintf("gpucluster:%s", e->spec->name);
	if (gc_keypair_generate(&kp, comment, &lerr) < 0)
		goto out;
	if (gc_keypair_write(&kp, path, &lerr) < 0) {
		gc_keypair_release(&kp);
		goto out;
	}
	gc_log_info(e->log, "generated the SSH key of cluster '%s' in '%s'", e->spec->name, path);
	*out = kp;
	ret = 0;
out:
	if (ret < 0 && err)
		*err = lerr;
	free(comment);
	free(path);
	return ret;
}

void gc_engine_keypair_name(char *out, size_t size, const struct gc_provider_ops *cloud,
			    const char *cluster, const struct gc_keypair *kp)
{
	const struct gc_keypair_naming *rule = &cloud->facts->keypair;
	char fp[GC_SSH_FINGERPRINT_SIZE], tag[9], base[GC_SPEC_CLUSTER_NAME_MAX + 1];
	size_t n = 0, k = 0;

	gc_keypair_fingerprint(fp, kp);
	/* base64 has '+' and '/', which key names on some clouds refuse: keep letters and
	 * digits, lowercased; 8 of them still tell keys apart and the tag does the rest */
	for (const char *s = fp + strlen("SHA256:"); *s && n < 8; s++) {
		char c = *s;

		if (c >= 'A' && c <= 'Z')
			c = (char)(c - 'A' + 'a');
		if ((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'))
			tag[n++] = c;
	}
	tag[n] = '\0';
	/* the cloud's alphabet for names: letters, digits and its separator */
	for (const char *s = cluster; *s && k < sizeof(base) - 1; s++) {
		char c = *s;

		if (rule->cluster_max && k == rule->cluster_max)
			break;
		base[k++] =
			(c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9')
			? c
			: rule->sep;
	}
	base[k] = '\0';
	snprintf(out, size, "%s%c%s%c%s", rule->prefix, rule->sep, base, rule->sep, tag);
}
