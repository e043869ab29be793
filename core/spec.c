/*
 * spec.c: loading a cluster spec (see spec.h): the bytes, under the size cap, checked for
 * NUL and UTF-8, then spec-yaml.c, spec-env.c and spec-validate.c; and the small helpers
 * around it. docs/internals/spec.md gives the pipeline and why each limit exists.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/alloc.h"
#include "core/buf.h"
#include "core/provider.h"
#include "core/spec-tree.h"
#include "core/spec.h"
#include "core/str.h"

#define READ_CHUNK 16384

const char *const gc_market_names[GC_MARKET_SPOT_THEN_ON_DEMAND + 1] = { "on-demand", "spot",
									 "spot-then-on-demand" };
const char *const gc_placement_names[GC_PLACEMENT_CLUSTER + 1] = { "any", "same-zone", "cluster" };
const char *const gc_interconnect_names[GC_INTERCONNECT_STANDARD + 1] = { "auto", "rdma",
									  "standard" };

const char *gc_market_name(enum gc_market m)
{
	return m <= GC_MARKET_SPOT_THEN_ON_DEMAND ? gc_market_names[m] : "unknown";
}

const char *gc_placement_name(enum gc_placement p)
{
	return p <= GC_PLACEMENT_CLUSTER ? gc_placement_names[p] : "unknown";
}

const char *gc_interconnect_name(enum gc_interconnect i)
{
	return i <= GC_INTERCONNECT_STANDARD ? gc_interconnect_names[i] : "unknown";
}

unsigned gc_spec_node_count(const struct gc_spec *spec)
{
	unsigned n = 0;

	if (!spec)
		return 0;
	for (size_t i = 0; i < spec->n_groups; i++)
		n += spec->groups[i].count;
	return n;
}

const struct gc_spec_subnet *gc_spec_subnet(const struct gc_spec *spec, const char *zone)
{
	for (size_t i = 0; spec && zone && i < spec->provider.network.n_subnets; i++)
		if (strcmp(spec->provider.network.subnets[i].zone, zone) == 0)
			return &spec->provider.network.subnets[i];
	return NULL;
}

int gc_parse_duration(const char *s, uint64_t *out_seconds)
{
	char num[24];
	uint64_t v, unit;
	size_t n;

	if (!s)
		return -1;
	n = strlen(s);
	if (n < 2 || n - 1 >= sizeof(num))
		return -1;
	switch (s[n - 1]) {
	case 's': unit = 1; break;
	case 'm': unit = 60; break;
	case 'h': unit = 3600; break;
	case 'd': unit = 86400; break;
	default: return -1;
	}
	memcpy(num, s, n - 1);
	num[n - 1] = '\0';
	if (gc_parse_u64(num, UINT64_MAX / unit, &v) < 0)
		return -1;
	*out_seconds = v * unit;
	return 0;
}

void gc_format_duration(uint64_t seconds, char *out, size_t size)
{
	static const struct {
		uint64_t secs;
		char unit;
	} units[] = { { 86400, 'd' }, { 3600, 'h' }, { 60, 'm' } };

	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (seconds && seconds % units[i].secs == 0) {
			snprintf(out, size, "%" PRIu64 "%c", seconds / units[i].secs,
				 units[i].unit);
			return;
		}
	}
	snprintf(out, size, "%" PRIu64 "s", seconds);
}

void gc_spec_free(struct gc_spec *spec)
{
	if (!spec)
		return;
	free(spec->file);
	free(spec->name);
	free(spec->provider.region);
	free(spec->provider.profile);
	free(spec->provider.endpoint);
	free(spec->provider.oidc.role);
	free(spec->provider.oidc.provider);
	free(spec->provider.oidc.audience);
	free(spec->provider.oidc.session_name);
	free(spec->provider.network.vpc);
	for (size_t i = 0; i < spec->provider.network.n_subnets; i++) {
		free(spec->provider.network.subnets[i].zone);
		free(spec->provider.network.subnets[i].id);
	}
	free(spec->provider.network.subnets);
	free(spec->ssh.user);
	gc_strv_free(spec->ssh.allow_from, spec->ssh.n_allow_from);
	gc_strv_free(spec->bootstrap.monitoring_allow_from,
		     spec->bootstrap.n_monitoring_allow_from);
	free(spec->ssh.key_env);
	for (size_t i = 0; spec->groups && i < spec->n_groups; i++) {
		struct gc_spec_group *g = &spec->groups[i];

		free(g->name);
		gc_strv_free(g->instance_types, g->n_instance_types);
		gc_strv_free(g->zones, g->n_zones);
		free(g->image);
		free(g->gpus_prices);
		free(g->role);
	}
	free(spec->groups);
	free(spec->bootstrap.driver);
	free(spec->bootstrap.cuda);
	free(spec->bootstrap.cudnn);
	for (size_t i = 0; i < GC_MIRROR_N; i++)
		free(spec->bootstrap.mirrors[i]);
	free(spec->lifecycle.on_preempt);
	for (size_t i = 0; spec->bootstrap.steps && i < spec->bootstrap.n_steps; i++) {
		free(spec->bootstrap.steps[i].name);
		free(spec->bootstrap.steps[i].run);
	}
	free(spec->bootstrap.steps);
	for (size_t i = 0; spec->tags && i < spec->n_tags; i++) {
		free(spec->tags[i].key);
		free(spec->tags[i].value);
	}
	free(spec->tags);
	for (size_t i = 0; spec->envs && i < spec->n_envs; i++) {
		free(spec->envs[i].key);
		free(spec->envs[i].value);
	}
	free(spec->envs);
	gc_strv_free(spec->secrets, spec->n_secrets);
	free(spec->workdir);
	for (size_t i = 0; spec->mounts && i < spec->n_mounts; i++) {
		free(spec->mounts[i].bucket);
		free(spec->mounts[i].path);
	}
	free(spec->mounts);
	free(spec);
}

/* NUL bytes and invalid UTF-8, reported at the first offending byte. */
static int check_bytes(const char *data, size_t len, struct gc_diags *diags)
{
	const unsigned char *s = (const unsigned char *)data;
	unsigned line, col;
	size_t i = 0;

	if (!memchr(data, '\0', len) && gc_utf8_valid(data, len))
		return 0;
	while (i < len) {
		unsigned c = s[i];
		size_t n = gc_utf8_char(data + i, len - i);

		if (c == 0 || n == 0) {
			spec_offset_pos(data, len, i, &line, &col);
			gc_diag_add(diags, line, col, "", "%s",
				    c == 0 ? "NUL byte not allowed" : "invalid UTF-8");
			return -1;
		}
		i += n;
	}
	return 0;
}

static void add_too_big(struct gc_diags *diags, bool size_known, uint64_t size)
{
	if (size_known)
		gc_diag_add(diags, 0, 0, "",
			    "file is %" PRIu64 " bytes, larger than the %u-byte limit", size,
			    GC_SPEC_MAX_FILE_BYTES);
	else
		gc_diag_add(diags, 0, 0, "", "file is larger than the %u-byte limit",
			    GC_SPEC_MAX_FILE_BYTES);
}

/* err's one-line summary of what diags holds, after sorting it. */
static int invalid(struct gc_error *err, const char *name, struct gc_diags *diags, size_t before)
{
	const struct gc_diag *d;
	char where[256];
	size_t more;

	gc_diags_sort(diags);
	if (diags->nr == 0)
		return gc_error_set(err, GC_EINVALID, "invalid spec '%s'", name);
	d = &diags->items[0];
	more = diags->nr > before + 1 ? diags->nr - before - 1 : 0;
	if (d->line == 0)
		snprintf(where, sizeof(where), "%s", name);
	else
		snprintf(where, sizeof(where), "%s:%u:%u", name, d->line, d->col);
	if (more)
		return gc_error_set(err, GC_EINVALID, "%s: %s (and %zu more)", where, d->message,
				    more);
	return gc_error_set(err, GC_EINVALID, "%s: %s", where, d->message);
}

/* Reports an oversized file into diags (or a scratch list when the caller gave none). */
static int too_big(struct gc_error *err, const char *name, struct gc_diags *diags, bool size_known,
		   uint64_t size)
{
	struct gc_diags local;
	size_t before;

	if (!diags) {
		gc_diags_init(&local, name);
		diags = &local;
	}
	before = diags->nr;
	add_too_big(diags, size_known, size);
	invalid(err, name, diags, before);
	if (diags == &local)
		gc_diags_release(&local);
	return -1;
}

int gc_spec_load_buffer(struct gc_spec **out, const char *name, const char *data, size_t len,
			const struct gc_spec_env *env, struct gc_diags *diags, struct gc_error *err)
{
	struct spec_doc doc = { NULL, NULL };
	struct gc_spec *spec = NULL;
	struct gc_diags local;
	bool own_diags = false;
	size_t before;
	int ret = -1;

	if (!name)
		name = "-";
	if (!data)
		data = "";
	if (!diags) {
		gc_diags_init(&local, name);
		diags = &local;
		own_diags = true;
	}
	before = diags->nr;
	if (len > GC_SPEC_MAX_FILE_BYTES) {
		add_too_big(diags, true, len);
		goto bad;
	}
	if (check_bytes(data, len, diags) < 0 || spec_yaml_parse(&doc, data, len, env, diags) < 0)
		goto bad;
	spec = gc_xcalloc(1, sizeof(*spec));
	spec->file = gc_xstrdup(name);
	if (spec_validate(spec, doc.root, diags) < 0)
		goto bad;
	*out = spec;
	spec = NULL;
	ret = 0;
	goto out;
bad:
	invalid(err, name, diags, before);
out:
	gc_spec_free(spec);
	spec_doc_release(&doc);
	if (own_diags)
		gc_diags_release(&local);
	return ret;
}

int gc_spec_load_file(struct gc_spec **out, const char *path, const struct gc_spec_env *env,
		      struct gc_diags *diags, struct gc_error *err)
{
	struct gc_buf b = GC_BUF_INIT(GC_SPEC_MAX_FILE_BYTES + 1);
	char chunk[READ_CHUNK];
	struct stat st;
	int fd, ret = -1;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return gc_error_set(err, GC_EIO, "cannot open spec '%s': %s", path,
				    strerror(errno));
	if (fstat(fd, &st) < 0) {
		gc_error_set(err, GC_EIO, "cannot read spec '%s': %s", path, strerror(errno));
		goto out;
	}
	if (S_ISDIR(st.st_mode)) {
		gc_error_set(err, GC_EIO, "cannot read spec '%s': %s", path, strerror(EISDIR));
		goto out;
	}
	/* a regular file's size is known: do not read a byte of an oversized one */
	if (S_ISREG(st.st_mode) && (uint64_t)st.st_size > GC_SPEC_MAX_FILE_BYTES) {
		too_big(err, path, diags, true, (uint64_t)st.st_size);
		goto out;
	}
	while (b.len <= GC_SPEC_MAX_FILE_BYTES) {
		size_t room = b.max - b.len;
		ssize_t n = read(fd, chunk, room < sizeof(chunk) ? room : sizeof(chunk));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			gc_error_set(err, GC_EIO, "cannot read spec '%s': %s", path,
				     strerror(errno));
			goto out;
		}
		if (n == 0)
			break;
		gc_buf_add(&b, chunk, (size_t)n); /* fits: the read was sized to the room */
	}
	if (b.len > GC_SPEC_MAX_FILE_BYTES) {
		/* a pipe, or a file that grew since fstat: the real size is unknown */
		too_big(err, path, diags, false, 0);
		goto out;
	}
	ret = gc_spec_load_buffer(out, path, b.data, b.len, env, diags, err);
out:
	close(fd);
	gc_buf_release(&b);
	return ret;
}
