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
# The instance role (GCSIM_ROLE in node.env, from the launch) and its credentials:
#   AWS      /latest/meta-data/iam/security-credentials/[ROLE] (IMDSv2 token as above)
#   Alibaba  /latest/meta-data/ram/security-credentials/[ROLE]
#   Tencent  /latest/meta-data/cam/security-credentials/[ROLE]
# the directory names the role; ROLE answers JSON credentials in the cloud's field names,
# fixed per node (gcsim_role_key), expiring in an hour; 404 without a role.

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
	case "$path" in */security-credentials/*)
		if [ "$host" = 169.254.169.254 ] &&
			{ [ -z "$token" ] || [ "$token" != "$(cat "$S/imds-token" 2>/dev/null)" ]; }; then
			echo "Unauthorized"
			return 2
		fi
		gcsim_role_credentials "$host" "$path"
		return
		;;
	esac
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

# gcsim_role: the node's instance role ("" for none).
gcsim_role() {
	# shellcheck source=/dev/null
	(. "$S/node.env" && printf '%s' "${GCSIM_ROLE:-}")
}

# gcsim_role_key WHAT: a fixed fake secret of this node's role ("id", "secret", "token").
gcsim_role_key() {
	local h
	# shellcheck source=/dev/null
	h=$(printf '%s/%s/%s' "$(. "$S/node.env" && echo "$GCSIM_INSTANCE_ID")" "$(gcsim_role)" "$1" | sha256sum)
	printf '%s' "${h:0:32}"
}

# gcsim_role_credentials HOST PATH: the role's directory or its credentials.
gcsim_role_credentials() {
	local role dir=${2%/security-credentials/*}/security-credentials/ exp now
	role=$(gcsim_role)
	case "$1:$dir" in
	169.254.169.254:/latest/meta-data/iam/security-credentials/ | \
		100.100.100.200:/latest/meta-data/ram/security-credentials/ | \
		metadata.tencentyun.com:/latest/meta-data/cam/security-credentials/) ;;
	*) gcsim_metadata_404; return 2 ;;
	esac
	if [ -z "$role" ]; then
		gcsim_metadata_404
		return 2
	fi
	if [ "$2" = "$dir" ]; then
		printf '%s\n' "$role"
		return 0
	fi
	if [ "${2#"$dir"}" != "$role" ]; then
		gcsim_metadata_404
		return 2
	fi
	now=$(date +%s)
	exp=$(gcsim_utc $((now + 3600)) %Y-%m-%dT%H:%M:%SZ)
	case "$1" in
	169.254.169.254)
		printf '{"Code":"Success","LastUpdated":"%s","Type":"AWS-HMAC","AccessKeyId":"ASIA%s","SecretAccessKey":"%s","Token":"%s","Expiration":"%s"}\n' \
			"$(gcsim_utc "$now" %Y-%m-%dT%H:%M:%SZ)" "$(gcsim_role_key id | tr a-f A-F | cut -c1-16)" \
			"$(gcsim_role_key secret)" "$(gcsim_role_key token)" "$exp"
		;;
	100.100.100.200)
		printf '{"AccessKeyId":"STS.%s","AccessKeySecret":"%s","Expiration":"%s","SecurityToken":"%s","LastUpdated":"%s","Code":"Success"}\n' \
			"$(gcsim_role_key id)" "$(gcsim_role_key secret)" "$exp" "$(gcsim_role_key token)" \
			"$(gcsim_utc "$now" %Y-%m-%dT%H:%M:%SZ)"
		;;
	metadata.tencentyun.com)
		printf '{"TmpSecretId":"AKID%s","TmpSecretKey":"%s","ExpiredTime":%s,"Expiration":"%s","Token":"%s","Code":"Success"}\n' \
			"$(gcsim_role_key id)" "$(gcsim_role_key secret)" $((now + 3600)) "$exp" \
			"$(gcsim_role_key token)"
		;;
	esac
	return 0
}
