/*
 * ci-key.h: the cluster's SSH key from a CI secret (docs/ci.md, "Access from any runner").
 * A job on a fresh runner has an empty state directory, so no key; GPUCLUSTER_SSH_KEY
 * holds the private key file's text (an unencrypted ed25519 openssh-key-v1 file: the
 * id_ed25519 of the machine that created the cluster, or `ssh-keygen -t ed25519 -N ''`
 * before the first apply) and becomes the state directory's key. Host keys are pinned
 * from the cloud again on every runner, as on any machine that has no known_hosts yet.
 */
#ifndef GC_CMD_CI_KEY_H
#define GC_CMD_CI_KEY_H

#include "core/buf.h"
#include "core/error.h"
#include "core/log.h"
#include "core/spec.h"

#define GC_CI_KEY_VAR "GPUCLUSTER_SSH_KEY"

/*
 * With var (gc_ci_key_var) set and not empty: registers it as a secret of log, and writes
 * it as state_dir's key when there is none. Fails (GC_EINVALID) when the variable holds no
 * usable key, or when state_dir already holds another key: the nodes trust one of them
 * only. Unset or empty: does nothing.
 */
int gc_ci_key_import(const char *var, const struct gc_spec_env *env, const char *state_dir,
		     struct gc_log *log, struct gc_error *err);
/* The variable that holds the key: the spec's ssh.key_env, else GPUCLUSTER_SSH_KEY. */
const char *gc_ci_key_var(const struct gc_spec *spec);

struct gc_cmd_ctx;
struct gc_session;

/* The advice after the nodes refused our key: where the key came from and what to do. */
void gc_ci_key_refused_hint(struct gc_cmd_ctx *ctx);
/* The same, once, when any node of a session's report refused our key (run, exec). */
void gc_ci_key_session_hint(struct gc_cmd_ctx *ctx, const struct gc_session *b);

#endif
