/*
 * fuzz_tun_input.c: libFuzzer entry point for every input the tunnels
 * take from the network. The first byte picks the target: the DNSTT-style
 * server, the MasterDNS-style server (a session is opened first, so the
 * input also reaches a live arq), the client's answer parser, or a raw
 * arq frame. The rest of the input is the datagram.
 */
#include "tunsrv.h"
#include "tuncli.h"
#include "tunwire.h"
#include "arq.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* FUZZ_TARGETS is the number of targets the first byte chooses from. */
#define FUZZ_TARGETS 4

static int fuzz_send(const tun_peer *peer, const uint8_t *d, size_t len,
                     void *user_data) {
  (void)peer;
  (void)d;
  (void)len;
  (void)user_data;
  return 0;
}

static size_t fuzz_source(uint64_t sid, uint64_t offset, uint8_t *out,
                          size_t cap, void *user_data) {
  (void)sid;
  (void)user_data;
  memset(out, (int)(offset & 0xffu), cap);
  return offset < (1u << 20) ? cap : 0;
}

/* fuzz_server feeds |data| to a server of |mode|; |variant|'s bits turn
   on the simulator's server models: 1 out_queue (8 packets, flushed
   every 10 ms), 2 up_ack_only and the upload's NACKs, 4 resends owed, 8 ack_queued (with 1),
   16 kcp_timers on both ends' arqs, 32 write_msg of 300 bytes (with 1). */
static void fuzz_server(tun_mode mode, unsigned variant, const uint8_t *data,
                        size_t size) {
  tun_srv_settings s;
  tun_srv_callbacks cb = {.send = fuzz_send, .source = fuzz_source};
  tun_cli_settings cs;
  tun_peer peer = {.addrlen = 0};
  uint8_t q[TUN_WIRE_MAX_MSG];
  tun_srv *srv;
  tun_cli *cli;
  rp_ssize n;

  tun_srv_settings_default(&s, mode);
  rp_dns_name_from_text(&s.domain, "t.example");
  s.max_sessions = 2;
  s.max_held = 4;
  if (variant & 1u) {
    s.out_queue = 8;
    s.flush_interval = 10 * RP_MILLISECONDS;
  }
  s.up_ack_only = (variant & 2u) != 0;
  if (variant & 2u) {
    /* MasterDnsVPN's server: its NACKs of the upload, at once. */
    s.nack = (tun_nack_settings){.gap = 32, .repeat = 800 * RP_MILLISECONDS};
  }
  s.ack_queued = (variant & 8u) != 0;
  if ((variant & 33u) == 33u) {
    s.write_msg = 300;
  }
  if (variant & 16u) {
    tun_arq_settings_kcp(&s.arq);
  }
  if (tun_srv_new(&srv, &s, &cb, NULL, NULL) != 0) {
    return;
  }
  if (variant & 4u) {
    tun_srv_add_resends(srv, 3);
  }
  tun_cli_settings_default(&cs, mode);
  cs.domain = s.domain;
  cs.sid = 1;
  cs.down_limit = 500;
  if (variant & 16u) {
    tun_arq_settings_kcp(&cs.arq);
  }
  if (tun_cli_new(&cli, &cs, NULL) == 0) {
    n = tun_cli_build_query(cli, q, sizeof(q), 1, 1, 0, NULL);
    if (n > 0) {
      tun_srv_on_datagram(srv, q, (size_t)n, &peer, 0);
    }
    tun_cli_del(cli);
  }
  tun_srv_on_datagram(srv, data, size, &peer, 1);
  {
    uint32_t sn[TUN_NACK_GAP_MAX];

    tun_srv_take_nacks(srv, sn, TUN_NACK_GAP_MAX);
  }
  tun_srv_handle_expiry(srv, 2 * RP_SECONDS);
  tun_srv_del(srv);
}

static void fuzz_client(const uint8_t *data, size_t size) {
  tun_cli_settings cs;
  tun_cli *cli;

  tun_cli_settings_default(&cs, TUN_MODE_DNSTT);
  rp_dns_name_from_text(&cs.domain, "t.example");
  if (tun_cli_new(&cli, &cs, NULL) != 0) {
    return;
  }
  tun_cli_on_answer(cli, data, size, 0);
  tun_cli_del(cli);
}

/* fuzz_arq feeds |data| to an arq as a frame; |variant| 1 runs it in
   kcp_timers mode, its writes made as kcp-go's (tun_arq_write_msg); 2
   as the simulator's MasterDnsVPN server (its windows, the peer's
   window ignored, the oldest due resends first at random, timeouts
   noticed every 167 ms). */
static void fuzz_arq(unsigned variant, const uint8_t *data, size_t size) {
  tun_arq_settings s;
  tun_arq *arq;
  uint8_t out[TUN_WIRE_MAX_MSG];

  tun_arq_settings_default(&s);
  if (variant & 2u) {
    tun_arq_settings_md(&s);
    s.snd_wnd = TUN_ARQ_MAX_WND;
    s.ignore_peer_wnd = 1;
    s.resend_front = 64;
    s.resend_seed = 1;
    s.timeout_tick = RP_SECONDS / 6;
  }
  if (variant & 1u) {
    tun_arq_settings_kcp(&s);
  }
  if (tun_arq_new(&arq, &s, NULL) != 0) {
    return;
  }
  memset(out, 1, sizeof(out));
  if (variant & 1u) {
    tun_arq_write_msg(arq, out, 2);
    tun_arq_write_msg(arq, out, 600);
  } else {
    tun_arq_write(arq, out, sizeof(out));
  }
  tun_arq_output(arq, out, sizeof(out), 0, NULL);
  tun_arq_input(arq, data, size, 1);
  tun_arq_send_flush(arq);
  (void)tun_arq_kcp_writable(arq);
  (void)tun_arq_ack_header(arq, out, sizeof(out));
  tun_arq_output(arq, out, sizeof(out), 2, NULL);
  tun_arq_output_seg(arq, out, sizeof(out), 3 * RP_SECONDS);
  tun_arq_output_repeat(arq, out, sizeof(out));
  while (tun_arq_read(arq, out, sizeof(out)) > 0) {
  }
  tun_arq_del(arq);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 1) {
    return 0;
  }
  switch (data[0] % FUZZ_TARGETS) {
  case 0:
    fuzz_server(TUN_MODE_DNSTT, data[0] / FUZZ_TARGETS, data + 1, size - 1);
    break;
  case 1:
    fuzz_server(TUN_MODE_MD, data[0] / FUZZ_TARGETS, data + 1, size - 1);
    break;
  case 2:
    fuzz_client(data + 1, size - 1);
    break;
  default:
    fuzz_arq(data[0] / FUZZ_TARGETS, data + 1, size - 1);
    break;
  }
  return 0;
}
