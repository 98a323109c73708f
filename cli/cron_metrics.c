/*
 * cron_metrics.c — `anarchon cron --metrics-listen HOST:PORT`: the daemon's
 * counters at /metrics, in Prometheus' text format.
 *
 * The daemon's one thread also starts the slots, so a scrape must never hold
 * it: every socket is non-blocking, a client is served from the daemon's
 * poll loop (read until the request's blank line, one write of the answer,
 * close), and a client that has not sent its request within 2 s, or one more
 * than CLIENTS_MAX at once, is closed.  What is counted is what the daemon
 * itself sees: the slots it started a child for, those it reached too late,
 * those whose child could not start, how each child ended, and the reloads.
 * Whether a slot was won is each child's (its log line and `anarchon run`'s
 * exit status); the store's own counters are `anarchon stats`'.
 */
#include <errno.h>
#include <stddef.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "cron_metrics.h"

#define CLIENTS_MAX 8
#define CLIENT_MS 2000
#define REQUEST_MAX 4096

typedef struct client
{
	int			fd;
	int64_t		until;           /* closed then, request or not */
	size_t		len;
	char		req[REQUEST_MAX];
} client;

struct an_cron_metrics
{
	int			lfd;
	int64_t		started_ms;
	client		clients[CLIENTS_MAX];
	an_cron_job_counts *jobs;    /* by name, in the order first seen; kept across reloads */
	size_t		njobs,
				capjobs;
	uint64_t	reloads_ok,
				reloads_failed;
};

int
an_cron_metrics_open(const char *where, int64_t now, an_cron_metrics **out, an_err *err)
{
	struct addrinfo hints = {0},
			   *ai = NULL;
	const char *colon = strrchr(where, ':');
	char		host[256];
	int			fd = -1,
				one = 1,
				gai;
	an_cron_metrics *m;

	*out = NULL;
	if (colon == NULL || colon == where || colon[1] == '\0' || (size_t) (colon - where) >= sizeof(host))
	{
		an_errf(err, "--metrics-listen \"%s\" is not HOST:PORT: give the address to listen on and"
				 " its port, such as 127.0.0.1:9187 or [::1]:9187", where);
		return AN_EXIT_USAGE;
	}
	memcpy(host, where, (size_t) (colon - where));
	host[colon - where] = '\0';
	if (host[0] == '[' && host[strlen(host) - 1] == ']')
	{
		memmove(host, host + 1, strlen(host));
		host[strlen(host) - 1] = '\0';
	}
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_NUMERICSERV;
	if ((gai = getaddrinfo(host, colon + 1, &hints, &ai)) != 0)
	{
		an_errf(err, "--metrics-listen %s: %s (HOST:PORT, the port a number)", where, gai_strerror(gai));
		return AN_EXIT_USAGE;
	}
	if ((fd = socket(ai->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0)) < 0 ||
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) != 0 ||
		bind(fd, ai->ai_addr, ai->ai_addrlen) != 0 || listen(fd, 16) != 0)
	{
		an_errf(err, "--metrics-listen %s: cannot listen there: %s", where, strerror(errno));
		if (fd >= 0)
			close(fd);
		freeaddrinfo(ai);
		return AN_EXIT_CONFIG;
	}
	freeaddrinfo(ai);
	if ((m = calloc(1, sizeof(*m))) == NULL)
	{
		close(fd);
		an_errf(err, "out of memory");
		return AN_EXIT_SOFTWARE;
	}
	m->lfd = fd;
	m->started_ms = now;
	for (int i = 0; i < CLIENTS_MAX; i++)
		m->clients[i].fd = -1;
	*out = m;
	return AN_EXIT_OK;
}

void
an_cron_metrics_close(an_cron_metrics *m)
{
	if (m == NULL)
		return;
	for (int i = 0; i < CLIENTS_MAX; i++)
		if (m->clients[i].fd >= 0)
			close(m->clients[i].fd);
	close(m->lfd);
	free(m->jobs);
	free(m);
}

an_cron_job_counts *
an_cron_metrics_job(an_cron_metrics *m, const char *name)
{
	static an_cron_job_counts nowhere;

	if (m == NULL)
		return &nowhere;
	for (size_t i = 0; i < m->njobs; i++)
		if (strcmp(m->jobs[i].name, name) == 0)
			return &m->jobs[i];
	if (m->njobs == m->capjobs)
	{
		size_t		cap = m->capjobs ? 2 * m->capjobs : 16;
		an_cron_job_counts *grown = realloc(m->jobs, cap * sizeof(*grown));

		/* Out of memory: the job is counted nowhere rather than stopping the daemon. */
		if (grown == NULL)
			return &nowhere;
		m->jobs = grown;
		m->capjobs = cap;
	}
	memset(&m->jobs[m->njobs], 0, sizeof(m->jobs[0]));
	snprintf(m->jobs[m->njobs].name, sizeof(m->jobs[0].name), "%s", name);
	return &m->jobs[m->njobs++];
}

void
an_cron_metrics_reloaded(an_cron_metrics *m, int ok)
{
	if (m != NULL)
		(*(ok ? &m->reloads_ok : &m->reloads_failed))++;
}

size_t
an_cron_metrics_fds(const an_cron_metrics *m, struct pollfd *fds)
{
	size_t		n = 0;

	if (m == NULL)
		return 0;
	fds[n++] = (struct pollfd) {m->lfd, POLLIN, 0};
	for (int i = 0; i < CLIENTS_MAX; i++)
		if (m->clients[i].fd >= 0)
			fds[n++] = (struct pollfd) {m->clients[i].fd, POLLIN, 0};
	return n;
}

int64_t
an_cron_metrics_deadline(const an_cron_metrics *m)
{
	int64_t		first = INT64_MAX;

	if (m != NULL)
		for (int i = 0; i < CLIENTS_MAX; i++)
			if (m->clients[i].fd >= 0 && m->clients[i].until < first)
				first = m->clients[i].until;
	return first;
}

static void
family(FILE *out, const char *name, const char *type, const char *help)
{
	fprintf(out, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* The body of /metrics; a memory stream, freed by the caller. */
static char *
body(const an_cron_metrics *m, const an_cron_state *st, size_t *len)
{
	char	   *buf = NULL;
	FILE	   *out = open_memstream(&buf, len);
	static const struct
	{
		const char *name;
		const char *help;
		size_t		offset;
	}			per_job[] = {
		{"anarchon_cron_slots_started_total", "Slots of the job the daemon started a child (anarchon run) for:"
			" won by its batch, or left to the child to claim.",
		offsetof(an_cron_job_counts, started)},
		{"anarchon_cron_slots_not_won_total", "Slots of the job the daemon's batch claimed and the store gave"
			" another replica (lost, running, done, overlap, late).",
		offsetof(an_cron_job_counts, not_won)},
		{"anarchon_cron_slots_claim_errors_total", "Slots of the job whose claim in the batch failed for the job alone"
			" (a setting the store refuses).",
		offsetof(an_cron_job_counts, claim_errors)},
		{"anarchon_cron_slots_late_total", "Slots of the job the daemon reached later than max_late_ms, not claimed.",
		offsetof(an_cron_job_counts, late)},
		{"anarchon_cron_slots_not_started_total", "Slots of the job whose child could not be started (fork, memory).",
		offsetof(an_cron_job_counts, not_started)},
	};

	if (out == NULL)
		return NULL;
	for (size_t f = 0; f < sizeof(per_job) / sizeof(per_job[0]); f++)
	{
		family(out, per_job[f].name, "counter", per_job[f].help);
		for (size_t i = 0; i < m->njobs; i++)
		{
			fprintf(out, "%s{job=", per_job[f].name);
			an_cli_prometheus_label(out, m->jobs[i].name);
			fprintf(out, "} %llu\n",
					(unsigned long long) *(const uint64_t *) ((const char *) &m->jobs[i] + per_job[f].offset));
		}
	}
	family(out, "anarchon_cron_children_ended_total", "counter",
		   "Children (anarchon run) ended, by how: exit 0, another exit status, or a signal.");
	for (size_t i = 0; i < m->njobs; i++)
	{
		static const char *const how[] = {"exit_0", "exit_other", "signal"};

		for (int h = 0; h < 3; h++)
		{
			fputs("anarchon_cron_children_ended_total{job=", out);
			an_cli_prometheus_label(out, m->jobs[i].name);
			fprintf(out, ",how=\"%s\"} %llu\n", how[h], (unsigned long long) m->jobs[i].ended[h]);
		}
	}
	family(out, "anarchon_cron_reloads_total", "counter", "SIGHUPs, by whether the crontab read.");
	fprintf(out, "anarchon_cron_reloads_total{result=\"ok\"} %llu\n", (unsigned long long) m->reloads_ok);
	fprintf(out, "anarchon_cron_reloads_total{result=\"failed\"} %llu\n", (unsigned long long) m->reloads_failed);
	family(out, "anarchon_cron_jobs", "gauge", "Jobs of the crontab in force.");
	fprintf(out, "anarchon_cron_jobs %zu\n", st->jobs);
	family(out, "anarchon_cron_children_running", "gauge", "Children (anarchon run) running now.");
	fprintf(out, "anarchon_cron_children_running %zu\n", st->running);
	family(out, "anarchon_cron_stopping", "gauge", "1 once a stop signal came: no new slot is started.");
	fprintf(out, "anarchon_cron_stopping %d\n", st->stopping);
	family(out, "anarchon_cron_start_time_seconds", "gauge", "When the daemon started, in seconds since the epoch.");
	fprintf(out, "anarchon_cron_start_time_seconds %lld.%03lld\n", (long long) (m->started_ms / 1000),
			(long long) (m->started_ms % 1000));
	if (fclose(out) != 0)
	{
		free(buf);
		return NULL;
	}
	return buf;
}

/* Answer the request in c (complete) and close it. */
static void
answer(const an_cron_metrics *m, const an_cron_state *st, client *c)
{
	char		head[256];
	char	   *text = NULL;
	size_t		len = 0;
	int			n;
	int			is_get = strncmp(c->req, "GET ", 4) == 0 || strncmp(c->req, "HEAD ", 5) == 0;
	const char *path = c->req + (c->req[0] == 'H' ? 5 : 4);
	int			metrics = is_get && strncmp(path, "/metrics", 8) == 0 && (path[8] == ' ' || path[8] == '?');

	if (metrics && (text = body(m, st, &len)) != NULL)
		n = snprintf(head, sizeof(head), "HTTP/1.0 200 OK\r\nContent-Type: text/plain; version=0.0.4; charset=utf-8\r\n"
					 "Content-Length: %zu\r\nConnection: close\r\n\r\n", len);
	else
	{
		const char *why = !is_get ? "405 Method Not Allowed" : metrics ? "500 Internal Server Error" : "404 Not Found";

		n = snprintf(head, sizeof(head), "HTTP/1.0 %s\r\nContent-Type: text/plain\r\nContent-Length: 0\r\n"
					 "Connection: close\r\n\r\n", why);
	}
	/* One try each, never waiting: a client that does not read loses the answer, not the daemon's time. */
	if (send(c->fd, head, (size_t) n, MSG_NOSIGNAL | MSG_DONTWAIT) == n && text && c->req[0] == 'G')
		(void) send(c->fd, text, len, MSG_NOSIGNAL | MSG_DONTWAIT);
	free(text);
	close(c->fd);
	c->fd = -1;
}

void
an_cron_metrics_serve(an_cron_metrics *m, const an_cron_state *st, const struct pollfd *fds, size_t n, int64_t now)
{
	int			fd;

	if (m == NULL)
		return;
	for (size_t k = 1; k < n; k++)
		for (int i = 0; i < CLIENTS_MAX; i++)
		{
			client	   *c = &m->clients[i];
			ssize_t		got;

			if (c->fd != fds[k].fd || !(fds[k].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			got = recv(c->fd, c->req + c->len, sizeof(c->req) - 1 - c->len, MSG_DONTWAIT);
			if (got <= 0 && !(got < 0 && (errno == EAGAIN || errno == EINTR)))
			{
				close(c->fd);
				c->fd = -1;
				continue;
			}
			if (got > 0)
				c->len += (size_t) got;
			c->req[c->len] = '\0';
			if (strstr(c->req, "\r\n\r\n") || strstr(c->req, "\n\n") || c->len == sizeof(c->req) - 1)
				answer(m, st, c);
		}
	for (int i = 0; i < CLIENTS_MAX; i++)
		if (m->clients[i].fd >= 0 && now >= m->clients[i].until)
		{
			close(m->clients[i].fd);
			m->clients[i].fd = -1;
		}
	if (n > 0 && (fds[0].revents & POLLIN))
		while ((fd = accept4(m->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC)) >= 0)
		{
			int			i;

			for (i = 0; i < CLIENTS_MAX && m->clients[i].fd >= 0; i++)
				;
			if (i == CLIENTS_MAX)
			{
				close(fd);
				continue;
			}
			m->clients[i].fd = fd;
			m->clients[i].len = 0;
			m->clients[i].until = now + CLIENT_MS;
		}
}
