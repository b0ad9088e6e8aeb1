/*
 * tuncli.c: the client side of a tunnel session.
 */
#include "tuncli.h"
#include "tunwire.h"

#include <string.h>

/* CLI_DNSTT_WND and CLI_MD_WND match the server's windows. */
#define CLI_DNSTT_WND 128
#define CLI_MD_WND 32
/* CLI_SNDBUF is the upload bytes queued and not yet in segments. */
#define CLI_SNDBUF (64 * 1024)

struct tun_cli {
  tun_cli_settings s;
  const rp_mem *mem;
  tun_arq *arq;
  tun_cli_stats st;
  uint8_t msg[TUN_WIRE_MAX_UP];
  uint8_t frame[TUN_WIRE_MAX_MSG];
};

void tun_cli_settings_default(tun_cli_settings *s, tun_mode mode) {
  *s = (tun_cli_settings){
      .mode = mode,
      .domain = {.wire = {0}, .len = 1},
      .edns_size = RP_DNS_EDNS_UDP_SIZE,
  };
  tun_arq_settings_default(&s->arq);
  s->arq.snd_wnd = s->arq.rcv_wnd =
      mode == TUN_MODE_DNSTT ? CLI_DNSTT_WND : CLI_MD_WND;
  s->arq.snd_buf = CLI_SNDBUF;
  if (mode == TUN_MODE_MD) {
    s->arq.max_segs = 1;
  }
}

int tun_cli_new(tun_cli **pcli, const tun_cli_settings *settings,
                const rp_mem *mem) {
  tun_arq_settings as = settings->arq;
  tun_cli *cli;
  int rv;

  if (mem == NULL) {
    mem = rp_mem_default();
  }
  as.mss = tun_srv_up_mss(&settings->domain);
  if (settings->arq.mss < as.mss) {
    /* A client whose segments are smaller than a query could carry. */
    as.mss = settings->arq.mss;
  }
  /* Downstream segments are never longer than an answer. */
  as.peer_mss = settings->edns_size;
  if (as.mss == 0 || settings->edns_size < RP_DNS_MAX_UDP_DEFAULT ||
      (settings->mode == TUN_MODE_MD &&
       tun_srv_md_mss(settings->down_limit) == 0)) {
    return RP_ERR_INVALID_ARGUMENT;
  }
  cli = mem->calloc(1, sizeof(*cli), mem->user_data);
  if (cli == NULL) {
    return RP_ERR_NOMEM;
  }
  rv = tun_arq_new(&cli->arq, &as, mem);
  if (rv != 0) {
    mem->free(cli, mem->user_data);
    return rv;
  }
  cli->s = *settings;
  cli->mem = mem;
  *pcli = cli;
  return 0;
}

void tun_cli_del(tun_cli *cli) {
  if (cli == NULL) {
    return;
  }
  tun_arq_del(cli->arq);
  cli->mem->free(cli, cli->mem->user_data);
}

tun_arq *tun_cli_arq(tun_cli *cli) { return cli->arq; }

rp_ssize tun_cli_build_query(tun_cli *cli, uint8_t *out, size_t cap,
                             uint16_t id, uint16_t nonce, rp_tstamp now,
                             tun_arq_sent *psent) {
  size_t room = tun_wire_up_capacity(&cli->s.domain);
  tun_wire_hdr hdr = {
      .sid = cli->s.sid,
      .kind = TUN_WIRE_DATA,
      .nonce = nonce,
      .down_limit = cli->s.mode == TUN_MODE_MD ? cli->s.down_limit : 0,
  };
  rp_ssize flen;

  if (room > sizeof(cli->msg)) {
    room = sizeof(cli->msg);
  }
  tun_wire_hdr_write(cli->msg, &hdr);
  flen = tun_arq_output(cli->arq, cli->msg + TUN_WIRE_HDR_LEN,
                        room - TUN_WIRE_HDR_LEN, now, psent);
  if (flen < 0) {
    return flen;
  }
  ++cli->st.queries;
  return tun_wire_build_query(out, cap, id, &cli->s.domain, cli->msg,
                              TUN_WIRE_HDR_LEN + (size_t)flen,
                              cli->s.edns_size);
}

int tun_cli_on_answer(tun_cli *cli, const uint8_t *data, size_t len,
                      rp_tstamp now) {
  rp_dns_msg a;
  rp_ssize n;
  int rv;

  if (rp_dns_parse(&a, data, len) != 0 || !(a.hdr.flags & RP_DNS_FLAG_QR)) {
    ++cli->st.rejected;
    return RP_ERR_MALFORMED;
  }
  n = tun_wire_answer_payload(&a, cli->frame, sizeof(cli->frame));
  if (n < 0) {
    ++cli->st.rejected;
    return (int)n;
  }
  rv = tun_arq_input(cli->arq, cli->frame, (size_t)n, now);
  if (rv < 0) {
    ++cli->st.rejected;
    return rv;
  }
  ++cli->st.answers;
  if (rv == 0) {
    ++cli->st.empty_answers;
  }
  return rv;
}

void tun_cli_nack(tun_cli *cli, const tun_arq_sent *sent) {
  tun_arq_nack(cli->arq, sent);
}

void tun_cli_get_stats(const tun_cli *cli, tun_cli_stats *stats) {
  *stats = cli->st;
}

rp_ssize tun_cli_build_probe(uint8_t *out, size_t cap, uint16_t id,
                             const rp_dns_name *domain, uint16_t nonce,
                             uint16_t size, uint16_t edns) {
  uint8_t msg[TUN_WIRE_HDR_LEN];
  tun_wire_hdr hdr = {
      .sid = 0, .kind = TUN_WIRE_PROBE, .nonce = nonce, .down_limit = size};

  tun_wire_hdr_write(msg, &hdr);
  return tun_wire_build_query(out, cap, id, domain, msg, sizeof(msg), edns);
}

int tun_cli_check_probe(const uint8_t *data, size_t len, uint16_t nonce,
                        uint16_t size) {
  uint8_t buf[TUN_WIRE_MAX_MSG];
  rp_dns_msg a;
  rp_ssize n;
  size_t i;

  if (rp_dns_parse(&a, data, len) != 0) {
    return 0;
  }
  n = tun_wire_answer_payload(&a, buf, sizeof(buf));
  if (n != (rp_ssize)size) {
    return 0;
  }
  for (i = 0; i < size; ++i) {
    if (buf[i] != tun_wire_probe_byte(nonce, i)) {
      return 0;
    }
  }
  return 1;
}
