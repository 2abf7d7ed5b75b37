// SPDX-License-Identifier: GPL-2.0
/* DCTCP (Alizadeh et al., SIGCOMM 2010; RFC 8257) as a BPF congestion control, for kernels
 * built without CONFIG_TCP_CONG_DCTCP. Follows Linux 6.18 net/ipv4/tcp_dctcp.c and
 * tcp_dctcp.h: Reno's window growth; once per window of data, alpha += g (F - alpha) with
 * g = 1/16 and F the fraction of delivered packets that were CE-marked (tp->delivered_ce over
 * tp->delivered), alpha starting at 1 (1024/1024); on ECE the window is cut by alpha / 2;
 * on loss it halves. As the receiver it echoes the CE state of every packet exactly: a change
 * of state first sends the ACK that was being delayed (for the packets before the change) and
 * then acknowledges at once. Registered as ccb_dctcp with TCP_CONG_NEEDS_ECN, as the module:
 * a socket that picks it before connect() sends an ECT SYN, which only a listener that also
 * needs ECN accepts (tcp_ecn_create_request). iperf3 picks the algorithm after connecting, so
 * on the kernel backend ECN comes from net.ipv4.tcp_ecn (the flows' `ecn = true`).
 *
 * Where it differs from the module: when the peer refuses ECN the module swaps in its
 * dctcp-reno operations and stops marking its packets ECT (INET_ECN_dontxmit); BPF can do
 * neither, so the port behaves as Reno (no alpha, Reno's halving) but its packets stay ECT. */
#include "ccb_tcp.h"

#define DCTCP_MAX_ALPHA 1024U
#define DCTCP_SHIFT_G 4 /* g = 1/2^4 */

struct ccb_dctcp {
	__u32 old_delivered;
	__u32 old_delivered_ce;
	__u32 prior_rcv_nxt;
	__u32 alpha;
	__u32 next_seq;
	__u32 ce_state;
	__u32 loss_cwnd;
	__u32 reno_only; /* ECN not negotiated: plain Reno */
};

static __always_inline void dctcp_reset(const struct tcp_sock *tp, struct ccb_dctcp *ca)
{
	ca->next_seq = tp->snd_nxt;
	ca->old_delivered = tp->delivered;
	ca->old_delivered_ce = tp->delivered_ce;
}

SEC("struct_ops")
void BPF_PROG(ccb_dctcp_init, struct sock *sk)
{
	const struct tcp_sock *tp = ccb_tcp_sk(sk);
	struct ccb_dctcp *ca = ccb_ca(sk);

	ca->prior_rcv_nxt = tp->rcv_nxt;
	ca->alpha = DCTCP_MAX_ALPHA;
	ca->loss_cwnd = 0;
	ca->ce_state = 0;
	ca->reno_only = !((tp->ecn_flags & TCP_ECN_MODE_ANY) || sk->__sk_common.skc_state == TCP_LISTEN ||
			  sk->__sk_common.skc_state == TCP_CLOSE);
	dctcp_reset(tp, ca);
}

SEC("struct_ops")
__u32 BPF_PROG(ccb_dctcp_ssthresh, struct sock *sk)
{
	struct ccb_dctcp *ca = ccb_ca(sk);
	struct tcp_sock *tp = ccb_tcp_sk(sk);
	__u32 cwnd = tp->snd_cwnd;

	if (ca->reno_only)
		return tcp_reno_ssthresh(sk);
	ca->loss_cwnd = cwnd;
	/* cwnd (1 - alpha/2), alpha in 1/1024 */
	return max(cwnd - ((cwnd * ca->alpha) >> 11U), 2U);
}

SEC("struct_ops")
void BPF_PROG(ccb_dctcp_update_alpha, struct sock *sk, __u32 flags)
{
	const struct tcp_sock *tp = ccb_tcp_sk(sk);
	struct ccb_dctcp *ca = ccb_ca(sk);

	if (ca->reno_only || ccb_before(tp->snd_una, ca->next_seq))
		return;
	/* a window of data has been acknowledged since the last update */
	__u32 delivered_ce = tp->delivered_ce - ca->old_delivered_ce;
	__u32 alpha = ca->alpha;
	__u32 decay = alpha >> DCTCP_SHIFT_G;

	alpha -= decay ? decay : alpha; /* min_not_zero(alpha, alpha >> g) */
	if (delivered_ce) {
		__u32 delivered = tp->delivered - ca->old_delivered;

		delivered_ce <<= (10 - DCTCP_SHIFT_G);
		delivered_ce /= max(1U, delivered);
		alpha = min(alpha + delivered_ce, DCTCP_MAX_ALPHA);
	}
	ca->alpha = alpha;
	dctcp_reset(tp, ca);
}

static __always_inline void dctcp_react_to_loss(struct sock *sk)
{
	struct ccb_dctcp *ca = ccb_ca(sk);
	struct tcp_sock *tp = ccb_tcp_sk(sk);

	ca->loss_cwnd = tp->snd_cwnd;
	tp->snd_ssthresh = max(tp->snd_cwnd >> 1U, 2U);
}

SEC("struct_ops")
void BPF_PROG(ccb_dctcp_set_state, struct sock *sk, __u8 new_state)
{
	struct ccb_dctcp *ca = ccb_ca(sk);

	/* entering Recovery: one reaction per loss episode (an RTO is handled in cwnd_event) */
	if (!ca->reno_only && new_state == TCP_CA_Recovery && new_state != ccb_inet_csk(sk)->icsk_ca_state)
		dctcp_react_to_loss(sk);
}

/* the receiver echoes CE exactly (tcp_dctcp.h dctcp_ece_ack_update) */
static __always_inline void dctcp_ece_ack_cwr(struct sock *sk, __u32 ce_state)
{
	struct tcp_sock *tp = ccb_tcp_sk(sk);

	if (ce_state == 1)
		tp->ecn_flags |= TCP_ECN_DEMAND_CWR;
	else
		tp->ecn_flags &= ~TCP_ECN_DEMAND_CWR;
}

SEC("struct_ops")
void BPF_PROG(ccb_dctcp_cwnd_event, struct sock *sk, enum tcp_ca_event ev)
{
	struct ccb_dctcp *ca = ccb_ca(sk);

	if (ca->reno_only)
		return;
	if (ev == CA_EVENT_ECN_IS_CE || ev == CA_EVENT_ECN_NO_CE) {
		__u32 new_ce_state = ev == CA_EVENT_ECN_IS_CE ? 1 : 0;

		if (ca->ce_state != new_ce_state) {
			/* the CE state changed: send the ACK being delayed, for the packets before
			 * the change, then acknowledge the new state at once */
			if (ccb_inet_csk(sk)->icsk_ack.pending & ICSK_ACK_TIMER) {
				dctcp_ece_ack_cwr(sk, ca->ce_state);
				bpf_tcp_send_ack(sk, ca->prior_rcv_nxt);
			}
			ccb_inet_csk(sk)->icsk_ack.pending |= ICSK_ACK_NOW;
		}
		ca->prior_rcv_nxt = ccb_tcp_sk(sk)->rcv_nxt;
		ca->ce_state = new_ce_state;
		dctcp_ece_ack_cwr(sk, new_ce_state);
	} else if (ev == CA_EVENT_LOSS) {
		dctcp_react_to_loss(sk);
	}
}

SEC("struct_ops")
void BPF_PROG(ccb_dctcp_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	tcp_reno_cong_avoid(sk, ack, acked);
}

SEC("struct_ops")
__u32 BPF_PROG(ccb_dctcp_undo_cwnd, struct sock *sk)
{
	const struct ccb_dctcp *ca = ccb_ca(sk);

	if (ca->reno_only)
		return tcp_reno_undo_cwnd(sk);
	return max(ccb_tcp_sk(sk)->snd_cwnd, ca->loss_cwnd);
}

SEC(".struct_ops")
struct tcp_congestion_ops ccb_dctcp = {
	.init = (void *)ccb_dctcp_init,
	.in_ack_event = (void *)ccb_dctcp_update_alpha,
	.cwnd_event = (void *)ccb_dctcp_cwnd_event,
	.ssthresh = (void *)ccb_dctcp_ssthresh,
	.cong_avoid = (void *)ccb_dctcp_cong_avoid,
	.undo_cwnd = (void *)ccb_dctcp_undo_cwnd,
	.set_state = (void *)ccb_dctcp_set_state,
	.flags = TCP_CONG_NEEDS_ECN,
	.name = "ccb_dctcp",
};
