/*
 * pricing.c: the AWS Price List Query API, GetProducts, as gpucluster-sim serves it.
 *
 * The real service lives on its own endpoint (api.pricing.us-east-1.amazonaws.com); here
 * it shares the AWS port, told apart by its X-Amz-Target header. It speaks the JSON 1.1
 * protocol: POST with Content-Type application/x-amz-json-1.1, SigV4 with the service
 * "pricing" scoped to a Price List region (us-east-1, eu-central-1, ap-south-1), errors
 * as {"__type": "...#Code", "message": ...} with HTTP 400 (500 for internal errors).
 *
 * The products are generated from the catalogue: for each AWS instance type and region,
 * Linux with no pre-installed software, in Shared and Dedicated tenancy, each with the
 * three capacity statuses real price lists carry (Used, UnusedCapacityReservation,
 * AllocatedCapacityReservation). A client that filters only on the instance type gets
 * six products, as from AWS; the filters gpucluster sends pin the one shared, "Used"
 * product. Its price is the catalogue's (Dedicated: 10% more), in every region. Each
 * PriceList entry is a JSON document serialised into a string, in the shape AWS sends:
 * product.attributes and terms.OnDemand.<sku.offer>.priceDimensions.<sku.offer.rate>
 * .pricePerUnit.USD, and terms.Reserved.<sku.offer> likewise with termAttributes
 * (LeaseContractLength, OfferingClass, PurchaseOption; reserved_terms below).
 */
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/alloc.h"
#include "core/hash.h"
#include "core/provider.h"
#include "core/str.h"
#include "sim/aws/aws.h"
#include "sim/catalog.h"

#define PRICING_PREFIX	    "AWSPriceListService."
#define PRICING_NS	    "com.amazon.awspricing#"
#define PRICING_VERSION	    "2017-10-15"
#define PRICING_MAX_RESULTS 100
#define PRICING_PUBLISHED   "2026-11-01T00:00:00Z"
#define PRICING_OFFER	    "JRTCKXETXF" /* the on-demand offer term code AWS uses */
#define PRICING_RATE	    "6YS6EN2CT7" /* the on-demand price dimension code */
#define PRICING_QUANTITY    "2TG2D8R56U" /* an upfront fee's price dimension code */

/* The Reserved terms of each product (terms.Reserved), as AWS codes them: the standard
 * class with no upfront fee for 1 and 3 years (an hourly rate, a share of on-demand so a
 * test can predict it), and 1 year all upfront (a fee and a zero hourly rate), which a
 * client that wants the no-upfront rate must step over. */
static const struct reserved_term {
	const char *code, *length, *option;
	double share;	      /* of on-demand, per hour */
	double upfront_hours; /* the fee, in hours of on-demand */
} reserved_terms[] = {
	{ "4NA7Y494T4", "1yr", "No Upfront", 0.62, 0 },
	{ "BPH4J8HBKS", "3yr", "No Upfront", 0.40, 0 },
	{ "6QCMYABX3D", "1yr", "All Upfront", 0, 8760 * 0.58 },
};

static const char *const tenancies[] = { "Shared", "Dedicated" };
static const char *const capacities[] = { "Used", "UnusedCapacityReservation",
					  "AllocatedCapacityReservation" };

bool sim_pricing_wants(const struct sim_req *req)
{
	const char *t = gc_params_get_ci(req->headers, "X-Amz-Target");

	return t && gc_starts_with(t, PRICING_PREFIX);
}

/* --- authentication (SigV4, service "pricing") -------------------------------------- */

static bool pricing_region(const char *r)
{
	return !strcmp(r, "us-east-1") || !strcmp(r, "eu-central-1") || !strcmp(r, "ap-south-1");
}

/* --- the products -------------------------------------------------------------------- */

static const char *location_of(const char *region)
{
	if (!strcmp(region, "us-east-1"))
		return "US East (N. Virginia)";
	if (!strcmp(region, "us-west-2"))
		return "US West (Oregon)";
	if (!strcmp(region, "eu-west-1"))
		return "EU (Ireland)";
	return region;
}

static const char *usage_prefix(const char *region)
{
	if (!strcmp(region, "us-east-1"))
		return "";
	if (!strcmp(region, "us-west-2"))
		return "USW2-";
	if (!strcmp(region, "eu-west-1"))
		return "EU-";
	return "";
}

/* A stable 16-character SKU, in AWS's alphabet, for one product. */
static void make_sku(const char *region, const char *type, const char *tenancy,
		     const char *capacity, char out[17])
{
	static const char alphabet[] = "ABCDEFGHJKMNPQRSTUVWXYZ23456789";
	unsigned char h[GC_SHA256_LEN];
	char *key = gc_xasprintf("%s|%s|%s|%s", region, type, tenancy, capacity);

	gc_sha256(key, strlen(key), h);
	free(key);
	for (size_t i = 0; i < 16; i++)
		out[i] = alphabet[h[i] % (sizeof(alphabet) - 1)];
	out[16] = '\0';
}

static json_t *product_attributes(const struct sim_itype *t, const char *region,
				  const char *tenancy, const char *capacity)
{
	json_t *a = json_object();
	char buf[96];

	json_object_set_new(a, "servicecode", json_string("AmazonEC2"));
	json_object_set_new(a, "servicename", json_string("Amazon Elastic Compute Cloud"));
	json_object_set_new(a, "location", json_string(location_of(region)));
	json_object_set_new(a, "locationType", json_string("AWS Region"));
	json_object_set_new(a, "regionCode", json_string(region));
	json_object_set_new(a, "instanceType", json_string(t->name));
	json_object_set_new(a, "instanceFamily",
			    json_string(t->gpus ? "GPU instance" : "General purpose"));
	json_object_set_new(a, "currentGeneration", json_string("Yes"));
	snprintf(buf, sizeof(buf), "%u", t->vcpu);
	json_object_set_new(a, "vcpu", json_string(buf));
	snprintf(buf, sizeof(buf), "%g GiB", (double)t->memory_mib / 1024.0);
	json_object_set_new(a, "memory", json_string(buf));
	if (t->gpus) {
		snprintf(buf, sizeof(buf), "%u", t->gpus);
		json_object_set_new(a, "gpu", json_string(buf));
		snprintf(buf, sizeof(buf), "%u GiB", t->gpus * t->gpu_memory_mib / 1024);
		json_object_set_new(a, "gpuMemory", json_string(buf));
	}
	json_object_set_new(a, "operatingSystem", json_string("Linux"));
	json_object_set_new(a, "preInstalledSw", json_string("NA"));
	json_object_set_new(a, "licenseModel", json_string("No License required"));
	json_object_set_new(a, "tenancy", json_string(tenancy));
	json_object_set_new(a, "capacitystatus", json_string(capacity));
	json_object_set_new(a, "operation", json_string("RunInstances"));
	snprintf(buf, sizeof(buf), "%s%s:%s", usage_prefix(region),
		 strcmp(tenancy, "Shared") == 0 ? "BoxUsage" : "DedicatedUsage", t->name);
	json_object_set_new(a, "usagetype", json_string(buf));
	return a;
}

static json_t *price_dimension(const char *rate, const char *unit, double usd_value,
			       const char *desc)
{
	char usd[32];

	snprintf(usd, sizeof(usd), "%.10f", usd_value);
	return json_pack("{s:s, s:s, s:s, s:[], s:s, s:s, s:{s:s}}", "unit", unit, "endRange",
			 "Inf", "description", desc, "appliesTo", "rateCode", rate, "beginRange",
			 "0", "pricePerUnit", "USD", usd);
}

static json_t *reserved_doc(const char *sku, double od, const char *type)
{
	json_t *terms = json_object();

	for (size_t i = 0; i < sizeof(reserved_terms) / sizeof(reserved_terms[0]); i++) {
		const struct reserved_term *r = &reserved_terms[i];
		char term[40], rate[56], desc[160];
		json_t *dims = json_object();

		snprintf(term, sizeof(term), "%s.%s", sku, r->code);
		snprintf(rate, sizeof(rate), "%s.%s", term, PRICING_RATE);
		snprintf(desc, sizeof(desc),
			 "Linux/UNIX (Amazon VPC), %s reserved instance applied", type);
		json_object_set_new(dims, rate, price_dimension(rate, "Hrs", od * r->share, desc));
		if (r->upfront_hours > 0) {
			snprintf(rate, sizeof(rate), "%s.%s", term, PRICING_QUANTITY);
			json_object_set_new(dims, rate,
					    price_dimension(rate, "Quantity", od * r->upfront_hours,
							    "Upfront Fee"));
		}
		json_object_set_new(terms, term,
				    json_pack("{s:o, s:s, s:s, s:s, s:{s:s, s:s, s:s}}",
					      "priceDimensions", dims, "sku", sku, "effectiveDate",
					      PRICING_PUBLISHED, "offerTermCode", r->code,
					      "termAttributes", "LeaseContractLength", r->length,
					      "OfferingClass", "standard", "PurchaseOption",
					      r->option));
	}
	return terms;
}

static json_t *product_doc(const struct sim_itype *t, const char *region, const char *tenancy,
			   const char *capacity)
{
	double price = sim_catalog_price(t, false) * (strcmp(tenancy, "Dedicated") == 0 ? 1.1 : 1);
	char sku[17], term[40], rate[56], usd[32], desc[160];

	make_sku(region, t->name, tenancy, capacity, sku);
	snprintf(term, sizeof(term), "%s.%s", sku, PRICING_OFFER);
	snprintf(rate, sizeof(rate), "%s.%s", term, PRICING_RATE);
	snprintf(usd, sizeof(usd), "%.10f", price);
	snprintf(desc, sizeof(desc), "$%.4f per On Demand Linux %s Instance Hour", price, t->name);
	return json_pack(
		"{s:{s:s, s:o, s:s}, s:s, s:{s:{s:{s:{s:{s:s, s:s, s:s, s:[], s:s, s:s, s:{s:s}}},"
		" s:s, s:s, s:s, s:{}}}, s:o}, s:s, s:s}",
		"product", "productFamily", "Compute Instance", "attributes",
		product_attributes(t, region, tenancy, capacity), "sku", sku, "serviceCode",
		"AmazonEC2", "terms", "OnDemand", term, "priceDimensions", rate, "unit", "Hrs",
		"endRange", "Inf", "description", desc, "appliesTo", "rateCode", rate, "beginRange",
		"0", "pricePerUnit", "USD", usd, "sku", sku, "effectiveDate", PRICING_PUBLISHED,
		"offerTermCode", PRICING_OFFER, "termAttributes", "Reserved",
		reserved_doc(sku, price, t->name), "version", "20261101000000", "publicationDate",
		PRICING_PUBLISHED);
}

/* Whether every TERM_MATCH filter holds for the product (ServiceCode included). */
static bool matches(json_t *doc, json_t *filters)
{
	json_t *attrs = json_object_get(json_object_get(doc, "product"), "attributes"), *f;
	size_t i;

	json_array_foreach(filters, i, f)
	{
		const char *field = json_string_value(json_object_get(f, "Field"));
		const char *value = json_string_value(json_object_get(f, "Value"));
		const char *have = strcmp(field, "ServiceCode") == 0
			? "AmazonEC2"
			: json_string_value(json_object_get(attrs, field));

		/* TERM_MATCH compares without regard to case, as AWS does */
		if (!have || strcasecmp(have, value) != 0)
			return false;
	}
	return true;
}

/* --- GetProducts ---------------------------------------------------------------------- */

static void make_token(size_t pos, char out[64])
{
	char key[32], hex[GC_SHA256_HEX_LEN];

	snprintf(key, sizeof(key), "pricing:%zu", pos);
	gc_sha256_hex(key, strlen(key), hex);
	snprintf(out, 64, "%zu.%.12s", pos, hex);
}

static int parse_token(const char *tok, size_t *pos)
{
	char want[64];
	uint64_t v;
	const char *dot = strchr(tok, '.');
	char num[24];

	if (!dot || (size_t)(dot - tok) >= sizeof(num))
		return -1;
	memcpy(num, tok, (size_t)(dot - tok));
	num[dot - tok] = '\0';
	if (gc_parse_u64(num, SIZE_MAX, &v) != 0)
		return -1;
	make_token((size_t)v, want);
	if (strcmp(want, tok) != 0)
		return -1;
	*pos = (size_t)v;
	return 0;
}

static int check_request(struct sim_aws_json *c, json_t **filters, size_t *start, size_t *max)
{
	json_t *b = c->body, *f, *v;
	const char *service, *fv, *tok;
	size_t i;

	service = json_string_value(json_object_get(b, "ServiceCode"));
	if (!service)
		return sim_aws_json_fail(c, 400, "InvalidParameterException",
					 "Input validation error: ServiceCode is required");
	if (strcmp(service, "AmazonEC2") != 0)
		return sim_aws_json_fail(c, 400, "NotFoundException",
					 "Service code %s is not served here", service);
	fv = json_string_value(json_object_get(b, "FormatVersion"));
	if (json_object_get(b, "FormatVersion") && (!fv || strcmp(fv, "aws_v1") != 0))
		return sim_aws_json_fail(c, 400, "InvalidParameterException",
					 "Input validation error: FormatVersion must be aws_v1");
	*filters = json_object_get(b, "Filters");
	if (*filters && !json_is_array(*filters))
		return sim_aws_json_fail(c, 400, "InvalidParameterException",
					 "Input validation error: Filters must be a list");
	json_array_foreach(*filters, i, f)
	{
		const char *type = json_string_value(json_object_get(f, "Type"));

		if (!json_is_object(f) || !json_is_string(json_object_get(f, "Field")) ||
		    !json_is_string(json_object_get(f, "Value")))
			return sim_aws_json_fail(
				c, 400, "InvalidParameterException",
				"Input validation error: filter %zu needs Type, Field and "
				"Value",
				i + 1);
		if (!type || strcmp(type, "TERM_MATCH") != 0)
			return sim_aws_json_fail(
				c, 400, "InvalidParameterException",
				"Input validation error: filter type '%s' is not supported",
				type ? type : "");
	}
	*max = PRICING_MAX_RESULTS;
	if ((v = json_object_get(b, "MaxResults"))) {
		json_int_t m = json_integer_value(v);
		if (!json_is_integer(v) || m < 1 || m > PRICING_MAX_RESULTS)
			return sim_aws_json_fail(
				c, 400, "InvalidParameterException",
				"Input validation error: MaxResults must be between 1 and %d",
				PRICING_MAX_RESULTS);
		*max = (size_t)m;
	}
	*start = 0;
	tok = json_string_value(json_object_get(b, "NextToken"));
	if (json_object_get(b, "NextToken") && (!tok || parse_token(tok, start) != 0))
		return sim_aws_json_fail(c, 400, "InvalidNextTokenException",
					 "The NextToken is invalid");
	return 0;
}

static int get_products(struct sim_aws_json *c)
{
	const struct sim_itype *types;
	const struct sim_region *regions;
	size_t nt = sim_catalog_itypes(SIM_AWS, &types),
	       nr = sim_catalog_regions(SIM_AWS, &regions);
	json_t *filters = NULL, *list, *out;
	size_t start = 0, max = 0, pos = 0, shown = 0;
	bool more = false;
	char *text;

	if (check_request(c, &filters, &start, &max) != 0)
		return -1;
	list = json_array();
	for (size_t r = 0; r < nr && !more; r++)
		for (size_t t = 0; t < nt && !more; t++)
			for (size_t te = 0; te < 2 && !more; te++)
				for (size_t ca = 0; ca < 3 && !more; ca++) {
					json_t *doc = product_doc(&types[t], regions[r].name,
								  tenancies[te], capacities[ca]);
					if (!matches(doc, filters)) {
						json_decref(doc);
						continue;
					}
					if (pos++ < start) {
						json_decref(doc);
						continue;
					}
					if (shown == max) {
						more = true; /* one more exists: there is a next page */
						json_decref(doc);
						continue;
					}
					text = json_dumps(doc, JSON_COMPACT);
					json_array_append_new(list, json_string(text));
					free(text);
					json_decref(doc);
					shown++;
				}
	out = json_pack("{s:s, s:o}", "FormatVersion", "aws_v1", "PriceList", list);
	if (more) {
		char tok[64];
		make_token(start + shown, tok);
		json_object_set_new(out, "NextToken", json_string(tok));
	}
	sim_aws_json_reply(c, out, 0);
	return 0;
}

static const struct sim_aws_json_service pricing_service = {
	"pricing", pricing_region, "GetProducts", "ThrottlingException", "InternalErrorException",
};

void sim_pricing_handle(struct sim *sim, const struct sim_req *req, struct sim_resp *resp)
{
	const char *op = gc_params_get_ci(req->headers, "X-Amz-Target") + strlen(PRICING_PREFIX);
	struct sim_aws_json c;
	struct sim_fault_hit hit;

	sim_aws_json_begin(&c, sim, req, resp, op, PRICING_VERSION);
	c.ns = PRICING_NS;
	if (sim_aws_json_admit(&c, &pricing_service, op, NULL, &hit) == 0)
		get_products(&c);
	sim_aws_json_end(&c);
}
