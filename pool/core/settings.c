/*
 * settings.c: rp_settings defaults per kind, and their check.
 *
 * IMPLEMENTATION NOTES
 * - Every constant of DESIGN.md section 5 is a field; the values here
 *   are the documented starting points (docs/pool-behaviour.md).
 * - Kinds differ in duplicate, wait_for_token, the copies' timing and
 *   judging, token_wait, extra_budget, trouble_recent and the hedge and
 *   late-answer bounds only:
 *   dnstt: duplicate 2, wait_for_token 1, copy_window 32 and
 *   copy_data_share 0.25 (the figures at SETTINGS_COPY_WINDOW_DNSTT),
 *   hedge_max_inflight 24: a busy machine's queueing made the minimal
 *   DNSTT pool (300 queries in flight) over three-lossy hedge about once
 *   a query, to the lossy resolvers, and move 20-109 Mbit/s where its
 *   first resolver alone moves 200 (4 of 12 QUICK rounds with a busy
 *   loop on one core; none of 12 with the bound and a late answer's
 *   count taken back, try.c; the real dnstt through the CLI level on
 *   every setup).
 *   Measured on loopback with the
 *   scenario runner (docs/pool-behaviour.md): our dnstt client backs off
 *   0.75-2.25 s after an error answer, so a SERVFAIL costs it far more
 *   poll time than a query held up to 300 ms; held beat failed on
 *   one-limited and three-limited for both minimal tunnels.
 *   masterdns: duplicate 5, wait_for_token 1, copy_delay_rtt 0,
 *   copy_inflight_rtt 4 ms, token_wait 50 ms, extra_budget 4.5,
 *   trouble_recent 1 s. A
 *   MasterDNS-style client keeps a fixed few queries out (8 for ours), so
 *   its rate is answers per round trip per slot: a copy's answer is worth
 *   most when it comes with the first. Measured (minimal MasterDNS, in-
 *   process pool, 5 s): one-unlimited 171 -> 234 Mbit/s (first resolver
 *   alone 239), three-unlimited 167 -> 261 (alone 224); one-10ms, uneven
 *   and the limited setups level. Over a fast resolver a delayed copy
 *   waited for the runtime's millisecond timer, after the answer.
 *   copy_inflight_rtt 4 ms lets both copies go over a slow resolver
 *   with more queries in flight: the real MasterDnsVPN client, --kind
 *   masterdns, three rounds side by side: one-10ms 18 500 -> 45 700
 *   kbps, uneven 18 700 -> 45 100, one-unlimited level (158 000).
 *   Not for generic: the real dnstt lost 7 % on uneven with it.
 *   masterdns token_wait 50 ms: the MasterDnsVPN client is clocked by
 *   its acks (one query per data answer, no window of its own on
 *   queries) and recovers a lost one by its own retransmission, so a
 *   held query only delays its ack. The real client through respool,
 *   one-limited 144-148 -> 179-189 kbps at 100 ms (generic 300 ms
 *   before), three-limited 392-425 -> 430-477, one-dead 300-336 ->
 *   307-383; 50 ms against 100 ms, six rounds side by side (kind auto):
 *   three-limited mean 433 -> 460, one-dead 316 -> 340, one-limited
 *   (four rounds) 175 -> 190; 25 ms and no wait at all were no better
 *   than 100. Not for generic: the minimal model of the
 *   original dnstt-client (it drops a SERVFAIL and never polls again in
 *   its place) failed one-limited in both rounds with 100 ms where it
 *   moves 190 kbps with 300.
 *   masterdns duplicate 5 and extra_budget 4.5 (was 3 and 2.5): over a
 *   slow resolver each copy of an ack pulls one more packet from the
 *   server, as the client's own balancer does by sending every ack to
 *   all its resolvers. The real client through respool (kind auto),
 *   five rounds side by side (two and three): one-10ms 13 500-41 100
 *   -> 77 400-86 700 kbps, uneven 27 200-42 500 -> 16 500-87 700 (four
 *   of five 77 500 or more; its own balancer 57 000-60 600);
 *   three-unlimited and one-unlimited level. Copies still go to
 *   uncapped resolvers only and follow the data they carry. With 4 and
 *   3.5 uneven ran 26 300-65 100.
 *   masterdns trouble_recent 1 s (was 2): a cap grows again and a
 *   query goes past it one second after the last refusal or loss, not
 *   two. The client's limited cells are three seconds long; two rounds
 *   alone, one-dead 305-362 -> 373-385 kbps; with duplicate 5, two
 *   rounds, one-limited 160-163 -> 193-197, three-limited 442-448 ->
 *   485-491. Not for generic: not measured with the dnstt models.
 *   generic (a client the pool knows nothing about, the CLI without
 *   --kind): duplicate 2, wait_for_token 1. The original dnstt-client
 *   drops any non-NOERROR answer without sending a new poll, so a
 *   SERVFAIL costs it a poll slot for good while a held query costs at
 *   most token_wait (300 ms); a plain stub resolver also prefers a late
 *   answer to a SERVFAIL. Copies are safe for an unknown client: every
 *   answer carries its own ID and a stub ignores the extra one.
 *   auto: generic's values here; the pool takes another kind's once its
 *   client's queries show it (sense.h, rp_pool_sense_kind).
 * - case_randomize (0x20) is on for generic only: a tunnel's names carry
 *   its data, so rp_settings_restrict clears it for dnstt and masterdns
 *   after any override (case.h).
 */
#include "core.h"

#include <string.h>

/* SETTINGS_* are the documented defaults (DESIGN.md sections 4 and 5). */
#define SETTINGS_DEADLINE (5 * RP_SECONDS)
#define SETTINGS_PER_ATTEMPT (2 * RP_SECONDS)
/* SETTINGS_UDP_PORT_LIFE: a source port takes new sends for a second,
   so a stub's queries a second apart each leave from a new one. */
#define SETTINGS_UDP_PORT_LIFE (1 * RP_SECONDS)
#define SETTINGS_PROBE_INTERVAL (5 * RP_SECONDS)
#define SETTINGS_DOWN_AFTER 8
#define SETTINGS_MAX_INFLIGHT 10000
#define SETTINGS_MAX_RESOLVERS 16384
#define SETTINGS_DUP_DNSTT 2
#define SETTINGS_DUP_MASTERDNS 5
#define SETTINGS_EXTRA_BUDGET_MASTERDNS 4.5
#define SETTINGS_TROUBLE_RECENT_MASTERDNS (1 * RP_SECONDS)
/* SETTINGS_ASSUME_ANSWERS_TUNNEL: a tunnel's resolver met in a burst
   answers a few dozen before its first drop, all it was sent in its
   probation's slow start: a cap from that rate (a 40 q/s dropper
   capped at 22.5 for the whole drop episode) left the real MasterDnsVPN
   client at 331 kbps on three-limited-one-dead where 40 gave 425 (its
   own balancer 401; same run, 3 rounds each). */
#define SETTINGS_ASSUME_ANSWERS_TUNNEL 40
/* SETTINGS_COPY_WINDOW_DNSTT and SETTINGS_COPY_DATA_SHARE_DNSTT: the
   real dnstt-client via respool over one unlimited resolver moved 29 000
   kbps with copies judged 8 at a time and cut at half repeated, 34 000
   with them always on (its first resolver alone 32 000). About half of
   its copies' answers carry data, in streaks: dnstt-server answers a
   poll and its copy empty when nothing is queued, so 8 judgements in a
   row often repeat and the level fell to none, back only by the probes
   (4 copies each 2 s). Judged 32 at a time and kept while more than a
   quarter carry data, the level holds. */
#define SETTINGS_COPY_WINDOW_DNSTT 32
#define SETTINGS_COPY_DATA_SHARE_DNSTT 0.25
#define SETTINGS_DUP_GENERIC 2
#define SETTINGS_MAX_QUERY_LEN 1232
#define SETTINGS_COPY_INFLIGHT_RTT_MASTERDNS (4 * RP_MILLISECONDS)
#define SETTINGS_COPY_MIN_DELAY (1 * RP_MILLISECONDS)
#define SETTINGS_TOKEN_WAIT_MASTERDNS (50 * RP_MILLISECONDS)
#define SETTINGS_HEDGE_MAX_INFLIGHT_MASTERDNS 24
#define SETTINGS_HEDGE_MAX_INFLIGHT_DNSTT 24
#define SETTINGS_LATE_WINDOW_MASTERDNS (10 * RP_SECONDS)
/* masterdns copy_ramp 1 s: the copy bound grows over the first second of
   a client's queries. The real MasterDnsVPN client via respool over one
   10 ms resolver or uneven latency stalled in its first two seconds in
   14 of 48 rounds over six runs (4 180-25 064 kbps where the others
   moved 67 600-87 200; 5-92 datagrams lost in each stalled one): its
   sockets (the kernel's default buffer; it sets none) overflowed while
   it was busiest, opening its session, and its ARQ stopped. With the
   ramp, 14 of 14 rounds on one-10ms and uneven moved 65 800-82 700 and
   no datagram was lost, nor in the 24 rounds of results/real; 2 s cost
   more of a 5 s cell and was no steadier. With net.core.rmem_default
   raised to 4 MiB and no ramp, 8 of 8 rounds moved 74 500-80 700 kbps:
   the overflow is the client's. */
#define SETTINGS_COPY_RAMP_MASTERDNS (1 * RP_SECONDS)
/* SETTINGS_CASE_FALLBACK: answers with another case, in a row without a
   proof, before a resolver falls back (case.h says why 3). */
#define SETTINGS_CASE_FALLBACK 3
/* SETTINGS_CASE_PROOF_LIFE: a proof that a resolver keeps the case holds
   off its fallback this long (case.h). */
#define SETTINGS_CASE_PROOF_LIFE (60 * RP_SECONDS)

/* settings_default_basics sets the defaults of the main settings: strategy,
   deadlines, sizes of the tables, logging. */
static void settings_default_basics(rp_settings *s) {
  s->load_balance = RP_BALANCE_AUTO;
  s->deadline = SETTINGS_DEADLINE;
  s->per_attempt = SETTINGS_PER_ATTEMPT;
  s->probe_interval = SETTINGS_PROBE_INTERVAL;
  s->down_after = SETTINGS_DOWN_AFTER;
  s->duplicate = SETTINGS_DUP_GENERIC;
  s->wait_for_token = 1;
  s->max_inflight = SETTINGS_MAX_INFLIGHT;
  s->max_resolvers = SETTINGS_MAX_RESOLVERS;
  s->log_level = RP_LOG_WARN;
  s->log_categories = RP_LOG_CAT_ALL;
}

/* settings_default_choice sets the defaults of the choice: the band, loss,
   probation, retries. */
static void settings_default_choice(rp_settings *s) {
  s->latency_window = 10 * RP_SECONDS;
  s->band_ratio = 1.2;
  s->band_slack = 5 * RP_MILLISECONDS;
  s->band_loss = 0.02;
  s->loss_z = 1.96;
  s->loss_window = 10.0;
  s->probation_answers = 8;
  s->stale_caps = 0;
  s->probation_strict = 0;
  s->tc_stream_tries = 2;
  s->retry_left_out = 2 * RP_SECONDS;
  s->retry_loss_stretch = 20.0;
}

/* settings_default_caps sets the defaults of the rate limits: caps, their
   windows and verdicts. */
static void settings_default_caps(rp_settings *s) {
  s->cap_refusal_factor = 1.2;
  s->cap_drop_factor = 0.9;
  s->cap_growth = 0.10;
  s->cap_lift_after = 3 * RP_SECONDS;
  s->rate_window = 3 * RP_SECONDS;
  s->overflow_grace = 1 * RP_SECONDS;
  s->quiet_spell = 3 * RP_SECONDS;
  s->quiet_max_step = 0.3;
  s->assume_answers = 10;
  s->assume_qps = 40.0;
  s->bucket_depth = 200 * RP_MILLISECONDS;
  s->token_wait = 300 * RP_MILLISECONDS;
  s->past_cap_interval = 100 * RP_MILLISECONDS;
  s->trouble_recent = 2 * RP_SECONDS;
  s->loss_verdict_drops = 5;
  s->loss_verdict_ratio = 0.5;
  s->random_loss_hold = 10 * RP_SECONDS;
  s->verdict_min_use = RP_SECONDS;
  s->drop_min_share = 0.05;
  s->drop_min_spread = 2;
  s->early_drop_loss = 2;
  s->random_min_share = 0.025;
  s->level_min_tries = 50;
}

/* settings_default_hedges sets the defaults of hedges. */
static void settings_default_hedges(rp_settings *s) {
  s->hedge_devs = 4.0;
  s->hedge_min_dev = 10 * RP_MILLISECONDS;
  s->late_window = 0;
  s->hedge_max_inflight = 0;
  s->hedge_initial = 300 * RP_MILLISECONDS;
  s->early_hedge_rtts = 2.0;
  s->lossy_recent = 10 * RP_SECONDS;
  s->hedge_lossy_loss = 0.05;
  s->max_hedges = 2;
}

/* settings_default_copies sets the defaults of copies and their budget. */
static void settings_default_copies(rp_settings *s) {
  s->copy_delay_rtt = 0.25;
  s->copy_min_delay = SETTINGS_COPY_MIN_DELAY;
  s->copy_window = 8;
  s->copy_step = 0.5;
  s->copy_data_share = 0.5;
  s->copy_probe_interval = 2 * RP_SECONDS;
  s->copy_probe_queries = 4;
  s->copy_max_inflight = 24;
  s->copy_inflight_rtt = 0;
  s->extra_budget = 2.5;
  s->extra_window = 2 * RP_SECONDS;
}

/* settings_default_down sets the defaults of down resolvers. */
static void settings_default_down(rp_settings *s) {
  s->down_copy_interval = 1 * RP_SECONDS;
  s->probe_qtype = RP_DNS_TYPE_TXT;
}

/* settings_default_scores sets the defaults of scores and the other
   strategies' keys. */
static void settings_default_scores(rp_settings *s) {
  s->score_answer = 1;
  s->score_refusal = -4;
  s->score_failure = -4;
  s->stat_min_samples = 5;
  s->ll_unknown_latency = 999 * RP_MILLISECONDS;
  s->ll_unknown_loss = 200;
}

/* settings_default_case sets the defaults of 0x20 case. */
static void settings_default_case(rp_settings *s) {
  s->case_randomize = 1;
  s->case_fallback = SETTINGS_CASE_FALLBACK;
  s->case_proof_life = SETTINGS_CASE_PROOF_LIFE;
}

/* settings_default_sizes sets the defaults of query size and the runtime's
   source ports. */
static void settings_default_sizes(rp_settings *s) {
  s->max_query_len = SETTINGS_MAX_QUERY_LEN;
  s->udp_port_life = SETTINGS_UDP_PORT_LIFE;
}

/* settings_default_kind sets what the tunnel |kind| changes. */
static void settings_default_kind(rp_settings *settings, rp_kind kind) {
  switch (kind) {
  case RP_KIND_DNSTT:
    settings->duplicate = SETTINGS_DUP_DNSTT;
    settings->wait_for_token = 1;
    settings->assume_answers = SETTINGS_ASSUME_ANSWERS_TUNNEL;
    settings->copy_window = SETTINGS_COPY_WINDOW_DNSTT;
    settings->copy_data_share = SETTINGS_COPY_DATA_SHARE_DNSTT;
    settings->hedge_max_inflight = SETTINGS_HEDGE_MAX_INFLIGHT_DNSTT;
    break;
  case RP_KIND_MASTERDNS:
    settings->duplicate = SETTINGS_DUP_MASTERDNS;
    settings->wait_for_token = 1;
    settings->copy_delay_rtt = 0.0;
    settings->copy_inflight_rtt = SETTINGS_COPY_INFLIGHT_RTT_MASTERDNS;
    settings->token_wait = SETTINGS_TOKEN_WAIT_MASTERDNS;
    settings->extra_budget = SETTINGS_EXTRA_BUDGET_MASTERDNS;
    settings->trouble_recent = SETTINGS_TROUBLE_RECENT_MASTERDNS;
    settings->hedge_max_inflight = SETTINGS_HEDGE_MAX_INFLIGHT_MASTERDNS;
    settings->late_window = SETTINGS_LATE_WINDOW_MASTERDNS;
    settings->copy_ramp = SETTINGS_COPY_RAMP_MASTERDNS;
    settings->assume_answers = SETTINGS_ASSUME_ANSWERS_TUNNEL;
    break;
  case RP_KIND_GENERIC:
  case RP_KIND_AUTO:
    break;
  }
}

void rp_settings_default(rp_settings *settings, rp_kind kind) {
  memset(settings, 0, sizeof(*settings));
  settings_default_basics(settings);
  settings_default_choice(settings);
  settings_default_caps(settings);
  settings_default_hedges(settings);
  settings_default_copies(settings);
  settings_default_down(settings);
  settings_default_scores(settings);
  settings_default_case(settings);
  settings_default_sizes(settings);
  settings_default_kind(settings, kind);
  rp_settings_restrict(settings, kind);
}

int rp_settings_restrict(rp_settings *settings, rp_kind kind) {
  switch (kind) {
  case RP_KIND_DNSTT:
  case RP_KIND_MASTERDNS:
    if (settings->case_randomize) {
      settings->case_randomize = 0;
      return 1;
    }
    return 0;
  case RP_KIND_GENERIC:
  case RP_KIND_AUTO:
    break;
  }
  return 0;
}

int rp_settings_check(const rp_settings *s) {
  switch (s->load_balance) {
  case RP_BALANCE_AUTO:
  case RP_BALANCE_ROUNDROBIN:
  case RP_BALANCE_WEIGHTED:
  case RP_BALANCE_LOWEST_LATENCY:
  case RP_BALANCE_LEAST_LOSS:
    break;
  default:
    return RP_ERR_INVALID_ARGUMENT;
  }
  if (s->deadline == 0 || s->per_attempt == 0 || s->down_after == 0 ||
      s->duplicate < 1 || s->duplicate > RP_CORE_MAX_DUPLICATE ||
      s->max_inflight == 0 || s->max_resolvers == 0 ||
      s->max_resolvers > RP_CORE_MAX_RESOLVERS ||
      s->max_query_len < RP_DNS_HEADER_LEN ||
      s->max_query_len > RP_DNS_MAX_MSG_LEN || s->latency_window == 0 ||
      s->band_ratio < 1.0 || s->band_loss < 0.0 || s->loss_z <= 0.0 ||
      !(s->loss_window > 0.0) || s->retry_left_out == 0 ||
      !(s->retry_loss_stretch >= 0.0) || s->retry_loss_stretch > 1000.0 ||
      s->cap_refusal_factor <= 0.0 || s->cap_drop_factor <= 0.0 ||
      s->cap_growth < 0.0 || s->rate_window == 0 || s->quiet_max_step < 0.0 ||
      s->quiet_max_step > 1.0 || s->assume_qps <= 0.0 ||
      s->past_cap_interval == 0 || s->loss_verdict_drops == 0 ||
      !(s->loss_verdict_ratio >= 0.0) || !(s->drop_min_share >= 0.0) ||
      s->drop_min_share > 1.0 || !(s->random_min_share >= 0.0) ||
      s->random_min_share > 1.0 || s->early_drop_loss > 2 ||
      s->hedge_devs < 0.0 ||
      s->early_hedge_rtts < 0.0 || s->copy_delay_rtt < 0.0 ||
      s->copy_window == 0 || s->copy_step <= 0.0 ||
      !(s->copy_data_share >= 0.0) || s->copy_data_share >= 1.0 ||
      s->copy_probe_interval == 0 || !(s->extra_budget >= 0.0) ||
      s->extra_window == 0 ||
      s->down_copy_interval == 0 || s->probe_interval == 0) {
    return RP_ERR_INVALID_ARGUMENT;
  }
  return 0;
}
