// SPDX-License-Identifier: GPL-2.0
/* TCP Hybla (Caini and Firrincieli, Int. J. Satellite Communications 2004) as a BPF congestion
 * control, for kernels built without CONFIG_TCP_CONG_HYBLA. Follows Linux 6.18
 * net/ipv4/tcp_hybla.c with its module-parameter default rtt0 = 25 ms: with rho = smallest
 * smoothed RTT / rtt0 (at least 1, kept in 1/8 and rho^2 in 1/128), each ACK in the Open
 * state adds 2^rho - 1 packets in slow start and rho^2 / cwnd in congestion avoidance (the
 * fractions carried over in 1/128), so a long-RTT flow grows per unit of time as one with
 * rtt0 would; the connection starts from cwnd = rho. Outside the Open state, Reno's growth;
 * loss response and undo are Reno's.
 *
 * Where it differs from the module: its init sets tp->snd_cwnd_clamp to 65535, which BPF may
 * not write; the port applies that clamp where its own growth does (the end of
 * hybla_cong_avoid), so only Reno's growth outside the Open state and the stack's own
 * window changes could pass 65535 packets. Registered as ccb_hybla. */
#include "ccb_tcp.h"

#define HYBLA_RTT0_MS 25 /* reference RTT, ms */
#define HYBLA_CWND_CLAMP 65535U /* hybla_init's snd_cwnd_clamp */

struct ccb_hybla {
	bool hybla_en; /* Hybla's growth on (the Open state) */
	__u32 snd_cwnd_cents; /* fractional increments carried over, 1/128 */
	__u32 rho; /* integer part of rho */
	__u32 rho2; /* integer part of rho^2 */
	__u32 rho_3ls; /* rho << 3 */
	__u32 rho2_7ls; /* rho^2 << 7 */
	__u32 minrtt_us; /* smallest smoothed RTT seen (tp->srtt_us, << 3) */
};

/* hybla_recalc_param(): rho from the smoothed RTT (srtt_us is in 1/8 µs, hence rho << 3) */
static __always_inline void hybla_recalc_param(struct sock *sk)
{
	struct ccb_hybla *ca = ccb_ca(sk);

	ca->rho_3ls = max(ccb_tcp_sk(sk)->srtt_us / (HYBLA_RTT0_MS * 1000), 8U);
	ca->rho = ca->rho_3ls >> 3;
	ca->rho2_7ls = (ca->rho_3ls * ca->rho_3ls) << 1;
	ca->rho2 = ca->rho2_7ls >> 7;
}

SEC("struct_ops")
void BPF_PROG(ccb_hybla_init, struct sock *sk)
{
	struct tcp_sock *tp = ccb_tcp_sk(sk);
	struct ccb_hybla *ca = ccb_ca(sk);

	ca->rho = 0;
	ca->rho2 = 0;
	ca->rho_3ls = 0;
	ca->rho2_7ls = 0;
	ca->snd_cwnd_cents = 0;
	ca->hybla_en = true;
	tp->snd_cwnd = 2;
	/* rho from the RTT known so far; the window starts at rho */
	hybla_recalc_param(sk);
	ca->minrtt_us = tp->srtt_us;
	tp->snd_cwnd = ca->rho;
}

SEC("struct_ops")
void BPF_PROG(ccb_hybla_set_state, struct sock *sk, __u8 ca_state)
{
	((struct ccb_hybla *)ccb_ca(sk))->hybla_en = ca_state == TCP_CA_Open;
}

/* hybla_fraction(): 2^(odds / 8) in 1/128, for the fractional part of rho */
static __always_inline __u32 hybla_fraction(__u32 odds)
{
	switch (odds) {
	case 1:
		return 139;
	case 2:
		return 152;
	case 3:
		return 165;
	case 4:
		return 181;
	case 5:
		return 197;
	case 6:
		return 215;
	case 7:
		return 234;
	default:
		return 128;
	}
}

SEC("struct_ops")
void BPF_PROG(ccb_hybla_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	struct tcp_sock *tp = ccb_tcp_sk(sk);
	struct ccb_hybla *ca = ccb_ca(sk);
	__u32 increment, odd, rho_fractions;
	bool is_slowstart = false;

	/* a new smallest smoothed RTT gives a new rho */
	if (tp->srtt_us < ca->minrtt_us) {
		hybla_recalc_param(sk);
		ca->minrtt_us = tp->srtt_us;
	}
	if (!ccb_is_cwnd_limited(sk))
		return;
	if (!ca->hybla_en) {
		tcp_reno_cong_avoid(sk, ack, acked);
		return;
	}
	if (ca->rho == 0)
		hybla_recalc_param(sk);

	rho_fractions = ca->rho_3ls - (ca->rho << 3);
	if (ccb_in_slow_start(tp)) {
		/* 2^rho - 1 per ACK, << 7: 2^(integer part) times 2^(fraction) from the table */
		is_slowstart = true;
		increment = ((1 << min(ca->rho, 16U)) * hybla_fraction(rho_fractions)) - 128;
	} else {
		/* rho^2 / cwnd per ACK, << 7 */
		increment = ca->rho2_7ls / tp->snd_cwnd;
		if (increment < 128)
			tp->snd_cwnd_cnt++;
	}

	odd = increment % 128;
	tp->snd_cwnd = tp->snd_cwnd + (increment >> 7);
	ca->snd_cwnd_cents += odd;
	/* a whole packet of carried fractions; the carry stays under 128 between ACKs and odd is
	 * under 128, so the module's loop runs at most once */
	if (ca->snd_cwnd_cents >= 128) {
		tp->snd_cwnd = tp->snd_cwnd + 1;
		ca->snd_cwnd_cents -= 128;
		tp->snd_cwnd_cnt = 0;
	}
	/* no increment for a whole window of ACKs: one packet */
	if (increment == 0 && odd == 0 && tp->snd_cwnd_cnt >= tp->snd_cwnd) {
		tp->snd_cwnd = tp->snd_cwnd + 1;
		tp->snd_cwnd_cnt = 0;
	}
	/* slow start stops at ssthresh */
	if (is_slowstart)
		tp->snd_cwnd = min(tp->snd_cwnd, tp->snd_ssthresh);
	tp->snd_cwnd = min(tp->snd_cwnd, HYBLA_CWND_CLAMP);
}

SEC("struct_ops")
__u32 BPF_PROG(ccb_hybla_ssthresh, struct sock *sk)
{
	return tcp_reno_ssthresh(sk);
}

SEC("struct_ops")
__u32 BPF_PROG(ccb_hybla_undo_cwnd, struct sock *sk)
{
	return tcp_reno_undo_cwnd(sk);
}

SEC(".struct_ops")
struct tcp_congestion_ops ccb_hybla = {
	.init = (void *)ccb_hybla_init,
	.ssthresh = (void *)ccb_hybla_ssthresh,
	.undo_cwnd = (void *)ccb_hybla_undo_cwnd,
	.cong_avoid = (void *)ccb_hybla_cong_avoid,
	.set_state = (void *)ccb_hybla_set_state,
	.name = "ccb_hybla",
};
