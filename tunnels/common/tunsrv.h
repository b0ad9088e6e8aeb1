/*
 * tunsrv.h: the sans-I/O tunnel server shared by the DNSTT-style and the
 * MasterDNS-style tunnels (prefix tun_srv_).
 *
 * The driver passes every UDP datagram in with the sender's address (kept
 * opaque in tun_peer) and the time; the server answers through
 * callbacks.send, pulls the bytes it serves from callbacks.source and
 * hands uploaded bytes to callbacks.sink. Sessions are created by the
 * first DATA query of a new session id and expire when idle; when the
 * table is full, the session silent longest gives way if it has been
 * silent for settings.evict_idle (a client that finished), otherwise the
 * new session is refused.
 *
 * Modes. TUN_MODE_DNSTT: an answer carries as many segments as fit in
 * the TXT payload that fits beside the longest question (934 bytes at
 * EDNS 1232, whatever the actual question, as dnstt does); a
 * query that finds nothing to send is held up to settings.hold and
 * answered as soon as something is (FIFO), or empty when the hold ends.
 * TUN_MODE_MD: one segment per answer, at most the query's down_limit
 * bytes; every query is answered at once with the next packet, or with an
 * ack alone.
 *
 * Bad input: a datagram that is not a DNS query is dropped; a query for
 * another domain or type is answered REFUSED; a query under the domain
 * that does not decode is answered FORMERR; a new session past
 * max_sessions is answered SERVFAIL. Memory is fixed per session (its
 * arq plus max_held queries of at most TUN_SRV_MAX_QUERY bytes).
 */
#ifndef TUN_SRV_H
#define TUN_SRV_H

#include "respool.h"
#include "dns.h"
#include "arq.h"
#include "tunnack.h"

#include <stddef.h>
#include <stdint.h>

/* TUN_SRV_MSG_LEN_BYTES is the length write before each write_msg
   message, bytes (Noise's length prefix). */
#define TUN_SRV_MSG_LEN_BYTES 2u

/* TUN_SRV_MAX_OUT_QUEUE bounds settings.out_queue, packets. */
#define TUN_SRV_MAX_OUT_QUEUE 4096

/* TUN_SRV_MAX_RESENDS bounds the answers tun_srv_add_resends owes. */
#define TUN_SRV_MAX_RESENDS 4096

/* TUN_SRV_MAX_QUERY is the largest query kept for a held answer, bytes. */
#define TUN_SRV_MAX_QUERY 512

typedef enum tun_mode { TUN_MODE_DNSTT = 0, TUN_MODE_MD = 1 } tun_mode;

/* tun_peer is a client address, opaque to the core. */
typedef struct tun_peer {
  /* addr is free for the driver (room for a sockaddr_in6). */
  uint8_t addr[32];
  /* addrlen is free for the driver. */
  uint32_t addrlen;
} tun_peer;

typedef struct tun_srv tun_srv;

typedef struct tun_srv_callbacks {
  /* send sends |len| bytes of answer to |peer|. Non-zero is fatal. */
  int (*send)(const tun_peer *peer, const uint8_t *data, size_t len,
              void *user_data);
  /* source writes up to |cap| bytes the session |sid| serves at stream
     offset |offset| into |out| and returns how many (0: none now). */
  size_t (*source)(uint64_t sid, uint64_t offset, uint8_t *out, size_t cap,
                   void *user_data);
  /* sink takes |len| uploaded bytes of |sid| at stream offset |offset|
     (may be NULL). */
  void (*sink)(uint64_t sid, uint64_t offset, const uint8_t *data, size_t len,
               void *user_data);
} tun_srv_callbacks;

typedef struct tun_srv_settings {
  tun_mode mode;
  /* domain is the tunnel domain. */
  rp_dns_name domain;
  /* max_sessions caps the sessions alive at once. */
  size_t max_sessions;
  /* max_held caps the queries held per session (DNSTT mode). */
  size_t max_held;
  /* hold is the longest a DNSTT poll is held, ns (0 = never). */
  rp_duration hold;
  /* serve_delay: a new session gets no served bytes for this long, ns
     (0): the opening of a real session (dnstt's Noise handshake, the
     stream and the server's upstream connection take round trips), in
     which the server holds every poll. */
  rp_duration serve_delay;
  /* flush_interval: new segments of a session go in flight only at its
     arq's flush, every this long from the session's start, ns (0: as
     soon as the window has room). dnstt's KCP (kcp-go) moves queued
     data into flight when it flushes, every 10 ms. */
  rp_duration flush_interval;
  /* idle_timeout removes a session that sent nothing for so long, ns. */
  rp_duration idle_timeout;
  /* evict_idle: when the table is full, a session silent for so long
     (ns) is removed to make room for a new one. */
  rp_duration evict_idle;
  /* out_queue: 0 cuts each answer's segments from the arq when it is
     sent; N > 0 queues the segments as packets at each flush (every
     flush_interval: the resends due and the new segments the window
     lets go), up to N per session, dropping what does not fit, and each
     answer takes the oldest that fit. dnstt-server's KCP writes its
     packets to a send queue of 128 per client that polls drain
     (turbotunnel.QueueSize); the simulator's model of it sets this. At
     most TUN_SRV_MAX_OUT_QUEUE. */
  size_t out_queue;
  /* ack_queued (with out_queue): 1 queues the ack state (una, window,
     sack) with the packets of each flush, in a packet of its own when the
     flush queued none and the state changed, and an answer's ack header
     is the newest its packets took (the last one sent when it took
     none): acks wait behind the data queued before them, as
     dnstt-server's KCP writes its acks into its send queue. 0: every
     answer carries the ack state of its moment. */
  int ack_queued;
  /* up_ack_only: 1 answers a query that carried upload data with the ack
     alone, no download data (0: the next packet as any query). The
     MasterDnsVPN server answers a data packet with its ack first; the
     simulator's model of it sets this. */
  int up_ack_only;
  /* write_msg (with out_queue and flush_interval): 0 moves served bytes
     into the arq as they come; N > 0 writes them as kcp-go's Writes
     under dnstt's Noise layer: a 2-byte length (TUN_SRV_MSG_LEN_BYTES),
     then N bytes, each a write that starts its own segment
     (tun_arq_write_msg) and is flushed at once into the send queue, while
     KCP's Write would take it (tun_arq_kcp_writable). So an ack that
     opens the window sends at once, and the download's segments come in
     the real server's sizes. dnstt-server's Noise messages carry 4 096
     bytes (4 112 with the tag, then the next length: 2, 908, 908, 908,
     908, 480 bytes on loopback); the simulator's model of it sets 4 094,
     the stream's bytes without the tag. At most 4 096 and the arq's
     snd_buf. */
  size_t write_msg;
  /* max_answer caps every answer, bytes (1232, the EDNS size in use). */
  size_t max_answer;
  /* nack (nack.gap > 0): each session NACKs the gaps of the upload, as
     the MasterDnsVPN server's ARQ does (tunnack.h), when a query brings
     a data segment past one; tun_srv_take_nacks hands over those of the
     last query, which its answer carries in the simulator's model. gap 0
     (default): none. */
  tun_nack_settings nack;
  /* arq is the template of each session's arq; mss and peer_mss are
     computed by the server (settings given here are ignored). */
  tun_arq_settings arq;
} tun_srv_settings;

typedef struct tun_srv_stats {
  uint64_t queries, answers, held, answered_empty;
  /* dropped: not DNS queries; refused: foreign (answered NXDOMAIN);
     formerr: undecodable;
     servfail: sessions refused past the cap. */
  uint64_t dropped, refused, formerr, servfail, probes;
  uint64_t sessions_created, sessions_expired, sessions_evicted;
  /* bytes_up: in-order bytes handed to sink; bytes_down: bytes acked by
     clients. */
  uint64_t bytes_up, bytes_down;
  /* retransmissions, and of the segments sent again those whose timer
     expired (timeouts) and those fast retransmit resent
     (fast_retransmits), and the answers that could carry no new data
     for a full window (window_full: tun_arq_stats), summed over
     sessions (live and gone). */
  uint64_t retransmissions, timeouts, fast_retransmits, window_full;
  /* resends: answers spent on tun_srv_add_resends; queue_drops:
     segments the out_queue had no room for. */
  uint64_t resends, queue_drops;
  size_t sessions;
} tun_srv_stats;

/* tun_srv_settings_default fills |s| for |mode|: 64 sessions, 512 held,
   hold 1 s (DNSTT) or 0 (MD), idle 60 s, evict_idle 5 s, max_answer 1232, arq
   windows 128 (DNSTT) or 32 (MD). The domain is left empty (root). */
void tun_srv_settings_default(tun_srv_settings *s, tun_mode mode);

/* tun_srv_new creates a server in |*psrv|. |callbacks| send and source
   are required. Returns 0, RP_ERR_INVALID_ARGUMENT, RP_ERR_NOMEM. */
int tun_srv_new(tun_srv **psrv, const tun_srv_settings *settings,
                const tun_srv_callbacks *callbacks, const rp_mem *mem,
                void *user_data);

/* tun_srv_del frees |srv| and its sessions; held queries are dropped
   without answers. NULL is a no-op. */
void tun_srv_del(tun_srv *srv);

/* tun_srv_on_datagram takes |len| bytes from |peer| at |now| (copied
   when held). Returns 0 or RP_ERR_CALLBACK_FAILURE when send failed. A
   new session that finds no memory is answered SERVFAIL, like one past
   the cap. */
int tun_srv_on_datagram(tun_srv *srv, const uint8_t *data, size_t len,
                        const tun_peer *peer, rp_tstamp now);

/* tun_srv_get_expiry returns when tun_srv_handle_expiry must run next,
   or RP_TSTAMP_UNSET. */
rp_tstamp tun_srv_get_expiry(const tun_srv *srv);

/* tun_srv_handle_expiry runs retransmission timers, ends holds, removes
   idle sessions. Returns 0 or RP_ERR_CALLBACK_FAILURE. */
int tun_srv_handle_expiry(tun_srv *srv, rp_tstamp now);

/* tun_srv_add_resends makes the next |n| answers that would carry data
   (any session) carry the ack alone: the simulator's model of the
   MasterDnsVPN server resending packets whose per-packet acks were lost,
   answers that bring the client nothing new. Bounded by
   TUN_SRV_MAX_RESENDS. */
void tun_srv_add_resends(tun_srv *srv, size_t n);

/* tun_srv_blocks hands the next tun_srv_on_datagram the control blocks
   its query carries in the simulator's model of MasterDnsVPN
   (tun_drv_take_blocks): the segments of |acks| that its session has in
   flight are acked one by one (tun_drv's acks_named), and those of
   |nacks| are resent at once, as its server resends a packet its client
   NACKed (tun_drv's nack). */
void tun_srv_blocks(tun_srv *srv, const tun_arq_sent *acks,
                    const tun_arq_sent *nacks);

/* tun_srv_take_nacks writes to |out| (at most |max|) the segments the
   last tun_srv_on_datagram NACKed (settings.nack), forgets them and
   returns how many: the simulator hands them to the client with that
   query's answer (tun_drv_srv_nacks). */
size_t tun_srv_take_nacks(tun_srv *srv, uint32_t *out, size_t max);

/* tun_srv_get_stats fills |stats|. */
void tun_srv_get_stats(const tun_srv *srv, tun_srv_stats *stats);

/* tun_srv_down_mss returns the downstream segment size of DNSTT mode for
   answers capped at |max_answer| bytes: what fits beside a question of
   the longest name and an ack header without sack. */
size_t tun_srv_down_mss(size_t max_answer);

/* tun_srv_up_mss returns the upstream segment size under |domain|. */
size_t tun_srv_up_mss(const rp_dns_name *domain);

/* tun_srv_md_mss returns the segment size of MD mode for a download MTU
   (TXT payload) of |mtu| bytes, or 0 when it is too small. */
size_t tun_srv_md_mss(size_t mtu);

#endif /* TUN_SRV_H */
