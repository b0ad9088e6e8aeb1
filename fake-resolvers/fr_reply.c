/*
 * fr_reply.c: the replies of the fake resolvers' server (fr_server.h,
 * private structs in fr_server_internal.h).
 *
 * It owns the way out of every reply: at once when its delay is 0
 * (through fr_tcp.c or fr_udp.c), else from a binary min-heap ordered by
 * (due, seq), served by one timer, and the counting of the replies that
 * left. libuv timers count whole milliseconds from a cached loop time, so
 * the timer callback re-checks uv_hrtime() and re-arms for whatever is
 * not due yet: replies leave at most about a millisecond late, never
 * early. The heap holds at most FR_SERVER_DELAYED_MAX replies of
 * FR_SERVER_DELAYED_BYTES_MAX bytes in all; what does not fit is counted
 * as overflow.
 */
/* sendmmsg(2) and struct mmsghdr are Linux extensions. */
#define _GNU_SOURCE

#include "fr_server_internal.h"

#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ */
/* Sending replies                                                      */
/* ------------------------------------------------------------------ */

void fr_reply_count(fr_res *res, fr_reply_kind kind) {
  switch (kind) {
  case FR_REPLY_ANSWER:
    ++res->counts.answered;
    break;
  case FR_REPLY_REFUSAL:
    ++res->counts.refused;
    break;
  case FR_REPLY_ERROR:
    break;
  }
}

void fr_reply_deliver(fr_res *res, const fr_dest *dest, const uint8_t *data,
                      size_t len, fr_reply_kind kind) {
  if (dest->conn != NULL) {
    fr_tcp_deliver(res, dest->conn, data, len, kind);
    return;
  }
  fr_udp_deliver(res, &dest->peer, data, len, kind);
}

/* ------------------------------------------------------------------ */
/* Delayed replies: a (due, seq) min-heap                               */
/* ------------------------------------------------------------------ */

static int delayed_less(const fr_delayed *a, const fr_delayed *b) {
  return a->due < b->due || (a->due == b->due && a->seq < b->seq);
}

static void heap_swap(fr_delayed **h, size_t i, size_t j) {
  fr_delayed *t = h[i];
  h[i] = h[j];
  h[j] = t;
}

static void heap_up(fr_delayed **h, size_t i) {
  while (i > 0) {
    size_t parent = (i - 1) / 2;
    if (!delayed_less(h[i], h[parent])) {
      break;
    }
    heap_swap(h, i, parent);
    i = parent;
  }
}

static void heap_down(fr_delayed **h, size_t n, size_t i) {
  for (;;) {
    size_t l = 2 * i + 1;
    size_t r = l + 1;
    size_t m = i;
    if (l < n && delayed_less(h[l], h[m])) {
      m = l;
    }
    if (r < n && delayed_less(h[r], h[m])) {
      m = r;
    }
    if (m == i) {
      break;
    }
    heap_swap(h, i, m);
    i = m;
  }
}

static fr_delayed *heap_pop(fr_server *srv) {
  fr_delayed *top = srv->heap[0];

  --srv->nheap;
  if (srv->nheap > 0) {
    srv->heap[0] = srv->heap[srv->nheap];
    heap_down(srv->heap, srv->nheap, 0);
  }
  srv->heap_bytes -= top->len;
  return top;
}

static void on_delay_timer(uv_timer_t *t);

/* delay_timer_rearm starts the timer for the heap's top. */
static void delay_timer_rearm(fr_server *srv) {
  rp_tstamp now;

  if (srv->nheap == 0) {
    uv_timer_stop(&srv->delay_timer);
    return;
  }
  uv_update_time(srv->loop);
  now = fr_now_ns();
  uv_timer_start(&srv->delay_timer, on_delay_timer,
                 fr_wait_ms(srv->heap[0]->due, now), 0);
}

static void on_delay_timer(uv_timer_t *t) {
  fr_server *srv = t->data;
  rp_tstamp now = fr_now_ns();

  while (srv->nheap > 0 && srv->heap[0]->due <= now) {
    fr_delayed *d = heap_pop(srv);
    fr_reply_deliver(d->res, &d->dest, d->data, d->len, d->kind);
    fr_conn_unref(d->dest.conn);
    free(d);
  }
  delay_timer_rearm(srv);
}

/* fr_reply_schedule sends |len| bytes to |dest| after |delay| ns (at once
   when 0), counting them as |kind| when they leave. */
void fr_reply_schedule(fr_res *res, const fr_dest *dest, const uint8_t *data,
                       size_t len, fr_reply_kind kind, rp_duration delay) {
  fr_server *srv = res->srv;
  fr_delayed *d;

  if (delay == 0) {
    fr_reply_deliver(res, dest, data, len, kind);
    return;
  }
  if (srv->nheap >= FR_SERVER_DELAYED_MAX ||
      srv->heap_bytes + len > FR_SERVER_DELAYED_BYTES_MAX) {
    ++res->counts.overflow;
    return;
  }
  d = malloc(sizeof(*d) + len);
  if (d == NULL) {
    ++res->counts.overflow;
    return;
  }
  *d = (fr_delayed){
      .due = rp_tstamp_add(fr_now_ns(), delay),
      .seq = srv->seq++,
      .res = res,
      .dest = *dest,
      .kind = kind,
      .len = len,
  };
  memcpy(d->data, data, len);
  fr_conn_ref(dest->conn);
  srv->heap[srv->nheap] = d;
  heap_up(srv->heap, srv->nheap);
  ++srv->nheap;
  srv->heap_bytes += len;
  if (srv->heap[0] == d) {
    delay_timer_rearm(srv);
  }
}

void fr_reply_drop_all(fr_server *srv) {
  while (srv->nheap > 0) {
    fr_delayed *d = heap_pop(srv);
    fr_conn_unref(d->dest.conn);
    free(d);
  }
}
