/*
 * pricing.c: on-demand prices from the AWS Price List Query API (GetProducts): EC2 itself
 * has no call for an on-demand price. The endpoint, the protocol (JSON 1.1) and the
 * filters that pin one product are in docs/internals/providers.md, "The operations".
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/str.h"
#include "providers/aws/ec2.h"

#define PRICING_TARGET "AWSPriceListService.GetProducts"
#define PRICING_TYPE   "application/x-amz-json-1.1"

int aws_json_error(const char *body, size_t len, char code[128], char message[512])
{
	json_t *doc = json_loadb(body, len, 0, NULL);
	const char *type, *msg, *hash;
	size_t n;
	int ret = -1;

	code[0] = message[0] = '\0';
	if (!json_is_object(doc))
		goto out;
	type = gc_jstr(doc, "__type");
	if (!type)
		type = gc_jstr(doc, "code");
	msg = gc_jstr(doc, "message");
	if (!msg)
		msg = gc_jstr(doc, "Message");
	if (!type || !*type)
		goto out;
	/* "com.amazon.awspricing#ThrottlingException" or "Code:http://..." */
	hash = strrchr(type, '#');
	if (hash)
		type = hash + 1;
	n = strcspn(type, ":");
	if (n >= 128)
		n = 127;
	memcpy(code, type, n);
	code[n] = '\0';
	snprintf(message, 512, "%s", msg ? msg : "");
	ret = code[0] ? 0 : -1;
out:
	json_decref(doc);
	return ret;
}

static void add_filter(json_t *filters, const char *field, const char *value)
{
	json_array_append_new(
		filters,
		json_pack("{s:s, s:s, s:s}", "Type", "TERM_MATCH", "Field", field, "Value", value));
}

static char *request_body(const char *type, const char *region, const char *token)
{
	json_t *filters = json_array(), *req;
	char *s;

	add_filter(filters, "instanceType", type);
	add_filter(filters, "regionCode", region);
	add_filter(filters, "operatingSystem", "Linux");
	add_filter(filters, "tenancy", "Shared");
	add_filter(filters, "preInstalledSw", "NA");
	add_filter(filters, "capacitystatus", "Used");
	req = json_pack("{s:s, s:o, s:s, s:i}", "ServiceCode", "AmazonEC2", "Filters", filters,
			"FormatVersion", "aws_v1", "MaxResults", 100);
	if (token)
		json_object_set_new(req, "NextToken", json_string(token));
	s = json_dumps(req, JSON_COMPACT);
	json_decref(req);
	return s;
}

/* The hourly USD price in one product document, or -1 when it has none for type. */
static double product_price(json_t *product, const char *type)
{
	json_t *od, *offer, *dims, *dim;
	const char *k1, *k2, *t;

	t = gc_jstr(json_object_get(json_object_get(product, "product"), "attributes"),
		    "instanceType");
	if (!t || strcmp(t, type) != 0)
		return -1;
	od = json_object_get(json_object_get(product, "terms"), "OnDemand");
	json_object_foreach(od, k1, offer)
	{
		dims = json_object_get(offer, "priceDimensions");
		json_object_foreach(dims, k2, dim)
		{
			const char *unit = gc_jstr(dim, "unit");
			const char *usd = gc_jstr(json_object_get(dim, "pricePerUnit"), "USD");
			double v;

			if (usd && (!unit || strcmp(unit, "Hrs") == 0) &&
			    gc_parse_double(usd, &v) == 0 && v > 0)
				return v;
		}
	}
	return -1;
}

/* The Reserved terms of one product: the standard class's hourly rate with no upfront fee
 * for 1 year (out[0]) and 3 years (out[1]); whether it had either. */
static bool product_reserved(json_t *product, const char *type, double out[2])
{
	json_t *terms, *term, *dim;
	const char *k1, *k2, *t;
	bool any = false;

	t = gc_jstr(json_object_get(json_object_get(product, "product"), "attributes"),
		    "instanceType");
	if (!t || strcmp(t, type) != 0)
		return false;
	terms = json_object_get(json_object_get(product, "terms"), "Reserved");
	json_object_foreach(terms, k1, term)
	{
		json_t *attrs = json_object_get(term, "termAttributes");
		const char *length = gc_jstr(attrs, "LeaseContractLength");
		const char *option = gc_jstr(attrs, "PurchaseOption");
		const char *class = gc_jstr(attrs, "OfferingClass");
		int i = length && strcmp(length, "1yr") == 0   ? 0
			: length && strcmp(length, "3yr") == 0 ? 1
							       : -1;

		if (i < 0 || !option || strcmp(option, "No Upfront") != 0 || !class ||
		    strcmp(class, "standard") != 0)
			continue;
		json_object_foreach(json_object_get(term, "priceDimensions"), k2, dim)
		{
			const char *unit = gc_jstr(dim, "unit");
			const char *usd = gc_jstr(json_object_get(dim, "pricePerUnit"), "USD");
			double v;

			if (usd && unit && strcmp(unit, "Hrs") == 0 &&
			    gc_parse_double(usd, &v) == 0 && v > 0) {
				out[i] = v;
				any = true;
			}
		}
	}
	return any;
}

/* Reads one answer: *out set when a price was found (with reserved, the Reserved terms into
 * reserved[0..1] instead), *next the NextToken (or NULL). */
static int read_answer(const char *body, size_t len, const char *type, double *out,
		       double *reserved, bool *found, char **next, struct gc_error *err)
{
	json_t *doc = json_loadb(body, len, 0, NULL), *list, *entry;
	const char *tok;
	size_t i;
	int ret = -1;

	*found = false;
	*next = NULL;
	if (!json_is_object(doc)) {
		gc_error_set(err, GC_EINVALID, "GetProducts: the answer is not a JSON object");
		goto out;
	}
	list = json_object_get(doc, "PriceList");
	if (!json_is_array(list)) {
		gc_error_set(err, GC_EINVALID, "GetProducts: the answer has no PriceList");
		goto out;
	}
	json_array_foreach(list, i, entry)
	{
		json_t *product = NULL;
		double v;

		/* each entry is a JSON document in a string (some SDKs hand out objects) */
		if (json_is_string(entry))
			product = json_loadb(json_string_value(entry), json_string_length(entry), 0,
					     NULL);
		else if (json_is_object(entry))
			product = json_incref(entry);
		if (!product) {
			gc_error_set(err, GC_EINVALID,
				     "GetProducts: PriceList entry %zu is not JSON", i);
			goto out;
		}
		if (reserved) {
			*found = product_reserved(product, type, reserved);
			if (*found && (v = product_price(product, type)) > 0)
				*out = v; /* the same product's on-demand price, for the cache */
			json_decref(product);
			if (*found)
				break;
			continue;
		}
		v = product_price(product, type);
		json_decref(product);
		if (v > 0) {
			*out = v;
			*found = true;
			break;
		}
	}
	tok = gc_jstr(doc, "NextToken");
	if (tok && *tok)
		*next = gc_xstrdup(tok);
	ret = 0;
out:
	json_decref(doc);
	return ret;
}

struct products_ctx {
	const char *type;
	double *out;
	double *reserved; /* [2]: the Reserved terms wanted instead of on-demand */
	bool found;
};

static int products_send(struct gc_provider *p, void *ctx, const struct gc_page *pg,
			 struct gc_buf *body, struct gc_error *err)
{
	struct aws_driver *d = aws_driver(p);
	char *req = request_body(((struct products_ctx *)ctx)->type, d->cfg.region, pg->token);
	struct aws_call c;
	int ret;

	memset(&c, 0, sizeof(c));
	c.proto = AWS_PROTO_JSON;
	c.service = "pricing";
	c.region = d->cfg.pricing_region ? d->cfg.pricing_region : "us-east-1";
	c.url = d->cfg.pricing_endpoint;
	c.host = d->pricing_host;
	c.action = "GetProducts";
	c.target = PRICING_TARGET;
	c.content_type = PRICING_TYPE;
	c.body = req;
	c.body_len = req ? strlen(req) : 0;
	ret = aws_send(p, &c, body, err);
	free(req);
	return ret;
}

static int products_parse(struct gc_provider *p, void *ctx, const struct gc_buf *body,
			  struct gc_page *pg, struct gc_error *err)
{
	struct products_ctx *c = ctx;

	if (read_answer(body->data, body->len, c->type, c->out, c->reserved, &c->found, &pg->next,
			err) != 0)
		return gc_error_prefix(err, "cannot read the price list from '%s'",
				       aws_driver(p)->pricing_host);
	pg->done = c->found;
	return 0;
}

int aws_pricing_on_demand(struct gc_provider *p, const char *type, double *out,
			  struct gc_error *err)
{
	static const struct gc_pager pager = { "GetProducts", NULL, products_send, products_parse };
	struct products_ctx c = { .type = type, .out = out };

	if (gc_driver_pages(p, &pager, &c, err) != 0)
		return -1;
	if (!c.found)
		return gc_error_set(err, GC_ENOTFOUND,
				    "the price list has no Linux on-demand price for '%s' in %s",
				    type, aws_driver(p)->cfg.region);
	return 0;
}

/* The same product's Reserved terms (show-gpus, plan --hours): the effective hourly price of
 * a standard reservation with no upfront fee, out[0] for 1 year and out[1] for 3 years, -1
 * where the price list has none; docs/internals/gpus.md. */
int aws_reserved_price(struct gc_provider *p, const char *type, double out[2],
		       char out_currency[GC_CURRENCY_SIZE], struct gc_error *err)
{
	static const struct gc_pager pager = { "GetProducts", NULL, products_send, products_parse };
	struct aws_driver *d = aws_driver(p);
	double got[2] = { -1, -1 }, od = -1;
	struct products_ctx c = { .type = type, .out = &od, .reserved = got };

	if (gc_driver_pages(p, &pager, &c, err) != 0)
		return gc_error_prefix(err, "cannot get the reserved prices of '%s' in %s", type,
				       d->cfg.region);
	/* a later on-demand lookup of the type needs no second call */
	if (od > 0 && !gc_price_cache_find(&d->prices, type, NULL, false))
		gc_price_cache_add(&d->prices, type, NULL, false, od, "USD");
	out[0] = got[0];
	out[1] = got[1];
	snprintf(out_currency, GC_CURRENCY_SIZE, "USD");
	return 0;
}
