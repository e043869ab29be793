/*
 * gpus.c: EC2's GPU types: the catalogue shipped with gpucluster (core/gpuspec.h) and the
 * live listing (ops->gpu_types: DescribeInstanceTypes' GpuInfo, every page, and
 * DescribeInstanceTypeOfferings by zone). GPU count and memory: "Accelerated computing
 * instances" of the EC2 User Guide (docs.aws.amazon.com/ec2/latest/instancetypes/ac.html);
 * on-demand USD per hour in us-east-1 from the EC2 On-Demand pricing page;
 * docs/internals/gpus.md.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/driver.h"
#include "core/gpuspec.h"
#include "core/urlenc.h"
#include "providers/aws/ec2.h"

/* clang-format off */
const struct gc_gpu_offer aws_gpu_offers[] = {
	/* type, model, gpus, GiB per GPU, vcpus, memory GiB, interconnect, price, currency */
	{ "g4dn.xlarge", "T4", 1, 16, 4, 16, "", 0.526, "USD" },
	{ "g4dn.12xlarge", "T4", 4, 16, 48, 192, "", 3.912, "USD" },
	{ "g5.xlarge", "A10G", 1, 24, 4, 16, "", 1.006, "USD" },
	{ "g5.2xlarge", "A10G", 1, 24, 8, 32, "", 1.212, "USD" },
	{ "g5.12xlarge", "A10G", 4, 24, 48, 192, "", 5.672, "USD" },
	{ "g5.48xlarge", "A10G", 8, 24, 192, 768, "", 16.288, "USD" },
	{ "g6.xlarge", "L4", 1, 24, 4, 16, "", 0.8048, "USD" },
	{ "g6.12xlarge", "L4", 4, 24, 48, 192, "", 4.6016, "USD" },
	{ "p3.2xlarge", "V100", 1, 16, 8, 61, "", 3.06, "USD" },
	{ "p3.8xlarge", "V100", 4, 16, 32, 244, "NVLink", 12.24, "USD" },
	{ "p4d.24xlarge", "A100", 8, 40, 96, 1152, "NVSwitch, EFA", 32.7726, "USD" },
	{ "p5.48xlarge", "H100", 8, 80, 192, 2048, "NVSwitch, EFA", 98.32, "USD" },
	{ NULL, NULL, 0, 0, 0, 0, NULL, 0, NULL },
};
/* clang-format on */

/* Both listings page through everything the region has: EC2's DescribeInstanceTypes has
 * no filter for "has GPUs", and the offerings of the GPU types are a few hundred rows. */
struct listing {
	const char *action;
	struct gc_type_facts *types;
	size_t n_types, alloc_types;
	char **names, **zones; /* the offerings, row by row */
	size_t n_names, n_zones;
};

static int listing_send(struct gc_provider *p, void *ctx, const struct gc_page *pg,
			struct gc_buf *body, struct gc_error *err)
{
	const struct listing *l = ctx;
	struct gc_params params = GC_PARAMS_INIT;
	/* offerings are many small rows (a type in a zone): EC2 takes pages of up to 1000 */
	bool offerings = strcmp(l->action, "DescribeInstanceTypeOfferings") == 0;
	char max[16];
	int ret;

	if (offerings)
		gc_params_add(&params, "LocationType", "availability-zone");
	snprintf(max, sizeof(max), "%u", offerings ? 1000u : (unsigned)AWS_PAGE_SIZE);
	gc_params_add(&params, "MaxResults", max);
	if (pg->token)
		gc_params_add(&params, "NextToken", pg->token);
	ret = aws_ec2_call(p, l->action, &params, 0, false, body, err);
	gc_params_release(&params);
	return ret;
}

static int listing_parse(struct gc_provider *p, void *ctx, const struct gc_buf *body,
			 struct gc_page *pg, struct gc_error *err)
{
	struct listing *l = ctx;
	int ret;

	if (strcmp(l->action, "DescribeInstanceTypes") == 0)
		ret = aws_xml_instance_types(body->data, body->len, &l->types, &l->n_types,
					     &l->alloc_types, &pg->next, err);
	else if ((ret = aws_xml_offerings(body->data, body->len, &l->zones, &l->n_zones, &pg->next,
					  err)) == 0)
		ret = aws_xml_offering_types(body->data, body->len, &l->names, &l->n_names, err);
	if (ret != 0)
		return gc_error_prefix(err, "cannot read the %s answer from '%s'", l->action,
				       aws_driver(p)->ec2_host);
	return 0;
}

int aws_gpu_types(struct gc_provider *p, struct gc_gpu_type **out, size_t *n_out,
		  struct gc_error *err)
{
	static const struct gc_pager types = { "DescribeInstanceTypes", NULL, listing_send,
					       listing_parse };
	static const struct gc_pager offers = { "DescribeInstanceTypeOfferings", NULL, listing_send,
						listing_parse };
	struct listing l = { .action = types.action };
	struct gc_gpu_type *v = NULL;
	size_t n = 0;
	int ret = -1;

	if (gc_driver_pages(p, &types, &l, err) != 0)
		goto out;
	l.action = offers.action;
	if (gc_driver_pages(p, &offers, &l, err) != 0)
		goto out;
	if (l.n_names != l.n_zones) {
		gc_error_set(err, GC_EBADRESPONSE,
			     "DescribeInstanceTypeOfferings: %zu types for %zu locations",
			     l.n_names, l.n_zones);
		goto out;
	}
	/* the types' order, each with the zones offering it; a type no zone offers is left out */
	for (size_t i = 0; i < l.n_types; i++)
		for (size_t k = 0; l.types[i].gpus && k < l.n_names; k++)
			if (strcmp(l.names[k], l.types[i].name) == 0)
				gc_gpu_types_add(&v, &n, &l.types[i], l.zones[k]);
	*out = v;
	*n_out = n;
	v = NULL;
	n = 0;
	ret = 0;
out:
	if (ret != 0)
		gc_error_prefix(err, "cannot list the GPU instance types of %s", p->region);
	gc_gpu_types_free(v, n);
	free(l.types);
	gc_strv_free(l.names, l.n_names);
	gc_strv_free(l.zones, l.n_zones);
	return ret;
}
