/*
 * frontend.c: the table of the emulator's clouds (frontend.h), one line each, and the
 * lookups by index and name. Each row is defined in its cloud's folder.
 */
#include <stdio.h>
#include <string.h>

#include "sim/frontend.h"

extern const struct sim_frontend sim_frontend_aws;     /* sim/aws/ec2.c */
extern const struct sim_frontend sim_frontend_alibaba; /* sim/alibaba/ecs.c */
extern const struct sim_frontend sim_frontend_tencent; /* sim/tencent/cvm.c */

static const struct sim_frontend *const frontends[SIM_NCLOUDS] = {
	[SIM_AWS] = &sim_frontend_aws,
	[SIM_ALIBABA] = &sim_frontend_alibaba,
	[SIM_TENCENT] = &sim_frontend_tencent,
};

const struct sim_frontend *sim_frontend(enum sim_cloud c)
{
	return frontends[c];
}

const char *sim_cloud_name(enum sim_cloud c)
{
	return (unsigned)c < SIM_NCLOUDS ? frontends[c]->name : "?";
}

int sim_cloud_parse(const char *name, enum sim_cloud *out)
{
	for (unsigned i = 0; i < SIM_NCLOUDS; i++) {
		if (!strcmp(name, frontends[i]->name)) {
			*out = (enum sim_cloud)i;
			return 0;
		}
	}
	return -1;
}

void sim_cloud_names(char *out, size_t size)
{
	size_t n = 0;

	out[0] = '\0';
	for (unsigned i = 0; i < SIM_NCLOUDS && n < size; i++)
		n += (size_t)snprintf(out + n, size - n, "%s%s", i ? ", " : "", frontends[i]->name);
}
