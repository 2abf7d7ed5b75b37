// SPDX-License-Identifier: GPL-2.0
/* YeAH-TCP (Baiocchi, Castellani and Vacirca, PFLDnet 2007) as a BPF congestion control, for
 * kernels built without CONFIG_TCP_CONG_YEAH. Follows Linux 6.18 net/ipv4/tcp_yeah.c function
 * by function, with the Vegas bookkeeping it takes from net/ipv4/tcp_vegas.c (tcp_vegas_init,
 * _state, _cwnd_event, _pkts_acked: the smallest RTT sample of each round and of all time).
 * Growth is Scalable's (one packet per min(cwnd, 100) ACKed, i.e. cwnd/100 per round above 100)
 * while the path is "fast", Reno's otherwise. Once per round the flow's own backlog
 * queue = cwnd (RTT - baseRTT) / RTT decides: above alpha = 80 packets, or with a queueing
 * delay over baseRTT / 8 (phy), the path is "slow": Reno growth, and with queue > 80 a
 * precautionary decongestion cuts cwnd by min(queue, cwnd/2) (not below reno_count) and sets
 * ssthresh to it. A loss removes lastQ packets bounded to [cwnd/8, cwnd/2] while fewer than
 * rho = 16 rounds in a row were slow, else half of cwnd. Undo is Reno's.
 *
 * Left out: the module's init also lowers snd_cwnd_clamp to 2^32/128 packets so that its
 * arithmetic cannot overflow; BPF may not write snd_cwnd_clamp (net/ipv4/bpf_tcp_ca.c), and
 * TCP's largest window (2^30 bytes) is far below that clamp, so nothing reachable changes.
 * get_info (Vegas diagnostics over inet_diag) is also left out. Registered as ccb_yeah. */
#include "ccb_tcp.h"

#define YEAH_ALPHA 80 /* packets of own backlog tolerated at the bottleneck */
#define YEAH_GAMMA 1 /* fraction of the backlog removed per decongestion */
#define YEAH_DELTA 3 /* a loss removes at least cwnd / 2^3 */
#define YEAH_EPSILON 1 /* a decongestion removes at most cwnd / 2^1 */
#define YEAH_PHY 8 /* queueing delay above baseRTT / 8 means slow */
#define YEAH_RHO 16 /* slow rounds in a row that make a loss a competing flow's */
#define YEAH_ZETA 50 /* fast rounds that reset reno_count */
#define YEAH_SCALABLE_AI_CNT 100U

/* struct vegas (net/ipv4/tcp_vegas.h) followed by YeAH's fields */
struct ccb_yeah {
	__u32 beg_snd_nxt; /* right edge of this round */
	__u32 beg_snd_una; /* left edge of this round */
	__u32 beg_snd_cwnd; /* cwnd at the start of this round */
	__u8 doing_vegas_now;
	__u16 cnt_rtt; /* RTT samples this round */
	__u32 min_rtt; /* smallest RTT sample this round, µs + 1 */
	__u32 base_rtt; /* smallest RTT sample ever, µs + 1 */

	__u32 last_q; /* backlog found at the last decision, packets */
	__u32 doing_reno_now; /* slow rounds in a row (0: fast, Scalable growth) */
	__u32 reno_count; /* floor of a decongestion, packets */
	__u32 fast_count; /* fast rounds since reno_count was last reset */
};

/* vegas_enable() (tcp_vegas.c) */
static __always_inline void yeah_vegas_enable(struct sock *sk)
{
	struct ccb_yeah *y = ccb_ca(sk);

	y->doing_vegas_now = 1;
	y->beg_snd_nxt = ccb_tcp_sk(sk)->snd_nxt;
	y->cnt_rtt = 0;
	y->min_rtt = 0x7fffffff;
}

/* tcp_vegas_init() */
static __always_inline void yeah_vegas_init(struct sock *sk)
{
	struct ccb_yeah *y = ccb_ca(sk);

	y->base_rtt = 0x7fffffff;
	yeah_vegas_enable(sk);
}

/* tcp_yeah_init() */
SEC("struct_ops")
void BPF_PROG(ccb_yeah_init, struct sock *sk)
{
	struct ccb_yeah *y = ccb_ca(sk);

	yeah_vegas_init(sk);
	y->doing_reno_now = 0;
	y->last_q = 0;
	y->reno_count = 2;
}

/* tcp_vegas_pkts_acked() */
SEC("struct_ops")
void BPF_PROG(ccb_yeah_pkts_acked, struct sock *sk, const struct ack_sample *sample)
{
	struct ccb_yeah *y = ccb_ca(sk);
	__u32 vrtt;

	if (sample->rtt_us < 0)
		return;
	vrtt = sample->rtt_us + 1;
	if (vrtt < y->base_rtt)
		y->base_rtt = vrtt;
	y->min_rtt = min(y->min_rtt, vrtt);
	y->cnt_rtt++;
}

/* tcp_vegas_state() */
SEC("struct_ops")
void BPF_PROG(ccb_yeah_set_state, struct sock *sk, __u8 ca_state)
{
	if (ca_state == TCP_CA_Open)
		yeah_vegas_enable(sk);
	else
		((struct ccb_yeah *)ccb_ca(sk))->doing_vegas_now = 0;
}

/* tcp_vegas_cwnd_event() */
SEC("struct_ops")
void BPF_PROG(ccb_yeah_cwnd_event, struct sock *sk, enum tcp_ca_event ev)
{
	if (ev == CA_EVENT_CWND_RESTART || ev == CA_EVENT_TX_START)
		yeah_vegas_init(sk);
}

/* the once-per-round decision of tcp_yeah_cong_avoid() */
static __always_inline void yeah_judge_round(struct tcp_sock *tp, struct ccb_yeah *y)
{
	__u32 rtt = y->min_rtt, queue;
	__u64 bw;

	/* own packets queued at the bottleneck: cwnd (rtt - base) / rtt */
	bw = tp->snd_cwnd;
	bw *= rtt - y->base_rtt;
	bw /= rtt;
	queue = bw;

	if (queue > YEAH_ALPHA || rtt - y->base_rtt > (y->base_rtt / YEAH_PHY)) {
		if (queue > YEAH_ALPHA && tp->snd_cwnd > y->reno_count) {
			/* precautionary decongestion */
			__u32 reduction = min(queue / YEAH_GAMMA, tp->snd_cwnd >> YEAH_EPSILON);

			tp->snd_cwnd -= reduction;
			tp->snd_cwnd = max(tp->snd_cwnd, y->reno_count);
			tp->snd_ssthresh = tp->snd_cwnd;
		}
		if (y->reno_count <= 2)
			y->reno_count = max(tp->snd_cwnd >> 1, 2U);
		else
			y->reno_count++;
		y->doing_reno_now = min(y->doing_reno_now + 1, 0xffffffU);
	} else {
		y->fast_count++;
		if (y->fast_count > YEAH_ZETA) {
			y->reno_count = 2;
			y->fast_count = 0;
		}
		y->doing_reno_now = 0;
	}
	y->last_q = queue;
}

/* tcp_yeah_cong_avoid() */
SEC("struct_ops")
void BPF_PROG(ccb_yeah_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	struct tcp_sock *tp = ccb_tcp_sk(sk);
	struct ccb_yeah *y = ccb_ca(sk);
	bool grow = true;

	if (!ccb_is_cwnd_limited(sk))
		return;
	/* slow start first; what it leaves of acked goes to the avoidance growth */
	if (ccb_in_slow_start(tp))
		grow = (acked = tcp_slow_start(tp, acked)) != 0;
	if (grow) {
		if (!y->doing_reno_now)
			tcp_cong_avoid_ai(tp, min(tp->snd_cwnd, YEAH_SCALABLE_AI_CNT), acked);
		else
			tcp_cong_avoid_ai(tp, tp->snd_cwnd, acked);
	}
	/* do_vegas: once the ACK passes the round's right edge */
	if (ccb_after(ack, y->beg_snd_nxt)) {
		/* with one or two samples the ACKs were likely delayed: no decision */
		if (y->cnt_rtt > 2)
			yeah_judge_round(tp, y);
		y->beg_snd_una = y->beg_snd_nxt;
		y->beg_snd_nxt = tp->snd_nxt;
		y->beg_snd_cwnd = tp->snd_cwnd;
		y->cnt_rtt = 0;
		y->min_rtt = 0x7fffffff;
	}
}

/* tcp_yeah_ssthresh() */
SEC("struct_ops")
__u32 BPF_PROG(ccb_yeah_ssthresh, struct sock *sk)
{
	const struct tcp_sock *tp = ccb_tcp_sk(sk);
	struct ccb_yeah *y = ccb_ca(sk);
	__u32 reduction;

	if (y->doing_reno_now < YEAH_RHO) {
		/* no competing loss-based flow: remove the backlog, within [cwnd/8, cwnd/2] */
		reduction = y->last_q;
		reduction = min(reduction, max(tp->snd_cwnd >> 1, 2U));
		reduction = max(reduction, tp->snd_cwnd >> YEAH_DELTA);
	} else {
		reduction = max(tp->snd_cwnd >> 1, 2U);
	}
	y->fast_count = 0;
	y->reno_count = max(y->reno_count >> 1, 2U);
	return max((int)(tp->snd_cwnd - reduction), 2);
}

SEC("struct_ops")
__u32 BPF_PROG(ccb_yeah_undo_cwnd, struct sock *sk)
{
	return tcp_reno_undo_cwnd(sk);
}

SEC(".struct_ops")
struct tcp_congestion_ops ccb_yeah = {
	.init = (void *)ccb_yeah_init,
	.ssthresh = (void *)ccb_yeah_ssthresh,
	.undo_cwnd = (void *)ccb_yeah_undo_cwnd,
	.cong_avoid = (void *)ccb_yeah_cong_avoid,
	.set_state = (void *)ccb_yeah_set_state,
	.cwnd_event = (void *)ccb_yeah_cwnd_event,
	.pkts_acked = (void *)ccb_yeah_pkts_acked,
	.name = "ccb_yeah",
};
