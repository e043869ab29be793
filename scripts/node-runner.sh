#!/usr/bin/env bash
# node-runner.sh register|remove SPEC [NODE]: NODE (default workers/0: GROUP/N; "all": every
# node, runners gpucluster-RUN_ID-0, -1, ... in exec's order) of the cluster as an ephemeral self-hosted
# GitHub Actions runner for this workflow run (docs/ci.md, "The node as a runner").
#
# register: asks GitHub for a registration token (POST /repos/OWNER/REPO/actions/runners/
#   registration-token, a token that expires after an hour), then, through `gpucluster
#   exec` on node 0, downloads the runner ($GPUCLUSTER_RUNNER_URL), configures it
#   --ephemeral with the labels self-hosted and gpucluster-RUN_ID (unique to the run) and
#   starts run.sh as a transient systemd unit (systemd-run), which outlives the session. The training job says
#   `runs-on: [self-hosted, gpucluster-${{ github.run_id }}]`.
# remove: deletes every runner of the repository that carries the run's label (GET
#   /repos/OWNER/REPO/actions/runners, DELETE .../runners/ID); an ephemeral runner has
#   usually removed itself after its one job. Never fails the teardown for a runner that
#   is already gone.
#
# Needs GITHUB_REPOSITORY, GITHUB_RUN_ID and GPUCLUSTER_GITHUB_TOKEN: a token with the
# repository's Administration write permission (a fine-grained personal access token or
# a GitHub App's installation token; the workflow's GITHUB_TOKEN cannot have that
# permission). GITHUB_API_URL and GITHUB_SERVER_URL are the runner's (GitHub Enterprise
# and the emulator set their own).
set -euo pipefail
mode=${1:?usage: node-runner.sh register|remove SPEC}
spec=${2:?usage: node-runner.sh register|remove SPEC}
node=${3:-workers/0}
api=${GITHUB_API_URL:-https://api.github.com}
server=${GITHUB_SERVER_URL:-https://github.com}
repo=${GITHUB_REPOSITORY:?GITHUB_REPOSITORY is not set}
run=${GITHUB_RUN_ID:?GITHUB_RUN_ID is not set}
label=gpucluster-$run
version=2.321.0
url=${GPUCLUSTER_RUNNER_URL:-https://github.com/actions/runner/releases/download/v$version/actions-runner-linux-x64-$version.tar.gz}
if [ -z "${GPUCLUSTER_GITHUB_TOKEN:-}" ]; then
	echo "::error::node-runner: GPUCLUSTER_GITHUB_TOKEN is not set: it needs a token with the repository's Administration write permission (docs/ci.md, \"The node as a runner\")" >&2
	exit 64
fi

github() { # METHOD PATH: the REST call, its JSON on standard output (GitHub's error too)
	curl -sS --fail-with-body -X "$1" -H "Authorization: Bearer $GPUCLUSTER_GITHUB_TOKEN" \
		-H 'Accept: application/vnd.github+json' -H 'X-GitHub-Api-Version: 2022-11-28' \
		"$api$2"
}

case $mode in
register)
	if ! answer=$(github POST "/repos/$repo/actions/runners/registration-token"); then
		msg=$(jq -r '.message // empty' <<<"$answer" 2>/dev/null) || msg=""
		echo "::error::node-runner: GitHub refused the registration-token request${msg:+ ($msg)}: GPUCLUSTER_GITHUB_TOKEN must be a valid token with the repository's Administration write permission (docs/ci.md, \"The node as a runner\")" >&2
		exit 1
	fi
	token=$(jq -r .token <<<"$answer")
	if [ -z "$token" ] || [ "$token" = null ]; then
		echo "::error::node-runner: GitHub gave no registration token" >&2
		exit 1
	fi
	echo "::add-mask::$token"
	# register_node NODE NAME: NODE as the runner NAME (config.sh, then run.sh)
	register_node() {
		local script
		# printf %q: each value reaches the node's bash as one word, whatever it holds
		script=$(printf 'set -e; mkdir -p ~/actions-runner; cd ~/actions-runner; '
			printf '[ -x ./config.sh ] || curl -fsSL %q | tar xz; ' "$url"
			printf './config.sh --unattended --ephemeral --replace --url %q --token %q ' \
				"$server/$repo" "$token"
			printf -- '--name %q --labels %q; ' "$2" "$label"
			# a transient unit outlives the SSH session (a session's background job may
			# not); $(id -u), $HOME and $PWD are the node's
			# shellcheck disable=SC2016
			printf 'sudo systemd-run --quiet --unit %q --uid "$(id -u)" --gid "$(id -g)" ' \
				"actions-runner-$2"
			# shellcheck disable=SC2016
			printf -- '--setenv HOME="$HOME" -- "$PWD/run.sh"; echo "runner %s started"' "$2")
		gpucluster exec --node "$1" "$spec" -- "$script"
	}
	if [ "$node" != all ]; then
		register_node "$node" "$label-0"
		exit
	fi
	# every node: runner LABEL-I for the I-th node in exec's order (hosts)
	nodes=$(gpucluster hosts --format json "$spec" | jq -r '.nodes[].label') || {
		echo "::error::node-runner: cannot list the cluster's nodes" >&2
		exit 1
	}
	i=0 rc=0
	for n in $nodes; do
		register_node "$n" "$label-$i" || rc=1
		i=$((i + 1))
	done
	exit $rc
	;;
remove)
	ids=$(github GET "/repos/$repo/actions/runners?per_page=100" |
		jq -r --arg l "$label" '.runners[] | select(any(.labels[]; .name == $l)) | .id') || {
		echo "::warning::node-runner: cannot list the repository's runners" >&2
		exit 0
	}
	for id in $ids; do
		github DELETE "/repos/$repo/actions/runners/$id" >/dev/null ||
			echo "::warning::node-runner: cannot remove runner $id" >&2
		echo "removed runner $id ($label)"
	done
	;;
*)
	echo "usage: node-runner.sh register|remove SPEC [NODE]" >&2
	exit 64
	;;
esac
