/*
 * metrics.c: the respool command's Prometheus endpoint (--metrics
 * ADDR:PORT; see cli.h): a small HTTP/1.1 server on the pool's libuv loop
 * that answers GET /metrics with the text exposition format (0.0.4) of
 * the pool's counters and each resolver's, and closes the connection.
 *
 * Bounded against a hostile local client: at most METRICS_MAX_CLIENTS
 * connections (more are closed at once), a request of at most
 * METRICS_MAX_REQUEST bytes, METRICS_TIMEOUT_MS to send it; anything but
 * GET /metrics is answered 404 or 405 and closed. No keep-alive.
 */
#include "cli.h"

#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#define METRICS_MAX_CLIENTS 16
#define METRICS_MAX_REQUEST 4096
#define METRICS_TIMEOUT_MS 5000
/* METRICS_BODY_START is the first size of the body buffer (it grows). */
#define METRICS_BODY_START 8192

typedef struct metrics_client {
  /* next and prev link the open connections (cli.metrics_head). */
  struct metrics_client *next, *prev;
  uv_tcp_t tcp;
  uv_timer_t timer;
  uv_write_t wr;
  cli *c;
  char req[METRICS_MAX_REQUEST];
  size_t len;
  char *resp;
  int nclosed;
  int answered;
} metrics_client;

/* metrics_buf is a growing text buffer; |failed| after an allocation
   failure (the response is then a 500). */
typedef struct metrics_buf {
  char *p;
  size_t len, cap;
  int failed;
} metrics_buf;

static void buf_printf(metrics_buf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void buf_printf(metrics_buf *b, const char *fmt, ...) {
  va_list ap;
  int n;

  if (b->failed) {
    return;
  }
  for (;;) {
    va_start(ap, fmt);
    n = vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
    va_end(ap);
    if (n < 0) {
      b->failed = 1;
      return;
    }
    if ((size_t)n < b->cap - b->len) {
      b->len += (size_t)n;
      return;
    }
    {
      size_t ncap = b->cap * 2 + (size_t)n;
      char *np = realloc(b->p, ncap);

      if (np == NULL) {
        b->failed = 1;
        return;
      }
      b->p = np;
      b->cap = ncap;
    }
  }
}

/* buf_label writes |s| as a label value (backslash, quote, newline
   escaped). */
static void buf_label(metrics_buf *b, const char *s) {
  for (; *s != '\0' && !b->failed; ++s) {
    if (*s == '\\' || *s == '"') {
      buf_printf(b, "\\%c", *s);
    } else if (*s == '\n') {
      buf_printf(b, "\\n");
    } else {
      buf_printf(b, "%c", *s);
    }
  }
}

/* metrics_head writes the HELP and TYPE lines of one metric. */
static void metrics_head(metrics_buf *b, const char *name, const char *type,
                         const char *help) {
  buf_printf(b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* metrics_resolver_family writes one per-resolver metric for every
   resolver in the core: |which| picks the value. */
enum {
  M_SENT,
  M_ANSWERED,
  M_REFUSED,
  M_DROPPED,
  M_ERRORS,
  M_COPIES,
  M_HEDGES,
  M_CAP,
  M_LATENCY,
  M_LOSS,
  M_CASE_FALLBACK,
  M_UP
};

static void metrics_resolvers(metrics_buf *b, cli *c, rp_tstamp now,
                              const char *name, const char *type,
                              const char *help, int which) {
  size_t i, n = rp_net_pool_resolver_count(c->np);
  rp_net_resolver_info info;

  metrics_head(b, name, type, help);
  for (i = 0; i < n; ++i) {
    const rp_resolver_stats *s = &info.stats;
    double v;

    if (rp_net_pool_get_resolver(c->np, i, &info, now) != 0 ||
        !info.has_stats) {
      continue;
    }
    switch (which) {
    case M_SENT:
      v = (double)s->sent;
      break;
    case M_ANSWERED:
      v = (double)s->answered;
      break;
    case M_REFUSED:
      v = (double)s->refused;
      break;
    case M_DROPPED:
      v = (double)s->dropped;
      break;
    case M_ERRORS:
      v = (double)s->errors;
      break;
    case M_COPIES:
      v = (double)s->copies;
      break;
    case M_HEDGES:
      v = (double)s->hedges;
      break;
    case M_CAP:
      v = s->cap_qps;
      break;
    case M_LATENCY:
      if (s->mean_latency == RP_TSTAMP_UNSET) {
        continue;
      }
      v = (double)s->mean_latency / (double)RP_SECONDS;
      break;
    case M_LOSS:
      v = s->loss;
      break;
    case M_CASE_FALLBACK:
      v = s->case_fallback;
      break;
    default:
      v = s->state != RP_RESOLVER_DOWN;
      break;
    }
    buf_printf(b, "%s{resolver=\"", name);
    buf_label(b, info.name);
    buf_printf(b, "\"} %.17g\n", v);
  }
}

/* metrics_render writes the whole exposition into |b|. */
static void metrics_render(metrics_buf *b, cli *c) {
  rp_tstamp now = (rp_tstamp)uv_hrtime();
  rp_pool_stats ps;
  static const struct {
    const char *name, *help;
    size_t off;
  } totals[] = {
#define M_TOTAL(field, help)                                                   \
  {"respool_" #field "_total", help, offsetof(rp_pool_stats, field)}
      M_TOTAL(queries, "client queries taken"),
      M_TOTAL(delivered, "client queries answered"),
      M_TOTAL(failed, "client queries answered SERVFAIL by the pool"),
      M_TOTAL(waits, "client queries that waited for capacity"),
      M_TOTAL(sends, "queries sent to resolvers, every kind"),
      M_TOTAL(copies, "copies sent"),
      M_TOTAL(copies_data, "copies whose answer carried other bytes"),
      M_TOTAL(copies_repeat, "copies whose answer repeated one delivered"),
      M_TOTAL(hedges, "hedges sent"),
      M_TOTAL(resends, "queries sent again after a refusal or a loss"),
      M_TOTAL(spills, "queries sent out of the equal-cost band, every "
                      "resolver of it at its cap"),
      M_TOTAL(retries, "tries riding along a query to a resolver left out "
                       "or never answered yet"),
      M_TOTAL(malformed, "malformed client queries or answers"),
      M_TOTAL(spoofed, "answers that matched no query in flight"),
      M_TOTAL(case_mismatches, "answers with the right ID and question in "
                               "another case than the 0x20 name sent"),
      M_TOTAL(case_fallbacks, "times a resolver fell back: the case of its "
                              "answers no longer checked"),
#undef M_TOTAL
  };
  size_t i;

  rp_pool_get_stats(rp_net_pool_get_core(c->np), &ps);
  for (i = 0; i < sizeof(totals) / sizeof(totals[0]); ++i) {
    metrics_head(b, totals[i].name, "counter", totals[i].help);
    buf_printf(b, "%s %llu\n", totals[i].name,
               (unsigned long long)*(const uint64_t *)((const char *)&ps +
                                                       totals[i].off));
  }
  metrics_head(b, "respool_inflight", "gauge", "client queries in flight");
  buf_printf(b, "respool_inflight %zu\n", ps.inflight);
  metrics_head(b, "respool_resolvers_up", "gauge", "resolvers up in the pool");
  buf_printf(b, "respool_resolvers_up %zu\n", ps.nup);
  metrics_resolvers(b, c, now, "respool_resolver_sent_total", "counter",
                    "queries sent to the resolver", M_SENT);
  metrics_resolvers(b, c, now, "respool_resolver_answered_total", "counter",
                    "answers from the resolver", M_ANSWERED);
  metrics_resolvers(b, c, now, "respool_resolver_refused_total", "counter",
                    "refusals (REFUSED, SERVFAIL) from the resolver",
                    M_REFUSED);
  metrics_resolvers(b, c, now, "respool_resolver_lost_total", "counter",
                    "tries judged lost (dropped) at the resolver", M_DROPPED);
  metrics_resolvers(b, c, now, "respool_resolver_errors_total", "counter",
                    "network errors with the resolver", M_ERRORS);
  metrics_resolvers(b, c, now, "respool_resolver_copies_total", "counter",
                    "copies sent to the resolver", M_COPIES);
  metrics_resolvers(b, c, now, "respool_resolver_hedges_total", "counter",
                    "hedges sent to the resolver", M_HEDGES);
  metrics_resolvers(b, c, now, "respool_resolver_cap_qps", "gauge",
                    "learned rate cap, queries/s (0: none)", M_CAP);
  metrics_resolvers(b, c, now, "respool_resolver_latency_seconds", "gauge",
                    "mean answer latency", M_LATENCY);
  metrics_resolvers(b, c, now, "respool_resolver_loss_ratio", "gauge",
                    "estimated loss", M_LOSS);
  metrics_resolvers(b, c, now, "respool_resolver_up", "gauge",
                    "1 while the resolver is not down", M_UP);
  metrics_resolvers(b, c, now, "respool_resolver_case_fallback", "gauge",
                    "1 while the 0x20 case of the resolver's answers is not "
                    "checked",
                    M_CASE_FALLBACK);
}

static void metrics_closed(uv_handle_t *h) {
  metrics_client *mc = h->data;

  if (++mc->nclosed == 2) {
    --mc->c->metrics_clients;
    free(mc->resp);
    free(mc);
  }
}

/* metrics_unlink takes |mc| out of the list of open connections. */
static void metrics_unlink(metrics_client *mc) {
  cli *c = mc->c;

  if (mc->prev != NULL) {
    mc->prev->next = mc->next;
  } else if (c->metrics_head == mc) {
    c->metrics_head = mc->next;
  }
  if (mc->next != NULL) {
    mc->next->prev = mc->prev;
  }
  mc->next = mc->prev = NULL;
}

static void metrics_close(metrics_client *mc) {
  if (uv_is_closing((uv_handle_t *)&mc->tcp)) {
    return;
  }
  metrics_unlink(mc);
  uv_close((uv_handle_t *)&mc->timer, metrics_closed);
  uv_close((uv_handle_t *)&mc->tcp, metrics_closed);
}

static void metrics_written(uv_write_t *w, int status) {
  (void)status;
  metrics_close(w->data);
}

/* metrics_respond sends |status| with |body| (|len| bytes) and closes. */
static void metrics_respond(metrics_client *mc, const char *status,
                            const char *type, const char *body, size_t len) {
  char head[256];
  int n = snprintf(head, sizeof(head),
                   "HTTP/1.1 %s\r\nContent-Type: %s\r\nContent-Length: "
                   "%zu\r\nConnection: close\r\n\r\n",
                   status, type, len);
  uv_buf_t buf;

  mc->answered = 1;
  uv_read_stop((uv_stream_t *)&mc->tcp);
  mc->resp = malloc((size_t)n + len);
  if (mc->resp == NULL) {
    metrics_close(mc);
    return;
  }
  memcpy(mc->resp, head, (size_t)n);
  memcpy(mc->resp + n, body, len);
  buf = uv_buf_init(mc->resp, (unsigned)((size_t)n + len));
  mc->wr.data = mc;
  if (uv_write(&mc->wr, (uv_stream_t *)&mc->tcp, &buf, 1, metrics_written) !=
      0) {
    metrics_close(mc);
  }
}

/* metrics_request answers the complete request head in mc->req. */
static void metrics_request(metrics_client *mc) {
  static const char text[] = "text/plain; version=0.0.4; charset=utf-8";
  metrics_buf b = {0};

  if (strncmp(mc->req, "GET ", 4) != 0) {
    metrics_respond(mc, "405 Method Not Allowed", "text/plain", "GET only\n",
                    strlen("GET only\n"));
    return;
  }
  if (strncmp(mc->req + 4, "/metrics ", 9) != 0 &&
      strncmp(mc->req + 4, "/metrics?", 9) != 0) {
    metrics_respond(mc, "404 Not Found", "text/plain", "try /metrics\n",
                    strlen("try /metrics\n"));
    return;
  }
  if (mc->c->np == NULL || mc->c->stopping) {
    metrics_respond(mc, "503 Service Unavailable", "text/plain",
                    "not running\n", strlen("not running\n"));
    return;
  }
  b.cap = METRICS_BODY_START;
  b.p = malloc(b.cap);
  b.failed = b.p == NULL;
  if (!b.failed) {
    b.p[0] = '\0';
    metrics_render(&b, mc->c);
  }
  if (b.failed) {
    metrics_respond(mc, "500 Internal Server Error", "text/plain",
                    "out of memory\n", strlen("out of memory\n"));
  } else {
    metrics_respond(mc, "200 OK", text, b.p, b.len);
  }
  free(b.p);
}

static void metrics_alloc(uv_handle_t *h, size_t hint, uv_buf_t *buf) {
  metrics_client *mc = h->data;

  (void)hint;
  *buf =
      uv_buf_init(mc->req + mc->len, (unsigned)(sizeof(mc->req) - 1 - mc->len));
}

static void metrics_read(uv_stream_t *s, ssize_t nread, const uv_buf_t *buf) {
  metrics_client *mc = s->data;

  (void)buf;
  if (nread < 0) {
    metrics_close(mc);
    return;
  }
  mc->len += (size_t)nread;
  mc->req[mc->len] = '\0';
  if (strstr(mc->req, "\r\n\r\n") != NULL || strstr(mc->req, "\n\n") != NULL) {
    metrics_request(mc);
  } else if (mc->len >= sizeof(mc->req) - 1) {
    metrics_respond(mc, "431 Request Header Fields Too Large", "text/plain",
                    "request too large\n", strlen("request too large\n"));
  }
}

static void metrics_timeout(uv_timer_t *t) { metrics_close(t->data); }

static void metrics_connection(uv_stream_t *server, int status) {
  cli *c = server->data;
  metrics_client *mc;

  if (status != 0) {
    return;
  }
  mc = calloc(1, sizeof(*mc));
  if (mc == NULL) {
    return;
  }
  mc->c = c;
  mc->next = c->metrics_head;
  if (mc->next != NULL) {
    mc->next->prev = mc;
  }
  c->metrics_head = mc;
  uv_tcp_init(c->loop, &mc->tcp);
  uv_timer_init(c->loop, &mc->timer);
  mc->tcp.data = mc->timer.data = mc;
  ++c->metrics_clients;
  if (uv_accept(server, (uv_stream_t *)&mc->tcp) != 0 ||
      c->metrics_clients > METRICS_MAX_CLIENTS) {
    metrics_close(mc);
    return;
  }
  uv_timer_start(&mc->timer, metrics_timeout, METRICS_TIMEOUT_MS, 0);
  if (uv_read_start((uv_stream_t *)&mc->tcp, metrics_alloc, metrics_read) !=
      0) {
    metrics_close(mc);
  }
}

int cli_metrics_start(cli *c, const struct sockaddr_storage *addr, char *err,
                      size_t errlen) {
  int rv;

  uv_tcp_init(c->loop, &c->metrics);
  c->metrics.data = c;
  c->metrics_on = 1;
  rv = uv_tcp_bind(&c->metrics, (const struct sockaddr *)addr, 0);
  if (rv == 0) {
    rv = uv_listen((uv_stream_t *)&c->metrics, 16, metrics_connection);
  }
  if (rv != 0) {
    snprintf(err, errlen, "command line: --metrics: cannot listen: %s",
             uv_strerror(rv));
    uv_close((uv_handle_t *)&c->metrics, NULL);
    c->metrics_on = 0;
    return -1;
  }
  return 0;
}

void cli_metrics_address(cli *c, char *out, size_t cap) {
  struct sockaddr_storage ss;
  int len = sizeof(ss);

  if (uv_tcp_getsockname(&c->metrics, (struct sockaddr *)&ss, &len) != 0) {
    snprintf(out, cap, "?");
    return;
  }
  rp_net_format_sockaddr(&ss, out, cap);
}

void cli_metrics_stop(cli *c) {
  if (!c->metrics_on) {
    return;
  }
  c->metrics_on = 0;
  while (c->metrics_head != NULL) {
    metrics_close(c->metrics_head);
  }
  uv_close((uv_handle_t *)&c->metrics, NULL);
}
