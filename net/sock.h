/*
 * sock.h — a TCP socket whose every wait is bounded and cancellable.
 *
 * For stores that speak their server's protocol themselves (NATS): connect,
 * send and receive on a non-blocking socket (RabbitMQ connects with it too,
 * then hands the socket to rabbitmq-c), waiting with poll() in slices
 * of wait.h, so that a deadline or a host's cancel ends any wait.  Writes use
 * send(MSG_NOSIGNAL): a write to a closed connection never raises SIGPIPE in
 * the host process.  Failures fail st: AN_E_CONNECT, AN_E_TIMEOUT or
 * AN_E_CANCELED, with `who` (the server, as messages name it) and `what`
 * (the request being waited for) in the message.
 */
#ifndef ANARCHON_SOCK_H
#define ANARCHON_SOCK_H

#include <stddef.h>

#include "wait.h"

/*
 * Resolve host (the system resolver: not bounded by the deadline) and
 * connect to port within the deadline.  *fd is the connected, non-blocking
 * socket, close-on-exec; -1 on failure.
 */
int			an_sock_connect(an_store *st, const char *who, const char *host, int port,
							const an_deadline *d, int *fd);

/* Send all len bytes of buf, waiting for room as needed. */
int			an_sock_send(an_store *st, const char *who, int fd, const char *buf, size_t len,
						 const an_deadline *d, const char *what);

/*
 * Wait for bytes and read what has arrived, at most cap, into buf; *got > 0
 * on AN_OK.  A connection the server closed is AN_E_CONNECT.  The deadline
 * and the host's cancel are checked on every call, even when bytes are
 * waiting: a caller that loops over reads ends by the deadline whatever the
 * server sends.
 */
int			an_sock_recv(an_store *st, const char *who, int fd, char *buf, size_t cap,
						 size_t *got, const an_deadline *d, const char *what);

#endif							/* ANARCHON_SOCK_H */
