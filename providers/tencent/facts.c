/*
 * facts.c: what core and cmd/ know about Tencent Cloud (struct gc_provider_facts): the
 * shapes of its image ids, role names and OIDC provider ids, its tag and key pair rules,
 * its OIDC audience and home region.
 */
#include <string.h>

#include "core/gpuspec.h"
#include "core/shape.h"
#include "core/str.h"
#include "providers/tencent/tencent.h"

/* img- and 8 of a-z0-9 */
static bool tc_image_id(const char *s, size_t len)
{
	return gc_starts_with(s, "img-") && len == 4 + 8 && gc_shape_chars(s + 4, 8, false, "");
}

static bool tc_image_id_like(const char *s, size_t len)
{
	(void)len;
	return gc_starts_with(s, "img-");
}

/* qcs::cam::uin/ACCOUNT:roleName/NAME, or :role/ROLE-ID */
static bool tc_role(const char *s, size_t len)
{
	const char *name;
	size_t n;

	if (gc_shape_arn(s, len, "qcs::cam::uin/", 1, 20, ":roleName/", 128, &name, &n))
		return gc_shape_chars(name, n, true, "_+=,.@-");
	return gc_shape_arn(s, len, "qcs::cam::uin/", 1, 20, ":role/", 32, &name, &n) &&
		gc_shape_digits(name, n) == n;
}

/* CamRoleName: 1-128 of A-Z, a-z, 0-9 and _+=,.@-, as the roleName part of tc_role */
static bool tc_instance_role(const char *s, size_t len)
{
	return len >= 1 && len <= 128 && gc_shape_chars(s, len, true, "_+=,.@-");
}

/* A COS bucket's name, NAME-APPID: NAME of a-z, 0-9 and '-', not starting or ending with
 * '-', APPID the account's digits (https://www.tencentcloud.com/document/product/436/13312).
 * COS also caps BUCKET.cos.REGION.myqcloud.com at 60 characters: left to COS. */
static bool tc_bucket(const char *s, size_t len)
{
	size_t dash = len, digits;

	while (dash > 0 && s[dash - 1] != '-')
		dash--;
	if (dash < 2 || len > 60)
		return false;
	digits = len - dash;
	return digits >= 1 && gc_shape_digits(s + dash, digits) == digits &&
		gc_shape_chars(s, dash - 1, false, "-") && s[0] != '-' && s[dash - 2] != '-';
}

/* A ProviderId: the CAM identity provider's name. */
static bool tc_oidc_provider(const char *s, size_t len)
{
	return len >= 1 && len <= 128 && gc_shape_chars(s, len, true, "_.-");
}

/* vpc- and subnet- with 8 of a-z0-9 ("vpc-2at5y1pn") */
static bool tc_net_id(const char *s, size_t len, const char *prefix)
{
	size_t n = strlen(prefix);

	return gc_starts_with(s, prefix) && len == n + 8 && gc_shape_chars(s + n, 8, false, "");
}

static bool tc_vpc_id(const char *s, size_t len)
{
	return tc_net_id(s, len, "vpc-");
}

static bool tc_subnet_id(const char *s, size_t len)
{
	return tc_net_id(s, len, "subnet-");
}

static const char *const tc_name_aliases[] = { "qcloud", "tencentcloud", "cvm", NULL };
static const char *const tc_reserved_tags[] = { "qcloud", "tencent", NULL };
/* the driver's table (cvm-ops.c) resolves each */
static const char *const tc_image_aliases[] = { "ubuntu-22.04", "ubuntu-24.04", "gpu-ready", NULL };

static const char *const tc_secret_names[] = { "X-TC-Token", "WebIdentityToken", NULL };
static const char *const tc_permission_codes[] = { "UnauthorizedOperation",
						   "AuthFailure.UnauthorizedOperation", NULL };

extern const struct gc_gpu_offer tc_gpu_offers[]; /* gpus.c */

/* The RDMA network of an HCC instance: Tencent's public images configure it with the
 * rdma-agent service (https://www.tencentcloud.com/document/product/1236/77056); on any
 * image the verbs stack comes from the distribution (rdma-core, ibverbs-utils), and
 * ibv_devinfo shows the bonded mlx5 devices with their ports active. */
static const struct gc_fabric_setup tc_fabric_setup = {
	.what = "the RDMA stack",
	.packages = "rdma-core ibverbs-utils",
	.check = "ibv_devinfo | grep -q PORT_ACTIVE",
};

const struct gc_provider_facts tc_facts = {
	.title = "Tencent Cloud CVM",
	.env_vars = "TENCENTCLOUD_*",
	.home_region = "ap-guangzhou",
	.oidc_audience = "sts.cloud.tencent.com",
	.name_aliases = tc_name_aliases,
	.reserved_tag_prefixes = tc_reserved_tags,
	.image_aliases = tc_image_aliases,
	.image_id = tc_image_id,
	.image_id_like = tc_image_id_like,
	.image_id_hint = "img-...",
	.role = tc_role,
	.role_hint = "qcs::cam::uin/ACCOUNT:roleName/NAME",
	.oidc_provider = tc_oidc_provider,
	.oidc_provider_hint = "a ProviderId of 1-128 characters of A-Z, a-z, 0-9, '_', '.' and '-'",
	/* key names take only letters, digits and '_', 25 characters at most:
	 * "gc_" + 13 + "_" + 8 */
	.vpc_id = tc_vpc_id,
	.vpc_id_hint = "vpc- and 8 of a-z and 0-9",
	.subnet_id = tc_subnet_id,
	.subnet_id_hint = "subnet- and 8 of a-z and 0-9",
	.subnet_word = "subnet",
	.keypair = { .prefix = "gc", .sep = '_', .cluster_max = 13 },
	/* CVM has an instance name field of its own, which the driver fills */
	.name_tag = false,
	.secret_names = tc_secret_names,
	.permission_codes = tc_permission_codes,
	.permission_prefix = "cvm:",
	.create_answers_ids = true, /* RunInstances: InstanceIdSet */
	.gpu_offers = tc_gpu_offers,
	.rdma_word = "RDMA",
	/* an HCC type needs its HPC cluster (InstanceTypeRequiredHpcCluster) */
	.rdma_placement = "an HPC cluster",
	/* https://www.tencentcloud.com/document/product/213/32487 (UTC+8) */
	.spot_notice_url = "http://metadata.tencentyun.com/latest/meta-data/spot/termination-time",
	.spot_notice_format = "utc8-datetime",
	.instance_role = tc_instance_role,
	.instance_role_hint = "a CAM role's name: 1-128 of A-Z, a-z, 0-9 and _+=,.@-",
	.bucket = tc_bucket,
	.bucket_hint = "a COS bucket's name: NAME-APPID, NAME of a-z, 0-9 and '-' (not at its "
		       "ends), APPID your account's digits",
	/* cosfs with a temporary key file (-ocam_role=sts -opasswd_file, reloaded by
	 * COSAccessTokenExpire: https://www.tencentcloud.com/document/product/436/30587), the
	 * key from the CAM role on the metadata service, the packages of
	 * https://github.com/tencentyun/cosfs/releases */
	.mount_tool = "cosfs",
	.mount_package = "https://github.com/tencentyun/cosfs/releases/download/v1.0.24/"
			 "cosfs_1.0.24-ubuntu{os_version}_amd64.deb",
	.mount_command = "cosfs {bucket} {path} -ourl=https://cos.{region}.myqcloud.com "
			 "-ocam_role=sts -opasswd_file={creds} -oallow_other {mode}",
	.mount_ro = "-oro",
	.mount_rw = "",
	.role_creds_url =
		"http://metadata.tencentyun.com/latest/meta-data/cam/security-credentials/",
	.mount_creds = "COSAccessKeyId={TmpSecretId}\nCOSSecretKey={TmpSecretKey}\n"
		       "COSAccessToken={Token}\nCOSAccessTokenExpire={Expiration@gmt}\n",
	.fabric_setup = &tc_fabric_setup,
	.reserved_prepaid = true,
};
