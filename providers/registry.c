/*
 * registry.c: the clouds this build has drivers for, one line each. Adding a cloud is
 * adding its folder and its line here.
 */
#include <stddef.h>

#include "core/provider.h"
#include "providers/alibaba/alibaba.h"
#include "providers/aws/aws.h"
#include "providers/tencent/tencent.h"

static const struct gc_provider_ops *const registry[] = {
	&gc_provider_aws,
	&gc_provider_alibaba,
	&gc_provider_tencent,
};

const struct gc_provider_ops *gc_provider_find(enum gc_cloud cloud)
{
	for (size_t i = 0; i < sizeof(registry) / sizeof(registry[0]); i++)
		if (registry[i]->cloud == cloud)
			return registry[i];
	return NULL;
}
