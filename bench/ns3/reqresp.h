// Request/response transfers over ns-3 TCP sockets, one new connection per transfer: the
// client opens a connection, sends `requestBytes` once connected (none when 0), and the server
// answers with `responseBytes` and closes. Used by short_flows (request 0) and rfc2415 (web
// objects and FTP files).
//
// The response size travels out of band: the client registers it under its (address, port)
// before connecting and the server takes it when it accepts the connection. A transfer
// completes when the client has received all response bytes; the client then closes too.
#pragma once

#include "ns3/core-module.h"
#include "ns3/internet-module.h"
#include "ns3/network-module.h"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <unordered_map>
#include <utility>

namespace bench
{

// Response sizes keyed by the client end of a connection.
class SizeRegistry
{
  public:
    using Key = std::pair<uint32_t, uint16_t>; // IPv4 address, port

    void Put(ns3::Ipv4Address a, uint16_t port, uint64_t bytes) { m_sizes[{a.Get(), port}] = bytes; }

    // The size registered for `from`; 0 (and a count in `unknown`) if none.
    uint64_t Take(const ns3::Address& from)
    {
        ns3::InetSocketAddress isa = ns3::InetSocketAddress::ConvertFrom(from);
        auto it = m_sizes.find({isa.GetIpv4().Get(), isa.GetPort()});
        if (it == m_sizes.end())
        {
            ++unknown;
            return 0;
        }
        uint64_t n = it->second;
        m_sizes.erase(it);
        return n;
    }

    uint64_t unknown = 0;

  private:
    std::map<Key, uint64_t> m_sizes;
};

// Listens on one node; for each accepted connection waits for the request, then writes the
// registered response as fast as the send buffer allows, then closes.
class ObjectServer
{
  public:
    ObjectServer(ns3::Ptr<ns3::Node> node, uint16_t port, uint32_t requestBytes, SizeRegistry* reg)
        : m_requestBytes(requestBytes),
          m_reg(reg)
    {
        using namespace ns3;
        m_listener = Socket::CreateSocket(node, TcpSocketFactory::GetTypeId());
        m_listener->Bind(InetSocketAddress(Ipv4Address::GetAny(), port));
        m_listener->Listen();
        m_listener->SetAcceptCallback(MakeNullCallback<bool, Ptr<Socket>, const Address&>(),
                                      MakeCallback(&ObjectServer::OnAccept, this));
    }

  private:
    struct Conn
    {
        ns3::Ptr<ns3::Socket> sock;
        uint64_t requestGot = 0;
        uint64_t toSend = 0;
        bool responding = false;
    };

    void OnAccept(ns3::Ptr<ns3::Socket> s, const ns3::Address& from)
    {
        using namespace ns3;
        Conn& c = m_conns[PeekPointer(s)];
        c.sock = s;
        c.toSend = m_reg->Take(from);
        s->SetRecvCallback(MakeCallback(&ObjectServer::OnRecv, this));
        s->SetSendCallback(MakeCallback(&ObjectServer::OnSendSpace, this));
        if (m_requestBytes == 0)
        {
            // After the socket has finished processing the handshake's ACK.
            Simulator::ScheduleNow(&ObjectServer::Respond, this, PeekPointer(s));
        }
    }

    void OnRecv(ns3::Ptr<ns3::Socket> s)
    {
        using namespace ns3;
        uint64_t n = 0;
        while (Ptr<Packet> p = s->Recv())
        {
            if (p->GetSize() == 0)
            {
                break;
            }
            n += p->GetSize();
        }
        auto it = m_conns.find(PeekPointer(s));
        if (it == m_conns.end())
        {
            return;
        }
        it->second.requestGot += n;
        if (!it->second.responding && it->second.requestGot >= m_requestBytes)
        {
            Respond(PeekPointer(s));
        }
    }

    void OnSendSpace(ns3::Ptr<ns3::Socket> s, uint32_t)
    {
        auto it = m_conns.find(ns3::PeekPointer(s));
        if (it != m_conns.end() && it->second.responding)
        {
            Pump(it);
        }
    }

    void Respond(ns3::Socket* key)
    {
        auto it = m_conns.find(key);
        if (it == m_conns.end() || it->second.responding)
        {
            return;
        }
        it->second.responding = true;
        Pump(it);
    }

    // Writes as much of the response as the send buffer takes; closes after the last byte
    // (ns-3 sends the FIN once the buffer has drained).
    void Pump(std::unordered_map<ns3::Socket*, Conn>::iterator it)
    {
        Conn& c = it->second;
        while (c.toSend > 0)
        {
            uint32_t room = c.sock->GetTxAvailable();
            if (room == 0)
            {
                return;
            }
            uint32_t n = static_cast<uint32_t>(std::min<uint64_t>(c.toSend, room));
            if (c.sock->Send(ns3::Create<ns3::Packet>(n)) < 0)
            {
                return;
            }
            c.toSend -= n;
        }
        c.sock->Close();
        m_conns.erase(it);
    }

    uint32_t m_requestBytes;
    SizeRegistry* m_reg;
    ns3::Ptr<ns3::Socket> m_listener;
    std::unordered_map<ns3::Socket*, Conn> m_conns;
};

// Opens client connections and reports each completed transfer as (start, end) in seconds.
class Fetcher
{
  public:
    using Done = std::function<void(double start, double end)>;

    explicit Fetcher(SizeRegistry* reg)
        : m_reg(reg)
    {
    }

    // A new connection from `node` (whose address is `nodeAddr`) to `server`:`port`.
    void Fetch(ns3::Ptr<ns3::Node> node,
               ns3::Ipv4Address nodeAddr,
               ns3::Ipv4Address server,
               uint16_t port,
               uint32_t requestBytes,
               uint64_t responseBytes,
               Done done)
    {
        using namespace ns3;
        Ptr<Socket> s = Socket::CreateSocket(node, TcpSocketFactory::GetTypeId());
        s->Bind();
        Address local;
        s->GetSockName(local);
        m_reg->Put(nodeAddr, InetSocketAddress::ConvertFrom(local).GetPort(), responseBytes);
        Transfer& t = m_transfers[PeekPointer(s)];
        t.sock = s;
        t.request = requestBytes;
        t.expect = responseBytes;
        t.start = Simulator::Now().GetSeconds();
        t.done = std::move(done);
        ++started;
        s->SetConnectCallback(MakeCallback(&Fetcher::OnConnected, this),
                              MakeCallback(&Fetcher::OnConnectFailed, this));
        s->SetRecvCallback(MakeCallback(&Fetcher::OnRecv, this));
        s->Connect(InetSocketAddress(server, port));
    }

    uint64_t started = 0;
    uint64_t completed = 0;
    uint64_t failed = 0;
    uint64_t bytesReceived = 0;

  private:
    struct Transfer
    {
        ns3::Ptr<ns3::Socket> sock;
        uint32_t request = 0;
        uint64_t expect = 0;
        uint64_t got = 0;
        double start = 0;
        Done done;
    };

    void OnConnected(ns3::Ptr<ns3::Socket> s)
    {
        auto it = m_transfers.find(ns3::PeekPointer(s));
        if (it != m_transfers.end() && it->second.request > 0)
        {
            s->Send(ns3::Create<ns3::Packet>(it->second.request));
        }
    }

    void OnConnectFailed(ns3::Ptr<ns3::Socket> s)
    {
        ++failed;
        m_transfers.erase(ns3::PeekPointer(s));
    }

    void OnRecv(ns3::Ptr<ns3::Socket> s)
    {
        using namespace ns3;
        uint64_t n = 0;
        while (Ptr<Packet> p = s->Recv())
        {
            if (p->GetSize() == 0)
            {
                break;
            }
            n += p->GetSize();
        }
        bytesReceived += n;
        auto it = m_transfers.find(PeekPointer(s));
        if (it == m_transfers.end())
        {
            return;
        }
        Transfer& t = it->second;
        t.got += n;
        if (t.got >= t.expect)
        {
            Transfer done = std::move(t);
            m_transfers.erase(it);
            ++completed;
            s->Close();
            done.done(done.start, Simulator::Now().GetSeconds());
        }
    }

    SizeRegistry* m_reg;
    std::unordered_map<ns3::Socket*, Transfer> m_transfers;
};

} // namespace bench
