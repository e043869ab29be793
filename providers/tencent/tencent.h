/*
 * tencent.h: the Tencent Cloud CVM driver's ops table, for providers/registry.c.
 * Everything else of the driver is internal (cvm.h).
 */
#ifndef GC_TENCENT_H
#define GC_TENCENT_H

#include "core/provider.h"

extern const struct gc_provider_ops gc_provider_tencent;
/* Its facts (facts.c), for the ops table and the driver's own use. */
extern const struct gc_provider_facts tc_facts;

#endif
