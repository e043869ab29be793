/*
 * registry.c: the clouds this build has drivers for, one line each in both lists (a unit
 * test holds them in step). Adding a cloud is adding its folder and its lines here.
 */
#include <stddef.h>
#include <string.h>

#include "core/provider.h"
#include "providers/alibaba/alibaba.h"
#include "providers/aws/aws.h"
#include "providers/tencent/tencent.h"

static const struct gc_provider_ops *const registry[] = {
	&gc_provider_aws,
	&gc_provider_alibaba,
	&gc_provider_tencent,
};

const char *const gc_provider_names[] = { "aws", "alibaba", "tencent", NULL };

const struct gc_provider_ops *gc_provider_at(size_t i)
{
	return i < sizeof(registry) / sizeof(registry[0]) ? registry[i] : NULL;
}

const struct gc_provider_ops *gc_provider_by_name(const char *name)
{
	const struct gc_provider_ops *p;

	for (size_t i = 0; (p = gc_provider_at(i)); i++)
		if (strcmp(p->name, name) == 0)
			return p;
	return NULL;
}
