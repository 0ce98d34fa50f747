// SPDX-License-Identifier: GPL-2.0 OR Apache-2.0
//
// Exact initial-window loss evidence for the TCP connections of one cgroup (RFC 6928 §2/§12).
//
// One sock_ops program. At establishment (either side) it asks for the retransmission and
// state callbacks (bpf_sock_ops_cb_flags_set) and notes, in the socket's sk_storage, where the
// connection's data starts (snd_nxt: the byte after the SYN) and its initial window (snd_cwnd ×
// mss_cache at that moment — after any TCP_BPF_IW set by a program attached earlier, such as
// flow_iw.bpf.c's). Then:
//  * BPF_SOCK_OPS_RETRANS_CB (tcp_retransmit_skb(): args[0] = the segment's first sequence
//    number, args[2] = the send's error): a retransmitted segment that starts inside
//    [start, start + IW·MSS) is a segment of the initial window lost (or thought lost). The first
//    such retransmission is written to the ring buffer at once, whatever the connection's length
//    and however much of the first flight was acknowledged before;
//  * BPF_SOCK_OPS_STATE_CB to TCP_CLOSE (tcp_set_state(), also on the way to TIME_WAIT): the
//    connection's counters (data sent and acknowledged, retransmissions of the IW and in all)
//    are written to the ring buffer.
//  * Restart windows (RFC 5681 §4.1, RFC 6928 §2/§4): Linux restarts the cwnd in
//    tcp_cwnd_restart(), called by tcp_slow_start_after_idle_check() when data is queued with
//    nothing in flight after an idle longer than the RTO — without a sock_ops callback, and
//    tracing programs (fentry) are not available on every kernel (lockdown). So the program asks
//    for BPF_SOCK_OPS_HDR_OPT_LEN_CB (every segment sent; it reserves no option space) and, at a
//    data segment sent with nothing in flight, evaluates the kernel's own condition on the
//    tcp_sock (bpf_skc_to_tcp_sock, CO-RE): net.ipv4.tcp_slow_start_after_idle on, no
//    cong_control hook (BBR has one), tcp_jiffies32 − lsndtime > icsk_rto — lsndtime is still
//    the previous send's here (__tcp_transmit_skb updates it after the options). The window is
//    [snd_nxt, + snd_cwnd × mss_cache): snd_cwnd is the restarted one. A retransmission inside
//    it is IWLAB_EV_RS_RETRANS (once per window), and the initial window ends where the first
//    restart window begins (the simulator, too, replaces the IW probe by the restart window's).
//    Only after data was sent: the first data of a connection is its initial window.
// A record the ring buffer has no room for is counted (IWLAB_EVS_RINGBUF_FULL), never lost
// silently.

#include <linux/bpf.h>
#include <bpf/bpf_endian.h>
#include <bpf/bpf_helpers.h>

#include "evidence.h"

#define AF_INET6 10
#define TCP_CLOSE 7 // BPF_TCP_CLOSE
#define TCP_ESTABLISHED 1
#define TCP_SYN_SENT 2
#define TCP_SYN_RECV 3
#define NO_RETRANS 0xffffffffu

char LICENSE[] SEC("license") = "Dual BSD/GPL";

// The kernel fields the restart condition reads, relocated against the running kernel's BTF
// (CO-RE): only the members named here, at whatever offset this kernel has them.
struct netns_ipv4 {
    __u8 sysctl_tcp_slow_start_after_idle;
} __attribute__((preserve_access_index));
struct net {
    struct netns_ipv4 ipv4;
} __attribute__((preserve_access_index));
typedef struct {
    struct net *net;
} possible_net_t;
struct sock_common {
    possible_net_t skc_net;
} __attribute__((preserve_access_index));
struct sock {
    struct sock_common __sk_common;
} __attribute__((preserve_access_index));
struct tcp_congestion_ops {
    void *cong_control;
} __attribute__((preserve_access_index));
struct inet_sock {
    struct sock sk;
} __attribute__((preserve_access_index));
struct inet_connection_sock {
    struct inet_sock icsk_inet;
    __u32 icsk_rto;
    const struct tcp_congestion_ops *icsk_ca_ops;
} __attribute__((preserve_access_index));
struct tcp_sock {
    struct inet_connection_sock inet_conn;
    __u32 lsndtime;
} __attribute__((preserve_access_index));

struct conn {
    __u32 start;         // sequence number of the first data byte
    __u32 mss;
    __u32 iw_segments;
    __u32 iw_end;        // offset where the initial window's bytes end: IW·MSS, or the first restart
    __u32 iw_retrans;
    __u32 first_retrans; // offset, NO_RETRANS: none yet
    __u32 reported;      // the IW retransmission was emitted
    __u32 restarts;
    __u32 rs_start;      // the last restart window, offset and bytes
    __u32 rs_window;
    __u32 rs_retrans;
    __u32 rs_reported;   // this restart window's retransmission was emitted
    __u32 rs_bytes_done; // data and segments sent in the restart windows before the last
    __u32 rs_segs_done;
};

// Data sent in the last restart window when `sent` bytes were sent in all: min(snd_nxt, end) −
// start, as the simulator's sender counts a window.
static __always_inline __u32 rs_sent(struct conn *c, __u32 sent)
{
    __u32 b = sent - c->rs_start;
    if ((__s32)b < 0)
        return 0;
    return b < c->rs_window ? b : c->rs_window;
}

static __always_inline __u32 segments(__u32 bytes, __u32 mss)
{
    return mss ? (bytes + mss - 1) / mss : 0;
}

struct {
    __uint(type, BPF_MAP_TYPE_SK_STORAGE);
    __uint(map_flags, BPF_F_NO_PREALLOC);
    __type(key, int);
    __type(value, struct conn);
} iwlab_ev_conns SEC(".maps");

// 4 MiB: ~40 000 records, four seconds of 10 000 connections/s if the reader stalls.
struct {
    __uint(type, BPF_MAP_TYPE_RINGBUF);
    __uint(max_entries, 1 << 22);
} iwlab_ev_records SEC(".maps");

struct {
    __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
    __uint(max_entries, IWLAB_EVS_COUNT);
    __type(key, __u32);
    __type(value, __u64);
} iwlab_ev_stats SEC(".maps");

static __always_inline void count(__u32 which)
{
    __u64 *n = bpf_map_lookup_elem(&iwlab_ev_stats, &which);
    if (n)
        *n += 1;
}

static __always_inline void emit(struct bpf_sock_ops *skops, struct conn *c, __u32 kind, __u32 old_state)
{
    struct iwlab_evidence *r = bpf_ringbuf_reserve(&iwlab_ev_records, sizeof(*r), 0);
    if (!r) {
        count(IWLAB_EVS_RINGBUF_FULL);
        return;
    }
    __u32 sent = skops->snd_nxt - c->start;
    __u32 acked = skops->snd_una - c->start;
    // A FIN takes one sequence number: after ESTABLISHED (or on the way to CLOSE from a FIN
    // state) snd_nxt is one past the data. A reset from ESTABLISHED sent no FIN.
    if (kind == IWLAB_EV_CLOSE && old_state != TCP_ESTABLISHED && old_state != TCP_SYN_SENT &&
        old_state != TCP_SYN_RECV) {
        if (sent)
            sent -= 1;
        if (acked > sent)
            acked = sent;
    }
    if (acked > sent) // an ACK of a FIN not yet counted out above
        acked = sent;
    r->cookie = bpf_get_socket_cookie(skops);
    r->time_ns = bpf_ktime_get_ns();
    r->kind = kind;
    r->family = skops->family;
    if (skops->family == AF_INET6) {
        r->local_ip[0] = skops->local_ip6[0];
        r->local_ip[1] = skops->local_ip6[1];
        r->local_ip[2] = skops->local_ip6[2];
        r->local_ip[3] = skops->local_ip6[3];
        r->remote_ip[0] = skops->remote_ip6[0];
        r->remote_ip[1] = skops->remote_ip6[1];
        r->remote_ip[2] = skops->remote_ip6[2];
        r->remote_ip[3] = skops->remote_ip6[3];
    } else {
        r->local_ip[0] = skops->local_ip4;
        r->remote_ip[0] = skops->remote_ip4;
        r->local_ip[1] = r->local_ip[2] = r->local_ip[3] = 0;
        r->remote_ip[1] = r->remote_ip[2] = r->remote_ip[3] = 0;
    }
    r->local_port = skops->local_port;                     // host byte order
    r->remote_port = bpf_ntohl(skops->remote_port) & 0xffff; // the ctx holds it big-endian, shifted left 16 (sock_ops_convert_ctx_access)
    r->mss = c->mss;
    r->iw_segments = c->iw_segments;
    r->bytes_sent = sent;
    r->bytes_acked = acked;
    r->iw_retrans = c->iw_retrans;
    r->total_retrans = skops->total_retrans;
    r->first_retrans = c->first_retrans;
    r->data_segs_out = skops->data_segs_out;
    r->srtt_us = skops->srtt_us >> 3;
    r->min_rtt_us = skops->rtt_min;
    r->snd_cwnd = skops->snd_cwnd;
    r->old_state = old_state;
    r->restarts = c->restarts;
    r->rs_start = c->rs_start;
    r->rs_window = c->rs_window;
    r->rs_retrans = c->rs_retrans;
    r->rs_bytes = c->rs_bytes_done;
    r->rs_segments = c->rs_segs_done;
    if (c->restarts) {
        __u32 b = rs_sent(c, sent);
        r->rs_bytes += b;
        r->rs_segments += segments(b, c->mss);
    }
    bpf_ringbuf_submit(r, 0);
    count(kind == IWLAB_EV_CLOSE ? IWLAB_EVS_CLOSED : kind == IWLAB_EV_IW_RETRANS ? IWLAB_EVS_IW_RETRANS
                                                                                  : IWLAB_EVS_RS_RETRANS);
}

// Does Linux restart this connection's cwnd before the data segment being sent (with nothing in
// flight)? tcp_slow_start_after_idle_check()'s test, on the tcp_sock.
static __always_inline int restarted(struct bpf_sock *sk)
{
    struct tcp_sock *tp = bpf_skc_to_tcp_sock(sk);
    if (!tp)
        return 0;
    if (!tp->inet_conn.icsk_inet.sk.__sk_common.skc_net.net->ipv4.sysctl_tcp_slow_start_after_idle)
        return 0;
    const struct tcp_congestion_ops *ca = tp->inet_conn.icsk_ca_ops;
    if (!ca || ca->cong_control)
        return 0;
    __s32 delta = (__u32)bpf_jiffies64() - tp->lsndtime;
    return delta > (__s32)tp->inet_conn.icsk_rto;
}

SEC("sockops")
int iwlab_evidence_sockops(struct bpf_sock_ops *skops)
{
    struct bpf_sock *sk = skops->sk;
    if (!sk)
        return 1;
    switch (skops->op) {
    case BPF_SOCK_OPS_ACTIVE_ESTABLISHED_CB:
    case BPF_SOCK_OPS_PASSIVE_ESTABLISHED_CB: {
        struct conn *c = bpf_sk_storage_get(&iwlab_ev_conns, sk, 0, BPF_SK_STORAGE_GET_F_CREATE);
        if (!c) {
            count(IWLAB_EVS_NO_STORAGE);
            return 1;
        }
        c->start = skops->snd_nxt;
        c->mss = skops->mss_cache;
        c->iw_segments = skops->snd_cwnd;
        c->iw_end = skops->snd_cwnd * skops->mss_cache;
        c->iw_retrans = 0;
        c->first_retrans = NO_RETRANS;
        c->reported = 0;
        c->restarts = c->rs_start = c->rs_window = c->rs_retrans = c->rs_reported = 0;
        c->rs_bytes_done = c->rs_segs_done = 0;
        bpf_sock_ops_cb_flags_set(skops, skops->bpf_sock_ops_cb_flags | BPF_SOCK_OPS_RETRANS_CB_FLAG |
                                             BPF_SOCK_OPS_STATE_CB_FLAG | BPF_SOCK_OPS_WRITE_HDR_OPT_CB_FLAG);
        count(IWLAB_EVS_ESTABLISHED);
        return 1;
    }
    case BPF_SOCK_OPS_RETRANS_CB: {
        struct conn *c = bpf_sk_storage_get(&iwlab_ev_conns, sk, 0, 0);
        if (!c)
            return 1;
        __u32 off = skops->args[0] - c->start; // sequence arithmetic, wraps like the kernel's
        if ((int)skops->args[2] != 0)            // the segment did not leave (tcp_retransmit_skb's err)
            return 1;
        if (off < c->first_retrans)
            c->first_retrans = off;
        if (off < c->iw_end) {
            c->iw_retrans += 1;
            if (!c->reported) {
                c->reported = 1;
                emit(skops, c, IWLAB_EV_IW_RETRANS, 0);
            }
        }
        if (c->restarts && off - c->rs_start < c->rs_window) { // off ≥ rs_start, unsigned
            c->rs_retrans += 1;
            if (!c->rs_reported) {
                c->rs_reported = 1;
                emit(skops, c, IWLAB_EV_RS_RETRANS, 0);
            }
        }
        return 1;
    }
    case BPF_SOCK_OPS_HDR_OPT_LEN_CB: {
        // A segment about to be sent. Only a data segment (skb->len is the payload here: the
        // header is pushed later) with nothing in flight can follow a cwnd restart.
        if (skops->packets_out != 0 || skops->skb_len == 0)
            return 1;
        struct conn *c = bpf_sk_storage_get(&iwlab_ev_conns, sk, 0, 0);
        if (!c)
            return 1;
        __u32 off = skops->snd_nxt - c->start;
        if (off == 0 || !restarted(sk))
            return 1;
        if (c->restarts) { // the previous window is over
            __u32 b = rs_sent(c, off);
            c->rs_bytes_done += b;
            c->rs_segs_done += segments(b, c->mss);
        }
        c->restarts += 1;
        c->rs_start = off;
        c->rs_window = skops->snd_cwnd * skops->mss_cache;
        c->rs_reported = 0;
        if (c->iw_end > off)
            c->iw_end = off;
        count(IWLAB_EVS_RESTARTS);
        return 1;
    }
    case BPF_SOCK_OPS_STATE_CB: {
        if (skops->args[1] != TCP_CLOSE)
            return 1;
        struct conn *c = bpf_sk_storage_get(&iwlab_ev_conns, sk, 0, 0);
        if (!c)
            return 1;
        if (skops->snd_nxt == c->start) // no data sent
            count(IWLAB_EVS_CLOSED_NO_DATA);
        else
            emit(skops, c, IWLAB_EV_CLOSE, skops->args[0]);
        bpf_sk_storage_delete(&iwlab_ev_conns, sk);
        return 1;
    }
    }
    return 1;
}
