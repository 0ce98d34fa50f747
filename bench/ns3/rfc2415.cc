// Scenario C, RFC 2415 ("Simulation Studies of Increased Initial TCP Window Size"): 4 client
// nodes and 4 server nodes on 10 Mb/s, 1 ms access links; a 1.5 Mb/s, 50 ms bottleneck with a
// 25-packet drop-tail queue. `webClients` HTTP/1.0 clients and `ftpClients` FTP clients;
// client i sits on client node i mod 4 and talks to server node i mod 4, starting at a uniform
// time in [0, 5] s. Data flows server -> client (right -> left across the bottleneck).
//
// Web page: a new connection for the primary object (250-byte request, then the object);
// once it is complete, 3 embedded objects on 3 simultaneous new connections; once all three
// are complete the page is done, and the next page starts after a think time uniform in
// [1, 5] s. Object sizes: Pareto (type I) shape 1.2, scale 1122.46 bytes, capped at 1 MB,
// rounded to whole bytes. Page delay: from opening the primary's connection until the last
// embedded object is received. FTP: back-to-back 1 MB transfers, each on a new connection with
// a 250-byte request; FTP delay: connection open to last byte received.
//
// TCP: NewReno (ns-3 has no plain Reno recovery), no SACK, an ACK for every segment, IW 4,
// initial RTO 3 s, min RTO 0.2 s, clock granularity 10 ms, receive and send buffers of 11
// segments (the maximum window).
//
//   rfc2415 [--webClients=32] [--ftpClients=3] [--iw=4] [--duration=360] ...   (--help)

#include "dumbbell.h"
#include "metrics.h"
#include "reqresp.h"
#include "tcp_config.h"

#include "ns3/core-module.h"
#include "ns3/internet-module.h"

#include <cmath>
#include <iostream>
#include <memory>
#include <vector>

using namespace ns3;

namespace
{

struct Workload
{
    uint32_t requestBytes;
    double paretoShape;
    double paretoScale;
    double objectCap;
    uint32_t embedded;
    double thinkMin;
    double thinkMax;
    uint64_t ftpBytes;
};

// Where client i lives and whom it talks to.
struct Ends
{
    Ptr<Node> node;
    Ipv4Address addr;
    Ipv4Address server;
};

// Random streams shared by all clients (fixed stream numbers; draws happen in event order).
struct Streams
{
    Ptr<UniformRandomVariable> think;
    Ptr<ParetoRandomVariable> size;
    const Workload* w;

    uint64_t ObjectSize()
    {
        double x = size->GetValue(w->paretoScale, w->paretoShape, 0.0); // unbounded, then capped
        return static_cast<uint64_t>(std::llround(std::min(x, w->objectCap)));
    }
};

struct Results
{
    std::vector<double> pageDelay;
    std::vector<double> ftpDelay;
};

class WebClient
{
  public:
    WebClient(Ends e, uint16_t port, bench::Fetcher* f, Streams* s, Results* r)
        : m_e(e),
          m_port(port),
          m_f(f),
          m_s(s),
          m_r(r)
    {
    }

    void StartPage()
    {
        m_pageStart = Simulator::Now().GetSeconds();
        m_f->Fetch(m_e.node,
                   m_e.addr,
                   m_e.server,
                   m_port,
                   m_s->w->requestBytes,
                   m_s->ObjectSize(),
                   [this](double, double) { PrimaryDone(); });
    }

  private:
    void PrimaryDone()
    {
        m_outstanding = m_s->w->embedded;
        if (m_outstanding == 0)
        {
            PageDone();
            return;
        }
        for (uint32_t k = 0; k < m_s->w->embedded; ++k)
        {
            m_f->Fetch(m_e.node,
                       m_e.addr,
                       m_e.server,
                       m_port,
                       m_s->w->requestBytes,
                       m_s->ObjectSize(),
                       [this](double, double) {
                           if (--m_outstanding == 0)
                           {
                               PageDone();
                           }
                       });
        }
    }

    void PageDone()
    {
        m_r->pageDelay.push_back(Simulator::Now().GetSeconds() - m_pageStart);
        double think = m_s->think->GetValue(m_s->w->thinkMin, m_s->w->thinkMax);
        Simulator::Schedule(Seconds(think), &WebClient::StartPage, this);
    }

    Ends m_e;
    uint16_t m_port;
    bench::Fetcher* m_f;
    Streams* m_s;
    Results* m_r;
    double m_pageStart = 0;
    uint32_t m_outstanding = 0;
};

class FtpClient
{
  public:
    FtpClient(Ends e, uint16_t port, bench::Fetcher* f, Streams* s, Results* r)
        : m_e(e),
          m_port(port),
          m_f(f),
          m_s(s),
          m_r(r)
    {
    }

    void StartTransfer()
    {
        m_f->Fetch(m_e.node,
                   m_e.addr,
                   m_e.server,
                   m_port,
                   m_s->w->requestBytes,
                   m_s->w->ftpBytes,
                   [this](double start, double end) {
                       m_r->ftpDelay.push_back(end - start);
                       StartTransfer(); // back to back
                   });
    }

  private:
    Ends m_e;
    uint16_t m_port;
    bench::Fetcher* m_f;
    Streams* m_s;
    Results* m_r;
};

} // namespace

int
main(int argc, char* argv[])
{
    uint32_t webClients = 32;
    uint32_t ftpClients = 3;
    uint32_t nodesPerSide = 4;
    double bottleneckMbps = 1.5;
    double delayMs = 50;
    uint32_t queuePackets = 25;
    double accessMbps = 10;
    double accessDelayMs = 1;
    uint32_t accessQueue = 1000;
    uint32_t iw = 4;
    uint32_t maxWindowSegments = 11;
    uint32_t sndBuf = 0;
    double duration = 360;
    double startWindow = 5;
    bool weakEs = true;
    double msl = 120;
    uint32_t seed = 1;
    uint32_t run = 1;
    Workload w{250, 1.2, 1122.46, 1e6, 3, 1.0, 5.0, 1000000};

    CommandLine cmd(__FILE__);
    cmd.AddValue("webClients", "HTTP/1.0 web clients", webClients);
    cmd.AddValue("ftpClients", "FTP clients (back-to-back transfers)", ftpClients);
    cmd.AddValue("nodes", "client nodes = server nodes", nodesPerSide);
    cmd.AddValue("bottleneckMbps", "bottleneck rate, Mb/s", bottleneckMbps);
    cmd.AddValue("delayMs", "bottleneck one-way delay, ms", delayMs);
    cmd.AddValue("queuePackets", "bottleneck drop-tail queue, packets", queuePackets);
    cmd.AddValue("accessMbps", "access link rate, Mb/s", accessMbps);
    cmd.AddValue("accessDelayMs", "access link one-way delay, ms", accessDelayMs);
    cmd.AddValue("accessQueue", "access link drop-tail queue, packets", accessQueue);
    cmd.AddValue("iw", "initial window, segments", iw);
    cmd.AddValue("maxWindow", "maximum window, segments (receive and send buffer)", maxWindowSegments);
    cmd.AddValue("sndBuf", "send buffer, bytes (0: maxWindow segments; see README)", sndBuf);
    cmd.AddValue("duration", "simulated time, s", duration);
    cmd.AddValue("startWindow", "clients start uniformly in [0, startWindow] s", startWindow);
    cmd.AddValue("requestBytes", "request size, bytes", w.requestBytes);
    cmd.AddValue("paretoShape", "object size Pareto shape", w.paretoShape);
    cmd.AddValue("paretoScale", "object size Pareto scale, bytes", w.paretoScale);
    cmd.AddValue("objectCap", "object size cap, bytes", w.objectCap);
    cmd.AddValue("embedded", "embedded objects per page", w.embedded);
    cmd.AddValue("ftpBytes", "bytes per FTP transfer", w.ftpBytes);
    cmd.AddValue("weakEs", "ns3::Ipv4::WeakEsModel (0 is faster)", weakEs);
    cmd.AddValue("msl", "TCP maximum segment lifetime, s (TIME_WAIT = 2 msl)", msl);
    cmd.AddValue("seed", "RngSeedManager seed", seed);
    cmd.AddValue("run", "RngSeedManager run number", run);
    cmd.Parse(bench::JoinFlagValues(argc, argv));
    bench::RequireRange("webClients", webClients, 0u, 100000u);
    bench::RequireRange("ftpClients", ftpClients, 0u, 100000u);
    bench::RequireRange("nodes", nodesPerSide, 1u, 16000u);
    bench::RequireRange("bottleneckMbps", bottleneckMbps, 1e-3, 1e6);
    bench::RequireRange("queuePackets", queuePackets, 1u, 10000000u);
    bench::RequireRange("iw", iw, 1u, 1000u);
    bench::RequireRange("maxWindow", maxWindowSegments, 1u, 44000u);
    bench::RequireRange("duration", duration, 1e-3, 1e6);
    bench::RequireRange("requestBytes", w.requestBytes, 1u, 1u << 20);
    bench::RequireRange("paretoShape", w.paretoShape, 1e-3, 1e3);
    bench::RequireRange("paretoScale", w.paretoScale, 1.0, 1e9);
    bench::RequireRange("objectCap", w.objectCap, 1.0, 1e12);
    bench::RequireRange<uint64_t>("ftpBytes", w.ftpBytes, 1, 1ull << 40);

    RngSeedManager::SetSeed(seed);
    RngSeedManager::SetRun(run);
    Config::SetDefault("ns3::Ipv4::WeakEsModel", BooleanValue(weakEs));
    bench::TcpSettings tcp;
    tcp.iw = iw;
    tcp.mslS = msl;
    tcp.sack = false;
    tcp.windowScaling = false; // an 11-segment window needs no scaling
    tcp.delAckCount = 1;       // ACK every segment
    tcp.minRtoS = 0.2;
    tcp.initialRtoS = 3.0;
    tcp.clockGranularityS = 0.01;
    // The maximum window caps both ends: the receiver advertises at most 11 segments and the
    // sender never holds more than 11 unacknowledged-or-unsent segments (ns-2's window_ is a
    // sender cap). With a larger send buffer ns-3.37 crashes when the receive window alone
    // limits a sender in fast recovery (README, "ns-3.37 crash").
    tcp.rcvBufBytes = maxWindowSegments * tcp.mss;
    tcp.sndBufBytes = sndBuf > 0 ? sndBuf : maxWindowSegments * tcp.mss;
    bench::ApplyTcpDefaults(tcp);

    bench::DumbbellSpec spec{nodesPerSide,
                             nodesPerSide,
                             {static_cast<uint64_t>(accessMbps * 1e6), accessDelayMs / 1e3, accessQueue},
                             {static_cast<uint64_t>(bottleneckMbps * 1e6), delayMs / 1e3, queuePackets}};
    bench::Dumbbell d = bench::BuildDumbbell(spec);
    bench::LinkCounters counters;
    counters.Attach(d, d.bottleneckRL); // data flows right -> left

    const uint16_t webPort = 80;
    const uint16_t ftpPort = 21;
    bench::SizeRegistry sizes;
    std::vector<std::unique_ptr<bench::ObjectServer>> servers;
    for (uint32_t j = 0; j < nodesPerSide; ++j)
    {
        for (uint16_t port : {webPort, ftpPort})
        {
            servers.push_back(
                std::make_unique<bench::ObjectServer>(d.right.Get(j), port, w.requestBytes, &sizes));
        }
    }

    Streams streams;
    streams.w = &w;
    streams.think = CreateObject<UniformRandomVariable>();
    streams.think->SetStream(2);
    streams.size = CreateObject<ParetoRandomVariable>();
    streams.size->SetStream(3);
    Ptr<UniformRandomVariable> startRv = CreateObject<UniformRandomVariable>();
    startRv->SetStream(1);

    bench::Fetcher webFetcher(&sizes);
    bench::Fetcher ftpFetcher(&sizes);
    Results results;
    auto ends = [&](uint32_t i) {
        uint32_t k = i % nodesPerSide;
        return Ends{d.left.Get(k), d.leftAddr[k], d.rightAddr[k]};
    };
    std::vector<std::unique_ptr<WebClient>> webs;
    for (uint32_t i = 0; i < webClients; ++i)
    {
        webs.push_back(std::make_unique<WebClient>(ends(i), webPort, &webFetcher, &streams, &results));
        Simulator::Schedule(Seconds(startRv->GetValue(0, startWindow)),
                            &WebClient::StartPage,
                            webs.back().get());
    }
    std::vector<std::unique_ptr<FtpClient>> ftps;
    for (uint32_t i = 0; i < ftpClients; ++i)
    {
        ftps.push_back(std::make_unique<FtpClient>(ends(i), ftpPort, &ftpFetcher, &streams, &results));
        Simulator::Schedule(Seconds(startRv->GetValue(0, startWindow)),
                            &FtpClient::StartTransfer,
                            ftps.back().get());
    }

    Simulator::Stop(Seconds(duration));
    bench::RunTimes times = bench::RunSimulation();

    double bps = bottleneckMbps * 1e6;
    uint64_t rxBytes = webFetcher.bytesReceived + ftpFetcher.bytesReceived;
    std::cout << bench::Json()
                     .Str("scenario", "rfc2415")
                     .Int("web_clients", webClients)
                     .Int("ftp_clients", ftpClients)
                     .Num("bottleneck_mbps", bottleneckMbps)
                     .Num("delay_ms", delayMs)
                     .Int("queue_packets", queuePackets)
                     .Int("iw", iw)
                     .Int("max_window_segments", maxWindowSegments)
                     .Int("snd_buf_bytes", tcp.sndBufBytes)
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
                     .Num("goodput_mbps", rxBytes * 8.0 / duration / 1e6)
                     .Int("bottleneck_drops", counters.bottleneckDrops)
                     .Int("bottleneck_packets", counters.bottleneckPackets)
                     .Int("other_drops", counters.otherDrops)
                     .Int("web_bytes", webFetcher.bytesReceived)
                     .Int("ftp_bytes", ftpFetcher.bytesReceived)
                     .Int("pages_completed", results.pageDelay.size())
                     .Num("page_delay_median_s", bench::Quantile(results.pageDelay, 0.5))
                     .Int("ftp_completed", results.ftpDelay.size())
                     .Num("ftp_delay_median_s", bench::Quantile(results.ftpDelay, 0.5))
                     .Int("objects_started", webFetcher.started)
                     .Int("objects_completed", webFetcher.completed)
                     .Int("queue_discs", bench::CountQueueDiscs(d))
                     .Int("peak_rss_kb", bench::PeakRssKb())
                     .Done()
              << std::endl;
    Simulator::Destroy();
    return 0;
}
