//! A UDP socket that counts what an endpoint sends to and receives from each peer: quinn has
//! no per-datagram hook, so the server's first flight and its anti-amplification budget
//! (RFC 9000 §8.1) are read at the socket. One datagram per send (no segmentation offload), so
//! the counts are datagrams.

use std::collections::HashMap;
use std::io::{self, IoSliceMut};
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use quinn::udp::{RecvMeta, Transmit};
use quinn::{AsyncUdpSocket, UdpPoller};

/// What went to and came from one peer.
#[derive(Copy, Clone, Debug, Default)]
pub struct Flight {
    /// Counting the first flight: from the first response byte until the next datagram in.
    pub open: bool,
    pub ff_bytes: u64,
    pub ff_packets: u64,
    /// Datagrams received, and the size of the first.
    pub received: u64,
    pub first_dgram: u64,
    /// UDP payload bytes sent before the peer's second datagram arrived.
    pub before_2nd: u64,
}

#[derive(Clone, Debug, Default)]
pub struct Flights(Arc<Mutex<HashMap<SocketAddr, Flight>>>);

impl Flights {
    pub fn open(&self, peer: SocketAddr, open: bool) {
        self.0.lock().unwrap().entry(peer).or_default().open = open;
    }

    /// The peer's counts, forgotten (its connection is over).
    pub fn take(&self, peer: SocketAddr) -> Flight {
        self.0.lock().unwrap().remove(&peer).unwrap_or_default()
    }
}

#[derive(Debug)]
pub struct Counting {
    inner: Arc<dyn AsyncUdpSocket>,
    flights: Flights,
}

impl Counting {
    pub fn new(inner: Arc<dyn AsyncUdpSocket>, flights: Flights) -> Self {
        Counting { inner, flights }
    }
}

impl AsyncUdpSocket for Counting {
    fn create_io_poller(self: Arc<Self>) -> Pin<Box<dyn UdpPoller>> {
        self.inner.clone().create_io_poller()
    }

    fn try_send(&self, t: &Transmit) -> io::Result<()> {
        self.inner.try_send(t)?;
        let n = t.contents.len() as u64;
        let mut all = self.flights.0.lock().unwrap();
        let f = all.entry(t.destination).or_default();
        if f.open {
            f.ff_bytes += n;
            f.ff_packets += 1;
        }
        if f.received < 2 {
            f.before_2nd += n;
        }
        Ok(())
    }

    fn poll_recv(
        &self,
        cx: &mut Context,
        bufs: &mut [IoSliceMut<'_>],
        meta: &mut [RecvMeta],
    ) -> Poll<io::Result<usize>> {
        let r = self.inner.poll_recv(cx, bufs, meta);
        if let Poll::Ready(Ok(n)) = &r {
            let mut all = self.flights.0.lock().unwrap();
            for m in &meta[..*n] {
                let f = all.entry(m.addr).or_default();
                let stride = m.stride.max(1);
                let mut left = m.len;
                while left > 0 {
                    let k = left.min(stride);
                    left -= k;
                    f.received += 1;
                    if f.received == 1 {
                        f.first_dgram = k as u64;
                    }
                }
                f.open = false;
            }
        }
        r
    }

    fn local_addr(&self) -> io::Result<SocketAddr> {
        self.inner.local_addr()
    }

    fn max_transmit_segments(&self) -> usize {
        1
    }

    fn max_receive_segments(&self) -> usize {
        self.inner.max_receive_segments()
    }

    fn may_fragment(&self) -> bool {
        self.inner.may_fragment()
    }
}
