// SPDX-License-Identifier: GPL-2.0
/* TCP Vegas as a BPF congestion control, for kernels built without CONFIG_TCP_CONG_VEGAS.
 * Follows Linux 6.18 net/ipv4/tcp_vegas.c: Brakmo and Peterson's Vegas with Linux's choices:
 * the minimum RTT sample of the last round against the smallest ever (baseRTT), a decision
 * once per round (when the ACK passes the snd_nxt recorded a round earlier) and only with more
 * than two RTT samples in the round, slow start left when diff > gamma (cwnd cut to the rate
 * actually achieved, times baseRTT, plus one), then cwnd -1 above beta and +1 below alpha.
 * Parameters: the module's defaults alpha 2, beta 4, gamma 1 (packets). Loss handling is
 * Reno's (tcp_reno_ssthresh, tcp_reno_undo_cwnd), as in the module. Registered as ccb_vegas. */
#include "ccb_tcp.h"

#define VEGAS_ALPHA 2
#define VEGAS_BETA 4
#define VEGAS_GAMMA 1

struct ccb_vegas {
	__u32 beg_snd_nxt; /* right edge of the round being measured */
	__u32 base_rtt; /* smallest RTT sample ever, µs + 1 */
	__u32 min_rtt; /* smallest RTT sample of this round, µs + 1 */
	__u32 cnt_rtt; /* RTT samples this round */
	__u8 doing_vegas_now;
};

static __always_inline void vegas_enable(struct sock *sk)
{
	struct ccb_vegas *v = ccb_ca(sk);

	v->doing_vegas_now = 1;
	v->beg_snd_nxt = ccb_tcp_sk(sk)->snd_nxt;
	v->cnt_rtt = 0;
	v->min_rtt = 0x7fffffff;
}

static __always_inline void vegas_init(struct sock *sk)
{
	struct ccb_vegas *v = ccb_ca(sk);

	v->base_rtt = 0x7fffffff;
	vegas_enable(sk);
}

SEC("struct_ops")
void BPF_PROG(ccb_vegas_init, struct sock *sk)
{
	vegas_init(sk);
}

SEC("struct_ops")
void BPF_PROG(ccb_vegas_pkts_acked, struct sock *sk, const struct ack_sample *sample)
{
	struct ccb_vegas *v = ccb_ca(sk);
	__u32 rtt;

	if (sample->rtt_us < 0)
		return;
	rtt = sample->rtt_us + 1; /* never zero */
	if (rtt < v->base_rtt)
		v->base_rtt = rtt;
	v->min_rtt = min(v->min_rtt, rtt);
	v->cnt_rtt++;
}

SEC("struct_ops")
void BPF_PROG(ccb_vegas_set_state, struct sock *sk, __u8 new_state)
{
	if (new_state == TCP_CA_Open)
		vegas_enable(sk);
	else
		((struct ccb_vegas *)ccb_ca(sk))->doing_vegas_now = 0;
}

SEC("struct_ops")
void BPF_PROG(ccb_vegas_cwnd_event, struct sock *sk, enum tcp_ca_event ev)
{
	/* restarting after idle or the first transmission: wait for a round of fresh samples */
	if (ev == CA_EVENT_CWND_RESTART || ev == CA_EVENT_TX_START)
		vegas_init(sk);
}

SEC("struct_ops")
void BPF_PROG(ccb_vegas_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	struct tcp_sock *tp = ccb_tcp_sk(sk);
	struct ccb_vegas *v = ccb_ca(sk);

	if (!v->doing_vegas_now) {
		tcp_reno_cong_avoid(sk, ack, acked);
		return;
	}
	if (!ccb_after(ack, v->beg_snd_nxt)) {
		if (ccb_in_slow_start(tp))
			tcp_slow_start(tp, acked);
		return;
	}
	/* a round has passed: decide once for it */
	v->beg_snd_nxt = tp->snd_nxt;
	if (v->cnt_rtt <= 2) {
		/* one or two samples are likely delayed ACKs: behave as Reno this round */
		tcp_reno_cong_avoid(sk, ack, acked);
	} else {
		__u32 rtt = v->min_rtt, base = v->base_rtt;
		__u32 cwnd = tp->snd_cwnd;
		/* the window that would have carried the achieved rate over baseRTT */
		__u64 target = (__u64)cwnd * base / rtt;
		/* packets queued in the network by this flow (Vegas's Diff) */
		__u32 diff = cwnd * (rtt - base) / base;

		if (diff > VEGAS_GAMMA && ccb_in_slow_start(tp)) {
			tp->snd_cwnd = min(cwnd, (__u32)target + 1);
			tp->snd_ssthresh = min(tp->snd_ssthresh, tp->snd_cwnd);
		} else if (ccb_in_slow_start(tp)) {
			tcp_slow_start(tp, acked);
		} else if (diff > VEGAS_BETA) {
			tp->snd_cwnd = cwnd - 1;
			tp->snd_ssthresh = min(tp->snd_ssthresh, tp->snd_cwnd);
		} else if (diff < VEGAS_ALPHA) {
			tp->snd_cwnd = cwnd + 1;
		}
		if (tp->snd_cwnd < 2)
			tp->snd_cwnd = 2;
		else if (tp->snd_cwnd > tp->snd_cwnd_clamp)
			tp->snd_cwnd = tp->snd_cwnd_clamp;
		tp->snd_ssthresh = ccb_current_ssthresh(sk);
	}
	v->cnt_rtt = 0;
	v->min_rtt = 0x7fffffff;
}

SEC("struct_ops")
__u32 BPF_PROG(ccb_vegas_ssthresh, struct sock *sk)
{
	return tcp_reno_ssthresh(sk);
}

SEC("struct_ops")
__u32 BPF_PROG(ccb_vegas_undo_cwnd, struct sock *sk)
{
	return tcp_reno_undo_cwnd(sk);
}

SEC(".struct_ops")
struct tcp_congestion_ops ccb_vegas = {
	.init = (void *)ccb_vegas_init,
	.ssthresh = (void *)ccb_vegas_ssthresh,
	.undo_cwnd = (void *)ccb_vegas_undo_cwnd,
	.cong_avoid = (void *)ccb_vegas_cong_avoid,
	.pkts_acked = (void *)ccb_vegas_pkts_acked,
	.set_state = (void *)ccb_vegas_set_state,
	.cwnd_event = (void *)ccb_vegas_cwnd_event,
	.name = "ccb_vegas",
};
