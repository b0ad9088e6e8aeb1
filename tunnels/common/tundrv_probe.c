/*
 * tundrv_probe.c: the MasterDNS model's probes (tundrv.h): the MTU test
 * that starts its run (the ceiling, then the floor, then down in steps
 * until a size gets through), the background rechecks of disabled
 * resolvers, and the timeout of a query to a resolver. The state is
 * tundrv_internal.h's.
 */
#include "tundrv_internal.h"

rp_duration drv_md_timeout(const drv_md_res *r) {
  rp_duration t;

  if (r->srtt == RP_TSTAMP_UNSET) {
    return DRV_MD_TIMEOUT_INIT;
  }
  /* A steady resolver has a tiny rttvar: keep a quarter of srtt as a
     floor of the margin so that it does not time out on jitter. */
  t = r->srtt + (4 * r->rttvar > r->srtt / 4 ? 4 * r->rttvar : r->srtt / 4);
  if (t < DRV_MD_TIMEOUT_MIN) {
    t = DRV_MD_TIMEOUT_MIN;
  }
  return t > DRV_MD_TIMEOUT_MAX ? DRV_MD_TIMEOUT_MAX : t;
}

void drv_probe_send(tun_drv *d, size_t i, rp_tstamp now) {
  drv_md_res *r = &d->res[i];
  rp_ssize n;

  r->probing = 1;
  r->probe_nonce = drv_rand16(d);
  r->probe_id = drv_rand16(d);
  r->probe_deadline = now + DRV_MD_PROBE_TIMEOUT;
  n = tun_cli_build_probe(
      d->qbuf, sizeof(d->qbuf), r->probe_id, &d->set.domain, r->probe_nonce,
      r->probe_size, d->set.chain ? DRV_MD_CHAIN_EDNS : RP_DNS_EDNS_UDP_SIZE);
  if (n > 0) {
    drv_send(d, (uint32_t)i, i, d->qbuf, (size_t)n, TUN_DRV_SEND_PROBE);
  }
}

/* drv_mtu_check ends the MTU test once no resolver is probing. */
static void drv_mtu_check(tun_drv *d, rp_tstamp now) {
  size_t i;
  uint16_t mtu = 0;

  if (d->running) {
    return;
  }
  for (i = 0; i < d->set.nres; ++i) {
    if (d->res[i].probing) {
      return;
    }
  }
  for (i = 0; i < d->set.nres; ++i) {
    drv_md_res *r = &d->res[i];

    tun_bal_set_active(&d->bal, i, r->mtu != 0, now);
    if (r->mtu != 0 && (mtu == 0 || r->mtu < mtu)) {
      mtu = r->mtu;
    }
  }
  if (mtu == 0) {
    d->failed = 1;
    d->finished = 1;
    return;
  }
  d->mtu = mtu;
  drv_md_start_run(d, now);
}

void drv_probe_answer(tun_drv *d, size_t i, const uint8_t *data,
                             size_t len, rp_tstamp now) {
  drv_md_res *r = &d->res[i];

  if (!tun_cli_check_probe(data, len, r->probe_nonce, r->probe_size)) {
    return;
  }
  r->probing = 0;
  if (!d->running && r->probe_stage == DRV_PROBE_FLOOR) {
    /* Alive: find the size between the floor and the ceiling. */
    r->probe_stage = DRV_PROBE_DESCEND;
    r->probe_tries = 0;
    r->probe_size =
        (uint16_t)(d->set.mtu_ceiling * DRV_MTU_STEP_NUM / DRV_MTU_STEP_DEN);
    if (r->probe_size > TUN_DRV_MTU_FLOOR) {
      drv_probe_send(d, i, now);
      return;
    }
    r->probe_size = TUN_DRV_MTU_FLOOR;
  }
  if (!d->running) {
    r->mtu = r->probe_size;
    drv_mtu_check(d, now);
  } else if (!d->bal.res[i].active) {
    /* A background recheck passed. */
    tun_bal_set_active(&d->bal, i, 1, now);
  }
}

void drv_probe_timeout(tun_drv *d, size_t i, rp_tstamp now) {
  drv_md_res *r = &d->res[i];

  r->probing = 0;
  if (d->running) {
    return;
  }
  if (++r->probe_tries < DRV_MD_PROBE_TRIES) {
    drv_probe_send(d, i, now);
    return;
  }
  r->probe_tries = 0;
  switch ((drv_probe_stage)r->probe_stage) {
  case DRV_PROBE_CEILING:
    r->probe_stage = DRV_PROBE_FLOOR;
    r->probe_size = TUN_DRV_MTU_FLOOR;
    break;
  case DRV_PROBE_FLOOR:
    /* Dead, or not even the floor gets through. */
    r->mtu = 0;
    drv_mtu_check(d, now);
    return;
  case DRV_PROBE_DESCEND:
    r->probe_size =
        (uint16_t)(r->probe_size * DRV_MTU_STEP_NUM / DRV_MTU_STEP_DEN);
    if (r->probe_size <= TUN_DRV_MTU_FLOOR) {
      /* The floor passed before. */
      r->mtu = TUN_DRV_MTU_FLOOR;
      drv_mtu_check(d, now);
      return;
    }
    break;
  }
  drv_probe_send(d, i, now);
}
