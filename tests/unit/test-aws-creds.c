/*
 * test-aws-creds.c: the AWS credential chain, region and endpoints without the emulator
 * (tests/sim/test-sts.c covers the STS parts). Every test runs with its own temporary
 * HOME and an environment table of its own (nothing is read from the real one): the INI
 * dialect, environment keys, profiles from both files and their precedence, named but
 * missing profiles, role profiles that cannot work (no source, loops), credential_process
 * (argument splitting, bad exits, bad output, caps, the time limit), IMDSv2 against a fake
 * metadata service on 127.0.0.1 that insists on the token headers, the "nothing found"
 * message, region resolution and per-service endpoints, and secrets reaching the log.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/alloc.h"
#include "core/buf.h"
#include "core/http.h"
#include "core/ini.h"
#include "core/log.h"
#include "core/str.h"
#include "creds-fixture.h"
#include "fake-http.h"
#include "providers/aws/creds.h"

#define NOW	  1800000000 /* 2027-01-15T08:00:00Z */
#define TEST_AKID "AKIAIOSFODNN7EXAMPLE"
#define TEST_KEY  "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"

static int setup(void **state)
{
	(void)state;
	if (creds_setup("/tmp/gc-creds-XXXXXX") != 0)
		return -1;
	set_env("PATH", "/usr/bin:/bin");
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	return creds_teardown();
}

/* Writes HOME/rel (creating HOME/.aws) and returns the full path (static buffer). */
static const char *write_file(const char *rel, const char *text, mode_t mode)
{
	static char path[256];
	char *dir = gc_xasprintf("%s/.aws", t.home);
	FILE *f;

	mkdir(dir, 0700);
	free(dir);
	snprintf(path, sizeof(path), "%s/%s", t.home, rel);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
	chmod(path, mode);
	return path;
}

static void credentials_file(const char *text)
{
	write_file(".aws/credentials", text, 0600);
}

static void config_file(const char *text)
{
	write_file(".aws/config", text, 0600);
}

static void input(struct aws_creds_input *in)
{
	memset(in, 0, sizeof(*in));
	in->region = "us-east-1";
	in->env = &t.env;
	in->http = t.http;
	in->log = &t.log;
	in->now = NOW;
	in->clock = &fake;
}

/* Resolves config then credentials; returns the chain's result. */
static int resolve(const struct aws_creds_input *in, struct aws_creds *c, struct gc_error *err)
{
	struct aws_config cfg;
	int rc;

	aws_creds_init(c);
	aws_config_init(&cfg);
	gc_error_init(err);
	if (aws_config_resolve(&cfg, in, err) != 0)
		return -1;
	rc = aws_creds_resolve(c, &cfg, in, err);
	aws_config_release(&cfg);
	return rc;
}

static void assert_contains(const char *hay, const char *needle)
{
	if (!strstr(hay, needle)) {
		print_message("expected to find: %s\nin: %s\n", needle, hay);
		fail();
	}
}

/* --- INI ------------------------------------------------------------------------------ */

static void test_ini_dialect(void **state)
{
	const char *text = "# a comment\n"
			   "; another\n"
			   "[default]   # trailing comment\n"
			   "Region = us-west-2 ; inline\n"
			   "key_with_tab\t=\tv a l\t\r\n"
			   "\tcontinued = not a key\n"
			   "url = http://x/#frag\n"
			   "region = eu-west-1\n"
			   "\n"
			   "[profile dev]\n"
			   "s3 =\n"
			   "  max_concurrent_requests = 20\n"
			   "  # nested comment\n"
			   "  addressing_style = path\n"
			   "note = first\n"
			   "  second\n"
			   "[default]\n"
			   "later = yes\n";
	const struct gc_ini_section *s;
	struct gc_ini ini;
	struct gc_error err;

	(void)state;
	gc_ini_init(&ini);
	gc_error_init(&err);
	assert_int_equal(gc_ini_parse(&ini, "cfg", text, strlen(text), &err), 0);
	assert_int_equal(ini.n, 2);
	s = gc_ini_section(&ini, "default");
	assert_non_null(s);
	/* keys compare in any case, the last of a repeated key wins */
	assert_string_equal(gc_ini_get(s, "region"), "eu-west-1");
	/* an indented line continues the value above it */
	assert_string_equal(gc_ini_get(s, "KEY_WITH_TAB"), "v a l\ncontinued = not a key");
	assert_null(gc_ini_get(s, "continued"));
	/* a '#' inside a word is not a comment */
	assert_string_equal(gc_ini_get(s, "url"), "http://x/#frag");
	/* the repeated section was merged */
	assert_string_equal(gc_ini_get(s, "later"), "yes");
	s = gc_ini_section(&ini, "profile dev");
	assert_non_null(s);
	assert_string_equal(gc_ini_get(s, "s3"), "");
	assert_string_equal(gc_ini_get(s, "s3.max_concurrent_requests"), "20");
	assert_string_equal(gc_ini_get(s, "s3.addressing_style"), "path");
	assert_string_equal(gc_ini_get(s, "note"), "first\nsecond");
	assert_null(gc_ini_get(s, "missing"));
	assert_null(gc_ini_section(&ini, "dev"));
	gc_ini_release(&ini);
}

static void expect_ini_error_len(const char *text, size_t len, const char *msg)
{
	struct gc_ini ini;
	struct gc_error err;

	gc_ini_init(&ini);
	gc_error_init(&err);
	assert_int_equal(gc_ini_parse(&ini, "f", text, len, &err), -1);
	assert_int_equal(err.code, GC_EINVALID);
	assert_string_equal(err.message, msg);
	/* nothing half-added */
	assert_int_equal(ini.n, 0);
	gc_ini_release(&ini);
}

static void expect_ini_error(const char *text, const char *msg)
{
	expect_ini_error_len(text, strlen(text), msg);
}

static void test_ini_errors(void **state)
{
	struct gc_ini ini;
	struct gc_error err;
	bool found = true;
	char *big;
	const char *path;

	(void)state;
	expect_ini_error("a = 1\n", "f:1: a property before any [section] header");
	expect_ini_error("[x]\nno equals here\n", "f:2: expected 'name = value'");
	expect_ini_error("[x]\n= value\n", "f:2: expected 'name = value'");
	expect_ini_error("[x\n", "f:1: section header without ']'");
	expect_ini_error("[ ]\n", "f:1: empty section name");
	expect_ini_error("[x] y\n", "f:1: text after the section header");
	expect_ini_error("[x]\na =\n  nested without equals\n",
			 "f:3: expected 'name = value' in a nested block");
	expect_ini_error_len("[x]\na = 1\0b = 2\n", 14, "f: holds a NUL byte: not a text file");

	/* a missing file is no error; an oversized one is */
	gc_ini_init(&ini);
	gc_error_init(&err);
	path = write_file("absent", "", 0600);
	unlink(path);
	assert_int_equal(gc_ini_load_file(&ini, path, "~/absent", &found, &err), 0);
	assert_false(found);
	big = gc_xmalloc(GC_INI_MAX_FILE + 2);
	memset(big, '#', GC_INI_MAX_FILE + 1);
	big[GC_INI_MAX_FILE + 1] = '\0';
	path = write_file("big", big, 0600);
	free(big);
	assert_int_equal(gc_ini_load_file(&ini, path, "~/big", &found, &err), -1);
	assert_int_equal(err.code, GC_ETOOBIG);
	assert_string_equal(err.message, "'~/big' is larger than 1024 KiB");
	gc_ini_release(&ini);
}

/* --- environment and profiles ------------------------------------------------------------ */

static void test_env_keys(void **state)
{
	struct aws_creds_input in;
	struct aws_creds c;
	struct gc_error err;

	(void)state;
	set_env("AWS_ACCESS_KEY_ID", TEST_AKID);
	set_env("AWS_SECRET_ACCESS_KEY", TEST_KEY);
	set_env("AWS_SESSION_TOKEN", "FwoGZXIvYXdzEBYaDEXAMPLETOKEN");
	set_env("AWS_CREDENTIAL_EXPIRATION", "2027-01-15T09:00:00+01:00");
	input(&in);
	assert_int_equal(resolve(&in, &c, &err), 0);
	assert_string_equal(c.access_key_id, TEST_AKID);
	assert_string_equal(c.secret_access_key, TEST_KEY);
	assert_string_equal(c.session_token, "FwoGZXIvYXdzEBYaDEXAMPLETOKEN");
	assert_int_equal(c.expiration, NOW); /* 09:00 at +01:00 is 08:00Z */
	assert_string_equal(c.source, "environment");
	/* the secrets were registered as soon as they were read */
	gc_log_info(&t.log, "key %s token %s", TEST_KEY, "FwoGZXIvYXdzEBYaDEXAMPLETOKEN");
	assert_null(strstr(t.logged.data, TEST_KEY));
	assert_null(strstr(t.logged.data, "FwoGZXIvYXdzEBYaDEXAMPLETOKEN"));
	aws_creds_release(&c);

	/* one half of a pair is an error, not a fall-through */
	set_env("AWS_SECRET_ACCESS_KEY", "");
	assert_int_equal(resolve(&in, &c, &err), -1);
	assert_int_equal(err.code, GC_EAUTH);
	assert_string_equal(err.message,
			    "partial AWS credentials in the environment: "
			    "AWS_ACCESS_KEY_ID is set but AWS_SECRET_ACCESS_KEY is not");
}

static void test_profiles_from_both_files(void **state)
{
	struct aws_creds_input in;
	struct aws_creds c;
	struct gc_error err;

	(void)state;
	credentials_file("[default]\n"
			 "aws_access_key_id = AKIADEFAULTFROMCREDS\n"
			 "aws_secret_access_key = default-secret-from-credentials\n");
	config_file("[default]\n"
		    "region = eu-west-1\n"
		    "aws_access_key_id = AKIADEFAULTFROMCONFIG\n"
		    "[profile dev]\n"
		    "aws_access_key_id = AKIADEVFROMCONFIG000\n"
		    "aws_secret_access_key = dev-secret-from-config\n"
		    "aws_session_token = dev-session-token\n"
		    "[ops]\n" /* no "profile " prefix in the config file: not a profile */
		    "aws_access_key_id = AKIAIGNORED0000000000\n"
		    "aws_secret_access_key = ignored\n");
	set_env("AWS_EC2_METADATA_DISABLED", "true");
	input(&in);
	assert_int_equal(resolve(&in, &c, &err), 0);
	/* the credentials file wins for a key both files set */
	assert_string_equal(c.access_key_id, "AKIADEFAULTFROMCREDS");
	assert_string_equal(c.secret_access_key, "default-secret-from-credentials");
	assert_null(c.session_token);
	assert_int_equal(c.expiration, 0);
	assert_string_equal(c.source, "profile 'default'");
	aws_creds_release(&c);

	in.profile = "dev";
	assert_int_equal(resolve(&in, &c, &err), 0);
	assert_string_equal(c.access_key_id, "AKIADEVFROMCONFIG000");
	assert_string_equal(c.session_token, "dev-session-token");
	assert_string_equal(c.source, "profile 'dev'");
	gc_log_info(&t.log, "dev-secret-from-config");
	assert_null(strstr(t.logged.data, "dev-secret-from-config"));
	aws_creds_release(&c);

	in.profile = "ops";
	assert_int_equal(resolve(&in, &c, &err), -1);
	assert_int_equal(err.code, GC_EINVALID);
	assert_string_equal(err.message,
			    "AWS profile 'ops' (named by the spec's provider.profile) not found in "
			    "~/.aws/credentials or ~/.aws/config");

	/* the files may live elsewhere */
	write_file("elsewhere", "[ops]\naws_access_key_id = AKIAOPS\naws_secret_access_key = s3\n",
		   0600);
	set_env("AWS_SHARED_CREDENTIALS_FILE", "~/elsewhere");
	assert_int_equal(resolve(&in, &c, &err), 0);
	assert_string_equal(c.access_key_id, "AKIAOPS");
	aws_creds_release(&c);
}

static void test_precedence(void **state)
{
	struct aws_creds_input in;
	struct aws_creds c;
	struct gc_error err;

	(void)state;
	credentials_file("[dev]\naws_access_key_id = AKIADEV\naws_secret_access_key = dev-s\n");
	set_env("AWS_ACCESS_KEY_ID", "AKIAENV");
	set_env("AWS_SECRET_ACCESS_KEY", "env-s");
	input(&in);

	/* the spec's profile beats the environment's keys */
	in.profile = "dev";
	assert_int_equal(resolve(&in, &c, &err), 0);
	assert_string_equal(c.access_key_id, "AKIADEV");
	aws_creds_release(&c);

	/* AWS_PROFILE does not: the keys in the environment come first, as in the CLI */
	in.profile = NULL;
	set_env("AWS_PROFILE", "dev");
	assert_int_equal(resolve(&in, &c, &err), 0);
	assert_string_equal(c.access_key_id, "AKIAENV");
	aws_creds_release(&c);

	/* without them, AWS_PROFILE picks the profile */
	set_env("AWS_ACCESS_KEY_ID", "");
	set_env("AWS_SECRET_ACCESS_KEY", "");
	assert_int_equal(resolve(&in, &c, &err), 0);
	assert_string_equal(c.access_key_id, "AKIADEV");
	aws_creds_release(&c);

	/* and when it names a profile that is not there, that is an error */
	set_env("AWS_PROFILE", "nope");
	assert_int_equal(resolve(&in, &c, &err), -1);
	assert_int_equal(err.code, GC_EINVALID);
	assert_string_equal(err.message,
			    "AWS profile 'nope' (named by AWS_PROFILE) not found in "
			    "~/.aws/credentials or ~/.aws/config (no such file)");
}

static void expect_chain_error(const char *profile, enum gc_errcode code, const char *msg)
{
	struct aws_creds_input in;
	struct aws_creds c;
	struct gc_error err;

	input(&in);
	in.profile = profile;
	assert_int_equal(resolve(&in, &c, &err), -1);
	if (err.code != code || strcmp(err.message, msg) != 0) {
		print_message("profile %s: got %s: %s\n", profile, gc_strerror(err.code),
			      err.message);
		fail();
	}
	assert_null(c.access_key_id);
}

static void test_role_profile_mistakes(void **state)
{
	(void)state;
	credentials_file("[base]\naws_access_key_id = AKIABASE\naws_secret_access_key = b\n");
	config_file("[profile nosource]\n"
		    "role_arn = arn:aws:iam::111122223333:role/x\n"
		    "[profile both]\n"
		    "role_arn = arn:aws:iam::111122223333:role/x\n"
		    "source_profile = base\n"
		    "credential_source = Environment\n"
		    "[profile mfa]\n"
		    "role_arn = arn:aws:iam::111122223333:role/x\n"
		    "source_profile = base\n"
		    "mfa_serial = arn:aws:iam::111122223333:mfa/me\n"
		    "[profile shortlived]\n"
		    "role_arn = arn:aws:iam::111122223333:role/x\n"
		    "source_profile = base\n"
		    "duration_seconds = 60\n"
		    "[profile a]\n"
		    "role_arn = arn:aws:iam::111122223333:role/a\n"
		    "source_profile = b\n"
		    "[profile b]\n"
		    "role_arn = arn:aws:iam::111122223333:role/b\n"
		    "source_profile = c\n"
		    "[profile c]\n"
		    "role_arn = arn:aws:iam::111122223333:role/c\n"
		    "source_profile = a\n"
		    "[profile orphan]\n"
		    "role_arn = arn:aws:iam::111122223333:role/x\n"
		    "source_profile = ghost\n"
		    "[profile emptysource]\n"
		    "role_arn = arn:aws:iam::111122223333:role/x\n"
		    "source_profile = regiononly\n"
		    "[profile regiononly]\n"
		    "region = us-west-2\n"
		    "[profile ecs]\n"
		    "role_arn = arn:aws:iam::111122223333:role/x\n"
		    "credential_source = EcsContainer\n"
		    "[profile envsource]\n"
		    "role_arn = arn:aws:iam::111122223333:role/x\n"
		    "credential_source = Environment\n"
		    "[profile typo]\n"
		    "role_arn = arn:aws:iam::111122223333:role/x\n"
		    "credential_source = environment\n"
		    "[profile half]\n"
		    "aws_access_key_id = AKIAHALF\n");
	expect_chain_error("nosource", GC_EINVALID,
			   "profile 'nosource' sets role_arn but none of source_profile, "
			   "credential_source or web_identity_token_file, so nothing can sign the "
			   "AssumeRole call");
	expect_chain_error("both", GC_EINVALID,
			   "profile 'both' sets both source_profile and credential_source; keep "
			   "one");
	expect_chain_error("mfa", GC_EUNSUPPORTED,
			   "profile 'mfa' needs an MFA code (mfa_serial), which gpucluster cannot "
			   "ask for; use credentials from 'aws sts get-session-token' or a "
			   "credential_process instead");
	expect_chain_error("shortlived", GC_EINVALID,
			   "profile 'shortlived': duration_seconds '60' is not a number of seconds "
			   "from 900 to 43200");
	expect_chain_error("a", GC_EINVALID, "source_profile loop: 'a' -> 'b' -> 'c' -> 'a'");
	expect_chain_error("b", GC_EINVALID, "source_profile loop: 'b' -> 'c' -> 'a' -> 'b'");
	expect_chain_error("orphan", GC_EINVALID,
			   "source_profile 'ghost' of profile 'orphan' not found in "
			   "~/.aws/credentials or ~/.aws/config");
	expect_chain_error("emptysource", GC_EAUTH,
			   "source_profile 'regiononly' of profile 'emptysource' gives no "
			   "credentials: it has no aws_access_key_id, role_arn, "
			   "web_identity_token_file or credential_process");
	expect_chain_error("ecs", GC_EUNSUPPORTED,
			   "profile 'ecs' has credential_source EcsContainer: gpucluster does not "
			   "use the container credentials endpoint");
	expect_chain_error("envsource", GC_EAUTH,
			   "profile 'envsource' has credential_source Environment, but "
			   "AWS_ACCESS_KEY_ID not set");
	expect_chain_error("typo", GC_EINVALID,
			   "profile 'typo' has credential_source 'environment'; expected "
			   "Environment or Ec2InstanceMetadata");
	expect_chain_error("half", GC_EAUTH,
			   "profile 'half' sets aws_access_key_id but not aws_secret_access_key");
}

/* --- nothing found ---------------------------------------------------------------------- */

static void test_nothing_found(void **state)
{
	struct aws_creds_input in;
	struct aws_creds c;
	struct gc_error err;

	(void)state;
	set_env("AWS_EC2_METADATA_DISABLED", "true");
	input(&in);
	assert_int_equal(resolve(&in, &c, &err), -1);
	assert_int_equal(err.code, GC_EAUTH);
	assert_string_equal(err.message,
			    "no AWS credentials found; tried: environment (AWS_ACCESS_KEY_ID not "
			    "set), profile 'default' (no such profile in ~/.aws/credentials or "
			    "~/.aws/config), web identity (AWS_ROLE_ARN not set), instance "
			    "metadata (disabled by AWS_EC2_METADATA_DISABLED)");

	/* a profile without keys, half a web identity set-up, a container endpoint, and an
	 * IMDS that does not answer: each says why it did not apply */
	config_file("[default]\nregion = us-west-2\n");
	set_env("AWS_ROLE_ARN", "arn:aws:iam::111122223333:role/ci");
	set_env("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "/v2/credentials/x");
	set_env("AWS_EC2_METADATA_DISABLED", "false");
	set_env("AWS_EC2_METADATA_SERVICE_ENDPOINT", "http://127.0.0.1:1");
	assert_int_equal(resolve(&in, &c, &err), -1);
	assert_int_equal(err.code, GC_EAUTH);
	assert_contains(err.message,
			"no AWS credentials found; tried: environment "
			"(AWS_ACCESS_KEY_ID not set), profile 'default' (it has no "
			"aws_access_key_id, role_arn, web_identity_token_file or "
			"credential_process), web identity (AWS_WEB_IDENTITY_TOKEN_FILE "
			"not set), container credentials (set, but gpucluster does not "
			"use them), instance metadata (no usable answer from "
			"http://127.0.0.1:1: ");
	/* one attempt and one retry; counted from the message, not the fake clock's sleeps:
	 * full jitter may draw a delay of 0 ms, and a zero delay does not sleep */
	assert_contains(err.message, "gave up after 2 attempts");

	/* the spec naming a profile says so where the environment would be */
	config_file("[profile sso]\nsso_session = corp\nsso_account_id = 111122223333\n");
	set_env("AWS_EC2_METADATA_DISABLED", "true");
	in.profile = "sso";
	assert_int_equal(resolve(&in, &c, &err), -1);
	assert_contains(err.message,
			"tried: environment (skipped: the spec names profile "
			"'sso'), profile 'sso' (it uses IAM Identity Center (sso_*), "
			"which gpucluster does not read; add credential_process = aws "
			"configure export-credentials --profile sso --format process)");
}

/* --- credential_process ------------------------------------------------------------------ */

static const char *script(const char *name, const char *body)
{
	char *text = gc_xasprintf("#!/bin/sh\n%s", body);
	const char *path = write_file(name, text, 0755);

	free(text);
	return path;
}

static void process_profile(const char *cmd)
{
	char *text = gc_xasprintf("[profile proc]\ncredential_process = %s\n", cmd);

	config_file(text);
	free(text);
}

static void test_credential_process(void **state)
{
	struct aws_creds_input in;
	struct aws_creds c;
	struct gc_error err;
	char *cmd;

	(void)state;
	/* words are split like the CLI splits them: quotes group, backslash escapes */
	script("print creds.sh",
	       "printf '%s\\n' \"$@\" > \"$0.args\"\n"
	       "printf '{\"Version\": 1, \"AccessKeyId\": \"ASIAPROCESS\", \"SecretAccessKey\": "
	       "\"proc secret 1\", \"SessionToken\": \"proc-token\", \"Expiration\": "
	       "\"2027-01-15T09:00:00Z\"}\\n'\n");
	cmd = gc_xasprintf("'%s/print creds.sh' \"two words\" three\\ more\\ words "
			   "\"q\\\"uote\"'$HOME'  \"back\\\\slash\" \"kept\\x\" ''",
			   t.home);
	process_profile(cmd);
	free(cmd);
	input(&in);
	in.profile = "proc";
	assert_int_equal(resolve(&in, &c, &err), 0);
	assert_string_equal(c.access_key_id, "ASIAPROCESS");
	assert_string_equal(c.secret_access_key, "proc secret 1");
	assert_string_equal(c.session_token, "proc-token");
	assert_int_equal(c.expiration, NOW + 3600);
	{
		char *args = gc_xasprintf("%s/print creds.sh.args", t.home);
		char text[256] = "";
		FILE *f = fopen(args, "r");
		size_t n;

		assert_non_null(f);
		n = fread(text, 1, sizeof(text) - 1, f);
		text[n] = '\0';
		fclose(f);
		free(args);
		/* no shell ran: $HOME stayed as it was; the empty quotes are an argument */
		assert_string_equal(text,
				    "two words\nthree more words\nq\"uote$HOME\n"
				    "back\\slash\nkept\\x\n\n");
	}
	assert_string_equal(c.source, "profile 'proc' (credential_process)");
	gc_log_info(&t.log, "proc secret 1");
	assert_null(strstr(t.logged.data, "proc secret 1"));
	aws_creds_release(&c);

	/* found along the input's PATH */
	set_env("PATH", t.home);
	script("creds-on-path",
	       "echo '{\"Version\":1,\"AccessKeyId\":\"AKIAPATH\","
	       "\"SecretAccessKey\":\"path-secret\"}'\n");
	process_profile("creds-on-path --flag");
	assert_int_equal(resolve(&in, &c, &err), 0);
	assert_string_equal(c.access_key_id, "AKIAPATH");
	assert_null(c.session_token);
	assert_int_equal(c.expiration, 0);
	aws_creds_release(&c);
	set_env("PATH", "/usr/bin:/bin");
}

/* Generous for the cases that must end on their own (a loaded CI machine under ASan can
 * take a second to start bash); short only where the time limit is what is tested. */
static unsigned process_timeout_ms = 20000;

static void expect_process_error(const char *body, enum gc_errcode code, const char *msg)
{
	struct aws_creds_input in;
	struct aws_creds c;
	struct gc_error err;
	char *cmd;

	cmd = gc_xasprintf("%s", script("cp.sh", body));
	process_profile(cmd);
	free(cmd);
	input(&in);
	in.profile = "proc";
	in.process_timeout_ms = process_timeout_ms;
	assert_int_equal(resolve(&in, &c, &err), -1);
	if (err.code != code || strcmp(err.message, msg) != 0) {
		print_message("got %s: %s\n", gc_strerror(err.code), err.message);
		fail();
	}
	assert_null(c.access_key_id);
}

static void test_credential_process_failures(void **state)
{
	struct aws_creds_input in;
	struct aws_creds c;
	struct gc_error err;
	uint64_t t0;

	(void)state;
	expect_process_error("exit 3\n", GC_EAUTH,
			     "the credential_process of profile 'proc' exited with status 3");
	expect_process_error("echo 'AKIA this is not json'\n", GC_EINVALID,
			     "the credential_process of profile 'proc' printed no valid JSON "
			     "(error at line 1, column 4)");
	expect_process_error("echo '[1, 2]'\n", GC_EINVALID,
			     "the credential_process of profile 'proc' printed JSON that is not "
			     "an object");
	expect_process_error("echo '{\"Version\": 2, \"AccessKeyId\": \"a\", "
			     "\"SecretAccessKey\": \"b\"}'\n",
			     GC_EINVALID,
			     "the credential_process of profile 'proc' printed another Version; "
			     "only \"Version\": 1 is supported");
	expect_process_error("echo '{\"AccessKeyId\": \"a\", \"SecretAccessKey\": \"b\"}'\n",
			     GC_EINVALID,
			     "the credential_process of profile 'proc' printed no Version; only "
			     "\"Version\": 1 is supported");
	expect_process_error("echo '{\"Version\": 1, \"AccessKeyId\": \"a\"}'\n", GC_EINVALID,
			     "the credential_process of profile 'proc' gave no SecretAccessKey");
	expect_process_error("echo '{\"Version\": 1, \"AccessKeyId\": \"a\", "
			     "\"SecretAccessKey\": \"bbbb\", \"Expiration\": "
			     "\"2020-01-01T00:00:00Z\"}'\n",
			     GC_EAUTH,
			     "the credential_process of profile 'proc' gave credentials that "
			     "expired at 2020-01-01T00:00:00Z");
	expect_process_error("echo '{\"Version\": 1, \"AccessKeyId\": \"a\", "
			     "\"SecretAccessKey\": \"bbbb\", \"Expiration\": \"soon\"}'\n",
			     GC_EINVALID,
			     "the credential_process of profile 'proc' gave an Expiration that is "
			     "not an ISO 8601 time");
	expect_process_error("head -c 70000 /dev/zero | tr '\\0' a\n", GC_ETOOBIG,
			     "the credential_process of profile 'proc' printed more than 64 KiB; "
			     "it was stopped");
	expect_process_error("kill -9 $$\n", GC_EAUTH,
			     "the credential_process of profile 'proc' was killed by signal 9");

	/* the time limit holds, whether the process keeps its output open or closes it */
	process_timeout_ms = 300;
	t0 = gc_clock_now_ns(NULL);
	expect_process_error("exec sleep 5\n", GC_ETIMEOUT,
			     "the credential_process of profile 'proc' did not finish within "
			     "300 ms; it was stopped");
	expect_process_error("exec sleep 5 >&-\n", GC_ETIMEOUT,
			     "the credential_process of profile 'proc' did not finish within "
			     "300 ms; it was stopped");
	assert_true(gc_clock_now_ns(NULL) - t0 < 3 * GC_NS_PER_S);
	process_timeout_ms = 20000;

	/* a command that cannot be split or found */
	process_profile("'unclosed");
	input(&in);
	in.profile = "proc";
	assert_int_equal(resolve(&in, &c, &err), -1);
	assert_int_equal(err.code, GC_EINVALID);
	assert_string_equal(err.message,
			    "cannot run the credential_process of profile 'proc': "
			    "the command has an unclosed quote");
	process_profile("no-such-program-for-gpucluster");
	assert_int_equal(resolve(&in, &c, &err), -1);
	assert_int_equal(err.code, GC_EIO);
	assert_string_equal(err.message,
			    "cannot run the credential_process of profile 'proc': "
			    "'no-such-program-for-gpucluster' not found in PATH");
}

/* --- IMDSv2 ------------------------------------------------------------------------------ */

struct imds {
	struct MHD_Daemon *d;
	pthread_mutex_t lock;
	unsigned puts, gets, rejected;
	unsigned fail_first; /* answer 500 to this many token requests first */
	bool no_role;
	char token[64];
};

static struct imds imds;

/* Behaves as IMDSv2 with tokens required: no token header, no answer. */
static enum MHD_Result imds_handler(void *cls, struct MHD_Connection *c, const char *url,
				    const char *method, const char *version,
				    const char *upload_data, size_t *upload_data_size,
				    void **con_cls)
{
	const char *ttl = MHD_lookup_connection_value(c, MHD_HEADER_KIND,
						      "X-aws-ec2-metadata-token-ttl-seconds");
	const char *tok =
		MHD_lookup_connection_value(c, MHD_HEADER_KIND, "X-aws-ec2-metadata-token");
	enum MHD_Result ret;

	(void)cls;
	(void)version;
	(void)upload_data;
	if (!*con_cls) {
		*con_cls = (void *)1;
		return MHD_YES;
	}
	*upload_data_size = 0;
	pthread_mutex_lock(&imds.lock);
	if (strcmp(method, "PUT") == 0 && strcmp(url, "/latest/api/token") == 0) {
		imds.puts++;
		if (imds.fail_first) {
			imds.fail_first--;
			ret = fake_http_reply(c, 500, "oops");
		} else if (!ttl || strcmp(ttl, "21600") != 0) {
			imds.rejected++;
			ret = fake_http_reply(c, 400, "missing or bad ttl");
		} else {
			ret = fake_http_reply(c, 200, imds.token);
		}
	} else if (strcmp(method, "GET") == 0) {
		imds.gets++;
		if (!tok || strcmp(tok, imds.token) != 0) {
			imds.rejected++;
			ret = fake_http_reply(c, 401, "");
		} else if (strcmp(url, "/latest/meta-data/iam/security-credentials/") == 0) {
			ret = imds.no_role ? fake_http_reply(c, 404, "")
					   : fake_http_reply(c, 200, "gpu-node-role\n");
		} else if (strcmp(url,
				  "/latest/meta-data/iam/security-credentials/gpu-node-role") ==
			   0) {
			ret = fake_http_reply(
				c, 200,
				"{\"Code\": \"Success\", \"LastUpdated\": "
				"\"2027-01-15T07:50:00Z\", \"Type\": \"AWS-HMAC\", "
				"\"AccessKeyId\": \"ASIAIMDSEXAMPLE00001\", \"SecretAccessKey\": "
				"\"imds-secret-key\", \"Token\": \"imds-session-token\", "
				"\"Expiration\": \"2027-01-15T14:00:00Z\"}");
		} else {
			ret = fake_http_reply(c, 404, "");
		}
	} else {
		imds.rejected++;
		ret = fake_http_reply(c, 405, "");
	}
	pthread_mutex_unlock(&imds.lock);
	return ret;
}

static void imds_start(void)
{
	char url[64], *slash;

	memset(&imds, 0, sizeof(imds));
	pthread_mutex_init(&imds.lock, NULL);
	snprintf(imds.token, sizeof(imds.token), "AQAEAimds-session-token-%d", (int)getpid());
	imds.d = fake_http_start(imds_handler, NULL, NULL, url);
	assert_non_null(imds.d);
	slash = gc_xasprintf("%s/", url);
	set_env("AWS_EC2_METADATA_SERVICE_ENDPOINT", slash);
	free(slash);
}

static void imds_stop(void)
{
	MHD_stop_daemon(imds.d);
	pthread_mutex_destroy(&imds.lock);
}

static void test_imds(void **state)
{
	struct aws_creds_input in;
	struct aws_creds c;
	struct gc_error err;

	(void)state;
	imds_start();
	input(&in);
	assert_int_equal(resolve(&in, &c, &err), 0);
	assert_string_equal(c.access_key_id, "ASIAIMDSEXAMPLE00001");
	assert_string_equal(c.secret_access_key, "imds-secret-key");
	assert_string_equal(c.session_token, "imds-session-token");
	assert_int_equal(c.expiration, NOW + 6 * 3600);
	assert_string_equal(c.source, "instance metadata (role 'gpu-node-role')");
	aws_creds_release(&c);
	/* a token first, then the role and its credentials, each with the token */
	assert_int_equal(imds.puts, 1);
	assert_int_equal(imds.gets, 2);
	assert_int_equal(imds.rejected, 0);
	/* the IMDS token and the keys never reach the log */
	gc_log_info(&t.log, "%s imds-secret-key imds-session-token", imds.token);
	assert_null(strstr(t.logged.data, imds.token));
	assert_null(strstr(t.logged.data, "imds-secret-key"));

	/* a 5xx is retried once */
	imds.fail_first = 1;
	imds.puts = 0;
	assert_int_equal(resolve(&in, &c, &err), 0);
	assert_int_equal(imds.puts, 2);
	aws_creds_release(&c);
	imds.fail_first = 2;
	assert_int_equal(resolve(&in, &c, &err), -1);
	assert_contains(err.message,
			"instance metadata (no usable answer from "
			"http://127.0.0.1:");

	/* an instance without a role */
	imds.no_role = true;
	assert_int_equal(resolve(&in, &c, &err), -1);
	assert_int_equal(err.code, GC_EAUTH);
	assert_contains(err.message,
			"instance metadata (no IAM role is attached to this "
			"instance (http://127.0.0.1:");
	imds.no_role = false;

	/* credential_source = Ec2InstanceMetadata signs for a role: here the source alone
	 * is checked, by pointing STS nowhere reachable */
	config_file("[profile onhost]\nrole_arn = arn:aws:iam::111122223333:role/x\n"
		    "credential_source = Ec2InstanceMetadata\n");
	set_env("AWS_ENDPOINT_URL_STS", "http://127.0.0.1:1");
	in.profile = "onhost";
	imds.gets = 0;
	assert_int_equal(resolve(&in, &c, &err), -1);
	assert_int_equal(imds.gets, 2); /* the instance's keys were fetched to sign with */
	assert_int_equal(err.code, GC_ETRANSIENT);
	assert_contains(err.message,
			"cannot assume role 'arn:aws:iam::111122223333:role/x' for "
			"profile 'onhost': ");
	imds_stop();

	/* and without any IMDS, that profile cannot work */
	assert_int_equal(resolve(&in, &c, &err), -1);
	assert_int_equal(err.code, GC_EAUTH);
	assert_contains(err.message,
			"profile 'onhost' has credential_source "
			"Ec2InstanceMetadata, but the instance metadata service: no "
			"usable answer from http://127.0.0.1:");
}

/* --- region and endpoints ----------------------------------------------------------------- */

static int config(const struct aws_creds_input *in, struct aws_config *cfg, struct gc_error *err)
{
	aws_config_init(cfg);
	gc_error_init(err);
	return aws_config_resolve(cfg, in, err);
}

static void expect_region(const struct aws_creds_input *in, const char *region)
{
	struct aws_config cfg;
	struct gc_error err;

	assert_int_equal(config(in, &cfg, &err), 0);
	assert_string_equal(cfg.region, region);
	aws_config_release(&cfg);
}

static void test_region(void **state)
{
	struct aws_creds_input in;
	struct aws_config cfg;
	struct gc_error err;

	(void)state;
	input(&in);
	in.region = NULL;
	assert_int_equal(config(&in, &cfg, &err), -1);
	assert_int_equal(err.code, GC_EINVALID);
	assert_string_equal(err.message,
			    "no AWS region set; looked at the spec's "
			    "provider.region, AWS_REGION, AWS_DEFAULT_REGION and the "
			    "'region' of profile 'default' in ~/.aws/config");

	config_file("[default]\nregion = ap-south-1\n[profile eu]\nregion = eu-west-1\n");
	expect_region(&in, "ap-south-1");
	set_env("AWS_PROFILE", "eu");
	expect_region(&in, "eu-west-1");
	set_env("AWS_DEFAULT_REGION", "us-west-1");
	expect_region(&in, "us-west-1");
	set_env("AWS_REGION", "us-west-2");
	expect_region(&in, "us-west-2");
	in.region = "us-east-2";
	expect_region(&in, "us-east-2");

	in.region = "us-east-1/../evil";
	assert_int_equal(config(&in, &cfg, &err), -1);
	assert_string_equal(err.message,
			    "AWS region 'us-east-1/../evil' (from the spec's "
			    "provider.region) is not a region name");
}

static void expect_endpoints(const struct aws_creds_input *in, const char *ec2, const char *sts,
			     const char *pricing, const char *pricing_region)
{
	struct aws_config cfg;
	struct gc_error err;

	assert_int_equal(config(in, &cfg, &err), 0);
	assert_string_equal(cfg.ec2_endpoint, ec2);
	assert_string_equal(cfg.sts_endpoint, sts);
	assert_string_equal(cfg.pricing_endpoint, pricing);
	assert_string_equal(cfg.pricing_region, pricing_region);
	aws_config_release(&cfg);
}

static void test_endpoints(void **state)
{
	struct aws_creds_input in;
	struct aws_config cfg;
	struct gc_error err;

	(void)state;
	input(&in);
	in.region = "us-west-2";
	expect_endpoints(&in, "https://ec2.us-west-2.amazonaws.com",
			 "https://sts.us-west-2.amazonaws.com",
			 "https://api.pricing.us-east-1.amazonaws.com", "us-east-1");
	assert_int_equal(config(&in, &cfg, &err), 0);
	assert_null(cfg.profile); /* no files: no profile applied */
	aws_config_release(&cfg);
	in.region = "cn-north-1";
	expect_endpoints(&in, "https://ec2.cn-north-1.amazonaws.com.cn",
			 "https://sts.cn-north-1.amazonaws.com.cn",
			 "https://api.pricing.cn-northwest-1.amazonaws.com.cn", "cn-northwest-1");
	in.region = "us-west-2";

	/* the profile's endpoint_url, then a services block beats it for its service */
	config_file("[default]\n"
		    "endpoint_url = http://profile.example:4566/\n"
		    "services = local\n"
		    "[services local]\n"
		    "sts =\n"
		    "  endpoint_url = http://sts.local:9000\n");
	expect_endpoints(&in, "http://profile.example:4566", "http://sts.local:9000",
			 "http://profile.example:4566", "us-east-1");
	assert_int_equal(config(&in, &cfg, &err), 0);
	assert_string_equal(cfg.profile, "default");
	aws_config_release(&cfg);

	/* the environment beats the profile; a service's variable beats the global one */
	set_env("AWS_ENDPOINT_URL", "http://127.0.0.1:4566//");
	set_env("AWS_ENDPOINT_URL_PRICING", "https://pricing.proxy");
	expect_endpoints(&in, "http://127.0.0.1:4566", "http://127.0.0.1:4566",
			 "https://pricing.proxy", "us-east-1");

	/* the spec's endpoint acts for every service, above all else */
	in.endpoint = "http://127.0.0.1:8000/";
	expect_endpoints(&in, "http://127.0.0.1:8000", "http://127.0.0.1:8000",
			 "http://127.0.0.1:8000", "us-east-1");
	in.endpoint = NULL;

	/* the CLI's switch to ignore configured endpoints (not the spec's) */
	set_env("AWS_IGNORE_CONFIGURED_ENDPOINT_URLS", "true");
	expect_endpoints(&in, "https://ec2.us-west-2.amazonaws.com",
			 "https://sts.us-west-2.amazonaws.com",
			 "https://api.pricing.us-east-1.amazonaws.com", "us-east-1");
	set_env("AWS_IGNORE_CONFIGURED_ENDPOINT_URLS", "");

	set_env("AWS_ENDPOINT_URL_EC2", "ftp://nope");
	assert_int_equal(config(&in, &cfg, &err), -1);
	assert_int_equal(err.code, GC_EINVALID);
	assert_string_equal(err.message,
			    "endpoint 'ftp://nope' (from AWS_ENDPOINT_URL_EC2) is "
			    "not an http:// or https:// URL");
	set_env("AWS_ENDPOINT_URL_EC2", "http://");
	assert_int_equal(config(&in, &cfg, &err), -1);
	assert_string_equal(err.message,
			    "endpoint 'http://' (from AWS_ENDPOINT_URL_EC2) has no "
			    "host");
	in.endpoint = "http://127.0.0.1:8000/ x";
	assert_int_equal(config(&in, &cfg, &err), -1);
	assert_string_equal(err.message,
			    "endpoint 'http://127.0.0.1:8000/ x' (from the spec's "
			    "provider.endpoint) holds a character an endpoint cannot "
			    "have");
}

/* Service Quotas: its own variable, then AWS_ENDPOINT_URL, a services block's
 * service_quotas, the spec's endpoint above all; by default the region's own host */
static void test_quotas_endpoint(void **state)
{
	struct aws_creds_input in;
	struct aws_config cfg;
	struct gc_error err;

	(void)state;
	input(&in);
	in.region = "us-west-2";
	assert_int_equal(config(&in, &cfg, &err), 0);
	assert_string_equal(cfg.quotas_endpoint, "https://servicequotas.us-west-2.amazonaws.com");
	aws_config_release(&cfg);
	in.region = "cn-north-1";
	assert_int_equal(config(&in, &cfg, &err), 0);
	assert_string_equal(cfg.quotas_endpoint,
			    "https://servicequotas.cn-north-1.amazonaws.com.cn");
	aws_config_release(&cfg);
	in.region = "us-west-2";
	config_file("[default]\n"
		    "services = local\n"
		    "[services local]\n"
		    "service_quotas =\n"
		    "  endpoint_url = http://quotas.local:9000\n");
	assert_int_equal(config(&in, &cfg, &err), 0);
	assert_string_equal(cfg.quotas_endpoint, "http://quotas.local:9000");
	aws_config_release(&cfg);
	set_env("AWS_ENDPOINT_URL", "http://127.0.0.1:4566");
	assert_int_equal(config(&in, &cfg, &err), 0);
	assert_string_equal(cfg.quotas_endpoint, "http://127.0.0.1:4566");
	aws_config_release(&cfg);
	set_env("AWS_ENDPOINT_URL_SERVICE_QUOTAS", "https://quotas.proxy");
	assert_int_equal(config(&in, &cfg, &err), 0);
	assert_string_equal(cfg.quotas_endpoint, "https://quotas.proxy");
	assert_string_equal(cfg.ec2_endpoint, "http://127.0.0.1:4566");
	aws_config_release(&cfg);
	in.endpoint = "http://127.0.0.1:8000/";
	assert_int_equal(config(&in, &cfg, &err), 0);
	assert_string_equal(cfg.quotas_endpoint, "http://127.0.0.1:8000");
	aws_config_release(&cfg);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_ini_dialect, setup, teardown),
		cmocka_unit_test_setup_teardown(test_ini_errors, setup, teardown),
		cmocka_unit_test_setup_teardown(test_env_keys, setup, teardown),
		cmocka_unit_test_setup_teardown(test_profiles_from_both_files, setup, teardown),
		cmocka_unit_test_setup_teardown(test_precedence, setup, teardown),
		cmocka_unit_test_setup_teardown(test_role_profile_mistakes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_nothing_found, setup, teardown),
		cmocka_unit_test_setup_teardown(test_credential_process, setup, teardown),
		cmocka_unit_test_setup_teardown(test_credential_process_failures, setup, teardown),
		cmocka_unit_test_setup_teardown(test_imds, setup, teardown),
		cmocka_unit_test_setup_teardown(test_region, setup, teardown),
		cmocka_unit_test_setup_teardown(test_endpoints, setup, teardown),
		cmocka_unit_test_setup_teardown(test_quotas_endpoint, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
