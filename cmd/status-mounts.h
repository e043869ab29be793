/*
 * status-mounts.h: `gpucluster status --mounts` (docs/cli.md "status"), each node's bucket
 * mounts (docs/internals/mounts.md) read over SSH.
 */
#ifndef GC_CMD_STATUS_MOUNTS_H
#define GC_CMD_STATUS_MOUNTS_H

#include "cmd/cmd.h"

/* Runs on the cluster's running nodes (--node narrows them) and reports each mount of the
 * spec as mounted or not, with the mounts step's last error for it. Returns an exit code:
 * 1 when a mount is missing on a node or a node could not be read. */
int gc_cmd_status_mounts(struct gc_cmd_ctx *ctx);

#endif
