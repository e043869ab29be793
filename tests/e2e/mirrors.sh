#!/usr/bin/env bash
# mirrors.sh: package mirrors (issue 15, item 7). A user whose nodes are in a mainland
# China region points bootstrap.mirrors at the mirrors there: a typo in a URL is a spec
# error with its place, before anything is created; a full install (driver, CUDA, cuDNN,
# Docker, the container toolkit) then takes every package from the mirrors (the node's
# sources name the mirrors and none of the upstream hosts); a mirror host that does not
# exist fails the bootstrap naming the URL it could not reach.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

sim_start_nodes --seed 7
MIRRORS='  mirrors:
    apt: https://mirrors.aliyun.com/ubuntu
    cuda: https://mirrors.aliyun.com/nvidia-cuda/
    docker: https://mirrors.cloud.tencent.com/docker-ce
    nvidia_container: https://mirrors.ustc.edu.cn/libnvidia-container'
# mirror_spec FILE MIRRORS_YAML: one node, a full install from the plain image
mirror_spec() {
	{
		printf 'name: e2e-mirrors\nprovider:\n  name: %s\n  region: %s\n  endpoint: %s\n' \
			"$CLOUD" "$REGION" "$ENDPOINT"
		printf 'ssh:\n  user: ubuntu\n  port: %s\nnode_groups:\n' "$SSH_PORT"
		printf '  - name: workers\n    count: 1\n    instance_types: [%s]\n' "$TYPE1"
		printf '    image: ubuntu-22.04\nbootstrap:\n  driver: "570"\n  cuda: "12.8"\n'
		printf '  container: docker\n%s\n' "$2"
	} >"$1"
}

# 1. typos: a scheme that is not http(s), a key that does not exist; nothing is created
mirror_spec "$work/c.yaml" "${MIRRORS/https:\/\/mirrors.aliyun.com\/nvidia-cuda\//ftp://mirrors.aliyun.com/nvidia-cuda}"
line=$(grep -n '    cuda: ftp' "$work/c.yaml" | cut -d: -f1)
gc validate "$work/c.yaml"
[ "$rc" = 1 ] || fail "validate with an ftp mirror exited $rc"
grep -q "$work/c.yaml:$line:11: .*'ftp://mirrors.aliyun.com/nvidia-cuda' is not a mirror URL" "$work/err" ||
	fail "the bad mirror is not named with its place: $(cat "$work/err")"
mirror_spec "$work/c.yaml" "${MIRRORS/nvidia_container:/nvidia-container:}"
gc plan "$work/c.yaml"
[ "$rc" = 1 ] || fail "plan with an unknown mirror key exited $rc"
grep -q "unknown key 'nvidia-container'.*did you mean 'nvidia_container'" "$work/err" ||
	fail "the unknown mirror key has no suggestion: $(cat "$work/err")"
[ "$(calls RunInstances)" = 0 ] || fail "a spec error launched something"

# 2. the full install, every package from the mirrors
mirror_spec "$work/c.yaml" "$MIRRORS"
gc_ok apply -y "$work/c.yaml"
for s in driver cuda cudnn container smoke; do
	grep -q "workers/0 $ID_RE: $s ok" "$work/err" || fail "apply: step '$s' did not run"
done
gc_ok exec "$work/c.yaml" -- 'cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list'
for url in https://mirrors.aliyun.com/ubuntu https://mirrors.aliyun.com/nvidia-cuda/ubuntu2204 \
	https://mirrors.cloud.tencent.com/docker-ce/linux/ubuntu \
	https://mirrors.ustc.edu.cn/libnvidia-container/stable; do
	grep -qF "$url" "$work/out" || fail "the node's sources do not use $url: $(cat "$work/out")"
done
for host in archive.ubuntu.com developer.download.nvidia.com download.docker.com nvidia.github.io; do
	grep -v '^#' "$work/out" | grep -qF "$host" &&
		fail "the node's sources still use $host: $(cat "$work/out")"
done
gc_ok destroy -y "$work/c.yaml"

# 3. a mirror host that does not exist: the bootstrap fails naming the URL
mirror_spec "$work/c.yaml" '  mirrors:
    cuda: https://mirrors.aliyun.cm/nvidia-cuda'
gc apply -y "$work/c.yaml"
[ "$rc" != 0 ] || fail "a bootstrap from a mirror that does not exist succeeded"
grep -q "https://mirrors.aliyun.cm/nvidia-cuda/ubuntu2204/x86_64" "$work/err" ||
	fail "the unreachable mirror is not named: $(cat "$work/err")"
gc_ok destroy -y "$work/c.yaml"
note "ok"
