# shellcheck shell=bash
# metadata.sh: each cloud's instance metadata service, as the node's curl shim answers it
# (docs/internals/spot.md). Sourced by bin/curl, never run.
#
# The emulator writes the instance's interruption notice into $S (gcsim.sh):
#   spot-notice     "EPOCH ACTION": the cloud reclaims the instance at EPOCH (unix seconds)
#   rebalance       "EPOCH": AWS's rebalance recommendation, made at EPOCH
# and answers, at each cloud's documented address and format:
#   AWS      IMDSv2: PUT /latest/api/token (X-aws-ec2-metadata-token-ttl-seconds) gives a
#            token every GET must send (X-aws-ec2-metadata-token), else 401;
#            /latest/meta-data/spot/instance-action {"action":"terminate","time":ISO-8601 Z}
#            /latest/meta-data/events/recommendations/rebalance {"noticeTime":ISO-8601 Z}
#   Alibaba  /latest/meta-data/instance/spot/termination-time  2015-01-05T18:02:00Z
#   Tencent  /latest/meta-data/spot/termination-time  2018-08-18 12:05:33 (UTC+8)
# and 404 (an HTML page, as the services do) while there is no notice.

S=${S:-/var/lib/gpucluster-sim}

# gcsim_metadata_host URL: whether URL is a metadata service's.
gcsim_metadata_host() {
	case "$(gcsim_url_host "$1")" in
	169.254.169.254 | 100.100.100.200 | metadata.tencentyun.com) return 0 ;;
	esac
	return 1
}

gcsim_utc() { date -u -d "@$1" +"$2"; }

# gcsim_metadata METHOD URL HEADER...: prints the body; returns the HTTP status / 100 - 2
# as curl -f sees it: 0 for 200, 2 for 4xx (the caller maps it to exit 22).
gcsim_metadata() {
	local method=$1 url=$2 host path notice="" at="" h token="" ttl=""
	shift 2
	host=$(gcsim_url_host "$url")
	path=/${url#*://*/}
	for h in "$@"; do
		case "${h,,}" in
		x-aws-ec2-metadata-token:*) token=${h#*:} ;;
		x-aws-ec2-metadata-token-ttl-seconds:*) ttl=${h#*:} ;;
		esac
	done
	token=${token# } ttl=${ttl# }
	if [ -s "$S/spot-notice" ]; then
		read -r at notice <"$S/spot-notice"
	fi
	case "$host" in
	169.254.169.254)
		if [ "$path" = /latest/api/token ]; then
			if [ "$method" != PUT ] || [ -z "$ttl" ]; then
				gcsim_metadata_404
				return 2
			fi
			[ -s "$S/imds-token" ] || head -c 24 /dev/urandom | base64 | tr -d '/+=' >"$S/imds-token"
			cat "$S/imds-token"
			return 0
		fi
		if [ -z "$token" ] || [ "$token" != "$(cat "$S/imds-token" 2>/dev/null)" ]; then
			echo "Unauthorized"
			return 2
		fi
		case "$path" in
		/latest/meta-data/spot/instance-action)
			[ -n "$at" ] || { gcsim_metadata_404; return 2; }
			printf '{"action": "%s", "time": "%s"}\n' "${notice:-terminate}" \
				"$(gcsim_utc "$at" %Y-%m-%dT%H:%M:%SZ)"
			;;
		/latest/meta-data/events/recommendations/rebalance)
			[ -s "$S/rebalance" ] || { gcsim_metadata_404; return 2; }
			printf '{"noticeTime": "%s"}\n' "$(gcsim_utc "$(cat "$S/rebalance")" %Y-%m-%dT%H:%M:%SZ)"
			;;
		*) gcsim_metadata_404; return 2 ;;
		esac
		;;
	100.100.100.200)
		if [ "$path" != /latest/meta-data/instance/spot/termination-time ] || [ -z "$at" ]; then
			gcsim_metadata_404
			return 2
		fi
		gcsim_utc "$at" %Y-%m-%dT%H:%M:%SZ
		;;
	metadata.tencentyun.com)
		if [ "$path" != /latest/meta-data/spot/termination-time ] || [ -z "$at" ]; then
			gcsim_metadata_404
			return 2
		fi
		gcsim_utc $((at + 8 * 3600)) '%Y-%m-%d %H:%M:%S'
		;;
	esac
	return 0
}

gcsim_metadata_404() {
	printf '<?xml version="1.0" encoding="iso-8859-1"?>\n<html><head><title>404 - Not Found</title></head><body><h1>404 - Not Found</h1></body></html>\n'
}
