/*
 * fr_upstream.c: upstream mode of the fake resolvers' server
 * (fr_server.h, private structs in fr_server_internal.h).
 *
 * It owns the forwarding table and the one connected UDP socket to the
 * upstream for the whole process. A forwarded query gets a random free
 * ID from a table of FR_SERVER_UPSTREAM_MAX slots (an ID -> slot map of
 * 65536 entries makes lookups O(1)); the answer must come from the
 * upstream (the socket is connected), carry a pending ID and echo the
 * question exactly, else it is ignored. All entries share one timeout,
 * so they expire in creation order: a FIFO list and one timer suffice.
 * The profile's delay applies to the relayed answer (the forward leaves
 * at once).
 */
/* sendmmsg(2) and struct mmsghdr are Linux extensions. */
#define _GNU_SOURCE

#include "fr_server_internal.h"

#include <stdlib.h>

/* ------------------------------------------------------------------ */
/* Upstream mode                                                        */
/* ------------------------------------------------------------------ */

static void on_up_timer(uv_timer_t *t);

static void up_timer_rearm(fr_server *srv) {
  if (srv->up_head == FR_NIL) {
    uv_timer_stop(&srv->up_timer);
    return;
  }
  uv_update_time(srv->loop);
  uv_timer_start(&srv->up_timer, on_up_timer,
                 fr_wait_ms(srv->ups[srv->up_head].deadline, fr_now_ns()), 0);
}

/* fr_up_release frees slot |i|: off the FIFO, onto the free list. */
void fr_up_release(fr_server *srv, uint32_t i) {
  fr_up *e = &srv->ups[i];
  fr_conn *c = e->dest.conn;

  if (e->prev != FR_NIL) {
    srv->ups[e->prev].next = e->next;
  } else {
    srv->up_head = e->next;
  }
  if (e->next != FR_NIL) {
    srv->ups[e->next].prev = e->prev;
  } else {
    srv->up_tail = e->prev;
  }
  srv->id_map[e->id] = 0;
  e->used = 0;
  e->dest.conn = NULL;
  e->prev = FR_NIL;
  e->next = srv->up_free;
  srv->up_free = i;
  --srv->nup;
  fr_conn_unref(c);
}

static void on_up_timer(uv_timer_t *t) {
  fr_server *srv = t->data;
  rp_tstamp now = fr_now_ns();

  while (srv->up_head != FR_NIL && srv->ups[srv->up_head].deadline <= now) {
    ++srv->ups[srv->up_head].res->counts.upstream_timeouts;
    fr_up_release(srv, srv->up_head);
  }
  up_timer_rearm(srv);
}

/* fr_up_forward sends the query in |q| (|len| bytes, parsed as |msg|; its ID
   is rewritten in place) upstream. |lose| drops the answer, |delay|
   holds it back. */
void fr_up_forward(fr_res *res, const fr_dest *dest, const rp_dns_msg *msg,
                   uint8_t *q, size_t len, int lose, rp_duration delay) {
  fr_server *srv = res->srv;
  uint32_t i;
  fr_up *e;
  uint16_t id;
  uv_buf_t buf;
  int rv;
  int was_empty = srv->up_head == FR_NIL;

  if (srv->up_free == FR_NIL) {
    ++res->counts.overflow;
    return;
  }
  do {
    id = (uint16_t)(fr_rng_next(&srv->rng) & FR_ID_MASK);
  } while (srv->id_map[id] != 0);
  rp_dns_set_id(q, id);
  buf = uv_buf_init((char *)q, (unsigned)len);
  rv = uv_udp_try_send(&srv->up_udp, &buf, 1, NULL);
  if (rv < 0) {
    /* A full socket buffer toward a loopback upstream: count, do not
       queue (the upstream is overloaded anyway). */
    ++res->counts.overflow;
    return;
  }
  i = srv->up_free;
  e = &srv->ups[i];
  srv->up_free = e->next;
  *e = (fr_up){
      .used = 1,
      .id = id,
      .client_id = msg->hdr.id,
      .lose = lose,
      .delay = delay,
      .deadline = rp_tstamp_add(fr_now_ns(), srv->upstream_timeout),
      .res = res,
      .dest = *dest,
      .question = msg->question,
      .prev = srv->up_tail,
      .next = FR_NIL,
  };
  if (srv->up_tail != FR_NIL) {
    srv->ups[srv->up_tail].next = i;
  } else {
    srv->up_head = i;
  }
  srv->up_tail = i;
  srv->id_map[id] = i + 1;
  ++srv->nup;
  fr_conn_ref(dest->conn);
  if (was_empty) {
    up_timer_rearm(srv);
  }
}

static void on_up_alloc(uv_handle_t *h, size_t suggested, uv_buf_t *buf) {
  fr_server *srv = h->data;

  (void)suggested;
  *buf = uv_buf_init((char *)srv->rbuf, sizeof(srv->rbuf));
}

static void on_up_recv(uv_udp_t *h, ssize_t nread, const uv_buf_t *buf,
                       const struct sockaddr *addr, unsigned flags) {
  fr_server *srv = h->data;
  uint8_t *p = (uint8_t *)buf->base;
  size_t len;
  uint32_t slot;
  fr_up *e;
  rp_dns_msg msg;
  fr_dest dest;

  (void)addr;
  if (fr_udp_batch_burst(srv, flags)) {
    return;
  }
  if (nread < RP_DNS_HEADER_LEN || (flags & UV_UDP_PARTIAL)) {
    return;
  }
  len = (size_t)nread;
  slot = srv->id_map[rp_dns_get_id(p)];
  if (slot == 0) {
    return; /* late (timed out) or spoofed */
  }
  e = &srv->ups[slot - 1];
  if (rp_dns_parse(&msg, p, len) != 0 || !msg.has_question ||
      !rp_dns_question_equal(&msg.question, &e->question)) {
    return; /* not the answer to this query: keep waiting */
  }
  rp_dns_set_id(p, e->client_id);
  dest = e->dest;
  if (!e->lose) {
    fr_reply_schedule(e->res, &dest, p, len, FR_REPLY_ANSWER, e->delay);
  }
  fr_up_release(srv, slot - 1);
}

int fr_up_table_init(fr_server *srv) {
  size_t i;

  srv->ups = calloc(FR_SERVER_UPSTREAM_MAX, sizeof(*srv->ups));
  srv->id_map = calloc(FR_ID_SPACE, sizeof(*srv->id_map));
  if (srv->ups == NULL || srv->id_map == NULL) {
    return RP_ERR_NOMEM;
  }
  for (i = 0; i < FR_SERVER_UPSTREAM_MAX; ++i) {
    srv->ups[i].prev = FR_NIL;
    srv->ups[i].next =
        i + 1 < FR_SERVER_UPSTREAM_MAX ? (uint32_t)(i + 1) : FR_NIL;
  }
  srv->up_free = 0;
  return 0;
}

int fr_up_open(fr_server *srv) {
  int rv;
  int bufsize = FR_SOCKET_BUF;

  uv_udp_init_ex(srv->loop, &srv->up_udp, AF_UNSPEC | UV_UDP_RECVMMSG);
  srv->up_udp.data = srv;
  srv->up_open = 1;
  rv = uv_udp_connect(&srv->up_udp, (const struct sockaddr *)&srv->upstream);
  if (rv == 0) {
    uv_recv_buffer_size((uv_handle_t *)&srv->up_udp, &bufsize);
    rv = uv_udp_recv_start(&srv->up_udp, on_up_alloc, on_up_recv);
  }
  return rv;
}
