/*
 * cloudinit.h: the #cloud-config user-data gpucluster gives instances on clouds that
 * take neither our Ed25519 login key as a key pair (no GC_CAP_ED25519_KEYPAIR: their
 * ImportKeyPair documents RSA and the like only) nor, for host keys, have console output
 * (no GC_CAP_CONSOLE_OUTPUT). docs/internals/providers.md says which clouds those are.
 *
 * The document holds, in cloud-init's own keys:
 *   ssh_authorized_keys  the cluster's public key, for the image's default user
 *   ssh_pwauth: false    no password logins (a cloud may mail a random password otherwise)
 *   ssh_deletekeys, ssh_genkeytypes: [], ssh_keys.ed25519_private/public
 *                        the host key the engine derived for the batch (provider.h,
 *                        gc_create_request.host_key_*), so the node presents exactly
 *                        the key the client pins from the request
 *
 * The text is a function of the request alone (no time, no randomness): a launch sent
 * again with the same client token must be the same request.
 *
 * Life cycle: gc_cloud_config returns a string the caller frees with gc_cloud_config_free,
 * which wipes it (it may hold a private host key).
 */
#ifndef GC_CLOUDINIT_H
#define GC_CLOUDINIT_H

#include "core/provider.h"

/* The document for req, or NULL when it has neither an authorized key nor a host key. */
char *gc_cloud_config(const struct gc_create_request *req);
void gc_cloud_config_free(char *doc);

#endif
