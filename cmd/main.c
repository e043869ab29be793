/*
 * main.c: the gpucluster executable. Everything happens in the dispatcher; main only
 * hands it the real command table, the real streams and the process environment, and
 * returns its exit code, so no code path ends the process anywhere else.
 */
#include <stdio.h>

#include "cmd/cmd.h"
#include "core/spec.h"

int main(int argc, char **argv)
{
	const struct gc_cmd_io io = {
		.in = stdin,
		.out = stdout,
		.err = stderr,
		.in_tty = -1,
		.out_tty = -1,
		.err_tty = -1,
		.env = &gc_spec_env_process,
	};

	return gc_cmd_dispatch(gc_cmd_table, gc_cmd_table_len, argc, argv, &io);
}
