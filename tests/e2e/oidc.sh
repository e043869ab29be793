#!/usr/bin/env bash
# oidc.sh: GitHub Actions OIDC instead of keys, against the emulator's token issuer and
# the cloud's STS.
#
# As a workflow job with `permissions: id-token: write` runs it: GITHUB_ACTIONS=true,
# ACTIONS_ID_TOKEN_REQUEST_URL and _TOKEN pointing at the emulator's issuer (from its
# ready file), no key of the cloud's anywhere in the environment. With the role in the
# spec's provider.oidc, plan, apply and destroy work, every cloud call is made with the
# temporary keys STS gave for the token (the request log shows the exchange, the token
# itself redacted, and gpucluster masks the token in the job log); the vendor's own
# variables (AWS_ROLE_ARN, ALIBABA_CLOUD_ROLE_ARN + _OIDC_PROVIDER_ARN, TKE_ROLE_ARN +
# TKE_PROVIDER_ID) do the same without the spec's block. A wrong audience fails with the
# cloud's own code, and a job without the permission fails saying which permission.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

sim_start --seed 7
TOKEN_URL=$(jq -r .oidc.token_url "$work/ready.json")
REQUEST_TOKEN=$(jq -r .oidc.request_token "$work/ready.json")
if [ -z "$TOKEN_URL" ] || [ "$TOKEN_URL" = null ]; then
	fail "the ready file has no oidc.token_url"
fi

# The cloud's role, identity provider, STS action, the variables its SDKs read, and the
# code its STS answers a token for another audience with.
case $CLOUD in
aws)
	ROLE=arn:aws:iam::111122223333:role/gpucluster-ci
	PROVIDER=
	EXCHANGE=AssumeRoleWithWebIdentity
	TOKEN_PARAM=WebIdentityToken
	VENDOR_VARS=(AWS_ROLE_ARN="$ROLE")
	AUDIENCE_CODE=InvalidIdentityToken
	;;
alibaba)
	ROLE=acs:ram::5123456789012345:role/gpucluster-ci
	PROVIDER=acs:ram::5123456789012345:oidc-provider/gpucluster-sim
	EXCHANGE=AssumeRoleWithOIDC
	TOKEN_PARAM=OIDCToken
	VENDOR_VARS=(ALIBABA_CLOUD_ROLE_ARN="$ROLE" ALIBABA_CLOUD_OIDC_PROVIDER_ARN="$PROVIDER")
	AUDIENCE_CODE=AuthenticationFail.OIDCToken.AudienceNotMatch
	;;
tencent)
	ROLE=qcs::cam::uin/100000000001:roleName/gpucluster-ci
	PROVIDER=gpucluster-sim
	EXCHANGE=AssumeRoleWithWebIdentity
	TOKEN_PARAM=WebIdentityToken
	VENDOR_VARS=(TKE_ROLE_ARN="$ROLE" TKE_PROVIDER_ID="$PROVIDER" TKE_REGION="$REGION")
	AUDIENCE_CODE=InvalidParameter.WebIdentityTokenError
	;;
esac

# oidc_spec FILE NAME [OIDC_EXTRA_LINE]: the harness's spec with provider.oidc added
# (with NOBLOCK=1 in its environment, the spec gets no block at all).
oidc_spec() {
	local file=$1 name=$2 line=${3:-}
	spec "$file.tmp" "$name" workers 2
	{
		sed -n '1,/^  endpoint: /p' "$file.tmp"
		if [ "${NOBLOCK:-0}" != 1 ]; then
			printf '  oidc:\n    role: %s\n' "$ROLE"
			[ -z "$PROVIDER" ] || printf '    provider: %s\n' "$PROVIDER"
			[ -z "$line" ] || printf '    %s\n' "$line"
		fi
		sed '1,/^  endpoint: /d' "$file.tmp"
	} >"$file"
	rm -f "$file.tmp"
}

# ogc [-u VAR]... [VAR=value]... -- ARGS...: gpucluster as a GitHub Actions job with an
# id-token permission and no key of the cloud's (-u takes a variable away, VAR=value adds
# one); stdout in $work/out, stderr in $work/err, $rc.
ogc() {
	local unset=(-u GITHUB_OUTPUT -u GITHUB_STEP_SUMMARY -u GITHUB_REPOSITORY) vars=()
	while [ "$1" != -- ]; do
		if [ "$1" = -u ]; then
			unset+=(-u "$2")
			shift 2
		else
			vars+=("$1")
			shift
		fi
	done
	shift
	vars=(GITHUB_ACTIONS=true GITHUB_RUN_ID=4242 GITHUB_RUN_ATTEMPT=2
		ACTIONS_ID_TOKEN_REQUEST_URL="$TOKEN_URL"
		ACTIONS_ID_TOKEN_REQUEST_TOKEN="$REQUEST_TOKEN" "${vars[@]}")
	for v in "${unset[@]}"; do
		[ "$v" = -u ] && continue
		local keep=()
		for a in "${vars[@]}"; do
			[ "${a%%=*}" = "$v" ] || keep+=("$a")
		done
		vars=("${keep[@]}")
	done
	set +e
	no_creds_env env "${unset[@]}" "${vars[@]}" "$GC_BIN" --no-color "$@" \
		>"$work/out" 2>"$work/err" </dev/null
	rc=$?
	set -e
}

# exchanges: how many token exchanges succeeded, as the request log has them (Tencent
# answers its errors with HTTP 200 too: an error code says it failed).
exchanges() {
	jq -s --arg a "$EXCHANGE" '[.[] | select(.action == $a and .status == 200
		and .error_code == null)] | length' "$work/requests.log"
}

# --- the spec's provider.oidc ------------------------------------------------------------
oidc_spec "$work/c.yaml" e2e-oidc
ogc -- plan "$work/c.yaml"
[ "$rc" = 0 ] || fail "plan with the spec's OIDC role exited $rc"
grep -q '2 to create' "$work/out" || fail "plan does not say '2 to create'"
[ "$(exchanges)" -ge 1 ] || fail "the request log shows no $EXCHANGE"
# the token is a secret: masked in the job log, redacted in the emulator's
grep -q '^::add-mask::' "$work/err" || fail "gpucluster masked nothing in the job log"
jq -s -e --arg a "$EXCHANGE" --arg p "$TOKEN_PARAM" '[.[] | select(.action == $a)]
	| all(.params[$p] | startswith("<redacted: "))' "$work/requests.log" >/dev/null ||
	fail "the request log holds an OIDC token"
# the session is named after the run, as the cloud's audit log shows it
jq -s -e --arg a "$EXCHANGE" '[.[] | select(.action == $a)][0].params.RoleSessionName
	== "gpucluster-4242-2"' "$work/requests.log" >/dev/null ||
	fail "the role session is not named after the run"

before=$(exchanges)
ogc -- apply --auto-approve --no-bootstrap "$work/c.yaml"
[ "$rc" = 0 ] || fail "apply with the spec's OIDC role exited $rc"
expect_alive e2e-oidc 2 "after apply"
[ "$(exchanges)" -gt "$before" ] || fail "apply made no $EXCHANGE of its own"

ogc -- destroy --auto-approve "$work/c.yaml"
[ "$rc" = 0 ] || fail "destroy with the spec's OIDC role exited $rc"
expect_alive e2e-oidc 0 "after destroy"
[ "$(owned_resources e2e-oidc)" = 0 ] || fail "destroy left resources of e2e-oidc"
note "plan, apply and destroy with the spec's OIDC role"

# --- the vendor's own variables, no block in the spec -------------------------------------
NOBLOCK=1 oidc_spec "$work/v.yaml" e2e-oidc-env
before=$(exchanges)
ogc "${VENDOR_VARS[@]}" -- plan "$work/v.yaml"
[ "$rc" = 0 ] || fail "plan with ${VENDOR_VARS[0]%%=*} exited $rc"
[ "$(exchanges)" -gt "$before" ] || fail "${VENDOR_VARS[0]%%=*}: no $EXCHANGE"
note "plan with ${VENDOR_VARS[*]%%=*}"

# everything so far was what the real APIs take (what follows is refused on purpose:
# Tencent's code for a bad token starts like a malformed request's)
requests_valid

# --- what fails, and says why ------------------------------------------------------------
# a token for another audience: the cloud's STS refuses it with its own code
oidc_spec "$work/aud.yaml" e2e-oidc-aud "audience: not-the-sts.example.com"
before=$(exchanges)
ogc -- plan "$work/aud.yaml"
[ "$rc" = 1 ] || fail "plan with a wrong audience exited $rc, want 1"
grep -q "$AUDIENCE_CODE" "$work/err" || fail "no $AUDIENCE_CODE for a wrong audience"
grep -q "GitHub Actions OIDC token" "$work/err" || fail "the error does not say what was tried"
[ "$(exchanges)" = "$before" ] || fail "STS took a token for the wrong audience"

# a job without `permissions: id-token: write` has no token URL
ogc -u ACTIONS_ID_TOKEN_REQUEST_URL -u ACTIONS_ID_TOKEN_REQUEST_TOKEN -- plan "$work/c.yaml"
[ "$rc" = 1 ] || fail "plan without a token URL exited $rc, want 1"
# shellcheck disable=SC2016 # the backquotes are the message's own
grep -qF 'no ACTIONS_ID_TOKEN_REQUEST_URL: the workflow needs `permissions: id-token: write`' \
	"$work/err" || fail "the error does not name the missing permission"

# outside GitHub Actions the block is skipped: the usual chain (here, the keys) applies
before=$(exchanges)
set +e
cloud_env env -u GITHUB_ACTIONS -u ACTIONS_ID_TOKEN_REQUEST_URL "$GC_BIN" --no-color plan \
	"$work/c.yaml" >"$work/out" 2>"$work/err" </dev/null
rc=$?
set -e
[ "$rc" = 0 ] || fail "plan with keys outside GitHub Actions exited $rc"
[ "$(exchanges)" = "$before" ] || fail "the OIDC role was used outside GitHub Actions"

note "ok"
