/*
 * cloudcheck.c: plan's checks of the spec against what the cloud offers (cloudcheck.h).
 * Each check asks the cloud once: the regions, the region's zones, the zones offering each
 * distinct instance type, each distinct image. Nothing is created.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/buf.h"
#include "core/cloudcheck.h"
#include "core/fabric.h"
#include "core/log.h"
#include "core/suggest.h"

/* "FILE:LINE:COL: " for pos, else for fallback (a value the spec did not write). */
static void where(char *out, size_t size, const struct gc_spec *spec, const struct gc_spec_pos *pos,
		  const struct gc_spec_pos *fallback)
{
	const struct gc_spec_pos *at = pos && pos->line ? pos : fallback;

	if (at && at->line)
		snprintf(out, size, "%.256s:%u:%u: ", spec->file ? spec->file : "spec", at->line,
			 at->col);
	else
		snprintf(out, size, "%s", "");
}

static bool strv_has(char *const *v, size_t n, const char *s)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(v[i], s) == 0)
			return true;
	return false;
}

/* "a, b, c", cut with ", ..." where the buffer ends. */
static void join(struct gc_buf *b, char *const *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (gc_buf_addf(b, "%s%s", i ? ", " : "", v[i]) < 0) {
			gc_buf_addstr(b, ", ...");
			return;
		}
}

/* "; did you mean 'x'?" when a candidate is close (core/suggest.h), else "". */
static void did_you_mean(char *out, size_t size, const char *word, char *const *v, size_t n)
{
	const char *s = gc_suggest(word, (const char *const *)v, n);

	snprintf(out, size, s ? "; did you mean '%s'?" : "%s", s ? s : "");
}

/* The cloud's regions. A region the cloud does not know fails every call made for it
 * (the endpoint does not resolve, or the signature's scope is refused), so on a failure
 * the cloud's home region is asked instead, with the same credentials. 1: no listing. */
static int list_regions(struct gc_provider *p, const struct gc_spec *spec, char ***out, size_t *n,
			struct gc_error *err)
{
	const char *home = p->ops->facts ? p->ops->facts->home_region : NULL;
	struct gc_provider *h = NULL;
	struct gc_error lerr;
	int ret;

	gc_error_init(&lerr);
	if (gc_provider_regions(p, out, n, &lerr) == 0)
		return 0;
	if (lerr.code == GC_EUNSUPPORTED)
		return 1;
	if (lerr.code == GC_ECANCELLED || !home || strcmp(home, p->region) == 0) {
		if (err)
			*err = lerr;
		return -1;
	}
	gc_log_debug(p->log, "cannot list the regions from %s (%s); asking %s", p->region,
		     lerr.message, home);
	if (gc_provider_open_region(&h, p, spec, home, err) < 0)
		return -1;
	ret = gc_provider_regions(h, out, n, err);
	gc_provider_close(h);
	return ret;
}

static int check_region(struct gc_provider *p, const struct gc_spec *spec, struct gc_error *err)
{
	char **regions = NULL, at[300], dym[128];
	size_t n = 0;
	int rc = list_regions(p, spec, &regions, &n, err);
	struct gc_buf all = GC_BUF_INIT(400);

	if (rc != 0)
		return rc < 0 ? gc_error_prefix(err, "cannot check region '%s'", p->region) : 0;
	if (n == 0 || strv_has(regions, n, spec->provider.region)) {
		gc_strv_free(regions, n);
		return 0;
	}
	where(at, sizeof(at), spec, &spec->provider.region_pos, NULL);
	did_you_mean(dym, sizeof(dym), spec->provider.region, regions, n);
	if (!dym[0])
		join(&all, regions, n);
	gc_error_set(err, GC_EINVALID, "%sunknown region '%s' for %s%s%s%s%s", at,
		     spec->provider.region, spec->provider.name, dym,
		     all.len ? " (its regions: " : "", all.data, all.len ? ")" : "");
	gc_buf_release(&all);
	gc_strv_free(regions, n);
	return -1;
}

/* The zones each group names belong to the region. */
static int check_zones(struct gc_provider *p, const struct gc_spec *spec, char **zones,
		       size_t n_zones, struct gc_error *err)
{
	for (size_t i = 0; i < spec->n_groups; i++) {
		const struct gc_spec_group *g = &spec->groups[i];

		for (size_t z = 0; z < g->n_zones; z++) {
			struct gc_buf all = GC_BUF_INIT(400);
			char at[300], dym[128];

			if (strv_has(zones, n_zones, g->zones[z]))
				continue;
			where(at, sizeof(at), spec, &g->zones_pos[z], &g->pos);
			did_you_mean(dym, sizeof(dym), g->zones[z], zones, n_zones);
			join(&all, zones, n_zones);
			gc_error_set(err, GC_EINVALID,
				     "%szone '%s' is not in region '%s'%s (its zones: %s)", at,
				     g->zones[z], p->region, dym, all.data);
			gc_buf_release(&all);
			return -1;
		}
	}
	return 0;
}

/* Every instance type of a group is offered in a zone the group may use: each zone it
 * names, or, naming none, at least one of the region's. */
static int check_types(struct gc_provider *p, const struct gc_spec *spec, struct gc_error *err)
{
	for (size_t i = 0; i < spec->n_groups; i++) {
		const struct gc_spec_group *g = &spec->groups[i];

		for (size_t t = 0; t < g->n_instance_types; t++) {
			const char *type = g->instance_types[t];
			struct gc_error lerr;
			char **offered = NULL, at[300];
			size_t n = 0;
			struct gc_buf all = GC_BUF_INIT(400);
			int ret = 0;

			/* a type listed in several groups is asked for again: a rare spec */
			gc_error_init(&lerr);
			if (gc_provider_type_zones(p, type, &offered, &n, &lerr) < 0) {
				if (lerr.code == GC_EUNSUPPORTED)
					return 0;
				if (lerr.code == GC_ECANCELLED) {
					if (err)
						*err = lerr;
					return -1;
				}
				/* an offering API a region lacks, or a policy without its
				 * permission, leaves the type to the launch: not a reason to
				 * refuse the plan */
				gc_log_warn(p->log, "%s; instance type '%s' not checked",
					    lerr.message, type);
				continue;
			}
			where(at, sizeof(at), spec, &g->instance_types_pos[t], &g->pos);
			if (n == 0)
				ret = gc_error_set(err, GC_EINVALID,
						   "%sinstance type '%s' does not exist in region "
						   "'%s' (or is not offered there)",
						   at, type, p->region);
			for (size_t z = 0; ret == 0 && z < g->n_zones; z++) {
				if (strv_has(offered, n, g->zones[z]))
					continue;
				join(&all, offered, n);
				ret = gc_error_set(
					err, GC_EINVALID,
					"%sinstance type '%s' is not offered in zone '%s' "
					"of group '%s' (it is in %s)",
					at, type, g->zones[z], g->name, all.data);
			}
			gc_buf_release(&all);
			gc_strv_free(offered, n);
			if (ret < 0)
				return -1;
		}
	}
	return 0;
}

/* Each image, alias or literal id, resolves in the region (the driver keeps what it found,
 * so apply's launch does not ask again where the driver caches). */
static int check_images(struct gc_provider *p, const struct gc_spec *spec, struct gc_error *err)
{
	for (size_t i = 0; i < spec->n_groups; i++) {
		const struct gc_spec_group *g = &spec->groups[i];
		char *id = NULL, at[300];
		struct gc_error lerr;
		bool seen = false;

		for (size_t k = 0; k < i && !seen; k++)
			seen = spec->groups[k].image_is_alias == g->image_is_alias &&
				strcmp(spec->groups[k].image, g->image) == 0;
		if (seen)
			continue;
		gc_error_init(&lerr);
		if (gc_provider_resolve_image(p, g->image, g->image_is_alias, &id, &lerr) < 0) {
			if (lerr.code == GC_EUNSUPPORTED)
				return 0;
			if (err)
				*err = lerr;
			where(at, sizeof(at), spec, &g->image_pos, &g->pos);
			/* at ends in ": ", which the prefix adds again */
			if (at[0])
				at[strlen(at) - 2] = '\0';
			return at[0] ? gc_error_prefix(err, "%s", at)
				     : gc_error_prefix(err, "group '%s'", g->name);
		}
		free(id);
	}
	return 0;
}

int gc_cloudcheck_spec(struct gc_provider *p, const struct gc_spec *spec, struct gc_error *err)
{
	char **zones = NULL;
	size_t n_zones = 0;
	struct gc_error lerr;
	bool named = false;
	int ret;

	if (check_region(p, spec, err) < 0)
		return -1;
	for (size_t i = 0; i < spec->n_groups; i++)
		named |= spec->groups[i].n_zones > 0;
	gc_error_init(&lerr);
	if (named) {
		if (gc_provider_zones(p, &zones, &n_zones, &lerr) < 0) {
			if (lerr.code != GC_EUNSUPPORTED) {
				if (err) /* "cannot list the zones of REGION: ..." */
					*err = lerr;
				return -1;
			}
		} else {
			ret = check_zones(p, spec, zones, n_zones, err);
			gc_strv_free(zones, n_zones);
			if (ret < 0)
				return -1;
		}
	}
	if (check_types(p, spec, err) < 0 || check_images(p, spec, err) < 0 ||
	    gc_fabric_check_spec(p, spec, err) < 0)
		return -1;
	return 0;
}
