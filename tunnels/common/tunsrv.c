/*
 * tunsrv.c: sessions, held polls and answers of the tunnel server.
 *
 * IMPLEMENTATION NOTES
 *
 * Sessions live in a table of max_sessions slots searched linearly (64 by
 * default: a scan is cheaper than a hash at that size). Each session owns
 * one arq and a FIFO ring of held queries (copies of the query bytes and
 * the peer), so its memory is fixed when it is created.
 *
 * A DATA query is fed to the session's arq, uploaded bytes are drained to
 * the sink and the send buffer is refilled from the source; then the
 * query joins the session's FIFO and the FIFO is flushed: the oldest held
 * query is answered while the arq has something to send (a segment due
 * or an ack owed). In MD mode, or when the hold is 0, every query left is
 * answered at once with an ack alone. Expiry ends holds (empty answer at
 * settings.hold), fires the arq timers (which may answer held queries)
 * and removes sessions idle for idle_timeout.
 *
 * A held query keeps the ID and question of its own copy, so a copy of a
 * query sent by the pool to two resolvers is answered twice, each time
 * with what is queued then.
 */
#include "tunsrv.h"

#include "tunsrvq.h"
#include "tunwire.h"

#include <string.h>

/* Defaults, see tun_srv_settings_default. */
#define SRV_DEFAULT_SESSIONS 64
#define SRV_DEFAULT_HELD 512
#define SRV_DEFAULT_HOLD RP_SECONDS
#define SRV_DEFAULT_IDLE (60 * RP_SECONDS)
#define SRV_DEFAULT_EVICT_IDLE (5 * RP_SECONDS)
#define SRV_DNSTT_WND 128
#define SRV_MD_WND 32
/* SRV_SNDBUF is each session's queue of served bytes not yet cut into
   segments. */
#define SRV_SNDBUF (64 * 1024)
/* SRV_CHUNK is the scratch size for moving bytes between the arq and the
   source or sink. */
#define SRV_CHUNK 4096
/* SRV_MIN_MD_MTU is the smallest MD download MTU that carries data. */
#define SRV_MIN_MD_MTU (TUN_ARQ_HDR_FIXED + TUN_ARQ_SEG_HDR + 1)
/* SRV_ANSWER_TTL is the TTL of every answer: 0, nothing is cacheable. */
#define SRV_ANSWER_TTL 0

typedef struct srv_held {
  tun_peer peer;
  /* at is when the query arrived. */
  rp_tstamp at;
  /* len is the query length, bytes. */
  size_t len;
  /* down_limit is the query's header field. */
  uint16_t down_limit;
  /* ack_only: answer with the ack alone (settings.up_ack_only). */
  int ack_only;
  uint8_t query[TUN_SRV_MAX_QUERY];
} srv_held;

typedef struct srv_session {
  uint64_t sid;
  tun_arq *arq;
  /* last_seen is the time of the last query. */
  rp_tstamp last_seen;
  /* serve_at is when the session starts getting served bytes
     (settings.serve_delay after it was created); serving is 1 from
     then on. */
  rp_tstamp serve_at;
  int serving;
  /* served is the stream offset of the next byte from the source;
     received the offset of the next byte to the sink. */
  uint64_t served;
  uint64_t received;
  /* msg_left: with write_msg, the bytes of the current message still to
     write (0: the next write is a length). */
  size_t msg_left;
  /* next_flush: with flush_interval, when the arq next lets new
     segments fill its window (tun_arq_send_flush). */
  rp_tstamp next_flush;
  /* held is a ring of max_held entries. */
  srv_held *held;
  size_t held_head;
  size_t held_len;
  /* q is the send queue with out_queue (q.cap 0 without). */
  tun_srvq q;
  /* nack: the upload's NACKs with settings.nack (else NULL). */
  tun_nack *nack;
} srv_session;

struct tun_srv {
  tun_srv_settings s;
  tun_srv_callbacks cb;
  const rp_mem *mem;
  void *user_data;
  srv_session **sessions;
  /* st: the counters; its arq sums (srv_sum_arq) are those of the
     removed sessions, tun_srv_get_stats adds the live ones'. */
  tun_srv_stats st;
  /* down_room is the fixed TXT payload of DNSTT answers, bytes. */
  size_t down_room;
  /* resends_owed: answers owed to tun_srv_add_resends. */
  size_t resends_owed;
  /* ack_next, nack_next: the segments tun_srv_blocks named for the next
     query. */
  tun_arq_sent ack_next;
  tun_arq_sent nack_next;
  /* nacks_out: the NACKs of the last query (settings.nack). */
  uint32_t nacks_out[TUN_NACK_GAP_MAX];
  size_t nnacks_out;
  /* Scratch buffers, kept here rather than on the stack. */
  uint8_t frame[TUN_WIRE_MAX_MSG];
  uint8_t out[TUN_WIRE_MAX_MSG];
  uint8_t chunk[SRV_CHUNK];
};

void tun_srv_settings_default(tun_srv_settings *s, tun_mode mode) {
  *s = (tun_srv_settings){
      .mode = mode,
      .domain = {.wire = {0}, .len = 1},
      .max_sessions = SRV_DEFAULT_SESSIONS,
      .max_held = SRV_DEFAULT_HELD,
      .hold = mode == TUN_MODE_DNSTT ? SRV_DEFAULT_HOLD : 0,
      .idle_timeout = SRV_DEFAULT_IDLE,
      .evict_idle = SRV_DEFAULT_EVICT_IDLE,
      .max_answer = RP_DNS_EDNS_UDP_SIZE,
  };
  tun_arq_settings_default(&s->arq);
  s->arq.snd_wnd = s->arq.rcv_wnd =
      mode == TUN_MODE_DNSTT ? SRV_DNSTT_WND : SRV_MD_WND;
  s->arq.snd_buf = SRV_SNDBUF;
  if (mode == TUN_MODE_MD) {
    s->arq.max_segs = 1;
  }
}

/* srv_down_room returns the TXT payload that fits beside a question of
   the longest name: the fixed downstream payload of DNSTT mode, as dnstt
   computes its maxEncodedPayload once for the worst case. */
static size_t srv_down_room(size_t max_answer) {
  rp_dns_name longest;
  size_t pos = 0;

  /* The longest name: labels of 63 bytes, then a shorter one, then the
     root label, 255 wire bytes in all. */
  memset(longest.wire, 'a', sizeof(longest.wire));
  while (pos + 1 < RP_DNS_MAX_NAME_LEN) {
    size_t left = RP_DNS_MAX_NAME_LEN - 1 - pos - 1;

    longest.wire[pos] =
        (uint8_t)(left > RP_DNS_MAX_LABEL_LEN ? RP_DNS_MAX_LABEL_LEN : left);
    pos += 1 + longest.wire[pos];
  }
  longest.wire[RP_DNS_MAX_NAME_LEN - 1] = 0;
  longest.len = RP_DNS_MAX_NAME_LEN;
  return rp_dns_txt_room(&longest, max_answer, 1);
}

size_t tun_srv_down_mss(size_t max_answer) {
  size_t room = srv_down_room(max_answer);

  if (room <= TUN_ARQ_HDR_FIXED + TUN_ARQ_SEG_HDR) {
    return 0;
  }
  return room - TUN_ARQ_HDR_FIXED - TUN_ARQ_SEG_HDR;
}

size_t tun_srv_up_mss(const rp_dns_name *domain) {
  size_t cap = tun_wire_up_capacity(domain);
  size_t over = TUN_WIRE_HDR_LEN + TUN_ARQ_HDR_FIXED + TUN_ARQ_SEG_HDR;

  return cap > over ? cap - over : 0;
}

size_t tun_srv_md_mss(size_t mtu) {
  if (mtu < SRV_MIN_MD_MTU) {
    return 0;
  }
  return mtu - TUN_ARQ_HDR_FIXED - TUN_ARQ_SEG_HDR;
}

int tun_srv_new(tun_srv **psrv, const tun_srv_settings *settings,
                const tun_srv_callbacks *callbacks, const rp_mem *mem,
                void *user_data) {
  tun_srv *srv;

  if (mem == NULL) {
    mem = rp_mem_default();
  }
  if (callbacks->send == NULL || callbacks->source == NULL ||
      settings->max_sessions == 0 || settings->max_held == 0 ||
      settings->max_answer < RP_DNS_MAX_UDP_DEFAULT ||
      settings->max_answer > TUN_WIRE_MAX_MSG ||
      settings->out_queue > TUN_SRV_MAX_OUT_QUEUE ||
      settings->nack.gap > TUN_NACK_GAP_MAX ||
      settings->write_msg > SRV_CHUNK ||
      settings->write_msg > settings->arq.snd_buf ||
      (settings->write_msg > 0 &&
       (settings->out_queue == 0 || settings->flush_interval == 0)) ||
      tun_srv_up_mss(&settings->domain) == 0) {
    return RP_ERR_INVALID_ARGUMENT;
  }
  srv = mem->calloc(1, sizeof(*srv), mem->user_data);
  if (srv == NULL) {
    return RP_ERR_NOMEM;
  }
  srv->sessions = mem->calloc(settings->max_sessions, sizeof(srv_session *),
                              mem->user_data);
  if (srv->sessions == NULL) {
    mem->free(srv, mem->user_data);
    return RP_ERR_NOMEM;
  }
  srv->s = *settings;
  srv->down_room = srv_down_room(settings->max_answer);
  srv->cb = *callbacks;
  srv->mem = mem;
  srv->user_data = user_data;
  *psrv = srv;
  return 0;
}

/* srv_sum_arq adds the counters of session arq |as| to |st|. */
static void srv_sum_arq(tun_srv_stats *st, const tun_arq_stats *as) {
  st->retransmissions += as->retransmissions;
  st->timeouts += as->timeouts;
  st->fast_retransmits += as->fast_retransmits;
  st->window_full += as->window_full;
}

static void srv_session_del(tun_srv *srv, size_t idx) {
  srv_session *ss = srv->sessions[idx];
  tun_arq_stats as;

  tun_arq_get_stats(ss->arq, &as);
  srv_sum_arq(&srv->st, &as);
  tun_arq_del(ss->arq);
  tun_srvq_free(&ss->q, srv->mem);
  srv->mem->free(ss->nack, srv->mem->user_data);
  srv->mem->free(ss->held, srv->mem->user_data);
  srv->mem->free(ss, srv->mem->user_data);
  srv->sessions[idx] = NULL;
  --srv->st.sessions;
}

void tun_srv_del(tun_srv *srv) {
  size_t i;

  if (srv == NULL) {
    return;
  }
  for (i = 0; i < srv->s.max_sessions; ++i) {
    if (srv->sessions[i] != NULL) {
      srv_session_del(srv, i);
    }
  }
  srv->mem->free(srv->sessions, srv->mem->user_data);
  srv->mem->free(srv, srv->mem->user_data);
}

/* srv_session_new creates the session |sid| in a free slot. |down_limit|
   sets the MD segment size. */
static int srv_session_new(tun_srv *srv, uint64_t sid, uint16_t down_limit,
                           rp_tstamp now, srv_session **pss) {
  tun_arq_settings as = srv->s.arq;
  srv_session *ss;
  size_t i, slot = SIZE_MAX;
  int rv;

  for (i = 0; i < srv->s.max_sessions; ++i) {
    if (srv->sessions[i] == NULL) {
      slot = i;
      break;
    }
  }
  if (slot == SIZE_MAX) {
    /* Full: the session silent longest makes room if it has been silent
       for evict_idle (a finished client), else the new one is refused. */
    size_t old = 0;

    for (i = 1; i < srv->s.max_sessions; ++i) {
      if (srv->sessions[i]->last_seen < srv->sessions[old]->last_seen) {
        old = i;
      }
    }
    if (!rp_tstamp_elapsed(srv->sessions[old]->last_seen, srv->s.evict_idle,
                           now)) {
      return RP_ERR_FULL;
    }
    srv_session_del(srv, old);
    ++srv->st.sessions_evicted;
    slot = old;
  }
  as.peer_mss = tun_srv_up_mss(&srv->s.domain);
  if (srv->s.mode == TUN_MODE_MD) {
    /* The client's down_limit, bounded by a frame: no answer carries
       more, and a segment queued (out_queue) or dropped from the queue
       must fit srv->frame whatever the client asked for. */
    as.mss = tun_srv_md_mss(down_limit < sizeof(srv->frame)
                                ? down_limit
                                : sizeof(srv->frame));
    as.max_segs = 1;
  } else {
    as.mss = tun_srv_down_mss(srv->s.max_answer);
  }
  as.send_held = srv->s.flush_interval > 0;
  if (as.mss == 0) {
    return RP_ERR_INVALID_ARGUMENT;
  }
  ss = srv->mem->calloc(1, sizeof(*ss), srv->mem->user_data);
  if (ss == NULL) {
    return RP_ERR_NOMEM;
  }
  ss->held =
      srv->mem->calloc(srv->s.max_held, sizeof(srv_held), srv->mem->user_data);
  if (srv->s.nack.gap > 0) {
    ss->nack = srv->mem->malloc(sizeof(*ss->nack), srv->mem->user_data);
  }
  if (ss->held == NULL || (srv->s.nack.gap > 0 && ss->nack == NULL)) {
    rv = RP_ERR_NOMEM;
    goto fail_held;
  }
  if (ss->nack != NULL) {
    tun_nack_init(ss->nack, &srv->s.nack);
  }
  rv = tun_arq_new(&ss->arq, &as, srv->mem);
  if (rv != 0) {
    goto fail_arq;
  }
  if (srv->s.out_queue > 0) {
    rv = tun_srvq_init(&ss->q, srv->s.out_queue, as.mss, srv->s.ack_queued,
                       ss->arq, srv->mem);
    if (rv != 0) {
      tun_arq_del(ss->arq);
      goto fail_arq;
    }
  }
  ss->sid = sid;
  ss->last_seen = now;
  ss->serve_at = rp_tstamp_add(now, srv->s.serve_delay);
  ss->next_flush = now;
  srv->sessions[slot] = ss;
  ++srv->st.sessions;
  ++srv->st.sessions_created;
  *pss = ss;
  return 0;

fail_arq:
fail_held:
  srv->mem->free(ss->nack, srv->mem->user_data);
  srv->mem->free(ss->held, srv->mem->user_data);
  srv->mem->free(ss, srv->mem->user_data);
  return rv;
}

static srv_session *srv_session_find(tun_srv *srv, uint64_t sid) {
  size_t i;

  for (i = 0; i < srv->s.max_sessions; ++i) {
    if (srv->sessions[i] != NULL && srv->sessions[i]->sid == sid) {
      return srv->sessions[i];
    }
  }
  return NULL;
}

static int srv_send(tun_srv *srv, const tun_peer *peer, const uint8_t *data,
                    size_t len) {
  ++srv->st.answers;
  if (srv->cb.send(peer, data, len, srv->user_data) != 0) {
    return RP_ERR_CALLBACK_FAILURE;
  }
  return 0;
}

/* srv_answer_error answers |query| with |rcode| when it has a header. */
static int srv_answer_error(tun_srv *srv, const uint8_t *query, size_t len,
                            const tun_peer *peer, uint8_t rcode) {
  rp_ssize n =
      rp_dns_build_error(srv->out, sizeof(srv->out), query, len, rcode);

  if (n < 0) {
    ++srv->st.dropped;
    return 0;
  }
  return srv_send(srv, peer, srv->out, (size_t)n);
}

/* srv_answer_held answers the held query |h| of |ss| with a frame from
   its arq. */
static int srv_answer_held(tun_srv *srv, srv_session *ss, const srv_held *h,
                           rp_tstamp now) {
  rp_dns_msg q;
  rp_ssize flen, n;
  tun_arq_sent sent;
  size_t room;

  if (rp_dns_parse(&q, h->query, h->len) != 0) {
    ++srv->st.dropped;
    return 0;
  }
  room = tun_wire_answer_room(&q, srv->s.max_answer);
  if (srv->s.mode == TUN_MODE_MD && h->down_limit != 0 &&
      h->down_limit < room) {
    room = h->down_limit;
  }
  if (srv->s.mode == TUN_MODE_DNSTT && srv->down_room < room) {
    room = srv->down_room;
  }
  if (room > sizeof(srv->frame)) {
    room = sizeof(srv->frame);
  }
  flen = 0;
  sent.n = 1;
  if (!h->ack_only && srv->resends_owed > 0) {
    /* A packet the client most likely has, sent again (0: none). */
    flen = tun_arq_output_repeat(ss->arq, srv->frame, room);
    if (flen > 0) {
      --srv->resends_owed;
      ++srv->st.resends;
    }
  }
  if (flen != 0) {
    /* The repeat, or no room for it. */
  } else if (h->ack_only) {
    /* The ack header alone: no segment (nor sack) fits. */
    flen = tun_arq_output(ss->arq, srv->frame,
                          room < TUN_ARQ_HDR_FIXED ? room : TUN_ARQ_HDR_FIXED,
                          now, &sent);
  } else if (srv->s.out_queue > 0) {
    flen = tun_srvq_frame(&ss->q, ss->arq, srv->frame, room, now, &sent,
                          &srv->st.queue_drops);
  } else {
    flen = tun_arq_output(ss->arq, srv->frame, room, now, &sent);
  }
  if (flen < 0) {
    /* Not even an ack header fits (a tiny EDNS size). */
    return srv_answer_error(srv, h->query, h->len, &h->peer,
                            RP_DNS_RCODE_SERVFAIL);
  }
  if (sent.n == 0) {
    ++srv->st.answered_empty;
  }
  n = rp_dns_build_txt_answer(srv->out, sizeof(srv->out), &q, SRV_ANSWER_TTL,
                              srv->frame, (size_t)flen);
  if (n < 0) {
    ++srv->st.dropped;
    return 0;
  }
  return srv_send(srv, &h->peer, srv->out, (size_t)n);
}

/* srv_write_msgs moves served bytes into the arq as write_msg's
   messages (tunsrv.h), each flushed into the send queue at once, while
   kcp-go's Write would take them. */
static void srv_write_msgs(tun_srv *srv, srv_session *ss, rp_tstamp now) {
  while (ss->serving && tun_arq_kcp_writable(ss->arq)) {
    size_t n = ss->msg_left > 0 ? ss->msg_left : TUN_SRV_MSG_LEN_BYTES;
    size_t got;

    if (n > tun_arq_send_space(ss->arq)) {
      break;
    }
    got = srv->cb.source(ss->sid, ss->served, srv->chunk, n, srv->user_data);
    if (got == 0) {
      break;
    }
    if (got > n) {
      got = n;
    }
    (void)tun_arq_write_msg(ss->arq, srv->chunk, got);
    ss->served += got;
    ss->msg_left = ss->msg_left > 0 ? ss->msg_left - got : srv->s.write_msg;
    tun_arq_send_flush(ss->arq);
    srv->st.queue_drops += tun_srvq_fill(&ss->q, ss->arq, ss->serving, now);
  }
}

/* srv_pump moves uploaded bytes to the sink and served bytes into the
   arq. */
static void srv_pump(tun_srv *srv, srv_session *ss, rp_tstamp now) {
  size_t n;

  while ((n = tun_arq_read(ss->arq, srv->chunk, sizeof(srv->chunk))) > 0) {
    if (srv->cb.sink != NULL) {
      srv->cb.sink(ss->sid, ss->received, srv->chunk, n, srv->user_data);
    }
    ss->received += n;
    srv->st.bytes_up += n;
  }
  if (!ss->serving && now >= ss->serve_at) {
    ss->serving = 1;
  }
  if (srv->s.write_msg > 0) {
    srv_write_msgs(srv, ss, now);
    return;
  }
  while (ss->serving && (n = tun_arq_send_space(ss->arq)) > 0) {
    size_t got;

    if (n > sizeof(srv->chunk)) {
      n = sizeof(srv->chunk);
    }
    got = srv->cb.source(ss->sid, ss->served, srv->chunk, n, srv->user_data);
    if (got == 0) {
      break;
    }
    if (got > n) {
      got = n;
    }
    tun_arq_write(ss->arq, srv->chunk, got);
    ss->served += got;
  }
}

/* srv_tick runs the arq's flush of |ss| when its interval is due: new
   segments fill the window as it is then, until the next one. */
static void srv_tick(tun_srv *srv, srv_session *ss, rp_tstamp now) {
  if (srv->s.flush_interval == 0 || now < ss->next_flush) {
    return;
  }
  tun_arq_send_flush(ss->arq);
  if (ss->q.cap > 0 && (ss->serving || srv->s.ack_queued)) {
    /* Before it serves, acks alone (ack_queued). */
    srv->st.queue_drops += tun_srvq_fill(&ss->q, ss->arq, ss->serving, now);
  }
  /* On the session's own clock: every interval from its start. */
  ss->next_flush += ((now - ss->next_flush) / srv->s.flush_interval + 1) *
                    srv->s.flush_interval;
}

/* srv_flush answers held queries of |ss|: the oldest first while the arq
   has something to send, and all left when |all|. */
static int srv_flush(tun_srv *srv, srv_session *ss, rp_tstamp now, int all) {
  int rv;

  srv_tick(srv, ss, now);
  while (ss->held_len > 0) {
    const srv_held *h = &ss->held[ss->held_head];

    if (!all &&
        (ss->q.cap > 0 ? ss->q.count == 0
                       : tun_arq_want_output(ss->arq, now) == 0) &&
        !rp_tstamp_elapsed(h->at, srv->s.hold, now)) {
      break;
    }
    ss->held_head = (ss->held_head + 1) % srv->s.max_held;
    --ss->held_len;
    rv = srv_answer_held(srv, ss, h, now);
    if (rv != 0) {
      return rv;
    }
    srv_pump(srv, ss, now);
  }
  return 0;
}

static int srv_on_probe(tun_srv *srv, const rp_dns_msg *q,
                        const tun_wire_hdr *hdr, const tun_peer *peer) {
  size_t room = tun_wire_answer_room(q, srv->s.max_answer), i;
  size_t want = hdr->down_limit;
  rp_ssize n;

  ++srv->st.probes;
  if (want > room) {
    want = room;
  }
  if (want > sizeof(srv->frame)) {
    want = sizeof(srv->frame);
  }
  for (i = 0; i < want; ++i) {
    srv->frame[i] = tun_wire_probe_byte(hdr->nonce, i);
  }
  n = rp_dns_build_txt_answer(srv->out, sizeof(srv->out), q, SRV_ANSWER_TTL,
                              srv->frame, want);
  if (n < 0) {
    ++srv->st.dropped;
    return 0;
  }
  return srv_send(srv, peer, srv->out, (size_t)n);
}

int tun_srv_on_datagram(tun_srv *srv, const uint8_t *data, size_t len,
                        const tun_peer *peer, rp_tstamp now) {
  uint8_t msg[TUN_WIRE_MAX_UP];
  tun_wire_hdr hdr;
  srv_session *ss;
  srv_held *h;
  rp_dns_msg q;
  rp_ssize mlen;
  int rv, nseg;

  ++srv->st.queries;
  srv->nnacks_out = 0;
  if (rp_dns_parse(&q, data, len) != 0 || (q.hdr.flags & RP_DNS_FLAG_QR) ||
      (q.hdr.flags & RP_DNS_OPCODE_MASK) != 0 || !q.has_question) {
    ++srv->st.dropped;
    return 0;
  }
  mlen = tun_wire_query_message(&q, &srv->s.domain, msg, sizeof(msg));
  if (mlen == RP_ERR_NOT_FOUND) {
    /* Not under the tunnel domain: NXDOMAIN, as dnstt-server answers
       (so a resolver pool's plain start-up check passes through it). */
    ++srv->st.refused;
    return srv_answer_error(srv, data, len, peer, RP_DNS_RCODE_NXDOMAIN);
  }
  if (mlen < 0 || tun_wire_hdr_read(&hdr, msg, (size_t)mlen) != 0 ||
      len > TUN_SRV_MAX_QUERY) {
    ++srv->st.formerr;
    return srv_answer_error(srv, data, len, peer, RP_DNS_RCODE_FORMERR);
  }
  if (hdr.kind == TUN_WIRE_PROBE) {
    return srv_on_probe(srv, &q, &hdr, peer);
  }
  ss = srv_session_find(srv, hdr.sid);
  if (ss == NULL) {
    rv = srv_session_new(srv, hdr.sid, hdr.down_limit, now, &ss);
    if (rv == RP_ERR_INVALID_ARGUMENT) {
      ++srv->st.formerr;
      return srv_answer_error(srv, data, len, peer, RP_DNS_RCODE_FORMERR);
    }
    if (rv != 0) {
      /* Past the session cap, or out of memory for a new session. */
      ++srv->st.servfail;
      return srv_answer_error(srv, data, len, peer, RP_DNS_RCODE_SERVFAIL);
    }
  }
  ss->last_seen = now;
  nseg = tun_arq_input(ss->arq, msg + TUN_WIRE_HDR_LEN,
                       (size_t)mlen - TUN_WIRE_HDR_LEN, now);
  if (nseg < 0) {
    ++srv->st.formerr;
    return srv_answer_error(srv, data, len, peer, RP_DNS_RCODE_FORMERR);
  }
  if (nseg > 0 && ss->nack != NULL) {
    srv->nnacks_out = tun_nack_arrival(ss->nack, ss->arq, now, srv->nacks_out,
                                       TUN_NACK_GAP_MAX);
  }
  if (srv->ack_next.n + srv->nack_next.n > 0) {
    tun_arq_ack_list(ss->arq, &srv->ack_next, now);
    tun_arq_nack(ss->arq, &srv->nack_next);
    srv->ack_next.n = srv->nack_next.n = 0;
  }
  srv_pump(srv, ss, now);
  if (ss->held_len == srv->s.max_held) {
    /* Full: the oldest held query is answered now to make room. */
    rv = srv_flush(srv, ss, now, 0);
    if (rv == 0 && ss->held_len == srv->s.max_held) {
      const srv_held *old = &ss->held[ss->held_head];

      ss->held_head = (ss->held_head + 1) % srv->s.max_held;
      --ss->held_len;
      rv = srv_answer_held(srv, ss, old, now);
    }
    if (rv != 0) {
      return rv;
    }
  }
  h = &ss->held[(ss->held_head + ss->held_len) % srv->s.max_held];
  h->peer = *peer;
  h->at = now;
  h->len = len;
  h->down_limit = hdr.down_limit;
  h->ack_only = srv->s.up_ack_only && nseg > 0;
  memcpy(h->query, data, len);
  ++ss->held_len;
  ++srv->st.held;
  return srv_flush(srv, ss, now, srv->s.hold == 0);
}

void tun_srv_add_resends(tun_srv *srv, size_t n) {
  srv->resends_owed = n > TUN_SRV_MAX_RESENDS - srv->resends_owed
                          ? TUN_SRV_MAX_RESENDS
                          : srv->resends_owed + n;
}

void tun_srv_blocks(tun_srv *srv, const tun_arq_sent *acks,
                    const tun_arq_sent *nacks) {
  srv->ack_next = *acks;
  srv->nack_next = *nacks;
}

size_t tun_srv_take_nacks(tun_srv *srv, uint32_t *out, size_t max) {
  size_t n = srv->nnacks_out < max ? srv->nnacks_out : max;

  memcpy(out, srv->nacks_out, n * sizeof(out[0]));
  srv->nnacks_out = 0;
  return n;
}

rp_tstamp tun_srv_get_expiry(const tun_srv *srv) {
  rp_tstamp best = RP_TSTAMP_UNSET, t;
  size_t i;

  for (i = 0; i < srv->s.max_sessions; ++i) {
    const srv_session *ss = srv->sessions[i];

    if (ss == NULL) {
      continue;
    }
    t = tun_arq_get_expiry(ss->arq);
    best = t < best ? t : best;
    if (ss->held_len > 0) {
      t = rp_tstamp_add(ss->held[ss->held_head].at, srv->s.hold);
      best = t < best ? t : best;
      if (srv->s.flush_interval > 0 && ss->serving) {
        /* A held query takes what the next flush lets go. */
        best = ss->next_flush < best ? ss->next_flush : best;
      }
    }
    if (ss->q.cap > 0 && ss->serving && !tun_arq_send_idle(ss->arq)) {
      /* KCP flushes with or without a query: its resends go on
         filling the queue. */
      best = ss->next_flush < best ? ss->next_flush : best;
    }
    t = rp_tstamp_add(ss->last_seen, srv->s.idle_timeout);
    best = t < best ? t : best;
    if (!ss->serving) {
      best = ss->serve_at < best ? ss->serve_at : best;
    }
  }
  return best;
}

int tun_srv_handle_expiry(tun_srv *srv, rp_tstamp now) {
  size_t i;
  int rv;

  for (i = 0; i < srv->s.max_sessions; ++i) {
    srv_session *ss = srv->sessions[i];

    if (ss == NULL) {
      continue;
    }
    if (rp_tstamp_elapsed(ss->last_seen, srv->s.idle_timeout, now)) {
      srv_session_del(srv, i);
      ++srv->st.sessions_expired;
      continue;
    }
    tun_arq_handle_expiry(ss->arq, now);
    srv_pump(srv, ss, now);
    rv = srv_flush(srv, ss, now, 0);
    if (rv != 0) {
      return rv;
    }
  }
  return 0;
}

void tun_srv_get_stats(const tun_srv *srv, tun_srv_stats *stats) {
  size_t i;

  *stats = srv->st;
  stats->bytes_down = 0;
  for (i = 0; i < srv->s.max_sessions; ++i) {
    tun_arq_stats as;

    if (srv->sessions[i] == NULL) {
      continue;
    }
    tun_arq_get_stats(srv->sessions[i]->arq, &as);
    srv_sum_arq(stats, &as);
    stats->bytes_down += as.bytes_acked;
  }
}
