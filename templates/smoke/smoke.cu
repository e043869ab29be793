/*
 * smoke.cu: gpucluster's GPU smoke program, compiled on each node by smoke.sh with the
 * toolkit's nvcc and run once. For every GPU it measures host-to-device and device-to-host
 * copy bandwidth from pinned memory, device-to-device copy bandwidth, and cuBLAS SGEMM and
 * HGEMM (FP16 in and out, FP32 accumulate: the tensor-core path training uses) throughput;
 * it also proves the results right: the copies round-trip a pattern and a small SGEMM is
 * checked against the CPU. Built with -DGC_SMOKE_NCCL (and -lnccl) it also runs an NCCL
 * all-reduce across every GPU of the node.
 *
 * It prints one JSON line on stdout, the same document gpucluster-sim's simulated program
 * prints (docs/sim.md), with "simulated": false:
 *   {"simulated":false,"gpus":[{"index","name","uuid","pci_bus_id","memory_mib","h2d_gbps",
 *     "d2h_gbps","d2d_gbps","gemm_tflops","ecc_uncorrected", and sgemm_tflops,
 *     hgemm_tflops, compute_capability}],"cuda_runtime":"12.8","driver":"570.133.20"
 *     [,"nccl":{"gpus","bytes","algbw_gbps","busbw_gbps","ok"}]}
 * gemm_tflops is the best HGEMM figure. Bandwidths are in GB/s (10^9 bytes); device to device
 * counts bytes read plus bytes written, as CUDA's bandwidthTest sample does. ecc_uncorrected
 * is NVML's volatile uncorrected count (null where NVML or ECC is unavailable): NVML is opened
 * with dlopen, so the program needs nothing beyond the toolkit to build. On a CUDA error it
 * prints {"simulated":false,"error":"...","cuda_error":N,"cuda_runtime":"..."}, a line
 * "CUDA error at smoke.cu:LINE: ... (cudaError N)" on stderr, and exits 1.
 *
 * Usage: smoke [--copy-mib N] [--max-gemm N]   (defaults 256 and 8192)
 */
#include <cublas_v2.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifdef GC_SMOKE_NCCL
#include <nccl.h>
#endif

#define MAX_GPUS 64

static char runtime_version[16] = "unknown";

/* The report is built here and printed whole at the end, so that an error half-way leaves
 * only the error document on stdout. */
static char report[1 << 16];
static size_t report_len;

static void emit(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void emit(const char *fmt, ...)
{
	va_list ap;
	int k;

	va_start(ap, fmt);
	k = vsnprintf(report + report_len, sizeof(report) - report_len, fmt, ap);
	va_end(ap);
	if (k > 0)
		report_len += (size_t)k;
	if (report_len >= sizeof(report))
		report_len = sizeof(report) - 1;
}

static void fail(const char *what, const char *msg, int code, int line)
{
	fprintf(stderr, "CUDA error at smoke.cu:%d: %s: %s (cudaError %d)\n", line, what, msg,
		code);
	printf("{\"simulated\":false,\"error\":\"");
	for (const char *p = what; *p; p++)
		if (*p != '"' && *p != '\\' && (unsigned char)*p >= 0x20)
			putchar(*p);
	printf(": ");
	for (const char *p = msg; *p; p++)
		if (*p != '"' && *p != '\\' && (unsigned char)*p >= 0x20)
			putchar(*p);
	printf("\",\"cuda_error\":%d,\"cuda_runtime\":\"%s\"}\n", code, runtime_version);
	exit(1);
}

#define CK(call)                                                                \
	do {                                                                    \
		cudaError_t e_ = (call);                                        \
		if (e_ != cudaSuccess)                                          \
			fail(#call, cudaGetErrorString(e_), (int)e_, __LINE__); \
	} while (0)

#define CKB(call)                                                                    \
	do {                                                                         \
		cublasStatus_t s_ = (call);                                          \
		if (s_ != CUBLAS_STATUS_SUCCESS)                                     \
			fail(#call, "cuBLAS call failed", 1000 + (int)s_, __LINE__); \
	} while (0)

/* --- NVML, opened at run time ------------------------------------------------------------ */

typedef int (*nvml_init_fn)(void);
typedef int (*nvml_handle_fn)(const char *, void **);
typedef int (*nvml_ecc_fn)(void *, int, int, unsigned long long *);
typedef int (*nvml_version_fn)(char *, unsigned int);

static struct {
	void *lib;
	nvml_handle_fn handle;
	nvml_ecc_fn ecc;
	nvml_version_fn version;
} nvml;

static void nvml_open(void)
{
	nvml_init_fn init;

	nvml.lib = dlopen("libnvidia-ml.so.1", RTLD_NOW);
	if (!nvml.lib)
		return;
	init = (nvml_init_fn)dlsym(nvml.lib, "nvmlInit_v2");
	nvml.handle = (nvml_handle_fn)dlsym(nvml.lib, "nvmlDeviceGetHandleByPciBusId_v2");
	nvml.ecc = (nvml_ecc_fn)dlsym(nvml.lib, "nvmlDeviceGetTotalEccErrors");
	nvml.version = (nvml_version_fn)dlsym(nvml.lib, "nvmlSystemGetDriverVersion");
	if (!init || init() != 0) {
		dlclose(nvml.lib);
		memset(&nvml, 0, sizeof(nvml));
	}
}

/* Volatile uncorrected ECC errors of the GPU at bus_id; -1 when unknown. */
static long long nvml_ecc_uncorrected(const char *bus_id)
{
	void *dev = NULL;
	unsigned long long n = 0;

	if (!nvml.handle || !nvml.ecc || nvml.handle(bus_id, &dev) != 0)
		return -1;
	/* NVML_MEMORY_ERROR_TYPE_UNCORRECTED = 1, NVML_VOLATILE_ECC = 0 */
	if (nvml.ecc(dev, 1, 0, &n) != 0)
		return -1;
	return (long long)n;
}

/* The display driver's version ("570.133.20"), from NVML or /proc. */
static void driver_version(char *out, size_t len)
{
	FILE *f;
	char line[512];
	const char *p;

	snprintf(out, len, "unknown");
	if (nvml.version && nvml.version(out, (unsigned int)len) == 0)
		return;
	f = fopen("/proc/driver/nvidia/version", "r");
	if (!f)
		return;
	if (fgets(line, sizeof(line), f) && (p = strstr(line, "Module")) != NULL) {
		p += strlen("Module");
		while (*p == ' ')
			p++;
		snprintf(out, len, "%.*s", (int)strcspn(p, " \n"), p);
	}
	fclose(f);
}

/* --- measurements -------------------------------------------------------------------------- */

__global__ void fill_f32(float *p, size_t n)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x)
		p[i] = (float)((i * 7u) % 13u) * 0.01f - 0.06f;
}

__global__ void fill_f16(__half *p, size_t n)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x)
		p[i] = __float2half((float)((i * 7u) % 13u) * 0.01f - 0.06f);
}

static float host_fill(size_t i)
{
	return (float)((i * 7u) % 13u) * 0.01f - 0.06f;
}

/* Best of three runs of reps copies, in GB/s; factor 2 counts both sides of a D2D copy. */
static double copy_gbps(void *dst, const void *src, size_t bytes, cudaMemcpyKind kind,
			cudaStream_t s, int reps, double factor)
{
	cudaEvent_t a, b;
	float ms;
	double best = 0;

	CK(cudaEventCreate(&a));
	CK(cudaEventCreate(&b));
	CK(cudaMemcpyAsync(dst, src, bytes, kind, s)); /* warm-up */
	for (int t = 0; t < 3; t++) {
		CK(cudaEventRecord(a, s));
		for (int r = 0; r < reps; r++)
			CK(cudaMemcpyAsync(dst, src, bytes, kind, s));
		CK(cudaEventRecord(b, s));
		CK(cudaEventSynchronize(b));
		CK(cudaEventElapsedTime(&ms, a, b));
		if (ms > 0) {
			double g = factor * (double)bytes * reps / ((double)ms * 1e6);
			if (g > best)
				best = g;
		}
	}
	CK(cudaEventDestroy(a));
	CK(cudaEventDestroy(b));
	return best;
}

/* Copy bandwidths, and a pattern through H2D, D2D and D2H that must come back intact. */
static void copies(int dev, size_t bytes, double *h2d, double *d2h, double *d2d)
{
	unsigned char *host, *back, *d1, *d2;
	cudaStream_t s;

	CK(cudaStreamCreate(&s));
	CK(cudaMallocHost((void **)&host, bytes));
	CK(cudaMallocHost((void **)&back, bytes));
	CK(cudaMalloc((void **)&d1, bytes));
	CK(cudaMalloc((void **)&d2, bytes));
	for (size_t i = 0; i < bytes; i++)
		host[i] = (unsigned char)(i * 31u + 7u + (unsigned)dev);
	*h2d = copy_gbps(d1, host, bytes, cudaMemcpyHostToDevice, s, 4, 1.0);
	*d2d = copy_gbps(d2, d1, bytes, cudaMemcpyDeviceToDevice, s, 10, 2.0);
	*d2h = copy_gbps(back, d2, bytes, cudaMemcpyDeviceToHost, s, 4, 1.0);
	CK(cudaStreamSynchronize(s));
	if (memcmp(host, back, bytes) != 0)
		fail("copy check", "data came back changed from host -> device -> device -> host",
		     -1, __LINE__);
	CK(cudaFree(d1));
	CK(cudaFree(d2));
	CK(cudaFreeHost(host));
	CK(cudaFreeHost(back));
	CK(cudaStreamDestroy(s));
}

/* A 256 x 256 SGEMM checked against the CPU on a few entries. */
static void gemm_check(cublasHandle_t h)
{
	const int n = 256;
	const float one = 1.0f, zero = 0.0f;
	float *a, *b, *c, *out;
	size_t nn = (size_t)n * n;

	CK(cudaMalloc((void **)&a, nn * sizeof(float)));
	CK(cudaMalloc((void **)&b, nn * sizeof(float)));
	CK(cudaMalloc((void **)&c, nn * sizeof(float)));
	fill_f32<<<64, 256>>>(a, nn);
	fill_f32<<<64, 256>>>(b, nn);
	CK(cudaGetLastError());
	CKB(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, a, n, b, n, &zero, c, n));
	out = (float *)malloc(nn * sizeof(float));
	if (!out)
		fail("malloc", "out of memory", -1, __LINE__);
	CK(cudaMemcpy(out, c, nn * sizeof(float), cudaMemcpyDeviceToHost));
	for (int t = 0; t < 16; t++) {
		int i = (t * 37) % n, j = (t * 101 + 3) % n;
		double want = 0;
		for (int k = 0; k < n; k++) /* column major: A[i,k] = a[i + k n] */
			want += (double)host_fill((size_t)i + (size_t)k * n) *
				host_fill((size_t)k + (size_t)j * n);
		if (fabs(out[i + (size_t)j * n] - want) > 1e-3 + 1e-3 * fabs(want))
			fail("gemm check", "cuBLAS SGEMM gave a wrong result", -1, __LINE__);
	}
	free(out);
	CK(cudaFree(a));
	CK(cudaFree(b));
	CK(cudaFree(c));
}

/* Best TFLOPS of n x n x n GEMMs over the sizes that fit; half: FP16 data, FP32 compute. */
static double gemm_tflops(cublasHandle_t h, int max_n, int half)
{
	static const int sizes[] = { 2048, 4096, 8192, 16384 };
	size_t elem = half ? sizeof(__half) : sizeof(float);
	double best = 0;

	for (size_t z = 0; z < sizeof(sizes) / sizeof(sizes[0]); z++) {
		int n = sizes[z], iters = n <= 2048 ? 20 : n <= 4096 ? 10 : 5;
		size_t nn = (size_t)n * n, free_b, total_b;
		void *a, *b, *c;
		cudaEvent_t e0, e1;
		float ms;
		const float one = 1.0f, zero = 0.0f;

		if (n > max_n)
			break;
		CK(cudaMemGetInfo(&free_b, &total_b));
		if (3 * nn * elem > free_b / 10 * 8)
			break;
		CK(cudaMalloc(&a, nn * elem));
		CK(cudaMalloc(&b, nn * elem));
		CK(cudaMalloc(&c, nn * elem));
		if (half) {
			fill_f16<<<1024, 256>>>((__half *)a, nn);
			fill_f16<<<1024, 256>>>((__half *)b, nn);
		} else {
			fill_f32<<<1024, 256>>>((float *)a, nn);
			fill_f32<<<1024, 256>>>((float *)b, nn);
		}
		CK(cudaGetLastError());
		CK(cudaEventCreate(&e0));
		CK(cudaEventCreate(&e1));
		for (int it = -2; it < iters; it++) { /* two warm-up runs */
			if (it == 0)
				CK(cudaEventRecord(e0, 0));
			if (half)
				CKB(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one, a,
						 CUDA_R_16F, n, b, CUDA_R_16F, n, &zero, c,
						 CUDA_R_16F, n, CUBLAS_COMPUTE_32F,
						 CUBLAS_GEMM_DEFAULT));
			else
				CKB(cublasSgemm(h, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &one,
						(const float *)a, n, (const float *)b, n, &zero,
						(float *)c, n));
		}
		CK(cudaEventRecord(e1, 0));
		CK(cudaEventSynchronize(e1));
		CK(cudaEventElapsedTime(&ms, e0, e1));
		if (ms > 0) {
			double t = 2.0 * n * (double)n * n * iters / ((double)ms * 1e9);
			if (t > best)
				best = t;
		}
		CK(cudaEventDestroy(e0));
		CK(cudaEventDestroy(e1));
		CK(cudaFree(a));
		CK(cudaFree(b));
		CK(cudaFree(c));
	}
	return best;
}

#ifdef GC_SMOKE_NCCL
struct nccl_result {
	int gpus;
	size_t bytes;
	double algbw, busbw;
	int ok;
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

#define CKN(call)                                                                      \
	do {                                                                           \
		ncclResult_t r_ = (call);                                              \
		if (r_ != ncclSuccess)                                                 \
			fail(#call, ncclGetErrorString(r_), 2000 + (int)r_, __LINE__); \
	} while (0)

__global__ void fill_value(float *p, size_t n, float v)
{
	for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
	     i += (size_t)gridDim.x * blockDim.x)
		p[i] = v;
}

/* An out-of-place float sum all-reduce of 256 MiB per GPU, one process driving every GPU. */
static void nccl_allreduce(int n, struct nccl_result *out)
{
	const size_t count = 64u << 20;
	const int warm = 5, iters = 20;
	ncclComm_t comms[MAX_GPUS];
	cudaStream_t s[MAX_GPUS];
	float *send[MAX_GPUS], *recv[MAX_GPUS];
	int devs[MAX_GPUS];
	float want = (float)n * (float)(n + 1) / 2.0f, got[4];
	double t0 = 0, t;

	for (int i = 0; i < n; i++)
		devs[i] = i;
	CKN(ncclCommInitAll(comms, n, devs));
	for (int i = 0; i < n; i++) {
		CK(cudaSetDevice(i));
		CK(cudaStreamCreate(&s[i]));
		CK(cudaMalloc((void **)&send[i], count * sizeof(float)));
		CK(cudaMalloc((void **)&recv[i], count * sizeof(float)));
		fill_value<<<1024, 256, 0, s[i]>>>(send[i], count, (float)(i + 1));
		CK(cudaGetLastError());
	}
	for (int it = -warm; it < iters; it++) {
		if (it == 0) {
			for (int i = 0; i < n; i++) {
				CK(cudaSetDevice(i));
				CK(cudaStreamSynchronize(s[i]));
			}
			t0 = now_s();
		}
		CKN(ncclGroupStart());
		for (int i = 0; i < n; i++)
			CKN(ncclAllReduce(send[i], recv[i], count, ncclFloat, ncclSum, comms[i],
					  s[i]));
		CKN(ncclGroupEnd());
	}
	for (int i = 0; i < n; i++) {
		CK(cudaSetDevice(i));
		CK(cudaStreamSynchronize(s[i]));
	}
	t = (now_s() - t0) / iters;
	out->gpus = n;
	out->bytes = count * sizeof(float);
	out->algbw = t > 0 ? (double)out->bytes / t / 1e9 : 0;
	out->busbw = out->algbw * 2.0 * (n - 1) / n;
	out->ok = 1;
	for (int i = 0; i < n; i++) {
		CK(cudaSetDevice(i));
		CK(cudaMemcpy(got, recv[i] + count / 2, sizeof(got), cudaMemcpyDeviceToHost));
		for (int k = 0; k < 4; k++)
			if (got[k] != want)
				out->ok = 0;
		CK(cudaFree(send[i]));
		CK(cudaFree(recv[i]));
		CK(cudaStreamDestroy(s[i]));
		ncclCommDestroy(comms[i]);
	}
}
#endif

static void json_name(const char *s)
{
	emit("\"");
	for (; *s; s++)
		if (*s == '"' || *s == '\\')
			emit("\\%c", *s);
		else if ((unsigned char)*s >= 0x20)
			emit("%c", *s);
	emit("\"");
}

static long parse_arg(const char *v, long lo, long hi, const char *name)
{
	char *end;
	long x = strtol(v ? v : "", &end, 10);

	if (!v || *end || x < lo || x > hi) {
		fprintf(stderr, "smoke: %s wants a number from %ld to %ld\n", name, lo, hi);
		exit(2);
	}
	return x;
}

int main(int argc, char **argv)
{
	long copy_mib = 256, max_gemm = 8192;
	int n = 0, rt = 0;
	char drv[96];

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--copy-mib") == 0)
			copy_mib = parse_arg(argv[++i], 1, 4096, "--copy-mib");
		else if (strcmp(argv[i], "--max-gemm") == 0)
			max_gemm = parse_arg(argv[++i], 256, 16384, "--max-gemm");
		else {
			fprintf(stderr, "usage: smoke [--copy-mib N] [--max-gemm N]\n");
			return 2;
		}
	}
	if (cudaRuntimeGetVersion(&rt) == cudaSuccess)
		snprintf(runtime_version, sizeof(runtime_version), "%d.%d", rt / 1000,
			 rt % 1000 / 10);
	nvml_open();
	CK(cudaGetDeviceCount(&n));
	if (n > MAX_GPUS)
		n = MAX_GPUS;
	driver_version(drv, sizeof(drv));

	emit("{\"simulated\":false,\"gpus\":[");
	for (int d = 0; d < n; d++) {
		cudaDeviceProp p;
		cublasHandle_t h;
		char bus[32];
		double h2d, d2h, d2d, sg, hg;
		size_t bytes = (size_t)copy_mib << 20, free_b, total_b;
		long long ecc;
		const unsigned char *u;

		CK(cudaSetDevice(d));
		CK(cudaGetDeviceProperties(&p, d));
		CK(cudaMemGetInfo(&free_b, &total_b));
		if (bytes > free_b / 4)
			bytes = free_b / 4;
		copies(d, bytes, &h2d, &d2h, &d2d);
		CKB(cublasCreate(&h));
		gemm_check(h);
		sg = gemm_tflops(h, (int)max_gemm, 0);
		hg = gemm_tflops(h, (int)max_gemm, 1);
		CKB(cublasDestroy(h));
		snprintf(bus, sizeof(bus), "%08X:%02X:%02X.0", (unsigned)p.pciDomainID,
			 (unsigned)p.pciBusID, (unsigned)p.pciDeviceID);
		ecc = nvml_ecc_uncorrected(bus);
		u = (const unsigned char *)p.uuid.bytes;

		emit("%s{\"index\":%d,\"name\":", d ? "," : "", d);
		json_name(p.name);
		emit(",\"uuid\":\"GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-"
		     "%02x%02x%02x%02x%02x%02x\"",
		     u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11],
		     u[12], u[13], u[14], u[15]);
		emit(",\"pci_bus_id\":\"%s\",\"memory_mib\":%zu", bus, p.totalGlobalMem >> 20);
		emit(",\"h2d_gbps\":%.1f,\"d2h_gbps\":%.1f,\"d2d_gbps\":%.1f", h2d, d2h, d2d);
		emit(",\"gemm_tflops\":%.1f,\"sgemm_tflops\":%.1f,\"hgemm_tflops\":%.1f", hg, sg,
		     hg);
		emit(",\"compute_capability\":\"%d.%d\"", p.major, p.minor);
		if (ecc >= 0)
			emit(",\"ecc_uncorrected\":%lld}", ecc);
		else
			emit(",\"ecc_uncorrected\":null}");
	}
	emit("],\"cuda_runtime\":\"%s\",\"driver\":\"%s\"", runtime_version, drv);
#ifdef GC_SMOKE_NCCL
	if (n >= 2) {
		struct nccl_result r;

		nccl_allreduce(n, &r);
		emit(",\"nccl\":{\"gpus\":%d,\"bytes\":%zu,\"algbw_gbps\":%.1f,\"busbw_gbps\":%.1f,"
		     "\"ok\":%s}",
		     r.gpus, r.bytes, r.algbw, r.busbw, r.ok ? "true" : "false");
	}
#endif
	emit("}");
	printf("%s\n", report);
	if (nvml.lib)
		dlclose(nvml.lib);
	return 0;
}
