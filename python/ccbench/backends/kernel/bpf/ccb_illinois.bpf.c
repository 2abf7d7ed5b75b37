// SPDX-License-Identifier: GPL-2.0
/* TCP-Illinois (Liu, Basar and Srikant, Performance Evaluation 2008) as a BPF congestion
 * control, for kernels built without CONFIG_TCP_CONG_ILLINOIS. Follows Linux 6.18
 * net/ipv4/tcp_illinois.c function by function: once per round (when the ACK passes the
 * snd_nxt recorded a round earlier) the average queueing delay da of the round's RTT samples
 * and the largest ever, dm (both over the smallest RTT ever), set the additive increase alpha
 * (10 packets per round while da <= dm/100, falling towards 0.3 as da nears dm; back to 10 only
 * after theta = 5 such rounds once delay has been high) and the decrease beta (1/8 while
 * da <= dm/10, 1/2 from da >= 8 dm/10, linear between); below win_thresh = 15 packets both are
 * Reno's (1 and 1/2), and an RTO resets them to Reno's. A loss sets ssthresh to
 * cwnd (1 - beta), so ssthresh / cwnd lies between 1/2 and 7/8. Module parameters at their
 * defaults (win_thresh 15, theta 5). Undo is Reno's. The module's get_info (Vegas-style
 * diagnostics) is left out: BPF congestion controls cannot fill inet_diag info. Registered as
 * ccb_illinois. */
#include "ccb_tcp.h"

#define ALPHA_SHIFT 7
#define ALPHA_SCALE (1U << ALPHA_SHIFT)
#define ALPHA_MIN ((3 * ALPHA_SCALE) / 10) /* 0.3, as 38/128 */
#define ALPHA_MAX (10 * ALPHA_SCALE)
#define ALPHA_BASE ALPHA_SCALE /* Reno's 1 */
#define RTT_MAX (0xffffffffU / ALPHA_MAX) /* µs: keeps dm * ALPHA_MAX in 32 bits */

#define BETA_SHIFT 6
#define BETA_SCALE (1U << BETA_SHIFT)
#define BETA_MIN (BETA_SCALE / 8)
#define BETA_MAX (BETA_SCALE / 2)
#define BETA_BASE BETA_MAX

#define ILLINOIS_WIN_THRESH 15 /* module parameter win_thresh */
#define ILLINOIS_THETA 5 /* module parameter theta */

struct ccb_illinois {
	__u64 sum_rtt; /* sum of this round's RTT samples, µs */
	__u16 cnt_rtt; /* RTT samples this round */
	__u32 base_rtt; /* smallest RTT sample ever, µs */
	__u32 max_rtt; /* largest RTT sample ever, µs */
	__u32 end_seq; /* right edge of this round */
	__u32 alpha; /* additive increase, 1/128 packets per round */
	__u32 beta; /* multiplicative decrease, 1/64 */
	__u16 acked; /* packets the current ACK acknowledged */
	__u8 rtt_above; /* delay has left the low zone since alpha was last at its maximum */
	__u8 rtt_low; /* rounds in the low-delay zone since then */
};

/* rtt_reset(): a new round starts at snd_nxt */
static __always_inline void illinois_rtt_reset(struct sock *sk)
{
	struct ccb_illinois *ca = ccb_ca(sk);

	ca->end_seq = ccb_tcp_sk(sk)->snd_nxt;
	ca->cnt_rtt = 0;
	ca->sum_rtt = 0;
}

/* tcp_illinois_init() */
SEC("struct_ops")
void BPF_PROG(ccb_illinois_init, struct sock *sk)
{
	struct ccb_illinois *ca = ccb_ca(sk);

	ca->alpha = ALPHA_MAX;
	ca->beta = BETA_BASE;
	ca->base_rtt = 0x7fffffff;
	ca->max_rtt = 0;
	ca->acked = 0;
	ca->rtt_low = 0;
	ca->rtt_above = 0;
	illinois_rtt_reset(sk);
}

/* tcp_illinois_acked(): every RTT sample, clamped to RTT_MAX */
SEC("struct_ops")
void BPF_PROG(ccb_illinois_pkts_acked, struct sock *sk, const struct ack_sample *sample)
{
	struct ccb_illinois *ca = ccb_ca(sk);
	__s32 rtt_us = sample->rtt_us;

	ca->acked = sample->pkts_acked;
	if (rtt_us < 0)
		return;
	if (rtt_us > (__s32)RTT_MAX)
		rtt_us = RTT_MAX;
	if (ca->base_rtt > (__u32)rtt_us)
		ca->base_rtt = rtt_us;
	if (ca->max_rtt < (__u32)rtt_us)
		ca->max_rtt = rtt_us;
	++ca->cnt_rtt;
	ca->sum_rtt += rtt_us;
}

/* alpha(): 10 in the low-delay zone (after theta rounds there once delay was high),
 * else k1 / (k2 + da), from 10 at da = d1 down to 0.3 at da = dm */
static __always_inline __u32 illinois_alpha(struct ccb_illinois *ca, __u32 da, __u32 dm)
{
	__u32 d1 = dm / 100;

	if (da <= d1) {
		if (!ca->rtt_above)
			return ALPHA_MAX;
		if (++ca->rtt_low < ILLINOIS_THETA)
			return ca->alpha;
		ca->rtt_low = 0;
		ca->rtt_above = 0;
		return ALPHA_MAX;
	}
	ca->rtt_above = 1;
	dm -= d1;
	da -= d1;
	return (dm * ALPHA_MAX) / (dm + (da * (ALPHA_MAX - ALPHA_MIN)) / ALPHA_MIN);
}

/* beta(): 1/8 up to d2 = dm/10, 1/2 from d3 = 8 dm/10, linear between */
static __always_inline __u32 illinois_beta(__u32 da, __u32 dm)
{
	__u32 d2 = dm / 10, d3;

	if (da <= d2)
		return BETA_MIN;
	d3 = (8 * dm) / 10;
	if (da >= d3 || d3 <= d2)
		return BETA_MAX;
	return (BETA_MIN * d3 - BETA_MAX * d2 + (BETA_MAX - BETA_MIN) * da) / (d3 - d2);
}

/* update_params(): once per round */
static __always_inline void illinois_update_params(struct sock *sk)
{
	struct tcp_sock *tp = ccb_tcp_sk(sk);
	struct ccb_illinois *ca = ccb_ca(sk);

	if (tp->snd_cwnd < ILLINOIS_WIN_THRESH) {
		ca->alpha = ALPHA_BASE;
		ca->beta = BETA_BASE;
	} else if (ca->cnt_rtt > 0) {
		/* max_delay() and avg_delay() */
		__u32 dm = ca->max_rtt - ca->base_rtt;
		__u32 da = (__u32)(ca->sum_rtt / ca->cnt_rtt) - ca->base_rtt;

		ca->alpha = illinois_alpha(ca, da, dm);
		ca->beta = illinois_beta(da, dm);
	}
	illinois_rtt_reset(sk);
}

/* tcp_illinois_state(): an RTO returns alpha and beta to Reno's */
SEC("struct_ops")
void BPF_PROG(ccb_illinois_set_state, struct sock *sk, __u8 new_state)
{
	struct ccb_illinois *ca = ccb_ca(sk);

	if (new_state == TCP_CA_Loss) {
		ca->alpha = ALPHA_BASE;
		ca->beta = BETA_BASE;
		ca->rtt_low = 0;
		ca->rtt_above = 0;
		illinois_rtt_reset(sk);
	}
}

/* tcp_illinois_cong_avoid(): cwnd += alpha / cwnd per ACKed packet */
SEC("struct_ops")
void BPF_PROG(ccb_illinois_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	struct tcp_sock *tp = ccb_tcp_sk(sk);
	struct ccb_illinois *ca = ccb_ca(sk);

	if (ccb_after(ack, ca->end_seq))
		illinois_update_params(sk);
	if (!ccb_is_cwnd_limited(sk))
		return;
	if (ccb_in_slow_start(tp)) {
		tcp_slow_start(tp, acked);
	} else {
		__u32 delta;

		/* snd_cwnd_cnt counts packets since the last increase */
		tp->snd_cwnd_cnt += ca->acked;
		ca->acked = 1;
		delta = (tp->snd_cwnd_cnt * ca->alpha) >> ALPHA_SHIFT;
		if (delta >= tp->snd_cwnd) {
			tp->snd_cwnd = min(tp->snd_cwnd + delta / tp->snd_cwnd, (__u32)tp->snd_cwnd_clamp);
			tp->snd_cwnd_cnt = 0;
		}
	}
}

/* tcp_illinois_ssthresh(): cwnd (1 - beta), at least 2 */
SEC("struct_ops")
__u32 BPF_PROG(ccb_illinois_ssthresh, struct sock *sk)
{
	const struct tcp_sock *tp = ccb_tcp_sk(sk);
	const struct ccb_illinois *ca = ccb_ca(sk);

	return max(tp->snd_cwnd - ((tp->snd_cwnd * ca->beta) >> BETA_SHIFT), 2U);
}

SEC("struct_ops")
__u32 BPF_PROG(ccb_illinois_undo_cwnd, struct sock *sk)
{
	return tcp_reno_undo_cwnd(sk);
}

SEC(".struct_ops")
struct tcp_congestion_ops ccb_illinois = {
	.init = (void *)ccb_illinois_init,
	.ssthresh = (void *)ccb_illinois_ssthresh,
	.undo_cwnd = (void *)ccb_illinois_undo_cwnd,
	.cong_avoid = (void *)ccb_illinois_cong_avoid,
	.set_state = (void *)ccb_illinois_set_state,
	.pkts_acked = (void *)ccb_illinois_pkts_acked,
	.name = "ccb_illinois",
};
