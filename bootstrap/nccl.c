/*
 * nccl.c: reads nccl-tests' all_reduce_perf output and holds the fabrics' floors
 * (nccl.h, docs/internals/nccl.md).
 */
#include "bootstrap/nccl.h"

#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/fabric.h"
#include "core/str.h"

/* Splits one table row into its whitespace-separated fields; returns how many (at most max). */
static size_t fields(const char *line, size_t len, char out[][32], size_t max)
{
	size_t n = 0, i = 0;

	while (i < len && n < max) {
		size_t k = 0;

		while (i < len && (line[i] == ' ' || line[i] == '\t'))
			i++;
		if (i >= len)
			break;
		while (i < len && line[i] != ' ' && line[i] != '\t') {
			if (k < 31)
				out[n][k++] = line[i];
			i++;
		}
		out[n++][k] = '\0';
	}
	return n;
}

static bool number(const char *s, double *out)
{
	return gc_parse_double(s, out) == 0 && *out >= 0 && *out < 1e9;
}

void gc_nccl_parse(struct gc_nccl_result *out, const char *text, size_t len)
{
	const char *p = text, *end = text + len;
	double max_size = -1;
	bool avg = false;

	memset(out, 0, sizeof(*out));
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);
		char f[13][32];
		size_t k;
		double size, alg, bus, wrong;

		if (n >= 17 && strncmp(p, "# gpucluster-sim:", 17) == 0)
			out->simulated = true;
		else if (n > 9 && strncmp(p, "#  Rank ", 8) == 0)
			out->ranks++;
		else if (n > 21 && strncmp(p, "# Avg bus bandwidth", 19) == 0) {
			const char *c = memchr(p, ':', n);
			char v[1][32];

			avg = c && fields(c + 1, n - (size_t)(c + 1 - p), v, 1) == 1 &&
				number(v[0], &out->avg_busbw);
		} else if (n && p[0] != '#') {
			/* size count type redop root time algbw busbw #wrong (out of place), then
			 * the in-place columns */
			k = fields(p, n, f, 13);
			if (k >= 9 && number(f[0], &size) && number(f[6], &alg) &&
			    number(f[7], &bus) && number(f[8], &wrong)) {
				out->rows++;
				out->wrong += (unsigned long)wrong;
				if (size >= max_size) {
					max_size = size;
					out->busbw_gbps = bus;
					out->algbw_gbps = alg;
				}
			}
		}
		p = nl ? nl + 1 : end;
	}
	out->ok = out->rows > 0 && avg;
}

const char *gc_nccl_fabric(const char *group)
{
	(void)group;
	return "standard";
}

const char *gc_nccl_group_fabric(const struct gc_spec_group *g, const struct gc_type_facts *f)
{
	return gc_fabric_interconnect(g, f) == GC_INTERCONNECT_RDMA ? "rdma" : "standard";
}

double gc_nccl_line_gbit(const char *fabric)
{
	if (strcmp(fabric, "efa") == 0)
		return 400;
	if (strcmp(fabric, "rdma") == 0)
		return 200;
	return 25;
}

double gc_nccl_floor_gbps(const char *fabric)
{
	return gc_nccl_line_gbit(fabric) / 8 / 2;
}

const char *gc_nccl_section(const char *out, size_t out_len, const char *name, size_t *len)
{
	const char *p = out, *end = out + out_len, *s = NULL;
	size_t nl_name = strlen(name);

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t n = nl ? (size_t)(nl - p) : (size_t)(end - p);

		if (s && n >= 2 && strncmp(p, "@@", 2) == 0)
			break;
		if (!s && nl && n == nl_name + 2 && strncmp(p, "@@", 2) == 0 &&
		    memcmp(p + 2, name, nl_name) == 0)
			s = nl + 1;
		p = nl ? nl + 1 : end;
	}
	if (!s)
		return NULL;
	*len = (size_t)(p - s);
	return s;
}

/* A result without #wrong, at or above the floor. */
static bool reaches(const struct gc_nccl_result *r, double floor)
{
	return r->ok && r->wrong == 0 && r->busbw_gbps >= floor;
}

void gc_nccl_group_judge(struct gc_nccl_group *out, const char *text, size_t len,
			 const char *const *ips, size_t n, double floor)
{
	const char *t;
	size_t tl, failed = 0;

	memset(out, 0, sizeof(*out));
	if ((t = gc_nccl_section(text, len, "cluster", &tl)))
		gc_nccl_parse(&out->ring, t, tl);
	out->ring_ok = reaches(&out->ring, floor);
	out->links = gc_xcalloc(n ? n : 1, sizeof(*out->links));
	for (size_t k = 1; k < n; k++) {
		struct gc_nccl_link *l = &out->links[out->n_links];
		bool measured = false;
		char *name;

		if (!ips[k])
			continue;
		name = gc_xasprintf("pair %s", ips[k]);
		if ((t = gc_nccl_section(text, len, name, &tl))) {
			gc_nccl_parse(&l->r, t, tl);
			measured = true;
		} else if (n == 2 && gc_nccl_section(text, len, "cluster", &tl)) {
			l->r = out->ring; /* two nodes: the ring is their link */
			measured = true;
		}
		free(name);
		if (!measured)
			continue; /* not run: no mpirun */
		l->node = k;
		l->ok = reaches(&l->r, floor);
		l->slow = k;
		failed += !l->ok;
		out->n_links++;
	}
	/* every link of node 0 slow: node 0 is the one they share */
	if (out->n_links >= 2 && failed == out->n_links)
		for (size_t k = 0; k < out->n_links; k++)
			out->links[k].slow = 0;
	out->links_ok = failed == 0;
}

void gc_nccl_group_release(struct gc_nccl_group *g)
{
	if (!g)
		return;
	free(g->links);
	memset(g, 0, sizeof(*g));
}
