/*
 * cmd-version.c: `gpucluster version`. Bug reports need the versions of the libraries
 * actually loaded, not the ones we compiled against, so each is asked at run time.
 */
#include <curl/curl.h>
#include <jansson.h>
#include <libssh2.h>
#include <openssl/crypto.h>
#include <yaml.h>

#include "cmd/cmd.h"
#include "cmd/output.h"

/* key in the JSON document, label in text, version */
struct lib_version {
	const char *key;
	const char *label;
	const char *version;
};

#define N_LIBS 5

static void lib_versions(struct lib_version v[N_LIBS])
{
	const char *ssh = libssh2_version(0);

	v[0] = (struct lib_version){ "libcurl", "libcurl", NULL };
	v[0].version = curl_version_info(CURLVERSION_NOW)->version;
	v[1] = (struct lib_version){ "openssl", "OpenSSL", NULL };
	v[1].version = OpenSSL_version(OPENSSL_VERSION_STRING);
	v[2] = (struct lib_version){ "libyaml", "libyaml", yaml_get_version_string() };
	v[3] = (struct lib_version){ "libssh2", "libssh2", ssh ? ssh : "unknown" };
	v[4] = (struct lib_version){ "jansson", "jansson", jansson_version_str() };
}

static int version_exec(struct gc_cmd_ctx *ctx)
{
	struct gc_output *out = ctx->out;
	struct lib_version libs[N_LIBS];
	int rc = GC_EXIT_OK;

	lib_versions(libs);
	if (ctx->globals.output == GC_OUTPUT_JSON) {
		json_t *doc = json_object();

		json_object_set_new(doc, "version", json_string(GC_VERSION));
		for (size_t i = 0; i < N_LIBS; i++)
			json_object_set_new(doc, libs[i].key, json_string(libs[i].version));
		if (gc_out_json(out, doc) < 0)
			rc = GC_EXIT_FAILURE;
		json_decref(doc);
		return rc;
	}
	gc_out_printf(out, out->out, "%s %s\n", GC_PROGRAM, GC_VERSION);
	if (ctx->globals.quiet)
		return rc;
	for (size_t i = 0; i < N_LIBS; i++)
		gc_out_printf(out, out->out, "%s%s %s", i ? ", " : "", libs[i].label,
			      libs[i].version);
	gc_out_puts(out, out->out, "\n");
	return rc;
}

const struct gc_cmd_entry gc_cmd_version = {
	.name = "version",
	.summary = "print the version of gpucluster and of the libraries it runs with",
	.usage = "",
	.description = "With -o json, prints {\"version\", \"libcurl\", \"openssl\", \"libyaml\",\n"
		       "\"libssh2\", \"jansson\"} as one JSON object.",
	.max_args = 0,
	.exec = version_exec,
};
