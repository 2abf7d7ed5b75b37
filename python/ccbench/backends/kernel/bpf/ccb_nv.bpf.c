// SPDX-License-Identifier: GPL-2.0
/* TCP-NV (New Vegas, Brakmo 2016) as a BPF congestion control, for kernels built without
 * CONFIG_TCP_CONG_NV. Follows Linux 6.18 net/ipv4/tcp_nv.c function by function: every ACK
 * with an RTT sample (in the Open or Disorder state) updates an RTT average (1/2 old + 1/2 new),
 * the highest delivery rate of the round (in_flight / avg RTT) and the smallest average RTT,
 * which is replaced by a fresh minimum every 3.75-6.25 s (nv_reset_period 5 s, randomised).
 * Once per round the window that would carry that rate at the minimum RTT, plus nv_pad = 10
 * packets, is the target: a cwnd above it is congestion, decided after at least 2 rounds and
 * 60 samples (30 in the first slow start), which sets ssthresh to the target and removes 30 %
 * of the excess (at least 2 packets); a cwnd at least nv_pad_buffer = 2 below it may grow
 * (after 20 samples), as Reno by default (nv_cwnd_growth_rate_pos = 0) or slower after an RTO
 * (growth factor down to -8, rising again after 8 uncongested decisions). A loss sets
 * ssthresh to 80 % of cwnd (nv_loss_dec_factor 819/1024). All module parameters at their
 * defaults. Undo is Reno's.
 *
 * Restated kernel parts: jiffies and HZ as in ccb_jiffies.h (bpf_jiffies64(), CONFIG_HZ);
 * get_random_bytes() of one byte is the low byte of
 * bpf_get_prandom_u32(). The module asks a BPF sock_ops program for a base RTT
 * (BPF_SOCK_OPS_BASE_RTT), which a congestion control in BPF cannot do; with no sock_ops
 * program attached the kernel answers 0, which disables those RTT bounds, and that is what
 * this port assumes. get_info (inet_diag) is left out. Registered as ccb_nv. */
#include "ccb_jiffies.h"

/* module parameters, defaults */
#define NV_PAD 10 /* packets of queue tolerated */
#define NV_PAD_BUFFER 2 /* no growth within this of nv_pad */
#define NV_RESET_PERIOD 5 /* s between min RTT renewals */
#define NV_MIN_CWND_PARAM 2 /* no decrease below this without losses */
#define NV_CONG_DEC_MULT (30 * 128 / 100) /* remove 30 % of the excess */
#define NV_SSTHRESH_FACTOR 8 /* ssthresh = target * 8/8 on congestion */
#define NV_RTT_FACTOR 128 /* RTT average: 128/256 new */
#define NV_LOSS_DEC_FACTOR 819 /* cwnd * 819/1024 on loss */
#define NV_CWND_GROWTH_RATE_NEG 8
#define NV_CWND_GROWTH_RATE_POS 0
#define NV_DEC_EVAL_MIN_CALLS 60
#define NV_INC_EVAL_MIN_CALLS 20
#define NV_SSTHRESH_EVAL_MIN_CALLS 30
#define NV_STOP_RTT_CNT 10
#define NV_RTT_MIN_CNT 2

#define NV_INIT_RTT 0xffffffffU
#define NV_MIN_CWND 4
#define NV_MIN_CWND_GROW 2
#define NV_TSO_CWND_BOUND 80

struct ccb_nv {
	__u64 nv_min_rtt_reset_jiffies; /* when nv_min_rtt_new takes over */
	__s8 cwnd_growth_factor; /* < 0: less than a packet per round */
	__u8 nv_allow_cwnd_growth;
	__u8 nv_reset; /* reset the round state on returning to Open */
	__u8 nv_catchup;
	__u8 nv_eval_call_cnt; /* samples since the last decision */
	__u8 nv_min_cwnd; /* no decision below this cwnd (grows with TSO/coalescing) */
	__u8 nv_rtt_cnt; /* rounds without a decision */
	__u32 nv_last_rtt; /* RTT average, µs */
	__u32 nv_min_rtt; /* smallest RTT average in use, µs */
	__u32 nv_min_rtt_new; /* smallest RTT average since the last renewal */
	__u32 nv_base_rtt; /* sock_ops base RTT (0: none) */
	__u32 nv_lower_bound_rtt; /* 80 % of nv_base_rtt */
	__u32 nv_rtt_max_rate; /* highest rate of the round, 100 bit/s per byte of MSS */
	__u32 nv_rtt_start_seq; /* the round ends at an ACK beyond this */
	__u32 nv_last_snd_una;
	__u32 nv_no_cong_cnt; /* uncongested decisions in a row */
};

/* tcpnv_reset() */
static __always_inline void nv_reset(struct ccb_nv *ca, const struct tcp_sock *tp)
{
	ca->nv_reset = 0;
	ca->nv_no_cong_cnt = 0;
	ca->nv_rtt_cnt = 0;
	ca->nv_last_rtt = 0;
	ca->nv_rtt_max_rate = 0;
	ca->nv_rtt_start_seq = tp->snd_una;
	ca->nv_eval_call_cnt = 0;
	ca->nv_last_snd_una = tp->snd_una;
}

/* tcpnv_init() */
SEC("struct_ops")
void BPF_PROG(ccb_nv_init, struct sock *sk)
{
	struct ccb_nv *ca = ccb_ca(sk);

	nv_reset(ca, ccb_tcp_sk(sk));
	/* no sock_ops base RTT (see the header) */
	ca->nv_base_rtt = 0;
	ca->nv_lower_bound_rtt = 0;
	ca->nv_allow_cwnd_growth = 1;
	ca->nv_min_rtt_reset_jiffies = bpf_jiffies64() + 2 * CONFIG_HZ;
	ca->nv_min_rtt = NV_INIT_RTT;
	ca->nv_min_rtt_new = NV_INIT_RTT;
	ca->nv_min_cwnd = NV_MIN_CWND;
	ca->nv_catchup = 0;
	ca->cwnd_growth_factor = 0;
}

/* nv_get_bounded_rtt() */
static __always_inline __u32 nv_bounded_rtt(const struct ccb_nv *ca, __u32 val)
{
	if (ca->nv_lower_bound_rtt > 0 && val < ca->nv_lower_bound_rtt)
		return ca->nv_lower_bound_rtt;
	if (ca->nv_base_rtt > 0 && val > ca->nv_base_rtt)
		return ca->nv_base_rtt;
	return val;
}

/* tcpnv_cong_avoid() */
SEC("struct_ops")
void BPF_PROG(ccb_nv_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	struct tcp_sock *tp = ccb_tcp_sk(sk);
	const struct ccb_nv *ca = ccb_ca(sk);
	__u32 cnt;

	if (!ccb_is_cwnd_limited(sk))
		return;
	if (!ca->nv_allow_cwnd_growth)
		return;
	if (ccb_in_slow_start(tp)) {
		acked = tcp_slow_start(tp, acked);
		if (!acked)
			return;
	}
	if (ca->cwnd_growth_factor < 0)
		cnt = tp->snd_cwnd << -ca->cwnd_growth_factor;
	else
		cnt = max(4U, tp->snd_cwnd >> ca->cwnd_growth_factor);
	tcp_cong_avoid_ai(tp, cnt, acked);
}

/* tcpnv_recalc_ssthresh(): 80 % of cwnd */
SEC("struct_ops")
__u32 BPF_PROG(ccb_nv_ssthresh, struct sock *sk)
{
	const struct tcp_sock *tp = ccb_tcp_sk(sk);

	return max((tp->snd_cwnd * NV_LOSS_DEC_FACTOR) >> 10, 2U);
}

/* tcpnv_state() */
SEC("struct_ops")
void BPF_PROG(ccb_nv_set_state, struct sock *sk, __u8 new_state)
{
	struct ccb_nv *ca = ccb_ca(sk);

	if (new_state == TCP_CA_Open && ca->nv_reset) {
		nv_reset(ca, ccb_tcp_sk(sk));
	} else if (new_state == TCP_CA_Loss || new_state == TCP_CA_CWR || new_state == TCP_CA_Recovery) {
		ca->nv_reset = 1;
		ca->nv_allow_cwnd_growth = 0;
		if (new_state == TCP_CA_Loss) {
			/* back to Reno's growth, then slower */
			if (ca->cwnd_growth_factor > 0)
				ca->cwnd_growth_factor = 0;
			if (NV_CWND_GROWTH_RATE_NEG > 0 && ca->cwnd_growth_factor > -8)
				ca->cwnd_growth_factor--;
		}
	}
}

/* the once-per-round decision of tcpnv_acked(); bytes_acked since the previous sample */
static __always_inline void nv_judge_round(struct tcp_sock *tp, struct ccb_nv *ca, __u32 bytes_acked)
{
	__u32 cwnd_by_slope, max_win;

	ca->nv_rtt_start_seq = tp->snd_nxt;
	if (ca->nv_rtt_cnt < 0xff)
		ca->nv_rtt_cnt++;

	/* one sample in a whole round: cwnd too small for TSO/coalescing, raise nv_min_cwnd */
	if (ca->nv_eval_call_cnt == 1 && bytes_acked >= (ca->nv_min_cwnd - 1) * tp->mss_cache &&
	    ca->nv_min_cwnd < (NV_TSO_CWND_BOUND + 1)) {
		ca->nv_min_cwnd = min(ca->nv_min_cwnd + NV_MIN_CWND_GROW, NV_TSO_CWND_BOUND + 1);
		ca->nv_rtt_start_seq = tp->snd_nxt + ca->nv_min_cwnd * tp->mss_cache;
		ca->nv_eval_call_cnt = 0;
		ca->nv_allow_cwnd_growth = 1;
		return;
	}

	/* the window the round's best rate needs at the minimum RTT (rate / slope) */
	cwnd_by_slope = (__u32)(((__u64)ca->nv_rtt_max_rate * ca->nv_min_rtt) / (80000ULL * tp->mss_cache));
	max_win = cwnd_by_slope + NV_PAD;

	if (tp->snd_cwnd > max_win) {
		/* congestion, once enough rounds and samples back it */
		if (ca->nv_rtt_cnt < NV_RTT_MIN_CNT) {
			return;
		} else if (tp->snd_ssthresh == TCP_INFINITE_SSTHRESH) {
			if (ca->nv_eval_call_cnt < NV_SSTHRESH_EVAL_MIN_CALLS)
				return;
		} else if (ca->nv_eval_call_cnt < NV_DEC_EVAL_MIN_CALLS) {
			if (ca->nv_allow_cwnd_growth && ca->nv_rtt_cnt > NV_STOP_RTT_CNT)
				ca->nv_allow_cwnd_growth = 0;
			return;
		}
		ca->nv_allow_cwnd_growth = 0;
		tp->snd_ssthresh = (NV_SSTHRESH_FACTOR * max_win) >> 3;
		if (tp->snd_cwnd - max_win > 2) {
			/* remove 30 % of the excess, at least 2 packets */
			int dec = max(2U, ((tp->snd_cwnd - max_win) * NV_CONG_DEC_MULT) >> 7);

			tp->snd_cwnd -= dec;
		} else if (NV_CONG_DEC_MULT > 0) {
			tp->snd_cwnd = max_win;
		}
		if (ca->cwnd_growth_factor > 0)
			ca->cwnd_growth_factor = 0;
		ca->nv_no_cong_cnt = 0;
	} else if (tp->snd_cwnd <= max_win - NV_PAD_BUFFER) {
		/* no congestion: growth allowed */
		if (ca->nv_eval_call_cnt < NV_INC_EVAL_MIN_CALLS)
			return;
		ca->nv_allow_cwnd_growth = 1;
		ca->nv_no_cong_cnt++;
		if (ca->cwnd_growth_factor < 0 && NV_CWND_GROWTH_RATE_NEG > 0 &&
		    ca->nv_no_cong_cnt > NV_CWND_GROWTH_RATE_NEG) {
			ca->cwnd_growth_factor++;
			ca->nv_no_cong_cnt = 0;
		} else if (ca->cwnd_growth_factor >= 0 && NV_CWND_GROWTH_RATE_POS > 0 &&
			   ca->nv_no_cong_cnt > NV_CWND_GROWTH_RATE_POS) {
			ca->cwnd_growth_factor++;
			ca->nv_no_cong_cnt = 0;
		}
	} else {
		return; /* in between: nothing */
	}

	ca->nv_eval_call_cnt = 0;
	ca->nv_rtt_cnt = 0;
	ca->nv_rtt_max_rate = 0;
	/* never below nv_min_cwnd through NV's own decrease */
	if (tp->snd_cwnd < NV_MIN_CWND_PARAM)
		tp->snd_cwnd = NV_MIN_CWND_PARAM;
}

/* tcpnv_acked() */
SEC("struct_ops")
void BPF_PROG(ccb_nv_pkts_acked, struct sock *sk, const struct ack_sample *sample)
{
	struct tcp_sock *tp = ccb_tcp_sk(sk);
	struct ccb_nv *ca = ccb_ca(sk);
	__u64 now = bpf_jiffies64();
	__u32 avg_rtt, rate, bytes_acked;
	__u8 ca_state = ccb_inet_csk(sk)->icsk_ca_state;

	if (sample->rtt_us < 0)
		return;
	if (ca_state != TCP_CA_Open && ca_state != TCP_CA_Disorder)
		return;
	if (ca->nv_catchup && tp->snd_cwnd >= NV_MIN_CWND_PARAM) {
		ca->nv_catchup = 0;
		ca->nv_allow_cwnd_growth = 0;
	}
	bytes_acked = tp->snd_una - ca->nv_last_snd_una;
	ca->nv_last_snd_una = tp->snd_una;
	if (sample->in_flight == 0)
		return;

	/* RTT average */
	if (NV_RTT_FACTOR > 0) {
		if (ca->nv_last_rtt > 0) {
			avg_rtt = (((__u64)sample->rtt_us) * NV_RTT_FACTOR +
				   ((__u64)ca->nv_last_rtt) * (256 - NV_RTT_FACTOR)) >> 8;
		} else {
			avg_rtt = sample->rtt_us;
			ca->nv_min_rtt = avg_rtt << 1;
		}
		ca->nv_last_rtt = avg_rtt;
	} else {
		avg_rtt = sample->rtt_us;
	}

	/* rate in 100 bit/s units per byte of MSS: in_flight * 8e6 / 100 / rtt */
	rate = (__u32)(((__u64)sample->in_flight) * 80000 / (avg_rtt ?: 1));
	if (ca->nv_rtt_max_rate < rate)
		ca->nv_rtt_max_rate = rate;
	if (ca->nv_eval_call_cnt < 255)
		ca->nv_eval_call_cnt++;

	avg_rtt = nv_bounded_rtt(ca, avg_rtt);
	if (avg_rtt < ca->nv_min_rtt)
		ca->nv_min_rtt = avg_rtt;
	if (avg_rtt < ca->nv_min_rtt_new)
		ca->nv_min_rtt_new = avg_rtt;

	/* renew the minimum every nv_reset_period * [3/4, 5/4) s */
	if ((__s64)(now - ca->nv_min_rtt_reset_jiffies) >= 0) {
		__u8 rand = bpf_get_prandom_u32() & 0xff;

		ca->nv_min_rtt = ca->nv_min_rtt_new;
		ca->nv_min_rtt_new = NV_INIT_RTT;
		ca->nv_min_rtt_reset_jiffies = now + ((NV_RESET_PERIOD * (384 + rand) * CONFIG_HZ) >> 9);
		ca->nv_min_cwnd = max(ca->nv_min_cwnd / 2, NV_MIN_CWND);
	}

	if (ccb_before(ca->nv_rtt_start_seq, tp->snd_una))
		nv_judge_round(tp, ca, bytes_acked);
}

SEC("struct_ops")
__u32 BPF_PROG(ccb_nv_undo_cwnd, struct sock *sk)
{
	return tcp_reno_undo_cwnd(sk);
}

SEC(".struct_ops")
struct tcp_congestion_ops ccb_nv = {
	.init = (void *)ccb_nv_init,
	.ssthresh = (void *)ccb_nv_ssthresh,
	.cong_avoid = (void *)ccb_nv_cong_avoid,
	.set_state = (void *)ccb_nv_set_state,
	.undo_cwnd = (void *)ccb_nv_undo_cwnd,
	.pkts_acked = (void *)ccb_nv_pkts_acked,
	.name = "ccb_nv",
};
