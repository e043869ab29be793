/*
 * gpuspec.c: the GPU model table and the "A100-80GB:8" request syntax (gpuspec.h).
 */
#include "core/gpuspec.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/error.h"
#include "core/provider.h"
#include "core/str.h"
#include "core/suggest.h"

/* Each model with the memory sizes (GB per GPU) its maker sells it with. */
struct gpu_model {
	const char *name;
	unsigned memory_gib[3];
};

static const struct gpu_model models[] = {
	{ "A10", { 24 } },	{ "A10G", { 24 } },	{ "A30", { 24 } },
	{ "A40", { 48 } },	{ "A100", { 40, 80 } }, { "A800", { 40, 80 } },
	{ "H100", { 80, 94 } }, { "H800", { 80 } },	{ "H20", { 96 } },
	{ "H200", { 141 } },	{ "L4", { 24 } },	{ "L20", { 48 } },
	{ "L40", { 48 } },	{ "L40S", { 48 } },	{ "T4", { 16 } },
	{ "V100", { 16, 32 } }, { "P100", { 16 } },	{ "K80", { 12 } },
	{ "M60", { 8 } },
};

#define N_MODELS (sizeof(models) / sizeof(models[0]))

const char *const gc_gpu_model_names[] = {
	"A10", "A10G", "A30", "A40",  "A100", "A800", "H100", "H800", "H20", "H200",
	"L4",  "L20",  "L40", "L40S", "T4",   "V100", "P100", "K80",  "M60", NULL,
};

static const struct gpu_model *find_model(const char *s, size_t len)
{
	for (size_t i = 0; i < N_MODELS; i++)
		if (strlen(models[i].name) == len && strncasecmp(models[i].name, s, len) == 0)
			return &models[i];
	return NULL;
}

const char *gc_gpu_model_canonical(const char *cloud_name)
{
	const struct gpu_model *m;
	const char *s = cloud_name;

	if (!s)
		return NULL;
	for (;;) {
		while (*s == ' ')
			s++;
		if (strncasecmp(s, "NVIDIA ", 7) == 0)
			s += 7;
		else if (strncasecmp(s, "Tesla ", 6) == 0)
			s += 6;
		else
			break;
	}
	m = find_model(s, strcspn(s, " -"));
	return m ? m->name : NULL;
}

/* A decimal in [1, max] from s[0..len). */
static int parse_num(const char *s, size_t len, unsigned max, unsigned *out)
{
	char buf[16];
	uint64_t v;

	if (len == 0 || len >= sizeof(buf))
		return -1;
	memcpy(buf, s, len);
	buf[len] = '\0';
	if (gc_parse_u64(buf, max, &v) != 0 || v == 0)
		return -1;
	*out = (unsigned)v;
	return 0;
}

static int parse_minimum(struct gc_gpu_request *r, const char *s, size_t len, struct gc_error *err)
{
	const char *eq = memchr(s, '=', len);
	size_t klen = eq ? (size_t)(eq - s) : len;
	size_t vlen = eq ? len - klen - 1 : 0;
	unsigned *dst;

	if (klen == 5 && strncmp(s, "vcpus", 5) == 0)
		dst = &r->min_vcpus;
	else if (klen == 6 && strncmp(s, "memory", 6) == 0)
		dst = &r->min_memory_gib;
	else
		return gc_error_set(err, GC_EINVALID,
				    "unknown GPU option '%.*s' (known: vcpus=N, memory=GB)",
				    (int)klen, s);
	if (vlen > 2 && strncasecmp(eq + 1 + vlen - 2, "GB", 2) == 0 && dst == &r->min_memory_gib)
		vlen -= 2;
	if (!eq || parse_num(eq + 1, vlen, 1u << 20, dst) != 0)
		return gc_error_set(err, GC_EINVALID, "'%.*s' wants a positive whole number",
				    (int)klen, s);
	return 0;
}

int gc_gpu_request_parse(struct gc_gpu_request *out, const char *s, struct gc_error *err)
{
	struct gc_gpu_request r = { .count = 1 };
	const struct gpu_model *m;
	const char *opts = strchr(s, ','), *colon, *dash, *end;
	size_t mlen;

	end = opts ? opts : s + strlen(s);
	colon = memchr(s, ':', (size_t)(end - s));
	dash = memchr(s, '-', (size_t)((colon ? colon : end) - s));
	mlen = (size_t)((dash ? dash : colon ? colon : end) - s);
	if (mlen == 0)
		return gc_error_set(err, GC_EINVALID,
				    "'%s' names no GPU model (write MODEL[-MEMGB][:COUNT], "
				    "such as A100-80GB:8)",
				    s);
	m = find_model(s, mlen);
	if (!m) {
		char word[32];
		const char *near;

		snprintf(word, sizeof(word), "%.*s", (int)(mlen < 31 ? mlen : 31), s);
		for (char *c = word; *c; c++)
			if (*c >= 'a' && *c <= 'z')
				*c = (char)(*c - 'a' + 'A');
		near = gc_suggest(word, gc_gpu_model_names, 0);
		if (near)
			return gc_error_set(err, GC_EINVALID,
					    "unknown GPU model '%.*s' (did you mean '%s'?)",
					    (int)mlen, s, near);
		return gc_error_set(err, GC_EINVALID,
				    "unknown GPU model '%.*s' (known: A10, A10G, A100, H100, "
				    "H200, L4, L40S, T4, V100 and more: gpucluster show-gpus)",
				    (int)mlen, s);
	}
	snprintf(r.model, sizeof(r.model), "%s", m->name);
	if (dash) {
		const char *ms = dash + 1, *me = colon ? colon : end;
		size_t len = (size_t)(me - ms);
		bool known = false;

		if (len > 2 && strncasecmp(me - 2, "GB", 2) == 0)
			len -= 2;
		if (parse_num(ms, len, 1024, &r.memory_gib) != 0)
			return gc_error_set(err, GC_EINVALID,
					    "'%.*s' is not a GPU memory size (write %s-%uGB)",
					    (int)(me - ms), ms, m->name, m->memory_gib[0]);
		for (size_t i = 0; i < 3 && m->memory_gib[i]; i++)
			known |= m->memory_gib[i] == r.memory_gib;
		if (!known)
			return gc_error_set(err, GC_EINVALID,
					    "%s is not made with %u GB (it has %u GB%s)", m->name,
					    r.memory_gib, m->memory_gib[0],
					    m->memory_gib[1] ? " or more" : "");
	}
	if (colon &&
	    parse_num(colon + 1, (size_t)(end - colon - 1), GC_GPU_MAX_COUNT, &r.count) != 0)
		return gc_error_set(err, GC_EINVALID,
				    "'%.*s' is not a GPU count: an instance has 1 to %d GPUs",
				    (int)(end - colon - 1), colon + 1, GC_GPU_MAX_COUNT);
	while (opts) {
		const char *o = opts + 1, *next = strchr(o, ',');
		size_t len = next ? (size_t)(next - o) : strlen(o);

		if (parse_minimum(&r, o, len, err) != 0)
			return -1;
		opts = next;
	}
	*out = r;
	return 0;
}

bool gc_gpu_request_matches(const struct gc_gpu_request *r, const struct gc_type_facts *f)
{
	const char *model = gc_gpu_model_canonical(f->gpu_model);

	if (!model || strcmp(model, r->model) != 0 || f->gpus != r->count)
		return false;
	if (r->memory_gib) {
		double want = r->memory_gib * 1024.0, have = f->gpu_memory_mib;

		if (have < want * 0.9 || have > want * 1.1)
			return false;
	}
	if (f->vcpus < r->min_vcpus)
		return false;
	return (uint64_t)f->memory_mib >= (uint64_t)r->min_memory_gib * 1024;
}

void gc_gpu_request_format(const struct gc_gpu_request *r, char *buf, size_t size)
{
	char mem[16] = "";

	if (r->memory_gib)
		snprintf(mem, sizeof(mem), "-%uGB", r->memory_gib);
	snprintf(buf, size, "%s%s:%u", r->model, mem, r->count);
}
