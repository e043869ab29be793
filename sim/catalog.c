/*
 * catalog.c: the emulated clouds' regions, instance types, images and prices.
 *
 * GPU counts, models and memory are the vendors' published figures for each type (AWS
 * reports GPU memory in MiB as DescribeInstanceTypes does, e.g. 24576 for an A10G;
 * Alibaba and Tencent publish GiB). vCPU and memory are the published shapes. Prices
 * are plausible list prices per hour (USD for AWS, CNY for Alibaba and Tencent) chosen
 * for tests and demos, not quotes. Image ids are made up in each cloud's id shape.
 */
#include <string.h>

#include "sim/catalog.h"

#define GIB 1024u

/* clang-format off */
static const struct sim_itype aws_types[] = {
	/* cloud, name, family, vcpu, mem MiB, gpus, model, vendor, gpu MiB, nvswitch, arch, price */
	{ SIM_AWS, "t3.medium", "t3", 2, 4 * GIB, 0, NULL, NULL, 0, false, NULL, 0.0416 },
	{ SIM_AWS, "g4dn.xlarge", "g4dn", 4, 16 * GIB, 1, "T4", "NVIDIA", 16384, false, "turing", 0.526 },
	{ SIM_AWS, "g4dn.12xlarge", "g4dn", 48, 192 * GIB, 4, "T4", "NVIDIA", 16384, false, "turing", 3.912 },
	{ SIM_AWS, "g5.xlarge", "g5", 4, 16 * GIB, 1, "A10G", "NVIDIA", 24576, false, "ampere", 1.006 },
	{ SIM_AWS, "g5.2xlarge", "g5", 8, 32 * GIB, 1, "A10G", "NVIDIA", 24576, false, "ampere", 1.212 },
	{ SIM_AWS, "g5.12xlarge", "g5", 48, 192 * GIB, 4, "A10G", "NVIDIA", 24576, false, "ampere", 5.672 },
	{ SIM_AWS, "g5.48xlarge", "g5", 192, 768 * GIB, 8, "A10G", "NVIDIA", 24576, false, "ampere", 16.288 },
	{ SIM_AWS, "g6.xlarge", "g6", 4, 16 * GIB, 1, "L4", "NVIDIA", 22888, false, "ada", 0.8048 },
	{ SIM_AWS, "g6.12xlarge", "g6", 48, 192 * GIB, 4, "L4", "NVIDIA", 22888, false, "ada", 4.6016 },
	{ SIM_AWS, "p3.2xlarge", "p3", 8, 61 * GIB, 1, "V100", "NVIDIA", 16384, false, "volta", 3.06 },
	{ SIM_AWS, "p3.8xlarge", "p3", 32, 244 * GIB, 4, "V100", "NVIDIA", 16384, false, "volta", 12.24 },
	{ SIM_AWS, "p4d.24xlarge", "p4d", 96, 1152 * GIB, 8, "A100", "NVIDIA", 40960, true, "ampere", 32.7726 },
	{ SIM_AWS, "p5.48xlarge", "p5", 192, 2048 * GIB, 8, "H100", "NVIDIA", 81920, true, "hopper", 98.32 },
};

static const struct sim_itype alibaba_types[] = {
	{ SIM_ALIBABA, "ecs.g7.large", "ecs.g7", 2, 8 * GIB, 0, NULL, NULL, 0, false, NULL, 0.56 },
	{ SIM_ALIBABA, "ecs.gn6i-c4g1.xlarge", "ecs.gn6i", 4, 15 * GIB, 1, "NVIDIA T4", "NVIDIA", 16 * GIB, false, "turing", 8.68 },
	{ SIM_ALIBABA, "ecs.gn6i-c16g1.4xlarge", "ecs.gn6i", 16, 62 * GIB, 1, "NVIDIA T4", "NVIDIA", 16 * GIB, false, "turing", 12.95 },
	{ SIM_ALIBABA, "ecs.gn7i-c8g1.2xlarge", "ecs.gn7i", 8, 30 * GIB, 1, "NVIDIA A10", "NVIDIA", 24 * GIB, false, "ampere", 13.80 },
	{ SIM_ALIBABA, "ecs.gn7i-c32g1.32xlarge", "ecs.gn7i", 128, 752 * GIB, 4, "NVIDIA A10", "NVIDIA", 24 * GIB, false, "ampere", 75.60 },
	{ SIM_ALIBABA, "ecs.gn7e-c16g1.4xlarge", "ecs.gn7e", 16, 125 * GIB, 1, "NVIDIA A100 80G", "NVIDIA", 80 * GIB, false, "ampere", 34.74 },
	{ SIM_ALIBABA, "ecs.gn7e-c16g1.32xlarge", "ecs.gn7e", 128, 1000 * GIB, 8, "NVIDIA A100 80G", "NVIDIA", 80 * GIB, true, "ampere", 277.92 },
	{ SIM_ALIBABA, "ecs.gn8is-2x.8xlarge", "ecs.gn8is", 32, 256 * GIB, 2, "NVIDIA L20", "NVIDIA", 48 * GIB, false, "ada", 36.18 },
};

static const struct sim_itype tencent_types[] = {
	{ SIM_TENCENT, "S5.MEDIUM4", "S5", 2, 4 * GIB, 0, NULL, NULL, 0, false, NULL, 0.37 },
	{ SIM_TENCENT, "GN7.2XLARGE32", "GN7", 8, 32 * GIB, 1, "NVIDIA T4", "NVIDIA", 16 * GIB, false, "turing", 8.68 },
	{ SIM_TENCENT, "GN7.20XLARGE320", "GN7", 80, 320 * GIB, 4, "NVIDIA T4", "NVIDIA", 16 * GIB, false, "turing", 41.32 },
	{ SIM_TENCENT, "GN10Xp.2XLARGE40", "GN10Xp", 10, 40 * GIB, 1, "NVIDIA V100", "NVIDIA", 32 * GIB, false, "volta", 22.30 },
	{ SIM_TENCENT, "GN10Xp.20XLARGE320", "GN10Xp", 80, 320 * GIB, 8, "NVIDIA V100", "NVIDIA", 32 * GIB, true, "volta", 178.40 },
	{ SIM_TENCENT, "GT4.4XLARGE96", "GT4", 16, 96 * GIB, 1, "NVIDIA A100", "NVIDIA", 40 * GIB, false, "ampere", 33.20 },
	{ SIM_TENCENT, "GT4.41XLARGE948", "GT4", 164, 948 * GIB, 8, "NVIDIA A100", "NVIDIA", 40 * GIB, true, "ampere", 265.60 },
};

static const struct sim_image aws_images[] = {
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

static const struct sim_image alibaba_images[] = {
	{ SIM_ALIBABA, "ubuntu_22_04_x64_20G_alibase_20261015.vhd", "ubuntu_22_04_x64_20G_alibase_20261015.vhd",
	  "Ubuntu 22.04 64 bit", "ubuntu", "22.04", "system", "2026-10-15T06:00:00Z", false, NULL, NULL },
	{ SIM_ALIBABA, "ubuntu_24_04_x64_20G_alibase_20261015.vhd", "ubuntu_24_04_x64_20G_alibase_20261015.vhd",
	  "Ubuntu 24.04 64 bit", "ubuntu", "24.04", "system", "2026-10-15T06:00:00Z", false, NULL, NULL },
	{ SIM_ALIBABA, "m-bp1gpu2204cuda128drv570", "Ubuntu 22.04 GPU: NVIDIA driver 570, CUDA 12.8",
	  "Ubuntu 22.04 64 bit with the NVIDIA driver 570 and CUDA 12.8 preinstalled", "ubuntu", "22.04",
	  "marketplace", "2026-10-18T06:00:00Z", true, "570", "12.8" },
};

static const struct sim_image tencent_images[] = {
	{ SIM_TENCENT, "img-487zeit5", "Ubuntu Server 22.04 LTS 64bit", "Ubuntu Server 22.04 LTS 64bit",
	  "ubuntu", "22.04", "PUBLIC_IMAGE", "2026-10-15T06:00:00Z", false, NULL, NULL },
	{ SIM_TENCENT, "img-mmytdhbn", "Ubuntu Server 24.04 LTS 64bit", "Ubuntu Server 24.04 LTS 64bit",
	  "ubuntu", "24.04", "PUBLIC_IMAGE", "2026-10-15T06:00:00Z", false, NULL, NULL },
	{ SIM_TENCENT, "img-9qrfy1xt", "Ubuntu 22.04 GPU driver 570 CUDA 12.8",
	  "Ubuntu Server 22.04 LTS 64bit with the NVIDIA driver 570 and CUDA 12.8 preinstalled", "ubuntu",
	  "22.04", "PUBLIC_IMAGE", "2026-10-18T06:00:00Z", true, "570", "12.8" },
};

static const char *const aws_use1[] = { "us-east-1a", "us-east-1b", "us-east-1c", "us-east-1d", "us-east-1f", NULL };
static const char *const aws_usw2[] = { "us-west-2a", "us-west-2b", "us-west-2c", "us-west-2d", NULL };
static const char *const aws_euw1[] = { "eu-west-1a", "eu-west-1b", "eu-west-1c", NULL };
static const char *const ali_hz[] = { "cn-hangzhou-h", "cn-hangzhou-i", "cn-hangzhou-j", "cn-hangzhou-k", NULL };
static const char *const ali_bj[] = { "cn-beijing-f", "cn-beijing-g", "cn-beijing-h", "cn-beijing-i", NULL };
static const char *const ali_sg[] = { "ap-southeast-1a", "ap-southeast-1b", "ap-southeast-1c", NULL };
static const char *const tc_gz[] = { "ap-guangzhou-3", "ap-guangzhou-4", "ap-guangzhou-6", "ap-guangzhou-7", NULL };
static const char *const tc_sh[] = { "ap-shanghai-2", "ap-shanghai-4", "ap-shanghai-5", "ap-shanghai-8", NULL };
static const char *const tc_sg[] = { "ap-singapore-1", "ap-singapore-2", "ap-singapore-3", NULL };

static const struct sim_region aws_regions[] = {
	{ SIM_AWS, "us-east-1", aws_use1 },
	{ SIM_AWS, "us-west-2", aws_usw2 },
	{ SIM_AWS, "eu-west-1", aws_euw1 },
};
static const struct sim_region alibaba_regions[] = {
	{ SIM_ALIBABA, "cn-hangzhou", ali_hz },
	{ SIM_ALIBABA, "cn-beijing", ali_bj },
	{ SIM_ALIBABA, "ap-southeast-1", ali_sg },
};
static const struct sim_region tencent_regions[] = {
	{ SIM_TENCENT, "ap-guangzhou", tc_gz },
	{ SIM_TENCENT, "ap-shanghai", tc_sh },
	{ SIM_TENCENT, "ap-singapore", tc_sg },
};
/* clang-format on */

#define N(a) (sizeof(a) / sizeof((a)[0]))

size_t sim_catalog_itypes(enum sim_cloud c, const struct sim_itype **out)
{
	switch (c) {
	case SIM_AWS: *out = aws_types; return N(aws_types);
	case SIM_ALIBABA: *out = alibaba_types; return N(alibaba_types);
	case SIM_TENCENT: *out = tencent_types; return N(tencent_types);
	}
	*out = NULL;
	return 0;
}

size_t sim_catalog_images(enum sim_cloud c, const struct sim_image **out)
{
	switch (c) {
	case SIM_AWS: *out = aws_images; return N(aws_images);
	case SIM_ALIBABA: *out = alibaba_images; return N(alibaba_images);
	case SIM_TENCENT: *out = tencent_images; return N(tencent_images);
	}
	*out = NULL;
	return 0;
}

size_t sim_catalog_regions(enum sim_cloud c, const struct sim_region **out)
{
	switch (c) {
	case SIM_AWS: *out = aws_regions; return N(aws_regions);
	case SIM_ALIBABA: *out = alibaba_regions; return N(alibaba_regions);
	case SIM_TENCENT: *out = tencent_regions; return N(tencent_regions);
	}
	*out = NULL;
	return 0;
}

const struct sim_itype *sim_catalog_itype(enum sim_cloud c, const char *name)
{
	const struct sim_itype *all;
	size_t n = sim_catalog_itypes(c, &all);

	if (!name)
		return NULL;
	for (size_t i = 0; i < n; i++)
		if (!strcmp(all[i].name, name))
			return &all[i];
	return NULL;
}

const struct sim_image *sim_catalog_image(enum sim_cloud c, const char *id)
{
	const struct sim_image *all;
	size_t n = sim_catalog_images(c, &all);

	if (!id)
		return NULL;
	for (size_t i = 0; i < n; i++)
		if (!strcmp(all[i].id, id))
			return &all[i];
	return NULL;
}

const struct sim_region *sim_catalog_region(enum sim_cloud c, const char *name)
{
	const struct sim_region *all;
	size_t n = sim_catalog_regions(c, &all);

	if (!name)
		return NULL;
	for (size_t i = 0; i < n; i++)
		if (!strcmp(all[i].name, name))
			return &all[i];
	return NULL;
}

bool sim_catalog_zone_ok(const struct sim_region *r, const char *zone)
{
	if (!r || !zone)
		return false;
	for (const char *const *z = r->zones; *z; z++)
		if (!strcmp(*z, zone))
			return true;
	return false;
}

double sim_catalog_price(const struct sim_itype *t, bool spot)
{
	if (!t)
		return 0.0;
	return spot ? t->price * SIM_SPOT_SHARE : t->price;
}
