/*
 * tunping.h: when a MasterDnsVPN client sends its pings (prefix
 * tun_ping_), as its ping manager decides: a loop that checks on a
 * timer and on traffic, and queues a ping when one is due. The chain
 * model of the driver (tundrv.h's ping_wake) runs it; it is sans-I/O
 * and keeps no clock of its own.
 *
 * The rules, from MasterDnsVPN's PingManager:
 * - a check sends a ping when |interval| has passed since the last ping
 *   went (PING_AGGRESSIVE_INTERVAL, 100 ms, while the session is warm),
 *   and restarts the timer: the next check comes TUN_PING_CHECK_MIN
 *   after it (half the interval, 100 ms to 1 s), or earlier on
 *   traffic;
 * - traffic wakes the loop for a check (a packet sent that is not a
 *   ping, an answer received that is not a pong), at most once each
 *   TUN_PING_WAKE_GAP.
 * So the first data answer after a ping checks too early to send one and
 * restarts the timer: the pings' period is the interval plus the time
 * from a ping to the first traffic that woke the loop, not the interval.
 */
#ifndef TUN_PING_H
#define TUN_PING_H

#include "respool.h"

/* TUN_PING_CHECK_MIN and TUN_PING_CHECK_MAX bound the time from a
   check to the next timer's (half the interval, clamped to 100 ms - 1 s
   as the loop does); TUN_PING_WAKE_GAP is the least time between two
   wakes by traffic (its throttle of 100 ms). */
#define TUN_PING_CHECK_MIN (100 * RP_MILLISECONDS)
#define TUN_PING_CHECK_MAX (1000 * RP_MILLISECONDS)
#define TUN_PING_WAKE_GAP (100 * RP_MILLISECONDS)

typedef struct tun_ping {
  /* interval: the least time between two pings; late: how late the
     timer's checks come (MasterDnsVPN's timers fire on Go's netpoller,
     which waits whole milliseconds). */
  rp_duration interval;
  rp_duration late;
  /* last_ping: when the last ping went; last_wake: the last wake by
     traffic; check_at: the timer's next check. */
  rp_tstamp last_ping;
  rp_tstamp last_wake;
  rp_tstamp check_at;
} tun_ping;

/* tun_ping_start starts the loop at |now| with pings |interval| apart at
   the least and the timer's checks |late|: its first check comes
   |interval| (and |late|) later, and the session's start counts as the
   last ping and wake. */
void tun_ping_start(tun_ping *p, rp_duration interval, rp_duration late,
                    rp_tstamp now);

/* tun_ping_due returns when the timer's next check comes (late
   included). */
rp_tstamp tun_ping_due(const tun_ping *p);

/* tun_ping_check checks at |now| (the timer's check, once |now| reached
   tun_ping_due) and restarts the timer. Returns 1 when a ping is due:
   the caller sends it and calls tun_ping_sent. */
int tun_ping_check(tun_ping *p, rp_tstamp now);

/* tun_ping_traffic tells the loop of traffic at |now| (a send that is
   not a ping, an answer that is not a pong). Returns what the check it
   wakes returns (tun_ping_check), or 0 when it wakes none. */
int tun_ping_traffic(tun_ping *p, rp_tstamp now);

/* tun_ping_sent records a ping sent at |now|. */
void tun_ping_sent(tun_ping *p, rp_tstamp now);

#endif /* TUN_PING_H */
