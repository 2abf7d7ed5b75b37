// SPDX-License-Identifier: GPL-2.0
/* H-TCP (Shorten and Leith, PFLDnet 2004) as a BPF congestion control, for kernels built
 * without CONFIG_TCP_CONG_HTCP. Follows Linux 6.18 net/ipv4/tcp_htcp.c with its module-parameter
 * defaults (use_rtt_scaling 1, use_bandwidth_switch 1): in congestion avoidance cwnd grows by
 * alpha / cwnd per ACK, alpha rising with the time since the last congestion event (past 1 s:
 * 1 + 10 t + t^2 / 4, t in s beyond the first second), scaled by the minimum RTT against
 * 100 ms (clamped to 0.5-10) and by 2 (1 - beta); on loss ssthresh = cwnd * beta, with the
 * adaptive backoff beta = minRTT / maxRTT clamped to 0.5-0.8 from the second congestion event
 * on, and 0.5 whenever the achieved throughput moved by more than a fifth since the previous
 * event (the bandwidth switch). RTTs and times are in jiffies, as the module keeps them
 * (ccb_jiffies.h). Undo restores the congestion-event time, maxRTT and bandwidth memory.
 * Registered as ccb_htcp. */
#include "ccb_jiffies.h"

#define ALPHA_BASE (1 << 7) /* 1.0, << 7 */
#define BETA_MIN (1 << 6) /* 0.5, << 7 */
#define BETA_MAX 102 /* 0.8, << 7 */

/* module parameters, at their defaults */
#define HTCP_USE_RTT_SCALING 1
#define HTCP_USE_BANDWIDTH_SWITCH 1

struct ccb_htcp {
	__u32 alpha; /* increase per round trip, << 7 */
	__u8 beta; /* backoff factor, << 7 */
	__u8 modeswitch; /* adaptive beta allowed (after a first congestion event) */
	__u16 pkts_acked; /* packets the last ACK acknowledged, in the Open state */
	__u32 packetcount; /* packets acknowledged since lasttime */
	__u32 minRTT; /* jiffies */
	__u32 maxRTT; /* jiffies */
	__u32 last_cong; /* jiffies at the end of the last congestion event */
	__u32 undo_last_cong;
	__u32 undo_maxRTT;
	__u32 undo_old_maxB;
	/* achieved throughput, packets per second */
	__u32 minB;
	__u32 maxB;
	__u32 old_maxB;
	__u32 Bi;
	__u32 lasttime; /* jiffies at the start of the current throughput sample */
};

static __always_inline __u32 htcp_cong_time(const struct ccb_htcp *ca)
{
	return ccb_jiffies32() - ca->last_cong;
}

/* round trips since the last congestion event */
static __always_inline __u32 htcp_ccount(const struct ccb_htcp *ca)
{
	return htcp_cong_time(ca) / ca->minRTT;
}

/* include/linux/tcp.h between(): seq2 <= seq1 <= seq3, modulo 2^32 */
static __always_inline bool htcp_between(__u32 seq1, __u32 seq2, __u32 seq3)
{
	return seq3 - seq2 >= seq1 - seq2;
}

static __always_inline void htcp_reset(struct ccb_htcp *ca)
{
	ca->undo_last_cong = ca->last_cong;
	ca->undo_maxRTT = ca->maxRTT;
	ca->undo_old_maxB = ca->old_maxB;
	ca->last_cong = ccb_jiffies32();
}

SEC("struct_ops")
__u32 BPF_PROG(ccb_htcp_undo_cwnd, struct sock *sk)
{
	struct ccb_htcp *ca = ccb_ca(sk);

	if (ca->undo_last_cong) {
		ca->last_cong = ca->undo_last_cong;
		ca->maxRTT = ca->undo_maxRTT;
		ca->old_maxB = ca->undo_old_maxB;
		ca->undo_last_cong = 0;
	}
	return tcp_reno_undo_cwnd(sk);
}

/* measure_rtt(): minRTT ever; maxRTT in the Open state, rising by at most 20 ms a sample */
static __always_inline void htcp_measure_rtt(struct sock *sk, __u32 srtt)
{
	struct ccb_htcp *ca = ccb_ca(sk);

	if (ca->minRTT > srtt || !ca->minRTT)
		ca->minRTT = srtt;
	if (ccb_inet_csk(sk)->icsk_ca_state == TCP_CA_Open) {
		if (ca->maxRTT < ca->minRTT)
			ca->maxRTT = ca->minRTT;
		if (ca->maxRTT < srtt && srtt <= ca->maxRTT + ccb_msecs_to_jiffies(20))
			ca->maxRTT = srtt;
	}
}

/* measure_achieved_throughput() */
SEC("struct_ops")
void BPF_PROG(ccb_htcp_pkts_acked, struct sock *sk, const struct ack_sample *sample)
{
	const struct tcp_sock *tp = ccb_tcp_sk(sk);
	struct ccb_htcp *ca = ccb_ca(sk);
	__u8 state = ccb_inet_csk(sk)->icsk_ca_state;
	__u32 now = ccb_jiffies32();
	__u32 alpha_pkts;

	if (state == TCP_CA_Open)
		ca->pkts_acked = sample->pkts_acked;
	if (sample->rtt_us > 0)
		htcp_measure_rtt(sk, ccb_usecs_to_jiffies(sample->rtt_us));
	if (!HTCP_USE_BANDWIDTH_SWITCH)
		return;

	/* throughput is sampled in the Open and Disorder states only */
	if (!((1 << state) & ((1 << TCP_CA_Open) | (1 << TCP_CA_Disorder)))) {
		ca->packetcount = 0;
		ca->lasttime = now;
		return;
	}
	ca->packetcount += sample->pkts_acked;
	alpha_pkts = ca->alpha >> 7;
	if (ca->packetcount >= tp->snd_cwnd - (alpha_pkts ? alpha_pkts : 1) && now - ca->lasttime >= ca->minRTT &&
	    ca->minRTT > 0) {
		__u32 cur_Bi = ca->packetcount * CONFIG_HZ / (now - ca->lasttime);

		if (htcp_ccount(ca) <= 3) {
			/* just after a backoff: start afresh */
			ca->minB = ca->maxB = ca->Bi = cur_Bi;
		} else {
			ca->Bi = (3 * ca->Bi + cur_Bi) / 4;
			if (ca->Bi > ca->maxB)
				ca->maxB = ca->Bi;
			if (ca->minB > ca->maxB)
				ca->minB = ca->maxB;
		}
		ca->packetcount = 0;
		ca->lasttime = now;
	}
}

static __always_inline void htcp_beta_update(struct ccb_htcp *ca, __u32 minRTT, __u32 maxRTT)
{
	if (HTCP_USE_BANDWIDTH_SWITCH) {
		__u32 maxB = ca->maxB;
		__u32 old_maxB = ca->old_maxB;

		ca->old_maxB = ca->maxB;
		/* throughput moved by more than 20 %: back off by half, adapt again later */
		if (!htcp_between(5 * maxB, 4 * old_maxB, 6 * old_maxB)) {
			ca->beta = BETA_MIN;
			ca->modeswitch = 0;
			return;
		}
	}
	if (ca->modeswitch && minRTT > ccb_msecs_to_jiffies(10) && maxRTT) {
		ca->beta = (minRTT << 7) / maxRTT;
		if (ca->beta < BETA_MIN)
			ca->beta = BETA_MIN;
		else if (ca->beta > BETA_MAX)
			ca->beta = BETA_MAX;
	} else {
		ca->beta = BETA_MIN;
		ca->modeswitch = 1;
	}
}

static __always_inline void htcp_alpha_update(struct ccb_htcp *ca)
{
	__u32 minRTT = ca->minRTT;
	__u32 factor = 1;
	__u32 diff = htcp_cong_time(ca);
	__u32 hz = CONFIG_HZ;

	if (diff > hz) {
		diff -= hz;
		factor = 1 + (10 * diff + ((diff / 2) * (diff / 2) / hz)) / hz;
	}
	if (HTCP_USE_RTT_SCALING && minRTT) {
		__u32 scale = (hz << 3) / (10 * minRTT);

		/* the ratio 100 ms / minRTT, clamped to [0.5, 10], << 3 */
		if (scale < (1U << 2))
			scale = 1U << 2;
		else if (scale > (10U << 3))
			scale = 10U << 3;
		factor = (factor << 3) / scale;
		if (!factor)
			factor = 1;
	}
	ca->alpha = 2 * factor * ((1 << 7) - ca->beta);
	if (!ca->alpha)
		ca->alpha = ALPHA_BASE;
}

/* htcp_param_update(): at a congestion event, when maxRTT is known best */
static __always_inline void htcp_param_update(struct ccb_htcp *ca)
{
	__u32 minRTT = ca->minRTT;
	__u32 maxRTT = ca->maxRTT;

	htcp_beta_update(ca, minRTT, maxRTT);
	htcp_alpha_update(ca);
	/* maxRTT fades towards minRTT (routing changes) */
	if (minRTT > 0 && maxRTT > minRTT)
		ca->maxRTT = minRTT + ((maxRTT - minRTT) * 95) / 100;
}

SEC("struct_ops")
__u32 BPF_PROG(ccb_htcp_ssthresh, struct sock *sk)
{
	struct ccb_htcp *ca = ccb_ca(sk);

	htcp_param_update(ca);
	return max((ccb_tcp_sk(sk)->snd_cwnd * ca->beta) >> 7, 2U);
}

SEC("struct_ops")
void BPF_PROG(ccb_htcp_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	struct tcp_sock *tp = ccb_tcp_sk(sk);
	struct ccb_htcp *ca = ccb_ca(sk);

	if (!ccb_is_cwnd_limited(sk))
		return;
	if (ccb_in_slow_start(tp)) {
		tcp_slow_start(tp, acked);
		return;
	}
	/* cwnd += alpha / cwnd per packet acknowledged */
	if ((tp->snd_cwnd_cnt * ca->alpha) >> 7 >= tp->snd_cwnd) {
		if (tp->snd_cwnd < tp->snd_cwnd_clamp)
			tp->snd_cwnd = tp->snd_cwnd + 1;
		tp->snd_cwnd_cnt = 0;
		htcp_alpha_update(ca);
	} else {
		tp->snd_cwnd_cnt += ca->pkts_acked;
	}
	ca->pkts_acked = 1;
}

SEC("struct_ops")
void BPF_PROG(ccb_htcp_init, struct sock *sk)
{
	struct ccb_htcp *ca = ccb_ca(sk);

	__builtin_memset(ca, 0, sizeof(*ca));
	ca->alpha = ALPHA_BASE;
	ca->beta = BETA_MIN;
	ca->pkts_acked = 1;
	ca->last_cong = ccb_jiffies32();
}

SEC("struct_ops")
void BPF_PROG(ccb_htcp_set_state, struct sock *sk, __u8 new_state)
{
	struct ccb_htcp *ca = ccb_ca(sk);

	if (new_state == TCP_CA_Open) {
		/* back in Open after an undone event: the congestion epoch starts now */
		if (ca->undo_last_cong) {
			ca->last_cong = ccb_jiffies32();
			ca->undo_last_cong = 0;
		}
	} else if (new_state == TCP_CA_CWR || new_state == TCP_CA_Recovery || new_state == TCP_CA_Loss) {
		htcp_reset(ca);
	}
}

SEC(".struct_ops")
struct tcp_congestion_ops ccb_htcp = {
	.init = (void *)ccb_htcp_init,
	.ssthresh = (void *)ccb_htcp_ssthresh,
	.cong_avoid = (void *)ccb_htcp_cong_avoid,
	.set_state = (void *)ccb_htcp_set_state,
	.undo_cwnd = (void *)ccb_htcp_undo_cwnd,
	.pkts_acked = (void *)ccb_htcp_pkts_acked,
	.name = "ccb_htcp",
};
