#!/usr/bin/env bash
# mounts.sh: a user's journey with a bucket mounted on the nodes with their instance role
# (issue 15, item 2; docs/internals/mounts.md). API-only emulator, one node. First the
# wrong specs a user writes: mounts on a group without a role, a bucket name the cloud
# refuses, a system directory as the path; plan and apply fail with the key's LINE:COL and
# create nothing. Then the fixed spec applies: the launch carries the role as the cloud's
# API names it, and the emulator records it on the instance. Then on an SSH node (one
# bootstrap of a GPU-ready node): a bucket that does not exist fails the mounts step naming
# it and its path; fixed, the step installs the cloud's tool and mounts a ro and a rw
# bucket (on Tencent with the refreshed key file); mounts lost on the node fail smoke,
# naming the node, the bucket, the path and why.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

case $CLOUD in
aws) BUCKET=gc-e2e-datasets PARAM=IamInstanceProfile.Name ;;
alibaba) BUCKET=gc-e2e-datasets PARAM=RamRoleName ;;
tencent) BUCKET=datasets-1250000000 PARAM=CamRoleName ;;
esac
ROLE=gpu-data-reader

sim_start --no-rate-limits
f=$work/c.yaml
# mounts_spec OUT ROLE BUCKET PATH: one node; the role after disk_gb (line 16) when set
mounts_spec() {
	local out=$1 role=$2 bucket=$3 path=$4
	spec "$out.base" e2e-mnt workers 1 "$TYPE1" on-demand \
		"$(printf 'mounts:\n  - bucket: %s\n    path: %s\n    mode: ro' "$bucket" "$path")"
	{
		sed -n '1,15p' "$out.base"
		if [ -n "$role" ]; then
			printf '    role: %s\n' "$role"
		fi
		sed -n '16,$p' "$out.base"
	} >"$out"
}


# refused WHAT POS MESSAGE: plan and apply -y fail with FILE:POS: MESSAGE, once, nothing made
refused() { spec_refused e2e-mnt "$f" "$@"; }

# mounts without a role: the nodes would have no credentials of their own
mounts_spec "$f" "" "$BUCKET" /data
refused "no role" 20:3 "add a role to node group 'workers'"

# a bucket name no cloud takes, a role name with a space
mounts_spec "$f" "$ROLE" Bad_Bucket /data
refused "a bad bucket" 21:13 "'Bad_Bucket' is not a bucket name for $CLOUD"
mounts_spec "$f" "data reader" "$BUCKET" /data
refused "a bad role" 16:11 "'data reader' is not an instance role name for $CLOUD"

# a system directory
mounts_spec "$f" "$ROLE" "$BUCKET" /usr/data
refused "a system path" 22:11 "'/usr/data' is a system directory"

# fixed: it applies; the launch carries the role
mounts_spec "$f" "$ROLE" "$BUCKET" /data
gc_ok plan "$f"
gc_ok apply -y "$f"
expect_alive e2e-mnt 1 "the fixed spec"
run=$(jq -s -c '[.[] | select(.action == "RunInstances" and .error_code == null)][0].params' \
	"$work/requests.log")
jq -e --arg p "$PARAM" --arg r "$ROLE" '.[$p] == $r' <<<"$run" >/dev/null ||
	fail "the launch does not carry $PARAM $ROLE: $run"
state
jq -e --arg c "$CLOUD" --arg r "$ROLE" '[.instances[] | select(.cloud == $c and
	.state != "terminated" and .tags["gpucluster:cluster"] == "e2e-mnt")] |
	length == 1 and all(.role == $r)' "$work/state.json" >/dev/null ||
	fail "the emulator did not record the role on the instance"
gc_ok destroy -y "$f"
expect_alive e2e-mnt 0 "after destroy"
requests_valid

# --- on SSH nodes: the bootstrap's mounts step, one GPU-ready node, one bootstrap --------
sim_stop
sim_start_nodes --seed 5
case $CLOUD in
tencent) RESULTS=results-1250000000 MISSING=no-such-results-1250000000 ;;
*) RESULTS=gc-e2e-results MISSING=no-such-results ;;
esac
# node_spec RW-BUCKET: a ro and a rw bucket, the node's group with the role
node_spec() {
	{
		printf 'name: e2e-mnt\nprovider:\n  name: %s\n  region: %s\n  endpoint: %s\n' \
			"$CLOUD" "$REGION" "$ENDPOINT"
		printf 'ssh:\n  user: ubuntu\n  port: %s\nnode_groups:\n' "$SSH_PORT"
		printf '  - name: workers\n    count: 1\n    instance_types: [%s]\n' "$TYPE_READY"
		printf '    image: gpu-ready\n    role: %s\n' "$ROLE"
		printf 'bootstrap:\n  driver: preinstalled\n  cuda: none\n  container: none\n'
		printf 'mounts:\n  - bucket: %s\n    path: /opt/data\n' "$BUCKET"
		printf '  - bucket: %s\n    path: /opt/results\n    mode: rw\n' "$1"
	} >"$f"
}

# a bucket that does not exist: the step fails naming the node, the bucket and the path;
# the other bucket is mounted all the same
node_spec "$MISSING"
gc apply -y "$f"
[ "$rc" != 0 ] || fail "apply with a missing bucket succeeded"
grep -q "workers/0 $ID_RE: mounts FAILED" "$work/err" ||
	fail "apply does not say the node's mounts step failed: $(cat "$work/err")"
grep -qF "cannot mount bucket '$MISSING' at '/opt/results'" "$work/err" ||
	fail "apply does not name the missing bucket and its path: $(cat "$work/err")"
grep -qF "NoSuchBucket" "$work/err" || fail "apply does not say why the mount failed"
expect_alive e2e-mnt 1 "after the failed mount"
# status --mounts reads the node: the missing bucket failed, the other one mounted
gc status --mounts "$f"
[ "$rc" = 1 ] || fail "status --mounts with a failed mount exited $rc"
grep -Eq "^workers/0 +$BUCKET +/opt/data +ro +mounted$" "$work/out" ||
	fail "status --mounts does not show the ro bucket mounted: $(cat "$work/out")"
grep -Eq "^ +$MISSING +/opt/results +rw +FAILED: .*NoSuchBucket" "$work/out" ||
	fail "status --mounts does not show why the missing bucket failed: $(cat "$work/out")"

# fixed: the step installs the cloud's tool, mounts both, ro and rw
node_spec "$RESULTS"
gc_ok apply -y "$f"
grep -q "workers/0 $ID_RE: mounts ok" "$work/err" || fail "the mounts step did not run: $(cat "$work/err")"
gc_ok exec "$f" -- 'mountpoint /opt/data && mountpoint /opt/results &&
	cat /opt/data/.gcsim-bucket /opt/results/.gcsim-bucket &&
	{ touch /opt/data/x 2>/dev/null && echo data-writable || echo data-read-only; } &&
	touch /opt/results/x && echo results-writable'
for want in "/opt/data is a mountpoint" "/opt/results is a mountpoint" "$BUCKET" "$RESULTS" \
	data-read-only results-writable; do
	grep -qF -- "$want" "$work/out" || fail "the node's mounts lack '$want': $(cat "$work/out")"
done
gc_ok status --mounts "$f"
[ "$(grep -c ' mounted$' "$work/out")" = 2 ] || fail "status --mounts: $(cat "$work/out")"
if [ "$CLOUD" = tencent ]; then
	# cosfs reads a key file that a timer refreshes from the role
	gc_ok exec "$f" -- 'sudo stat -c %a /etc/gpucluster/mount-creds &&
		systemctl is-enabled gpucluster-mount-creds.timer'
	if ! grep -qx "600" "$work/out" || ! grep -qx "enabled" "$work/out"; then
		fail "no private credentials file or refresher timer: $(cat "$work/out")"
	fi
fi

# the mounts are lost on the node: smoke names the node, the bucket, the path and why
id=$(jq -r '[.instances[] | select(.tags["gpucluster:cluster"] == "e2e-mnt")
	| select((.state | ascii_downcase) == "running")][0].id' <(control GET /state))
control POST "/nodes/$id/faults" mount >/dev/null
gc status --mounts -o json "$f"
[ "$rc" = 1 ] || fail "status --mounts with the mounts lost exited $rc"
jq -e --arg id "$id" '.nodes | length == 1 and .[0].id == $id and (.[0].mounts | length == 2
	and all(.mounted == false and (.error | startswith("the mount is gone"))))' \
	"$work/out" >/dev/null || fail "status --mounts -o json: $(cat "$work/out")"
gc smoke "$f"
[ "$rc" = 1 ] || fail "smoke with the mounts lost exited $rc"
grep -qF "$id (workers/0): smoke test failed: mount: bucket '$BUCKET' is not mounted at /opt/data: the mount is gone" \
	"$work/err" || fail "smoke does not report the lost mount: $(cat "$work/err")"
# the node mended: what smoke advises mounts them again
control POST "/nodes/$id/faults" "" >/dev/null
gc_ok bootstrap --from mounts "$f"
gc_ok status --mounts "$f"
[ "$(grep -c ' mounted$' "$work/out")" = 2 ] || fail "not mounted again: $(cat "$work/out")"
gc_ok destroy -y "$f"
expect_alive e2e-mnt 0 "after destroy"
note "ok ($CLOUD)"
