# shellcheck shell=bash
# dcgm.sh: containers that docker runs detached (`docker run -d`), and what such a container
# of NVIDIA's dcgm-exporter image answers on its published port: the Prometheus text that
# dcgm-exporter serves on /metrics, one series per GPU for the node's simulated GPUs
# (docs/internals/monitoring.md). Sourced by the docker and curl shims, never run.
#
# $S/docker/containers/NAME holds "IMAGE RESTART PORT BOOT_ID": the image, the restart
# policy (no, always, unless-stopped, on-failure), the host port published (- for none) and
# the boot it was started in. A container runs while docker runs, in the boot that started
# it, and after a reboot too when its policy restarts it (docker starts those again).
# shellcheck source=gcsim.sh
. /usr/local/lib/gpucluster-sim/gcsim.sh

gcsim_boot_id() { cat "$S/boot_id" 2>/dev/null || echo unknown; }

# gcsim_container_running NAME
gcsim_container_running() {
	local image restart port boot
	read -r image restart port boot <"$S/docker/containers/$1" 2>/dev/null || return 1
	gcsim_service_active docker || return 1
	[ "$restart" != no ] || [ "$boot" = "$(gcsim_boot_id)" ]
}

# gcsim_port_container PORT: the running container that publishes PORT, or fails.
gcsim_port_container() {
	local f image restart port boot
	for f in "$S"/docker/containers/*; do
		[ -e "$f" ] || continue
		read -r image restart port boot <"$f" || continue
		if [ "$port" = "$1" ] && gcsim_container_running "$(basename "$f")"; then
			echo "$image"
			return 0
		fi
	done
	return 1
}

# gcsim_dcgm_metrics: dcgm-exporter's /metrics for the node's GPUs (its default counters'
# names, labels and units; values from the simulated nvidia-smi).
gcsim_dcgm_metrics() {
	local host rows
	host=$(cat /etc/hostname 2>/dev/null || echo localhost)
	rows=$("$T/nvidia-smi" --format=csv,noheader,nounits \
		--query-gpu=index,uuid,pci.bus_id,name,driver_version,clocks.max.sm,temperature.gpu,power.draw,utilization.gpu,utilization.memory,memory.free,memory.used,ecc.errors.uncorrected.volatile.total) ||
		return 1
	awk -F', ' -v host="$host" '
	BEGIN {
		n = split("SM_CLOCK gauge SM clock frequency (in MHz).;MEM_CLOCK gauge Memory clock frequency (in MHz).;GPU_TEMP gauge GPU temperature (in C).;POWER_USAGE gauge Power draw (in W).;GPU_UTIL gauge GPU utilization (in %).;MEM_COPY_UTIL gauge Memory utilization (in %).;FB_FREE gauge Framebuffer memory free (in MiB).;FB_USED gauge Framebuffer memory used (in MiB).;XID_ERRORS gauge Value of the last XID error encountered.;ECC_DBE_VOL_TOTAL counter Total number of double-bit volatile ECC errors.", spec, ";")
		for (k = 1; k <= n; k++) {
			split(spec[k], w, " ")
			name[k] = w[1]; type[k] = w[2]
			help[k] = substr(spec[k], length(w[1]) + length(w[2]) + 3)
		}
	}
	{ row[NR] = $0 }
	END {
		for (k = 1; k <= n; k++) {
			printf "# HELP DCGM_FI_DEV_%s %s\n# TYPE DCGM_FI_DEV_%s %s\n", name[k], help[k], name[k], type[k]
			for (r = 1; r <= NR; r++) {
				split(row[r], f, ", ")
				v["SM_CLOCK"] = f[6]; v["MEM_CLOCK"] = 1593; v["GPU_TEMP"] = f[7]
				v["POWER_USAGE"] = f[8]; v["GPU_UTIL"] = f[9]; v["MEM_COPY_UTIL"] = f[10]
				v["FB_FREE"] = f[11]; v["FB_USED"] = f[12]; v["XID_ERRORS"] = 0
				v["ECC_DBE_VOL_TOTAL"] = f[13]
				printf "DCGM_FI_DEV_%s{gpu=\"%s\",UUID=\"%s\",pci_bus_id=\"%s\",device=\"nvidia%s\",modelName=\"%s\",Hostname=\"%s\",DCGM_FI_DRIVER_VERSION=\"%s\"} %s\n",
					name[k], f[1], f[2], f[3], f[1], f[4], host, f[5], v[name[k]]
			}
		}
	}' <<<"$rows"
}

# gcsim_local_http URL: what a server on this node answers for an http://127.0.0.1:PORT/
# (or localhost) URL: prints the body and returns 0; 7 when nothing listens on PORT (curl's
# "couldn't connect"), 22 for a path the server does not have (404), 1 when URL is not a
# local one.
gcsim_local_http() {
	local rest port path image
	case "$1" in
	http://127.0.0.1:[0-9]* | http://localhost:[0-9]*) rest=${1#http://*:} ;;
	*) return 1 ;;
	esac
	port=${rest%%/*}
	path=/${rest#"$port"}
	path=${path#/}
	image=$(gcsim_port_container "$port") || return 7
	case "$image:${path%%\?*}" in
	nvcr.io/nvidia/k8s/dcgm-exporter:*:/metrics) gcsim_dcgm_metrics ;;
	*) return 22 ;;
	esac
}
