/*
 * cidr.h: IPv4 and IPv6 networks written as CIDR blocks ("203.0.113.0/24", "2001:db8::/48").
 *
 * The spec validator uses it for ssh.allow_from and the security-group code for its
 * ingress rules. A struct gc_cidr is a plain value (no heap memory, nothing to release):
 * the family, the address in network byte order (IPv4 uses the first 4 bytes, the rest
 * stay zero) and the prefix length. Parsing is strict: the address part must be what
 * inet_pton accepts, the prefix a decimal 0..32 or 0..128 without sign or leading zeros.
 * A parsed block may have host bits set ("10.0.0.1/24"); gc_cidr_is_network says whether
 * it is a proper network and gc_cidr_network gives the one it lies in.
 */
#ifndef GC_CIDR_H
#define GC_CIDR_H

#include <stdbool.h>
#include <stddef.h>

/* Room for the longest formatted block, "ffff:...:255.255.255.255/128", and its NUL. */
#define GC_CIDR_STRLEN 64

enum gc_cidr_family {
	GC_CIDR_IPV4 = 4,
	GC_CIDR_IPV6 = 6,
};

struct gc_cidr {
	enum gc_cidr_family family;
	unsigned char addr[16];
	unsigned prefix;
};

/* Parses "ADDRESS/PREFIX". Returns 0 with *out set, or -1 when text is not a CIDR block. */
int gc_cidr_parse(struct gc_cidr *out, const char *text);

/* Parses a bare address as a single-host block (/32 or /128). Returns 0 or -1. */
int gc_cidr_parse_host(struct gc_cidr *out, const char *text);

/* Whether every bit after the prefix is zero. */
bool gc_cidr_is_network(const struct gc_cidr *c);

/* The network c lies in: c with its host bits cleared. */
void gc_cidr_network(struct gc_cidr *out, const struct gc_cidr *c);

/* Same family, prefix and address bits. */
bool gc_cidr_equal(const struct gc_cidr *a, const struct gc_cidr *b);

/* Whether network net contains every address of c (same family, c's prefix >= net's). */
bool gc_cidr_contains(const struct gc_cidr *net, const struct gc_cidr *c);

/* Whether the address of c (its prefix aside) can name one host: not unspecified
 * (0.0.0.0/8, ::), not multicast (224.0.0.0/4, ff00::/8), not reserved or broadcast
 * (240.0.0.0/4). An address service answering one of these is broken or lying. */
bool gc_cidr_is_unicast(const struct gc_cidr *c);

/* Whether text is an IPv6 block or address ("2001:db8::/48"): every cloud takes those in
 * a field of its own (docs/internals/security-groups.md, "IPv6 sources"). */
bool gc_cidr_text_is_ipv6(const char *text);

/* Canonical text ("2001:db8::/48", IPv6 lowercase and compressed) into out. Returns 0,
 * or -1 when size is too small (GC_CIDR_STRLEN always suffices). */
int gc_cidr_format(const struct gc_cidr *c, char *out, size_t size);

#endif
