//! No per-packet heap allocation in steady state: once bulk flows are running, simulating
//! more time allocates (almost) nothing, so memory grows with packets in flight and open
//! connections, not with simulated time. A counting global allocator (this test binary only).

mod common;
use common::*;
use iwlab_core::tcp::config::{RecoveryKind, TcpConfig};
use iwlab_core::tcp::iw::IwConfig;
use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

struct Counting;
static ALLOCS: AtomicU64 = AtomicU64::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        System.alloc(l)
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        System.dealloc(p, l)
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, n: usize) -> *mut u8 {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        System.realloc(p, l, n)
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

#[test]
fn steady_state_bulk_transfer_allocates_almost_nothing_per_packet() {
    let (mut sim, d) = dumbbell(4, link(1_000_000_000, ms(1), 1000), link(20_000_000, ms(10), 100), 1);
    let cfg = TcpConfig { recovery: RecoveryKind::Sack, sack: true, ..TcpConfig::default() };
    let policy = sim.core.add_iw_policy(IwConfig::Fixed { segments: 10 }.build());
    for i in 0..4 {
        let app = Transfer {
            client: d.right[i],
            server: d.left[i],
            request: 100,
            response: 1 << 40,
            client_cfg: cfg.clone(),
            server_cfg: cfg.clone(),
            client_iw: policy,
            server_iw: policy,
            log: Arc::new(Mutex::new(Log::default())),
        };
        sim.add_app(Box::new(app), at(ms(i as u64 * 10)));
    }
    // Warm up: windows, queues, heaps and slabs reach their working size.
    sim.run_until(at(ms(10_000)));
    let packets_before = sim.core.acct.created;
    let allocs_before = ALLOCS.load(Ordering::Relaxed);
    sim.run_until(at(ms(40_000)));
    let packets = sim.core.acct.created - packets_before;
    let allocs = ALLOCS.load(Ordering::Relaxed) - allocs_before;
    sim.check_accounting().unwrap();
    assert!(packets > 50_000, "a busy steady state: {packets} packets");
    // Loss recovery may still grow a buffer now and then; per packet it must be ~0.
    eprintln!("{allocs} allocations for {packets} packets");
    assert!((allocs as f64) < packets as f64 * 0.001, "{allocs} allocations for {packets} packets");
}
