/*
 * test-hosts.c: the files `gpucluster hosts` writes (bootstrap/hosts.c), as exact text.
 *
 * One fixed cluster of four nodes covers what each format must get right: a node with a
 * public and a private address, one with only a private address (the address written is
 * then the private one), a type without GPUs (slots 1), a node whose type facts are
 * unknown and whose only address is IPv6, a group name Ansible would not take as it is,
 * and a node without a group. Then: paths that need quoting (a space, %, a single quote)
 * in ssh_config and the Ansible inventory, and the ones no quoting carries (a double
 * quote), a user name that is refused where it would be written unquoted, an address
 * that is not an IP literal, names with line breaks, MASTER_ADDR without a private address,
 * the nodes taken from the bootstrapper's list with their pins, and the atomic 0600 file
 * write.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "bootstrap/cluster.h"
#include "bootstrap/hosts.h"
#include "bootstrap/known_hosts.h"
#include "core/alloc.h"
#include "core/buf.h"
#include "core/spec.h"

#define KEY "/home/u/.local/state/gpucluster/clusters/aws/us-east-1/llm/id_ed25519"
#define KH  "/home/u/.local/state/gpucluster/clusters/aws/us-east-1/llm/known_hosts"

static void add(struct gc_hosts *h, const char *label, const char *id, const char *group,
		unsigned index, const char *pub, const char *priv, bool facts, unsigned gpus,
		const char *model, bool pinned)
{
	struct gc_hosts_node_in n = { .label = label,
				      .id = id,
				      .group = group,
				      .index = index,
				      .public_ip = pub,
				      .private_ip = priv,
				      .type = facts ? (gpus ? "g5.12xlarge" : "t3.medium")
						    : "x9.huge",
				      .zone = "us-east-1a",
				      .have_facts = facts,
				      .gpus = gpus,
				      .gpu_model = model,
				      .pinned = pinned };

	gc_hosts_add_node(h, &n);
}

/* The cluster every format test writes. */
static void cluster(struct gc_hosts *h, const char *user, const char *key, const char *kh)
{
	gc_hosts_init(h, "llm", user, 2222, key, kh);
	add(h, "gpu-big/0", "i-0aaa", "gpu-big", 0, "203.0.113.10", "10.0.0.10", true, 4, "A10G",
	    true);
	add(h, "gpu-big/1", "i-0bbb", "gpu-big", 1, NULL, "10.0.0.11", true, 4, "A10G", false);
	add(h, "cpu/0", "i-0ccc", "cpu", 0, "203.0.113.12", "10.0.0.12", true, 0, "", true);
	add(h, "-/0", "i-0ddd", "", 0, "2001:db8::5", NULL, false, 0, NULL, true);
}

/* Formats h and checks the text is exactly want. */
static void expect(const struct gc_hosts *h, enum gc_hosts_format f, size_t only, const char *want)
{
	struct gc_hosts_opts o = { .format = f, .only = only };
	struct gc_buf b = GC_BUF_INIT(0);
	struct gc_error err;

	gc_error_init(&err);
	if (gc_hosts_format(&b, h, &o, &err) < 0)
		fail_msg("%s: %s", gc_hosts_format_names[f], err.message);
	if (strcmp(b.data, want) != 0)
		print_message("--- got\n%s--- want\n%s", b.data, want);
	assert_string_equal(b.data, want);
	gc_buf_release(&b);
}

/* Formats h, which must fail with code and a message containing what. */
static void expect_error(const struct gc_hosts *h, enum gc_hosts_format f, enum gc_errcode code,
			 const char *what)
{
	struct gc_hosts_opts o = { .format = f, .only = SIZE_MAX };
	struct gc_buf b = GC_BUF_INIT(0);
	struct gc_error err;

	gc_error_init(&err);
	gc_buf_addstr(&b, "before");
	assert_int_equal(gc_hosts_format(&b, h, &o, &err), -1);
	assert_int_equal(err.code, code);
	if (!strstr(err.message, what))
		fail_msg("'%s' does not say '%s'", err.message, what);
	/* nothing half written */
	assert_string_equal(b.data, "before");
	gc_buf_release(&b);
}

static void test_hostfiles(void **state)
{
	struct gc_hosts h;

	(void)state;
	cluster(&h, "ubuntu", KEY, KH);
	expect(&h, GC_HOSTS_MPI, SIZE_MAX,
	       "# Open MPI hostfile of cluster 'llm' (gpucluster hosts): slots = GPUs per node\n"
	       "203.0.113.10 slots=4\n"
	       "10.0.0.11 slots=4\n"
	       "203.0.113.12 slots=1\n"
	       "2001:db8::5 slots=1\n");
	/* DeepSpeed: the same lines, and no comment (older readers split it as a host) */
	expect(&h, GC_HOSTS_DEEPSPEED, SIZE_MAX,
	       "203.0.113.10 slots=4\n"
	       "10.0.0.11 slots=4\n"
	       "203.0.113.12 slots=1\n"
	       "2001:db8::5 slots=1\n");
	assert_int_equal(gc_hosts_slots(&h, 0), 4);
	assert_int_equal(gc_hosts_slots(&h, 2), 1);
	assert_int_equal(gc_hosts_slots(&h, 3), 1);
	gc_hosts_release(&h);
}

/* --private, and the files on the nodes: private addresses only; none is an error */
static void test_private_hostfiles(void **state)
{
	struct gc_hosts h;
	struct gc_hosts_opts o = { .format = GC_HOSTS_DEEPSPEED, .private_addrs = true };
	struct gc_buf b = GC_BUF_INIT(0);
	struct gc_error err;

	(void)state;
	gc_error_init(&err);
	gc_hosts_init(&h, "llm", "ubuntu", 22, KEY, KH);
	add(&h, "gpu/0", "i-0aaa", "gpu", 0, "203.0.113.10", "10.0.0.10", true, 8, "H100", true);
	add(&h, "gpu/1", "i-0bbb", "gpu", 1, "203.0.113.11", "10.0.0.11", true, 8, "H100", true);
	assert_int_equal(gc_hosts_format(&b, &h, &o, &err), 0);
	assert_string_equal(b.data, "10.0.0.10 slots=8\n10.0.0.11 slots=8\n");
	gc_buf_reset(&b);
	o.format = GC_HOSTS_MPI;
	assert_int_equal(gc_hosts_format(&b, &h, &o, &err), 0);
	assert_non_null(strstr(b.data, "\n10.0.0.10 slots=8\n10.0.0.11 slots=8\n"));
	assert_null(strstr(b.data, "203.0.113"));
	add(&h, "cpu/0", "i-0ccc", "cpu", 0, "203.0.113.12", NULL, true, 0, "", true);
	gc_buf_reset(&b);
	assert_int_equal(gc_hosts_format(&b, &h, &o, &err), -1);
	assert_int_equal(err.code, GC_EINVALID);
	assert_string_equal(err.message, "node 'cpu/0' (i-0ccc) has no private address");
	gc_buf_release(&b);
	gc_hosts_release(&h);
}

static void test_torchrun(void **state)
{
	struct gc_hosts h;
	struct gc_hosts_opts o = { .format = GC_HOSTS_TORCHRUN, .master_port = 29600, .only = 1 };
	struct gc_buf b = GC_BUF_INIT(0);
	struct gc_hosts_var env[GC_HOSTS_N_ENV];
	struct gc_error err;

	(void)state;
	cluster(&h, "ubuntu", KEY, KH);
	/* MASTER_ADDR: the first node's private address, for every node */
	expect(&h, GC_HOSTS_TORCHRUN, SIZE_MAX,
	       "# gpu-big/0\n"
	       "MASTER_ADDR=10.0.0.10\nMASTER_PORT=29500\nNNODES=4\nNODE_RANK=0\n"
	       "NPROC_PER_NODE=4\n"
	       "\n# gpu-big/1\n"
	       "MASTER_ADDR=10.0.0.10\nMASTER_PORT=29500\nNNODES=4\nNODE_RANK=1\n"
	       "NPROC_PER_NODE=4\n"
	       "\n# cpu/0\n"
	       "MASTER_ADDR=10.0.0.10\nMASTER_PORT=29500\nNNODES=4\nNODE_RANK=2\n"
	       "NPROC_PER_NODE=1\n"
	       "\n# -/0\n"
	       "MASTER_ADDR=10.0.0.10\nMASTER_PORT=29500\nNNODES=4\nNODE_RANK=3\n"
	       "NPROC_PER_NODE=1\n");
	/* one node, for eval in a shell */
	gc_error_init(&err);
	assert_int_equal(gc_hosts_format(&b, &h, &o, &err), 0);
	assert_string_equal(b.data,
			    "export MASTER_ADDR=10.0.0.10\n"
			    "export MASTER_PORT=29600\n"
			    "export NNODES=4\n"
			    "export NODE_RANK=1\n"
			    "export NPROC_PER_NODE=4\n");
	o.only = 4;
	assert_int_equal(gc_hosts_format(&b, &h, &o, &err), -1);
	assert_int_equal(err.code, GC_EINVALID);
	/* what run exports is the same */
	gc_hosts_env(&h, 2, 0, env);
	assert_string_equal(env[0].name, "MASTER_ADDR");
	assert_string_equal(env[0].value, "10.0.0.10");
	assert_string_equal(env[1].value, "29500");
	assert_string_equal(env[2].value, "4");
	assert_string_equal(env[3].name, "NODE_RANK");
	assert_string_equal(env[3].value, "2");
	assert_string_equal(env[4].name, "NPROC_PER_NODE");
	assert_string_equal(env[4].value, "1");
	/* and torchrun's PET_* names for the same values */
	gc_hosts_pet_env(&h, 2, 29600, env);
	assert_string_equal(env[0].name, "PET_MASTER_ADDR");
	assert_string_equal(env[0].value, "10.0.0.10");
	assert_string_equal(env[1].name, "PET_MASTER_PORT");
	assert_string_equal(env[1].value, "29600");
	assert_string_equal(env[2].name, "PET_NNODES");
	assert_string_equal(env[2].value, "4");
	assert_string_equal(env[3].name, "PET_NODE_RANK");
	assert_string_equal(env[3].value, "2");
	assert_string_equal(env[4].name, "PET_NPROC_PER_NODE");
	assert_string_equal(env[4].value, "1");
	gc_buf_release(&b);
	gc_hosts_release(&h);
}

static void test_ssh_config(void **state)
{
	struct gc_hosts h;

	(void)state;
	cluster(&h, "ubuntu", KEY, KH);
	expect(&h, GC_HOSTS_SSH_CONFIG, SIZE_MAX,
	       "# OpenSSH client config of cluster 'llm' (gpucluster hosts): ssh -F THIS-FILE "
	       "NODE\n"
	       "\nHost gpu-big/0 i-0aaa 203.0.113.10\n"
	       "\tHostName 203.0.113.10\n\tPort 2222\n\tUser ubuntu\n"
	       "\tIdentityFile \"" KEY "\"\n\tIdentitiesOnly yes\n"
	       "\tUserKnownHostsFile \"" KH "\"\n"
	       "\tGlobalKnownHostsFile /dev/null\n\tStrictHostKeyChecking yes\n"
	       "\tUpdateHostKeys no\n"
	       "\nHost gpu-big/1 i-0bbb 10.0.0.11\n"
	       "\tHostName 10.0.0.11\n\tPort 2222\n\tUser ubuntu\n"
	       "\tIdentityFile \"" KEY "\"\n\tIdentitiesOnly yes\n"
	       "\tUserKnownHostsFile \"" KH "\"\n"
	       "\tGlobalKnownHostsFile /dev/null\n\tStrictHostKeyChecking yes\n"
	       "\tUpdateHostKeys no\n"
	       "\nHost cpu/0 i-0ccc 203.0.113.12\n"
	       "\tHostName 203.0.113.12\n\tPort 2222\n\tUser ubuntu\n"
	       "\tIdentityFile \"" KEY "\"\n\tIdentitiesOnly yes\n"
	       "\tUserKnownHostsFile \"" KH "\"\n"
	       "\tGlobalKnownHostsFile /dev/null\n\tStrictHostKeyChecking yes\n"
	       "\tUpdateHostKeys no\n"
	       "\nHost -/0 i-0ddd 2001:db8::5\n"
	       "\tHostName 2001:db8::5\n\tPort 2222\n\tUser ubuntu\n"
	       "\tIdentityFile \"" KEY "\"\n\tIdentitiesOnly yes\n"
	       "\tUserKnownHostsFile \"" KH "\"\n"
	       "\tGlobalKnownHostsFile /dev/null\n\tStrictHostKeyChecking yes\n"
	       "\tUpdateHostKeys no\n");
	gc_hosts_release(&h);
}

static void test_ansible(void **state)
{
	struct gc_hosts h;

	(void)state;
	cluster(&h, "ubuntu", KEY, KH);
	/* the group without a name first (ungrouped); gpu-big as Ansible wants it */
	expect(&h, GC_HOSTS_ANSIBLE, SIZE_MAX,
	       "# Ansible inventory of cluster 'llm' (gpucluster hosts): ansible -i THIS-FILE "
	       "all -m ping\n"
	       "-/0 ansible_host=2001:db8::5 ansible_port=2222 ansible_user=ubuntu\n"
	       "\n[gpu_big]\n"
	       "gpu-big/0 ansible_host=203.0.113.10 ansible_port=2222 ansible_user=ubuntu\n"
	       "gpu-big/1 ansible_host=10.0.0.11 ansible_port=2222 ansible_user=ubuntu\n"
	       "\n[cpu]\n"
	       "cpu/0 ansible_host=203.0.113.12 ansible_port=2222 ansible_user=ubuntu\n"
	       "\n[all:vars]\n"
	       "ansible_ssh_private_key_file=" KEY "\n"
	       "ansible_ssh_common_args=-o 'UserKnownHostsFile=\"" KH "\"' "
	       "-o GlobalKnownHostsFile=/dev/null -o StrictHostKeyChecking=yes "
	       "-o IdentitiesOnly=yes -o UpdateHostKeys=no\n");
	gc_hosts_release(&h);
}

static void test_json(void **state)
{
	struct gc_hosts h;

	(void)state;
	gc_hosts_init(&h, "llm", "ubuntu", 0, KEY, NULL);
	add(&h, "gpu/0", "i-0aaa", "gpu", 0, "203.0.113.10", "10.0.0.10", true, 4, "A10G", true);
	add(&h, "odd\"x/0", "i-0bbb", "odd\"x", 0, NULL, "10.0.0.11", false, 0, NULL, false);
	expect(&h, GC_HOSTS_JSON, SIZE_MAX,
	       "{\n"
	       "  \"cluster\": \"llm\",\n"
	       "  \"user\": \"ubuntu\",\n"
	       "  \"port\": 22,\n"
	       "  \"identity_file\": \"" KEY "\",\n"
	       "  \"known_hosts_file\": null,\n"
	       "  \"master_addr\": \"10.0.0.10\",\n"
	       "  \"master_port\": 29500,\n"
	       "  \"nodes\": [\n"
	       "    {\n"
	       "      \"label\": \"gpu/0\",\n"
	       "      \"id\": \"i-0aaa\",\n"
	       "      \"group\": \"gpu\",\n"
	       "      \"index\": 0,\n"
	       "      \"address\": \"203.0.113.10\",\n"
	       "      \"public_address\": \"203.0.113.10\",\n"
	       "      \"private_address\": \"10.0.0.10\",\n"
	       "      \"port\": 22,\n"
	       "      \"user\": \"ubuntu\",\n"
	       "      \"gpus\": 4,\n"
	       "      \"gpu_model\": \"A10G\",\n"
	       "      \"slots\": 4,\n"
	       "      \"type\": \"g5.12xlarge\",\n"
	       "      \"zone\": \"us-east-1a\",\n"
	       "      \"host_key_pinned\": true\n"
	       "    },\n"
	       "    {\n"
	       "      \"label\": \"odd\\\"x/0\",\n"
	       "      \"id\": \"i-0bbb\",\n"
	       "      \"group\": \"odd\\\"x\",\n"
	       "      \"index\": 0,\n"
	       "      \"address\": \"10.0.0.11\",\n"
	       "      \"public_address\": null,\n"
	       "      \"private_address\": \"10.0.0.11\",\n"
	       "      \"port\": 22,\n"
	       "      \"user\": \"ubuntu\",\n"
	       "      \"gpus\": null,\n"
	       "      \"gpu_model\": null,\n"
	       "      \"slots\": 1,\n"
	       "      \"type\": \"x9.huge\",\n"
	       "      \"zone\": \"us-east-1a\",\n"
	       "      \"host_key_pinned\": false\n"
	       "    }\n"
	       "  ]\n"
	       "}\n");
	/* a name that is not UTF-8 cannot be JSON: an error, not a mangled file */
	add(&h, "bad\xff/0", "i-0ccc", "bad\xff", 0, "203.0.113.12", NULL, true, 1, "T4", true);
	expect_error(&h, GC_HOSTS_JSON, GC_EINVALID, "not UTF-8");
	gc_hosts_release(&h);
}

/* Paths with a space, a % and a single quote: each parser gets its own quoting. */
static void test_quoting(void **state)
{
	struct gc_hosts h;

	(void)state;
	gc_hosts_init(&h, "llm", "ubuntu", 22, "/home/o'neil/my state/100%/id_ed25519",
		      "/home/o'neil/my state/100%/known_hosts");
	add(&h, "gpu/0", "i-0aaa", "gpu", 0, "203.0.113.10", "10.0.0.10", true, 1, "T4", true);
	/* a label and an id that are not plain words stay out of the Host patterns */
	add(&h, "we*rd/0", "i 0bbb", "we*rd", 0, "203.0.113.11", NULL, true, 1, "T4", true);
	expect(&h, GC_HOSTS_SSH_CONFIG, SIZE_MAX,
	       "# OpenSSH client config of cluster 'llm' (gpucluster hosts): ssh -F THIS-FILE "
	       "NODE\n"
	       "\nHost gpu/0 i-0aaa 203.0.113.10\n"
	       "\tHostName 203.0.113.10\n\tPort 22\n\tUser ubuntu\n"
	       "\tIdentityFile \"/home/o'neil/my state/100%%/id_ed25519\"\n"
	       "\tIdentitiesOnly yes\n"
	       "\tUserKnownHostsFile \"/home/o'neil/my state/100%%/known_hosts\"\n"
	       "\tGlobalKnownHostsFile /dev/null\n\tStrictHostKeyChecking yes\n"
	       "\tUpdateHostKeys no\n"
	       "\nHost 203.0.113.11\n"
	       "\tHostName 203.0.113.11\n\tPort 22\n\tUser ubuntu\n"
	       "\tIdentityFile \"/home/o'neil/my state/100%%/id_ed25519\"\n"
	       "\tIdentitiesOnly yes\n"
	       "\tUserKnownHostsFile \"/home/o'neil/my state/100%%/known_hosts\"\n"
	       "\tGlobalKnownHostsFile /dev/null\n\tStrictHostKeyChecking yes\n"
	       "\tUpdateHostKeys no\n");
	/* Ansible: the host line is split like a shell line (the odd label is quoted); the
	 * ssh arguments are split again, then read by OpenSSH */
	expect(&h, GC_HOSTS_ANSIBLE, SIZE_MAX,
	       "# Ansible inventory of cluster 'llm' (gpucluster hosts): ansible -i THIS-FILE "
	       "all -m ping\n"
	       "\n[gpu]\n"
	       "gpu/0 ansible_host=203.0.113.10 ansible_port=22 ansible_user=ubuntu\n"
	       "\n[we_rd]\n"
	       "'we*rd/0' ansible_host=203.0.113.11 ansible_port=22 ansible_user=ubuntu\n"
	       "\n[all:vars]\n"
	       "ansible_ssh_private_key_file=/home/o'neil/my state/100%%/id_ed25519\n"
	       "ansible_ssh_common_args=-o 'UserKnownHostsFile=\"/home/o'\\''neil/my "
	       "state/100%%/known_hosts\"' -o GlobalKnownHostsFile=/dev/null "
	       "-o StrictHostKeyChecking=yes -o IdentitiesOnly=yes -o UpdateHostKeys=no\n");
	gc_hosts_release(&h);

	/* a double quote has no spelling every OpenSSH reads the same */
	gc_hosts_init(&h, "llm", "ubuntu", 22, "/home/u/\"q\"/id_ed25519", KH);
	add(&h, "gpu/0", "i-0aaa", "gpu", 0, "203.0.113.10", NULL, true, 1, "T4", true);
	expect_error(&h, GC_HOSTS_SSH_CONFIG, GC_EINVALID, "'/home/u/\"q\"/id_ed25519'");
	expect_error(&h, GC_HOSTS_ANSIBLE, GC_EINVALID, "a quote, a backslash");
	/* the hostfiles do not name the key: they are still written */
	expect(&h, GC_HOSTS_DEEPSPEED, SIZE_MAX, "203.0.113.10 slots=1\n");
	gc_hosts_release(&h);

	/* no key path at all: the formats that need one say so */
	gc_hosts_init(&h, "llm", "ubuntu", 22, NULL, KH);
	add(&h, "gpu/0", "i-0aaa", "gpu", 0, "203.0.113.10", NULL, true, 1, "T4", true);
	expect_error(&h, GC_HOSTS_SSH_CONFIG, GC_EINVALID, "needs the cluster's key");
	gc_hosts_release(&h);
}

/* Names from the cloud with line breaks cannot start lines of their own in any format. */
static void test_control_chars(void **state)
{
	struct gc_hosts h;

	(void)state;
	gc_hosts_init(&h, "llm", "ubuntu", 22, KEY, KH);
	add(&h, "x\n[all:vars]/0", "i-0aaa\r", "x\n[all:vars]", 0, "203.0.113.10", "10.0.0.10",
	    true, 1, "T4\n", true);
	assert_string_equal(h.nodes[0].label, "x?[all:vars]/0");
	assert_string_equal(h.nodes[0].id, "i-0aaa?");
	assert_string_equal(h.nodes[0].gpu_model, "T4?");
	expect(&h, GC_HOSTS_TORCHRUN, SIZE_MAX,
	       "# x?[all:vars]/0\n"
	       "MASTER_ADDR=10.0.0.10\nMASTER_PORT=29500\nNNODES=1\nNODE_RANK=0\n"
	       "NPROC_PER_NODE=1\n");
	expect(&h, GC_HOSTS_ANSIBLE, SIZE_MAX,
	       "# Ansible inventory of cluster 'llm' (gpucluster hosts): ansible -i THIS-FILE "
	       "all -m ping\n"
	       "\n[x__all_vars_]\n"
	       "'x?[all:vars]/0' ansible_host=203.0.113.10 ansible_port=22 ansible_user=ubuntu\n"
	       "\n[all:vars]\n"
	       "ansible_ssh_private_key_file=" KEY "\n"
	       "ansible_ssh_common_args=-o 'UserKnownHostsFile=\"" KH "\"' "
	       "-o GlobalKnownHostsFile=/dev/null -o StrictHostKeyChecking=yes "
	       "-o IdentitiesOnly=yes -o UpdateHostKeys=no\n");
	gc_hosts_release(&h);
}

/* A user outside the spec's alphabet is refused where it would be written bare. */
static void test_odd_user(void **state)
{
	static const char *const bad[] = { "Bad User", "True", "123", "u%h", "-o" };
	struct gc_hosts h;

	(void)state;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		gc_hosts_init(&h, "llm", bad[i], 22, KEY, KH);
		add(&h, "gpu/0", "i-0aaa", "gpu", 0, "203.0.113.10", NULL, true, 2, "T4", true);
		expect_error(&h, GC_HOSTS_SSH_CONFIG, GC_EINVALID, "cannot write the user");
		expect_error(&h, GC_HOSTS_ANSIBLE, GC_EINVALID, "cannot write the user");
		expect(&h, GC_HOSTS_MPI, SIZE_MAX,
		       "# Open MPI hostfile of cluster 'llm' (gpucluster hosts): slots = GPUs "
		       "per node\n203.0.113.10 slots=2\n");
		gc_hosts_release(&h);
	}
	/* the spec's own alphabet passes */
	gc_hosts_init(&h, "llm", "_svc-user.2", 22, KEY, KH);
	add(&h, "gpu/0", "i-0aaa", "gpu", 0, "203.0.113.10", NULL, true, 2, "T4", true);
	expect(&h, GC_HOSTS_ANSIBLE, SIZE_MAX,
	       "# Ansible inventory of cluster 'llm' (gpucluster hosts): ansible -i THIS-FILE "
	       "all -m ping\n"
	       "\n[gpu]\n"
	       "gpu/0 ansible_host=203.0.113.10 ansible_port=22 ansible_user=_svc-user.2\n"
	       "\n[all:vars]\n"
	       "ansible_ssh_private_key_file=" KEY "\n"
	       "ansible_ssh_common_args=-o 'UserKnownHostsFile=\"" KH "\"' "
	       "-o GlobalKnownHostsFile=/dev/null -o StrictHostKeyChecking=yes "
	       "-o IdentitiesOnly=yes -o UpdateHostKeys=no\n");
	gc_hosts_release(&h);
}

static void test_addresses(void **state)
{
	struct gc_hosts h;

	(void)state;
	gc_hosts_init(&h, "llm", "ubuntu", 22, KEY, KH);
	assert_null(gc_hosts_master_addr(&h));
	expect_error(&h, GC_HOSTS_MPI, GC_ENOTFOUND, "cluster 'llm' has no running nodes");
	/* cloud text that is not an IP literal is no address: the private one is used */
	add(&h, "gpu/0", "i-0aaa", "gpu", 0, "203.0.113.10 slots=99", "10.0.0.10", true, 8, "H100",
	    true);
	assert_null(h.nodes[0].public_ip);
	assert_string_equal(gc_hosts_address(&h, 0), "10.0.0.10");
	expect(&h, GC_HOSTS_DEEPSPEED, SIZE_MAX, "10.0.0.10 slots=8\n");
	gc_hosts_release(&h);

	/* the first node without a private address: MASTER_ADDR is its public one */
	gc_hosts_init(&h, "llm", "ubuntu", 22, KEY, KH);
	add(&h, "gpu/0", "i-0aaa", "gpu", 0, "203.0.113.10", NULL, true, 1, "T4", true);
	add(&h, "gpu/1", "i-0bbb", "gpu", 1, "203.0.113.11", "10.0.0.11", true, 1, "T4", true);
	assert_string_equal(gc_hosts_master_addr(&h), "203.0.113.10");
	gc_hosts_release(&h);

	/* a node with no usable address at all cannot be written */
	gc_hosts_init(&h, "llm", "ubuntu", 22, KEY, KH);
	add(&h, "gpu/0", "i-0aaa", "gpu", 0, "nowhere", NULL, true, 1, "T4", true);
	expect_error(&h, GC_HOSTS_MPI, GC_EINVALID, "node 'gpu/0' (i-0aaa) has no address");
	gc_hosts_release(&h);
}

static void test_format_names(void **state)
{
	enum gc_hosts_format f;

	(void)state;
	assert_int_equal(gc_hosts_format_find("ssh-config", &f), 0);
	assert_int_equal(f, GC_HOSTS_SSH_CONFIG);
	assert_int_equal(gc_hosts_format_find("deepspeed", &f), 0);
	assert_int_equal(f, GC_HOSTS_DEEPSPEED);
	assert_int_equal(gc_hosts_format_find("hostfile", &f), -1);
	assert_string_equal(gc_hosts_format_names[GC_HOSTS_JSON], "json");
	assert_null(gc_hosts_format_names[GC_HOSTS_JSON + 1]);
}

/* ---- from the bootstrapper's nodes ---------------------------------------------------- */

static const char spec_yaml[] = "name: llm\n"
				"provider: {name: aws, region: us-east-1}\n"
				"ssh: {user: ubuntu, port: 2222}\n"
				"node_groups:\n"
				"  - {name: workers, count: 2, instance_types: [g5.xlarge]}\n"
				"  - {name: head, count: 1, instance_types: [t3.medium]}\n";

static struct gc_instance *inst(struct gc_instance_list *l, const char *id, const char *group,
				int64_t launch, const char *pub, const char *priv)
{
	struct gc_instance *in = gc_instance_list_push(l);

	in->id = gc_xstrdup(id);
	in->type = gc_xstrdup("g5.xlarge");
	in->zone = gc_xstrdup("us-east-1b");
	in->state = GC_STATE_RUNNING;
	in->launch_time = launch;
	in->public_ip = pub ? gc_xstrdup(pub) : NULL;
	in->private_ip = priv ? gc_xstrdup(priv) : NULL;
	gc_instance_set_tag(in, "gpucluster:cluster", "llm");
	gc_instance_set_tag(in, "gpucluster:group", group);
	return in;
}

static void test_from_boot(void **state)
{
	struct gc_spec *spec = NULL;
	struct gc_diags d;
	struct gc_error err;
	struct gc_instance_list live, other;
	struct gc_boot b;
	struct gc_hosts h;
	struct gc_known_hosts kh;
	char dir[] = "/tmp/gc-test-hosts.XXXXXX", *path, *cmd;
	FILE *f;

	(void)state;
	gc_error_init(&err);
	gc_diags_init(&d, "t.yaml");
	assert_int_equal(
		gc_spec_load_buffer(&spec, "t.yaml", spec_yaml, strlen(spec_yaml), NULL, &d, &err),
		0);
	gc_diags_release(&d);
	gc_instance_list_init(&live);
	inst(&live, "i-0bbb", "workers", 200, "127.0.0.2", "10.0.0.2");
	inst(&live, "i-0ccc", "head", 50, NULL, "10.0.0.3");
	inst(&live, "i-0aaa", "workers", 100, "127.0.0.1", "10.0.0.1");
	gc_boot_init(&b);
	assert_int_equal(gc_boot_add_nodes(&b, spec, &live, NULL, NULL, &err), 0);

	/* pins: workers/0 for its own instance, head/0's address for another instance */
	assert_non_null(mkdtemp(dir));
	path = gc_xasprintf("%s/known_hosts", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f,
		"[127.0.0.1]:2222 ssh-ed25519 "
		"AAAAC3NzaC1lZDI1NTE5AAAAIBN0cmFuZ2VyLWtleS1mb3ItZTJlLXRlc3RzLTAx "
		"gpucluster:instance=i-0aaa\n"
		"[10.0.0.3]:2222 ssh-ed25519 "
		"AAAAC3NzaC1lZDI1NTE5AAAAIBN0cmFuZ2VyLWtleS1mb3ItZTJlLXRlc3RzLTAx "
		"gpucluster:instance=i-0old\n");
	fclose(f);
	assert_int_equal(gc_known_hosts_open(&kh, path, &err), 0);

	gc_hosts_init(&h, spec->name, b.user, b.port, KEY, KH);
	assert_int_equal(gc_hosts_add_boot(&h, &b, &live, &kh, &err), 0);
	assert_int_equal(h.n, 3);
	/* the bootstrapper's order: the spec's groups, then launch order */
	assert_string_equal(h.nodes[0].label, "workers/0");
	assert_string_equal(h.nodes[0].id, "i-0aaa");
	assert_string_equal(h.nodes[1].label, "workers/1");
	assert_string_equal(h.nodes[2].label, "head/0");
	assert_string_equal(h.nodes[2].zone, "us-east-1b");
	assert_null(h.nodes[2].public_ip);
	assert_true(h.nodes[0].pinned);
	assert_false(h.nodes[1].pinned);
	assert_false(h.nodes[2].pinned); /* pinned for i-0old: ssh would refuse i-0ccc */
	/* no type facts (no provider): slots 1, gpus unknown */
	assert_false(h.nodes[0].have_facts);
	assert_int_equal(gc_hosts_slots(&h, 0), 1);
	assert_string_equal(gc_hosts_master_addr(&h), "10.0.0.1");
	expect(&h, GC_HOSTS_DEEPSPEED, SIZE_MAX,
	       "127.0.0.1 slots=1\n127.0.0.2 slots=1\n10.0.0.3 slots=1\n");
	gc_hosts_release(&h);

	/* nodes that are not in the instance list: an error, not made-up addresses */
	gc_instance_list_init(&other);
	inst(&other, "i-0aaa", "workers", 100, "127.0.0.1", "10.0.0.1");
	gc_hosts_init(&h, spec->name, b.user, b.port, KEY, KH);
	assert_int_equal(gc_hosts_add_boot(&h, &b, &other, NULL, &err), -1);
	assert_int_equal(err.code, GC_ENOTFOUND);
	gc_hosts_release(&h);

	gc_instance_list_release(&other);
	gc_known_hosts_release(&kh);
	cmd = gc_xasprintf("rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
	free(cmd);
	free(path);
	gc_boot_release(&b);
	gc_instance_list_release(&live);
	gc_spec_free(spec);
}

/* ---- the file ----------------------------------------------------------------------- */

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	struct gc_buf b = GC_BUF_INIT(0);
	char chunk[256];
	size_t n;

	assert_non_null(f);
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
		gc_buf_add(&b, chunk, n);
	fclose(f);
	return gc_buf_detach(&b, NULL);
}

static void test_write_file(void **state)
{
	char dir[] = "/tmp/gc-test-hosts.XXXXXX", *path, *text, *cmd, *missing;
	struct gc_error err;
	struct stat st;
	FILE *f;

	(void)state;
	gc_error_init(&err);
	assert_non_null(mkdtemp(dir));
	path = gc_xasprintf("%s/hostfile", dir);
	/* an old file, readable by all, is replaced whole, and the new one is 0600 */
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("old contents, longer than the new ones\n", f);
	fclose(f);
	assert_int_equal(chmod(path, 0644), 0);
	assert_int_equal(gc_hosts_write_file(path, "10.0.0.1 slots=4\n", 17, &err), 0);
	text = slurp(path);
	assert_string_equal(text, "10.0.0.1 slots=4\n");
	free(text);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	/* nothing else is left in the directory (no temporary file) */
	cmd = gc_xasprintf("test \"$(ls -A '%s')\" = hostfile", dir);
	assert_int_equal(system(cmd), 0);
	free(cmd);

	missing = gc_xasprintf("%s/no/such/dir/hostfile", dir);
	assert_int_equal(gc_hosts_write_file(missing, "x\n", 2, &err), -1);
	assert_int_equal(err.code, GC_EIO);
	assert_non_null(strstr(err.message, missing));
	free(missing);

	cmd = gc_xasprintf("rm -rf '%s'", dir);
	assert_int_equal(system(cmd), 0);
	free(cmd);
	free(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hostfiles),    cmocka_unit_test(test_private_hostfiles),
		cmocka_unit_test(test_torchrun),     cmocka_unit_test(test_ssh_config),
		cmocka_unit_test(test_ansible),	     cmocka_unit_test(test_json),
		cmocka_unit_test(test_quoting),	     cmocka_unit_test(test_control_chars),
		cmocka_unit_test(test_odd_user),     cmocka_unit_test(test_addresses),
		cmocka_unit_test(test_format_names), cmocka_unit_test(test_from_boot),
		cmocka_unit_test(test_write_file),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
