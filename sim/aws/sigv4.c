/*
 * sigv4.c: the one SigV4 verification of the emulator's AWS port (aws.h), used by EC2,
 * STS and the Price List, and the AWS timestamp formats they read. The signing itself is
 * the project's own (providers/aws/sigv4.h), so the emulator checks exactly what the
 * driver signs; each service keeps only its order of checks and its error codes.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/str.h"
#include "sim/aws/aws.h"

int sim_aws_parse_authorization(const char *authz, struct aws_sigv4_auth *out, struct gc_error *err)
{
	if (!gc_starts_with(authz, AWS_SIGV4_ALGORITHM " "))
		return -1;
	return aws_sigv4_parse_authorization(out, authz, err) == 0 ? 0 : -1;
}

/* Days since 1970-01-01 of a civil date (Howard Hinnant's algorithm). */
static int64_t days_from_civil(int64_t y, unsigned m, unsigned d)
{
	int64_t era;
	unsigned yoe, doy, doe;

	y -= m <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = (unsigned)(y - era * 400);
	doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + (int64_t)doe - 719468;
}

static bool civil_ok(unsigned M, unsigned D, unsigned h, unsigned m, unsigned sec)
{
	return M >= 1 && M <= 12 && D >= 1 && D <= 31 && h <= 23 && m <= 59 && sec <= 60;
}

int sim_aws_parse_amz_date(const char *s, int64_t *out)
{
	unsigned Y, M, D, h, m, sec;
	char z = 0;

	if (!s || strlen(s) != AWS_SIGV4_TIMESTAMP_LEN ||
	    sscanf(s, "%4u%2u%2uT%2u%2u%2u%c", &Y, &M, &D, &h, &m, &sec, &z) != 7 || z != 'Z' ||
	    !civil_ok(M, D, h, m, sec))
		return -1;
	*out = days_from_civil(Y, M, D) * 86400 + h * 3600 + m * 60 + sec;
	return 0;
}

int sim_aws_parse_iso(const char *s, int64_t *out)
{
	unsigned Y, M, D, h, m, sec;
	int used = 0;

	if (sscanf(s, "%4u-%2u-%2uT%2u:%2u:%2u%n", &Y, &M, &D, &h, &m, &sec, &used) != 6 ||
	    !civil_ok(M, D, h, m, sec))
		return -1;
	s += used;
	if (*s == '.')
		for (s++; *s >= '0' && *s <= '9'; s++)
			;
	if (strcmp(s, "Z") != 0 && strcmp(s, "+00:00") != 0 && *s != '\0')
		return -1;
	*out = days_from_civil(Y, M, D) * 86400 + h * 3600 + m * 60 + sec;
	return 0;
}

bool sim_aws_fresh(int64_t t, int64_t now)
{
	return t >= now - SIM_AWS_SKEW_S && t <= now + SIM_AWS_SKEW_S;
}

int sim_aws_verify(const struct sim_req *req, const struct aws_sigv4_auth *auth, const char *secret,
		   struct gc_error *err)
{
	struct gc_params bare = GC_PARAMS_INIT;
	struct gc_sign_request sr;
	int rc;

	memset(&sr, 0, sizeof(sr));
	sr.method = req->method;
	sr.host = gc_params_get_ci(req->headers, "Host");
	sr.path = req->path;
	sr.query = req->query;
	sr.query_string = req->query_string;
	sr.headers = req->headers;
	sr.body = req->body;
	sr.body_len = req->body_len;
	rc = aws_sigv4_verify(&sr, auth, secret, NULL, err);
	if (rc != 0 && sim_headers_without_port(req->headers, &bare)) {
		sr.headers = &bare;
		sr.host = gc_params_get_ci(&bare, "Host");
		gc_error_init(err);
		rc = aws_sigv4_verify(&sr, auth, secret, NULL, err);
	}
	gc_params_release(&bare);
	return rc;
}
