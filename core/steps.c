/*
 * steps.c: the bootstrap's step table and the smoke checks (see steps.h).
 *
 * To add a step: its script in templates/bootstrap/NAME.sh and one row here, in the
 * place where it runs. The inputs' value functions below read one spec field each.
 */
#include <string.h>

#include "core/alloc.h"
#include "core/buf.h"
#include "core/provider.h"
#include "core/steps.h"

static char *str_or_empty(const char *s)
{
	return gc_xstrdup(s ? s : "");
}

static char *in_driver(const struct gc_spec *spec)
{
	return str_or_empty(spec->bootstrap.driver);
}

static char *in_cuda(const struct gc_spec *spec)
{
	return str_or_empty(spec->bootstrap.cuda);
}

static char *in_cudnn(const struct gc_spec *spec)
{
	return str_or_empty(spec->bootstrap.cudnn);
}

static char *in_container(const struct gc_spec *spec)
{
	return gc_xstrdup(spec->bootstrap.container == GC_CONTAINER_DOCKER ? "docker" : "none");
}

static char *in_ssh_user(const struct gc_spec *spec)
{
	return str_or_empty(spec->ssh.user);
}

/* "apt=URL cuda=URL": bootstrap.mirrors, the ones set (lib.sh's mirror() reads it). */
static char *in_mirrors(const struct gc_spec *spec)
{
	struct gc_buf s = GC_BUF_INIT(0);

	for (size_t k = 0; k < GC_MIRROR_N; k++)
		if (spec->bootstrap.mirrors[k])
			gc_buf_addf(&s, "%s%s=%s", s.len ? " " : "", gc_mirror_names[k],
				    spec->bootstrap.mirrors[k]);
	return gc_buf_detach(&s, NULL);
}

/* "driver,cuda,container": the checks asked for, in the table's order. */
static char *in_smoke(const struct gc_spec *spec)
{
	struct gc_buf s = GC_BUF_INIT(0);

	for (size_t k = 0; k < GC_SMOKE_N_CHECKS; k++)
		if (spec->bootstrap.smoke & (1u << k))
			gc_buf_addf(&s, "%s%s", s.len ? "," : "", gc_smoke_names[k]);
	return gc_buf_detach(&s, NULL);
}

/* A cluster with a spot group gets the spot watcher (preempt.sh, docs/internals/spot.md). */
static bool want_preempt(const struct gc_spec *spec)
{
	for (size_t i = 0; i < spec->n_groups; i++)
		if (spec->groups[i].market != GC_MARKET_ON_DEMAND)
			return true;
	return false;
}

static char *in_on_preempt(const struct gc_spec *spec)
{
	return str_or_empty(spec->lifecycle.on_preempt);
}

static char *in_on_preempt_timeout(const struct gc_spec *spec)
{
	return gc_xasprintf("%llu", (unsigned long long)spec->lifecycle.on_preempt_timeout_s);
}

/* "FORMAT NOTICE-URL TOKEN-URL TOKEN-HEADER REBALANCE-URL" from the cloud's facts, "-" for
 * none. */
static char *in_notice(const struct gc_spec *spec)
{
	const struct gc_provider_facts *f = spec->provider.ops ? spec->provider.ops->facts : NULL;

	if (!f || !f->spot_notice_url)
		return gc_xstrdup("");
	return gc_xasprintf("%s %s %s %s %s", f->spot_notice_format, f->spot_notice_url,
			    f->spot_token_url ? f->spot_token_url : "-",
			    f->spot_token_header ? f->spot_token_header : "-",
			    f->spot_rebalance_url ? f->spot_rebalance_url : "-");
}

/* mounts.sh's inputs (docs/internals/mounts.md): the buckets, "BUCKET:PATH:MODE ...". */
static bool want_mounts(const struct gc_spec *spec)
{
	return spec->n_mounts > 0;
}

static char *in_mounts(const struct gc_spec *spec)
{
	struct gc_buf s = GC_BUF_INIT(0);

	for (size_t i = 0; i < spec->n_mounts; i++)
		gc_buf_addf(&s, "%s%s:%s:%s", s.len ? " " : "", spec->mounts[i].bucket,
			    spec->mounts[i].path, spec->mounts[i].rw ? "rw" : "ro");
	return gc_buf_detach(&s, NULL);
}

static const char *fact_or(const char *s, const char *none)
{
	return s ? s : none;
}

/* "TOOL PACKAGE REGION ROLE-URL TOKEN-URL TOKEN-HEADER" from the cloud's facts ("-": none). */
static char *in_mount_tool(const struct gc_spec *spec)
{
	const struct gc_provider_facts *f = spec->provider.ops ? spec->provider.ops->facts : NULL;

	if (!f || !f->mount_tool)
		return gc_xstrdup("");
	return gc_xasprintf("%s %s %s %s %s %s", f->mount_tool, f->mount_package,
			    spec->provider.region, f->role_creds_url,
			    fact_or(f->spot_token_url, "-"), fact_or(f->spot_token_header, "-"));
}

/* The command line, then the options of ro, then those of rw: three lines. */
static char *in_mount_command(const struct gc_spec *spec)
{
	const struct gc_provider_facts *f = spec->provider.ops ? spec->provider.ops->facts : NULL;

	if (!f || !f->mount_tool)
		return gc_xstrdup("");
	return gc_xasprintf("%s\n%s\n%s", f->mount_command, fact_or(f->mount_ro, ""),
			    fact_or(f->mount_rw, ""));
}

static char *in_mount_creds(const struct gc_spec *spec)
{
	const struct gc_provider_facts *f = spec->provider.ops ? spec->provider.ops->facts : NULL;

	return gc_xstrdup(f && f->mount_creds ? f->mount_creds : "");
}

/* bootstrap.monitoring: dcgm-exporter on the GPU nodes (monitoring.sh) */
static bool want_monitoring(const struct gc_spec *spec)
{
	return spec->bootstrap.monitoring != GC_MONITORING_NONE;
}

static char *in_monitoring(const struct gc_spec *spec)
{
	return gc_xstrdup(gc_monitoring_names[spec->bootstrap.monitoring]);
}

/* A cluster with lifecycle.idle gets the idle watcher (idle.sh, docs/internals/idle.md). */
static bool want_idle(const struct gc_spec *spec)
{
	return spec->lifecycle.idle_s > 0;
}

static char *in_idle(const struct gc_spec *spec)
{
	return gc_xasprintf("%llu", (unsigned long long)spec->lifecycle.idle_s);
}

/* The cloud's fabric software (provider facts, docs/internals/fabric.md), or NULL. */
static const struct gc_fabric_setup *fabric_setup(const struct gc_spec *spec)
{
	const struct gc_provider_facts *f = spec->provider.ops ? spec->provider.ops->facts : NULL;

	return f ? f->fabric_setup : NULL;
}

#define FABRIC_INPUT(field)                                            \
	static char *in_fabric_##field(const struct gc_spec *spec)     \
	{                                                              \
		const struct gc_fabric_setup *fs = fabric_setup(spec); \
                                                                       \
		return str_or_empty(fs ? fs->field : NULL);            \
	}
FABRIC_INPUT(what)
FABRIC_INPUT(url)
FABRIC_INPUT(install)
FABRIC_INPUT(packages)
FABRIC_INPUT(check)

/* clang-format off */
const struct gc_step_def gc_steps[] = {
	{ .name = "detect" },
	{ .name = "driver", .guard = GC_STEP_GUARD_GPU,
	  .inputs = { { "DRIVER", "bootstrap.driver", in_driver },
		      { "MIRRORS", "bootstrap.mirrors", in_mirrors, true } } },
	{ .name = "cuda", .guard = GC_STEP_GUARD_GPU,
	  .inputs = { { "CUDA", "bootstrap.cuda", in_cuda },
		      { "MIRRORS", "bootstrap.mirrors", in_mirrors, true } } },
	{ .name = "cudnn", .guard = GC_STEP_GUARD_GPU,
	  .inputs = { { "CUDNN", "bootstrap.cudnn", in_cudnn },
		      { "CUDA", "bootstrap.cuda", in_cuda },
		      { "MIRRORS", "bootstrap.mirrors", in_mirrors, true } } },
	{ .name = "container", .guard = GC_STEP_GUARD_GPU,
	  .inputs = { { "CONTAINER", "bootstrap.container", in_container },
		      { "DOCKER_USER", "ssh.user", in_ssh_user },
		      { "MIRRORS", "bootstrap.mirrors", in_mirrors, true } } },
	{ .name = "preempt", .wanted = want_preempt, .undo = true,
	  .inputs = { { "ON_PREEMPT", "lifecycle.on_preempt", in_on_preempt },
		      { "ON_PREEMPT_TIMEOUT", "lifecycle.on_preempt_timeout", in_on_preempt_timeout },
		      { "NOTICE", "provider.name", in_notice },
		      { "HOOK_USER", "ssh.user", in_ssh_user } } },
	{ .name = "idle", .wanted = want_idle, .undo = true,
	  .inputs = { { "IDLE_S", "lifecycle.idle", in_idle },
		      { "HOOK_USER", "ssh.user", in_ssh_user } } },
	{ .name = GC_STEP_SMOKE, .guard = GC_STEP_GUARD_SMOKE, .rerun = GC_STEP_RERUN_PER_BOOT,
	  .after_user_steps = true, .node_facts = true,
	  .inputs = { { "SMOKE", "bootstrap.smoke", in_smoke },
		      { "CUDA", "bootstrap.cuda", in_cuda },
		      { "MOUNTS", "mounts", in_mounts, true } } },
	{ .name = "mounts", .wanted = want_mounts, .rerun = GC_STEP_RERUN_PER_BOOT,
	  .inputs = { { "MOUNTS", "mounts", in_mounts },
		      { "MOUNT_TOOL", "provider.name", in_mount_tool },
		      { "MOUNT_COMMAND", "provider.name", in_mount_command },
		      { "MOUNT_CREDS", "provider.name", in_mount_creds } } },
	{ .name = "monitoring", .guard = GC_STEP_GUARD_GPU, .wanted = want_monitoring,
	  .node_facts = true, .undo = true,
	  .inputs = { { "MONITORING", "bootstrap.monitoring", in_monitoring } } },
	{ .name = "fabric", .node_fabric = true,
	  .inputs = { { "FABRIC_WHAT", "provider.name", in_fabric_what },
		      { "FABRIC_URL", "provider.name", in_fabric_url },
		      { "FABRIC_INSTALL", "provider.name", in_fabric_install },
		      { "FABRIC_PACKAGES", "provider.name", in_fabric_packages },
		      { "FABRIC_CHECK", "provider.name", in_fabric_check },
		      { "MIRRORS", "bootstrap.mirrors", in_mirrors, true } } },
};
/* clang-format on */
const size_t gc_n_steps = sizeof(gc_steps) / sizeof(gc_steps[0]);

const struct gc_step_def *gc_step_find(const char *name)
{
	for (size_t i = 0; i < gc_n_steps; i++)
		if (strcmp(gc_steps[i].name, name) == 0)
			return &gc_steps[i];
	return NULL;
}

/* In flag order: GC_SMOKE_DRIVER is 1u << 0. */
const char *const gc_smoke_names[GC_SMOKE_N_CHECKS] = { "driver", "cuda", "container", "nccl" };
