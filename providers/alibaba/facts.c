/*
 * facts.c: what core and cmd/ know about Alibaba Cloud (struct gc_provider_facts): the
 * shapes of its image ids, role and OIDC provider ARNs, its tag and key pair rules, its
 * OIDC audience and home region.
 */
#include <string.h>

#include "core/gpuspec.h"
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

/* RamRoleName: 1-64 of A-Z, a-z, 0-9, '.' and '-', as the role part of ali_role */
static bool ali_instance_role(const char *s, size_t len)
{
	return len >= 1 && len <= 64 && gc_shape_chars(s, len, true, ".-");
}

/* An OSS bucket's name: 3-63 of a-z, 0-9 and '-', a letter or digit at both ends
 * (https://www.alibabacloud.com/help/en/oss/user-guide/bucket-naming-conventions) */
static bool ali_bucket(const char *s, size_t len)
{
	return len >= 3 && len <= 63 && gc_shape_chars(s, len, false, "-") && s[0] != '-' &&
		s[len - 1] != '-';
}

/* acs:ram::ACCOUNT:oidc-provider/NAME */
static bool ali_oidc_provider(const char *s, size_t len)
{
	const char *name;
	size_t n;

	return gc_shape_arn(s, len, "acs:ram::", 1, 20, ":oidc-provider/", 128, &name, &n) &&
		gc_shape_chars(name, n, true, ".-");
}

/* vpc- and vsw- with 8-32 of a-z0-9 ("vpc-bp1opxu1zkhn00gzv26cp") */
static bool ali_net_id(const char *s, size_t len, const char *prefix)
{
	size_t n = strlen(prefix);

	return gc_starts_with(s, prefix) && len >= n + 8 && len <= n + 32 &&
		gc_shape_chars(s + n, len - n, false, "");
}

static bool ali_vpc_id(const char *s, size_t len)
{
	return ali_net_id(s, len, "vpc-");
}

static bool ali_vswitch_id(const char *s, size_t len)
{
	return ali_net_id(s, len, "vsw-");
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

extern const struct gc_gpu_offer ali_gpu_offers[]; /* gpus.c */

/* The eRDMA driver of "Enable eRDMA on a GPU-accelerated instance"
 * (https://www.alibabacloud.com/help/en/ecs/user-guide/on-the-gpu-instance-configuration-erdma):
 * the env_setup.sh script from the internal mirror with --egs (the GPU instances'
 * software stack), then ibv_devinfo shows erdma_0 with its port active. */
static const struct gc_fabric_setup ali_fabric_setup = {
	.what = "the eRDMA driver",
	.url = "http://mirrors.cloud.aliyuncs.com/erdma/env_setup.sh",
	.install = "bash env_setup.sh --egs",
	.check = "ibv_devinfo -d erdma_0 | grep -q PORT_ACTIVE",
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
	.vpc_id = ali_vpc_id,
	.vpc_id_hint = "vpc- and 8-32 of a-z and 0-9",
	.subnet_id = ali_vswitch_id,
	.subnet_id_hint = "vsw- and 8-32 of a-z and 0-9",
	.subnet_word = "vSwitch",
	.keypair = { .prefix = "gpucluster", .sep = '-' },
	/* ECS has a name field of its own, which the driver fills, and its 20 tags per
	 * resource are all needed elsewhere */
	.name_tag = false,
	.secret_names = ali_secret_names,
	.permission_codes = ali_permission_codes,
	.permission_prefix = "ecs:",
	/* "ECS OpenAPI eventual consistency": a new instance may be missing from
	 * DescribeInstances for a short time; a released one vanishes, so not long */
	.listing_lag_looks = 2,
	.create_answers_ids = true, /* RunInstances: InstanceIdSets */
	.gpu_offers = ali_gpu_offers,
	.rdma_word = "ERI",
	/* https://www.alibabacloud.com/help/en/ecs/user-guide/query-the-interruption-events-of-preemptible-instances */
	.spot_notice_url = "http://100.100.100.200/latest/meta-data/instance/spot/termination-time",
	.spot_notice_format = "utc-iso8601",
	.instance_role = ali_instance_role,
	.instance_role_hint = "a RAM role's name: 1-64 of A-Z, a-z, 0-9, '.' and '-'",
	.bucket = ali_bucket,
	.bucket_hint = "an OSS bucket's name: 3-63 of a-z, 0-9 and '-', starting and ending "
		       "with a letter or digit",
	/* ossfs 1.0 with the instance's RAM role (-oram_role, the URL of its credentials):
	 * https://www.alibabacloud.com/help/en/oss/developer-reference/advanced-configurations,
	 * the packages of https://www.alibabacloud.com/help/en/oss/developer-reference/install-ossfs */
	.mount_tool = "ossfs",
	.mount_package =
		"https://gosspublic.alicdn.com/ossfs/ossfs_1.91.5_ubuntu{os_version}_amd64.deb",
	.mount_command =
		"ossfs {bucket} {path} -ourl=https://oss-{region}-internal.aliyuncs.com "
		"-oram_role=http://100.100.100.200/latest/meta-data/ram/security-credentials/"
		"{role} -oallow_other {mode}",
	.mount_ro = "-oro",
	.mount_rw = "",
	.role_creds_url = "http://100.100.100.200/latest/meta-data/ram/security-credentials/",
	.fabric_setup = &ali_fabric_setup,
	.reserved_prepaid = true,
};
