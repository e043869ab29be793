/*
 * workdir.c: the job's code synced to every node before it runs (cmd/workdir.h,
 * docs/internals/jobs.md "The workdir").
 */
#include "cmd/workdir.h"

#include <dirent.h>
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "bootstrap/session.h"
#include "bootstrap/ssh.h"
#include "cmd/boot.h"
#include "cmd/output.h"
#include "core/alloc.h"
#include "core/buf.h"
#include "core/keygen.h"

static bool glob_match(const char *pat, const char *rel, bool is_dir)
{
	char p[1024];
	size_t len = strlen(pat);
	bool dir_only = false;
	const char *base;

	if (len && pat[len - 1] == '/') {
		dir_only = true;
		len--;
	}
	if (!len || len >= sizeof(p) || (dir_only && !is_dir))
		return false;
	memcpy(p, pat, len);
	p[len] = '\0';
	if (strchr(p, '/')) /* anchored at the root */
		return fnmatch(p[0] == '/' ? p + 1 : p, rel, FNM_PATHNAME | FNM_PERIOD) == 0;
	base = strrchr(rel, '/');
	return fnmatch(p, base ? base + 1 : rel, 0) == 0;
}

bool gc_workdir_ignored(const char *const *patterns, size_t n, const char *rel, bool is_dir)
{
	bool ignored = glob_match(".git", rel, is_dir);

	for (size_t i = 0; i < n; i++) {
		const char *p = patterns[i];
		bool neg = p[0] == '!';

		if (glob_match(neg ? p + 1 : p, rel, is_dir))
			ignored = !neg;
	}
	return ignored;
}

struct walk {
	struct gc_workdir *w;
	size_t alloc;
	char **patterns;
	size_t n_patterns;
	struct gc_error *err;
};

static int add_file(struct walk *k, const char *full, const char *rel, const struct stat *st)
{
	struct gc_workdir *w = k->w;
	struct gc_buf b = GC_BUF_INIT(GC_WORKDIR_MAX_BYTES + 1);
	struct gc_workdir_file *f;

	if (w->n >= GC_WORKDIR_MAX_FILES)
		return gc_error_set(k->err, GC_ETOOBIG,
				    "more than %d files (list the rest in " GC_WORKDIR_IGNORE ")",
				    GC_WORKDIR_MAX_FILES);
	w->bytes += (uint64_t)st->st_size;
	if (w->bytes > GC_WORKDIR_MAX_BYTES)
		return gc_error_set(k->err, GC_ETOOBIG,
				    "more than %llu MiB of files (list what the job does not "
				    "need in " GC_WORKDIR_IGNORE "; data belongs in a bucket)",
				    (unsigned long long)(GC_WORKDIR_MAX_BYTES >> 20));
	if (gc_buf_read_file(&b, full, rel, NULL, k->err) < 0) {
		gc_buf_release(&b);
		return -1;
	}
	GC_ALLOC_GROW(w->files, w->n + 1, k->alloc);
	f = &w->files[w->n++];
	f->path = gc_xstrdup(rel);
	f->size = b.len;
	f->mode = (unsigned)st->st_mode & 0777;
	gc_sha256_hex(b.data, b.len, f->sha);
	f->sha[GC_SHA256_HEX_LEN] = '\0';
	gc_buf_release(&b);
	return 0;
}

static int walk_dir(struct walk *k, const char *full, const char *rel)
{
	DIR *d = opendir(full);
	struct dirent *de;
	int rc = 0;

	if (!d)
		return gc_error_set(k->err, GC_EIO, "cannot read '%s': %s", full, strerror(errno));
	while (rc == 0 && (de = readdir(d))) {
		char *f, *r;
		struct stat st;

		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (strchr(de->d_name, '\n')) {
			rc = gc_error_set(k->err, GC_EINVALID, "'%s' has a name with a line break",
					  full);
			break;
		}
		f = gc_xasprintf("%s/%s", full, de->d_name);
		r = *rel ? gc_xasprintf("%s/%s", rel, de->d_name) : gc_xstrdup(de->d_name);
		if (lstat(f, &st) < 0) {
			rc = gc_error_set(k->err, GC_EIO, "cannot read '%s': %s", f,
					  strerror(errno));
		} else if (S_ISDIR(st.st_mode)) {
			if (gc_workdir_ignored((const char *const *)k->patterns, k->n_patterns, r,
					       true))
				k->w->n_ignored++;
			else
				rc = walk_dir(k, f, r);
		} else if (S_ISREG(st.st_mode)) {
			if (gc_workdir_ignored((const char *const *)k->patterns, k->n_patterns, r,
					       false))
				k->w->n_ignored++;
			else
				rc = add_file(k, f, r, &st);
		}
		free(f);
		free(r);
	}
	closedir(d);
	return rc;
}

/* The ignore file's patterns: no blank lines, no comments, no trailing blanks. */
static int read_ignore(struct walk *k, const char *dir)
{
	struct gc_buf b = GC_BUF_INIT(1 << 20);
	char *path = gc_xasprintf("%s/" GC_WORKDIR_IGNORE, dir), *line, *save = NULL;
	size_t alloc = 0;
	bool found;
	int rc = gc_buf_read_file(&b, path, NULL, &found, k->err);

	free(path);
	if (rc < 0 || !found) {
		gc_buf_release(&b);
		return rc;
	}
	gc_buf_addch(&b, '\0');
	for (line = strtok_r(b.data, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		size_t len = strlen(line);

		while (len &&
		       (line[len - 1] == ' ' || line[len - 1] == '\r' || line[len - 1] == '\t'))
			line[--len] = '\0';
		if (!len || line[0] == '#')
			continue;
		GC_ALLOC_GROW(k->patterns, k->n_patterns + 1, alloc);
		k->patterns[k->n_patterns++] = gc_xstrdup(line);
	}
	gc_buf_release(&b);
	return 0;
}

static int file_cmp(const void *a, const void *b)
{
	return strcmp(((const struct gc_workdir_file *)a)->path,
		      ((const struct gc_workdir_file *)b)->path);
}

int gc_workdir_scan(const char *dir, struct gc_workdir *w, struct gc_error *err)
{
	struct walk k = { .w = w, .err = err };
	struct stat st;
	int rc;

	memset(w, 0, sizeof(*w));
	if (stat(dir, &st) < 0)
		return gc_error_set(err, errno == ENOENT ? GC_ENOTFOUND : GC_EIO, "'%s' %s", dir,
				    errno == ENOENT ? "does not exist" : strerror(errno));
	if (!S_ISDIR(st.st_mode))
		return gc_error_set(err, GC_EINVALID, "'%s' is not a directory", dir);
	w->root = gc_xstrdup(dir);
	rc = read_ignore(&k, dir);
	if (rc == 0)
		rc = walk_dir(&k, dir, "");
	gc_strv_free(k.patterns, k.n_patterns);
	if (rc == 0 && w->n)
		qsort(w->files, w->n, sizeof(*w->files), file_cmp);
	return rc;
}

void gc_workdir_release(struct gc_workdir *w)
{
	for (size_t i = 0; w->files && i < w->n; i++)
		free(w->files[i].path);
	free(w->files);
	free(w->root);
	memset(w, 0, sizeof(*w));
}

static void manifest_line(struct gc_buf *b, const struct gc_workdir_file *f)
{
	gc_buf_addf(b, "%s %llu %o %s\n", f->sha, (unsigned long long)f->size, f->mode, f->path);
}

char *gc_workdir_manifest(const struct gc_workdir *w)
{
	struct gc_buf b = GC_BUF_INIT(GC_BUF_DEFAULT_MAX);

	gc_buf_addstr(&b, "");
	for (size_t i = 0; i < w->n; i++)
		manifest_line(&b, &w->files[i]);
	return gc_buf_detach(&b, NULL);
}

/* ---- the sync -------------------------------------------------------------------------- */

static const char read_script[] = "cat \"" GC_WORKDIR_MANIFEST "\" 2>/dev/null; true\n";

/* Whether the manifest text (a node's) holds exactly this line. */
static bool has_line(const char *text, size_t len, const char *line, size_t llen)
{
	const char *p = text, *end = text + len;

	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		size_t l = nl ? (size_t)(nl - p) : (size_t)(end - p);

		if (l == llen && !memcmp(p, line, l))
			return true;
		p += l + (nl != NULL);
	}
	return false;
}

static bool local_has(const struct gc_workdir *w, const char *path)
{
	size_t lo = 0, hi = w->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(path, w->files[mid].path);

		if (!c)
			return true;
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return false;
}

/* What every node lacks or holds too much, as a script; counts into *files, *bytes and
 * *removed. */
static char *sync_script(const struct gc_workdir *w, const struct gc_session *s, size_t *files,
			 uint64_t *bytes, size_t *removed, struct gc_error *err)
{
	struct gc_buf b = GC_BUF_INIT(GC_BUF_DEFAULT_MAX), line = GC_BUF_INIT(8192);
	char *manifest = gc_workdir_manifest(w);
	char **gone = NULL;
	size_t n_gone = 0, alloc = 0;

	*files = 0;
	*bytes = 0;
	gc_buf_addstr(&b,
		      "set -e\numask 022\nmkdir -p \"" GC_WORKDIR_REMOTE
		      "\"\ncd \"" GC_WORKDIR_REMOTE "\"\n");
	/* files gone from the workdir that some node still has */
	for (size_t i = 0; i < s->boot.n_nodes; i++) {
		const struct gc_buf *o = &s->report.nodes[i].steps[0].out;
		const char *p = o->data, *end = p + o->len;

		while (p && p < end) {
			const char *nl = memchr(p, '\n', (size_t)(end - p));
			size_t l = nl ? (size_t)(nl - p) : (size_t)(end - p);
			char *ln = gc_xasprintf("%.*s", (int)l, p), *path = ln;

			for (int f = 0; f < 3 && path; f++)
				path = strchr(path, ' ') ? strchr(path, ' ') + 1 : NULL;
			if (path && *path && !local_has(w, path)) {
				bool seen = false;

				for (size_t g = 0; g < n_gone && !seen; g++)
					seen = !strcmp(gone[g], path);
				if (!seen) {
					GC_ALLOC_GROW(gone, n_gone + 1, alloc);
					gone[n_gone++] = gc_xstrdup(path);
					gc_buf_addstr(&b, "rm -f -- ");
					gc_sh_quote(&b, path);
					gc_buf_addch(&b, '\n');
				}
			}
			free(ln);
			p += l + (nl != NULL);
		}
	}
	*removed = n_gone;
	gc_strv_free(gone, n_gone);
	for (size_t i = 0; i < w->n; i++) {
		const struct gc_workdir_file *f = &w->files[i];
		struct gc_buf data = GC_BUF_INIT(GC_WORKDIR_MAX_BYTES + 1);
		char *full;
		bool send = false;

		gc_buf_reset(&line);
		manifest_line(&line, f);
		for (size_t n = 0; n < s->boot.n_nodes && !send; n++) {
			const struct gc_buf *o = &s->report.nodes[n].steps[0].out;

			send = !has_line(o->data, o->len, line.data, line.len - 1);
		}
		if (!send)
			continue;
		full = gc_xasprintf("%s/%s", w->root, f->path);
		if (gc_buf_read_file(&data, full, f->path, NULL, err) < 0) {
			free(full);
			gc_buf_release(&data);
			goto fail;
		}
		free(full);
		if (strchr(f->path, '/')) {
			gc_buf_addstr(&b, "mkdir -p -- \"$(dirname -- ");
			gc_sh_quote(&b, f->path);
			gc_buf_addstr(&b, ")\"\n");
		}
		gc_buf_addstr(&b, "base64 -d >.gc-part <<'GC_WORKDIR_EOF'\n");
		if (gc_base64_encode(&b, data.data, data.len) < 0) {
			gc_buf_release(&data);
			gc_error_set(err, GC_ETOOBIG, "the workdir does not fit in one sync");
			goto fail;
		}
		gc_buf_release(&data);
		gc_buf_addf(&b, "\nGC_WORKDIR_EOF\nchmod %o .gc-part\nmv -f .gc-part ", f->mode);
		gc_sh_quote(&b, f->path);
		gc_buf_addch(&b, '\n');
		(*files)++;
		*bytes += f->size;
	}
	gc_buf_addstr(&b, "cat >\"" GC_WORKDIR_MANIFEST ".new\" <<'GC_WORKDIR_EOF'\n");
	gc_buf_addstr(&b, manifest);
	gc_buf_addstr(&b,
		      "GC_WORKDIR_EOF\nmv -f \"" GC_WORKDIR_MANIFEST ".new\" \"" GC_WORKDIR_MANIFEST
		      "\"\n");
	free(manifest);
	gc_buf_release(&line);
	return gc_buf_detach(&b, NULL);
fail:
	free(manifest);
	gc_buf_release(&line);
	gc_buf_release(&b);
	return NULL;
}

/* One runner pass; reports nodes that failed. Returns an exit code. */
static int pass(struct gc_cmd_ctx *ctx, struct gc_engine *e, const char *script,
		struct gc_session *s)
{
	struct gc_session_opts o = { .mode = GC_BOOT_EXEC };
	int rc;

	o.command = script;
	o.timeout_ms = 600000;
	rc = gc_cmd_boot_run(ctx, e, NULL, &o, s);
	for (size_t i = 0; s->ran && i < s->boot.n_nodes; i++) {
		const struct gc_runner_node_result *r = &s->report.nodes[i];

		if (r->err.code != GC_OK)
			gc_out_error(ctx->out, "workdir: %s: %s", s->boot.info[i].label,
				     r->err.message);
	}
	return rc;
}

int gc_cmd_workdir_sync(struct gc_cmd_ctx *ctx, struct gc_engine *e, const struct gc_workdir *w)
{
	struct gc_session read, write;
	struct gc_error err;
	size_t files = 0, removed = 0;
	uint64_t bytes = 0;
	char *script = NULL;
	int rc;

	gc_error_init(&err);
	gc_session_init(&read);
	gc_session_init(&write);
	rc = pass(ctx, e, read_script, &read);
	if (rc != GC_EXIT_OK || !read.ran)
		goto out;
	script = sync_script(w, &read, &files, &bytes, &removed, &err);
	if (!script) {
		gc_out_error(ctx->out, "workdir '%s': %s", w->root, err.message);
		rc = GC_EXIT_FAILURE;
		goto out;
	}
	if (files || removed || w->n == 0)
		rc = pass(ctx, e, script, &write);
	if (rc == GC_EXIT_OK)
		gc_out_printf(ctx->out, ctx->out->err,
			      "workdir: %zu file%s, %llu bytes sent, %zu removed, to %zu node%s "
			      "(%zu files in all, %zu ignored)\n",
			      files, files == 1 ? "" : "s", (unsigned long long)bytes, removed,
			      read.boot.n_nodes, read.boot.n_nodes == 1 ? "" : "s", w->n,
			      w->n_ignored);
out:
	free(script);
	gc_session_release(&read);
	gc_session_release(&write);
	return rc;
}
