/*
 * offer.c: what the emulated AWS sells (sim/catalog.h): its regions and zones, instance
 * types with their GPU facts and USD prices, and images (Canonical's Ubuntu and the Deep
 * Learning AMIs in EC2's id shape). AWS reports GPU memory in MiB, as
 * DescribeInstanceTypes does (24576 for an A10G).
 */
#include "sim/aws/aws.h"
#include "sim/catalog.h"

#define GIB 1024u

/* clang-format off */
static const struct sim_itype types[] = {
	/* cloud, name, family, vcpu, mem MiB, gpus, model, vendor, gpu MiB, nvswitch, arch, price */
	{ SIM_AWS, "t3.medium", "t3", 2, 4 * GIB, 0, NULL, NULL, 0, false, NULL, 0.0416, 0 },
	{ SIM_AWS, "g4dn.xlarge", "g4dn", 4, 16 * GIB, 1, "T4", "NVIDIA", 16384, false, "turing", 0.526, 0 },
	{ SIM_AWS, "g4dn.12xlarge", "g4dn", 48, 192 * GIB, 4, "T4", "NVIDIA", 16384, false, "turing", 3.912, 0 },
	{ SIM_AWS, "g5.xlarge", "g5", 4, 16 * GIB, 1, "A10G", "NVIDIA", 24576, false, "ampere", 1.006, 0 },
	{ SIM_AWS, "g5.2xlarge", "g5", 8, 32 * GIB, 1, "A10G", "NVIDIA", 24576, false, "ampere", 1.212, 0 },
	{ SIM_AWS, "g5.12xlarge", "g5", 48, 192 * GIB, 4, "A10G", "NVIDIA", 24576, false, "ampere", 5.672, 0 },
	{ SIM_AWS, "g5.48xlarge", "g5", 192, 768 * GIB, 8, "A10G", "NVIDIA", 24576, false, "ampere", 16.288, 0 },
	{ SIM_AWS, "g6.xlarge", "g6", 4, 16 * GIB, 1, "L4", "NVIDIA", 22888, false, "ada", 0.8048, 0 },
	{ SIM_AWS, "g6.12xlarge", "g6", 48, 192 * GIB, 4, "L4", "NVIDIA", 22888, false, "ada", 4.6016, 0 },
	{ SIM_AWS, "p3.2xlarge", "p3", 8, 61 * GIB, 1, "V100", "NVIDIA", 16384, false, "volta", 3.06, 0 },
	{ SIM_AWS, "p3.8xlarge", "p3", 32, 244 * GIB, 4, "V100", "NVIDIA", 16384, false, "volta", 12.24, 0 },
	{ SIM_AWS, "p4d.24xlarge", "p4d", 96, 1152 * GIB, 8, "A100", "NVIDIA", 40960, true, "ampere", 32.7726, 4 },
	{ SIM_AWS, "p5.48xlarge", "p5", 192, 2048 * GIB, 8, "H100", "NVIDIA", 81920, true, "hopper", 98.32, 32 },
};

static const struct sim_image images[] = {
	{ SIM_AWS, "ami-0e8d2a5e1c4f22040", "ubuntu/images/hvm-ssd/ubuntu-jammy-22.04-amd64-server-20261015",
	  "Canonical, Ubuntu, 22.04 LTS, amd64 jammy image build on 2026-10-15", "ubuntu", "22.04",
	  "099720109477", "2026-10-15T08:12:41.000Z", false, NULL, NULL },
	{ SIM_AWS, "ami-04b7c5d3f9a124040", "ubuntu/images/hvm-ssd-gp3/ubuntu-noble-24.04-amd64-server-20261015",
	  "Canonical, Ubuntu, 24.04 LTS, amd64 noble image build on 2026-10-15", "ubuntu", "24.04",
	  "099720109477", "2026-10-15T08:20:03.000Z", false, NULL, NULL },
	{ SIM_AWS, "ami-0d1e5f7a9b3c5e570", "Deep Learning Base OSS Nvidia Driver GPU AMI (Ubuntu 22.04) 20261020",
	  "Supported EC2 instances: G4dn, G5, G6, Gr6, G6e, P4d, P4de, P5. NVIDIA driver 570, CUDA 12.8",
	  "ubuntu", "22.04", "amazon", "2026-10-20T11:03:57.000Z", true, "570", "12.8" },
	{ SIM_AWS, "ami-0b7e2c4a6d8f05701", "Deep Learning Base OSS Nvidia Driver GPU AMI (Ubuntu 22.04) 20260901",
	  "Supported EC2 instances: G4dn, G5, G6, Gr6, G6e, P4d, P4de, P5. NVIDIA driver 570, CUDA 12.8",
	  "ubuntu", "22.04", "amazon", "2026-09-01T10:44:12.000Z", true, "570", "12.8" },
};

static const char *const aws_use1[] = { "us-east-1a", "us-east-1b", "us-east-1c", "us-east-1d", "us-east-1f", NULL };
static const char *const aws_usw2[] = { "us-west-2a", "us-west-2b", "us-west-2c", "us-west-2d", NULL };
static const char *const aws_euw1[] = { "eu-west-1a", "eu-west-1b", "eu-west-1c", NULL };

static const struct sim_region regions[] = {
	{ SIM_AWS, "us-east-1", aws_use1 },
	{ SIM_AWS, "us-west-2", aws_usw2 },
	{ SIM_AWS, "eu-west-1", aws_euw1 },
};
/* as EC2 sells some types in some zones only (DescribeInstanceTypeOfferings) */
static const char *const gaps[] = { "us-east-1b g6.12xlarge", NULL };
/* clang-format on */

const struct sim_catalog sim_aws_offer = SIM_CATALOG_OF(types, images, regions, gaps);
