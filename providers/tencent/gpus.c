/*
 * gpus.c: CVM's GPU types in the catalogue shipped with gpucluster (core/gpuspec.h).
 * GPU count and memory: "GPU Computing Instances" of the CVM documentation
 * (cloud.tencent.com/document/product/560/19701); CNY per hour: docs/internals/gpus.md.
 */
#include "core/gpuspec.h"

extern const struct gc_gpu_offer tc_gpu_offers[];

/* clang-format off */
const struct gc_gpu_offer tc_gpu_offers[] = {
	/* type, model, gpus, GiB per GPU, vcpus, memory GiB, interconnect, price, currency */
	{ "GN7.2XLARGE32", "T4", 1, 16, 8, 32, "", 8.68, "CNY" },
	{ "GN7.20XLARGE320", "T4", 4, 16, 80, 320, "", 41.32, "CNY" },
	{ "GN10Xp.2XLARGE40", "V100", 1, 32, 10, 40, "", 22.30, "CNY" },
	{ "GN10Xp.20XLARGE320", "V100", 8, 32, 80, 320, "NVLink", 178.40, "CNY" },
	{ "GT4.4XLARGE96", "A100", 1, 40, 16, 96, "", 33.20, "CNY" },
	{ "GT4.41XLARGE948", "A100", 8, 40, 164, 948, "NVSwitch", 265.60, "CNY" },
	{ NULL, NULL, 0, 0, 0, 0, NULL, 0, NULL },
};
/* clang-format on */
