/*
 * facts.c: what core and cmd/ know about Alibaba Cloud (struct gc_provider_facts): the
 * shapes of its image ids, role and OIDC provider ARNs, its tag and key pair rules, its
 * OIDC audience and home region.
 */
#include <string.h>

#include "core/shape.h"
#include "core/str.h"
#include "providers/alibaba/alibaba.h"

#define ALI_IMAGE_NAME_MAX 128

/* m- and 10-30 of a-z0-9, or a public image by name:
 * ubuntu_22_04_x64_20G_alibase_20240101.vhd */
static bool ali_image_id(const char *s, size_t len)
{
	if (gc_starts_with(s, "m-") && len >= 2 + 10 && len <= 2 + 30 &&
	    gc_shape_chars(s + 2, len - 2, false, ""))
		return true;
	return len > 4 && len <= ALI_IMAGE_NAME_MAX && gc_ends_with(s, ".vhd") &&
		gc_shape_chars(s, len, true, "._-");
}

static bool ali_image_id_like(const char *s, size_t len)
{
	(void)len;
	return gc_starts_with(s, "m-") || gc_ends_with(s, ".vhd");
}

/* acs:ram::ACCOUNT:role/NAME */
static bool ali_role(const char *s, size_t len)
{
	const char *name;
	size_t n;

	return gc_shape_arn(s, len, "acs:ram::", 1, 20, ":role/", 64, &name, &n) &&
		gc_shape_chars(name, n, true, ".-");
}

/* acs:ram::ACCOUNT:oidc-provider/NAME */
static bool ali_oidc_provider(const char *s, size_t len)
{
	const char *name;
	size_t n;

	return gc_shape_arn(s, len, "acs:ram::", 1, 20, ":oidc-provider/", 128, &name, &n) &&
		gc_shape_chars(name, n, true, ".-");
}

static const char *const ali_name_aliases[] = { "aliyun", "alicloud", "ecs", NULL };
static const char *const ali_reserved_tags[] = { "acs:", "aliyun", NULL };
/* the driver's table (ecs-ops.c) resolves each */
static const char *const ali_image_aliases[] = { "ubuntu-22.04", "ubuntu-24.04", "gpu-ready",
						 NULL };

static const char *const ali_permission_codes[] = { "Forbidden.RAM", "Forbidden.Unauthorized",
						    "NoPermission", NULL };
static const char *const ali_secret_names[] = {
	"x-acs-security-token", "AccessKeySecret", "access_key_secret", "OIDCToken", NULL,
};

const struct gc_provider_facts ali_facts = {
	.title = "Alibaba Cloud ECS",
	.env_vars = "ALIBABA_CLOUD_*",
	.home_region = "cn-hangzhou",
	.oidc_audience = "sts.aliyuncs.com",
	.name_aliases = ali_name_aliases,
	.reserved_tag_prefixes = ali_reserved_tags,
	.image_aliases = ali_image_aliases,
	.image_id = ali_image_id,
	.image_id_like = ali_image_id_like,
	.image_id_hint = "m-... or an image name ending in .vhd",
	.role = ali_role,
	.role_hint = "acs:ram::ACCOUNT:role/NAME",
	.oidc_provider = ali_oidc_provider,
	.oidc_provider_hint = "acs:ram::ACCOUNT:oidc-provider/NAME",
	.keypair = { .prefix = "gpucluster", .sep = '-' },
	/* ECS has a name field of its own, which the driver fills, and its 20 tags per
	 * resource are all needed elsewhere */
	.name_tag = false,
	.secret_names = ali_secret_names,
	.permission_codes = ali_permission_codes,
	.permission_prefix = "ecs:",
	.create_answers_ids = true, /* RunInstances: InstanceIdSets */
};
