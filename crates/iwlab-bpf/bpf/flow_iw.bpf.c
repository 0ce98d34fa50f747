// SPDX-License-Identifier: GPL-2.0 OR Apache-2.0
//
// Per-flow initial window for the TCP sockets of one cgroup (issue 11 item 7; draft-you).
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
// The IW value is the caller's: the size → IW function lives in iwlab-core (IwPolicy
// "size-based"), never here.

#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#include "flow_iw.h"

#define SOL_TCP 6
#define EINVAL 22
#define PAGE_SIZE 4096

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

SEC("sockops")
int iwlab_iw_sockops(struct bpf_sock_ops *skops)
{
    if (skops->op != BPF_SOCK_OPS_ACTIVE_ESTABLISHED_CB &&
        skops->op != BPF_SOCK_OPS_PASSIVE_ESTABLISHED_CB)
        return 1;
    struct iwlab_flow_iw_config *cfg = config();
    if (!cfg || cfg->default_iw == 0)
        return 1;
    int iw = cfg->default_iw;
    if (bpf_setsockopt(skops, SOL_TCP, TCP_BPF_IW, &iw, sizeof(iw)) == 0)
        count(IWLAB_STAT_DEFAULT_SET);
    else
        count(IWLAB_STAT_DEFAULT_FAILED);
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
    ctx->optlen = -1; // handled: the kernel's setsockopt does not run
    return 1;
}
