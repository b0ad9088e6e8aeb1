/*
 * arq.h: a sans-I/O reliable byte stream in the manner of KCP (prefix
 * tun_arq_).
 *
 * One tun_arq is one direction pair of a tunnel session: the caller writes
 * stream bytes in, asks for frames to put into DNS messages, feeds the
 * frames that came from the peer, and reads the peer's bytes out in order.
 * Every call that depends on time takes |now| (rp_tstamp, monotonic ns);
 * nothing here reads a clock, opens a socket or draws random numbers.
 *
 * Frame (every DNS message of a session carries exactly one):
 *
 *   u32 una       first sequence number the sender has not received
 *   u16 wnd       free receive slots counted from una
 *   u8  sack_len  bytes of selective-ack bitmap that follow (<= 32)
 *   u8  sack[]    bit i (LSB first) = segment una + 1 + i received
 *   then zero or more segments until the end of the frame:
 *   u32 sn | u16 len | len bytes
 *
 * All integers are big-endian. The memory of an arq is fixed at creation:
 * snd_wnd * mss + rcv_wnd * peer_mss + snd_buf bytes.
 */
#ifndef TUN_ARQ_H
#define TUN_ARQ_H

#include "respool.h"

#include <stddef.h>
#include <stdint.h>

/* TUN_ARQ_HDR_FIXED is the frame header without the sack bitmap. */
#define TUN_ARQ_HDR_FIXED 7
/* TUN_ARQ_SEG_HDR is the header of one segment (sn and len). */
#define TUN_ARQ_SEG_HDR 6
/* TUN_ARQ_KCP_OVERHEAD is what kcp_timers takes from the mss, bytes: a
   send time after each segment's header and its echo in each frame's
   header (4 each), so that frames keep the size the mss gave them. */
#define TUN_ARQ_KCP_OVERHEAD 8
/* TUN_ARQ_MAX_SACK is the largest sack bitmap, bytes (256 segments). */
#define TUN_ARQ_MAX_SACK 32
/* TUN_ARQ_MAX_WND is the largest send or receive window, segments. */
#define TUN_ARQ_MAX_WND 4096
/* TUN_ARQ_MAX_FRONT is the largest resend_front, segments. */
#define TUN_ARQ_MAX_FRONT 256
/* TUN_ARQ_MD_WND and TUN_ARQ_MD_UNACKED are MasterDnsVPN's windows
   (tun_arq_settings_md), segments. */
#define TUN_ARQ_MD_WND 2000
#define TUN_ARQ_MD_UNACKED 800

typedef struct tun_arq tun_arq;

/* tun_arq_settings tunes one arq. tun_arq_settings_default fills it. */
typedef struct tun_arq_settings {
  /* mss is the largest payload of a segment this side sends, bytes. */
  size_t mss;
  /* peer_mss is the largest payload of a segment the peer may send,
     bytes; longer segments are refused as malformed. */
  size_t peer_mss;
  /* snd_wnd is the most segments in flight (sent, not acked). */
  uint32_t snd_wnd;
  /* rcv_wnd is the most segments buffered on receive, in order or not. */
  uint32_t rcv_wnd;
  /* snd_buf is the most stream bytes queued by tun_arq_write and not yet
     cut into segments. */
  size_t snd_buf;
  /* rto_initial is the retransmission timeout before any sample, ns. */
  rp_duration rto_initial;
  /* rto_min and rto_max clamp srtt + 4 rttvar, ns. */
  rp_duration rto_min;
  rp_duration rto_max;
  /* backoff_num / backoff_den multiplies a segment's timeout each time it
     is sent again (3/2: KCP's "nodelay" growth, gentler than doubling
     because DNS loses single messages rather than signalling congestion). */
  uint32_t backoff_num;
  uint32_t backoff_den;
  /* fast_resend is how many frames acking later segments (sent after
     this one) resend a segment at once; 0 turns fast retransmit off. */
  uint32_t fast_resend;
  /* max_segs is the most segments in one frame; 0 = as many as fit. */
  uint32_t max_segs;
  /* ack_held: 1 makes every frame carry the ack state (una, wnd, sack)
     of the last tun_arq_ack_flush, as KCP sends its acks only when it
     flushes (every interval); 0 (default): each frame acks all received
     so far. */
  int ack_held;
  /* send_held: 1 puts new segments in flight only up to the window as it
     was at the last tun_arq_send_flush, as KCP moves queued data into
     flight when it flushes (every interval); 0 (default): whenever the
     window has room. */
  int send_held;
  /* kcp_timers: 1 times segments as kcp-go does with nodelay off (dnstt's
     SetNoDelay(0, 0, 0, 1)). Each segment carries its send time and
     each frame echoes the send time of the last segment received (any
     short of the window's end, duplicates too); a frame with a new echo
     is a round-trip sample to it (no Karn rule; KCP samples every packet
     of acks, the arq each echo once, as its frames repeat their ack
     state). A sample under srtt - rttvar moves rttvar by 1/32 instead of
     1/4; a timed-out segment's timeout grows by the base rto at each
     resend (backoff_* and the rto_max ceiling unused for it); a segment
     sent before one an ack newly covered goes again at the next
     tun_arq_send_flush that puts no new segment in flight (KCP's early
     retransmit; with fast_resend 0 as dnstt sets it, the only early
     resend). The send time and the echo take TUN_ARQ_KCP_OVERHEAD from
     the mss. 0 (default): the RFC 6298 timers above. */
  int kcp_timers;
  /* unacked_max bounds the segments sent and not yet acked (by the
     cumulative ack or the sack) when a new one opens, whatever their
     span (still at most snd_wnd); 0 (default): no bound but the window.
     MasterDnsVPN's ARQ bounds its unacked packets so (at 0.8 of its
     ARQ_WINDOW_SIZE): one late packet does not stop its sender. */
  uint32_t unacked_max;
  /* resend_seed: nonzero walks each frame's due resends from a random
     place among the segments in flight (drawn from the splitmix64
     stream it seeds) instead of oldest first. MasterDnsVPN's ARQ finds
     its timed-out packets by walking a Go map, in an order of its own
     each time: of a burst of resends the ones a rate-limited resolver
     answers are any, not the oldest. 0 (default): oldest first. */
  uint64_t resend_seed;
  /* resend_front: nonzero (at most TUN_ARQ_MAX_FRONT) makes
     tun_arq_output send first one due resend drawn at random
     (resend_seed's stream) from the resend_front oldest due, and walk
     on from there (tun_arq_output_seg takes the oldest due still).
     MasterDnsVPN's ARQ queues its timed-out packets in its map's order,
     the oldest min(64, ARQ_WINDOW_SIZE / 10) of them ahead of the rest
     (retransmitPriorityKinds), and its server sends one queued packet
     an answer: the oldest hole waits behind up to 63 others. 0
     (default): resend_seed's walk alone. */
  uint32_t resend_front;
  /* ignore_peer_wnd: 1 opens new segments whatever window the peer's
     frames advertise (snd_wnd and unacked_max still bound them), as
     MasterDnsVPN's sender knows no receive window: its receiver drops a
     packet past its own unacked (tun_arq_rcv_beyond). 0 (default): at
     most the peer's window. */
  int ignore_peer_wnd;
  /* timeout_tick: nonzero notices a segment's timeout only at the next
     multiple of it, ns (a NACK's resend goes at once still).
     MasterDnsVPN's retransmit loop looks for timed-out packets every
     max(ARQ_INITIAL_RTO / 3, 50 ms). 0 (default): at its time. */
  rp_duration timeout_tick;
} tun_arq_settings;

/* tun_arq_stats are counters since creation. */
typedef struct tun_arq_stats {
  /* segs_sent counts segment sends, copies included. */
  uint64_t segs_sent;
  /* retransmissions counts sends of a segment after its first. */
  uint64_t retransmissions;
  /* fast_retransmits counts segments resent by the sack rule. */
  uint64_t fast_retransmits;
  /* timeouts counts segments whose timer expired. */
  uint64_t timeouts;
  /* segs_received counts data segments received, duplicates included. */
  uint64_t segs_received;
  /* dup_received counts segments already held or delivered, or past the
     receive window (those also in beyond). */
  uint64_t dup_received;
  /* beyond counts data segments dropped past the receive window. */
  uint64_t beyond;
  /* malformed counts frames refused by tun_arq_input. */
  uint64_t malformed;
  /* window_full counts the frames tun_arq_output and _output_seg built
     with room for a new segment and stream bytes queued that opened
     none: the window (or unacked_max, or send_held's flush) full of
     segments the peer has not acked. */
  uint64_t window_full;
  /* bytes_acked counts stream bytes the peer acknowledged. */
  uint64_t bytes_acked;
  /* srtt and rttvar are the smoothed round trip and its variation, ns
     (RP_TSTAMP_UNSET before the first sample). */
  rp_duration srtt;
  rp_duration rttvar;
  /* rto is the current base retransmission timeout, ns. */
  rp_duration rto;
} tun_arq_stats;

/* Bits returned by tun_arq_want_output. */
/* TUN_ARQ_WANT_DATA: a segment is due (new data within the windows, a
   timed-out or fast-resent segment). */
#define TUN_ARQ_WANT_DATA 0x1u
/* TUN_ARQ_WANT_ACK: data arrived since the last frame went out. */
#define TUN_ARQ_WANT_ACK 0x2u

/* TUN_ARQ_SENT_MAX is how many sequence numbers tun_arq_sent keeps. */
#define TUN_ARQ_SENT_MAX 8

/* tun_arq_sent lists the segments one frame carried. */
typedef struct tun_arq_sent {
  /* n is the number of segments in the frame (may exceed
     TUN_ARQ_SENT_MAX; only the first are listed). */
  size_t n;
  uint32_t sn[TUN_ARQ_SENT_MAX];
} tun_arq_sent;

/* tun_arq_settings_default fills |s| with mss and peer_mss 512,
   windows 128, snd_buf 256 KiB, rto 1 s initial, 100 ms .. 8 s, backoff
   3/2, fast_resend 2, max_segs 0. */
void tun_arq_settings_default(tun_arq_settings *s);

/* tun_arq_settings_kcp sets |s|'s timers to kcp-go's with nodelay off,
   as dnstt (SetNoDelay(0, 0, 0, 1)) runs them: kcp_timers, rto 200 ms
   initial, 100 ms .. 60 s, fast_resend 0. */
void tun_arq_settings_kcp(tun_arq_settings *s);

/* tun_arq_settings_md sets |s| to MasterDnsVPN's ARQ as its sample
   configs run it (ARQ_WINDOW_SIZE 1000): a receive window of twice that
   (TUN_ARQ_MD_WND, also the span a sender may have out), at most
   TUN_ARQ_MD_UNACKED unacked segments (unacked_max, its 0.8 of the
   window), rto 500 ms initial and floor (ARQ_INITIAL_RTO_SECONDS), 3 s
   ceiling (ARQ_MAX_RTO_SECONDS), x1.35 a resend, and no fast resend: a
   loss is resent on its timeout, or at once when its receiver NACKs it
   (tun_arq_nack). */
void tun_arq_settings_md(tun_arq_settings *s);

/* tun_arq_new creates an arq in |*parq| with a copy of |settings| and
   |mem| (NULL for rp_mem_default()). Returns 0, RP_ERR_INVALID_ARGUMENT
   when mss or peer_mss is 0 or over 65535, a window is 0 or over
   TUN_ARQ_MAX_WND, snd_buf is 0 or backoff is below 1, or
   RP_ERR_NOMEM. */
int tun_arq_new(tun_arq **parq, const tun_arq_settings *settings,
                const rp_mem *mem);

/* tun_arq_del frees |arq|. NULL is a no-op. */
void tun_arq_del(tun_arq *arq);

/* tun_arq_write queues up to |len| bytes of |data| (copied) and returns
   how many were taken (less when the send buffer is full). */
size_t tun_arq_write(tun_arq *arq, const uint8_t *data, size_t len);

/* tun_arq_write_msg queues |len| bytes of |data| (copied) as one write
   of kcp-go with write delay off, which flushes at once: when the bytes
   queued before them all fit the window, these start a new segment
   (else they fill the last queued one first, as KCP's stream mode
   does). Returns |len|, or 0 (nothing taken) when it is 0 or more than
   tun_arq_send_space. */
size_t tun_arq_write_msg(tun_arq *arq, const uint8_t *data, size_t len);

/* tun_arq_send_space returns how many bytes tun_arq_write would take. */
size_t tun_arq_send_space(const tun_arq *arq);

/* tun_arq_send_idle returns 1 when every byte written has been
   acknowledged by the peer. */
int tun_arq_send_idle(const tun_arq *arq);

/* tun_arq_kcp_writable returns 1 when kcp-go's Write would take data now:
   the segments in flight (acked or not, up to the cumulative ack) and
   those the queued bytes make (at mss each) are fewer than both the send
   window and the peer's. A KCP writer blocks otherwise. */
int tun_arq_kcp_writable(const tun_arq *arq);

/* tun_arq_read copies up to |cap| in-order bytes from the peer into
   |out| and returns how many (0 when none are ready). Reading frees
   receive window. */
size_t tun_arq_read(tun_arq *arq, uint8_t *out, size_t cap);

/* tun_arq_input takes one frame of |len| bytes from the peer at |now|:
   acks (cumulative and selective, with RTT samples by Karn's rule and
   fast retransmit marks) and data segments. Segments outside the receive
   window are dropped but still acked. Returns the number of data
   segments in the frame, or RP_ERR_MALFORMED (nothing after the first
   bad field is applied; the arq stays consistent). */
int tun_arq_input(tun_arq *arq, const uint8_t *data, size_t len, rp_tstamp now);

/* tun_arq_want_output returns a mask of TUN_ARQ_WANT_* at |now|. */
uint32_t tun_arq_want_output(const tun_arq *arq, rp_tstamp now);

/* tun_arq_output writes one frame of at most |cap| bytes into |out| at
   |now|: the ack header (the sack bitmap shortened if |cap| is tight),
   then due resends in sequence order, then new segments cut from the
   send buffer to fit, up to settings.max_segs. Lists the segments in
   |*psent| when not NULL. Returns the frame length, or RP_ERR_NOBUF if
   |cap| < TUN_ARQ_HDR_FIXED. */
rp_ssize tun_arq_output(tun_arq *arq, uint8_t *out, size_t cap, rp_tstamp now,
                        tun_arq_sent *psent);

/* tun_arq_output_seg writes the next segment due into |out|, its header
   and payload without the frame's ack header: the oldest resend due, else
   a new segment cut from the send buffer (up to mss and |cap|), marked
   sent as tun_arq_output marks it. For a sender that queues its
   segments as packets and frames them later (tun_srv's out_queue).
   Returns its length, 0 when none is due, or RP_ERR_NOBUF if |cap| has
   no room for a segment of one byte. */
rp_ssize tun_arq_output_seg(tun_arq *arq, uint8_t *out, size_t cap,
                            rp_tstamp now);

/* tun_arq_output_repeat writes a frame of at most |cap| bytes into |out|:
   the ack header without sack, then a segment the peer already acked
   (the one before snd_una) once more, as long as the mss allows, its
   bytes zero: a model of a peer resending a packet whose per-packet ack
   was lost, which the receiver counts as a duplicate. Returns the frame
   length, 0 when nothing was acked yet or no segment fits (nothing
   written), or RP_ERR_NOBUF if |cap| < TUN_ARQ_HDR_FIXED. */
rp_ssize tun_arq_output_repeat(tun_arq *arq, uint8_t *out, size_t cap);

/* tun_arq_nack marks the segments of |sent| still unacked for resend at
   once, without the timeout's backoff: the caller knows the frame was
   lost (its query was answered with an error rcode). */
void tun_arq_nack(tun_arq *arq, const tun_arq_sent *sent);

/* tun_arq_nack_list does so for the |n| segments |sn| (a receiver's
   NACKs, any number). */
void tun_arq_nack_list(tun_arq *arq, const uint32_t *sn, size_t n);

/* tun_arq_ack_list acks the segments of |sent| still in flight one by
   one, as the sack does: a peer that names each segment it acks
   (MasterDnsVPN's per-packet acks) reaches past the 256 segments a
   frame's sack covers. */
void tun_arq_ack_list(tun_arq *arq, const tun_arq_sent *sent, rp_tstamp now);

/* tun_arq_ack_header writes the ack header a frame would carry now (the
   cumulative ack, the free receive slots and the sack bitmap, at most
   |cap| bytes) into |out| and returns its length, or RP_ERR_NOBUF if
   |cap| < TUN_ARQ_HDR_FIXED. Nothing is marked sent: for a sender that
   queues its acks with its packets (tun_srv's ack_queued). */
rp_ssize tun_arq_ack_header(tun_arq *arq, uint8_t *out, size_t cap);

/* tun_arq_ack_flush takes the ack state that frames carry from now on
   when ack_held is set (a no-op otherwise). */
void tun_arq_ack_flush(tun_arq *arq);

/* tun_arq_send_flush is the sender's flush: with send_held it lets new
   segments fill the window as it is now; with kcp_timers, when no new
   segment may go in flight, it marks for resend every segment an ack of
   a later one passed over. A no-op without either. */
void tun_arq_send_flush(tun_arq *arq);

/* tun_arq_get_expiry returns when the next unmarked segment times out,
   or RP_TSTAMP_UNSET. */
rp_tstamp tun_arq_get_expiry(const tun_arq *arq);

/* tun_arq_handle_expiry marks every segment whose timer expired by |now|
   for resend (the next tun_arq_output sends it). */
void tun_arq_handle_expiry(tun_arq *arq, rp_tstamp now);

/* tun_arq_rcv_next returns the first segment not received;
   tun_arq_rcv_last the last data segment tun_arq_input took (duplicates
   too; 0 before any); tun_arq_rcv_present 1 if segment |sn| is held,
   received beyond tun_arq_rcv_next and not yet delivered. For a
   receiver that NACKs its gaps (tun_drv's nack). */
uint32_t tun_arq_rcv_next(const tun_arq *arq);
uint32_t tun_arq_rcv_last(const tun_arq *arq);
/* tun_arq_rcv_beyond returns 1 if that last data segment lay past the
   receive window (dropped), else 0. MasterDnsVPN's receiver drops such a
   packet and acks nothing (tun_drv's acks_named). */
int tun_arq_rcv_beyond(const tun_arq *arq);
int tun_arq_rcv_present(const tun_arq *arq, uint32_t sn);
/* tun_arq_get_stats fills |stats|. */
void tun_arq_get_stats(const tun_arq *arq, tun_arq_stats *stats);

/* tun_arq_memory returns the bytes the arq allocated. */
size_t tun_arq_memory(const tun_arq *arq);

/* tun_arq_rtt_update folds the round trip |rtt| into the RFC 6298
   estimator |*psrtt|, |*prttvar| (ns; *psrtt RP_TSTAMP_UNSET: no sample
   yet, then the first one sets srtt = rtt, rttvar = rtt / 2). The arq
   times its segments with it; the MasterDNS client its resolvers. */
void tun_arq_rtt_update(rp_duration *psrtt, rp_duration *prttvar,
                        rp_duration rtt);

#endif /* TUN_ARQ_H */
