/*
 * catalog.c: lookups in what the emulated clouds sell. Each cloud's data is its own
 * (sim/NAME/offer.c, reached through its row of the frontend table).
 *
 * GPU counts, models and memory are the vendors' published figures for each type; vCPU
 * and memory are the published shapes. Prices are plausible list prices per hour (USD
 * for AWS, CNY for Alibaba and Tencent) chosen for tests and demos, not quotes. Image
 * ids are made up in each cloud's id shape.
 */
#include <math.h>
#include <stddef.h>
#include <string.h>

#include "sim/catalog.h"

size_t sim_catalog_itypes(enum sim_cloud c, const struct sim_itype **out)
{
	*out = sim_frontend(c)->catalog->itypes;
	return sim_frontend(c)->catalog->n_itypes;
}

size_t sim_catalog_images(enum sim_cloud c, const struct sim_image **out)
{
	*out = sim_frontend(c)->catalog->images;
	return sim_frontend(c)->catalog->n_images;
}

size_t sim_catalog_regions(enum sim_cloud c, const struct sim_region **out)
{
	*out = sim_frontend(c)->catalog->regions;
	return sim_frontend(c)->catalog->n_regions;
}

/* The item of an array of n items of size bytes whose name, a string at offset off, is
 * name; NULL when none is (or name is NULL). */
static const void *find(const void *items, size_t n, size_t size, size_t off, const char *name)
{
	for (size_t i = 0; name && i < n; i++) {
		const char *item = (const char *)items + i * size;
		const char *item_name;

		memcpy(&item_name, item + off, sizeof(item_name));
		if (!strcmp(item_name, name))
			return item;
	}
	return NULL;
}

const struct sim_itype *sim_catalog_itype(enum sim_cloud c, const char *name)
{
	const struct sim_catalog *cat = sim_frontend(c)->catalog;

	return find(cat->itypes, cat->n_itypes, sizeof(*cat->itypes),
		    offsetof(struct sim_itype, name), name);
}

const struct sim_image *sim_catalog_image(enum sim_cloud c, const char *id)
{
	const struct sim_catalog *cat = sim_frontend(c)->catalog;

	return find(cat->images, cat->n_images, sizeof(*cat->images),
		    offsetof(struct sim_image, id), id);
}

const struct sim_region *sim_catalog_region(enum sim_cloud c, const char *name)
{
	const struct sim_catalog *cat = sim_frontend(c)->catalog;

	return find(cat->regions, cat->n_regions, sizeof(*cat->regions),
		    offsetof(struct sim_region, name), name);
}

bool sim_catalog_zone_ok(const struct sim_region *r, const char *zone)
{
	if (!r || !zone)
		return false;
	for (const char *const *z = r->zones; *z; z++)
		if (!strcmp(*z, zone))
			return true;
	return false;
}

bool sim_catalog_offered(enum sim_cloud c, const char *zone, const char *type)
{
	const char *const *g = sim_frontend(c)->catalog->gaps;
	size_t zl = zone ? strlen(zone) : 0;

	for (; g && *g && zone && type; g++)
		if (strncmp(*g, zone, zl) == 0 && (*g)[zl] == ' ' && strcmp(*g + zl + 1, type) == 0)
			return false;
	return true;
}

double sim_catalog_price(const struct sim_itype *t, bool spot)
{
	if (!t)
		return 0.0;
	return spot ? t->price * SIM_SPOT_SHARE : t->price;
}

double sim_catalog_site_price(const struct sim_itype *t, bool spot, bool intl)
{
	double cny = sim_catalog_price(t, spot);

	return intl ? round(cny / SIM_INTL_CNY_PER_USD * 10000.0) / 10000.0 : cny;
}
