/*
 * gpulive.h: show-gpus' listings (docs/internals/gpus.md): the GPU offers of one cloud
 * and region, either live (ops->gpu_types, then the price op for on-demand and spot) or
 * from the catalogue shipped with the binary, and the cache of live listings on disk that
 * lets a second look make no API call until it expires.
 *
 * Life cycle: gc_gpu_listing_init, then one of gc_gpulive_fetch / gc_gpulive_load /
 * gc_gpulive_catalogue fills it, gc_gpulive_save keeps a live one, and
 * gc_gpu_listing_release frees it. Prices are per hour in currency; -1 means the cloud
 * gave none. Nothing here prints.
 */
#ifndef GC_GPULIVE_H
#define GC_GPULIVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/provider.h"

/* How long a cached live listing is used: spot prices move, so a few hours. */
#define GC_GPULIVE_MAX_AGE_S (6 * 3600)

struct gc_gpu_row {
	char type[64];
	char model[64]; /* canonical ("A100") where core/gpuspec.c knows it, else the cloud's */
	unsigned gpus;
	unsigned gpu_memory_mib; /* per GPU, as the cloud reports it */
	unsigned vcpus;
	unsigned memory_gib;
	unsigned n_zones; /* the region's zones offering it; 0: unknown (the catalogue) */
	char interconnect[32];
	double on_demand;
	double spot;
	/* the effective hourly price reserved for 1 and 3 years with no upfront fee, where
	 * the cloud's price API publishes it (ops->reserved_price) */
	double reserved[2];
	char currency[GC_CURRENCY_SIZE];
};

struct gc_gpu_listing {
	char cloud[16];
	char region[64];
	bool live;	    /* from the cloud's API; else the shipped catalogue */
	int64_t fetched_at; /* live: when the API was asked (Unix time) */
	struct gc_gpu_row *rows;
	size_t n, alloc;
};

void gc_gpu_listing_init(struct gc_gpu_listing *l);
void gc_gpu_listing_release(struct gc_gpu_listing *l);

/* The catalogue shipped with ops' driver, in its home region (no API call). */
void gc_gpulive_catalogue(struct gc_gpu_listing *out, const struct gc_provider_ops *ops);

/* Lists p's region live: gpu_types, and each type's on-demand and spot price where the
 * cloud has a price op, and its reserved prices where it has reserved_price (a price it
 * cannot give is -1, not an error). */
int gc_gpulive_fetch(struct gc_gpu_listing *out, struct gc_provider *p, int64_t now,
		     struct gc_error *err);

/* The cache file of a cloud and region under dir: "DIR/gpus-CLOUD-REGION.json". */
char *gc_gpulive_cache_path(const char *dir, const char *cloud, const char *region);
/* Reads a cached listing: 0 when path holds one for cloud and region that was fetched
 * through the same endpoint and profile (key, "" for the defaults) at most max_age_s
 * before now; 1 otherwise (missing, stale, another key, unreadable: a miss, not an
 * error). */
int gc_gpulive_load(struct gc_gpu_listing *out, const char *path, const char *cloud,
		    const char *region, const char *key, int64_t now, int64_t max_age_s);
/* Writes l to path (its folder made, 0700) through a temporary file and a rename. */
int gc_gpulive_save(const struct gc_gpu_listing *l, const char *path, const char *key,
		    struct gc_error *err);

#endif
