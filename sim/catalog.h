/*
 * catalog.h: what the emulated clouds sell: regions and zones, instance types with
 * their real GPU facts, images, and hourly prices. Static, read-only data: safe from
 * any thread without the world lock.
 *
 * GPU facts (count, model, memory per GPU) are the vendors' published figures for each
 * type; prices are plausible USD (AWS) or CNY (Alibaba, Tencent) per hour, not quotes.
 * The spot price is a fixed share of on-demand, so a test can predict it.
 */
#ifndef GC_SIM_CATALOG_H
#define GC_SIM_CATALOG_H

#include <stdbool.h>
#include <stddef.h>

#include "sim/world.h"

struct sim_itype {
	enum sim_cloud cloud;
	const char *name;   /* g5.xlarge, ecs.gn7i-c8g1.2xlarge, GN7.2XLARGE32 */
	const char *family; /* g5, ecs.gn7i, GN7 */
	unsigned vcpu;
	unsigned memory_mib;
	unsigned gpus;
	const char *gpu_model;	 /* "A10G", "NVIDIA A10", "T4" */
	const char *gpu_vendor;	 /* "NVIDIA" */
	unsigned gpu_memory_mib; /* per GPU */
	bool nvswitch;		 /* needs Fabric Manager */
	const char *gpu_arch;	 /* "turing", "ampere", "volta", "hopper", "ada" */
	double price;		 /* on-demand, per hour */
	/* RDMA interfaces per node: EC2's EfaInfo.MaximumEfaInterfaces, ECS's EriQuantity;
	 * on Tencent an HCC type's RDMA network (1); 0: none (docs/internals/fabric.md) */
	unsigned rdma_interfaces;
};

struct sim_image {
	enum sim_cloud cloud;
	const char *id;
	const char *name;
	const char *description;
	const char *os;	     /* "ubuntu" */
	const char *version; /* "22.04" */
	const char *owner;   /* "amazon", "system", "PUBLIC_IMAGE" */
	const char *created; /* ISO 8601 */
	bool gpu_ready;	     /* driver and CUDA preinstalled */
	const char *driver;  /* driver branch on a GPU-ready image, else NULL */
	const char *cuda;    /* CUDA version on a GPU-ready image, else NULL */
};

struct sim_region {
	enum sim_cloud cloud;
	const char *name;
	const char *const *zones; /* NULL-terminated */
};

/* What one cloud sells: its row's .catalog, defined in sim/NAME/offer.c. */
struct sim_catalog {
	const struct sim_itype *itypes;
	size_t n_itypes;
	const struct sim_image *images;
	size_t n_images;
	const struct sim_region *regions;
	size_t n_regions;
	/* "ZONE TYPE": a zone that does not offer a type every other zone of its region does
	 * (real clouds sell each type in some zones only); NULL-terminated */
	const char *const *gaps;
};
/* The initialiser of a struct sim_catalog from three arrays and the gaps. */
#define SIM_CATALOG_OF(types, images, regions, gaps_)                                      \
	{                                                                                  \
		.itypes = (types), .n_itypes = sizeof(types) / sizeof((types)[0]),         \
		.images = (images), .n_images = sizeof(images) / sizeof((images)[0]),      \
		.regions = (regions), .n_regions = sizeof(regions) / sizeof((regions)[0]), \
		.gaps = (gaps_)                                                            \
	}

/* The spot price as a share of on-demand. */
#define SIM_SPOT_SHARE 0.35

const struct sim_itype *sim_catalog_itype(enum sim_cloud c, const char *name);
/* The array of cloud c's types (images, regions) in catalogue order; returns the count. */
size_t sim_catalog_itypes(enum sim_cloud c, const struct sim_itype **out);

const struct sim_image *sim_catalog_image(enum sim_cloud c, const char *id);
size_t sim_catalog_images(enum sim_cloud c, const struct sim_image **out);

const struct sim_region *sim_catalog_region(enum sim_cloud c, const char *name);
size_t sim_catalog_regions(enum sim_cloud c, const struct sim_region **out);
/* Whether zone belongs to region. */
bool sim_catalog_zone_ok(const struct sim_region *r, const char *zone);
/* Whether zone (of its region) offers type, a type of cloud c's catalogue. */
bool sim_catalog_offered(enum sim_cloud c, const char *zone, const char *type);

/* Hourly price of a type, spot or on-demand. */
double sim_catalog_price(const struct sim_itype *t, bool spot);

/* Yuan per US dollar of the international sites' list prices (Alibaba, Tencent): their USD
 * figures are the China site's CNY ones divided by it, rounded to 4 decimals. */
#define SIM_INTL_CNY_PER_USD 7.2

/* sim_catalog_price for an account of the China site (CNY, the catalogue's figure) or,
 * intl, of the international site (USD); docs/sim.md, "Two sites". */
double sim_catalog_site_price(const struct sim_itype *t, bool spot, bool intl);

#endif
