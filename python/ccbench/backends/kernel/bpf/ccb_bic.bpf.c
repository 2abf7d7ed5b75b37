// SPDX-License-Identifier: GPL-2.0
/* BIC, Binary Increase Congestion control (Xu, Harfoush and Rhee, INFOCOM 2004), as a BPF
 * congestion control, for kernels built without CONFIG_TCP_CONG_BIC. Follows Linux 6.18
 * net/ipv4/tcp_bic.c with its module-parameter defaults (fast_convergence 1, max_increment 16,
 * low_window 14, beta 819/1024, initial_ssthresh 0 = left to the stack, smooth_part 20):
 * below low_window Reno's growth and halving; above it a binary search towards the window of
 * the last loss (last_max_cwnd), at most max_increment packets per round trip, slow growth
 * within B = 4 of it and probing past it; on loss ssthresh = cwnd * 819/1024 and, with fast
 * convergence, last_max_cwnd lowered further when losses come below the previous maximum. The
 * per-ACK count is scaled by the measured packets per ACK (delayed ACKs), and the growth step
 * is recomputed at most every HZ/32 while cwnd stays put (jiffies: ccb_jiffies.h). A
 * retransmission timeout forgets the search (set_state TCP_CA_Loss). Registered as ccb_bic. */
#include "ccb_jiffies.h"

#define BICTCP_BETA_SCALE 1024 /* beta is in 1/1024 */
#define BICTCP_B 4 /* the binary search goes to (max + min) / B */
#define ACK_RATIO_SHIFT 4 /* delayed_ack is packets per ACK << 4 */

/* module parameters, at their defaults */
#define BIC_FAST_CONVERGENCE 1
#define BIC_MAX_INCREMENT 16U
#define BIC_LOW_WINDOW 14U
#define BIC_BETA 819U
#define BIC_SMOOTH_PART 20U

struct ccb_bic {
	__u32 cnt; /* ACKs per cwnd increment */
	__u32 last_max_cwnd; /* cwnd before the last loss (the search's target) */
	__u32 last_cwnd; /* cwnd when cnt was last computed */
	__u32 last_time; /* jiffies when cnt was last computed */
	__u32 epoch_start; /* jiffies at the start of this epoch (0: none) */
	__u32 delayed_ack; /* packets per ACK << ACK_RATIO_SHIFT, smoothed */
};

static __always_inline void bictcp_reset(struct ccb_bic *ca)
{
	ca->cnt = 0;
	ca->last_max_cwnd = 0;
	ca->last_cwnd = 0;
	ca->last_time = 0;
	ca->epoch_start = 0;
	ca->delayed_ack = 2 << ACK_RATIO_SHIFT;
}

SEC("struct_ops")
void BPF_PROG(ccb_bic_init, struct sock *sk)
{
	/* initial_ssthresh is 0 by default: ssthresh is left as the stack set it */
	bictcp_reset(ccb_ca(sk));
}

/* bictcp_update(): ACKs per one-packet increase for the window cwnd */
static __always_inline void bictcp_update(struct ccb_bic *ca, __u32 cwnd)
{
	__u32 now = ccb_jiffies32();

	if (ca->last_cwnd == cwnd && (__s32)(now - ca->last_time) <= (__s32)(CONFIG_HZ / 32))
		return;
	ca->last_cwnd = cwnd;
	ca->last_time = now;
	if (ca->epoch_start == 0)
		ca->epoch_start = now;

	/* small windows grow as Reno's */
	if (cwnd <= BIC_LOW_WINDOW) {
		ca->cnt = cwnd;
		return;
	}

	if (cwnd < ca->last_max_cwnd) {
		/* below the target: binary search, at most max_increment per round trip */
		__u32 dist = (ca->last_max_cwnd - cwnd) / BICTCP_B;

		if (dist > BIC_MAX_INCREMENT)
			ca->cnt = cwnd / BIC_MAX_INCREMENT;
		else if (dist <= 1U)
			ca->cnt = (cwnd * BIC_SMOOTH_PART) / BICTCP_B;
		else
			ca->cnt = cwnd / dist;
	} else {
		/* at or past the target: slowly at first, then faster up to max_increment */
		if (cwnd < ca->last_max_cwnd + BICTCP_B)
			ca->cnt = (cwnd * BIC_SMOOTH_PART) / BICTCP_B;
		else if (cwnd < ca->last_max_cwnd + BIC_MAX_INCREMENT * (BICTCP_B - 1))
			ca->cnt = (cwnd * (BICTCP_B - 1)) / (cwnd - ca->last_max_cwnd);
		else
			ca->cnt = cwnd / BIC_MAX_INCREMENT;
	}

	/* no loss yet: at least 5 % per round trip */
	if (ca->last_max_cwnd == 0 && ca->cnt > 20)
		ca->cnt = 20;

	ca->cnt = (ca->cnt << ACK_RATIO_SHIFT) / ca->delayed_ack;
	if (ca->cnt == 0)
		ca->cnt = 1;
}

SEC("struct_ops")
void BPF_PROG(ccb_bic_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	struct tcp_sock *tp = ccb_tcp_sk(sk);
	struct ccb_bic *ca = ccb_ca(sk);

	if (!ccb_is_cwnd_limited(sk))
		return;
	if (ccb_in_slow_start(tp)) {
		acked = tcp_slow_start(tp, acked);
		if (!acked)
			return;
	}
	bictcp_update(ca, tp->snd_cwnd);
	tcp_cong_avoid_ai(tp, ca->cnt, acked);
}

/* bictcp_recalc_ssthresh(): Reno's halving up to low_window, cwnd * beta above */
SEC("struct_ops")
__u32 BPF_PROG(ccb_bic_ssthresh, struct sock *sk)
{
	const struct tcp_sock *tp = ccb_tcp_sk(sk);
	struct ccb_bic *ca = ccb_ca(sk);
	__u32 cwnd = tp->snd_cwnd;

	ca->epoch_start = 0;
	/* fast convergence: a loss below the last maximum gives up part of it */
	if (cwnd < ca->last_max_cwnd && BIC_FAST_CONVERGENCE)
		ca->last_max_cwnd = (cwnd * (BICTCP_BETA_SCALE + BIC_BETA)) / (2 * BICTCP_BETA_SCALE);
	else
		ca->last_max_cwnd = cwnd;

	if (cwnd <= BIC_LOW_WINDOW)
		return max(cwnd >> 1U, 2U);
	return max((cwnd * BIC_BETA) / BICTCP_BETA_SCALE, 2U);
}

SEC("struct_ops")
void BPF_PROG(ccb_bic_set_state, struct sock *sk, __u8 new_state)
{
	if (new_state == TCP_CA_Loss)
		bictcp_reset(ccb_ca(sk));
}

/* bictcp_acked(): packets per ACK, ratio = (15 ratio + sample) / 16, in the Open state */
SEC("struct_ops")
void BPF_PROG(ccb_bic_pkts_acked, struct sock *sk, const struct ack_sample *sample)
{
	struct ccb_bic *ca = ccb_ca(sk);

	if (ccb_inet_csk(sk)->icsk_ca_state == TCP_CA_Open)
		ca->delayed_ack += sample->pkts_acked - (ca->delayed_ack >> ACK_RATIO_SHIFT);
}

SEC("struct_ops")
__u32 BPF_PROG(ccb_bic_undo_cwnd, struct sock *sk)
{
	return tcp_reno_undo_cwnd(sk);
}

SEC(".struct_ops")
struct tcp_congestion_ops ccb_bic = {
	.init = (void *)ccb_bic_init,
	.ssthresh = (void *)ccb_bic_ssthresh,
	.cong_avoid = (void *)ccb_bic_cong_avoid,
	.set_state = (void *)ccb_bic_set_state,
	.undo_cwnd = (void *)ccb_bic_undo_cwnd,
	.pkts_acked = (void *)ccb_bic_pkts_acked,
	.name = "ccb_bic",
};
