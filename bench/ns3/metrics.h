// Measurement helpers shared by the three ns-3 benchmark programs: link counters fed by trace
// sinks, the one-line JSON report, peak RSS, quantiles, and "--flag value" argument support.
#pragma once

#include "dumbbell.h"

#include "ns3/core-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

namespace bench
{

/// Wall and CPU seconds of `Simulator::Run()` alone (ns-3 is single-threaded, so the process
/// CPU time over the run is the run's).
struct RunTimes
{
    double wall;
    double cpu;
};

inline RunTimes
RunSimulation()
{
    auto t0 = std::chrono::steady_clock::now();
    std::clock_t c0 = std::clock();
    ns3::Simulator::Run();
    std::clock_t c1 = std::clock();
    auto t1 = std::chrono::steady_clock::now();
    return {std::chrono::duration<double>(t1 - t0).count(), static_cast<double>(c1 - c0) / CLOCKS_PER_SEC};
}

// Packets started on any point-to-point device (PhyTxBegin), bytes started on the bottleneck
// device that carries the data, and drops at that device's drop-tail queue (its Drop trace).
// `packets` is the JSON's `link_transmissions` too: packets put on a link by any NetDevice,
// once per hop, the unit iwlab's summary.link_transmissions counts.
class LinkCounters
{
  public:
    uint64_t packets = 0;
    uint64_t bottleneckBytes = 0; // on-wire: IP packet + 2-byte PPP header
    uint64_t bottleneckPackets = 0;
    uint64_t bottleneckDrops = 0;
    uint64_t otherDrops = 0; // drops at every other device queue (access links, reverse bottleneck)

    void Attach(const Dumbbell& d, ns3::Ptr<ns3::PointToPointNetDevice> dataBottleneck)
    {
        using namespace ns3;
        for (uint32_t i = 0; i < d.allDevices.GetN(); ++i)
        {
            Ptr<PointToPointNetDevice> dev = DynamicCast<PointToPointNetDevice>(d.allDevices.Get(i));
            if (dev == dataBottleneck)
            {
                dev->TraceConnectWithoutContext("PhyTxBegin",
                                                MakeCallback(&LinkCounters::OnBottleneckTx, this));
                dev->GetQueue()->TraceConnectWithoutContext(
                    "Drop",
                    MakeCallback(&LinkCounters::OnBottleneckDrop, this));
            }
            else
            {
                dev->TraceConnectWithoutContext("PhyTxBegin", MakeCallback(&LinkCounters::OnTx, this));
                dev->GetQueue()->TraceConnectWithoutContext("Drop",
                                                            MakeCallback(&LinkCounters::OnDrop, this));
            }
        }
    }

  private:
    void OnTx(ns3::Ptr<const ns3::Packet>) { ++packets; }
    void OnBottleneckTx(ns3::Ptr<const ns3::Packet> p)
    {
        ++packets;
        ++bottleneckPackets;
        bottleneckBytes += p->GetSize();
    }
    void OnBottleneckDrop(ns3::Ptr<const ns3::Packet>) { ++bottleneckDrops; }
    void OnDrop(ns3::Ptr<const ns3::Packet>) { ++otherDrops; }
};

// Peak resident set size of this process in kB (VmHWM), or -1 if unreadable.
inline long
PeakRssKb()
{
    std::ifstream f("/proc/self/status");
    std::string line;
    while (std::getline(f, line))
    {
        if (line.rfind("VmHWM:", 0) == 0)
        {
            return std::stol(line.substr(6));
        }
    }
    return -1;
}

// Quantile q in [0, 1] of `v` by the nearest-rank method (the smallest value with at least
// q·n values at or below it); NaN for an empty sample.
inline double
Quantile(std::vector<double> v, double q)
{
    if (v.empty())
    {
        return std::nan("");
    }
    std::sort(v.begin(), v.end());
    size_t rank = static_cast<size_t>(std::ceil(q * v.size()));
    rank = std::min(std::max<size_t>(rank, 1), v.size());
    return v[rank - 1];
}

// Builds one flat JSON object, keys in insertion order. NaN / infinite numbers become null.
class Json
{
  public:
    Json& Str(const std::string& k, const std::string& v)
    {
        Key(k);
        m_os << '"' << v << '"';
        return *this;
    }
    Json& Int(const std::string& k, int64_t v)
    {
        Key(k);
        m_os << v;
        return *this;
    }
    Json& Num(const std::string& k, double v)
    {
        Key(k);
        if (std::isfinite(v))
        {
            char buf[64];
            std::snprintf(buf, sizeof buf, "%.9g", v);
            m_os << buf;
        }
        else
        {
            m_os << "null";
        }
        return *this;
    }
    // A value already in JSON form (an array or object built by the caller).
    Json& Raw(const std::string& k, const std::string& json)
    {
        Key(k);
        m_os << json;
        return *this;
    }
    Json& Null(const std::string& k)
    {
        Key(k);
        m_os << "null";
        return *this;
    }
    std::string Done() const { return m_os.str() + "}"; }

  private:
    void Key(const std::string& k)
    {
        m_os << (m_first ? "{" : ", ") << '"' << k << "\": ";
        m_first = false;
    }
    std::ostringstream m_os;
    bool m_first = true;
};

// ns-3's CommandLine takes "--name=value"; also accept "--name value" by joining such pairs.
// A lone "--flag" followed by another "--..." (or nothing) is left as it is (a boolean toggle).
inline std::vector<std::string>
JoinFlagValues(int argc, char* argv[])
{
    std::vector<std::string> out;
    out.emplace_back(argc > 0 ? argv[0] : "prog");
    for (int i = 1; i < argc; ++i)
    {
        std::string a = argv[i];
        bool isFlag = a.rfind("--", 0) == 0 && a.find('=') == std::string::npos;
        if (isFlag && i + 1 < argc && std::string(argv[i + 1]).rfind("--", 0) != 0)
        {
            a += "=" + std::string(argv[i + 1]);
            ++i;
        }
        out.push_back(a);
    }
    return out;
}

// Exits with a message naming the flag, its value and the allowed range when out of range.
template <typename T>
void
RequireRange(const char* flag, T value, T lo, T hi)
{
    if (!(value >= lo && value <= hi))
    {
        std::cerr << "error: --" << flag << "=" << value << " is out of range; expected " << lo
                  << ".." << hi << "\n";
        std::exit(2);
    }
}

} // namespace bench
