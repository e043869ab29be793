/*
 * workdir.h: the job's code (spec `workdir`, `run --workdir DIR`), synced to every node
 * before the job, incrementally: each node keeps a manifest (SHA-256, size, mode, path of
 * every file it holds); run reads them, sends the files that differ on any node and
 * removes the ones gone. docs/internals/jobs.md ("The workdir").
 *
 * Life cycle: gc_workdir_scan (before anything is created: a missing or too large workdir
 * is an error there) -> gc_cmd_workdir_sync (after the apply, before the job) ->
 * gc_workdir_release.
 */
#ifndef GC_CMD_WORKDIR_H
#define GC_CMD_WORKDIR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cmd/cmd.h"
#include "core/error.h"
#include "core/hash.h"

struct gc_engine;

#define GC_WORKDIR_MAX_BYTES ((uint64_t)32 << 20) /* the files' total size after ignores */
#define GC_WORKDIR_MAX_FILES 10000
#define GC_WORKDIR_IGNORE    ".gpuclusterignore"
/* where it lands on each node (the job starts there), and the node's manifest */
#define GC_WORKDIR_REMOTE   "$HOME/gpucluster/workdir"
#define GC_WORKDIR_MANIFEST "$HOME/gpucluster/workdir.manifest"

struct gc_workdir_file {
	char *path; /* relative, '/'-separated */
	uint64_t size;
	unsigned mode; /* permission bits */
	char sha[GC_SHA256_HEX_LEN + 1];
};

struct gc_workdir {
	char *root;
	struct gc_workdir_file *files; /* sorted by path */
	size_t n;
	uint64_t bytes;
	size_t n_ignored;
};

/* Whether rel (a path under the workdir, '/'-separated) is ignored by the patterns (the
 * lines of an ignore file: gitignore-like globs, '!' negates, a trailing '/' matches
 * directories only, a '/' elsewhere anchors the pattern at the root). `.git` always is. */
bool gc_workdir_ignored(const char *const *patterns, size_t n, const char *rel, bool is_dir);

/* Walks dir (regular files; symbolic links and special files are skipped), honouring its
 * ignore file, and hashes what is left. GC_ENOTFOUND when dir does not exist, GC_EINVALID
 * when it is not a directory or a name holds a newline, GC_ETOOBIG past the limits. */
int gc_workdir_scan(const char *dir, struct gc_workdir *w, struct gc_error *err);
void gc_workdir_release(struct gc_workdir *w);

/* One manifest line per file: "SHA SIZE MODE PATH\n". */
char *gc_workdir_manifest(const struct gc_workdir *w);

/* Syncs w to every running node of the cluster (after the apply); prints what it sent.
 * Returns an exit code. */
int gc_cmd_workdir_sync(struct gc_cmd_ctx *ctx, struct gc_engine *e, const struct gc_workdir *w);

#endif
