# shellcheck shell=bash
# nccl.sh: the simulated NCCL figures of a gpucluster-sim node, shared by cuda-smoke (the
# smoke program's all-reduce) and all_reduce_perf (nccl-tests). Sourced after gcsim.sh.
#
# Round figures of the order real machines reach, never measurements:
#   inside a node: NVLink/NVSwitch boards (V100, A100, H100 SXM) from their NVLink
#   bandwidth, PCIe boards about 10 GB/s of bus bandwidth;
#   between nodes: the fabric's line rate ($S/fabric or GCSIM_FABRIC: efa 400 Gbit/s,
#   rdma 200 Gbit/s, standard (TCP) 25 Gbit/s) at 85 %, a tenth of that with the
#   slow-net node fault.

# gcsim_nccl_intra: bus bandwidth in GB/s of an all-reduce across this node's GPUs.
gcsim_nccl_intra() {
	local m
	m=$(printf '%s' "${GCSIM_GPU_MODEL:-}" | tr '[:upper:]' '[:lower:]' | sed 's/^nvidia //; s/^tesla //')
	case "$m" in
	h100*) echo 360.0 ;;
	a100*) echo 230.0 ;;
	v100*) echo 130.0 ;;
	*) echo 10.0 ;;
	esac
}

# gcsim_nccl_fabric: the node's fabric name (efa, rdma or standard).
gcsim_nccl_fabric() {
	local f=${GCSIM_FABRIC:-}
	[ ! -r "$S/fabric" ] || f=$(head -n 1 "$S/fabric")
	# without its RDMA devices NCCL falls back to TCP sockets
	! gcsim_fault no-rdma || f=standard
	case "$f" in efa | rdma) echo "$f" ;; *) echo standard ;; esac
}

# gcsim_nccl_inter: bus bandwidth in GB/s between nodes over the fabric; under mpirun the
# job's slowest link (GCSIM_MPI_FABRIC, GCSIM_MPI_SLOW: any host with slow-net).
gcsim_nccl_inter() {
	local gbit
	case "${GCSIM_MPI_FABRIC:-$(gcsim_nccl_fabric)}" in
	efa) gbit=400 ;;
	rdma) gbit=200 ;;
	*) gbit=25 ;;
	esac
	local f=0.85
	! gcsim_fault slow-net || f=0.085
	[ "${GCSIM_MPI_SLOW:-0}" != 1 ] || f=0.085
	awk -v g="$gbit" -v f="$f" 'BEGIN { printf "%.2f", g / 8 * f }'
}
