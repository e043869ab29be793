/*
 * hostile.h: answers a broken or malicious cloud (or anything between) could give, so
 * that the drivers' defences against them live in the test suite (issue 19).
 *
 * A hostile answer is a fault rule of kind `hostile` (faults.h) with a mode:
 *
 *     CLOUD:ACTION:hostile,mode=MODE[,status=N][,bytes=N][,delay_ms=N][,p=,call=,times=]
 *
 * The frontend consults the rule like any other fault; a mode that replaces the answer
 * skips the action (nothing changes in the world), a mode that distorts the answer lets
 * the action run and rewrites what it rendered. docs/sim.md has the table of modes, what
 * each sends on each cloud and whether the action is applied.
 *
 * Stateless apart from one counter that makes endless tokens fresh; thread-safe.
 */
#ifndef GC_SIM_HOSTILE_H
#define GC_SIM_HOSTILE_H

#include <stdbool.h>
#include <stddef.h>

enum sim_hostile {
	SIM_HOSTILE_NONE = 0,
	SIM_HOSTILE_ENDLESS_TOKEN,    /* a fresh next token on every page, past the data */
	SIM_HOSTILE_REPEAT_TOKEN,     /* the same next token every time */
	SIM_HOSTILE_EMPTY_PAGE_TOKEN, /* an empty page that still carries a token */
	SIM_HOSTILE_HUGE_TOTAL,	      /* a total count of 1e9 beside the real page */
	SIM_HOSTILE_EMPTY_ENVELOPE,   /* a 200 with an empty but valid document */
	SIM_HOSTILE_MISSING_FIELDS,   /* items without ids, states, names, tags, counts */
	SIM_HOSTILE_WRONG_DOCUMENT,   /* a well-formed answer of another action */
	SIM_HOSTILE_HTML,	      /* an HTML page, text/html, status= (default 200) */
	SIM_HOSTILE_HUGE_BODY,	      /* bytes= (default 17 MiB) of a document that never ends */
	SIM_HOSTILE_SLOW_BODY,	      /* the real answer trickled over delay_ms (default 500) */
	SIM_HOSTILE_ESCAPE_SEQUENCES, /* an error whose message carries ESC, CR/LF, ::cmds */
	SIM_HOSTILE_ESCAPE_TAGS,      /* the real answer, every tag value such text */
	SIM_HOSTILE_DUPLICATE_IDS,    /* the page's first item twice */
};

/* Text every escape mode sends: ANSI colour and title sequences, CR/LF, and GitHub
 * Actions workflow commands at the start of lines. */
#define SIM_HOSTILE_TEXT                                                          \
	"\033[31mred\033[0m \033]0;owned\007\r\n::error::forged by the cloud\r\n" \
	"::add-mask::gpucluster\n::stop-commands::hostile\n::warning::after the stop"

/* Whether a page token is one a hostile mode made ("hostile-..."): the frontends read it
 * as the first page, so a client that follows it keeps getting pages. */
bool sim_hostile_token(const char *token);

/* Parses a mode name; 0, or -1 when unknown. */
int sim_hostile_parse(const char *name, enum sim_hostile *out);
const char *sim_hostile_name(enum sim_hostile m);
/* The mode names joined by ", ", for messages. */
const char *sim_hostile_names(void);
/* Whether the real action runs under mode m (it does not when the answer is replaced). */
bool sim_hostile_applies(enum sim_hostile m);

struct sim_resp;
struct sim_fault_hit;

/* How a cloud writes its answers, from its frontend: what the modes must imitate. */
struct sim_hostile_style {
	const char *content_type;	 /* of its answers */
	bool xml;			 /* EC2's XML; otherwise JSON */
	const char *envelope;		 /* the object every answer sits in ("Response"), or NULL */
	const char *next_token;		 /* the page token's name; NULL: pages by TotalCount only */
	int error_status;		 /* the HTTP status of a client error (Tencent: 200) */
	const char *error_code;		 /* the code of the escape-sequences error */
	const char *wrong_document;	 /* a well-formed answer of another action */
	const char *wrong_document_keys; /* the same, for DescribeKeyPairs itself */
};

/*
 * Turns resp (the action's rendered answer, or nothing when the action was skipped)
 * into the hostile answer that hit names, in style st, for action. Huge and slow bodies
 * are left to the server: resp->stream_bytes and resp->trickle_ms say how to send.
 */
void sim_hostile_answer(const struct sim_hostile_style *st, const char *action,
			const struct sim_fault_hit *hit, struct sim_resp *resp);

#endif
