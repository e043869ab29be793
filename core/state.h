/*
 * state.h: the files of a cluster's local state directory, named in one place.
 *
 * The directory itself is gc_engine_state_dir's (engine.h); what is in it is listed
 * here, so that every module that opens one of these files (the engine's key pair, the
 * lock, the bootstrap's host key pins, the commands that hand them to OpenSSH) builds
 * the same path. Stateless.
 */
#ifndef GC_STATE_H
#define GC_STATE_H

enum gc_state_file {
	GC_STATE_KEY,	      /* id_ed25519: the cluster's SSH key pair (OpenSSH's format) */
	GC_STATE_KNOWN_HOSTS, /* known_hosts: the pinned host keys of its nodes */
	GC_STATE_LOCK,	      /* lock: held by the command that changes the cluster */
	GC_STATE_MESH_KEY,    /* mesh_ed25519: the nodes' internal key (bootstrap/mesh.h) */
	GC_STATE_MESH_NODES,  /* mesh_nodes: the instances that were given it */
};

/* STATE_DIR/FILE, allocated. */
char *gc_state_path(const char *state_dir, enum gc_state_file file);

#endif
