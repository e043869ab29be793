/*
 * gpustat.c: nvidia-smi's CSV and the Xid count of one node, parsed (see gpustat.h).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/gpustat.h"

void gc_gpustat_node_release(struct gc_gpustat_node *n)
{
	if (!n)
		return;
	free(n->gpus);
	memset(n, 0, sizeof(*n));
}

/* One CSV field, spaces around it dropped: [s, end) -> out (NUL-terminated, cut to size). */
static void field(const char *s, const char *end, char *out, size_t size)
{
	size_t len;

	while (s < end && *s == ' ')
		s++;
	while (end > s && (end[-1] == ' ' || end[-1] == '\r'))
		end--;
	len = (size_t)(end - s) < size - 1 ? (size_t)(end - s) : size - 1;
	memcpy(out, s, len);
	out[len] = '\0';
}

/* A count or "[N/A]"/"[Not Supported]"; -2 for anything else. */
static long number(const char *s)
{
	char *end;
	long v;

	if (s[0] == '[')
		return GC_GPUSTAT_NA;
	errno = 0;
	v = strtol(s, &end, 10);
	if (end == s || *end || errno || v < 0)
		return -2;
	return v;
}

static int parse_gpu(const char *line, const char *eol, struct gc_gpustat *g, size_t lineno,
		     struct gc_error *err)
{
	char cells[7][96];
	long *nums[] = { &g->index,	    NULL,	&g->util_pct,	    &g->mem_used_mib,
			 &g->mem_total_mib, &g->temp_c, &g->ecc_uncorrected };
	size_t k = 0;

	for (const char *s = line; k < 7; k++) {
		const char *comma = memchr(s, ',', (size_t)(eol - s));
		const char *end = comma && k < 6 ? comma : eol;

		field(s, end, cells[k], sizeof(cells[k]));
		if (k < 6 && !comma)
			break;
		s = end + 1;
	}
	if (k < 7)
		return gc_error_set(err, GC_EINVALID,
				    "nvidia-smi line %zu has %zu fields, not the 7 asked for",
				    lineno, k + 1);
	snprintf(g->name, sizeof(g->name), "%s", cells[1]);
	for (k = 0; k < 7; k++) {
		if (!nums[k])
			continue;
		*nums[k] = number(cells[k]);
		if (*nums[k] == -2 || (k == 0 && *nums[k] < 0))
			return gc_error_set(err, GC_EINVALID,
					    "nvidia-smi line %zu: '%s' is not a number", lineno,
					    cells[k]);
	}
	return 0;
}

int gc_gpustat_parse(const char *text, struct gc_gpustat_node *out, struct gc_error *err)
{
	size_t lineno = 0, alloc = 0;

	memset(out, 0, sizeof(*out));
	out->xid_events = GC_GPUSTAT_NA;
	for (const char *s = text; *s;) {
		const char *eol = strchr(s, '\n');

		if (!eol)
			eol = s + strlen(s);
		lineno++;
		if (eol == s) {
			/* an empty line */
		} else if (strncmp(s, "xid,", 4) == 0) {
			char v[32];

			field(s + 4, eol, v, sizeof(v));
			out->xid_events = strcmp(v, "?") == 0 ? GC_GPUSTAT_NA : number(v);
			if (out->xid_events == -2) {
				gc_gpustat_node_release(out);
				return gc_error_set(err, GC_EINVALID,
						    "line %zu: '%s' is no Xid count", lineno, v);
			}
		} else {
			if (out->n == alloc) {
				alloc = alloc ? 2 * alloc : 8;
				out->gpus = gc_xreallocarray(out->gpus, alloc, sizeof(*out->gpus));
			}
			if (parse_gpu(s, eol, &out->gpus[out->n], lineno, err) < 0) {
				gc_gpustat_node_release(out);
				return -1;
			}
			out->n++;
		}
		s = *eol ? eol + 1 : eol;
	}
	return 0;
}
