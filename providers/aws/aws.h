/*
 * aws.h: the AWS EC2 driver's ops table, for providers/registry.c. Everything else of
 * the driver is internal (ec2.h).
 */
#ifndef GC_AWS_H
#define GC_AWS_H

#include "core/provider.h"

extern const struct gc_provider_ops gc_provider_aws;
/* Its facts (facts.c), for the ops table and the driver's own use. */
extern const struct gc_provider_facts aws_facts;

#endif
