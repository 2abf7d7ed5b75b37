// SPDX-License-Identifier: GPL-2.0
/* TCP-LP (Kuzmanovic and Knightly, low-priority TCP) as a BPF congestion control, for kernels
 * built without CONFIG_TCP_CONG_LP. Follows Linux 6.18 net/ipv4/tcp_lp.c function by function:
 * on every ACK with an RTT sample, the one-way delay is read from the TCP timestamps (the
 * peer's TSval against the echoed TSecr, after estimating the peer's timestamp clock rate as
 * an EWMA with gain 1/64), smoothed with gain 1/8, and its minimum and maximum tracked. When
 * the smoothed delay is at or above min + 15 % of (max - min), an early congestion indication,
 * cwnd is halved, or set to 1 if the previous indication is younger than the inference time
 * (3 x the delay since the echoed TSval was sent); growth is Reno's, and none while within the
 * inference time. Loss handling is Reno's (tcp_reno_ssthresh, tcp_reno_undo_cwnd). The
 * arithmetic keeps the module's integer widths (32-bit products and differences) exactly.
 *
 * Timestamps: the module's clock is tcp_time_stamp_ts() (ms, or µs on a route with usec
 * timestamps), restated from tp->tcp_mstamp. The delay it takes is TSval - TSecr, in which the
 * peer's per-connection random timestamp offset (net.ipv4.tcp_timestamps = 1) stays; both are
 * as in the module. Registered as ccb_lp. */
#include "ccb_tcp.h"

#define LP_TS_HZ 1000 /* TCP_TS_HZ */
#define LP_RESOL LP_TS_HZ

/* enum tcp_lp_state */
#define LP_VALID_RHZ (1 << 0)
#define LP_VALID_OWD (1 << 1)
#define LP_WITHIN_THR (1 << 3)
#define LP_WITHIN_INF (1 << 4)

struct ccb_lp {
	__u32 flag; /* LP_* */
	__u32 sowd; /* smoothed one-way delay << 3 */
	__u32 owd_min;
	__u32 owd_max;
	__u32 owd_max_rsv; /* the largest delay, owd_max trailing one step behind it */
	__u32 remote_hz; /* estimated rate of the peer's timestamp clock */
	__u32 remote_ref_time; /* TSval and TSecr of the previous estimate */
	__u32 local_ref_time;
	__u32 last_drop; /* time of the last early-congestion cut */
	__u32 inference; /* how long after a cut another one sets cwnd to 1 */
};

/* tcp_time_stamp_ts() (include/net/tcp.h) */
static __always_inline __u32 lp_time_stamp_ts(const struct tcp_sock *tp)
{
	if (tp->tcp_usec_ts)
		return (__u32)tp->tcp_mstamp;
	return (__u32)(tp->tcp_mstamp / 1000);
}

/* tcp_lp_init() */
SEC("struct_ops")
void BPF_PROG(ccb_lp_init, struct sock *sk)
{
	struct ccb_lp *lp = ccb_ca(sk);

	lp->flag = 0;
	lp->sowd = 0;
	lp->owd_min = 0xffffffff;
	lp->owd_max = 0;
	lp->owd_max_rsv = 0;
	lp->remote_hz = 0;
	lp->remote_ref_time = 0;
	lp->local_ref_time = 0;
	lp->last_drop = 0;
	lp->inference = 0;
}

/* tcp_lp_cong_avoid(): Reno, except within the inference time */
SEC("struct_ops")
void BPF_PROG(ccb_lp_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	const struct ccb_lp *lp = ccb_ca(sk);

	if (!(lp->flag & LP_WITHIN_INF))
		tcp_reno_cong_avoid(sk, ack, acked);
}

/* tcp_lp_remote_hz_estimator(): the peer's timestamp ticks per second, EWMA 63/64 old */
static __always_inline __u32 lp_remote_hz_estimator(struct sock *sk)
{
	const struct tcp_sock *tp = ccb_tcp_sk(sk);
	struct ccb_lp *lp = ccb_ca(sk);
	__s64 rhz = (__u32)(lp->remote_hz << 6);
	__s64 m = 0;
	__u32 tsval = tp->rx_opt.rcv_tsval, tsecr = tp->rx_opt.rcv_tsecr;

	if (lp->remote_ref_time == 0 || lp->local_ref_time == 0)
		goto out;
	if (tsval == lp->remote_ref_time || tsecr == lp->local_ref_time)
		goto out;
	m = (__u32)(LP_TS_HZ * (tsval - lp->remote_ref_time)) / (tsecr - lp->local_ref_time);
	if (m < 0)
		m = -m;
	if (rhz > 0) {
		m -= rhz >> 6; /* the error of the estimate */
		rhz += m;
	} else {
		rhz = m << 6;
	}
out:
	if ((rhz >> 6) > 0)
		lp->flag |= LP_VALID_RHZ;
	else
		lp->flag &= ~LP_VALID_RHZ;
	lp->remote_ref_time = tsval;
	lp->local_ref_time = tsecr;
	return rhz >> 6;
}

/* tcp_lp_owd_calculator(): one-way delay in LP_RESOL units, relative */
static __always_inline __u32 lp_owd_calculator(struct sock *sk)
{
	const struct tcp_sock *tp = ccb_tcp_sk(sk);
	struct ccb_lp *lp = ccb_ca(sk);
	__s64 owd = 0;

	lp->remote_hz = lp_remote_hz_estimator(sk);
	if (lp->flag & LP_VALID_RHZ) {
		/* 32-bit products and difference, as the module's u32 operands give */
		owd = (__u32)(tp->rx_opt.rcv_tsval * (LP_RESOL / lp->remote_hz) -
			      tp->rx_opt.rcv_tsecr * (LP_RESOL / LP_TS_HZ));
		if (owd < 0)
			owd = -owd;
	}
	if (owd > 0)
		lp->flag |= LP_VALID_OWD;
	else
		lp->flag &= ~LP_VALID_OWD;
	return owd;
}

/* tcp_lp_rtt_sample(): min, max (forgetting the very largest) and smoothed delay */
static __always_inline void lp_rtt_sample(struct sock *sk)
{
	struct ccb_lp *lp = ccb_ca(sk);
	__s64 mowd = lp_owd_calculator(sk);

	if (!(lp->flag & LP_VALID_RHZ) || !(lp->flag & LP_VALID_OWD))
		return;
	if (mowd < lp->owd_min)
		lp->owd_min = mowd;
	if (mowd > lp->owd_max) {
		if (mowd > lp->owd_max_rsv) {
			if (lp->owd_max_rsv == 0)
				lp->owd_max = mowd;
			else
				lp->owd_max = lp->owd_max_rsv;
			lp->owd_max_rsv = mowd;
		} else {
			lp->owd_max = mowd;
		}
	}
	if (lp->sowd != 0) {
		mowd -= lp->sowd >> 3; /* the error of the smoothed delay */
		lp->sowd += mowd; /* 7/8 old + 1/8 new */
	} else {
		lp->sowd = mowd << 3;
	}
}

/* tcp_lp_pkts_acked(): the early congestion indication and its reaction */
SEC("struct_ops")
void BPF_PROG(ccb_lp_pkts_acked, struct sock *sk, const struct ack_sample *sample)
{
	struct tcp_sock *tp = ccb_tcp_sk(sk);
	struct ccb_lp *lp = ccb_ca(sk);
	__u32 now = lp_time_stamp_ts(tp);
	__u32 delta;

	if (sample->rtt_us > 0)
		lp_rtt_sample(sk);

	delta = now - tp->rx_opt.rcv_tsecr;
	if ((__s32)delta > 0)
		lp->inference = 3 * delta;

	if (lp->last_drop && (now - lp->last_drop < lp->inference))
		lp->flag |= LP_WITHIN_INF;
	else
		lp->flag &= ~LP_WITHIN_INF;

	if (lp->sowd >> 3 < lp->owd_min + 15 * (lp->owd_max - lp->owd_min) / 100)
		lp->flag |= LP_WITHIN_THR;
	else
		lp->flag &= ~LP_WITHIN_THR;

	if (lp->flag & LP_WITHIN_THR)
		return;

	/* restart the delay range around the smoothed delay */
	lp->owd_min = lp->sowd >> 3;
	lp->owd_max = lp->sowd >> 2;
	lp->owd_max_rsv = lp->sowd >> 2;

	if (lp->flag & LP_WITHIN_INF)
		tp->snd_cwnd = 1; /* a second indication within the inference time */
	else
		tp->snd_cwnd = max(tp->snd_cwnd >> 1, 1U);
	lp->last_drop = now;
}

SEC("struct_ops")
__u32 BPF_PROG(ccb_lp_ssthresh, struct sock *sk)
{
	return tcp_reno_ssthresh(sk);
}

SEC("struct_ops")
__u32 BPF_PROG(ccb_lp_undo_cwnd, struct sock *sk)
{
	return tcp_reno_undo_cwnd(sk);
}

SEC(".struct_ops")
struct tcp_congestion_ops ccb_lp = {
	.init = (void *)ccb_lp_init,
	.ssthresh = (void *)ccb_lp_ssthresh,
	.undo_cwnd = (void *)ccb_lp_undo_cwnd,
	.cong_avoid = (void *)ccb_lp_cong_avoid,
	.pkts_acked = (void *)ccb_lp_pkts_acked,
	.name = "ccb_lp",
};
