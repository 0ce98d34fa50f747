// A dumbbell for the ns-3 side of the benchmark: `left` hosts and `right` hosts, each on its own
// point-to-point access link to one of two routers, the routers joined by the bottleneck link.
//
//   left[i] --access-- routerL ==bottleneck== routerR --access-- right[j]
//
// Queues: every device has a drop-tail device queue (`DropTailQueue<Packet>`, MaxSize in packets)
// and *no* traffic-control queue disc, so a link's buffer is exactly its device queue:
//  - PointToPointHelper::DisableFlowControl() keeps the helper from aggregating a
//    NetDeviceQueueInterface; without one, Ipv4AddressHelper::Assign installs no default
//    pfifo_fast root queue disc, and the traffic-control layer hands every packet straight to
//    the device (with flow control on and no queue disc, the traffic-control layer would drop
//    packets silently while the device queue is "stopped", invisible to the queue's Drop trace).
//  - Build() then checks every device and uninstalls any root queue disc it still finds.
// Like ns-2 and most simulators, the packet being serialised is not in the queue: a full link
// holds Q queued packets plus the one on the wire.
//
// Routing is static and by hand (no global routing): hosts have a default route to their router;
// each router has its directly connected /30s plus one /16 route across the bottleneck. Left
// access links are numbered in 10.1.0.0/16, right ones in 10.2.0.0/16, the bottleneck 10.3.0.0/30.
// (Ipv4GlobalRoutingHelper would give every node a route per link: millions of entries and a
// linear lookup per packet at 1000 flows.)
#pragma once

#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"
#include "ns3/point-to-point-module.h"
#include "ns3/traffic-control-module.h"

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace bench
{

struct LinkSpec
{
    uint64_t rateBps;
    double delayS;
    uint32_t queuePackets;
};

struct DumbbellSpec
{
    uint32_t nLeft;
    uint32_t nRight;
    LinkSpec access;     // every access link, both directions
    LinkSpec bottleneck; // both directions
};

struct Dumbbell
{
    ns3::NodeContainer left;
    ns3::NodeContainer right;
    ns3::Ptr<ns3::Node> routerL;
    ns3::Ptr<ns3::Node> routerR;
    std::vector<ns3::Ipv4Address> leftAddr;  // address of left[i]
    std::vector<ns3::Ipv4Address> rightAddr; // address of right[j]
    ns3::Ptr<ns3::PointToPointNetDevice> bottleneckLR; // routerL's device: left -> right traffic
    ns3::Ptr<ns3::PointToPointNetDevice> bottleneckRL; // routerR's device: right -> left traffic
    ns3::NetDeviceContainer allDevices;
};

inline ns3::PointToPointHelper
MakeLinkHelper(const LinkSpec& s)
{
    using namespace ns3;
    PointToPointHelper p2p;
    p2p.SetDeviceAttribute("DataRate", DataRateValue(DataRate(s.rateBps)));
    p2p.SetChannelAttribute("Delay", TimeValue(Seconds(s.delayS)));
    p2p.SetQueue("ns3::DropTailQueue<Packet>",
                 "MaxSize",
                 QueueSizeValue(QueueSize(QueueSizeUnit::PACKETS, s.queuePackets)));
    p2p.DisableFlowControl();
    return p2p;
}

inline Dumbbell
BuildDumbbell(const DumbbellSpec& spec)
{
    using namespace ns3;
    if (spec.nLeft == 0 || spec.nRight == 0 || spec.nLeft > 16000 || spec.nRight > 16000)
    {
        throw std::invalid_argument("dumbbell: hosts per side must be in 1..16000");
    }
    Dumbbell d;
    d.left.Create(spec.nLeft);
    d.right.Create(spec.nRight);
    NodeContainer routers;
    routers.Create(2);
    d.routerL = routers.Get(0);
    d.routerR = routers.Get(1);

    InternetStackHelper stack;
    stack.SetIpv6StackInstall(false);
    stack.SetRoutingHelper(Ipv4StaticRoutingHelper());
    stack.Install(d.left);
    stack.Install(d.right);
    stack.Install(routers);

    PointToPointHelper access = MakeLinkHelper(spec.access);
    PointToPointHelper bottleneck = MakeLinkHelper(spec.bottleneck);
    Ipv4StaticRoutingHelper srh;

    // Bottleneck first, so each router's interface 1 is the bottleneck.
    NetDeviceContainer bn = bottleneck.Install(d.routerL, d.routerR);
    d.bottleneckLR = DynamicCast<PointToPointNetDevice>(bn.Get(0));
    d.bottleneckRL = DynamicCast<PointToPointNetDevice>(bn.Get(1));
    d.allDevices.Add(bn);
    Ipv4AddressHelper bnAddr("10.3.0.0", "255.255.255.252");
    Ipv4InterfaceContainer bnIf = bnAddr.Assign(bn);

    auto attach = [&](NodeContainer& hosts,
                      Ptr<Node> router,
                      const char* base,
                      std::vector<Ipv4Address>& addrs) {
        Ipv4AddressHelper ah(base, "255.255.255.252");
        for (uint32_t i = 0; i < hosts.GetN(); ++i)
        {
            NetDeviceContainer devs = access.Install(hosts.Get(i), router);
            d.allDevices.Add(devs);
            Ipv4InterfaceContainer ifs = ah.Assign(devs);
            ah.NewNetwork();
            addrs.push_back(ifs.GetAddress(0));
            Ptr<Ipv4StaticRouting> hr = srh.GetStaticRouting(hosts.Get(i)->GetObject<Ipv4>());
            hr->SetDefaultRoute(ifs.GetAddress(1), 1);
        }
    };
    attach(d.left, d.routerL, "10.1.0.0", d.leftAddr);
    attach(d.right, d.routerR, "10.2.0.0", d.rightAddr);

    srh.GetStaticRouting(d.routerL->GetObject<Ipv4>())
        ->AddNetworkRouteTo(Ipv4Address("10.2.0.0"), Ipv4Mask("255.255.0.0"), bnIf.GetAddress(1), 1);
    srh.GetStaticRouting(d.routerR->GetObject<Ipv4>())
        ->AddNetworkRouteTo(Ipv4Address("10.1.0.0"), Ipv4Mask("255.255.0.0"), bnIf.GetAddress(0), 1);

    // No queue disc anywhere: the device queue is the only buffer.
    TrafficControlHelper tch;
    for (uint32_t i = 0; i < d.allDevices.GetN(); ++i)
    {
        Ptr<NetDevice> dev = d.allDevices.Get(i);
        Ptr<TrafficControlLayer> tc = dev->GetNode()->GetObject<TrafficControlLayer>();
        if (tc && tc->GetRootQueueDiscOnDevice(dev))
        {
            tch.Uninstall(dev);
        }
    }
    return d;
}

// Number of devices that still have a root queue disc (0 after BuildDumbbell).
inline uint32_t
CountQueueDiscs(const Dumbbell& d)
{
    using namespace ns3;
    uint32_t n = 0;
    for (uint32_t i = 0; i < d.allDevices.GetN(); ++i)
    {
        Ptr<NetDevice> dev = d.allDevices.Get(i);
        Ptr<TrafficControlLayer> tc = dev->GetNode()->GetObject<TrafficControlLayer>();
        if (tc && tc->GetRootQueueDiscOnDevice(dev))
        {
            ++n;
        }
    }
    return n;
}

} // namespace bench
