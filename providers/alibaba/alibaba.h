/*
 * alibaba.h: the Alibaba Cloud ECS driver's ops table, for providers/registry.c.
 * Everything else of the driver is internal (ecs.h).
 */
#ifndef GC_ALIBABA_H
#define GC_ALIBABA_H

#include "core/provider.h"

extern const struct gc_provider_ops gc_provider_alibaba;
/* Its facts (facts.c), for the ops table and the driver's own use. */
extern const struct gc_provider_facts ali_facts;

#endif
