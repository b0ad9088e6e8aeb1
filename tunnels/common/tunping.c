/*
 * tunping.c: a MasterDnsVPN client's ping loop (tunping.h).
 */
#include "tunping.h"

void tun_ping_start(tun_ping *p, rp_duration interval, rp_duration late,
                    rp_tstamp now) {
  p->interval = interval;
  p->late = late;
  p->last_ping = now;
  p->last_wake = now;
  p->check_at = now + interval + late;
}

rp_tstamp tun_ping_due(const tun_ping *p) { return p->check_at; }

int tun_ping_check(tun_ping *p, rp_tstamp now) {
  rp_duration next = p->interval / 2;

  if (next < TUN_PING_CHECK_MIN) {
    next = TUN_PING_CHECK_MIN;
  } else if (next > TUN_PING_CHECK_MAX) {
    next = TUN_PING_CHECK_MAX;
  }
  p->check_at = now + next + p->late;
  return now - p->last_ping >= p->interval;
}

int tun_ping_traffic(tun_ping *p, rp_tstamp now) {
  if (now - p->last_wake < TUN_PING_WAKE_GAP) {
    return 0;
  }
  p->last_wake = now;
  return tun_ping_check(p, now);
}

void tun_ping_sent(tun_ping *p, rp_tstamp now) { p->last_ping = now; }
