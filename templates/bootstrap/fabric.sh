#!/usr/bin/env bash
# fabric.sh: installs what the node's RDMA network needs (docs/internals/fabric.md): the
# cloud's driver, libraries and NCCL network plugin, as its facts say (providers/*/facts.c,
# fabric_setup). Runs the cloud's check first: a node where it
# passes is left alone (idempotent); else installs the packages, downloads and runs the
# installer, and runs the check again, which must pass. A node of a group on the standard
# network skips the step.
#
# Environment:
#   FABRIC=rdma|standard  the node's group's interconnect (auto resolved by gpucluster)
#   FABRIC_WHAT=TEXT      what is installed, for messages
#   FABRIC_URL=URL        the installer to download ("": none); a .tar.gz is unpacked
#   FABRIC_INSTALL=CMD    run as root by bash in the download's directory ("": none)
#   FABRIC_PACKAGES=NAMES the distribution's packages to install first ("": none)
#   FABRIC_CHECK=CMD      run by bash; exits 0 once the node's RDMA devices work
#
# Exit status: 0 done or skipped; 1 failure, with the reason on stderr.
set -euo pipefail
GC_STEP=fabric
if [ -z "${GC_LIB_LOADED:-}" ]; then
	# shellcheck source=lib.sh
	. "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
fi

FABRIC=${FABRIC:-standard}
FABRIC_WHAT=${FABRIC_WHAT:-the RDMA software}
case "$FABRIC" in rdma | standard) ;; *) die "FABRIC='$FABRIC': expected rdma or standard" ;; esac
if [ "$FABRIC" = standard ]; then
	info "skipped: the group's interconnect is standard (no RDMA network)"
	exit 0
fi
if [ -z "${FABRIC_CHECK:-}" ]; then
	info "skipped: the cloud's RDMA network needs nothing installed"
	exit 0
fi

fabric_check() { gc_capture bash -c "$FABRIC_CHECK"; }

if fabric_check; then
	info "$FABRIC_WHAT: installed and working"
	exit 0
fi
need_root
if [ -n "${FABRIC_PACKAGES:-}" ]; then
	os_detect
	os_require_supported
	pkgs=()
	for p in $FABRIC_PACKAGES; do
		# the facts name Debian's packages; Fedora's family calls this one so
		[ "$PKG:$p" != dnf:ibverbs-utils ] || p=libibverbs-utils
		pkgs+=("$p")
	done
	pkg_install "${pkgs[@]}" || die "cannot install ${pkgs[*]}"
fi
dir=$(mktemp -d "${TMPDIR:-/tmp}/gc-fabric.XXXXXX")
# the installer runs as root and may leave root's files in it
trap 'as_root rm -rf "$dir" 2>/dev/null || rm -rf "$dir"' EXIT
if [ -n "${FABRIC_URL:-}" ]; then
	file=$dir/$(basename "${FABRIC_URL%%\?*}")
	info "downloading $FABRIC_URL"
	fetch "$FABRIC_URL" "$file" || die "cannot download $FABRIC_WHAT from $FABRIC_URL"
	case "$file" in
	*.tar.gz | *.tgz)
		gc_run tar -xzf "$file" -C "$dir" || die "cannot unpack $file"
		;;
	esac
fi
if [ -n "${FABRIC_INSTALL:-}" ]; then
	info "installing $FABRIC_WHAT"
	# shellcheck disable=SC2016 # expanded by the inner bash
	gc_run as_root bash -c 'cd "$1" && eval "$2"' fabric "$dir" "$FABRIC_INSTALL" ||
		die "installing $FABRIC_WHAT failed ($FABRIC_INSTALL)"
fi
if ! fabric_check; then
	gc_show_failure "the check '$FABRIC_CHECK'"
	die "$FABRIC_WHAT is installed, but the node has no working RDMA device (the check fails): was it launched with its RDMA interfaces?"
fi
info "$FABRIC_WHAT: installed; the check passes"
