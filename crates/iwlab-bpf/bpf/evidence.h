// Shared by bpf/evidence.bpf.c and its reader (src/evidence.rs mirrors it; a test checks they agree).
#ifndef IWLAB_EVIDENCE_H
#define IWLAB_EVIDENCE_H

// One ring-buffer record. IWLAB_EV_IW_RETRANS: the first retransmission of a segment of the
// connection's initial window, emitted as it is retransmitted; IWLAB_EV_CLOSE: the connection's
// counters as it reaches TCP_CLOSE; IWLAB_EV_RS_RETRANS: the first retransmission of a segment of
// a restart window (the window Linux's tcp_cwnd_restart() sets after an idle longer than the RTO),
// emitted as it is retransmitted, once per restart window.
#define IWLAB_EV_IW_RETRANS 1
#define IWLAB_EV_CLOSE 2
#define IWLAB_EV_RS_RETRANS 3

struct iwlab_evidence {
    __u64 cookie;        // socket cookie (bpf_get_socket_cookie), the key shared with sock_diag
    __u64 time_ns;       // bpf_ktime_get_ns() at emission
    __u32 kind;          // IWLAB_EV_*
    __u32 family;        // AF_INET or AF_INET6
    __u32 local_ip[4];   // network byte order; IPv4 in [0]
    __u32 remote_ip[4];
    __u32 local_port;    // host byte order
    __u32 remote_port;   // host byte order
    __u32 mss;           // mss_cache at establishment
    __u32 iw_segments;   // snd_cwnd at establishment: the initial window
    __u32 bytes_sent;    // original data sent (sequence space, without SYN/FIN)
    __u32 bytes_acked;   // original data acknowledged
    __u32 iw_retrans;    // retransmissions of initial-window segments
    __u32 total_retrans; // all retransmitted segments
    __u32 first_retrans; // offset of the first retransmitted byte from the first data byte; ~0: none
    __u32 data_segs_out;
    __u32 srtt_us;       // smoothed RTT (µs)
    __u32 min_rtt_us;
    __u32 snd_cwnd;      // segments, at emission
    __u32 old_state;     // IWLAB_EV_CLOSE: the TCP state before CLOSE
    __u32 restarts;      // restart windows opened (sends after an idle longer than the RTO)
    __u32 rs_start;      // the last restart window: offset of its first byte from the first data byte
    __u32 rs_window;     // its size, bytes (snd_cwnd after tcp_cwnd_restart() × mss_cache)
    __u32 rs_retrans;    // retransmissions of restart-window segments (all windows)
    __u32 rs_bytes;      // data sent in restart windows (all windows, each at most its size)
    __u32 rs_segments;   // segments of it: ⌈bytes / MSS⌉ per window
};

enum iwlab_evidence_stat {
    IWLAB_EVS_ESTABLISHED = 0, // connections given the callbacks
    IWLAB_EVS_NO_STORAGE,      // sk_storage could not be created: connection not tracked
    IWLAB_EVS_IW_RETRANS,      // IWLAB_EV_IW_RETRANS records emitted
    IWLAB_EVS_CLOSED,          // IWLAB_EV_CLOSE records emitted
    IWLAB_EVS_CLOSED_NO_DATA,  // tracked connections that closed without sending data (no record)
    IWLAB_EVS_RINGBUF_FULL,    // records lost: the reader fell behind
    IWLAB_EVS_RESTARTS,        // restart windows opened
    IWLAB_EVS_RS_RETRANS,      // IWLAB_EV_RS_RETRANS records emitted
    IWLAB_EVS_COUNT,
};

#endif
