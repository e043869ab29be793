/*
 * facts.c: what core and cmd/ know about AWS (struct gc_provider_facts): the shapes of
 * its ids and role ARNs, its tag and key pair rules, its OIDC audience and home region.
 */
#include <string.h>

#include "core/gpuspec.h"
#include "core/shape.h"
#include "core/str.h"
#include "providers/aws/aws.h"

/* ami- and 8 or 17 lowercase hex digits */
static bool aws_image_id(const char *s, size_t len)
{
	return gc_starts_with(s, "ami-") && (len == 4 + 8 || len == 4 + 17) &&
		gc_shape_hex(s + 4, len - 4);
}

static bool aws_image_id_like(const char *s, size_t len)
{
	(void)len;
	return gc_starts_with(s, "ami-");
}

/* arn:PARTITION:iam::ACCOUNT:role/[PATH/]NAME */
static bool aws_role(const char *s, size_t len)
{
	static const char *const partitions[] = { "arn:aws:iam::", "arn:aws-cn:iam::",
						  "arn:aws-us-gov:iam::" };
	const char *name;
	size_t n;

	for (size_t i = 0; i < sizeof(partitions) / sizeof(partitions[0]); i++)
		if (len <= 2048 &&
		    gc_shape_arn(s, len, partitions[i], 12, 12, ":role/", 512, &name, &n))
			return gc_shape_chars(name, n, true, "_+=,.@/-") && name[n - 1] != '/';
	return false;
}

/* vpc- and subnet- with 8 or 17 lowercase hex digits, as ami- */
static bool aws_hex_id(const char *s, size_t len, const char *prefix)
{
	size_t n = strlen(prefix);

	return gc_starts_with(s, prefix) && (len == n + 8 || len == n + 17) &&
		gc_shape_hex(s + n, len - n);
}

static bool aws_vpc_id(const char *s, size_t len)
{
	return aws_hex_id(s, len, "vpc-");
}

static bool aws_subnet_id(const char *s, size_t len)
{
	return aws_hex_id(s, len, "subnet-");
}

/* An instance profile's name: 1-128 of A-Z, a-z, 0-9 and _+=,.@- (IAM's
 * InstanceProfileName pattern [\w+=,.@-]+, docs/internals/mounts.md) */
static bool aws_instance_role(const char *s, size_t len)
{
	return len >= 1 && len <= 128 && gc_shape_chars(s, len, true, "_+=,.@-");
}

/* An S3 general purpose bucket's name: 3-63 of a-z, 0-9, '.' and '-', a letter or digit at
 * both ends, no "..", not an IPv4 address, none of S3's reserved prefixes and suffixes
 * (https://docs.aws.amazon.com/AmazonS3/latest/userguide/bucketnamingrules.html) */
static bool aws_bucket(const char *s, size_t len)
{
	static const char *const prefixes[] = { "xn--", "sthree-", "amzn-s3-demo-" };
	static const char *const suffixes[] = { "-s3alias", "--ol-s3", ".mrap", "--x-s3" };
	bool ip = true;
	unsigned dots = 0;

	if (len < 3 || len > 63 || !gc_shape_chars(s, len, false, ".-") || s[0] == '.' ||
	    s[0] == '-' || s[len - 1] == '.' || s[len - 1] == '-')
		return false;
	for (size_t i = 0; i < len; i++) {
		if (i && s[i] == '.' && s[i - 1] == '.')
			return false;
		dots += s[i] == '.';
		ip = ip && (s[i] == '.' || (s[i] >= '0' && s[i] <= '9'));
	}
	if (ip && dots == 3)
		return false;
	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (gc_starts_with(s, prefixes[i]))
			return false;
	for (size_t i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]); i++) {
		size_t n = strlen(suffixes[i]);

		if (len >= n && !memcmp(s + len - n, suffixes[i], n))
			return false;
	}
	return true;
}

static const char *const aws_name_aliases[] = { "amazon", "ec2", NULL };
static const char *const aws_reserved_tags[] = { "aws:", NULL };
/* the driver's table (ec2.c) resolves each; dlami is gpu-ready under its AWS name */
static const char *const aws_image_aliases[] = { "ubuntu-22.04", "ubuntu-24.04", "gpu-ready",
						 "dlami", NULL };

static const char *const aws_secret_names[] = {
	"X-Amz-Security-Token",	 "X-Amz-Signature",   "X-Amz-Credential", "SecretAccessKey",
	"aws_secret_access_key", "aws_session_token", "WebIdentityToken", NULL,
};
static const char *const aws_key_id_prefixes[] = { "AKIA", "ASIA", NULL };
static const char *const aws_permission_codes[] = { "UnauthorizedOperation", NULL };

extern const struct gc_gpu_offer aws_gpu_offers[]; /* gpus.c */

/* The EFA software, as "Get started with EFA and NCCL" installs it
 * (https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/efa-start-nccl.html): the EFA
 * installer brings the EFA driver, libfabric, Open MPI and the aws-ofi-nccl plugin (the
 * installer's release notes list its plugin version,
 * https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/efa-changelog.html); fi_info
 * listing the efa provider is the documented check. */
static const struct gc_fabric_setup aws_fabric_setup = {
	.what = "the EFA software (EFA installer with aws-ofi-nccl)",
	.url = "https://efa-installer.amazonaws.com/aws-efa-installer-latest.tar.gz",
	.install = "cd aws-efa-installer && ./efa_installer.sh -y",
	.check = "/opt/amazon/efa/bin/fi_info -p efa -t FI_EP_RDM && "
		 "find /opt/amazon/ofi-nccl -name 'libnccl-net*.so*' | grep -q .",
};

const struct gc_provider_facts aws_facts = {
	.title = "AWS EC2",
	.env_vars = "AWS_*",
	.home_region = "us-east-1",
	.oidc_audience = "sts.amazonaws.com",
	.name_aliases = aws_name_aliases,
	.reserved_tag_prefixes = aws_reserved_tags,
	.image_aliases = aws_image_aliases,
	.image_id = aws_image_id,
	.image_id_like = aws_image_id_like,
	.image_id_hint = "ami-...",
	.role = aws_role,
	.role_hint = "arn:aws:iam::ACCOUNT:role/NAME",
	/* NULL: STS finds the identity provider by the token's issuer */
	.oidc_provider = NULL,
	.oidc_provider_hint =
		"AWS finds the identity provider by the token's issuer; leave this key out",
	.vpc_id = aws_vpc_id,
	.vpc_id_hint = "vpc- and 8 or 17 hex digits",
	.subnet_id = aws_subnet_id,
	.subnet_id_hint = "subnet- and 8 or 17 hex digits",
	.subnet_word = "subnet",
	.keypair = { .prefix = "gpucluster", .sep = '-' },
	/* Name is the EC2 console's convention */
	.name_tag = true,
	.secret_names = aws_secret_names,
	.key_id_prefixes = aws_key_id_prefixes,
	.permission_codes = aws_permission_codes,
	.permission_prefix = "ec2:",
	/* EC2 lists a terminated instance for about an hour, so one missing soon after it
	 * ran is the listing lagging ("Eventual consistency in the Amazon EC2 API") */
	.listing_lag_looks = 5,
	.key_id_len = 20,
	.min_billed_s = 60, /* per second, 60 s at least (Linux On-Demand and Spot) */
	.gpu_offers = aws_gpu_offers,
	.rdma_word = "EFA",
	/* IMDSv2, https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/spot-instance-termination-notices.html */
	.spot_notice_url = "http://169.254.169.254/latest/meta-data/spot/instance-action",
	.spot_notice_format = "action-json",
	.spot_token_url = "http://169.254.169.254/latest/api/token",
	.spot_token_header = "X-aws-ec2-metadata-token",
	.spot_rebalance_url =
		"http://169.254.169.254/latest/meta-data/events/recommendations/rebalance",
	.instance_role = aws_instance_role,
	.instance_role_hint = "an instance profile's name: 1-128 of A-Z, a-z, 0-9 and _+=,.@-",
	.bucket = aws_bucket,
	.bucket_hint = "an S3 bucket's name: 3-63 of a-z, 0-9, '.' and '-', starting and "
		       "ending with a letter or digit, no '..', not an IP address",
	/* Mountpoint for Amazon S3: the .deb of
	 * https://docs.aws.amazon.com/AmazonS3/latest/userguide/mountpoint-installation.html,
	 * the options of https://github.com/awslabs/mountpoint-s3/blob/main/doc/CONFIGURATION.md;
	 * it takes the instance profile's credentials from IMDS itself */
	.mount_tool = "mount-s3",
	.mount_package =
		"https://s3.amazonaws.com/mountpoint-s3-release/latest/x86_64/mount-s3.deb",
	.mount_command = "mount-s3 --region {region} --allow-other {mode} {bucket} {path}",
	.mount_ro = "--read-only",
	.mount_rw = "--allow-delete --allow-overwrite",
	.role_creds_url = "http://169.254.169.254/latest/meta-data/iam/security-credentials/",
	.fabric_setup = &aws_fabric_setup,
};
