// SPDX-License-Identifier: GPL-2.0
/* TCP Veno (Fu and Liew, IEEE JSAC 2003) as a BPF congestion control, for kernels built without
 * CONFIG_TCP_CONG_VENO. Follows Linux 6.18 net/ipv4/tcp_veno.c function by function: the
 * Vegas-style backlog estimate diff = cwnd - cwnd * baseRTT / RTT, kept in half packets
 * (V_PARAM_SHIFT 1), with RTT the smallest sample since the previous ACK and baseRTT the
 * smallest ever; below beta = 3 packets the path is "non-congestive": congestion avoidance
 * grows as Reno and a loss cuts cwnd to 4/5; at or above beta, cwnd grows by one every other
 * round and a loss halves it. Like the module, the sample count is never reset (its reset is
 * commented out there), so after three RTT samples every ACK takes Veno's path. Undo is
 * Reno's (tcp_reno_undo_cwnd). Registered as ccb_veno. */
#include "ccb_tcp.h"

#define VENO_SHIFT 1 /* V_PARAM_SHIFT: diff in 1/2 packets */
#define VENO_BETA (3 << VENO_SHIFT)

struct ccb_veno {
	__u8 doing_veno_now; /* Veno decides this round (CA state Open) */
	__u16 cntrtt; /* RTT samples seen */
	__u32 minrtt; /* smallest RTT sample since the last cong_avoid, µs + 1 */
	__u32 basertt; /* smallest RTT sample ever, µs + 1 */
	__u32 inc; /* in the congestive state: grow at the next full window */
	__u32 diff; /* backlog estimate, 1/2 packets */
};

/* veno_enable() / veno_disable() */
static __always_inline void veno_enable(struct sock *sk)
{
	struct ccb_veno *v = ccb_ca(sk);

	v->doing_veno_now = 1;
	v->minrtt = 0x7fffffff;
}

/* tcp_veno_init() */
static __always_inline void veno_init(struct sock *sk)
{
	struct ccb_veno *v = ccb_ca(sk);

	v->basertt = 0x7fffffff;
	v->inc = 1;
	veno_enable(sk);
}

SEC("struct_ops")
void BPF_PROG(ccb_veno_init, struct sock *sk)
{
	veno_init(sk);
}

/* tcp_veno_pkts_acked(): RTT samples, never zero */
SEC("struct_ops")
void BPF_PROG(ccb_veno_pkts_acked, struct sock *sk, const struct ack_sample *sample)
{
	struct ccb_veno *v = ccb_ca(sk);
	__u32 vrtt;

	if (sample->rtt_us < 0)
		return;
	vrtt = sample->rtt_us + 1;
	if (vrtt < v->basertt)
		v->basertt = vrtt;
	v->minrtt = min(v->minrtt, vrtt);
	v->cntrtt++;
}

/* tcp_veno_state(): Veno only in the Open state */
SEC("struct_ops")
void BPF_PROG(ccb_veno_set_state, struct sock *sk, __u8 ca_state)
{
	if (ca_state == TCP_CA_Open)
		veno_enable(sk);
	else
		((struct ccb_veno *)ccb_ca(sk))->doing_veno_now = 0;
}

/* tcp_veno_cwnd_event(): after idle or at the first transmission, start over */
SEC("struct_ops")
void BPF_PROG(ccb_veno_cwnd_event, struct sock *sk, enum tcp_ca_event ev)
{
	if (ev == CA_EVENT_CWND_RESTART || ev == CA_EVENT_TX_START)
		veno_init(sk);
}

/* tcp_veno_cong_avoid() */
SEC("struct_ops")
void BPF_PROG(ccb_veno_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	struct tcp_sock *tp = ccb_tcp_sk(sk);
	struct ccb_veno *v = ccb_ca(sk);

	if (!v->doing_veno_now) {
		tcp_reno_cong_avoid(sk, ack, acked);
		return;
	}
	if (!ccb_is_cwnd_limited(sk))
		return;
	if (v->cntrtt <= 2) {
		/* too few samples to judge the backlog: Reno */
		tcp_reno_cong_avoid(sk, ack, acked);
	} else {
		/* the window that would carry the achieved rate at baseRTT, in 1/2 packets */
		__u64 target = ((__u64)tp->snd_cwnd * v->basertt) << VENO_SHIFT;

		target /= v->minrtt;
		v->diff = (tp->snd_cwnd << VENO_SHIFT) - (__u32)target;

		if (ccb_in_slow_start(tp)) {
			acked = tcp_slow_start(tp, acked);
			if (!acked)
				goto clamp;
		}
		if (v->diff < VENO_BETA) {
			/* non-congestive: one packet per round, as Reno */
			tcp_cong_avoid_ai(tp, tp->snd_cwnd, acked);
		} else if (tp->snd_cwnd_cnt >= tp->snd_cwnd) {
			/* congestive: one packet every other round */
			if (v->inc && tp->snd_cwnd < tp->snd_cwnd_clamp) {
				tp->snd_cwnd++;
				v->inc = 0;
			} else {
				v->inc = 1;
			}
			tp->snd_cwnd_cnt = 0;
		} else {
			tp->snd_cwnd_cnt += acked;
		}
clamp:
		if (tp->snd_cwnd < 2)
			tp->snd_cwnd = 2;
		else if (tp->snd_cwnd > tp->snd_cwnd_clamp)
			tp->snd_cwnd = tp->snd_cwnd_clamp;
	}
	v->minrtt = 0x7fffffff;
}

/* tcp_veno_ssthresh(): 4/5 below beta (a loss the backlog does not explain), else 1/2 */
SEC("struct_ops")
__u32 BPF_PROG(ccb_veno_ssthresh, struct sock *sk)
{
	const struct tcp_sock *tp = ccb_tcp_sk(sk);
	const struct ccb_veno *v = ccb_ca(sk);

	if (v->diff < VENO_BETA)
		return max(tp->snd_cwnd * 4 / 5, 2U);
	return max(tp->snd_cwnd >> 1U, 2U);
}

SEC("struct_ops")
__u32 BPF_PROG(ccb_veno_undo_cwnd, struct sock *sk)
{
	return tcp_reno_undo_cwnd(sk);
}

SEC(".struct_ops")
struct tcp_congestion_ops ccb_veno = {
	.init = (void *)ccb_veno_init,
	.ssthresh = (void *)ccb_veno_ssthresh,
	.undo_cwnd = (void *)ccb_veno_undo_cwnd,
	.cong_avoid = (void *)ccb_veno_cong_avoid,
	.pkts_acked = (void *)ccb_veno_pkts_acked,
	.set_state = (void *)ccb_veno_set_state,
	.cwnd_event = (void *)ccb_veno_cwnd_event,
	.name = "ccb_veno",
};
