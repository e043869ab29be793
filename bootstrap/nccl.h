/*
 * nccl.h: what the NCCL checks read and judge: nccl-tests' all_reduce_perf output (its
 * size/count/type/redop/root/time/algbw/busbw/#wrong table and "# Avg bus bandwidth"
 * line), and the bus-bandwidth floor a fabric must reach across nodes
 * (docs/internals/nccl.md). Pure: no I/O. The text comes from a node, so it is input:
 * anything that does not parse is "no result", never a figure.
 */
#ifndef GC_BOOTSTRAP_NCCL_H
#define GC_BOOTSTRAP_NCCL_H

#include <stdbool.h>
#include <stddef.h>

#include "core/provider.h"
#include "core/spec.h"

struct gc_nccl_result {
	bool ok;	     /* a table with at least one row and "# Avg bus bandwidth" */
	bool simulated;	     /* gpucluster-sim's "# gpucluster-sim: simulated figures" line */
	unsigned ranks;	     /* "Rank" rows of "# Using devices" */
	size_t rows;	     /* rows of the table */
	double busbw_gbps;   /* out-of-place bus bandwidth of the largest size */
	double algbw_gbps;   /* out-of-place algorithm bandwidth of the largest size */
	double avg_busbw;    /* "# Avg bus bandwidth" */
	unsigned long wrong; /* #wrong summed over the table */
};

/* Parses all_reduce_perf's output; out->ok false when it holds no result. */
void gc_nccl_parse(struct gc_nccl_result *out, const char *text, size_t len);

/* The fabric between the nodes of a group: until the `network:` group key exists every
 * group is "standard" (TCP). The seam the fabric work replaces. */
const char *gc_nccl_fabric(const char *group);

/* The fabric between the nodes of group g on type f: "rdma" when its interconnect
 * resolves to rdma there (gc_fabric_interconnect: EFA, eRDMA, HCC RDMA alike), else
 * "standard". */
const char *gc_nccl_group_fabric(const struct gc_spec_group *g, const struct gc_type_facts *f);

/* The fabric's nominal line rate per node in Gbit/s (efa 400, rdma 200, standard 25) and
 * the all-reduce bus-bandwidth floor in GB/s across nodes: half the line rate. */
double gc_nccl_line_gbit(const char *fabric);
double gc_nccl_floor_gbps(const char *fabric);

#endif
