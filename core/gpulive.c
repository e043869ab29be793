/*
 * gpulive.c: show-gpus' listings, live or shipped, and their cache on disk
 * (core/gpulive.h; docs/internals/gpus.md).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "core/alloc.h"
#include "core/error.h"
#include "core/gpuspec.h"
#include "core/gpulive.h"

#define CACHE_VERSION 2

void gc_gpu_listing_init(struct gc_gpu_listing *l)
{
	memset(l, 0, sizeof(*l));
}

void gc_gpu_listing_release(struct gc_gpu_listing *l)
{
	if (!l)
		return;
	free(l->rows);
	gc_gpu_listing_init(l);
}

static struct gc_gpu_row *push(struct gc_gpu_listing *l)
{
	struct gc_gpu_row *r;

	GC_ALLOC_GROW(l->rows, l->n + 1, l->alloc);
	r = &l->rows[l->n++];
	memset(r, 0, sizeof(*r));
	r->on_demand = r->spot = r->reserved[0] = r->reserved[1] = -1;
	return r;
}

static void start(struct gc_gpu_listing *l, const char *cloud, const char *region)
{
	gc_gpu_listing_release(l);
	snprintf(l->cloud, sizeof(l->cloud), "%s", cloud);
	snprintf(l->region, sizeof(l->region), "%s", region);
}

void gc_gpulive_catalogue(struct gc_gpu_listing *out, const struct gc_provider_ops *ops)
{
	start(out, ops->name, ops->facts->home_region);
	for (const struct gc_gpu_offer *o = ops->facts->gpu_offers; o && o->type; o++) {
		struct gc_gpu_row *r = push(out);

		snprintf(r->type, sizeof(r->type), "%s", o->type);
		snprintf(r->model, sizeof(r->model), "%s", o->model);
		r->gpus = o->gpus;
		r->gpu_memory_mib = o->gpu_memory_gib * 1024;
		r->vcpus = o->vcpus;
		r->memory_gib = o->memory_gib;
		snprintf(r->interconnect, sizeof(r->interconnect), "%s", o->interconnect);
		r->on_demand = o->price;
		snprintf(r->currency, sizeof(r->currency), "%s", o->currency);
	}
}

/* The catalogue's interconnect for a type it ships; else what the facts say. */
static void interconnect(char *out, size_t size, const struct gc_provider_ops *ops,
			 const struct gc_type_facts *f)
{
	for (const struct gc_gpu_offer *o = ops->facts->gpu_offers; o && o->type; o++)
		if (strcmp(o->type, f->name) == 0) {
			snprintf(out, size, "%s", o->interconnect);
			return;
		}
	snprintf(out, size, "%s", f->rdma_interfaces ? "RDMA" : "");
}

int gc_gpulive_fetch(struct gc_gpu_listing *out, struct gc_provider *p, int64_t now,
		     struct gc_error *err)
{
	struct gc_gpu_type *types = NULL;
	size_t n = 0;

	if (gc_provider_gpu_types(p, &types, &n, err) != 0)
		return -1;
	start(out, p->ops->name, p->region);
	out->live = true;
	out->fetched_at = now;
	for (size_t i = 0; i < n; i++) {
		const struct gc_type_facts *f = &types[i].facts;
		const char *model = gc_gpu_model_canonical(f->gpu_model);
		struct gc_gpu_row *r = push(out);
		char cur[GC_CURRENCY_SIZE] = "", reserved_cur[GC_CURRENCY_SIZE] = "";
		struct gc_error e;

		snprintf(r->type, sizeof(r->type), "%s", f->name);
		snprintf(r->model, sizeof(r->model), "%s", model ? model : f->gpu_model);
		r->gpus = f->gpus;
		r->gpu_memory_mib = f->gpu_memory_mib;
		r->vcpus = f->vcpus;
		r->memory_gib = (f->memory_mib + 512) / 1024;
		r->n_zones = (unsigned)types[i].n_zones;
		interconnect(r->interconnect, sizeof(r->interconnect), p->ops, f);
		if (!(p->ops->caps & GC_CAP_PRICE))
			continue;
		/* reserved first: a cloud whose reserved terms come with the on-demand price
		 * (a price list's product) then answers the on-demand price from its cache */
		gc_error_init(&e);
		if (p->ops->reserved_price &&
		    gc_provider_reserved_price(p, f->name, r->reserved, reserved_cur, &e) != 0)
			r->reserved[0] = r->reserved[1] = -1;
		/* a price the cloud cannot give shows as none: the listing is still worth it */
		gc_error_init(&e);
		if (gc_provider_price(p, f->name, NULL, false, &r->on_demand, r->currency, &e) != 0)
			r->on_demand = -1;
		if (strcmp(reserved_cur, r->currency) != 0)
			r->reserved[0] = r->reserved[1] = -1;
		gc_error_init(&e);
		if (gc_provider_price(p, f->name, NULL, true, &r->spot, cur, &e) != 0 ||
		    (r->currency[0] && strcmp(cur, r->currency) != 0))
			r->spot = -1;
		else if (!r->currency[0])
			snprintf(r->currency, sizeof(r->currency), "%s", cur);
	}
	gc_gpu_types_free(types, n);
	return 0;
}

char *gc_gpulive_cache_path(const char *dir, const char *cloud, const char *region)
{
	return gc_xasprintf("%s/gpus-%s-%s.json", dir, cloud, region);
}

static void copy_str(char *out, size_t size, json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));

	snprintf(out, size, "%s", s ? s : "");
}

static unsigned get_uint(json_t *o, const char *key)
{
	json_int_t v = json_integer_value(json_object_get(o, key));

	return v > 0 && v < (json_int_t)UINT32_MAX ? (unsigned)v : 0;
}

static double get_price(json_t *o, const char *key)
{
	json_t *v = json_object_get(o, key);

	return json_is_number(v) && json_number_value(v) >= 0 ? json_number_value(v) : -1;
}

static bool same(json_t *doc, const char *key, const char *want)
{
	const char *s = json_string_value(json_object_get(doc, key));

	return s && strcmp(s, want) == 0;
}

int gc_gpulive_load(struct gc_gpu_listing *out, const char *path, const char *cloud,
		    const char *region, const char *key, int64_t now, int64_t max_age_s)
{
	json_t *doc = json_load_file(path, 0, NULL), *offers, *o;
	json_int_t at;
	size_t i;
	int ret = 1;

	offers = json_object_get(doc, "offers");
	at = json_integer_value(json_object_get(doc, "fetched_at"));
	if (!json_is_array(offers) || get_uint(doc, "version") != CACHE_VERSION ||
	    !same(doc, "cloud", cloud) || !same(doc, "region", region) || !same(doc, "key", key) ||
	    at <= 0 || at > now || now - at > max_age_s)
		goto out;
	start(out, cloud, region);
	out->live = true;
	out->fetched_at = at;
	json_array_foreach(offers, i, o)
	{
		struct gc_gpu_row *r = push(out);

		copy_str(r->type, sizeof(r->type), o, "type");
		copy_str(r->model, sizeof(r->model), o, "model");
		copy_str(r->interconnect, sizeof(r->interconnect), o, "interconnect");
		copy_str(r->currency, sizeof(r->currency), o, "currency");
		r->gpus = get_uint(o, "gpus");
		r->gpu_memory_mib = get_uint(o, "gpu_memory_mib");
		r->vcpus = get_uint(o, "vcpus");
		r->memory_gib = get_uint(o, "memory_gib");
		r->n_zones = get_uint(o, "zones");
		r->on_demand = get_price(o, "on_demand_hourly");
		r->spot = get_price(o, "spot_hourly");
		r->reserved[0] = get_price(o, "reserved_1y_hourly");
		r->reserved[1] = get_price(o, "reserved_3y_hourly");
		if (!r->type[0] || !r->gpus) { /* not ours: a miss */
			gc_gpu_listing_release(out);
			goto out;
		}
	}
	ret = 0;
out:
	json_decref(doc);
	return ret;
}

/* mkdir -p for the cache's folder, 0700: what a user looked up is nobody else's. */
static int make_dirs(const char *dir, struct gc_error *err)
{
	char *d = gc_xstrdup(dir);
	int ret = 0;

	for (char *s = d + 1; ret == 0; s++) {
		bool end = *s == '\0';

		if (*s != '/' && !end)
			continue;
		*s = '\0';
		if (mkdir(d, 0700) != 0 && errno != EEXIST)
			ret = gc_error_set(err, GC_EIO, "cannot create '%s': %s", d,
					   strerror(errno));
		if (end)
			break;
		*s = '/';
	}
	free(d);
	return ret;
}

static json_t *price_json(double v)
{
	return v >= 0 ? json_real(v) : json_null();
}

int gc_gpulive_save(const struct gc_gpu_listing *l, const char *path, const char *key,
		    struct gc_error *err)
{
	json_t *offers = json_array(), *doc;
	char *dir = gc_xstrdup(path), *slash = strrchr(dir, '/'), *tmp = NULL;
	int ret = -1;

	for (size_t i = 0; i < l->n; i++) {
		const struct gc_gpu_row *r = &l->rows[i];
		json_t *o = json_pack("{s:s, s:s, s:I, s:I, s:I, s:I, s:I, s:s, s:s}", "type",
				      r->type, "model", r->model, "gpus", (json_int_t)r->gpus,
				      "gpu_memory_mib", (json_int_t)r->gpu_memory_mib, "vcpus",
				      (json_int_t)r->vcpus, "memory_gib", (json_int_t)r->memory_gib,
				      "zones", (json_int_t)r->n_zones, "interconnect",
				      r->interconnect, "currency", r->currency);

		json_object_set_new(o, "on_demand_hourly", price_json(r->on_demand));
		json_object_set_new(o, "spot_hourly", price_json(r->spot));
		json_object_set_new(o, "reserved_1y_hourly", price_json(r->reserved[0]));
		json_object_set_new(o, "reserved_3y_hourly", price_json(r->reserved[1]));
		json_array_append_new(offers, o);
	}
	doc = json_pack("{s:i, s:s, s:s, s:s, s:I, s:o}", "version", CACHE_VERSION, "cloud",
			l->cloud, "region", l->region, "key", key, "fetched_at",
			(json_int_t)l->fetched_at, "offers", offers);
	if (slash) {
		*slash = '\0';
		if (*dir && make_dirs(dir, err) != 0)
			goto out;
	}
	tmp = gc_xasprintf("%s.%ld.tmp", path, (long)getpid());
	if (json_dump_file(doc, tmp, JSON_COMPACT) != 0 || rename(tmp, path) != 0) {
		gc_error_set(err, GC_EIO, "cannot write the GPU cache '%s': %s", path,
			     strerror(errno));
		unlink(tmp);
		goto out;
	}
	ret = 0;
out:
	json_decref(doc);
	free(dir);
	free(tmp);
	return ret;
}
