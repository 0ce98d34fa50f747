// The TCP of every endpoint in a benchmark program, set once through ns-3 attribute defaults
// (every socket created afterwards, including the ones forked by a listening socket, uses them).
#pragma once

#include "ns3/core-module.h"
#include "ns3/internet-module.h"

#include <cstdint>

namespace bench
{

struct TcpSettings
{
    uint32_t mss = 1460;          // payload bytes; with no options a data packet is 1500 B of IP
    uint32_t iw = 10;             // initial cwnd, segments
    bool sack = true;             // RFC 2018 / RFC 6675 scoreboard
    bool timestamps = false;      // RFC 7323 timestamps (12 option bytes per segment when on)
    bool windowScaling = true;    // RFC 7323 window scale
    uint32_t delAckCount = 2;     // ACK every this many segments (1 = no delayed ACK)
    double delAckTimeoutS = 0.2;  // delayed-ACK timer
    double minRtoS = 1.0;         // RFC 6298 (2.4)
    double initialRtoS = 1.0;     // RFC 6298 (2.1): RTO before any RTT sample, also the SYN timeout
    double clockGranularityS = 0.001; // G of RFC 6298 (2.3)
    uint32_t sndBufBytes = 16u << 20;
    uint32_t rcvBufBytes = 16u << 20;
    bool limitedTransmit = false; // RFC 3042 (ns-3 default is on; iwlab's default is off)
    double mslS = 120;            // TIME_WAIT lasts 2·MSL (ns-3 default MSL 120 s)
    bool cubic = false;           // ns3::TcpCubic instead of ns3::TcpNewReno (scenario D)
    bool hystart = false;         // TcpCubic's HyStart (ns-3 default on; iwlab has none)
};

// NewReno congestion control (RFC 5681 / 6582) with ns-3's classic recovery (no PRR), or
// with `cubic` ns-3's TcpCubic (Linux-style CUBIC, beta 0.7, C 0.4, fast convergence; HyStart
// as `hystart` says) with the same classic recovery.
//
// Initial RTO: ns-3 has no attribute for it. A SYN or SYN-ACK is timed with ConnTimeout; data
// sent before the first RTT sample uses srtt + max(G, 4·rttvar) computed from
// RttEstimator::InitialEstimation with rttvar 0. Setting ConnTimeout = initial RTO and
// InitialEstimation = initial RTO − G makes both equal to the initial RTO.
inline void
ApplyTcpDefaults(const TcpSettings& s)
{
    using namespace ns3;
    Config::SetDefault("ns3::TcpL4Protocol::SocketType",
                       TypeIdValue(s.cubic ? TcpCubic::GetTypeId() : TcpNewReno::GetTypeId()));
    Config::SetDefault("ns3::TcpCubic::HyStart", BooleanValue(s.hystart));
    Config::SetDefault("ns3::TcpL4Protocol::RecoveryType",
                       TypeIdValue(TcpClassicRecovery::GetTypeId()));
    Config::SetDefault("ns3::TcpSocket::SegmentSize", UintegerValue(s.mss));
    Config::SetDefault("ns3::TcpSocket::InitialCwnd", UintegerValue(s.iw));
    Config::SetDefault("ns3::TcpSocket::DelAckCount", UintegerValue(s.delAckCount));
    Config::SetDefault("ns3::TcpSocket::DelAckTimeout", TimeValue(Seconds(s.delAckTimeoutS)));
    Config::SetDefault("ns3::TcpSocket::SndBufSize", UintegerValue(s.sndBufBytes));
    Config::SetDefault("ns3::TcpSocket::RcvBufSize", UintegerValue(s.rcvBufBytes));
    Config::SetDefault("ns3::TcpSocket::ConnTimeout", TimeValue(Seconds(s.initialRtoS)));
    Config::SetDefault("ns3::TcpSocketBase::Sack", BooleanValue(s.sack));
    Config::SetDefault("ns3::TcpSocketBase::Timestamp", BooleanValue(s.timestamps));
    Config::SetDefault("ns3::TcpSocketBase::WindowScaling", BooleanValue(s.windowScaling));
    Config::SetDefault("ns3::TcpSocketBase::MinRto", TimeValue(Seconds(s.minRtoS)));
    Config::SetDefault("ns3::TcpSocketBase::ClockGranularity",
                       TimeValue(Seconds(s.clockGranularityS)));
    Config::SetDefault("ns3::TcpSocketBase::LimitedTransmit", BooleanValue(s.limitedTransmit));
    Config::SetDefault("ns3::TcpSocketBase::MaxSegLifetime", DoubleValue(s.mslS));
    Config::SetDefault("ns3::RttEstimator::InitialEstimation",
                       TimeValue(Seconds(s.initialRtoS - s.clockGranularityS)));
}

} // namespace bench
