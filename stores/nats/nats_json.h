/*
 * nats_json.h — just enough JSON to read JetStream's API answers.
 *
 * JetStream answers publishes and API requests with small, flat JSON
 * objects ({"stream":"CRON","seq":7,"duplicate":true}, {"error":{...}},
 * {"message":{"data":"<base64>",...}}).  These helpers find a key's value
 * by name in such a text; they are not a general parser and are only used
 * on answers from the server, never on user input.
 */
#ifndef ANARCHON_NATS_JSON_H
#define ANARCHON_NATS_JSON_H

#include <stddef.h>
#include <stdint.h>

/* The integer value of "key"; -1 when absent or not a number. */
int			nj_int(const char *js, const char *key, int64_t *out);

/* The boolean value of "key": 1 true, 0 false; -1 when absent. */
int			nj_bool(const char *js, const char *key);

/*
 * The string value of "key" copied into out; -1 when absent, or when longer
 * than outlen - 1 (out then holds as much as fits, for messages only).
 */
int			nj_str(const char *js, const char *key, char *out, size_t outlen);

/*
 * Decode base64 text (standard alphabet, padding optional) into out;
 * returns the decoded length, or -1 when it is malformed or does not fit.
 */
long		nj_base64_decode(const char *in, size_t inlen, char *out, size_t outlen);

#endif							/* ANARCHON_NATS_JSON_H */
