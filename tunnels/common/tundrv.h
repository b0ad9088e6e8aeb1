/*
 * tundrv.h: the minimal tunnel clients' drivers, sans-I/O (prefix
 * tun_drv_): when a query goes out, to which resolver and on which
 * channel, and what an answer or a timer changes. The libuv programs
 * (tun-dnstt-client, tun-md-client) and the simulator drive the same
 * code: they pass the time and the answers in and carry out the sends.
 *
 * Models:
 * - TUN_DRV_WORKERS (the DNSTT-style client): |nworkers| workers each
 *   keep one query out toward resolver 0 on channel = the worker's
 *   index. A worker sends its next query as soon as its answer comes
 *   back. With |fresh| every query leaves from a new socket (the send
 *   says TUN_DRV_SEND_FRESH: the driver's caller opens it and closes the
 *   worker's old one). An error answer (REFUSED, SERVFAIL) carries
 *   nothing: like dnstt the worker rests about a timeout (0.5 to 1.5 of
 *   it, drawn) and the upload segments of the refused query are resent
 *   at once. Every NOERROR answer with a TXT record is taken, whatever
 *   its ID; only the worker's own answer (its ID, its current socket)
 *   ends its wait.
 * - TUN_DRV_ORIGINAL (the original dnstt-client, tunorig.h): one socket
 *   (channel 0) taking every answer; a query for each data packet or
 *   owed ack and the polls the model permits; nothing for an error
 *   answer; KCP's windows of 64 segments. The stream's bytes (the
 *   upload) wait for the first answer: dnstt-client's run() finishes
 *   its Noise handshake (noise.NewClient, a round trip) before it opens
 *   the smux session and accepts the stream, so its opening is polls.
 * - TUN_DRV_MD (the MasterDNS-style client): an MTU test per resolver
 *   (probes asking for exactly N test bytes: the ceiling, then the floor
 *   to tell a dead resolver, then 3/4 steps), the session's download MTU
 *   the smallest that passed; then |nslots| slots keep one query out
 *   each, the balancer (balancer.h) picks its resolver and |dup| - 1
 *   others for copies. Channel = resolver index (one socket per
 *   resolver). A send times out after srtt + max(4 rttvar, srtt / 4) of
 *   its resolver (50 ms .. 1 s); an error answer rests the slot about a
 *   timeout and resends its upload packet. Disabled resolvers are
 *   rechecked with a probe every 5 s. With |chain| (the simulator's
 *   model of MasterDnsVPN's send loop) there are no slots: a query goes
 *   for what the client owes: |chain_open| queries at the start, a ping
 *   every |ping_interval| (with |ping_wake| when MasterDnsVPN's ping
 *   loop sends it: tunping.h), and the acks of the answers that carried
 *   data, |chain_delay| after the first one owed, up to |chain_pack| acks
 *   a query (the acks owed within the delay share queries), and with
 *   |nack| the NACKs of the download's gaps packed with them. An
 *   answer without data, an error or a timeout owes nothing: its chain
 *   ends. The upload rides on these queries, or with |chain_up| goes as
 *   a query per packet at once, resent on its own timeout. MasterDnsVPN
 *   acks each packet once, in one query: when that query is refused or
 *   lost its server sends the packet again, an answer that brings
 *   nothing new. The model
 *   (whose acks are cumulative) counts the acks of each query none of
 *   whose copies was answered (refused or timed out) and takes as many
 *   of the next data answers as those resends: their data is dropped
 *   unread (the server sends it again) and their acks are owed.
 *
 * Timers: the caller calls tun_drv_tick every tun_drv_tick_interval (the
 * programs' periodic timer: 5 ms for the DNSTT models, 2 ms for MD).
 * The transfer (tunxfer.h) is the driver's; the caller may hook files to
 * it (tun_drv_xfer) before tun_drv_start.
 */
#ifndef TUN_DRV_H
#define TUN_DRV_H

#include "respool.h"
#include "dns.h"
#include "balancer.h"
#include "tuncli.h"
#include "tunnack.h"
#include "tunxfer.h"

#include <stddef.h>
#include <stdint.h>

typedef enum tun_drv_model {
  TUN_DRV_WORKERS = 0,
  TUN_DRV_ORIGINAL,
  TUN_DRV_MD
} tun_drv_model;

/* Flags of tun_drv_callbacks.send. */
/* TUN_DRV_SEND_FRESH: the send leaves from a new socket of its channel
   (close the channel's old one first). */
#define TUN_DRV_SEND_FRESH 0x1u
/* TUN_DRV_SEND_PROBE: an MD MTU probe or recheck (informational). */
#define TUN_DRV_SEND_PROBE 0x2u

/* TUN_DRV_MAX_WORKERS bounds nworkers; TUN_DRV_MAX_SLOTS bounds nslots;
   TUN_DRV_MAX_DUP bounds dup; TUN_DRV_MAX_RESOLVERS bounds nres (MD). */
#define TUN_DRV_MAX_WORKERS 4096
#define TUN_DRV_MAX_SLOTS 256
#define TUN_DRV_MAX_DUP 10
#define TUN_DRV_MAX_RESOLVERS 32
/* TUN_DRV_NACK_MAX bounds nack.gap (MD chain), segments, and the NACKs
   waiting for the dispatch. */
#define TUN_DRV_NACK_MAX TUN_NACK_GAP_MAX
/* TUN_DRV_ORIG_WINDOW is the original model's arq windows, segments
   (dnstt's KCP: 64; its server takes --window 64 to match). */
#define TUN_DRV_ORIG_WINDOW 64
/* TUN_DRV_KCP_MSS is dnstt-client's KCP segment payload, bytes: its
   137-byte MTU ("effective MTU 137" for t.example) less KCP's 24-byte
   segment header. */
#define TUN_DRV_KCP_MSS 113
/* TUN_DRV_MTU_FLOOR is the smallest download MTU the MD test tries. */
#define TUN_DRV_MTU_FLOOR 64

typedef struct tun_drv_settings {
  tun_drv_model model;
  /* domain is the tunnel domain. */
  rp_dns_name domain;
  /* Transfer: bytes down (UINT64_MAX: until |seconds|), up, seconds. */
  uint64_t down_bytes;
  uint64_t up_bytes;
  double seconds;
  /* WORKERS: nworkers workers, fresh sockets per query, the wait for an
     answer (1.5 s). */
  size_t nworkers;
  int fresh;
  rp_duration timeout;
  /* MD: nres resolvers, nslots slots (8), dup sends per query (2), the
     balancer's strategy, the MTU test's ceiling (500). */
  size_t nres;
  size_t nslots;
  size_t dup;
  tun_bal_strategy strategy;
  uint16_t mtu_ceiling;
  /* MD: chain 1 sends as MasterDnsVPN does (above; 0: the slots);
     chain_delay is its pipeline's delay from an answer to the query
     carrying its ack (ns; 1 us: the acks of the answers read in one go
     share queries), chain_pack the acks one query carries (its
     MAX_PACKETS_PER_BATCH, 8), ping_interval its pings' period (its
     PING_AGGRESSIVE_INTERVAL, 100 ms), chain_open the queries it opens
     with (its SETUP_PACKET_DUPLICATION_COUNT, 4). */
  int chain;
  /* chain_up 1 (with chain): the upload goes as MasterDnsVPN sends it,
     a query per packet as soon as it is written, each resent on its own
     data timeout (ARQ_INITIAL_RTO 0.5 s floor, x1.35 a resend, 3 s cap);
     0: the upload rides on the chain's queries. */
  int chain_up;
  /* lost_to_srv 1 (with chain): the lost acks are left for
     tun_drv_take_lost_acks, whose caller has its server model spend
     answers on their resends (tun_srv_add_resends); 0: the next data
     answers are taken as those resends and dropped. */
  int lost_to_srv;
  /* dup_packed: the sends of a query that packs 2 acks or more, when
     more than dup (MasterDnsVPN sends its PACKED_CONTROL_BLOCKS with
     SETUP_PACKET_DUPLICATION_COUNT, at least its
     PACKET_DUPLICATION_COUNT; at most one a resolver, as every copy);
     0: dup. */
  size_t dup_packed;
  /* bal_loss_after (MD): the balancer hears of a send that timed out
     only this long after it was sent, ns (MasterDnsVPN counts a query
     lost at its request timeout: 5 s with 3 resolvers or fewer); 0: at
     the driver's timeout. */
  rp_duration bal_loss_after;
  /* ping_dup (MD chain): the most sends of a ping (MasterDnsVPN sends a
     PING with at most 2, whatever its duplication); 0: dup. */
  size_t ping_dup;
  /* ping_wake 1 (MD chain): the pings go when MasterDnsVPN's ping loop
     sends them (tunping.h): a check at least 100 ms after the last,
     or on traffic at most once each 100 ms, sends one when
     ping_interval passed since the last; the first data answer after a
     ping restarts the wait, so they come ping_interval plus about a
     round trip apart. 0: every ping_interval. */
  int ping_wake;
  /* ping_late (ping_wake): how late the ping loop's timer fires, ns. */
  rp_duration ping_late;
  /* nack (MD chain, nack.gap > 0): the client NACKs the download's gaps
     as MasterDnsVPN does (tunnack.h; its ARQ_DATA_NACK_*, in the sample
     config a gap of 32, at most TUN_DRV_NACK_MAX, 100 ms before a first
     NACK and 800 ms between two): when data comes, and from the tick
     when none came for nack.repeat. A NACK is a control block the
     dispatch packs with the acks owed, at most TUN_ARQ_SENT_MAX a query
     (a lost one costs nothing); the server hears of it with its query
     (tun_drv_take_blocks). gap 0: none. */
  tun_nack_settings nack;
  /* acks_named 1 (MD chain): each ack names its packet, as
     MasterDnsVPN's do, and the server hears of the first
     TUN_ARQ_SENT_MAX a query carries with that query
     (tun_drv_take_blocks), beside the frame's cumulative ack and its
     sack of 256 segments; a packet past the receive window is dropped
     and named by none, and its answer owes nothing (its receiver's
     processReceivedData); 0: the frame's acks only. */
  int acks_named;
  /* resend_random 1 (MD chain_up): the client's upload resends go in a
     random order (tun_arq_settings.resend_seed), as MasterDnsVPN's ARQ
     walks its Go map of unacked packets; 0: oldest first. */
  int resend_random;
  /* chain_busy (MD chain): a busy client's dispatcher, a goroutine of
     its own on the other core. While data answers come at
     chain_busy_rate a second or more (counted over 10 ms), the first
     ack owed goes at once in a query of its own, and the dispatcher is
     then busy chain_busy, ns: the acks owed meanwhile wait and go
     together at its end. A quiet client packs the acks owed within
     chain_delay, as its goroutines wake together. 0: the quiet rule
     always. */
  rp_duration chain_busy;
  uint32_t chain_busy_rate;
  size_t chain_open;
  rp_duration chain_delay;
  size_t chain_pack;
  rp_duration ping_interval;
  /* ORIGINAL: ack_held 1 sends the acks of what arrived only at the
     model's KCP flush (every 10 ms), as dnstt's KCP does; 0 (default,
     the minimal client's --original): every query acks all received so
     far. */
  int ack_held;
  /* ORIGINAL: kcp 1 runs the client's arq as dnstt-client's KCP:
     kcp-go's timers (tun_arq_settings_kcp) with the early resends made
     at each KCP flush, segments of TUN_DRV_KCP_MSS bytes, and one ack
     query a flush (tun_orig_settings.ack_compact). */
  int kcp;
  /* no_down_hash: 1 skips the FNV-1a hash of the download (0: kept, as
     the clients print it); the simulator reads no hash. */
  int no_down_hash;
} tun_drv_settings;

typedef struct tun_drv_callbacks {
  /* send sends |len| bytes of query to resolver |res| on channel |chan|
     (|flags|: TUN_DRV_SEND_*). Non-zero is counted as a send error. */
  int (*send)(uint32_t chan, size_t res, const uint8_t *data, size_t len,
              uint32_t flags, void *user_data);
  /* rand returns 64 random bits. */
  uint64_t (*rand)(void *user_data);
} tun_drv_callbacks;

/* tun_drv_stats are the driver's counters. */
typedef struct tun_drv_stats {
  uint64_t queries, answers, timeouts, rejected, copies, unmatched;
  /* nacks: NACK blocks sent (MD chain with nack). */
  uint64_t nacks;
  uint64_t send_errors;
  /* resent: MD chain answers taken as resends of packets whose ack was
     lost (their data dropped). */
  uint64_t resent;
  /* srv_nacks: upload segments the server NACKed in answers that came
     (tun_drv_srv_nacks). */
  uint64_t srv_nacks;
} tun_drv_stats;

typedef struct tun_drv tun_drv;

/* tun_drv_take_lost_acks returns the acks lost since the last call and
   forgets them (MD chain with lost_to_srv; else 0). */
size_t tun_drv_take_lost_acks(tun_drv *d);

/* tun_drv_take_blocks fills |acks| and |nacks| with the segments that
   the chain query of |len| bytes at |q| acked by name (acks_named) and
   NACKed (nack), and forgets them: the caller's server model
   applies them (tun_srv_blocks). The query is known by its question's
   name, which resolvers and relays pass on unchanged where they change
   its ID; the first copy to reach the server takes them. Both are
   empty when it carried none, or its record was overwritten (a few
   thousand such queries later). */
void tun_drv_take_blocks(tun_drv *d, const uint8_t *q, size_t len,
                         tun_arq_sent *acks, tun_arq_sent *nacks);

/* tun_drv_srv_nacks keeps the |n| upload segments |sn| (at most
   TUN_NACK_GAP_MAX) that the server NACKed with its answer to the chain
   query of |len| bytes at |q| (tun_srv_take_nacks), known by its
   question's name as in tun_drv_take_blocks. When that answer comes
   (tun_drv_on_answer) the client resends at once those still unacked,
   as MasterDnsVPN's client resends a packet its server NACKed: the
   simulator's model of the NACKs the answers carry. A record another
   query's overwrote is lost, as a NACK can be. */
void tun_drv_srv_nacks(tun_drv *d, const uint8_t *q, size_t len,
                       const uint32_t *sn, size_t n);

/* tun_drv_settings_default fills |s| for |model| (transfer targets 0,
   domain empty): 300 workers not fresh and a 1.5 s timeout, or one
   worker for ORIGINAL; MD one resolver, 8 slots, dup 2, round robin,
   ceiling 500, no chain (when set: 4 opening queries, a delay of 1 us,
   8 acks a query, pings every 100 ms). */
void tun_drv_settings_default(tun_drv_settings *s, tun_drv_model model);

/* tun_drv_new creates a driver. Returns 0, RP_ERR_INVALID_ARGUMENT (a
   bound exceeded, no send callback) or RP_ERR_NOMEM. */
int tun_drv_new(tun_drv **pdrv, const tun_drv_settings *settings,
                const tun_drv_callbacks *callbacks, const rp_mem *mem,
                void *user_data);

/* tun_drv_del frees |drv|. NULL is a no-op. */
void tun_drv_del(tun_drv *drv);

/* tun_drv_xfer returns the transfer (hook files before tun_drv_start). */
tun_xfer *tun_drv_xfer(tun_drv *drv);

/* tun_drv_cli returns the client session (MD: NULL until the MTU test
   ended). */
tun_cli *tun_drv_cli(tun_drv *drv);

/* tun_drv_start sends the first queries (MD: the MTU test) at |now|.
   Returns 0, or RP_ERR_NOMEM. */
int tun_drv_start(tun_drv *drv, rp_tstamp now);

/* tun_drv_on_answer takes |len| bytes that arrived on channel |chan|
   from resolver |res| at |now|. */
void tun_drv_on_answer(tun_drv *drv, uint32_t chan, size_t res,
                       const uint8_t *data, size_t len, rp_tstamp now);

/* tun_drv_tick_interval returns the period of tun_drv_tick, ns. */
rp_duration tun_drv_tick_interval(const tun_drv *drv);

/* tun_drv_tick runs the timers due at |now|. */
void tun_drv_tick(tun_drv *drv, rp_tstamp now);

/* tun_drv_get_due returns when a timer finer than the tick is due (MD
   with chain: the next ack dispatch), or RP_TSTAMP_UNSET; call
   tun_drv_tick then. */
rp_tstamp tun_drv_get_due(const tun_drv *drv);

/* tun_drv_finished returns 1 once the transfer ended (or, MD, failed). */
int tun_drv_finished(const tun_drv *drv);

/* tun_drv_failed returns 1 when MD's MTU test found no resolver. */
int tun_drv_failed(const tun_drv *drv);

/* tun_drv_get_stats fills |stats|. */
void tun_drv_get_stats(const tun_drv *drv, tun_drv_stats *stats);

/* tun_drv_md_mtu returns the MD session's download MTU (0 before the
   test ended); tun_drv_md_res_mtu the MTU resolver |i| passed at. */
uint16_t tun_drv_md_mtu(const tun_drv *drv);
uint16_t tun_drv_md_res_mtu(const tun_drv *drv, size_t i);

/* tun_drv_md_bal returns the MD balancer (for the programs' report). */
const tun_bal *tun_drv_md_bal(const tun_drv *drv);

#endif /* TUN_DRV_H */
