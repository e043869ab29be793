/*
 * netcheck.c: provider.network against the cloud at plan time (netcheck.h). The driver
 * says what it found (ops->network); the judging and the words are here, in the spec's
 * terms, so that every cloud says the same thing.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/buf.h"
#include "core/netcheck.h"

static const char *file_of(const struct gc_spec *spec)
{
	return spec->file ? spec->file : "spec";
}

static void add_problem(struct gc_buf *b, const struct gc_spec *spec, const struct gc_spec_pos *pos,
			const char *path, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

static void add_problem(struct gc_buf *b, const struct gc_spec *spec, const struct gc_spec_pos *pos,
			const char *path, const char *fmt, ...)
{
	va_list ap;

	if (b->len)
		gc_buf_addch(b, '\n');
	gc_buf_addf(b, "%.256s:%u:%u: %s: ", file_of(spec), pos->line, pos->col, path);
	va_start(ap, fmt);
	gc_buf_vaddf(b, fmt, ap);
	va_end(ap);
}

int gc_netcheck_spec(struct gc_provider *p, const struct gc_spec *spec, struct gc_error *err)
{
	const struct gc_spec_network *net = &spec->provider.network;
	const struct gc_provider_facts *f = p->ops->facts;
	const char **ids = NULL;
	struct gc_subnet_facts *got = NULL;
	struct gc_buf b;
	bool vpc_found = false;
	int ret = -1;

	if (!net->vpc)
		return 0;
	gc_buf_init(&b, GC_ERROR_MSG_MAX);
	ids = gc_xcalloc(net->n_subnets + 1, sizeof(*ids));
	got = gc_xcalloc(net->n_subnets + 1, sizeof(*got));
	for (size_t i = 0; i < net->n_subnets; i++)
		ids[i] = net->subnets[i].id;
	if (gc_provider_network(p, net->vpc, ids, net->n_subnets, &vpc_found, got, err) < 0) {
		gc_error_prefix(err, "cannot check provider.network");
		goto out;
	}
	if (!vpc_found)
		add_problem(&b, spec, &net->vpc_pos, "provider.network.vpc",
			    "VPC %s does not exist in %s", net->vpc, spec->provider.region);
	for (size_t i = 0; i < net->n_subnets; i++) {
		const struct gc_spec_subnet *sn = &net->subnets[i];
		char path[128];

		snprintf(path, sizeof(path), "provider.network.subnets.%s", sn->zone);
		if (!got[i].found)
			add_problem(&b, spec, &sn->pos, path, "%s %s does not exist in %s",
				    f->subnet_word, sn->id, spec->provider.region);
		else if (vpc_found && strcmp(got[i].vpc, net->vpc) != 0)
			add_problem(&b, spec, &sn->pos, path, "%s %s is in VPC %s, not in %s",
				    f->subnet_word, sn->id, got[i].vpc, net->vpc);
		else if (strcmp(got[i].zone, sn->zone) != 0)
			add_problem(&b, spec, &sn->pos, path, "%s %s is in %s, not %s",
				    f->subnet_word, sn->id, got[i].zone, sn->zone);
	}
	if (b.len) {
		gc_error_set(err, GC_EINVALID, "%s", b.data);
		goto out;
	}
	ret = 0;
out:
	gc_buf_release(&b);
	free(got);
	free(ids);
	return ret;
}
