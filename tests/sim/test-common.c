/*
 * test-common.c: the helpers every emulator frontend shares (sim/common.c): parameter
 * name patterns, client-token fingerprints, Alibaba nonce memory, request ids and
 * credentials; and the frontend table every shared part reads (sim/frontend.c).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "sim/catalog.h"
#include "sim/sim.h"

static void test_param_match(void **state)
{
	unsigned bad = 99;

	(void)state;
	assert_true(sim_param_match("ImageId", "ImageId", 1000, &bad));
	assert_int_equal(bad, 0);
	assert_false(sim_param_match("ImageId", "ImageIds", 1000, &bad));
	assert_false(sim_param_match("ImageId", "Image", 1000, &bad));
	assert_true(sim_param_match("InstanceId.N", "InstanceId.1", 1000, &bad));
	assert_true(sim_param_match("InstanceId.N", "InstanceId.1000", 1000, &bad));
	assert_int_equal(bad, 0);
	assert_false(sim_param_match("InstanceId.N", "InstanceId.", 1000, &bad));
	assert_false(sim_param_match("InstanceId.N", "InstanceId.0", 1000, &bad));
	assert_false(sim_param_match("InstanceId.N", "InstanceId.01", 1000, &bad));
	assert_false(sim_param_match("InstanceId.N", "InstanceId.x", 1000, &bad));
	assert_false(sim_param_match("InstanceId.N", "InstanceId.1.2", 1000, &bad));
	assert_true(sim_param_match("Filter.N.Value.N", "Filter.3.Value.10", 1000, &bad));
	assert_false(sim_param_match("Filter.N.Value.N", "Filter.3.Name", 1000, &bad));
	assert_false(sim_param_match("Filter.N.Value.N", "Filter.3.Value", 1000, &bad));
	/* a literal N inside a name is not a placeholder */
	assert_true(sim_param_match("NetworkInterface.N.DeviceIndex",
				    "NetworkInterface.2.DeviceIndex", 10, &bad));
	assert_false(sim_param_match("NetworkInterface.N.DeviceIndex",
				     "3etworkInterface.2.DeviceIndex", 10, &bad));

	/* out of range: still a match, the index reported */
	bad = 0;
	assert_true(sim_param_match("InstanceId.N", "InstanceId.1001", 1000, &bad));
	assert_int_equal(bad, 1001);
	bad = 0;
	assert_true(sim_param_match("Tag.N.Key", "Tag.51.Key", 50, &bad));
	assert_int_equal(bad, 51);
	assert_true(sim_param_match("Tag.N.Key", "Tag.5.Key", 50, NULL));
}

static void test_fingerprint(void **state)
{
	static const char *const skip[] = { "ClientToken", NULL };
	struct gc_params a = GC_PARAMS_INIT, b = GC_PARAMS_INIT, c = GC_PARAMS_INIT;
	char fa[65], fb[65], fc[65];

	(void)state;
	gc_params_add(&a, "ImageId", "ami-1");
	gc_params_add(&a, "MaxCount", "2");
	gc_params_add(&a, "ClientToken", "t1");
	/* same parameters in another order, another token: same fingerprint */
	gc_params_add(&b, "ClientToken", "t2");
	gc_params_add(&b, "MaxCount", "2");
	gc_params_add(&b, "ImageId", "ami-1");
	/* one value differs */
	gc_params_add(&c, "ImageId", "ami-1");
	gc_params_add(&c, "MaxCount", "3");
	sim_params_fingerprint(&a, skip, fa);
	sim_params_fingerprint(&b, skip, fb);
	sim_params_fingerprint(&c, skip, fc);
	assert_int_equal(strlen(fa), 64);
	assert_string_equal(fa, fb);
	assert_string_not_equal(fa, fc);
	/* without the skip list the token counts */
	sim_params_fingerprint(&a, NULL, fb);
	assert_string_not_equal(fa, fb);
	gc_params_release(&a);
	gc_params_release(&b);
	gc_params_release(&c);
}

static void test_nonces(void **state)
{
	struct sim sim;

	(void)state;
	memset(&sim, 0, sizeof(sim));
	sim.nonces = sim_nonces_new();
	assert_true(sim_nonce_fresh(&sim, "n-1", 1000));
	assert_true(sim_nonce_fresh(&sim, "n-2", 1000));
	assert_false(sim_nonce_fresh(&sim, "n-1", 1000 + 60));
	assert_false(sim_nonce_fresh(&sim, "n-1", 1000 + 15 * 60));
	/* past the 15-minute window the nonce has been forgotten */
	assert_true(sim_nonce_fresh(&sim, "n-2", 1000 + 15 * 60 + 1));
	assert_false(sim_nonce_fresh(&sim, "n-2", 1000 + 15 * 60 + 2));
	for (int i = 0; i < 10000; i++) {
		char n[32];
		snprintf(n, sizeof(n), "bulk-%d", i);
		assert_true(sim_nonce_fresh(&sim, n, 5000));
	}
	assert_false(sim_nonce_fresh(&sim, "bulk-4321", 5001));
	sim_nonces_free(sim.nonces);
	sim_nonces_free(NULL);
}

static void test_ids_and_creds(void **state)
{
	struct sim sim;
	char a[37], b[37];

	(void)state;
	memset(&sim, 0, sizeof(sim));
	sim_config_defaults(&sim.cfg);
	sim_request_id(&sim, false, a);
	sim_request_id(&sim, true, b);
	assert_int_equal(strlen(a), 36);
	assert_int_equal(a[8], '-');
	assert_int_equal(a[14], '4');
	assert_string_not_equal(a, b);
	for (const char *p = b; *p; p++)
		assert_false(*p >= 'a' && *p <= 'z');

	assert_string_equal(sim_cred_secret(&sim, SIM_AWS, "AKIAGPUCLUSTERSIM001"),
			    "gpucluster-sim-aws-secret-key-0000000000");
	assert_string_equal(sim_cred_secret(&sim, SIM_ALIBABA, "LTAIgpuclustersim001"),
			    "gpucluster-sim-alibaba-secret-000000");
	assert_string_equal(sim_cred_secret(&sim, SIM_TENCENT, "AKIDgpuclustersim001"),
			    "gpucluster-sim-tencent-secret-000000");
	/* keys belong to their own cloud */
	assert_null(sim_cred_secret(&sim, SIM_TENCENT, "AKIAGPUCLUSTERSIM001"));
	assert_null(sim_cred_secret(&sim, SIM_AWS, "nobody"));
	assert_true(sim.cfg.max_body > 0);
}

static void test_resp(void **state)
{
	struct sim_resp r;

	(void)state;
	sim_resp_init(&r);
	assert_int_equal(r.status, 200);
	assert_false(r.drop);
	assert_null(r.log_params);
	gc_buf_addstr(&r.body, "hello");
	r.log_params = json_object();
	sim_resp_release(&r);
}

/* Every row is complete, so a new cloud's missing fact fails here, not in a run. */
static void test_frontend_rows(void **state)
{
	char names[SIM_CLOUD_NAMES_MAX];
	enum sim_cloud back;

	(void)state;
	for (int i = 0; i < SIM_NCLOUDS; i++) {
		enum sim_cloud c = (enum sim_cloud)i;
		const struct sim_frontend *fe = sim_frontend(c);

		assert_non_null(fe->name);
		assert_int_equal(sim_cloud_parse(fe->name, &back), 0);
		assert_int_equal(back, c);
		assert_non_null(fe->title);
		assert_non_null(fe->endpoint);
		assert_non_null(fe->handle);
		assert_non_null(fe->key_id);
		assert_non_null(fe->secret);
		assert_non_null(fe->audience);
		assert_non_null(fe->catalog);
		assert_true(fe->catalog->n_itypes && fe->catalog->n_images &&
			    fe->catalog->n_regions);
		for (int s = 0; s < SIM_NSTATES; s++)
			assert_non_null(fe->states[s]);
		assert_true(fe->id_len > 0);
		assert_non_null(fe->id_alphabet);
		assert_non_null(fe->instance_prefix);
		assert_non_null(fe->private_net);
		assert_non_null(fe->rate);
		assert_non_null(fe->kernels[0]);
		assert_non_null(fe->kernels[1]);
		assert_non_null(fe->hostname);
	}
	assert_int_equal(sim_cloud_parse("gcp", &back), -1);
	assert_string_equal(sim_cloud_name((enum sim_cloud)SIM_NCLOUDS), "?");
	sim_cloud_names(names, sizeof(names));
	assert_string_equal(names, "aws, alibaba, tencent");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_param_match), cmocka_unit_test(test_fingerprint),
		cmocka_unit_test(test_nonces),	    cmocka_unit_test(test_ids_and_creds),
		cmocka_unit_test(test_resp),	    cmocka_unit_test(test_frontend_rows),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
