/* SPDX-License-Identifier: GPL-2.0 */
/* What the ccbench BPF congestion controls share: the TCP helpers Linux's modules take from
 * include/net/tcp.h (not reachable from BPF, so restated here from their definitions in
 * Linux 6.18) and the kfuncs the kernel exports to BPF congestion controls
 * (net/ipv4/bpf_tcp_ca.c: tcp_reno_*, tcp_slow_start, tcp_cong_avoid_ai). vmlinux.h is
 * generated from the running kernel's BTF by the kernel backend (bpftool btf dump). */
#ifndef CCB_TCP_H
#define CCB_TCP_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char _license[] SEC("license") = "GPL";

#define TCP_INFINITE_SSTHRESH 0x7fffffff
/* tp->ecn_flags (include/linux/tcp.h, 6.18: classic ECN BIT(0), AccECN BIT(4)) */
#define TCP_ECN_MODE_RFC3168 (1 << 0)
#define TCP_ECN_DEMAND_CWR (1 << 2)
#define TCP_ECN_MODE_ACCECN (1 << 4)
#define TCP_ECN_MODE_ANY (TCP_ECN_MODE_RFC3168 | TCP_ECN_MODE_ACCECN)
#define TCP_CONG_NEEDS_ECN 0x2

#ifndef min
#define min(a, b) ((a) < (b) ? (a) : (b))
#endif
#ifndef max
#define max(a, b) ((a) > (b) ? (a) : (b))
#endif

extern void tcp_reno_cong_avoid(struct sock *sk, __u32 ack, __u32 acked) __ksym;
extern __u32 tcp_reno_ssthresh(struct sock *sk) __ksym;
extern __u32 tcp_reno_undo_cwnd(struct sock *sk) __ksym;
extern __u32 tcp_slow_start(struct tcp_sock *tp, __u32 acked) __ksym;
extern void tcp_cong_avoid_ai(struct tcp_sock *tp, __u32 w, __u32 acked) __ksym;

static __always_inline struct tcp_sock *ccb_tcp_sk(const struct sock *sk)
{
	return (struct tcp_sock *)sk;
}

static __always_inline struct inet_connection_sock *ccb_inet_csk(const struct sock *sk)
{
	return (struct inet_connection_sock *)sk;
}

/* the congestion control's private area (inet_csk_ca) */
static __always_inline void *ccb_ca(const struct sock *sk)
{
	return (void *)ccb_inet_csk(sk)->icsk_ca_priv;
}

/* sequence-space comparisons (before()/after() of include/net/tcp.h) */
static __always_inline bool ccb_before(__u32 seq1, __u32 seq2)
{
	return (__s32)(seq1 - seq2) < 0;
}
#define ccb_after(seq2, seq1) ccb_before(seq1, seq2)

static __always_inline bool ccb_in_slow_start(const struct tcp_sock *tp)
{
	return tp->snd_cwnd < tp->snd_ssthresh;
}

/* tcp_current_ssthresh(): in CWR or Recovery keep ssthresh, else at least 3/4 of cwnd */
static __always_inline __u32 ccb_current_ssthresh(const struct sock *sk)
{
	const struct tcp_sock *tp = ccb_tcp_sk(sk);

	if ((1 << ccb_inet_csk(sk)->icsk_ca_state) & ((1 << TCP_CA_CWR) | (1 << TCP_CA_Recovery)))
		return tp->snd_ssthresh;
	return max(tp->snd_ssthresh, ((tp->snd_cwnd >> 1) + (tp->snd_cwnd >> 2)));
}

/* tcp_is_cwnd_limited(): the window, not the application, limits sending (tp->is_cwnd_limited,
 * set by tcp_cwnd_validate); in slow start also while cwnd is below twice the most packets
 * in flight of the last window */
static __always_inline bool ccb_is_cwnd_limited(const struct sock *sk)
{
	const struct tcp_sock *tp = ccb_tcp_sk(sk);

	if (tp->is_cwnd_limited)
		return true;
	if (ccb_in_slow_start(tp))
		return tp->snd_cwnd < 2 * tp->max_packets_out;
	return false;
}

#endif
