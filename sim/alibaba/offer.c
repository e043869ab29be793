/*
 * offer.c: what the emulated Alibaba Cloud sells (sim/catalog.h): its regions and zones,
 * ECS instance types with their GPU facts and CNY prices, and images (the system Ubuntu
 * images and a GPU-ready one). Alibaba publishes GPU memory in GiB.
 */
#include "sim/alibaba/ecs.h"
#include "sim/catalog.h"

#define GIB 1024u

/* clang-format off */
static const struct sim_itype types[] = {
	{ SIM_ALIBABA, "ecs.g7.large", "ecs.g7", 2, 8 * GIB, 0, NULL, NULL, 0, false, NULL, 0.56, 0 },
	{ SIM_ALIBABA, "ecs.gn6i-c4g1.xlarge", "ecs.gn6i", 4, 15 * GIB, 1, "NVIDIA T4", "NVIDIA", 16 * GIB, false, "turing", 8.68, 0 },
	{ SIM_ALIBABA, "ecs.gn6i-c16g1.4xlarge", "ecs.gn6i", 16, 62 * GIB, 1, "NVIDIA T4", "NVIDIA", 16 * GIB, false, "turing", 12.95, 0 },
	{ SIM_ALIBABA, "ecs.gn7i-c8g1.2xlarge", "ecs.gn7i", 8, 30 * GIB, 1, "NVIDIA A10", "NVIDIA", 24 * GIB, false, "ampere", 13.80, 0 },
	{ SIM_ALIBABA, "ecs.gn7i-c32g1.32xlarge", "ecs.gn7i", 128, 752 * GIB, 4, "NVIDIA A10", "NVIDIA", 24 * GIB, false, "ampere", 75.60, 0 },
	{ SIM_ALIBABA, "ecs.gn7e-c16g1.4xlarge", "ecs.gn7e", 16, 125 * GIB, 1, "NVIDIA A100 80G", "NVIDIA", 80 * GIB, false, "ampere", 34.74, 0 },
	{ SIM_ALIBABA, "ecs.gn7e-c16g1.32xlarge", "ecs.gn7e", 128, 1000 * GIB, 8, "NVIDIA A100 80G", "NVIDIA", 80 * GIB, true, "ampere", 277.92, 0 },
	{ SIM_ALIBABA, "ecs.ebmgn7ex.32xlarge", "ecs.ebmgn7ex", 128, 1024 * GIB, 8, "NVIDIA A100 80G", "NVIDIA", 80 * GIB, true, "ampere", 289.44, 2 },
	{ SIM_ALIBABA, "ecs.gn8is-2x.8xlarge", "ecs.gn8is", 32, 256 * GIB, 2, "NVIDIA L20", "NVIDIA", 48 * GIB, false, "ada", 36.18, 0 },
};

static const struct sim_image images[] = {
	{ SIM_ALIBABA, "ubuntu_22_04_x64_20G_alibase_20261015.vhd", "ubuntu_22_04_x64_20G_alibase_20261015.vhd",
	  "Ubuntu 22.04 64 bit", "ubuntu", "22.04", "system", "2026-10-15T06:00:00Z", false, NULL, NULL },
	{ SIM_ALIBABA, "ubuntu_24_04_x64_20G_alibase_20261015.vhd", "ubuntu_24_04_x64_20G_alibase_20261015.vhd",
	  "Ubuntu 24.04 64 bit", "ubuntu", "24.04", "system", "2026-10-15T06:00:00Z", false, NULL, NULL },
	{ SIM_ALIBABA, "m-bp1gpu2204cuda128drv570", "Ubuntu 22.04 GPU: NVIDIA driver 570, CUDA 12.8",
	  "Ubuntu 22.04 64 bit with the NVIDIA driver 570 and CUDA 12.8 preinstalled", "ubuntu", "22.04",
	  "marketplace", "2026-10-18T06:00:00Z", true, "570", "12.8" },
};

static const char *const ali_hz[] = { "cn-hangzhou-h", "cn-hangzhou-i", "cn-hangzhou-j", "cn-hangzhou-k", NULL };
static const char *const ali_bj[] = { "cn-beijing-f", "cn-beijing-g", "cn-beijing-h", "cn-beijing-i", NULL };
static const char *const ali_sg[] = { "ap-southeast-1a", "ap-southeast-1b", "ap-southeast-1c", NULL };

static const struct sim_region regions[] = {
	{ SIM_ALIBABA, "cn-hangzhou", ali_hz },
	{ SIM_ALIBABA, "cn-beijing", ali_bj },
	{ SIM_ALIBABA, "ap-southeast-1", ali_sg },
};
/* clang-format on */

/* as ECS sells some types in some zones only (DescribeAvailableResource) */
static const char *const gaps[] = { "cn-hangzhou-j ecs.gn8is-2x.8xlarge", NULL };

const struct sim_catalog sim_alibaba_offer = SIM_CATALOG_OF(types, images, regions, gaps);
