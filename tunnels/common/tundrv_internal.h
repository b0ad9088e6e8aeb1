/*
 * tundrv_internal.h: the state of a tun_drv (tundrv.h), shared by the
 * three files of the module: tundrv.c owns the life cycle, the DNSTT
 * workers, the original dnstt model and the dispatch; tundrv_probe.c the
 * MasterDNS model's MTU test and probes; tundrv_md.c the rest of that
 * model (the slots' queries and the chain). Nothing outside those files
 * includes it.
 */
#ifndef TUN_DRV_INTERNAL_H
#define TUN_DRV_INTERNAL_H

#include "tundrv.h"

#include "tunorig.h"
#include "tunping.h"
#include "tunwire.h"

/* DRV_WORKERS_TICK and DRV_MD_TICK are the timer periods of the DNSTT
   models and of MD. */
#define DRV_WORKERS_TICK (5 * RP_MILLISECONDS)
#define DRV_MD_TICK (2 * RP_MILLISECONDS)
/* DRV_TIMEOUT is the workers' default wait: past the server's 1 s hold
   plus a round trip. */
#define DRV_TIMEOUT (1500 * RP_MILLISECONDS)
/* DRV_POOL_WORKERS is the default worker count. */
#define DRV_POOL_WORKERS 300
/* DRV_ORIG_BURST bounds the queries one pump of the original model
   sends. */
#define DRV_ORIG_BURST 512
/* MD: the default slots, duplication and MTU ceiling. */
#define DRV_MD_SLOTS 8
#define DRV_MD_DUP 2
#define DRV_MD_CEILING 500
/* MD chain: the defaults of chain_delay, chain_pack and ping_interval;
   DRV_MD_CHAIN marks a send of no slot; DRV_MD_CHAIN_OPEN is the
   default chain_open. */
#define DRV_MD_CHAIN_DELAY RP_MICROSECONDS
#define DRV_MD_CHAIN_PACK 8
#define DRV_MD_PING_INTERVAL (100 * RP_MILLISECONDS)
#define DRV_MD_CHAIN ((size_t)-1)
#define DRV_MD_CHAIN_OPEN 4
/* DRV_MD_BUSY_WINDOW is the span over which chain_busy_rate is
   counted. */
#define DRV_MD_BUSY_WINDOW (10 * RP_MILLISECONDS)
/* DRV_MD_CHAIN_LOST_MAX bounds the chain model's lost acks owed. */
#define DRV_MD_CHAIN_LOST_MAX 1024
/* DRV_BLOCK_RECS is how many chain queries' named acks and NACKs the
   driver keeps for tun_drv_take_blocks, in sets of DRV_BLOCK_WAYS
   chosen by the query's key (a full set loses one of its records).
   DRV_ACK_Q bounds the named acks waiting for the dispatch. */
#define DRV_BLOCK_RECS 4096
#define DRV_BLOCK_WAYS 4
/* DRV_SRV_NACK_RECS is how many answers' server NACKs the driver keeps
   (tun_drv_srv_nacks), by the query's key modulo it: an answer comes
   within milliseconds of its record, so few are ever live. */
#define DRV_SRV_NACK_RECS 256
#define DRV_ACK_Q 1024
/* DRV_MD_CHAIN_EDNS is the answer size the chain model asks for, bytes:
   MasterDnsVPN's server fills its answers to the download MTU whatever
   the query's EDNS says (about 1 400 bytes for an MTU of 1 232). */
#define DRV_MD_CHAIN_EDNS 1500
/* DRV_MD_PROBE_TRIES is how many probes of one size fail before a
   smaller; DRV_MD_PROBE_TIMEOUT the wait for a probe's answer. */
#define DRV_MD_PROBE_TRIES 2
#define DRV_MD_PROBE_TIMEOUT RP_SECONDS
/* DRV_MD_TIMEOUT_MIN, _MAX clamp a send's timeout; _INIT is used before
   the resolver answered. */
#define DRV_MD_TIMEOUT_MIN (50 * RP_MILLISECONDS)
#define DRV_MD_TIMEOUT_MAX RP_SECONDS
#define DRV_MD_TIMEOUT_INIT RP_SECONDS
/* TUN_DRV_MD_MAX_SENDS bounds the MD sends tracked at once (below
   UINT16_MAX: drv_md_send.next holds an index + 1). */
#define TUN_DRV_MD_MAX_SENDS 4096
/* DRV_MD_IDS is the number of DNS IDs (id_head's entries). */
#define DRV_MD_IDS 65536u
/* DRV_MTU_STEP_NUM / _DEN is the MTU test's step down. */
#define DRV_MTU_STEP_NUM 3
#define DRV_MTU_STEP_DEN 4

/* drv_worker is one DNSTT worker. */
typedef struct drv_worker {
  /* waiting is 1 while a query is out; resting 1 after an error answer
     until |deadline|. */
  int waiting;
  int resting;
  /* deadline ends the wait or the rest. */
  rp_tstamp deadline;
  /* id is the DNS ID of the query out: an answer with another ID (to a
     copy of an earlier query, from a pool) gives its data but does not
     end the wait. */
  uint16_t id;
  /* opened is 1 once the worker's socket exists (a fresh one per send
     when |fresh|). */
  int opened;
  /* sent lists the upload segments of the query out. */
  tun_arq_sent sent;
} drv_worker;

/* drv_probe_stage: the MTU test tries the ceiling first; if it fails,
   the floor tells a dead resolver from one that only drops large
   answers, which then steps down from the ceiling by 3/4. */
typedef enum drv_probe_stage {
  DRV_PROBE_CEILING = 0,
  DRV_PROBE_FLOOR,
  DRV_PROBE_DESCEND
} drv_probe_stage;

/* drv_md_res is one MD resolver. */
typedef struct drv_md_res {
  /* mtu is the size its MTU test passed at, 0 while unknown or failed. */
  uint16_t mtu;
  int probing;
  uint16_t probe_size;
  uint16_t probe_nonce;
  uint16_t probe_id;
  int probe_tries;
  int probe_stage;
  rp_tstamp probe_deadline;
  /* srtt and rttvar time its sends (RP_TSTAMP_UNSET: no sample). */
  rp_duration srtt;
  rp_duration rttvar;
} drv_md_res;

/* drv_md_send is one MD send in flight. */
typedef struct drv_md_send {
  int used;
  size_t res;
  uint16_t id;
  size_t slot;
  /* gen is the slot's generation when sent; for a chain query, its
     serial, shared by its copies. */
  uint64_t gen;
  /* copy_ok: a chain query's copy got a NOERROR answer; acks: the acks
     owed that the chain query carries. */
  int copy_ok;
  size_t acks;
  rp_tstamp sent_at;
  rp_tstamp deadline;
  /* next links the sends of one DNS ID in index order (index + 1; 0
     ends the list): id_head. */
  uint16_t next;
} drv_md_send;

/* drv_block_rec is a chain query's named acks and NACKs under its
   drv_query_key (both empty: taken, or free). */
typedef struct drv_block_rec {
  uint64_t key;
  tun_arq_sent acks;
  tun_arq_sent nacks;
} drv_block_rec;

/* drv_srv_nack_rec is the server's NACKs of the answer to the query of
   key |key| (n 0: taken, or free). */
typedef struct drv_srv_nack_rec {
  uint64_t key;
  size_t n;
  uint32_t sn[TUN_NACK_GAP_MAX];
} drv_srv_nack_rec;

/* drv_md_slot is one MD slot. */
typedef struct drv_md_slot {
  int waiting;
  int resting;
  /* pending counts the sends of this generation still out. */
  size_t pending;
  uint64_t gen;
  rp_tstamp rest_until;
  tun_arq_sent sent;
} drv_md_slot;

struct tun_drv {
  tun_drv_settings set;
  tun_drv_callbacks cb;
  void *user_data;
  rp_mem mem;
  tun_cli *cli;
  tun_xfer xfer;
  tun_drv_stats st;
  int finished;
  /* Workers and the original model. */
  drv_worker *workers;
  tun_orig orig;
  /* MD. */
  int running;
  int failed;
  uint16_t mtu;
  tun_bal bal;
  drv_md_res res[TUN_DRV_MAX_RESOLVERS];
  drv_md_slot slots[TUN_DRV_MAX_SLOTS];
  drv_md_send *sends;
  size_t sends_hi;
  /* sends_free: no send below it is free (where the next is taken);
     id_head: per DNS ID, its first send (index + 1, 0: none), so an
     answer and a chain's copies are found without walking the table. */
  size_t sends_free;
  uint16_t *id_head;
  /* MD chain: acks owed, when they go (UNSET: none owed), the next
     ping. */
  size_t owed;
  /* lost_acks counts the acks of chain queries refused or timed out,
     which the server never got (at most DRV_MD_CHAIN_LOST_MAX). */
  size_t lost_acks;
  /* burst: 1 while a burst of chain sends goes out (the upload's
     packets, the opening): its sends reach the balancer's counts at its
     end (burst_sent), as MasterDnsVPN's writer reports them after the
     dispatcher picked every resolver of the burst. */
  int burst;
  uint32_t burst_sent[TUN_DRV_MAX_RESOLVERS];
  uint64_t chain_serial;
  rp_tstamp dispatch_at;
  /* chain_busy: the dispatcher is sending until disp_free; busy_n data
     answers came in the window from busy_t0, and busy says whether the
     window before had chain_busy_rate; disp_now: the answer being
     handled dispatches at once. */
  rp_tstamp disp_free;
  rp_tstamp busy_t0;
  size_t busy_n;
  int busy;
  int disp_now;
  /* The pings: every ping_interval from next_ping, or with ping_wake
     by the ping loop (started with the chain), a ping owed since
     ping_owed_at (UNSET: none) by a check that traffic woke. */
  rp_tstamp next_ping;
  tun_ping ping;
  rp_tstamp ping_owed_at;
  /* The NACKs (set.nack): nack_owed segments in nack_q wait for the
     dispatch; nack says which are due (tunnack.h). last_data is when
     data last came. */
  size_t nack_owed;
  uint32_t nack_q[TUN_DRV_NACK_MAX];
  /* acks_named: the segments of the first ack_qn acks owed. */
  uint32_t ack_q[DRV_ACK_Q];
  size_t ack_qn;
  /* recs: DRV_BLOCK_RECS records of the chain queries that carried
     named acks or NACKs (chain only, else NULL); rec_live counts those
     not taken, rec_serial picks the record a full set loses. */
  drv_block_rec *recs;
  /* srv_nacks: DRV_SRV_NACK_RECS records of tun_drv_srv_nacks (NULL
     until the first). */
  drv_srv_nack_rec *srv_nacks;
  size_t rec_live;
  uint64_t rec_serial;
  tun_nack nack;
  rp_tstamp last_data;
  /* The timeouts the balancer hears of later (bal_loss_after): a ring
     of late_n entries from late_head, in the order they were seen. */
  uint32_t late_res[TUN_DRV_MD_MAX_SENDS];
  rp_tstamp late_at[TUN_DRV_MD_MAX_SENDS];
  size_t late_head, late_n;
  uint8_t qbuf[TUN_WIRE_MAX_MSG];
};

/* drv_rand16 draws 16 bits from the driver's rand callback. */
static inline uint16_t drv_rand16(tun_drv *d) {
  return (uint16_t)d->cb.rand(d->user_data);
}

/* drv_send hands a query to the send callback, counting a failure. */
static inline void drv_send(tun_drv *d, uint32_t chan, size_t res,
                            const uint8_t *data, size_t len, uint32_t flags) {
  if (d->cb.send(chan, res, data, len, flags, d->user_data) != 0) {
    ++d->st.send_errors;
  }
}

/* drv_query_key returns a key of the DNS query of |len| bytes at |q|: a
   hash of its question's name (0 when it has none), which resolvers and
   relays pass on unchanged where they change its ID. */
uint64_t drv_query_key(const uint8_t *q, size_t len);

/* drv_progress pumps the transfer and ends the run when it is done. */
static inline void drv_progress(tun_drv *d, rp_tstamp now) {
  if (d->cli != NULL && !d->finished && tun_xfer_pump(&d->xfer, d->cli, now)) {
    d->finished = 1;
  }
}

/* drv_cli_new creates the driver's client session in |mode|, with the
   download frames bounded by |down_limit|. Returns tun_cli_new's
   result. */
static inline int drv_cli_new(tun_drv *d, tun_mode mode, uint16_t down_limit) {
  tun_cli_settings cs;

  tun_cli_settings_default(&cs, mode);
  if (d->set.model == TUN_DRV_ORIGINAL) {
    /* dnstt's KCP windows (turbotunnel.QueueSize / 2). */
    cs.arq.snd_wnd = cs.arq.rcv_wnd = TUN_DRV_ORIG_WINDOW;
    cs.arq.ack_held = d->set.ack_held;
    if (d->set.kcp) {
      /* dnstt-client's KCP: its timers, and its segments (kcp_timers'
         send times and echo on top, as kcp-go's header carries them). */
      tun_arq_settings_kcp(&cs.arq);
      cs.arq.mss = TUN_DRV_KCP_MSS + TUN_ARQ_KCP_OVERHEAD;
    }
  } else if (d->set.chain) {
    cs.edns_size = DRV_MD_CHAIN_EDNS;
    if (d->set.chain_up) {
      /* MasterDnsVPN's ARQ: its windows and its upload's timeouts. */
      tun_arq_settings_md(&cs.arq);
    } else {
      cs.arq.snd_wnd = cs.arq.rcv_wnd = TUN_ARQ_MD_WND;
      cs.arq.unacked_max = TUN_ARQ_MD_UNACKED;
    }
  }
  cs.domain = d->set.domain;
  cs.sid = d->cb.rand(d->user_data);
  if (d->set.chain && d->set.chain_up && d->set.resend_random) {
    cs.arq.resend_seed = d->cb.rand(d->user_data) | 1;
  }
  cs.down_limit = down_limit;
  return tun_cli_new(&d->cli, &cs, &d->mem);
}

/* drv_md_timeout returns how long a query to resolver |r| may take. */
rp_duration drv_md_timeout(const drv_md_res *r);

/* drv_probe_send sends resolver |i| a probe of its probe_size at |now|. */
void drv_probe_send(tun_drv *d, size_t i, rp_tstamp now);

/* drv_probe_answer takes the answer |data| of |len| bytes to resolver
   |i|'s probe at |now|: the MTU test's next step, or a recheck passed. */
void drv_probe_answer(tun_drv *d, size_t i, const uint8_t *data, size_t len,
                      rp_tstamp now);

/* drv_probe_timeout ends resolver |i|'s probe unanswered at |now|. */
void drv_probe_timeout(tun_drv *d, size_t i, rp_tstamp now);

/* drv_md_start_run starts the run once the MTU test found a size. */
void drv_md_start_run(tun_drv *d, rp_tstamp now);

/* tun_drv_md_start starts MD's MTU test at |now|. */
void tun_drv_md_start(tun_drv *d, rp_tstamp now);

/* tun_drv_md_answer takes an answer |data| of |len| bytes from resolver
   |ri| (a probe's or a query's) at |now|. */
void tun_drv_md_answer(tun_drv *d, size_t ri, const uint8_t *data, size_t len,
                       rp_tstamp now);

/* tun_drv_md_tick times out MD's probes and sends, rechecks disabled
   resolvers and refills the slots at |now|. */
void tun_drv_md_tick(tun_drv *d, rp_tstamp now);

#endif /* TUN_DRV_INTERNAL_H */
