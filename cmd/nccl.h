/*
 * nccl.h: the NCCL probe of `report` and `smoke` (docs/internals/nccl.md). One exec
 * session runs a probe on every running node: the smoke program's figures, nccl-tests'
 * all_reduce_perf on 1, 2, 4, 8 of the node's GPUs, and on node 0 of each group of
 * several nodes the all-reduce across the group under mpirun, over the private addresses.
 * The outcome is one JSON document (docs/cli.md "report"), also kept in the cluster's
 * state directory as nccl.json. The figures are judged here; the caller prints them.
 */
#ifndef GC_CMD_NCCL_H
#define GC_CMD_NCCL_H

#include <stdbool.h>
#include <stddef.h>

#include <jansson.h>

#include "cmd/cmd.h"
#include "core/engine.h"

/* Runs the probe (across_only: the all-reduce across nodes alone) on e's cluster; *out is
 * the document (owned by the caller), NULL when no node ran. Returns the session's exit
 * code (gc_cmd_boot_run). */
int gc_cmd_nccl_probe(struct gc_cmd_ctx *ctx, struct gc_engine *e, bool across_only, json_t **out);

/* One error per group of doc under its floor or without a result, and a hint; returns how
 * many groups failed. */
size_t gc_cmd_nccl_errors(struct gc_cmd_ctx *ctx, const json_t *doc);

/* The last check's figures across nodes, from the state directory's nccl.json (written by
 * gc_cmd_nccl_probe): {checked_at, ok, simulated, groups: [{group, fabric, nodes,
 * busbw_gbps, floor_gbps, not_run, ok, pairs}]}, owned by the caller; NULL when there is
 * none (or it does not parse). */
json_t *gc_cmd_nccl_last(const char *state_dir);

/* status's text block for last (NULL: "not checked yet"). */
void gc_cmd_nccl_print_last(struct gc_cmd_ctx *ctx, const json_t *last);

#endif
