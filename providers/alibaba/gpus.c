/*
 * gpus.c: ECS's GPU types in the catalogue shipped with gpucluster (core/gpuspec.h).
 * GPU count and memory: "GPU-accelerated compute-optimized instance families" of the ECS
 * documentation (help.aliyun.com/zh/ecs/user-guide/gpu-accelerated-compute-optimized-and-
 * vgpu-accelerated-instance-families-1); CNY per hour: docs/internals/gpus.md.
 */
#include "core/gpuspec.h"

extern const struct gc_gpu_offer ali_gpu_offers[];

/* clang-format off */
const struct gc_gpu_offer ali_gpu_offers[] = {
	/* type, model, gpus, GiB per GPU, vcpus, memory GiB, interconnect, price, currency */
	{ "ecs.gn6i-c4g1.xlarge", "T4", 1, 16, 4, 15, "", 8.68, "CNY" },
	{ "ecs.gn6i-c16g1.4xlarge", "T4", 1, 16, 16, 62, "", 12.95, "CNY" },
	{ "ecs.gn7i-c8g1.2xlarge", "A10", 1, 24, 8, 30, "", 13.80, "CNY" },
	{ "ecs.gn7i-c32g1.32xlarge", "A10", 4, 24, 128, 752, "", 75.60, "CNY" },
	{ "ecs.gn7e-c16g1.4xlarge", "A100", 1, 80, 16, 125, "", 34.74, "CNY" },
	{ "ecs.gn7e-c16g1.32xlarge", "A100", 8, 80, 128, 1000, "NVSwitch", 277.92, "CNY" },
	{ "ecs.gn8is-2x.8xlarge", "L20", 2, 48, 32, 256, "", 36.18, "CNY" },
	{ NULL, NULL, 0, 0, 0, 0, NULL, 0, NULL },
};
/* clang-format on */
