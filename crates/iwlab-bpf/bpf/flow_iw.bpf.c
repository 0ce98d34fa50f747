// SPDX-License-Identifier: GPL-2.0 OR Apache-2.0
//
// Per-flow initial window for the TCP sockets of one cgroup (draft-you).
//
// Linux has no socket option for the IW, but a sock_ops or cgroup-sockopt program may call
// bpf_setsockopt(SOL_TCP, TCP_BPF_IW, n) before the connection has sent data. Two programs:
//
//  * iwlab_iw_sockops (sock_ops): when a connection of the cgroup is established (either side),
//    set its IW to the cgroup's default (config.default_iw; 0 leaves the route's initcwnd). For
//    the size-based policy that is MinIW: a flow that declared no size is treated as unbounded.
//  * iwlab_iw_setopt (cgroup/setsockopt): an application that knows the size of what it is about
//    to send calls setsockopt(fd, IPPROTO_TCP, IWLAB_TCP_FLOW_IW, &segments, 4) after accept() or
//    connect() and before its first write; the program turns it into TCP_BPF_IW. The kernel never
//    sees the private option. Errors reach the application as errno: EINVAL for a value out of
//    [1, config.max_iw] or a short optval, and the kernel's own EINVAL once data has been sent.
//    Without the program attached the same call fails with ENOPROTOOPT, so the application knows.
//
// Pacing (config.flags, a policy file's [tcp]): Linux paces a socket internally, without fq,
// once its SO_MAX_PACING_RATE has been set (sk_setsockopt() moves sk_pacing_status to
// SK_PACING_NEEDED; tcp_needs_internal_pacing()). At establishment the sock_ops program
//  * IWLAB_CFG_PACED_IW: sets the max rate to IW·MSS per handshake RTT (tcp_sock.srtt_us, the
//    SYN/SYN-ACK sample), so the first flight leaves RTT/IW apart, and asks for the RTT
//    callback; the first RTT sample after establishment (the first flight's first ACK, one
//    RTT later) lifts the limit (~0U: none). A hint that changes the IW also changes the rate.
//    Without an RTT sample (Karn: a retransmitted SYN) the IW leaves unpaced, as in iwlab-core.
//  * IWLAB_CFG_PACING (alone): sets the highest finite rate, which turns internal pacing on,
//    then lifts the limit: the 200 %/120 % of cwnd/SRTT of tcp_update_pacing_rate() remains.
// Either way the socket stays internally paced afterwards. Linux never paces a connection's
// first 10 data segments (tcp_update_skb_after_send(): "Original sch_fq does not pace first
// 10 MSS"): a paced IW of N > 10 leaves 10 back to back, then N − 10 at RTT/N.
//
// The IW value is the caller's: the size → IW function lives in iwlab-core (IwPolicy
// "size-based"), never here.

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#include "flow_iw.h"

#define SOL_SOCKET 1
#define SOL_TCP 6
#define SO_MAX_PACING_RATE 47
#define EINVAL 22
#define PAGE_SIZE 4096
// sk_setsockopt(SO_MAX_PACING_RATE): ~0U means no limit and leaves sk_pacing_status as it is;
// any other value turns internal pacing on.
#define RATE_UNLIMITED 0xffffffffu
#define RATE_HIGHEST 0xfffffffeu

char LICENSE[] SEC("license") = "Dual BSD/GPL";

struct {
    __uint(type, BPF_MAP_TYPE_ARRAY);
    __uint(max_entries, 1);
    __type(key, __u32);
    __type(value, struct iwlab_flow_iw_config);
} iwlab_iw_config SEC(".maps");

struct {
    __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
    __uint(max_entries, IWLAB_STAT_COUNT);
    __type(key, __u32);
    __type(value, __u64);
} iwlab_iw_stats SEC(".maps");

static __always_inline void count(__u32 which)
{
    __u64 *n = bpf_map_lookup_elem(&iwlab_iw_stats, &which);
    if (n)
        *n += 1;
}

static __always_inline struct iwlab_flow_iw_config *config(void)
{
    __u32 zero = 0;
    return bpf_map_lookup_elem(&iwlab_iw_config, &zero);
}

// Bytes per second that send `cwnd` segments of `mss` bytes in one RTT; `srtt8` is
// tcp_sock.srtt_us (µs << 3). 0 without an RTT sample.
static __always_inline __u32 first_flight_rate(__u32 cwnd, __u32 mss, __u32 srtt8)
{
    if (!srtt8 || !cwnd || !mss)
        return 0;
    __u64 rate = (__u64)cwnd * mss * 8000000ull / srtt8;
    if (rate < 1)
        rate = 1;
    if (rate > RATE_HIGHEST)
        rate = RATE_HIGHEST;
    return rate;
}

static __always_inline long max_rate_sockops(struct bpf_sock_ops *skops, __u32 rate)
{
    return bpf_setsockopt(skops, SOL_SOCKET, SO_MAX_PACING_RATE, &rate, sizeof(rate));
}

static __always_inline void start_pacing(struct bpf_sock_ops *skops, __u32 flags)
{
    if (flags & IWLAB_CFG_PACED_IW) {
        __u32 rate = first_flight_rate(skops->snd_cwnd, skops->mss_cache, skops->srtt_us);
        if (!rate) {
            count(IWLAB_STAT_PACED_IW_NO_RTT);
        } else if (max_rate_sockops(skops, rate) == 0) {
            count(IWLAB_STAT_PACED_IW_SET);
            bpf_sock_ops_cb_flags_set(skops, skops->bpf_sock_ops_cb_flags | BPF_SOCK_OPS_RTT_CB_FLAG);
            return;
        } else {
            count(IWLAB_STAT_PACING_FAILED);
        }
    }
    if (max_rate_sockops(skops, RATE_HIGHEST) == 0 && max_rate_sockops(skops, RATE_UNLIMITED) == 0)
        count(IWLAB_STAT_PACING_SET);
    else
        count(IWLAB_STAT_PACING_FAILED);
}

SEC("sockops")
int iwlab_iw_sockops(struct bpf_sock_ops *skops)
{
    if (skops->op == BPF_SOCK_OPS_RTT_CB) {
        // The first RTT sample after establishment: the first flight has left; lift its limit.
        if (max_rate_sockops(skops, RATE_UNLIMITED) == 0)
            count(IWLAB_STAT_PACED_IW_LIFTED);
        else
            count(IWLAB_STAT_PACING_FAILED);
        bpf_sock_ops_cb_flags_set(skops, skops->bpf_sock_ops_cb_flags & ~BPF_SOCK_OPS_RTT_CB_FLAG);
        return 1;
    }
    if (skops->op != BPF_SOCK_OPS_ACTIVE_ESTABLISHED_CB &&
        skops->op != BPF_SOCK_OPS_PASSIVE_ESTABLISHED_CB)
        return 1;
    struct iwlab_flow_iw_config *cfg = config();
    if (!cfg)
        return 1;
    if (cfg->default_iw != 0) {
        int iw = cfg->default_iw;
        if (bpf_setsockopt(skops, SOL_TCP, TCP_BPF_IW, &iw, sizeof(iw)) == 0)
            count(IWLAB_STAT_DEFAULT_SET);
        else
            count(IWLAB_STAT_DEFAULT_FAILED);
    }
    // After the IW: the first flight's rate is read from the cwnd just set.
    if (cfg->flags & (IWLAB_CFG_PACING | IWLAB_CFG_PACED_IW))
        start_pacing(skops, cfg->flags);
    return 1;
}

SEC("cgroup/setsockopt")
int iwlab_iw_setopt(struct bpf_sockopt *ctx)
{
    if (ctx->level != SOL_TCP || ctx->optname != IWLAB_TCP_FLOW_IW) {
        // Not ours: let the kernel handle it. An optval above a page is only partly visible to
        // BPF; optlen 0 tells the kernel to use the application's buffer as it is.
        if (ctx->optlen > PAGE_SIZE)
            ctx->optlen = 0;
        return 1;
    }
    struct iwlab_flow_iw_config *cfg = config();
    __u32 *val = ctx->optval;
    if (ctx->optlen != sizeof(__u32) || (void *)(val + 1) > ctx->optval_end || !cfg) {
        count(IWLAB_STAT_HINT_INVALID);
        bpf_set_retval(-EINVAL);
        return 0;
    }
    int iw = *val;
    if (iw < 1 || (__u32)iw > cfg->max_iw) {
        count(IWLAB_STAT_HINT_INVALID);
        bpf_set_retval(-EINVAL);
        return 0;
    }
    struct bpf_sock *sk = ctx->sk;
    if (!sk) {
        count(IWLAB_STAT_HINT_INVALID);
        bpf_set_retval(-EINVAL);
        return 0;
    }
    // The kernel refuses TCP_BPF_IW (EINVAL) once the connection has sent data.
    long err = bpf_setsockopt(sk, SOL_TCP, TCP_BPF_IW, &iw, sizeof(iw));
    if (err) {
        count(IWLAB_STAT_HINT_REFUSED);
        bpf_set_retval(err);
        return 0;
    }
    count(IWLAB_STAT_HINT_SET);
    // A paced first flight follows the new IW: IW·MSS per handshake RTT.
    struct bpf_tcp_sock *tp = bpf_tcp_sock(sk);
    if (tp && (cfg->flags & IWLAB_CFG_PACED_IW)) {
        __u32 rate = first_flight_rate(iw, tp->mss_cache, tp->srtt_us);
        if (rate && bpf_setsockopt(sk, SOL_SOCKET, SO_MAX_PACING_RATE, &rate, sizeof(rate)) == 0)
            count(IWLAB_STAT_PACED_IW_SET);
    }
    ctx->optlen = -1; // handled: the kernel's setsockopt does not run
    return 1;
}
