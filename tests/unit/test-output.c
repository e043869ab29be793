/*
 * test-output.c: what reaches the user from outside is sanitised at the print points
 * (cmd/output.h, core/str.h): control characters escaped, no line that starts with "::"
 * from remote text, our own colours, line breaks and workflow commands kept; messages
 * redacted (URL userinfo, credentials in query strings, registered secrets); JSON strings
 * escaped completely, also through the dispatcher (a secret the log learns while the
 * command runs); GitHub Actions annotations, summary and outputs likewise.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <jansson.h>

#include "cmd/cmd.h"
#include "cmd/gha.h"
#include "cmd/output.h"
#include "core/buf.h"
#include "core/log.h"
#include "core/str.h"

/* The hostile text of the emulator's escape modes (sim/hostile.h). */
#define HOSTILE                                                                   \
	"\033[31mred\033[0m \033]0;owned\007\r\n::error::forged by the cloud\r\n" \
	"::add-mask::gpucluster\n::stop-commands::hostile\n::warning::after the stop"

static char *escaped(const char *s, unsigned flags)
{
	struct gc_buf b = GC_BUF_INIT(0);

	gc_str_escape(&b, s, strlen(s), flags);
	return gc_buf_detach(&b, NULL);
}

#define assert_escapes(in, flags, want)              \
	do {                                         \
		char *got_ = escaped((in), (flags)); \
		assert_string_equal(got_, (want));   \
		free(got_);                          \
	} while (0)

static void test_escape(void **state)
{
	(void)state;
	assert_escapes("plain text, tab\there; é ü 日本", 0, "plain text, tab\there; é ü 日本");
	assert_escapes("a\033[31mb\r\nc\x7f", 0, "a\\x1b[31mb\\x0d\\x0ac\\x7f");
	assert_escapes("a\nb", GC_ESC_KEEP_NL, "a\nb");
	/* C1 controls (U+009B is a CSI to some terminals) and bytes that are no UTF-8 */
	assert_escapes("x\xc2\x9b"
		       "2J\xc2\xa0y\xff\x80",
		       0, "x\\xc2\\x9b2J\xc2\xa0y\\xff\\x80");
	/* a line of remote text never starts a workflow command, even after blanks */
	assert_escapes("::error::x", 0, "\\x3a:error::x");
	assert_escapes("ok\n  ::set-output::y\n", GC_ESC_KEEP_NL, "ok\n  \\x3a:set-output::y\n");
	assert_escapes("a\n::b", 0, "a\\x0a::b"); /* one line: the break is escaped instead */
	assert_escapes("::group::t\n::x", GC_ESC_OWN_CMD | GC_ESC_KEEP_NL, "::group::t\n\\x3a:x");
	assert_escapes("mid::line", 0, "mid::line");
	/* the runner's older form is a command anywhere in a line */
	assert_escapes("x ##[add-mask]y # ##", 0, "x #\\x23[add-mask]y # ##");
	assert_escapes("", 0, "");
}

static void test_redact(void **state)
{
	char *r;

	(void)state;
	/* a message: "name: text" is a sentence, but a header is still a header */
	r = gc_log_redact_message(NULL,
				  "cannot assume role with the OIDC token: "
				  "InvalidIdentityToken: bad audience; Password=hunter2 and "
				  "Authorization: Bearer abc");
	assert_string_equal(r,
			    "cannot assume role with the OIDC token: InvalidIdentityToken: "
			    "bad audience; Password=*** and Authorization: ***");
	free(r);
	/* signed URLs of the clouds (more in test-log.c) */
	r = gc_log_redact(NULL,
			  "GET https://b.s3.amazonaws.com/k?X-Amz-Algorithm=AWS4-HMAC-SHA256"
			  "&X-Amz-Credential=AKIAEXAMPLE%2F20260101&X-Amz-Signature=abc123 "
			  "https://o/x?OSSAccessKeyId=LTAIabc&Expires=1&Signature=zz%3D&token=t0k"
			  "&access_token=a1&NextToken=n1&ClientToken=c1");
	assert_string_equal(r,
			    "GET https://b.s3.amazonaws.com/k?X-Amz-Algorithm=AWS4-HMAC-SHA256"
			    "&X-Amz-Credential=***&X-Amz-Signature=*** "
			    "https://o/x?OSSAccessKeyId=***&Expires=1&Signature=***&token=***"
			    "&access_token=***&NextToken=n1&ClientToken=c1");
	free(r);
}

/* ---- the print points ---- */

struct cap {
	char *out_text, *err_text;
	size_t out_len, err_len;
	FILE *out, *err;
	struct gc_output o;
	struct gc_log log;
};

static void cap_open(struct cap *c)
{
	memset(c, 0, sizeof(*c));
	c->out = open_memstream(&c->out_text, &c->out_len);
	c->err = open_memstream(&c->err_text, &c->err_len);
	assert_non_null(c->out);
	assert_non_null(c->err);
	gc_output_init(&c->o, c->out, c->err);
	gc_log_init(&c->log, GC_LOG_WARN, gc_output_log_sink, &c->o);
	c->o.log = &c->log;
}

static void cap_flush(struct cap *c)
{
	fflush(c->out);
	fflush(c->err);
}

static void cap_close(struct cap *c)
{
	fclose(c->out);
	fclose(c->err);
	free(c->out_text);
	free(c->err_text);
	gc_log_release(&c->log);
}

/* Whether text has a raw control character other than LF, or a line that starts with
 * "::" after blanks. */
static int unsafe(const char *text)
{
	for (const char *p = text; *p; p++) {
		const char *q = p;

		if ((unsigned char)*p < 0x20 && *p != '\n' && *p != '\t')
			return 1;
		if (p != text && p[-1] != '\n')
			continue;
		while (*q == ' ' || *q == '\t')
			q++;
		if (q[0] == ':' && q[1] == ':')
			return 1;
	}
	return 0;
}

static void test_error_printer(void **state)
{
	struct cap c;

	(void)state;
	cap_open(&c);
	gc_log_add_secret(&c.log, "s3cr3t-value");
	gc_out_error(&c.o, "cannot launch: %s (key s3cr3t-value, via http://u:pw12@h/)", HOSTILE);
	gc_out_warn(&c.o, "%s", "line one\nline two\r::warning::x");
	gc_out_hint(&c.o, "%s", "\033]52;c;Y2xpcGJvYXJk\007");
	cap_flush(&c);
	assert_false(unsafe(c.err_text));
	assert_null(strstr(c.err_text, "s3cr3t-value"));
	assert_null(strstr(c.err_text, "pw12"));
	assert_non_null(strstr(c.err_text,
			       "gpucluster: error: cannot launch: \\x1b[31mred\\x1b[0m "
			       "\\x1b]0;owned\\x07\\x0d\\x0a::error::forged"));
	assert_non_null(strstr(c.err_text, "(key ***, via http://u:***@h/)\n"));
	assert_non_null(strstr(c.err_text,
			       "gpucluster: warning: line one\\x0aline two\\x0d::warning::x\n"));
	assert_non_null(strstr(c.err_text, "hint: \\x1b]52;c;Y2xpcGJvYXJk\\x07\n"));
	/* three lines, one per message */
	assert_int_equal(c.err_text[c.err_len - 1], '\n');
	cap_close(&c);
}

static void test_file_error_redacted(void **state)
{
	struct cap c;

	(void)state;
	cap_open(&c);
	gc_out_file_error(&c.o, "c.yaml", 7, 13,
			  "provider.endpoint: 'http://user:hunter2@h/' is not valid\r\n::error::x");
	cap_flush(&c);
	assert_string_equal(c.err_text,
			    "c.yaml:7:13: error: provider.endpoint: "
			    "'http://user:***@h/' is not valid\\x0d\\x0a::error::x\n");
	cap_close(&c);
}

static void test_text_output(void **state)
{
	struct cap c;

	(void)state;
	cap_open(&c);
	/* a table of ours with a hostile name in it: our line breaks stay, its do not start a
	 * command, its escapes are shown */
	gc_out_printf(&c.o, c.out, "NAME  STATE\n%s  running\n", HOSTILE);
	cap_flush(&c);
	assert_false(unsafe(c.out_text));
	assert_true(strncmp(c.out_text, "NAME  STATE\n\\x1b[31mred", 23) == 0);
	assert_non_null(strstr(c.out_text, "\n\\x3a:error::forged by the cloud\\x0d\n"));
	cap_close(&c);

	/* colour on: our palette passes, anything else is escaped; a live display's cursor
	 * moves pass only when the format wrote them */
	cap_open(&c);
	c.o.color_out = true;
	gc_out_printf(&c.o, c.out, "%s+%s %s\n", gc_out_style(&c.o, c.out, GC_STYLE_GREEN),
		      gc_out_style(&c.o, c.out, GC_STYLE_RESET), "\033]0;t\007\033[2A");
	gc_out_printf(&c.o, c.out, "\r  x\033[K\n\033[%dA", 2);
	cap_flush(&c);
	assert_string_equal(c.out_text,
			    "\033[32m+\033[0m \\x1b]0;t\\x07\\x1b[2A\n"
			    "\r  x\033[K\n\033[2A");
	cap_close(&c);

	/* a workflow command we composed is written as it is; SSH output is not one */
	cap_open(&c);
	gc_out_puts(&c.o, c.err, "::group::workers/0 i-1: ok\n");
	gc_out_puts_clean(&c.o, c.err, "step 1\n::endgroup::\n\033[1mok\n");
	gc_out_puts(&c.o, c.err, "::endgroup::\n");
	gc_out_puts(&c.o, c.err, "two\n::lines\n");
	cap_flush(&c);
	assert_string_equal(c.err_text,
			    "::group::workers/0 i-1: ok\n"
			    "step 1\n\\x3a:endgroup::\n\\x1b[1mok\n"
			    "::endgroup::\n"
			    "two\n\\x3a:lines\n");
	cap_close(&c);
}

static void test_json(void **state)
{
	struct cap c;
	json_t *doc, *back;
	json_error_t jerr;

	(void)state;
	cap_open(&c);
	gc_log_add_secret(&c.log, "s3cr3t-value");
	doc = json_pack("{s:s, s:s, s:[s]}", "name", HOSTILE "\x7f\xc2\x9b", "message",
			"denied for s3cr3t-value at https://h/?X-Amz-Signature=abc", "tags",
			"\033[2J");
	assert_non_null(doc);
	assert_int_equal(gc_out_json(&c.o, doc), 0);
	cap_flush(&c);
	assert_false(unsafe(c.out_text));
	assert_null(strstr(c.out_text, "\x7f"));
	assert_null(strstr(c.out_text, "\xc2\x9b"));
	assert_null(strstr(c.out_text, "s3cr3t-value"));
	assert_non_null(strstr(c.out_text, "\\u001B[31mred"));
	assert_non_null(strstr(c.out_text, "\\u007F\\u009B"));
	/* still one valid document, saying the same (less the secrets) */
	back = json_loads(c.out_text, 0, &jerr);
	assert_non_null(back);
	assert_string_equal(json_string_value(json_object_get(back, "name")),
			    HOSTILE "\x7f\xc2\x9b");
	assert_string_equal(json_string_value(json_object_get(back, "message")),
			    "denied for *** at https://h/?X-Amz-Signature=***");
	json_decref(back);
	json_decref(doc);
	cap_close(&c);
}

/* ---- through the dispatcher: the command's log is the printers' ---- */

static int leak_exec(struct gc_cmd_ctx *ctx)
{
	json_t *doc;

	gc_log_add_secret(ctx->log, "k3y-learnt-at-run-time");
	gc_out_error(ctx->out, "the cloud said: bad key k3y-learnt-at-run-time\n::error::x");
	doc = json_pack("{s:s}", "message", "k3y-learnt-at-run-time");
	gc_out_json(ctx->out, doc);
	json_decref(doc);
	return GC_EXIT_FAILURE;
}

static const struct gc_cmd_entry t_leak = {
	.name = "leak",
	.summary = "prints a secret",
	.usage = "",
	.exec = leak_exec,
};

static void test_dispatch(void **state)
{
	const struct gc_cmd_entry *const table[] = { &t_leak };
	char prog[] = "gpucluster", cmd[] = "leak", *argv[] = { prog, cmd, NULL };
	char *out = NULL, *err = NULL;
	size_t out_len, err_len;
	struct gc_cmd_io io = { .out_tty = 0, .err_tty = 0, .in_tty = 0 };

	(void)state;
	io.out = open_memstream(&out, &out_len);
	io.err = open_memstream(&err, &err_len);
	assert_int_equal(gc_cmd_dispatch(table, 1, 2, argv, &io), GC_EXIT_FAILURE);
	fclose(io.out);
	fclose(io.err);
	assert_string_equal(err, "gpucluster: error: the cloud said: bad key ***\\x0a::error::x\n");
	assert_string_equal(out, "{\n  \"message\": \"***\"\n}\n");
	free(out);
	free(err);
}

/* ---- GitHub Actions ---- */

static void test_gha(void **state)
{
	struct gc_buf b = GC_BUF_INIT(0);
	struct gc_gha_node node = { .label = "workers/0",
				    .id = "i-1",
				    .type = "g5.xlarge",
				    .zone = HOSTILE,
				    .public_ip = "1.2.3.4\n::error::x",
				    .usd_per_hour = -1,
				    .gpus = -1,
				    .gemm_tflops = -1 };
	struct gc_gha_apply a = { .command = "apply",
				  .cluster = "c",
				  .cloud = "aws",
				  .region = "us-east-1",
				  .nodes = &node,
				  .n_nodes = 1,
				  .cost = -1,
				  .error = HOSTILE };

	(void)state;
	gc_gha_format_annotation(&b, "error", NULL, 0, 0, HOSTILE);
	assert_string_equal(b.data,
			    "::error::\\x1b[31mred\\x1b[0m \\x1b]0;owned\\x07%0D%0A"
			    "::error::forged by the cloud%0D%0A::add-mask::gpucluster%0A"
			    "::stop-commands::hostile%0A::warning::after the stop\n");
	gc_buf_reset(&b);
	gc_gha_format_apply_summary(&b, &a);
	assert_false(unsafe(b.data));
	assert_non_null(strstr(b.data, "- **Result:** failed: \\x1b[31mred"));
	gc_buf_reset(&b);
	gc_gha_format_apply_outputs(&b, &a);
	assert_false(unsafe(b.data));
	assert_non_null(strstr(b.data, "ips=1.2.3.4\\x0a::error::x\n"));
	gc_buf_release(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_escape),	      cmocka_unit_test(test_redact),
		cmocka_unit_test(test_error_printer), cmocka_unit_test(test_file_error_redacted),
		cmocka_unit_test(test_text_output),   cmocka_unit_test(test_json),
		cmocka_unit_test(test_dispatch),      cmocka_unit_test(test_gha),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
