#!/bin/bash
# env_setup.sh: Alibaba Cloud's eRDMA install script as a gpucluster-sim node's curl serves it
# (http://mirrors.cloud.aliyuncs.com/erdma/env_setup.sh). As root (--egs: the GPU instances'
# stack): installs the simulated eRDMA driver and rdma-core's ibv_devinfo, and the node's
# NCCL figures across nodes become RDMA's.
if [ "$(id -u)" != 0 ]; then
	echo "Please run this script as root" >&2
	exit 1
fi
echo "Installing erdma driver, rdma-core and perftest ..."
ln -sf /usr/local/lib/gpucluster-sim/tools/ibv_devinfo /usr/local/bin/ibv_devinfo
echo rdma >/var/lib/gpucluster-sim/fabric
echo "erdma driver installed; check with: ibv_devinfo"
