/*
 * fr_server.c: the libuv server behind `fakeres` (see fr_server.h): its
 * life cycle, the binding of each resolver's sockets, the handling of one
 * query and the reports. The private structs are in fr_server_internal.h;
 * the reply path is in fr_reply.c, the UDP side in fr_udp.c, the TCP side
 * in fr_tcp.c and upstream mode in fr_upstream.c.
 *
 * IMPLEMENTATION NOTES
 *
 * Flow of one query: UDP datagram or TCP frame -> handle_query: dead
 * resolvers ignore everything; a query that does not parse is counted
 * and answered FORMERR when its header reads (never when it is a
 * response, so two fakes cannot loop); else fr_profile_decide picks the
 * verdict with now = uv_hrtime(). Replies leave through
 * fr_reply_schedule (fr_reply.c): at once when the delay is 0, else from
 * a (due, seq) min-heap served by one timer. In upstream mode an answer
 * verdict forwards the query (fr_upstream.c) and the profile's delay
 * applies to the relayed answer.
 *
 * UDP and TCP of one resolver share a port: the sockets are created and
 * bound by hand (socket/bind) and handed to libuv, so a port clash is
 * retried with another free port without any libuv handle to unwind.
 */
/* sendmmsg(2) and struct mmsghdr are Linux extensions. */
#define _GNU_SOURCE

#include "fr_server_internal.h"

#include "fr_answer.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ------------------------------------------------------------------ */
/* Queries                                                              */
/* ------------------------------------------------------------------ */

/* fr_server_handle_query runs one query (|len| bytes at |q|, which may be
   rewritten) received by |res| from |dest|. */
void fr_server_handle_query(fr_res *res, const fr_dest *dest, uint8_t *q,
                            size_t len) {
  fr_server *srv = res->srv;
  rp_dns_msg msg;
  fr_decision d;
  rp_ssize n;
  rp_dns_header hdr;
  int is_response;

  ++res->counts.queries;
  if (res->profile.spec.dead) {
    ++res->counts.dead;
    return;
  }
  is_response = rp_dns_parse_header(&hdr, q, len) == 0 &&
                (hdr.flags & RP_DNS_FLAG_QR) != 0;
  if (is_response || rp_dns_parse(&msg, q, len) != 0 || !msg.has_question) {
    ++res->counts.malformed;
    if (len >= RP_DNS_HEADER_LEN && !is_response) {
      n = rp_dns_build_error(srv->obuf, sizeof(srv->obuf), q, len,
                             RP_DNS_RCODE_FORMERR);
      if (n > 0) {
        fr_reply_deliver(res, dest, srv->obuf, (size_t)n, FR_REPLY_ERROR);
      }
    }
    return;
  }
  fr_profile_decide(&res->profile, fr_now_ns(), fr_rng_next, &srv->rng, &d);
  switch (d.verdict) {
  case FR_VERDICT_ANSWER:
    if (srv->mode == FR_MODE_UPSTREAM) {
      fr_up_forward(res, dest, &msg, q, len, 0, d.delay);
      break;
    }
    n = fr_answer_build(srv->obuf, sizeof(srv->obuf), &msg, dest->conn != NULL);
    if (n < 0) {
      ++res->counts.overflow;
      break;
    }
    fr_reply_schedule(res, dest, srv->obuf, (size_t)n, FR_REPLY_ANSWER,
                      d.delay);
    break;
  case FR_VERDICT_REFUSE:
    n = rp_dns_build_error(srv->obuf, sizeof(srv->obuf), q, len, d.rcode);
    if (n < 0) {
      ++res->counts.overflow;
      break;
    }
    fr_reply_schedule(res, dest, srv->obuf, (size_t)n, FR_REPLY_REFUSAL,
                      d.delay);
    break;
  case FR_VERDICT_DROP:
    ++res->counts.dropped;
    break;
  case FR_VERDICT_LOSE_BEFORE:
    ++res->counts.lost;
    break;
  case FR_VERDICT_LOSE_AFTER:
    ++res->counts.lost;
    if (srv->mode == FR_MODE_UPSTREAM) {
      fr_up_forward(res, dest, &msg, q, len, 1, 0);
    }
    break;
  case FR_VERDICT_DEAD:
    ++res->counts.dead;
    break;
  }
}

/* ------------------------------------------------------------------ */
/* Binding                                                              */
/* ------------------------------------------------------------------ */

/* bind_pair creates a UDP and a TCP socket bound to |addr| on one port
   (|addr|'s port, or a free one when 0). When no shared free port is
   found, the TCP socket takes its own free port. Returns 0 or -errno. */
static int bind_pair(const struct sockaddr_in *addr, int *pufd, int *ptfd) {
  int attempt;
  int ufd = -1;
  int tfd = -1;
  int err = 0;
  const int one = 1;

  for (attempt = 0; attempt < FR_BIND_ATTEMPTS; ++attempt) {
    struct sockaddr_in a = *addr;
    socklen_t alen = sizeof(a);

    ufd = socket(AF_INET, SOCK_DGRAM, 0);
    if (ufd < 0) {
      return -errno;
    }
    if (bind(ufd, (const struct sockaddr *)&a, sizeof(a)) != 0 ||
        getsockname(ufd, (struct sockaddr *)&a, &alen) != 0) {
      err = -errno;
      close(ufd);
      return err;
    }
    tfd = socket(AF_INET, SOCK_STREAM, 0);
    if (tfd < 0) {
      err = -errno;
      close(ufd);
      return err;
    }
    setsockopt(tfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (bind(tfd, (const struct sockaddr *)&a, sizeof(a)) == 0) {
      *pufd = ufd;
      *ptfd = tfd;
      return 0;
    }
    err = -errno;
    close(tfd);
    if (addr->sin_port != 0) {
      close(ufd);
      return err;
    }
    if (attempt + 1 < FR_BIND_ATTEMPTS) {
      close(ufd);
    }
  }
  /* Give TCP a port of its own. */
  tfd = socket(AF_INET, SOCK_STREAM, 0);
  if (tfd < 0 || bind(tfd, (const struct sockaddr *)addr, sizeof(*addr)) != 0) {
    err = -errno;
    if (tfd >= 0) {
      close(tfd);
    }
    close(ufd);
    return err;
  }
  *pufd = ufd;
  *ptfd = tfd;
  return 0;
}

static int res_open(fr_server *srv, fr_res *res, char *errbuf, size_t errlen) {
  struct sockaddr_in addr = {.sin_family = AF_INET};
  int ufd = -1;
  int tfd = -1;
  int rv;
  int len;
  int bufsize = FR_SOCKET_BUF;
  const char *name = res->profile.spec.name;
  char ip[INET_ADDRSTRLEN];

  memcpy(&addr.sin_addr, res->profile.spec.addr, sizeof(addr.sin_addr));
  addr.sin_port = htons(res->profile.spec.port);
  inet_ntop(AF_INET, &addr.sin_addr, ip, sizeof(ip));
  rv = bind_pair(&addr, &ufd, &tfd);
  if (rv != 0) {
    fr_set_err(errbuf, errlen, "resolver %s: cannot bind %s:%u: %s", name, ip,
               (unsigned)res->profile.spec.port, strerror(-rv));
    return RP_ERR_IO;
  }
  /* recvmmsg: one system call reads a burst of queries. */
  uv_udp_init_ex(srv->loop, &res->udp, AF_UNSPEC | UV_UDP_RECVMMSG);
  res->udp.data = res;
  res->udp_open = 1;
  uv_tcp_init(srv->loop, &res->tcp);
  res->tcp.data = res;
  res->tcp_open = 1;
  if ((rv = uv_udp_open(&res->udp, ufd)) != 0) {
    close(ufd);
    close(tfd);
    goto fail;
  }
  if ((rv = uv_tcp_open(&res->tcp, tfd)) != 0) {
    close(tfd);
    goto fail;
  }
  uv_recv_buffer_size((uv_handle_t *)&res->udp, &bufsize);
  bufsize = FR_SOCKET_BUF;
  uv_send_buffer_size((uv_handle_t *)&res->udp, &bufsize);
  if ((rv = uv_listen((uv_stream_t *)&res->tcp, FR_TCP_BACKLOG,
                      fr_tcp_on_connection)) != 0) {
    goto fail;
  }
  if ((rv = uv_udp_recv_start(&res->udp, fr_udp_on_alloc, fr_udp_on_recv)) !=
      0) {
    goto fail;
  }
  len = sizeof(res->udp_addr);
  uv_udp_getsockname(&res->udp, (struct sockaddr *)&res->udp_addr, &len);
  len = sizeof(res->tcp_addr);
  uv_tcp_getsockname(&res->tcp, (struct sockaddr *)&res->tcp_addr, &len);
  return 0;
fail:
  fr_set_err(errbuf, errlen, "resolver %s: cannot listen on %s: %s", name, ip,
             uv_strerror(rv));
  return RP_ERR_IO;
}

/* ------------------------------------------------------------------ */
/* Life cycle                                                           */
/* ------------------------------------------------------------------ */

int fr_server_new(fr_server **psrv, uv_loop_t *loop,
                  const fr_server_config *config, char *errbuf, size_t errlen) {
  fr_server *srv;
  size_t i;
  int rv;
  rp_tstamp now = fr_now_ns();

  if (config->nspecs == 0) {
    fr_set_err(errbuf, errlen, "no resolver");
    return RP_ERR_INVALID_ARGUMENT;
  }
  srv = calloc(1, sizeof(*srv));
  if (srv == NULL) {
    return RP_ERR_NOMEM;
  }
  srv->loop = loop;
  srv->mode = config->mode;
  srv->upstream = config->upstream;
  srv->upstream_timeout = config->upstream_timeout;
  srv->up_free = FR_NIL;
  srv->up_head = FR_NIL;
  srv->up_tail = FR_NIL;
  fr_rng_seed(&srv->rng, config->seed);
  srv->res = calloc(config->nspecs, sizeof(*srv->res));
  srv->heap = calloc(FR_SERVER_DELAYED_MAX, sizeof(*srv->heap));
  if (srv->res == NULL || srv->heap == NULL) {
    rv = RP_ERR_NOMEM;
    goto fail;
  }
  srv->nres = config->nspecs;
  if (srv->mode == FR_MODE_UPSTREAM) {
    rv = fr_up_table_init(srv);
    if (rv != 0) {
      goto fail;
    }
  }
  uv_timer_init(loop, &srv->delay_timer);
  srv->delay_timer.data = srv;
  srv->delay_timer_open = 1;
  uv_timer_init(loop, &srv->up_timer);
  srv->up_timer.data = srv;
  srv->up_timer_open = 1;
  uv_timer_init(loop, &srv->sweep_timer);
  srv->sweep_timer.data = srv;
  srv->sweep_timer_open = 1;
  uv_timer_start(&srv->sweep_timer, fr_tcp_on_sweep_timer, FR_TCP_SWEEP_MS,
                 FR_TCP_SWEEP_MS);
  for (i = 0; i < srv->nres; ++i) {
    srv->res[i].srv = srv;
    fr_profile_init(&srv->res[i].profile, &config->specs[i], now);
  }
  if (srv->mode == FR_MODE_UPSTREAM) {
    rv = fr_up_open(srv);
    if (rv != 0) {
      fr_set_err(errbuf, errlen, "upstream: %s", uv_strerror(rv));
      rv = RP_ERR_IO;
      goto fail;
    }
  }
  for (i = 0; i < srv->nres; ++i) {
    rv = res_open(srv, &srv->res[i], errbuf, errlen);
    if (rv != 0) {
      goto fail;
    }
  }
  *psrv = srv;
  return 0;
fail:
  fr_server_close(srv);
  /* One pass runs the close callbacks of the handles opened so far. */
  uv_run(loop, UV_RUN_NOWAIT);
  fr_server_del(srv);
  return rv;
}

void fr_server_close(fr_server *srv) {
  size_t i;

  if (srv->closing) {
    return;
  }
  srv->closing = 1;
  fr_udp_batch_flush(srv);
  srv->batch.active = 0;
  fr_reply_drop_all(srv);
  while (srv->up_head != FR_NIL) {
    fr_up_release(srv, srv->up_head);
  }
  if (srv->delay_timer_open) {
    uv_close((uv_handle_t *)&srv->delay_timer, NULL);
  }
  if (srv->up_timer_open) {
    uv_close((uv_handle_t *)&srv->up_timer, NULL);
  }
  if (srv->sweep_timer_open) {
    uv_close((uv_handle_t *)&srv->sweep_timer, NULL);
  }
  if (srv->up_open) {
    uv_close((uv_handle_t *)&srv->up_udp, NULL);
  }
  for (i = 0; i < srv->nres; ++i) {
    fr_res *res = &srv->res[i];
    fr_conn *c;
    fr_conn *next;
    if (res->udp_open) {
      uv_close((uv_handle_t *)&res->udp, NULL);
    }
    if (res->tcp_open) {
      uv_close((uv_handle_t *)&res->tcp, NULL);
    }
    for (c = res->conns; c != NULL; c = next) {
      next = c->next;
      fr_conn_close(c);
    }
  }
}

void fr_server_del(fr_server *srv) {
  if (srv == NULL) {
    return;
  }
  free(srv->heap);
  free(srv->ups);
  free(srv->id_map);
  free(srv->res);
  free(srv);
}

/* ------------------------------------------------------------------ */
/* Reports                                                              */
/* ------------------------------------------------------------------ */

static void addr_text(const struct sockaddr_in *a, char *out, size_t cap) {
  char ip[INET_ADDRSTRLEN];

  inet_ntop(AF_INET, &a->sin_addr, ip, sizeof(ip));
  snprintf(out, cap, "%s:%u", ip, (unsigned)ntohs(a->sin_port));
}

void fr_server_print_addresses(const fr_server *srv, FILE *out) {
  size_t i;
  char u[FR_ADDR_TEXT_LEN];
  char t[FR_ADDR_TEXT_LEN];

  fputs("{\"resolvers\":[", out);
  for (i = 0; i < srv->nres; ++i) {
    const fr_res *res = &srv->res[i];
    addr_text(&res->udp_addr, u, sizeof(u));
    addr_text(&res->tcp_addr, t, sizeof(t));
    fprintf(out, "%s{\"name\":\"%s\",\"udp\":\"%s\",\"tcp\":\"%s\"}",
            i > 0 ? "," : "", res->profile.spec.name, u, t);
  }
  fputs("]}\n", out);
  fflush(out);
}

void fr_server_print_counts(const fr_server *srv, FILE *out) {
  size_t i;

  fputs("{\"resolvers\":[", out);
  for (i = 0; i < srv->nres; ++i) {
    const fr_res *res = &srv->res[i];
    const fr_counts *k = &res->counts;
    fprintf(out,
            "%s{\"name\":\"%s\",\"queries\":%llu,\"answered\":%llu,"
            "\"refused\":%llu,\"dropped\":%llu,\"lost\":%llu,"
            "\"malformed\":%llu,\"upstream_timeouts\":%llu,\"dead\":%llu,"
            "\"overflow\":%llu}",
            i > 0 ? "," : "", res->profile.spec.name,
            (unsigned long long)k->queries, (unsigned long long)k->answered,
            (unsigned long long)k->refused, (unsigned long long)k->dropped,
            (unsigned long long)k->lost, (unsigned long long)k->malformed,
            (unsigned long long)k->upstream_timeouts,
            (unsigned long long)k->dead, (unsigned long long)k->overflow);
  }
  fputs("]}\n", out);
  fflush(out);
}

const fr_counts *fr_server_counts(const fr_server *srv, size_t i) {
  return i < srv->nres ? &srv->res[i].counts : NULL;
}

int fr_server_address(const fr_server *srv, size_t i, struct sockaddr_in *udp,
                      struct sockaddr_in *tcp) {
  if (i >= srv->nres) {
    return RP_ERR_NOT_FOUND;
  }
  if (udp != NULL) {
    *udp = srv->res[i].udp_addr;
  }
  if (tcp != NULL) {
    *tcp = srv->res[i].tcp_addr;
  }
  return 0;
}
