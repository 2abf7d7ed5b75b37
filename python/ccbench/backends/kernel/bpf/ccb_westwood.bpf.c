// SPDX-License-Identifier: GPL-2.0
/* TCP Westwood+ (Mascolo et al., MobiCom 2001; Grieco and Mascolo, CCR 2004) as a BPF
 * congestion control, for kernels built without CONFIG_TCP_CONG_WESTWOOD. Follows Linux 6.18
 * net/ipv4/tcp_westwood.c: Reno's growth and loss response, plus an end-to-end bandwidth
 * estimate: the bytes acknowledged in each window of one RTT (at least 50 ms), in bytes per
 * jiffy, smoothed twice by 7/8 filters, with duplicate and delayed ACKs accounted as the module
 * does (an ACK on the slow path counts one MSS per duplicate and takes it back from the next
 * cumulative ACK). When a window reduction ends (CA_EVENT_COMPLETE_CWR) ssthresh and cwnd
 * become bw_est * rtt_min / mss; a retransmission timeout (CA_EVENT_LOSS) sets ssthresh the
 * same way and restarts rtt_min from the next sample. RTTs are kept in jiffies, as the module
 * keeps them (ccb_jiffies.h).
 *
 * Left out: the module's get_info, which reports rtt and rtt_min through INET_DIAG_VEGASINFO;
 * BPF congestion controls cannot supply get_info. Registered as ccb_westwood. */
#include "ccb_jiffies.h"

struct ccb_westwood {
	__u32 bw_ns_est; /* bandwidth, once filtered */
	__u32 bw_est; /* bandwidth, twice filtered: bytes per jiffy */
	__u32 rtt_win_sx; /* jiffies at the start of the current sample window */
	__u32 bk; /* bytes acknowledged in the current window */
	__u32 snd_una; /* snd_una at the last ACK */
	__u32 cumul_ack; /* bytes this ACK accounts for */
	__u32 accounted; /* bytes counted for duplicate ACKs, not yet cumulatively acked */
	__u32 rtt; /* last RTT sample, jiffies */
	__u32 rtt_min; /* smallest RTT sample, jiffies */
	__u8 first_ack; /* no ACK seen yet */
	__u8 reset_rtt_min; /* restart rtt_min from the next sample */
};

#define WESTWOOD_RTT_MIN (CONFIG_HZ / 20) /* shortest sample window, 50 ms */
#define WESTWOOD_INIT_RTT (20 * CONFIG_HZ) /* rtt before the first sample */

SEC("struct_ops")
void BPF_PROG(ccb_westwood_init, struct sock *sk)
{
	struct ccb_westwood *w = ccb_ca(sk);

	w->bk = 0;
	w->bw_ns_est = 0;
	w->bw_est = 0;
	w->accounted = 0;
	w->cumul_ack = 0;
	w->reset_rtt_min = 1;
	w->rtt_min = w->rtt = WESTWOOD_INIT_RTT;
	w->rtt_win_sx = ccb_jiffies32();
	w->snd_una = ccb_tcp_sk(sk)->snd_una;
	w->first_ack = 1;
}

/* westwood_do_filter(): (7 a + b) / 8 */
static __always_inline __u32 westwood_do_filter(__u32 a, __u32 b)
{
	return ((7 * a) + b) >> 3;
}

static __always_inline void westwood_filter(struct ccb_westwood *w, __u32 delta)
{
	/* the first sample fills both filters */
	if (w->bw_ns_est == 0 && w->bw_est == 0) {
		w->bw_ns_est = w->bk / delta;
		w->bw_est = w->bw_ns_est;
	} else {
		w->bw_ns_est = westwood_do_filter(w->bw_ns_est, w->bk / delta);
		w->bw_est = westwood_do_filter(w->bw_est, w->bw_ns_est);
	}
}

SEC("struct_ops")
void BPF_PROG(ccb_westwood_pkts_acked, struct sock *sk, const struct ack_sample *sample)
{
	struct ccb_westwood *w = ccb_ca(sk);

	if (sample->rtt_us > 0)
		w->rtt = ccb_usecs_to_jiffies(sample->rtt_us);
}

/* westwood_update_window(): close the sample window once it spans max(rtt, 50 ms) */
static __always_inline void westwood_update_window(struct sock *sk)
{
	struct ccb_westwood *w = ccb_ca(sk);
	__s32 delta = ccb_jiffies32() - w->rtt_win_sx;

	/* the first ACK starts the byte count at the sequence it acknowledges */
	if (w->first_ack) {
		w->snd_una = ccb_tcp_sk(sk)->snd_una;
		w->first_ack = 0;
	}
	if (w->rtt && (__u32)delta > max(w->rtt, (__u32)WESTWOOD_RTT_MIN)) {
		westwood_filter(w, delta);
		w->bk = 0;
		w->rtt_win_sx = ccb_jiffies32();
	}
}

static __always_inline void update_rtt_min(struct ccb_westwood *w)
{
	if (w->reset_rtt_min) {
		w->rtt_min = w->rtt;
		w->reset_rtt_min = 0;
	} else {
		w->rtt_min = min(w->rtt, w->rtt_min);
	}
}

/* westwood_acked_count(): bytes an ACK on the slow path accounts for */
static __always_inline __u32 westwood_acked_count(struct sock *sk)
{
	const struct tcp_sock *tp = ccb_tcp_sk(sk);
	struct ccb_westwood *w = ccb_ca(sk);

	w->cumul_ack = tp->snd_una - w->snd_una;
	/* a duplicate ACK: one MSS has left the network */
	if (!w->cumul_ack) {
		w->accounted += tp->mss_cache;
		w->cumul_ack = tp->mss_cache;
	}
	/* a cumulative ACK after duplicates: only what they did not already count */
	if (w->cumul_ack > tp->mss_cache) {
		if (w->accounted >= w->cumul_ack) {
			w->accounted -= w->cumul_ack;
			w->cumul_ack = tp->mss_cache;
		} else {
			w->cumul_ack -= w->accounted;
			w->accounted = 0;
		}
	}
	w->snd_una = tp->snd_una;
	return w->cumul_ack;
}

/* tcp_westwood_bw_rttmin(): the window that fills bw_est over rtt_min, in packets (at least 2) */
static __always_inline __u32 westwood_bw_rttmin(const struct sock *sk)
{
	const struct ccb_westwood *w = ccb_ca(sk);

	return max((w->bw_est * w->rtt_min) / ccb_tcp_sk(sk)->mss_cache, 2U);
}

SEC("struct_ops")
void BPF_PROG(ccb_westwood_ack, struct sock *sk, __u32 ack_flags)
{
	const struct tcp_sock *tp = ccb_tcp_sk(sk);
	struct ccb_westwood *w = ccb_ca(sk);

	westwood_update_window(sk);
	if (ack_flags & CA_ACK_SLOWPATH) {
		w->bk += westwood_acked_count(sk);
	} else {
		/* westwood_fast_bw(): an in-order ACK counts what it acknowledges */
		w->bk += tp->snd_una - w->snd_una;
		w->snd_una = tp->snd_una;
	}
	update_rtt_min(w);
}

SEC("struct_ops")
void BPF_PROG(ccb_westwood_event, struct sock *sk, enum tcp_ca_event event)
{
	struct tcp_sock *tp = ccb_tcp_sk(sk);
	struct ccb_westwood *w = ccb_ca(sk);

	if (event == CA_EVENT_COMPLETE_CWR) {
		tp->snd_ssthresh = westwood_bw_rttmin(sk);
		tp->snd_cwnd = tp->snd_ssthresh;
	} else if (event == CA_EVENT_LOSS) {
		tp->snd_ssthresh = westwood_bw_rttmin(sk);
		w->reset_rtt_min = 1; /* rtt_min restarts at the next ACK */
	}
}

SEC("struct_ops")
__u32 BPF_PROG(ccb_westwood_ssthresh, struct sock *sk)
{
	return tcp_reno_ssthresh(sk);
}

SEC("struct_ops")
void BPF_PROG(ccb_westwood_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	tcp_reno_cong_avoid(sk, ack, acked);
}

SEC("struct_ops")
__u32 BPF_PROG(ccb_westwood_undo_cwnd, struct sock *sk)
{
	return tcp_reno_undo_cwnd(sk);
}

SEC(".struct_ops")
struct tcp_congestion_ops ccb_westwood = {
	.init = (void *)ccb_westwood_init,
	.ssthresh = (void *)ccb_westwood_ssthresh,
	.cong_avoid = (void *)ccb_westwood_cong_avoid,
	.undo_cwnd = (void *)ccb_westwood_undo_cwnd,
	.cwnd_event = (void *)ccb_westwood_event,
	.in_ack_event = (void *)ccb_westwood_ack,
	.pkts_acked = (void *)ccb_westwood_pkts_acked,
	.name = "ccb_westwood",
};
