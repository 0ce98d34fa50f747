// Shared by the BPF programs (flow_iw.bpf.c) and their loader (src/layout.rs mirrors it; a test
// checks they agree). Python's iwlab.deploy.flow_iw.TCP_FLOW_IW is the same number.
#ifndef IWLAB_FLOW_IW_H
#define IWLAB_FLOW_IW_H

// The private setsockopt(IPPROTO_TCP, …) option name: "IW" in ASCII and a version, far above
// every real TCP option (< 100) and the TCP_BPF_* ones (1001…).
#define IWLAB_TCP_FLOW_IW 0x49570001

struct iwlab_flow_iw_config {
    __u32 default_iw; // segments given by sock_ops at establishment; 0 = the route's initcwnd
    __u32 max_iw;     // largest hint accepted
    __u32 flags;      // IWLAB_CFG_*: created cgroup, pacing, paced IW
    __u32 reserved;
};

#define IWLAB_CFG_CREATED_CGROUP 1u // iwlab made the cgroup (detach may remove it)
#define IWLAB_CFG_PACING 2u         // Linux's internal pacing on every connection (tcp.pacing)
#define IWLAB_CFG_PACED_IW 4u       // the first flight at IW·MSS per handshake RTT (tcp.paced_iw)

enum iwlab_flow_iw_stat {
    IWLAB_STAT_DEFAULT_SET = 0,
    IWLAB_STAT_DEFAULT_FAILED,
    IWLAB_STAT_HINT_SET,
    IWLAB_STAT_HINT_REFUSED,
    IWLAB_STAT_HINT_INVALID,
    IWLAB_STAT_PACING_SET,
    IWLAB_STAT_PACED_IW_SET,
    IWLAB_STAT_PACED_IW_LIFTED,
    IWLAB_STAT_PACED_IW_NO_RTT,
    IWLAB_STAT_PACING_FAILED,
    IWLAB_STAT_COUNT,
};

#endif
