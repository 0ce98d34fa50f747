// Scenarios A and D, bulk: `flows` long-lived NewReno/SACK (or, with --cc cubic, CUBIC/SACK)
// flows across a dumbbell, flow i from left host i to right host i, each starting at a uniform
// random time in [0, startWindow] s. Access links 1 Gb/s, 1 ms; bottleneck `bottleneckMbps`,
// `delayMs`, drop-tail of `queuePackets` packets in each direction. Prints one JSON object on
// stdout.
//
//   bulk [--flows=100] [--bottleneckMbps=100] [--delayMs=10] [--queuePackets=250]
//        [--duration=60] [--weakEs=1] [--seed=1] [--run=1] ...   (--help lists all)
//   D:   bulk --flows 4 --bottleneckMbps 1000 --delayMs 20 --queuePackets 4000
//        --accessMbps 10000 --accessQueue 10000 --cc cubic --mss 1448 --timestamps 1
//        --bufBytes 67108864 --duration 5

#include "dumbbell.h"
#include "metrics.h"
#include "tcp_config.h"

#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"

#include <algorithm>
#include <iostream>
#include <map>

using namespace ns3;

namespace
{

// --senderStats 1: retransmitted data segments and the largest cwnd of the senders, from their
// sockets' Tx and CongestionWindow traces (one callback per data segment and per cwnd change,
// so only on request: scenario D), per flow and in all; entries into fast recovery and into
// the loss state (RTO expiries that found the sender outside CA_LOSS) from CongState; and a
// timeline of what the sinks have received every `timelineS` seconds. A data segment is a
// retransmission when it starts below the highest sequence number the socket has sent.
struct SenderStats
{
    struct Flow
    {
        uint64_t dataSegments = 0;
        uint64_t retransmissions = 0;
        uint32_t maxCwndBytes = 0;
        uint32_t high = 0; // highest sequence number sent + 1
        bool sent = false;
        uint64_t recoveries = 0;
        uint64_t lossStates = 0;
    };
    std::vector<Flow> flows;
    std::vector<Ptr<PacketSink>>* sinks = nullptr;
    std::string timeline; // JSON rows [t, rx of flow 0, rx of flow 1, ...]

    void OnTx(size_t i, Ptr<const Packet> p, const TcpHeader& h, Ptr<const TcpSocketBase>)
    {
        if (p->GetSize() == 0)
        {
            return;
        }
        Flow& f = flows[i];
        ++f.dataSegments;
        uint32_t seq = h.GetSequenceNumber().GetValue();
        if (f.sent && seq < f.high)
        {
            ++f.retransmissions;
        }
        else
        {
            f.high = seq + p->GetSize();
            f.sent = true;
        }
    }
    void OnCwnd(size_t i, uint32_t, uint32_t now)
    {
        flows[i].maxCwndBytes = std::max(flows[i].maxCwndBytes, now);
    }
    void OnState(size_t i, TcpSocketState::TcpCongState_t, TcpSocketState::TcpCongState_t now)
    {
        if (now == TcpSocketState::CA_RECOVERY)
        {
            ++flows[i].recoveries;
        }
        else if (now == TcpSocketState::CA_LOSS)
        {
            ++flows[i].lossStates;
        }
    }
    void Hook(size_t i, Ptr<BulkSendApplication> app)
    {
        Ptr<Socket> s = app->GetSocket();
        s->TraceConnectWithoutContext("Tx", MakeCallback(&SenderStats::OnTx, this).Bind(i));
        s->TraceConnectWithoutContext("CongestionWindow", MakeCallback(&SenderStats::OnCwnd, this).Bind(i));
        s->TraceConnectWithoutContext("CongState", MakeCallback(&SenderStats::OnState, this).Bind(i));
    }
    void Sample(double every)
    {
        timeline += timeline.empty() ? "[" : ", ";
        timeline += "[" + std::to_string(Simulator::Now().GetSeconds());
        for (const auto& sink : *sinks)
        {
            timeline += ", " + std::to_string(sink->GetTotalRx());
        }
        timeline += "]";
        Simulator::Schedule(Seconds(every), &SenderStats::Sample, this, every);
    }
    template <typename F>
    std::string PerFlow(F field) const
    {
        std::string out = "[";
        for (size_t i = 0; i < flows.size(); ++i)
        {
            out += (i ? ", " : "") + std::to_string(field(flows[i]));
        }
        return out + "]";
    }
    uint64_t Sum(uint64_t Flow::*field) const
    {
        uint64_t n = 0;
        for (const auto& f : flows)
        {
            n += f.*field;
        }
        return n;
    }
    uint32_t MaxCwnd() const
    {
        uint32_t m = 0;
        for (const auto& f : flows)
        {
            m = std::max(m, f.maxCwndBytes);
        }
        return m;
    }
};

} // namespace

int
main(int argc, char* argv[])
{
    uint32_t flows = 100;
    double bottleneckMbps = 100;
    double delayMs = 10;
    uint32_t queuePackets = 250;
    double duration = 60;
    bool weakEs = true;
    uint32_t seed = 1;
    uint32_t run = 1;
    double startWindow = 1;
    double accessMbps = 1000;
    double accessDelayMs = 1;
    uint32_t accessQueue = 1000;
    uint32_t iw = 10;
    uint32_t sendSize = 65536;
    std::string cc = "newreno";
    uint32_t mss = 1460;
    bool timestamps = false;
    uint32_t bufBytes = 16u << 20;
    bool hystart = false;
    double timelineS = 0.25;
    bool senderStats = false;

    CommandLine cmd(__FILE__);
    cmd.AddValue("flows", "number of flows N (one sender and one receiver host each)", flows);
    cmd.AddValue("bottleneckMbps", "bottleneck rate B, Mb/s", bottleneckMbps);
    cmd.AddValue("delayMs", "bottleneck one-way delay D, ms", delayMs);
    cmd.AddValue("queuePackets", "bottleneck drop-tail queue Q, packets", queuePackets);
    cmd.AddValue("duration", "simulated time, s", duration);
    cmd.AddValue("weakEs", "ns3::Ipv4::WeakEsModel (0 is faster)", weakEs);
    cmd.AddValue("seed", "RngSeedManager seed", seed);
    cmd.AddValue("run", "RngSeedManager run number", run);
    cmd.AddValue("startWindow", "flows start uniformly in [0, startWindow] s", startWindow);
    cmd.AddValue("accessMbps", "access link rate, Mb/s", accessMbps);
    cmd.AddValue("accessDelayMs", "access link one-way delay, ms", accessDelayMs);
    cmd.AddValue("accessQueue", "access link drop-tail queue, packets", accessQueue);
    cmd.AddValue("iw", "initial window, segments", iw);
    cmd.AddValue("sendSize", "bytes per BulkSendApplication write", sendSize);
    cmd.AddValue("cc", "congestion control: newreno or cubic (ns3::TcpCubic)", cc);
    cmd.AddValue("mss", "TCP segment size, payload bytes (1448 with timestamps: 1500 B packets)", mss);
    cmd.AddValue("timestamps", "RFC 7323 timestamps (12 option bytes per segment)", timestamps);
    cmd.AddValue("bufBytes", "send and receive socket buffer, bytes (the largest window)", bufBytes);
    cmd.AddValue("hystart", "TcpCubic's HyStart (iwlab has none)", hystart);
    cmd.AddValue("timelineS", "with --senderStats 1: sample the sinks' bytes every timelineS s", timelineS);
    cmd.AddValue("senderStats", "count retransmissions and the largest cwnd (per-segment traces)", senderStats);
    cmd.Parse(bench::JoinFlagValues(argc, argv));
    bench::RequireRange("flows", flows, 1u, 16000u);
    bench::RequireRange("bottleneckMbps", bottleneckMbps, 1e-3, 1e6);
    bench::RequireRange("delayMs", delayMs, 0.0, 1e5);
    bench::RequireRange("queuePackets", queuePackets, 1u, 10000000u);
    bench::RequireRange("duration", duration, 1e-3, 1e6);
    bench::RequireRange("startWindow", startWindow, 0.0, 1e6);
    bench::RequireRange("timelineS", timelineS, 0.001, 1e6);
    bench::RequireRange("iw", iw, 1u, 1000u);
    bench::RequireRange("sendSize", sendSize, 1u, 1u << 24);
    bench::RequireRange("mss", mss, 100u, 9000u);
    bench::RequireRange("bufBytes", bufBytes, 1u << 16, 1u << 30);
    if (cc != "newreno" && cc != "cubic")
    {
        std::cerr << "error: --cc=" << cc << " is not allowed; expected newreno or cubic\n";
        return 2;
    }

    RngSeedManager::SetSeed(seed);
    RngSeedManager::SetRun(run);
    Config::SetDefault("ns3::Ipv4::WeakEsModel", BooleanValue(weakEs));
    bench::TcpSettings tcp; // NewReno, SACK, no timestamps, del-ACK 2/200 ms, min RTO 1 s
    tcp.iw = iw;
    tcp.cubic = cc == "cubic";
    tcp.hystart = hystart;
    tcp.mss = mss;
    tcp.timestamps = timestamps;
    tcp.sndBufBytes = bufBytes;
    tcp.rcvBufBytes = bufBytes;
    bench::ApplyTcpDefaults(tcp);

    bench::DumbbellSpec spec{flows,
                             flows,
                             {static_cast<uint64_t>(accessMbps * 1e6), accessDelayMs / 1e3, accessQueue},
                             {static_cast<uint64_t>(bottleneckMbps * 1e6), delayMs / 1e3, queuePackets}};
    bench::Dumbbell d = bench::BuildDumbbell(spec);
    bench::LinkCounters counters;
    counters.Attach(d, d.bottleneckLR);

    const uint16_t port = 5001;
    Ptr<UniformRandomVariable> startRv = CreateObject<UniformRandomVariable>();
    startRv->SetStream(1);
    std::vector<Ptr<PacketSink>> sinks;
    SenderStats stats;
    stats.flows.resize(flows);
    stats.sinks = &sinks;
    for (uint32_t i = 0; i < flows; ++i)
    {
        PacketSinkHelper sinkHelper("ns3::TcpSocketFactory",
                                    InetSocketAddress(Ipv4Address::GetAny(), port));
        ApplicationContainer sink = sinkHelper.Install(d.right.Get(i));
        sink.Start(Seconds(0));
        sinks.push_back(DynamicCast<PacketSink>(sink.Get(0)));

        BulkSendHelper src("ns3::TcpSocketFactory", InetSocketAddress(d.rightAddr[i], port));
        src.SetAttribute("MaxBytes", UintegerValue(0));
        src.SetAttribute("SendSize", UintegerValue(sendSize));
        ApplicationContainer app = src.Install(d.left.Get(i));
        Time start = Seconds(startRv->GetValue(0, startWindow));
        app.Start(start);
        if (senderStats)
        {
            // The socket exists once the application has started (its SYN goes out then).
            Simulator::Schedule(start + NanoSeconds(1),
                                &SenderStats::Hook,
                                &stats,
                                static_cast<size_t>(i),
                                DynamicCast<BulkSendApplication>(app.Get(0)));
        }
    }

    if (senderStats)
    {
        Simulator::Schedule(Seconds(timelineS), &SenderStats::Sample, &stats, timelineS);
    }
    Simulator::Stop(Seconds(duration));
    bench::RunTimes times = bench::RunSimulation();

    uint64_t rxBytes = 0;
    std::string perFlowRx = "[";
    for (size_t i = 0; i < sinks.size(); ++i)
    {
        perFlowRx += (i ? ", " : "") + std::to_string(sinks[i]->GetTotalRx());
        rxBytes += sinks[i]->GetTotalRx();
    }
    perFlowRx += "]";
    double bps = bottleneckMbps * 1e6;
    std::cout << bench::Json()
                     .Str("scenario", "bulk")
                     .Int("flows", flows)
                     .Num("bottleneck_mbps", bottleneckMbps)
                     .Num("delay_ms", delayMs)
                     .Int("queue_packets", queuePackets)
                     .Num("duration_s", duration)
                     .Int("weak_es", weakEs)
                     .Int("iw", iw)
                     .Str("cc", cc)
                     .Int("mss", mss)
                     .Int("timestamps", timestamps)
                     .Int("buf_bytes", bufBytes)
                     .Int("seed", seed)
                     .Int("run", run)
                     .Num("wall_s", times.wall)
                     .Num("cpu_s", times.cpu)
                     .Int("events", static_cast<int64_t>(Simulator::GetEventCount()))
                     .Int("packets", counters.packets)
                     .Int("link_transmissions", counters.packets)
                     .Num("link_tx_per_wall_s", counters.packets / times.wall)
                     .Num("bottleneck_utilisation", counters.bottleneckBytes * 8.0 / (bps * duration))
                     .Num("goodput_mbps", rxBytes * 8.0 / duration / 1e6)
                     .Int("bottleneck_drops", counters.bottleneckDrops)
                     .Int("bottleneck_packets", counters.bottleneckPackets)
                     .Int("other_drops", counters.otherDrops)
                     .Int("queue_discs", bench::CountQueueDiscs(d))
                     .Int("sender_stats", senderStats)
                     .Int("data_segments", static_cast<int64_t>(stats.Sum(&SenderStats::Flow::dataSegments)))
                     .Int("retransmissions", static_cast<int64_t>(stats.Sum(&SenderStats::Flow::retransmissions)))
                     .Num("max_cwnd_segments", static_cast<double>(stats.MaxCwnd()) / mss)
                     .Raw("flow_rx_bytes", perFlowRx)
                     .Raw("flow_retransmissions", stats.PerFlow([](const auto& f) { return f.retransmissions; }))
                     .Raw("flow_recoveries", stats.PerFlow([](const auto& f) { return f.recoveries; }))
                     .Raw("flow_loss_states", stats.PerFlow([](const auto& f) { return f.lossStates; }))
                     .Raw("flow_max_cwnd_bytes", stats.PerFlow([](const auto& f) { return f.maxCwndBytes; }))
                     .Raw("timeline_rx_bytes", stats.timeline.empty() ? "[]" : stats.timeline + "]")
                     .Int("peak_rss_kb", bench::PeakRssKb())
                     .Done()
              << std::endl;
    Simulator::Destroy();
    return 0;
}
