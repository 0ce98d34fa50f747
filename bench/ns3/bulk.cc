// Scenario A, bulk: `flows` long-lived NewReno/SACK flows across a dumbbell, flow i from left
// host i to right host i, each starting at a uniform random time in [0, startWindow] s.
// Access links 1 Gb/s, 1 ms; bottleneck `bottleneckMbps`, `delayMs`, drop-tail of
// `queuePackets` packets in each direction. Prints one JSON object on stdout.
//
//   bulk [--flows=100] [--bottleneckMbps=100] [--delayMs=10] [--queuePackets=250]
//        [--duration=60] [--weakEs=1] [--seed=1] [--run=1] ...   (--help lists all)

#include "dumbbell.h"
#include "metrics.h"
#include "tcp_config.h"

#include "ns3/applications-module.h"
#include "ns3/core-module.h"
#include "ns3/internet-module.h"

#include <iostream>

using namespace ns3;

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
    cmd.Parse(bench::JoinFlagValues(argc, argv));
    bench::RequireRange("flows", flows, 1u, 16000u);
    bench::RequireRange("bottleneckMbps", bottleneckMbps, 1e-3, 1e6);
    bench::RequireRange("delayMs", delayMs, 0.0, 1e5);
    bench::RequireRange("queuePackets", queuePackets, 1u, 10000000u);
    bench::RequireRange("duration", duration, 1e-3, 1e6);
    bench::RequireRange("startWindow", startWindow, 0.0, 1e6);
    bench::RequireRange("iw", iw, 1u, 1000u);
    bench::RequireRange("sendSize", sendSize, 1u, 1u << 24);

    RngSeedManager::SetSeed(seed);
    RngSeedManager::SetRun(run);
    Config::SetDefault("ns3::Ipv4::WeakEsModel", BooleanValue(weakEs));
    bench::TcpSettings tcp; // NewReno, SACK, no timestamps, del-ACK 2/200 ms, min RTO 1 s
    tcp.iw = iw;
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
        app.Start(Seconds(startRv->GetValue(0, startWindow)));
    }

    Simulator::Stop(Seconds(duration));
    bench::RunTimes times = bench::RunSimulation();

    uint64_t rxBytes = 0;
    for (const auto& s : sinks)
    {
        rxBytes += s->GetTotalRx();
    }
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
                     .Int("seed", seed)
                     .Int("run", run)
                     .Num("wall_s", times.wall)
                     .Num("cpu_s", times.cpu)
                     .Int("events", static_cast<int64_t>(Simulator::GetEventCount()))
                     .Int("packets", counters.packets)
                     .Num("bottleneck_utilisation", counters.bottleneckBytes * 8.0 / (bps * duration))
                     .Num("goodput_mbps", rxBytes * 8.0 / duration / 1e6)
                     .Int("bottleneck_drops", counters.bottleneckDrops)
                     .Int("bottleneck_packets", counters.bottleneckPackets)
                     .Int("other_drops", counters.otherDrops)
                     .Int("queue_discs", bench::CountQueueDiscs(d))
                     .Int("peak_rss_kb", bench::PeakRssKb())
                     .Done()
              << std::endl;
    Simulator::Destroy();
    return 0;
}
