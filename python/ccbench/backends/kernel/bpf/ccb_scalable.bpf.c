// SPDX-License-Identifier: GPL-2.0
/* Scalable TCP (Kelly, 2003) as a BPF congestion control, for kernels built without
 * CONFIG_TCP_CONG_SCALABLE. Follows Linux 6.18 net/ipv4/tcp_scalable.c: slow start as Reno's;
 * in congestion avoidance cwnd grows by one packet per min(cwnd, 100) packets acknowledged
 * (1 % per round trip above 100 packets); on loss ssthresh = cwnd - cwnd/8 (at least 2);
 * undo as Reno's. Registered as ccb_scalable. */
#include "ccb_tcp.h"

#define SCALABLE_AI_CNT 100U /* packets acknowledged per cwnd increment, at most */
#define SCALABLE_MD_SHIFT 3 /* decrease by cwnd >> 3 */

SEC("struct_ops")
void BPF_PROG(ccb_scalable_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	struct tcp_sock *tp = ccb_tcp_sk(sk);

	if (!ccb_is_cwnd_limited(sk))
		return;
	if (ccb_in_slow_start(tp)) {
		acked = tcp_slow_start(tp, acked);
		if (!acked)
			return;
	}
	tcp_cong_avoid_ai(tp, min(tp->snd_cwnd, SCALABLE_AI_CNT), acked);
}

SEC("struct_ops")
__u32 BPF_PROG(ccb_scalable_ssthresh, struct sock *sk)
{
	__u32 cwnd = ccb_tcp_sk(sk)->snd_cwnd;

	return max(cwnd - (cwnd >> SCALABLE_MD_SHIFT), 2U);
}

SEC("struct_ops")
__u32 BPF_PROG(ccb_scalable_undo_cwnd, struct sock *sk)
{
	return tcp_reno_undo_cwnd(sk);
}

SEC(".struct_ops")
struct tcp_congestion_ops ccb_scalable = {
	.ssthresh = (void *)ccb_scalable_ssthresh,
	.undo_cwnd = (void *)ccb_scalable_undo_cwnd,
	.cong_avoid = (void *)ccb_scalable_cong_avoid,
	.name = "ccb_scalable",
};
