// Scenario B, short flows: `pairs` host pairs on a dumbbell (client i on the left, server i on
// the right). Flows arrive as a Poisson process of `rate` per second in total; each picks a
// pair uniformly at random and is a new TCP connection: the client connects and the server,
// once the handshake completes, sends `flowBytes` to the client and closes (data flows
// server -> client, right -> left across the bottleneck). A flow's completion time runs from
// the client's connect (its arrival) until the client has received every byte. Arrivals stop
// at `duration`; flows still running then are not counted as completed.
//
//   short_flows [--pairs=20] [--bottleneckMbps=10] [--delayMs=20] [--queuePackets=100]
//               [--flowBytes=14600] [--rate=50] [--iw=10] [--duration=60] ...   (--help)

#include "dumbbell.h"
#include "metrics.h"
#include "reqresp.h"
#include "tcp_config.h"

#include "ns3/core-module.h"
#include "ns3/internet-module.h"

#include <iostream>
#include <memory>
#include <vector>

using namespace ns3;

namespace
{

// Poisson arrivals of flows between uniformly chosen pairs.
class Arrivals
{
  public:
    Arrivals(const bench::Dumbbell& d,
             bench::Fetcher* fetcher,
             uint16_t port,
             uint64_t flowBytes,
             double rate,
             double stopAt)
        : m_d(d),
          m_fetcher(fetcher),
          m_port(port),
          m_flowBytes(flowBytes),
          m_stopAt(stopAt)
    {
        m_gap = CreateObject<ExponentialRandomVariable>();
        m_gap->SetAttribute("Mean", DoubleValue(1.0 / rate));
        m_gap->SetStream(1);
        m_pair = CreateObject<UniformRandomVariable>();
        m_pair->SetStream(2);
    }

    void Start() { Simulator::Schedule(Seconds(m_gap->GetValue()), &Arrivals::Arrive, this); }

    std::vector<double> completion; // seconds, one per completed flow

  private:
    void Arrive()
    {
        uint32_t i = m_pair->GetInteger(0, m_d.left.GetN() - 1);
        m_fetcher->Fetch(m_d.left.Get(i),
                         m_d.leftAddr[i],
                         m_d.rightAddr[i],
                         m_port,
                         0,
                         m_flowBytes,
                         [this](double start, double end) { completion.push_back(end - start); });
        Time next = Seconds(m_gap->GetValue());
        if (Simulator::Now() + next < Seconds(m_stopAt))
        {
            Simulator::Schedule(next, &Arrivals::Arrive, this);
        }
    }

    const bench::Dumbbell& m_d;
    bench::Fetcher* m_fetcher;
    uint16_t m_port;
    uint64_t m_flowBytes;
    double m_stopAt;
    Ptr<ExponentialRandomVariable> m_gap;
    Ptr<UniformRandomVariable> m_pair;
};

} // namespace

int
main(int argc, char* argv[])
{
    uint32_t pairs = 20;
    double bottleneckMbps = 10;
    double delayMs = 20;
    uint32_t queuePackets = 100;
    uint32_t flowBytes = 14600;
    double rate = 50;
    uint32_t iw = 10;
    double duration = 60;
    bool weakEs = true;
    double msl = 120;
    uint32_t seed = 1;
    uint32_t run = 1;
    double accessMbps = 1000;
    double accessDelayMs = 1;
    uint32_t accessQueue = 1000;

    CommandLine cmd(__FILE__);
    cmd.AddValue("pairs", "number of client/server host pairs", pairs);
    cmd.AddValue("bottleneckMbps", "bottleneck rate, Mb/s", bottleneckMbps);
    cmd.AddValue("delayMs", "bottleneck one-way delay, ms", delayMs);
    cmd.AddValue("queuePackets", "bottleneck drop-tail queue, packets", queuePackets);
    cmd.AddValue("flowBytes", "bytes the server sends per flow", flowBytes);
    cmd.AddValue("rate", "flow arrivals per second (Poisson, all pairs together)", rate);
    cmd.AddValue("iw", "initial window, segments (3 or 10 in the study)", iw);
    cmd.AddValue("duration", "simulated time, s (arrivals stop then)", duration);
    cmd.AddValue("weakEs", "ns3::Ipv4::WeakEsModel (0 is faster)", weakEs);
    cmd.AddValue("msl", "TCP maximum segment lifetime, s (TIME_WAIT = 2 msl)", msl);
    cmd.AddValue("seed", "RngSeedManager seed", seed);
    cmd.AddValue("run", "RngSeedManager run number", run);
    cmd.AddValue("accessMbps", "access link rate, Mb/s", accessMbps);
    cmd.AddValue("accessDelayMs", "access link one-way delay, ms", accessDelayMs);
    cmd.AddValue("accessQueue", "access link drop-tail queue, packets", accessQueue);
    cmd.Parse(bench::JoinFlagValues(argc, argv));
    bench::RequireRange("pairs", pairs, 1u, 16000u);
    bench::RequireRange("bottleneckMbps", bottleneckMbps, 1e-3, 1e6);
    bench::RequireRange("delayMs", delayMs, 0.0, 1e5);
    bench::RequireRange("queuePackets", queuePackets, 1u, 10000000u);
    bench::RequireRange("flowBytes", flowBytes, 1u, 1u << 30);
    bench::RequireRange("rate", rate, 1e-6, 1e6);
    bench::RequireRange("iw", iw, 1u, 1000u);
    bench::RequireRange("duration", duration, 1e-3, 1e6);

    RngSeedManager::SetSeed(seed);
    RngSeedManager::SetRun(run);
    Config::SetDefault("ns3::Ipv4::WeakEsModel", BooleanValue(weakEs));
    bench::TcpSettings tcp; // NewReno, SACK, no timestamps, del-ACK 2/200 ms, min RTO 1 s
    tcp.iw = iw;
    tcp.mslS = msl;
    bench::ApplyTcpDefaults(tcp);

    bench::DumbbellSpec spec{pairs,
                             pairs,
                             {static_cast<uint64_t>(accessMbps * 1e6), accessDelayMs / 1e3, accessQueue},
                             {static_cast<uint64_t>(bottleneckMbps * 1e6), delayMs / 1e3, queuePackets}};
    bench::Dumbbell d = bench::BuildDumbbell(spec);
    bench::LinkCounters counters;
    counters.Attach(d, d.bottleneckRL); // data flows right -> left

    const uint16_t port = 8080;
    bench::SizeRegistry sizes;
    std::vector<std::unique_ptr<bench::ObjectServer>> servers;
    for (uint32_t i = 0; i < pairs; ++i)
    {
        servers.push_back(std::make_unique<bench::ObjectServer>(d.right.Get(i), port, 0, &sizes));
    }
    bench::Fetcher fetcher(&sizes);
    Arrivals arrivals(d, &fetcher, port, flowBytes, rate, duration);
    arrivals.Start();

    Simulator::Stop(Seconds(duration));
    bench::RunTimes times = bench::RunSimulation();

    double bps = bottleneckMbps * 1e6;
    std::cout << bench::Json()
                     .Str("scenario", "short_flows")
                     .Int("pairs", pairs)
                     .Num("bottleneck_mbps", bottleneckMbps)
                     .Num("delay_ms", delayMs)
                     .Int("queue_packets", queuePackets)
                     .Int("flow_bytes", flowBytes)
                     .Num("rate_per_s", rate)
                     .Int("iw", iw)
                     .Num("duration_s", duration)
                     .Int("weak_es", weakEs)
                     .Num("msl_s", msl)
                     .Int("seed", seed)
                     .Int("run", run)
                     .Num("wall_s", times.wall)
                     .Num("cpu_s", times.cpu)
                     .Int("events", static_cast<int64_t>(Simulator::GetEventCount()))
                     .Int("packets", counters.packets)
                     .Int("link_transmissions", counters.packets)
                     .Num("link_tx_per_wall_s", counters.packets / times.wall)
                     .Num("bottleneck_utilisation", counters.bottleneckBytes * 8.0 / (bps * duration))
                     .Num("goodput_mbps", fetcher.bytesReceived * 8.0 / duration / 1e6)
                     .Int("bottleneck_drops", counters.bottleneckDrops)
                     .Int("bottleneck_packets", counters.bottleneckPackets)
                     .Int("other_drops", counters.otherDrops)
                     .Int("flows_started", fetcher.started)
                     .Int("flows_completed", fetcher.completed)
                     .Num("completion_median_s", bench::Quantile(arrivals.completion, 0.5))
                     .Num("completion_p99_s", bench::Quantile(arrivals.completion, 0.99))
                     .Int("queue_discs", bench::CountQueueDiscs(d))
                     .Int("peak_rss_kb", bench::PeakRssKb())
                     .Done()
              << std::endl;
    Simulator::Destroy();
    return 0;
}
