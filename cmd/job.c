/*
 * job.c: a job's environment for `run` (job.h). Secrets are read here, once, and go
 * only into the job's script: never into a runner variable (those travel on the SSH
 * command line, which `ps` shows on the node), never into a log (registered as secrets,
 * so the log redacts them) and never unmasked into GitHub Actions output.
 */
#include "cmd/job.h"

#include <stdlib.h>
#include <string.h>

#include "bootstrap/ssh.h"
#include "cmd/gha.h"
#include "cmd/output.h"
#include "core/alloc.h"
#include "core/buf.h"
#include "core/keygen.h"
#include "core/log.h"
#include "core/spec.h"

void gc_job_env_init(struct gc_job_env *j)
{
	memset(j, 0, sizeof(*j));
}

/* Sets name to value: a name already there is replaced, in place. */
static void job_set(struct gc_job_env *j, const char *name, size_t name_len, const char *value)
{
	size_t i;

	for (i = 0; i < j->n; i++)
		if (strlen(j->names[i]) == name_len && !strncmp(j->names[i], name, name_len))
			break;
	if (i == j->n) {
		j->names = gc_xrealloc(j->names, (j->n + 1) * sizeof(*j->names));
		j->values = gc_xrealloc(j->values, (j->n + 1) * sizeof(*j->values));
		j->names[j->n++] = gc_xstrndup(name, name_len);
	} else {
		free(j->values[i]);
	}
	j->values[i] = gc_xstrdup(value);
}

/* A secret's value: NULL when its variable is unset (an empty value is a value). */
static const char *secret_value(const struct gc_cmd_ctx *ctx, const char *name)
{
	if (ctx->env && ctx->env->lookup)
		return ctx->env->lookup(ctx->env->ctx, name);
	return getenv(name);
}

int gc_job_env_load(struct gc_job_env *j, struct gc_cmd_ctx *ctx)
{
	const struct gc_spec *spec = ctx->spec;
	const char *const *given;
	size_t n_given, n_unset = 0;

	for (size_t i = 0; i < spec->n_envs; i++)
		job_set(j, spec->envs[i].key, strlen(spec->envs[i].key), spec->envs[i].value);
	given = gc_cmd_opt_list(ctx, "env", &n_given);
	for (size_t i = 0; i < n_given; i++) {
		const char *eq = strchr(given[i], '=');
		char *name = eq ? gc_xstrndup(given[i], (size_t)(eq - given[i])) : NULL;
		bool ok = name && gc_sh_name_ok(name);

		free(name);
		if (!ok) {
			gc_out_error(ctx->out,
				     "--env '%s': expected NAME=VALUE, NAME of A-Z, a-z, "
				     "0-9 and _, not starting with a digit",
				     given[i]);
			return GC_EXIT_USAGE;
		}
		for (size_t k = 0; k < spec->n_secrets; k++) {
			if (strlen(spec->secrets[k]) == (size_t)(eq - given[i]) &&
			    !strncmp(spec->secrets[k], given[i], (size_t)(eq - given[i]))) {
				gc_out_error(
					ctx->out,
					"--env '%s': '%s' is a secret of the spec: its value "
					"comes from your environment, never from a command line",
					given[i], spec->secrets[k]);
				return GC_EXIT_USAGE;
			}
		}
		job_set(j, given[i], (size_t)(eq - given[i]), eq + 1);
	}
	for (size_t i = 0; i < spec->n_secrets; i++) {
		const char *v = secret_value(ctx, spec->secrets[i]);

		if (!v) {
			gc_out_error(ctx->out,
				     "secret '%s' (%s: secrets) is not set in your environment",
				     spec->secrets[i], ctx->spec_file);
			n_unset++;
			continue;
		}
		gc_log_add_secret(ctx->log, v);
		job_set(j, spec->secrets[i], strlen(spec->secrets[i]), v);
		j->n_secrets++;
	}
	if (n_unset) {
		gc_out_hint(ctx->out,
			    "export %s before '%s run': a secret's value is read from the "
			    "environment when the job starts",
			    n_unset == 1 ? "it" : "them", GC_PROGRAM);
		return GC_EXIT_FAILURE;
	}
	gc_gha_flush_masks(ctx->gha);
	return GC_EXIT_OK;
}

char *gc_job_env_script(const struct gc_job_env *j)
{
	struct gc_buf b = GC_BUF_INIT(0);

	/* the runner keeps a step's script in a file for the wrapper to run: with secrets in
	 * it, the job removes it before anything else (bash reads on from its open file) */
	if (j->n_secrets)
		gc_buf_addstr(&b, "rm -f -- \"$0\" 2>/dev/null || true\n");
	for (size_t i = 0; i < j->n; i++) {
		gc_buf_addf(&b, "export %s=", j->names[i]);
		gc_sh_quote(&b, j->values[i]);
		gc_buf_addch(&b, '\n');
	}
	return gc_buf_detach(&b, NULL);
}

void gc_job_env_release(struct gc_job_env *j)
{
	for (size_t i = 0; i < j->n; i++) {
		gc_wipe(j->values[i], strlen(j->values[i]));
		free(j->values[i]);
		free(j->names[i]);
	}
	free(j->names);
	free(j->values);
	gc_job_env_init(j);
}

/* ---- detached jobs ---------------------------------------------------------------------- */

bool gc_job_id_ok(const char *id)
{
	size_t n = strlen(id);

	return n >= 1 && n <= 47 && strspn(id, "0123456789-") == n;
}

/* Run by the supervisor with the job's folder as $1: the job, its output, its exit. */
static const char job_wrap[] =
	"gc_j=$1\n"
	"cd \"$HOME\" 2>/dev/null || cd /\n"
	"cat /proc/sys/kernel/random/boot_id >\"$gc_j/boot_id\"\n"
	"echo $$ >\"$gc_j/pid\"\n"
	". \"$gc_j/env.sh\"\n"
	"bash \"$gc_j/job.sh\" >>\"$gc_j/output.log\" 2>&1 </dev/null\n"
	"echo $? >\"$gc_j/exit.tmp\" && mv -f \"$gc_j/exit.tmp\" \"$gc_j/exit\"\n"
	/* run --down --detach: the node powers itself off (docs/internals/idle.md) */
	"if [ -f \"$gc_j/down\" ]; then\n"
	"\techo \"gpucluster: job ended (exit $(cat \"$gc_j/exit\")); powering this node off\" "
	">>\"$gc_j/output.log\"\n"
	"\tsync; sudo -n shutdown -h now >>\"$gc_j/output.log\" 2>&1 || sudo -n poweroff\n"
	"fi\n";

char *gc_job_launch_script(const struct gc_cmd_ctx *ctx, const char *job_env)
{
	struct gc_buf s = GC_BUF_INIT(0), job = GC_BUF_INIT(0);

	gc_buf_addf(&job, "%s(\n", job_env ? job_env : "");
	for (size_t i = 0; i < ctx->n_cmd; i++)
		gc_buf_addf(&job, "%s%s", i ? " " : "", ctx->cmd[i]);
	gc_buf_addstr(&job, "\n)\n");
	/* the launcher is the runner's script file, which holds the job's secrets too */
	gc_buf_addstr(&s,
		      "rm -f -- \"$0\" 2>/dev/null || true\n"
		      "umask 077\n"
		      "gc_j=\"$HOME/.gpucluster/jobs/$GPUCLUSTER_RUN_ID\"\n"
		      "mkdir -p \"$gc_j\" || exit 1\n");
	if (gc_cmd_opt_given(ctx, "down"))
		gc_buf_addstr(&s,
			      "sudo -n true 2>/dev/null || { echo 'run --down --detach: the "
			      "node cannot power itself off: sudo needs a password' >&2; "
			      "exit 1; }\n"
			      ": >\"$gc_j/down\" || exit 1\n");
	gc_buf_addstr(&s,
		      "declare -p MASTER_ADDR MASTER_PORT NNODES NODE_RANK NPROC_PER_NODE "
		      "GPUCLUSTER_NODE GPUCLUSTER_RUN_ID >\"$gc_j/env.sh\" || exit 1\n"
		      "printf '%s' ");
	gc_sh_quote(&s, job.data);
	gc_buf_addstr(&s, " >\"$gc_j/job.sh\" || exit 1\nprintf '%s' ");
	gc_sh_quote(&s, job_wrap);
	gc_buf_addstr(
		&s,
		" >\"$gc_j/wrap.sh\" || exit 1\n"
		"if command -v systemd-run >/dev/null 2>&1 && sudo -n true 2>/dev/null; then\n"
		"\tsudo -n systemd-run --quiet --collect "
		"--unit \"gpucluster-job-$GPUCLUSTER_RUN_ID\" --uid \"$(id -u)\" "
		"--gid \"$(id -g)\" --setenv HOME=\"$HOME\" "
		"bash \"$gc_j/wrap.sh\" \"$gc_j\" || exit 1\n"
		"\techo \"gpucluster-job-$GPUCLUSTER_RUN_ID\" >\"$gc_j/unit\"\n"
		"else\n"
		"\tsetsid nohup bash \"$gc_j/wrap.sh\" \"$gc_j\" >/dev/null 2>&1 </dev/null &\n"
		"fi\n"
		"echo \"job $GPUCLUSTER_RUN_ID started\"\n");
	gc_keypair_wipe_buf(&job);
	return gc_buf_detach(&s, NULL);
}

const char gc_job_state_fn[] =
	"gc_job_state() {\n"
	"\tif [ -f \"$1/exit\" ]; then echo \"exited $(cat \"$1/exit\")\"\n"
	"\telif [ ! -f \"$1/boot_id\" ]; then echo starting\n"
	"\telif [ \"$(cat \"$1/boot_id\")\" != \"$(cat /proc/sys/kernel/random/boot_id)\" ]; then "
	"echo lost\n"
	"\telif [ -f \"$1/unit\" ] && systemctl is-active --quiet \"$(cat \"$1/unit\")\"; then "
	"echo running\n"
	"\telif [ ! -f \"$1/unit\" ] && kill -0 \"$(cat \"$1/pid\" 2>/dev/null)\" 2>/dev/null; then "
	"echo running\n"
	"\telif [ -f \"$1/exit\" ]; then echo \"exited $(cat \"$1/exit\")\"\n"
	"\telse echo lost; fi\n"
	"}\n";

void gc_job_print_line(struct gc_output *o, const struct gc_boot *boot, int width,
		       const struct gc_runner_line *l)
{
	FILE *s = l->is_stderr ? o->err : o->out;
	const char *label = boot && l->node < boot->n_nodes ? boot->info[l->node].label : "?";
	struct gc_buf line = GC_BUF_INIT(0);

	gc_buf_addf(&line, "[%s]%*s ", label, width - (int)strlen(label), "");
	if (gc_buf_add(&line, l->text, l->len) < 0)
		gc_buf_addstr(&line, "(line too long)");
	gc_buf_addch(&line, '\n');
	fwrite(line.data, 1, line.len, s);
	fflush(s);
	gc_buf_release(&line);
}
