/*
 * sim-fixture.h: the emulator the frontend tests call into: a world and fault table on
 * the fake clock (fake-clock.h), rate limits off, default credentials, and the cmocka
 * setup and teardown that build and free it. Header-only; one test file at a time.
 */
#ifndef GC_TEST_SIM_FIXTURE_H
#define GC_TEST_SIM_FIXTURE_H

#include <string.h>

#include "fake-clock.h"
#include "sim/sim.h"

static struct sim sim;

static int setup(void **state)
{
	struct sim_timing t = { 1500, 1000, 3600000 };

	(void)state;
	memset(&sim, 0, sizeof(sim));
	fc.now = 1000 * MS;
	sim_config_defaults(&sim.cfg);
	sim.world = sim_world_new(&t, 42, &fake);
	sim.faults = sim_faults_new(7, &fake);
	sim_faults_set_rate_limits(sim.faults, false);
	sim.nonces = sim_nonces_new();
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	sim_world_free(sim.world);
	sim_faults_free(sim.faults);
	sim_nonces_free(sim.nonces);
	return 0;
}

#endif
