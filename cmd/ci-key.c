/* ci-key.c: the cluster's SSH key from GPUCLUSTER_SSH_KEY or ssh.key_env (ci-key.h). */
#include "cmd/ci-key.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/keygen.h"
#include "core/state.h"
#include "bootstrap/session.h"
#include "cmd/cmd.h"
#include "cmd/output.h"
#include "core/alloc.h"
#include "core/buf.h"

/* The variable's text as a key pair: written to a private temporary file beside the
 * state key (gc_keypair_load reads files), read, removed. */
static int parse_key(const char *var, const char *text, const char *state_dir,
		     struct gc_keypair *out, struct gc_error *err)
{
	char *tmp = gc_xasprintf("%s/.ci-key.XXXXXX", state_dir);
	size_t len = strlen(text);
	int fd = mkstemp(tmp), ret = -1;
	struct gc_error lerr;

	gc_error_init(&lerr);
	if (fd < 0) {
		gc_error_set(err, GC_EIO, "cannot create a file in '%s': %s", state_dir,
			     strerror(errno));
		goto out;
	}
	/* a secret pasted into a form often loses its last newline */
	if (write(fd, text, len) != (ssize_t)len ||
	    (text[len - 1] != '\n' && write(fd, "\n", 1) != 1)) {
		gc_error_set(err, GC_EIO, "cannot write '%s': %s", tmp, strerror(errno));
		goto out;
	}
	if (gc_keypair_load(out, tmp, &lerr) < 0) {
		gc_error_set(err, GC_EINVALID,
			     "%s does not hold an unencrypted ed25519 OpenSSH private key: %s", var,
			     lerr.message);
		goto out;
	}
	ret = 0;
out:
	if (fd >= 0) {
		close(fd);
		unlink(tmp);
	}
	free(tmp);
	return ret;
}

const char *gc_ci_key_var(const struct gc_spec *spec)
{
	return spec && spec->ssh.key_env ? spec->ssh.key_env : GC_CI_KEY_VAR;
}

int gc_ci_key_import(const char *var, const struct gc_spec_env *env, const char *state_dir,
		     struct gc_log *log, struct gc_error *err)
{
	const char *text = gc_spec_env_get(env, var);
	char *path = NULL;
	char want[GC_SSH_FINGERPRINT_SIZE], have[GC_SSH_FINGERPRINT_SIZE];
	struct gc_keypair kp, cur;
	struct gc_error lerr;
	int ret = -1;

	if (!text || !*text)
		return 0;
	gc_keypair_init(&kp);
	gc_keypair_init(&cur);
	gc_error_init(&lerr);
	gc_log_add_secret(log, text);
	if (parse_key(var, text, state_dir, &kp, err) < 0)
		goto out;
	gc_keypair_fingerprint(want, &kp);
	path = gc_state_path(state_dir, GC_STATE_KEY);
	if (gc_keypair_load(&cur, path, &lerr) == 0) {
		if (memcmp(cur.pub, kp.pub, sizeof(kp.pub)) == 0) {
			ret = 0;
			goto out;
		}
		gc_keypair_fingerprint(have, &cur);
		gc_error_set(err, GC_EINVALID,
			     "%s holds key %s, but '%s' holds another one (%s), and the nodes "
			     "trust only the key they were launched with: unset %s to use the "
			     "local key, or remove '%s' and '%s.pub' to use the variable's",
			     var, want, path, have, var, path, path);
		goto out;
	}
	if (lerr.code != GC_ENOTFOUND) {
		*err = lerr;
		goto out;
	}
	if (gc_keypair_write(&kp, path, err) < 0)
		goto out;
	gc_log_info(log, "the cluster's SSH key (%s) is %s's, now in '%s'", want, var, path);
	ret = 0;
out:
	gc_keypair_release(&kp);
	gc_keypair_release(&cur);
	free(path);
	return ret;
}

void gc_ci_key_refused_hint(struct gc_cmd_ctx *ctx)
{
	const char *var = gc_ci_key_var(ctx->spec);
	const char *text = gc_spec_env_get(ctx->env, var);

	if (text && *text)
		gc_out_hint(ctx->out,
			    "the nodes accept the key they were launched with, and %s holds "
			    "another: set it to the key the cluster was created with (docs/ci.md, "
			    "\"Access from any runner\")",
			    var);
	else
		gc_out_hint(ctx->out,
			    "the nodes accept the key they were launched with; a cluster created "
			    "from another machine has that machine's key: on a CI runner, set %s "
			    "from a repository secret holding it (docs/ci.md, \"Access from any "
			    "runner\")",
			    var);
}

void gc_ci_key_session_hint(struct gc_cmd_ctx *ctx, const struct gc_session *b)
{
	for (size_t i = 0; i < b->boot.n_nodes; i++) {
		const struct gc_error *e = &b->report.nodes[i].err;

		if (e->code == GC_EAUTH && strstr(e->message, "refused")) {
			gc_ci_key_refused_hint(ctx);
			return;
		}
	}
}
