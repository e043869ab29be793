/*
 * offer.c: what the emulated Tencent Cloud sells (sim/catalog.h): its regions and zones,
 * CVM instance types with their GPU facts and CNY prices, and images (the public Ubuntu
 * images and a GPU-ready one). Tencent publishes GPU memory in GiB.
 */
#include "sim/catalog.h"
#include "sim/tencent/cvm.h"

#define GIB 1024u

/* clang-format off */
static const struct sim_itype types[] = {
	{ SIM_TENCENT, "S5.MEDIUM4", "S5", 2, 4 * GIB, 0, NULL, NULL, 0, false, NULL, 0.37, 0 },
	{ SIM_TENCENT, "GN7.2XLARGE32", "GN7", 8, 32 * GIB, 1, "NVIDIA T4", "NVIDIA", 16 * GIB, false, "turing", 8.68, 0 },
	{ SIM_TENCENT, "GN7.20XLARGE320", "GN7", 80, 320 * GIB, 4, "NVIDIA T4", "NVIDIA", 16 * GIB, false, "turing", 41.32, 0 },
	{ SIM_TENCENT, "GN10Xp.2XLARGE40", "GN10Xp", 10, 40 * GIB, 1, "NVIDIA V100", "NVIDIA", 32 * GIB, false, "volta", 22.30, 0 },
	{ SIM_TENCENT, "GN10Xp.20XLARGE320", "GN10Xp", 80, 320 * GIB, 8, "NVIDIA V100", "NVIDIA", 32 * GIB, true, "volta", 178.40, 0 },
	{ SIM_TENCENT, "GT4.4XLARGE96", "GT4", 16, 96 * GIB, 1, "NVIDIA A100", "NVIDIA", 40 * GIB, false, "ampere", 33.20, 0 },
	{ SIM_TENCENT, "GT4.41XLARGE948", "GT4", 164, 948 * GIB, 8, "NVIDIA A100", "NVIDIA", 40 * GIB, true, "ampere", 265.60, 0 },
	{ SIM_TENCENT, "HCCPNV4h.48XLARGE1152", "HCCPNV4h", 192, 1152 * GIB, 8, "NVIDIA A100", "NVIDIA", 80 * GIB, true, "ampere", 298.80, 1 },
};

static const struct sim_image images[] = {
	{ SIM_TENCENT, "img-487zeit5", "Ubuntu Server 22.04 LTS 64bit", "Ubuntu Server 22.04 LTS 64bit",
	  "ubuntu", "22.04", "PUBLIC_IMAGE", "2026-10-15T06:00:00Z", false, NULL, NULL },
	{ SIM_TENCENT, "img-mmytdhbn", "Ubuntu Server 24.04 LTS 64bit", "Ubuntu Server 24.04 LTS 64bit",
	  "ubuntu", "24.04", "PUBLIC_IMAGE", "2026-10-15T06:00:00Z", false, NULL, NULL },
	{ SIM_TENCENT, "img-9qrfy1xt", "Ubuntu 22.04 GPU driver 570 CUDA 12.8",
	  "Ubuntu Server 22.04 LTS 64bit with the NVIDIA driver 570 and CUDA 12.8 preinstalled", "ubuntu",
	  "22.04", "PUBLIC_IMAGE", "2026-10-18T06:00:00Z", true, "570", "12.8" },
};

static const char *const tc_gz[] = { "ap-guangzhou-3", "ap-guangzhou-4", "ap-guangzhou-6", "ap-guangzhou-7", NULL };
static const char *const tc_sh[] = { "ap-shanghai-2", "ap-shanghai-4", "ap-shanghai-5", "ap-shanghai-8", NULL };
static const char *const tc_sg[] = { "ap-singapore-1", "ap-singapore-2", "ap-singapore-3", NULL };

static const struct sim_region regions[] = {
	{ SIM_TENCENT, "ap-guangzhou", tc_gz },
	{ SIM_TENCENT, "ap-shanghai", tc_sh },
	{ SIM_TENCENT, "ap-singapore", tc_sg },
};
/* clang-format on */

/* as CVM sells some types in some zones only (DescribeZoneInstanceConfigInfos) */
static const char *const gaps[] = { "ap-guangzhou-7 GT4.41XLARGE948", NULL };

const struct sim_catalog sim_tencent_offer = SIM_CATALOG_OF(types, images, regions, gaps);
