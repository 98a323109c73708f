/*
 * prelude.h — what the documentation's C fragments leave to the reader.
 *
 * examples.py includes it before each C block.  The skeleton of a backend in
 * doc/writing-a-backend.md calls functions that depend on the store being
 * written (the connection, the atomic create-or-get, the methods it leaves
 * "as documented for your store"); they are declared here so that the
 * skeleton compiles as shown, against the real headers.  The hint fragment
 * names two numbers of its store.
 */
#include <stdint.h>

#include "anarchon.h"
#include "store.h"

int			etcd_connect(an_store *st, void *es);
void		etcd_disconnect(void *es);
int			etcd_create_or_get(an_store *st, void *es, const an_request *rq, int *created, char *winner);
int			etcd_heartbeat(an_store *st, const an_request *rq, int *owned);
int			etcd_finish(an_store *st, const an_request *rq, an_run_state status, int *owned);
int			etcd_check(an_store *st, const an_request *rq, an_check_result *res);
int			etcd_validate(an_store *st, const an_settings *s);

extern long long ttl;
extern long long max_late;
