/*
 * gpustat.h: a node's live GPU state, read from what `status --gpus` runs on it: nvidia-smi's
 * CSV (GC_GPUSTAT_QUERY, noheader, nounits) and one "xid,N" line (the kernel log's NVIDIA
 * Xid events, "xid,?" when the log could not be read). Pure parsing; cmd/ runs and prints.
 */
#ifndef GC_GPUSTAT_H
#define GC_GPUSTAT_H

#include <stddef.h>

#include "core/error.h"

/* The fields asked for, in this order; also what the simulated nvidia-smi must answer. */
#define GC_GPUSTAT_QUERY                                                       \
	"index,name,utilization.gpu,memory.used,memory.total,temperature.gpu," \
	"ecc.errors.uncorrected.volatile.total"

/* A number nvidia-smi gave as "[N/A]" or "[Not Supported]" */
#define GC_GPUSTAT_NA (-1L)

struct gc_gpustat {
	long index;
	char name[96];
	long util_pct, mem_used_mib, mem_total_mib, temp_c, ecc_uncorrected; /* or NA */
};

struct gc_gpustat_node {
	struct gc_gpustat *gpus;
	size_t n;
	long xid_events; /* GC_GPUSTAT_NA: unknown */
};

/* Parses text into out (caller memory, gc_gpustat_node_release). Fails with GC_EINVALID
 * naming the line that is not what was asked for. */
int gc_gpustat_parse(const char *text, struct gc_gpustat_node *out, struct gc_error *err);
void gc_gpustat_node_release(struct gc_gpustat_node *n);

#endif
