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

/* The text of section name of a probe's output ("@@NAME" line up to the next "@@" line;
 * docs/internals/nccl.md "The probe") in *len; NULL when out has none. */
const char *gc_nccl_section(const char *out, size_t out_len, const char *name, size_t *len);

/* The link between node 0 of a group and its node `node`: their two-node all-reduce. */
struct gc_nccl_link {
	size_t node;		 /* the other end: its place in the group (1..n-1) */
	struct gc_nccl_result r; /* the all-reduce over the two nodes */
	bool ok;		 /* a result without #wrong, at or above the floor */
	size_t slow;		 /* when !ok, the node to blame (node, or 0: see below) */
};

/* The across-nodes check of one group, judged from its node 0's probe output. */
struct gc_nccl_group {
	struct gc_nccl_result ring; /* "@@cluster": the all-reduce across every node */
	bool ring_ok;		    /* a result without #wrong, at or above the floor */
	struct gc_nccl_link *links; /* the links measured, in node order */
	size_t n_links;
	bool links_ok; /* every link measured ok */
};

/*
 * Judges a group of n nodes against floor (GB/s) from node 0's probe output text: ips[k]
 * is node k's private address (ips[0] node 0's own; NULL: a node without one, never
 * measured). The link to node k is its "@@pair IP" section; with two nodes the ring is
 * the one link. Blame: a failed link names its other end, except when every link of a
 * group with two or more measured links failed, which names node 0, the end they share.
 * With two nodes the one link cannot tell its ends apart and names node 1. Release with
 * gc_nccl_group_release.
 */
void gc_nccl_group_judge(struct gc_nccl_group *out, const char *text, size_t len,
			 const char *const *ips, size_t n, double floor);
void gc_nccl_group_release(struct gc_nccl_group *g);

#endif
