/*
 * mesh.h: a cluster that reaches itself. After a bootstrap every node gets the cluster's
 * internal SSH key (not the user's), authorised on every node, the other nodes' pinned
 * host keys under their private addresses and names, and the launchers' files with
 * private addresses under /etc/gpucluster/ (GC_MESH_DIR): hostfile (Open MPI),
 * deepspeed_hostfile, hosts (one address a line), ssh_config and known_hosts; the login
 * user's ~/.ssh/config includes that ssh_config, so `mpirun` and `deepspeed` on node 0
 * reach the others. The design (where the key lives, how it travels, its rotation) is in
 * docs/internals/ssh-runner.md ("The mesh").
 *
 * Nothing here prints. The key is a file of the state directory (core/state.h); it goes
 * to the nodes inside the mesh step's script, over SSH, never in logs, tags or user-data.
 */
#ifndef GC_BOOTSTRAP_MESH_H
#define GC_BOOTSTRAP_MESH_H

#include "bootstrap/session.h"
#include "core/buf.h"
#include "core/error.h"

#define GC_MESH_DIR	 "/etc/gpucluster"
#define GC_MESH_KEY_NAME "gpucluster_mesh" /* ~/.ssh/NAME on every node */

/*
 * The mesh step's script for a session whose nodes are the whole cluster (s->boot, its
 * addresses in s->live): the internal key (made, or made anew when a node that held it
 * is gone: state_dir's GC_STATE_MESH_KEY and GC_STATE_MESH_NODES), the files, and the
 * host keys pinned in state_dir's known_hosts for each node's SSH endpoint (GC_ENOTFOUND
 * names a node with none). out gets secret text: release it with gc_keypair_wipe_buf.
 */
int gc_mesh_script(struct gc_buf *out, const struct gc_session *s, const char *state_dir,
		   const char *cluster, struct gc_error *err);

/*
 * Runs the mesh step on every running node of live (a session of its own, with the
 * engine's key and pins). Returns 0, or -1 with err naming the first node that failed.
 */
int gc_mesh_run(struct gc_engine *e, const struct gc_instance_list *live, struct gc_error *err);

#endif
