#!/usr/bin/env bash
# gpucluster-sim end to end: start the binary (API only), wait for its ready file, call
# EC2 with a request curl signs itself (--aws-sigv4), check an unsigned request's error,
# the request log, the control API (/healthz, /state, /faults, /reset), the refusal of a
# non-loopback --listen, and a clean exit on SIGTERM that removes the temporary state dir.
set -euo pipefail

bin=${GC_SIM_BIN:?GC_SIM_BIN must point at gpucluster-sim}
work=$(mktemp -d)
pid=
cleanup() {
	if [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null; then
		kill -KILL "$pid" 2>/dev/null || true
	fi
	rm -rf "$work"
}
trap cleanup EXIT

fail() {
	printf 'server.sh: FAIL: %s\n' "$*" >&2
	exit 1
}

# json FILE EXPR: one value from a JSON file (python3 is in every CI image we use)
json() {
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"
}

"$bin" --help | grep -q -- '--ready-file' || fail "--help does not list --ready-file"

if "$bin" --listen 0.0.0.0 --no-ssh 2>"$work/listen.err"; then
	fail "--listen 0.0.0.0 was accepted"
fi
grep -q '127.0.0.0/8' "$work/listen.err" || fail "no clear message for a non-loopback --listen"

TMPDIR=$work "$bin" --no-ssh --ready-file "$work/ready.json" --request-log "$work/requests.log" \
	--pending-ms 100 --no-rate-limits 2>"$work/sim.err" &
pid=$!
for _ in $(seq 1 100); do
	[ -s "$work/ready.json" ] && break
	kill -0 "$pid" 2>/dev/null || fail "the emulator exited early: $(cat "$work/sim.err")"
	sleep 0.05
done
[ -s "$work/ready.json" ] || fail "no ready file after 5 s"

aws=$(json "$work/ready.json" 'd["aws"]')
control=$(json "$work/ready.json" 'd["control"]')
state_dir=$(json "$work/ready.json" 'd["state_dir"]')
[ "$(json "$work/ready.json" 'd["pid"]')" = "$pid" ] || fail "ready file pid"
case $aws in http://127.0.0.1:*) ;; *) fail "aws endpoint '$aws'" ;; esac
[ -d "$state_dir" ] || fail "state dir '$state_dir' missing"

# a request curl signs: SigV4 over the exact form body
creds=AKIAGPUCLUSTERSIM001:gpucluster-sim-aws-secret-key-0000000000
code=$(curl -sS -o "$work/run.xml" -w '%{http_code}' --aws-sigv4 "aws:amz:us-east-1:ec2" \
	--user "$creds" -H 'Content-Type: application/x-www-form-urlencoded' \
	--data 'Action=RunInstances&Version=2016-11-15&ImageId=ami-0d1e5f7a9b3c5e570&InstanceType=g5.xlarge&MinCount=2&MaxCount=2&ClientToken=server-sh&UserData=c2VjcmV0LXRva2Vu&TagSpecification.1.ResourceType=instance&TagSpecification.1.Tag.1.Key=suite&TagSpecification.1.Tag.1.Value=server+sh' \
	"$aws/")
[ "$code" = 200 ] || fail "RunInstances answered $code: $(cat "$work/run.xml")"
grep -q '<RunInstancesResponse xmlns="http://ec2.amazonaws.com/doc/2016-11-15/">' "$work/run.xml" ||
	fail "RunInstances body: $(cat "$work/run.xml")"
[ "$(grep -o '<instanceId>' "$work/run.xml" | wc -l)" = 2 ] || fail "expected two instances"

# a GET with the parameters in the query string, signed the same way (sorted here by hand:
# curl 7.x signs the query as written, while SigV4 wants it sorted)
code=$(curl -sS -o "$work/desc.xml" -w '%{http_code}' --aws-sigv4 "aws:amz:us-east-1:ec2" \
	--user "$creds" \
	"$aws/?Action=DescribeInstances&Filter.1.Name=tag%3Asuite&Filter.1.Value.1=server%20sh&Version=2016-11-15")
[ "$code" = 200 ] || fail "DescribeInstances answered $code: $(cat "$work/desc.xml")"
[ "$(grep -o '<instanceId>' "$work/desc.xml" | wc -l)" = 2 ] || fail "tag filter over GET"

# unsigned: EC2's auth error, as XML
code=$(curl -sS -o "$work/unsigned.xml" -w '%{http_code}' \
	--data 'Action=DescribeInstances&Version=2016-11-15' "$aws/")
[ "$code" = 401 ] || fail "unsigned request answered $code"
grep -q '<Code>MissingAuthenticationToken</Code>' "$work/unsigned.xml" || fail "unsigned body"

# a wrong secret
code=$(curl -sS -o "$work/bad.xml" -w '%{http_code}' --aws-sigv4 "aws:amz:us-east-1:ec2" \
	--user AKIAGPUCLUSTERSIM001:wrong \
	--data 'Action=DescribeInstances&Version=2016-11-15' "$aws/")
[ "$code" = 401 ] || fail "wrong secret answered $code"
grep -q '<Code>AuthFailure</Code>' "$work/bad.xml" || fail "wrong secret body"

# the request log: one JSON object per line, in order
python3 - "$work/requests.log" <<'EOF' || fail "request log: $(cat "$work/requests.log")"
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
assert len(lines) == 4, lines
run = lines[0]
assert run["provider"] == "aws" and run["action"] == "RunInstances", run
assert run["version"] == "2016-11-15" and run["status"] == 200, run
assert run["error_code"] is None, run
assert run["params"]["ClientToken"] == "server-sh", run
assert run["params"]["TagSpecification.1.Tag.1.Value"] == "server sh", run
assert "Action" not in run["params"], run
# user-data may carry secrets: the log keeps its size only
assert run["params"]["UserData"] == "<redacted: 16 characters>", run
assert "c2VjcmV0" not in open(sys.argv[1]).read()
assert run["ts"].endswith("Z") and "T" in run["ts"], run
assert lines[2]["status"] == 401 and lines[2]["error_code"] == "MissingAuthenticationToken"
assert lines[3]["error_code"] == "AuthFailure"
EOF

# the control API
curl -sSf "$control/healthz" | grep -q '"ok": true' || fail "/healthz"
curl -sSf -o "$work/state.json" "$control/state" || fail "/state"
[ "$(json "$work/state.json" 'len(d["instances"])')" = 2 ] || fail "/state instances"
[ "$(json "$work/state.json" 'd["instances"][0]["tags"]["suite"]')" = "server sh" ] ||
	fail "/state tags"
[ "$(json "$work/state.json" 'd["tokens"][0]["token"]')" = "server-sh" ] || fail "/state tokens"

curl -sSf -X POST --data-binary $'aws:DescribeRegions:throttle\n' "$control/faults" >/dev/null ||
	fail "POST /faults"
curl -sSf "$control/faults" | grep -q 'aws:DescribeRegions:throttle' || fail "GET /faults"
code=$(curl -sS -o "$work/throttled.xml" -w '%{http_code}' --aws-sigv4 "aws:amz:us-east-1:ec2" \
	--user "$creds" --data 'Action=DescribeRegions&Version=2016-11-15' "$aws/")
[ "$code" = 503 ] || fail "throttle fault answered $code"
code=$(curl -sS -o /dev/null -w '%{http_code}' -X POST --data 'aws:x:nonsense' "$control/faults")
[ "$code" = 400 ] || fail "a bad fault rule answered $code"
curl -sSf -X DELETE "$control/faults" >/dev/null || fail "DELETE /faults"
curl -sSf -X POST --data 'aws:DescribeRegions:drop' "$control/faults" >/dev/null
curl_status=0
curl -sS -o /dev/null --max-time 10 --aws-sigv4 "aws:amz:us-east-1:ec2" --user "$creds" \
	--data 'Action=DescribeRegions&Version=2016-11-15' "$aws/" 2>/dev/null || curl_status=$?
# 52: the server closed the connection without a reply (not 28, a timeout)
[ "$curl_status" = 52 ] || fail "a dropped call ended with curl status $curl_status"
curl -sSf -X DELETE "$control/faults" >/dev/null || fail "DELETE /faults"
[ -z "$(curl -sSf "$control/faults")" ] || fail "faults not cleared"

# hostile answers the server sends its own way (sim/hostile.h): an HTML 502 page, a huge
# body streamed past the clients' 16 MiB cap, a slow body trickled within its bound
hostile() { # RULE OUTFILE -> "status|type|size|seconds"
	curl -sSf -X DELETE "$control/faults" >/dev/null
	curl -sSf -X POST --data "$1" "$control/faults" >/dev/null || fail "POST /faults $1"
	curl -sS -o "$2" -w '%{http_code}|%{content_type}|%{size_download}|%{time_total}' \
		--max-time 20 --aws-sigv4 "aws:amz:us-east-1:ec2" --user "$creds" \
		--data 'Action=DescribeInstances&Version=2016-11-15' "$aws/"
}
IFS="|" read -r code ctype _ <<<"$(hostile 'aws:DescribeInstances:hostile,mode=html,status=502' "$work/h.html")"
[ "$code $ctype" = "502 text/html; charset=utf-8" ] || fail "html mode: $code $ctype"
grep -q '<!DOCTYPE html>' "$work/h.html" || fail "html mode body"
IFS="|" read -r code _ size _ <<<"$(hostile 'aws:DescribeInstances:hostile,mode=huge-body' "$work/h.big")"
[ "$code $size" = "200 17825792" ] || fail "huge-body mode: $code, $size bytes"
head -c 200 "$work/h.big" | grep -q '<DescribeInstancesResponse' || fail "huge-body prefix"
IFS="|" read -r code _ size secs <<<"$(hostile 'aws:DescribeInstances:hostile,mode=slow-body,delay_ms=320' "$work/h.slow")"
python3 -c "import sys; sys.exit(not 0.3 <= float(sys.argv[1]) < 5)" "$secs" ||
	fail "slow-body mode took $secs s"
grep -q '</DescribeInstancesResponse>' "$work/h.slow" || fail "slow-body body incomplete"
rm -f "$work/h.big"
curl -sSf -X DELETE "$control/faults" >/dev/null || fail "DELETE /faults"

curl -sSf -X POST "$control/reset" >/dev/null || fail "/reset"
curl -sSf -o "$work/state.json" "$control/state" || fail "/state after reset"
[ "$(json "$work/state.json" 'len(d["instances"])')" = 0 ] || fail "reset left instances"
code=$(curl -sS -o /dev/null -w '%{http_code}' "$control/nope")
[ "$code" = 404 ] || fail "unknown control path answered $code"

# concurrent calls: every log line stays whole
burst=()
for i in $(seq 1 20); do
	curl -sS -o /dev/null --aws-sigv4 "aws:amz:us-east-1:ec2" --user "$creds" \
		--data "Action=DescribeRegions&Version=2016-11-15&RegionName.1=us-west-2&Filter.1.Name=region-name&Filter.1.Value.1=call-$i" \
		"$aws/" &
	burst+=($!)
done
wait "${burst[@]}"
python3 - "$work/requests.log" <<'EOF' || fail "request log after concurrent calls"
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
burst = [l for l in lines if l["params"].get("Filter.1.Value.1", "").startswith("call-")]
assert len(burst) == 20, len(burst)
EOF

# a body over the cap is refused, not buffered
head -c 2000000 /dev/zero | tr '\0' 'a' >"$work/big"
code=$(curl -sS -o /dev/null -w '%{http_code}' --data-binary @"$work/big" "$aws/" || true)
[ "$code" = 413 ] || fail "oversized body answered $code"

kill -TERM "$pid"
status=0
wait "$pid" || status=$?
pid=
[ "$status" = 0 ] || fail "exit status $status after SIGTERM: $(cat "$work/sim.err")"
[ ! -e "$state_dir" ] || fail "state dir '$state_dir' left behind"
echo "server.sh: ok"
