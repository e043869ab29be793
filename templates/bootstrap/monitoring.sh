#!/usr/bin/env bash
# monitoring.sh: NVIDIA's dcgm-exporter on a GPU node, for bootstrap.monitoring: dcgm
# (docs/bootstrap.md, docs/internals/monitoring.md). Runs the exporter the way NVIDIA's
# documentation runs it standalone (docs.nvidia.com/datacenter/dcgm/latest/gpu-telemetry/
# dcgm-exporter.html, github.com/NVIDIA/dcgm-exporter's README): a container with every GPU
# and SYS_ADMIN (its embedded host engine asks for it), port 9400 published, under a restart
# policy so that docker starts it again after a reboot or a crash. Then checks that
# http://127.0.0.1:9400/metrics answers with DCGM_FI_DEV_GPU_UTIL for every GPU.
# Idempotent: a running container of ours with the same image and policy is kept; one that
# is stopped or runs another image is replaced.
#
# Environment:
#   MONITORING=dcgm   dcgm, or none to skip this step
#   UNDO=1            remove the exporter container instead (bootstrap.monitoring dropped;
#                     the runner runs it as monitoring-undo only where this step ran)
#   DCGM_IMAGE=IMAGE  the exporter's image (default below: a tag NVIDIA's README names;
#                     tags pair a DCGM version with an exporter version)
#   EXPECT_GPUS=N     the GPUs the metrics must show (the instance type's; default: any)
#   GC_METRICS_TRIES=N  how many times to ask for the metrics, a second apart (default 30:
#                     the exporter needs a few seconds to start its host engine)
#
# Exit status: 0 done (or skipped); 1 failure.
set -euo pipefail
GC_STEP=monitoring
if [ -z "${GC_LIB_LOADED:-}" ]; then
	# shellcheck source=lib.sh
	. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
fi

MONITORING=${MONITORING:-dcgm}
DCGM_IMAGE=${DCGM_IMAGE:-nvcr.io/nvidia/k8s/dcgm-exporter:4.5.3-4.8.2-distroless}
EXPECT_GPUS=${EXPECT_GPUS:-}
tries=${GC_METRICS_TRIES:-30}
name=gpucluster-dcgm-exporter
port=9400
url=http://127.0.0.1:$port/metrics
if [ "${UNDO:-}" = 1 ]; then
	need_root
	! have docker || as_root docker rm -f "$name" </dev/null >/dev/null 2>&1 || true
	info "removed (bootstrap.monitoring no longer set)"
	exit 0
fi
case "$MONITORING" in
none)
	info "skipped (MONITORING=none)"
	exit 0
	;;
dcgm) ;;
*) die "MONITORING='$MONITORING': expected dcgm or none" ;;
esac
case "$EXPECT_GPUS" in *[!0-9]*) die "EXPECT_GPUS='$EXPECT_GPUS': expected a number" ;; esac
need_root
have docker || die "dcgm-exporter runs as a container and docker is not installed (bootstrap.container: docker installs it)"

expected="$DCGM_IMAGE true unless-stopped"
have_now=$(as_root docker inspect -f '{{.Config.Image}} {{.State.Running}} {{.HostConfig.RestartPolicy.Name}}' \
	"$name" 2>/dev/null </dev/null || true)
if [ "$have_now" != "$expected" ]; then
	if [ -n "$have_now" ]; then
		info "replacing the exporter container ($have_now)"
		gc_run as_root docker rm -f "$name" || die "cannot remove the old '$name' container"
	fi
	info "pulling $DCGM_IMAGE"
	retry gc_run as_root docker pull "$DCGM_IMAGE" || die "cannot pull '$DCGM_IMAGE' (network, or a registry mirror?)"
	info "starting dcgm-exporter on port $port"
	gc_run as_root docker run -d --name "$name" --restart unless-stopped --gpus all \
		--cap-add SYS_ADMIN -p "$port:$port" "$DCGM_IMAGE" ||
		die "cannot start dcgm-exporter (does 'docker run --gpus all' work? the container step sets it up)"
fi

# the metrics: every GPU's DCGM_FI_DEV_GPU_UTIL line, each with its gpu="N" label
body="" i=0
while :; do
	i=$((i + 1))
	if body=$(curl -sf -m 5 "$url" 2>/dev/null) && grep -q '^DCGM_FI_DEV_GPU_UTIL{' <<<"$body"; then
		break
	fi
	[ "$i" -lt "$tries" ] ||
		die "dcgm-exporter does not answer on $url with DCGM_FI_DEV_GPU_UTIL ('docker logs $name' says why)"
	sleep 1
done
seen=$(grep '^DCGM_FI_DEV_GPU_UTIL{' <<<"$body" | grep -o 'gpu="[0-9]*"' | sort -u | wc -l)
if [ -n "$EXPECT_GPUS" ] && [ "$seen" -ne "$EXPECT_GPUS" ]; then
	die "dcgm-exporter reports $seen GPUs, the instance type has $EXPECT_GPUS"
fi
info "dcgm-exporter answers on port $port ($seen GPUs)"
