/*
 * cidr.c: parsing, checking and formatting CIDR blocks (see cidr.h). The address part
 * goes through inet_pton so that what we accept is exactly what the C library and the
 * clouds' own parsers agree an address is; only the "/PREFIX" part is ours.
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "core/cidr.h"

static unsigned addr_bytes(enum gc_cidr_family f)
{
	return f == GC_CIDR_IPV4 ? 4 : 16;
}

static int parse_addr(struct gc_cidr *c, const char *text, size_t len)
{
	char tmp[GC_CIDR_STRLEN];

	/* INET6_ADDRSTRLEN is 46: anything longer is not an address */
	if (len == 0 || len >= sizeof(tmp))
		return -1;
	memcpy(tmp, text, len);
	tmp[len] = '\0';
	memset(c, 0, sizeof(*c));
	if (inet_pton(AF_INET, tmp, c->addr) == 1) {
		c->family = GC_CIDR_IPV4;
		return 0;
	}
	if (inet_pton(AF_INET6, tmp, c->addr) == 1) {
		c->family = GC_CIDR_IPV6;
		return 0;
	}
	return -1;
}

int gc_cidr_parse(struct gc_cidr *out, const char *text)
{
	struct gc_cidr c;
	const char *slash, *p;
	unsigned prefix = 0;

	if (!text)
		return -1;
	slash = strchr(text, '/');
	if (!slash || parse_addr(&c, text, (size_t)(slash - text)) < 0)
		return -1;
	p = slash + 1;
	/* 1 to 3 digits, and "0" is the only prefix that may start with a zero */
	if (*p < '0' || *p > '9' || (p[0] == '0' && p[1] != '\0'))
		return -1;
	for (; *p; p++) {
		if (*p < '0' || *p > '9' || p - slash > 3)
			return -1;
		prefix = prefix * 10 + (unsigned)(*p - '0');
	}
	if (prefix > addr_bytes(c.family) * 8)
		return -1;
	c.prefix = prefix;
	*out = c;
	return 0;
}

int gc_cidr_parse_host(struct gc_cidr *out, const char *text)
{
	struct gc_cidr c;

	if (!text || parse_addr(&c, text, strlen(text)) < 0)
		return -1;
	c.prefix = addr_bytes(c.family) * 8;
	*out = c;
	return 0;
}

void gc_cidr_network(struct gc_cidr *out, const struct gc_cidr *c)
{
	struct gc_cidr n = *c;
	unsigned nbytes = addr_bytes(c->family);

	for (unsigned i = 0; i < nbytes; i++) {
		unsigned first = i * 8; /* the first bit of this byte */

		if (first >= c->prefix)
			n.addr[i] = 0;
		else if (c->prefix - first < 8)
			n.addr[i] &= (unsigned char)(0xffu << (8 - (c->prefix - first)));
	}
	*out = n;
}

bool gc_cidr_is_network(const struct gc_cidr *c)
{
	struct gc_cidr n;

	gc_cidr_network(&n, c);
	return memcmp(n.addr, c->addr, sizeof(n.addr)) == 0;
}

bool gc_cidr_equal(const struct gc_cidr *a, const struct gc_cidr *b)
{
	return a->family == b->family && a->prefix == b->prefix &&
		memcmp(a->addr, b->addr, addr_bytes(a->family)) == 0;
}

bool gc_cidr_contains(const struct gc_cidr *net, const struct gc_cidr *c)
{
	struct gc_cidr a, b;

	if (net->family != c->family || c->prefix < net->prefix)
		return false;
	/* c lies in net when both agree on net's prefix bits */
	a = *net;
	b = *c;
	b.prefix = net->prefix;
	gc_cidr_network(&a, &a);
	gc_cidr_network(&b, &b);
	return memcmp(a.addr, b.addr, sizeof(a.addr)) == 0;
}

int gc_cidr_format(const struct gc_cidr *c, char *out, size_t size)
{
	char addr[INET6_ADDRSTRLEN];
	int n;

	if (!inet_ntop(c->family == GC_CIDR_IPV4 ? AF_INET : AF_INET6, c->addr, addr, sizeof(addr)))
		return -1;
	n = snprintf(out, size, "%s/%u", addr, c->prefix);
	if (n < 0 || (size_t)n >= size)
		return -1;
	return 0;
}

bool gc_cidr_is_unicast(const struct gc_cidr *c)
{
	static const unsigned char zero[16];

	if (c->family == GC_CIDR_IPV4)
		return c->addr[0] != 0 && c->addr[0] < 224;
	return memcmp(c->addr, zero, sizeof(zero)) != 0 && c->addr[0] != 0xff;
}

bool gc_cidr_text_is_ipv6(const char *text)
{
	struct gc_cidr c;

	return (gc_cidr_parse(&c, text) == 0 || gc_cidr_parse_host(&c, text) == 0) &&
		c.family == GC_CIDR_IPV6;
}
