/*
 * gpus.c: EC2's GPU types in the catalogue shipped with gpucluster (core/gpuspec.h).
 * GPU count and memory: "Accelerated computing instances" of the EC2 User Guide
 * (docs.aws.amazon.com/ec2/latest/instancetypes/ac.html); on-demand USD per hour in
 * us-east-1 from the EC2 On-Demand pricing page; docs/internals/gpus.md.
 */
#include "core/gpuspec.h"
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
