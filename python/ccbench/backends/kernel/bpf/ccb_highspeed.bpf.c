// SPDX-License-Identifier: GPL-2.0
/* HighSpeed TCP (RFC 3649) as a BPF congestion control, for kernels built without
 * CONFIG_TCP_CONG_HSTCP. Follows Linux 6.18 net/ipv4/tcp_highspeed.c: slow start as Reno's;
 * in congestion avoidance a(w) = ai + 1 packets per round trip and on loss a decrease by
 * b(w) = md / 256, both read from the AIMD table of RFC 3649 appendix B at the row whose window
 * band holds cwnd. The row index (ai) moves only in congestion avoidance, so a loss in the
 * first slow start decreases by row 0's b = 0.5.
 *
 * Where it differs from the module: its init lowers tp->snd_cwnd_clamp to 2^32/128 so that
 * cwnd * md cannot overflow; BPF may not write snd_cwnd_clamp, so the port applies that bound
 * in its own additive increase and multiplies in 64 bits. The two agree for every cwnd under
 * 33554431 packets. Registered as ccb_highspeed. */
#include "ccb_tcp.h"

struct hstcp_aimd_row {
	__u32 cwnd; /* upper end of the row's window band, packets */
	__u32 md; /* decrease factor b(w), << 8 */
};

/* RFC 3649 appendix B, as tabulated in the module (b scaled by 256) */
static const struct hstcp_aimd_row hstcp_aimd[] = {
	{ 38, 128 },	{ 118, 112 },	{ 221, 104 },	{ 347, 98 },	{ 495, 93 },	{ 663, 89 },
	{ 851, 86 },	{ 1058, 83 },	{ 1284, 81 },	{ 1529, 78 },	{ 1793, 76 },	{ 2076, 74 },
	{ 2378, 72 },	{ 2699, 71 },	{ 3039, 69 },	{ 3399, 68 },	{ 3778, 66 },	{ 4177, 65 },
	{ 4596, 64 },	{ 5036, 62 },	{ 5497, 61 },	{ 5979, 60 },	{ 6483, 59 },	{ 7009, 58 },
	{ 7558, 57 },	{ 8130, 56 },	{ 8726, 55 },	{ 9346, 54 },	{ 9991, 53 },	{ 10661, 52 },
	{ 11358, 52 },	{ 12082, 51 },	{ 12834, 50 },	{ 13614, 49 },	{ 14424, 48 },	{ 15265, 48 },
	{ 16137, 47 },	{ 17042, 46 },	{ 17981, 45 },	{ 18955, 45 },	{ 19965, 44 },	{ 21013, 43 },
	{ 22101, 43 },	{ 23230, 42 },	{ 24402, 41 },	{ 25618, 41 },	{ 26881, 40 },	{ 28193, 39 },
	{ 29557, 39 },	{ 30975, 38 },	{ 32450, 38 },	{ 33986, 37 },	{ 35586, 36 },	{ 37253, 36 },
	{ 38992, 35 },	{ 40808, 35 },	{ 42707, 34 },	{ 44694, 33 },	{ 46776, 33 },	{ 48961, 32 },
	{ 51258, 32 },	{ 53677, 31 },	{ 56230, 30 },	{ 58932, 30 },	{ 61799, 29 },	{ 64851, 28 },
	{ 68113, 28 },	{ 71617, 27 },	{ 75401, 26 },	{ 79517, 26 },	{ 84035, 25 },	{ 89053, 24 },
};

#define HSTCP_ROWS (sizeof(hstcp_aimd) / sizeof(hstcp_aimd[0]))
#define HSTCP_CWND_BOUND (0xffffffffU / 128) /* hstcp_init's clamp */

struct ccb_hstcp {
	__u32 ai; /* row of hstcp_aimd in use */
};

SEC("struct_ops")
void BPF_PROG(ccb_highspeed_init, struct sock *sk)
{
	((struct ccb_hstcp *)ccb_ca(sk))->ai = 0;
}

/* upper end of row i's window band (above the last row: no bound). The barrier keeps the
 * index check where the verifier sees it. */
static __always_inline __u32 hstcp_band_top(__u32 i)
{
	barrier_var(i);
	if (i >= HSTCP_ROWS)
		return 0xffffffffU;
	return hstcp_aimd[i].cwnd;
}

/* The row whose band (hstcp_aimd[ai - 1].cwnd, hstcp_aimd[ai].cwnd] holds cwnd, the last row
 * above the table. hstcp_cong_avoid walks there from the previous row, up or down; since the
 * bands increase, where the walk ends is the first row whose top is at least cwnd, which this
 * finds by bisection (7 steps, where the verifier refuses a walk of up to 71 rows). */
static __always_inline __u32 hstcp_row(__u32 cwnd)
{
	__u32 lo = 0, hi = HSTCP_ROWS - 1, i;

	for (i = 0; i < 8 && lo < hi; i++) {
		__u32 mid = (lo + hi) / 2;

		if (cwnd <= hstcp_band_top(mid))
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

SEC("struct_ops")
void BPF_PROG(ccb_highspeed_cong_avoid, struct sock *sk, __u32 ack, __u32 acked)
{
	struct tcp_sock *tp = ccb_tcp_sk(sk);
	struct ccb_hstcp *ca = ccb_ca(sk);
	__u32 cwnd = tp->snd_cwnd;

	if (!ccb_is_cwnd_limited(sk))
		return;
	if (ccb_in_slow_start(tp)) {
		tcp_slow_start(tp, acked);
		return;
	}
	ca->ai = hstcp_row(cwnd);
	/* cwnd += a(w) / cwnd per ACK, a(w) = ai + 1 */
	if (cwnd < min(tp->snd_cwnd_clamp, HSTCP_CWND_BOUND)) {
		tp->snd_cwnd_cnt += ca->ai + 1;
		if (tp->snd_cwnd_cnt >= cwnd) {
			tp->snd_cwnd_cnt -= cwnd;
			tp->snd_cwnd = cwnd + 1;
		}
	}
}

SEC("struct_ops")
__u32 BPF_PROG(ccb_highspeed_ssthresh, struct sock *sk)
{
	__u32 cwnd = ccb_tcp_sk(sk)->snd_cwnd;
	__u32 ai = ((struct ccb_hstcp *)ccb_ca(sk))->ai;

	if (ai >= HSTCP_ROWS)
		ai = HSTCP_ROWS - 1;
	return max(cwnd - (__u32)(((__u64)cwnd * hstcp_aimd[ai].md) >> 8), 2U);
}

SEC("struct_ops")
__u32 BPF_PROG(ccb_highspeed_undo_cwnd, struct sock *sk)
{
	return tcp_reno_undo_cwnd(sk);
}

SEC(".struct_ops")
struct tcp_congestion_ops ccb_highspeed = {
	.init = (void *)ccb_highspeed_init,
	.ssthresh = (void *)ccb_highspeed_ssthresh,
	.undo_cwnd = (void *)ccb_highspeed_undo_cwnd,
	.cong_avoid = (void *)ccb_highspeed_cong_avoid,
	.name = "ccb_highspeed",
};
