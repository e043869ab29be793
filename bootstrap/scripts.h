/*
 * scripts.h: the bootstrap step scripts and the smoke program, embedded in gpucluster.
 *
 * templates/embed.cmake generates the table at build time from the .sh files of
 * templates/bootstrap (lib.sh, detect.sh, driver.sh, cuda.sh, cudnn.sh, container.sh,
 * verify.sh, smoke.sh) and templates/smoke/smoke.cu. The runner copies every file into one directory on the node
 * and runs `bash DIR/STEP.sh` with the step's inputs in the environment; the interface of
 * each script (variables, exit codes, the smoke JSON) is in docs/bootstrap.md.
 *
 * Invariants: names are bare file names, unique, sorted (strcmp order); data is
 * NUL-terminated for convenience and len excludes the NUL. Read-only static data, no life
 * cycle.
 */
#ifndef GC_BOOTSTRAP_SCRIPTS_H
#define GC_BOOTSTRAP_SCRIPTS_H

#include <stddef.h>
#include <string.h>

/* A step's exit status that asks the runner to reboot the node and run the step again. */
#define GC_BOOTSTRAP_EXIT_REBOOT 100

struct gc_bootstrap_file {
	const char *name; /* "driver.sh", "smoke.cu" */
	const unsigned char *data;
	size_t len;
};

extern const struct gc_bootstrap_file gc_bootstrap_files[];
extern const size_t gc_bootstrap_nfiles;

/* The embedded file called name, or NULL. */
static inline const struct gc_bootstrap_file *gc_bootstrap_file_find(const char *name)
{
	for (size_t i = 0; i < gc_bootstrap_nfiles; i++)
		if (strcmp(gc_bootstrap_files[i].name, name) == 0)
			return &gc_bootstrap_files[i];
	return NULL;
}

#endif
