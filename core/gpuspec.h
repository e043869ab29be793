/*
 * gpuspec.h: asking by GPU. A group's `gpus:` and show-gpus' filter take
 * "MODEL[-MEMGB][:COUNT][,vcpus=N][,memory=GB]" ("A100:8", "A100-80GB:8", "H100:8,vcpus=192");
 * this module parses it against the table of GPU models it knows (with "did you mean"),
 * and says whether an instance type's facts match. Pure: no I/O, no allocation.
 * docs/internals/gpus.md has the rules (memory tolerance, counts).
 */
#ifndef GC_GPUSPEC_H
#define GC_GPUSPEC_H

#include <stdbool.h>
#include <stddef.h>

struct gc_error;
struct gc_type_facts;

#define GC_GPU_MAX_COUNT 16 /* no cloud sells more GPUs in one instance */

struct gc_gpu_request {
	char model[16];		 /* canonical name from the table: "A100" */
	unsigned memory_gib;	 /* per GPU; 0: any */
	unsigned count;		 /* GPUs per instance; the default is 1 */
	unsigned min_vcpus;	 /* 0: any */
	unsigned min_memory_gib; /* of the instance; 0: any */
};

/*
 * One GPU instance type of the catalogue shipped with the binary (providers/NAME/gpus.c,
 * dated GC_GPU_CATALOG_DATE): show-gpus without credentials. Prices are the on-demand
 * list price per hour in the cloud's home region, in currency; the live API is the truth.
 */
#define GC_GPU_CATALOG_DATE "2026-11-27"

struct gc_gpu_offer {
	const char *type;  /* NULL ends a list */
	const char *model; /* canonical: "A100" */
	unsigned gpus;
	unsigned gpu_memory_gib; /* per GPU */
	unsigned vcpus;
	unsigned memory_gib;
	const char *interconnect; /* "NVLink, EFA", "" for none */
	double price;		  /* on-demand per hour in the home region */
	const char *currency;	  /* ISO 4217 */
};

/* The GPU models gpucluster knows, canonical names, NULL-terminated. */
extern const char *const gc_gpu_model_names[];

/* Parses s into *out. On bad input fails with GC_EINVALID and a message that says what is
 * wrong (an unknown model with its did-you-mean, a count outside 1-16, a memory size the
 * model is not made with); the caller adds where. */
int gc_gpu_request_parse(struct gc_gpu_request *out, const char *s, struct gc_error *err);

/* The canonical model name a cloud's GPU name stands for ("NVIDIA A100 80G" -> "A100",
 * "a10g" -> "A10G"), or NULL when the table does not know it. */
const char *gc_gpu_model_canonical(const char *cloud_name);

/* Whether an instance type with facts f fits r: the same model, exactly r->count GPUs,
 * the memory per GPU within 10% of r->memory_gib (vendors round: an L4 is sold as 24 GB
 * and reports 22888 MiB), and at least the vCPUs and memory asked for. */
bool gc_gpu_request_matches(const struct gc_gpu_request *r, const struct gc_type_facts *f);

/* "A100-80GB:8" back from r, for messages. */
void gc_gpu_request_format(const struct gc_gpu_request *r, char *buf, size_t size);

#endif
