//! The arrival model of flow sources, one for every flow app: *when* a source starts flows
//! ([`Arrivals`] → [`Source`]) and *which* (response size, server IW) combination each flow
//! gets ([`MixOrder`] → [`Picker`]).
//!
//! | kind | first flow | next flow |
//! |---|---|---|
//! | periodic | at the start | `period` after the previous start |
//! | Poisson | one exponential gap after the start | one exponential gap after the previous |
//! | bursts | `flows` at the start | `flows` more, `gap` after the burst's start |
//! | closed loop | at the start | `think` after the previous one completed or failed |
//! | replay | at each row's time (from the run's start) | — |
//!
//! Each instance of an app is one source. A source's gaps and think times come from the
//! application's stream; the mix order comes from a stream of its own ([`MIX_STREAM`]), so
//! that changing the mix never moves an arrival and the arrival kind never changes the order.
//! Permuted blocks (the design of a testbed comparing IWs: every combination once per block,
//! each block in a fresh random order) let every combination meet the same background.

use super::common::draw_secs;
use crate::engine::{SimDuration, SimRng, SimTime};
use crate::traffic::dist::{AnyDist, DistConfig, Exponential, SizeDist};
use rand::seq::SliceRandom;
use rand::Rng;
use std::sync::Arc;

/// Stream id offset (over the application id) of a source's mix order.
pub(crate) const MIX_STREAM: u64 = 1 << 40;

/// When a source starts flows.
#[derive(Clone, Debug, PartialEq)]
pub enum Arrivals {
    /// One every `period`, the first at the application's start.
    Periodic(SimDuration),
    /// Poisson process with `rate_per_s` arrivals per second, the first one exponential gap
    /// after the application's start.
    Poisson { rate_per_s: f64 },
    /// `flows` flows at once, the first burst at the start, the next `gap` seconds (drawn per
    /// burst) after the previous burst's start.
    Bursts { flows: u32, gap: DistConfig },
    /// One flow at a time, the first at the start; the next `think` seconds (drawn per flow)
    /// after the previous one completed (its client has the whole response) or failed.
    ClosedLoop { think: DistConfig },
    /// Flows at recorded instants, each with its own sizes and server IW (instants before the
    /// application's start are started at its start).
    Replay(Arc<[ReplayFlow]>),
}

/// One replayed flow.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReplayFlow {
    /// From the run's start.
    pub start: SimTime,
    pub request_bytes: u64,
    pub response_bytes: u64,
    /// Index in `Core::iw` of the server's policy.
    pub server_iw: usize,
}

/// Which combination of a mix the next flow gets.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub enum MixOrder {
    /// Blocks holding every combination once, each block in its own random order.
    #[default]
    PermutedBlocks,
    /// In the order given, over and over.
    Cyclic,
    /// Drawn uniformly and independently per flow.
    Random,
}

/// The (response size, server IW) combinations of a flow app and the order it takes them in.
#[derive(Clone, Debug, PartialEq)]
pub struct Mix {
    pub entries: Vec<MixEntry>,
    pub order: MixOrder,
}

/// One combination of a [`Mix`].
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct MixEntry {
    pub response_bytes: u64,
    /// Index in `Core::iw` of the server's policy.
    pub server_iw: usize,
}

/// Exponential gaps for `rate_per_s` arrivals per second; `field` names it in the error.
pub(crate) fn poisson(rate_per_s: f64, field: &str) -> Result<Exponential, String> {
    if !(rate_per_s.is_finite() && rate_per_s > 0.0) {
        return Err(format!("{field} = {rate_per_s} is not allowed; expected a finite rate > 0"));
    }
    Exponential::new(1.0 / rate_per_s).map_err(|e| format!("{field} = {rate_per_s}: {e}"))
}

/// The running form of [`Arrivals`] for one source.
#[derive(Clone, Debug)]
pub(crate) enum Source {
    Periodic(SimDuration),
    Poisson(Exponential),
    Bursts {
        flows: u32,
        gap: AnyDist,
    },
    ClosedLoop {
        think: AnyDist,
    },
    /// Replayed start instants, sorted; `next`: the first not started yet.
    Replay {
        starts: Vec<SimTime>,
        next: usize,
    },
}

impl Source {
    /// Checks and builds `a`; errors start with the field (`arrivals.period = 0ns …`).
    pub fn new(a: &Arrivals) -> Result<Self, String> {
        Ok(match a {
            Arrivals::Periodic(p) if *p > SimDuration::ZERO => Source::Periodic(*p),
            Arrivals::Periodic(p) => return Err(format!("arrivals.period = {p} is not allowed; expected > 0")),
            Arrivals::Poisson { rate_per_s } => Source::Poisson(poisson(*rate_per_s, "arrivals.rate_per_s")?),
            Arrivals::Bursts { flows, gap } => {
                if *flows == 0 {
                    return Err("arrivals.flows = 0 is not allowed; expected >= 1 flow per burst".into());
                }
                Source::Bursts { flows: *flows, gap: positive_mean(gap, "arrivals.gap")? }
            }
            Arrivals::ClosedLoop { think } => {
                Source::ClosedLoop { think: think.build().map_err(|e| format!("arrivals.think: {e}"))? }
            }
            Arrivals::Replay(rows) => {
                let mut starts: Vec<SimTime> = rows.iter().map(|r| r.start).collect();
                if !starts.is_sorted() {
                    return Err("arrivals.replay: rows are not in start order".into());
                }
                starts.shrink_to_fit();
                Source::Replay { starts, next: 0 }
            }
        })
    }

    /// When the first arrival comes, for a source started at `now` (`None`: never).
    pub fn first(&mut self, now: SimTime, rng: &mut SimRng) -> Option<SimTime> {
        match self {
            Source::Periodic(_) | Source::Bursts { .. } | Source::ClosedLoop { .. } => Some(now),
            Source::Poisson(e) => Some(now + SimDuration::from_secs_f64(e.sample(rng))),
            Source::Replay { starts, next } => starts.get(*next).map(|&t| t.max(now)),
        }
    }

    /// How many flows the arrival at `now` starts.
    pub fn due(&mut self, now: SimTime) -> u32 {
        match self {
            Source::Bursts { flows, .. } => *flows,
            Source::Replay { starts, next } => {
                let from = *next;
                while starts.get(*next).is_some_and(|&t| t <= now) {
                    *next += 1;
                }
                (*next - from) as u32
            }
            _ => 1,
        }
    }

    /// After the arrival at `now`, when the next one comes (`None`: not on a clock — a
    /// closed loop waits for the completion, a replay has no rows left).
    pub fn after_arrival(&mut self, now: SimTime, rng: &mut SimRng) -> Option<SimTime> {
        match self {
            Source::Periodic(p) => Some(now + *p),
            Source::Poisson(e) => Some(now + SimDuration::from_secs_f64(e.sample(rng))),
            Source::Bursts { gap, .. } => Some(now + draw_secs(gap, rng)),
            Source::ClosedLoop { .. } => None,
            Source::Replay { starts, next } => starts.get(*next).copied(),
        }
    }

    /// After a flow ended (completed or failed) at `now`, when the next one comes; `None`
    /// for every kind but the closed loop.
    pub fn after_end(&mut self, now: SimTime, rng: &mut SimRng) -> Option<SimTime> {
        match self {
            Source::ClosedLoop { think } => Some(now + draw_secs(think, rng)),
            _ => None,
        }
    }

    pub fn is_replay(&self) -> bool {
        matches!(self, Source::Replay { .. })
    }
}

/// A distribution of gaps whose mean is > 0 (else a source would start flows without end at
/// one instant).
fn positive_mean(d: &DistConfig, field: &str) -> Result<AnyDist, String> {
    let built = d.build().map_err(|e| format!("{field}: {e}"))?;
    match built.mean() {
        Some(m) if m > 0.0 => Ok(built),
        Some(m) => Err(format!("{field} has mean {m} s; expected a mean > 0")),
        None => Ok(built),
    }
}

/// Goes through `n` combinations in a [`MixOrder`]. One combination costs no draws.
#[derive(Clone, Debug)]
pub(crate) struct Picker {
    order: MixOrder,
    block: Vec<usize>,
    pos: usize,
    rng: Option<SimRng>,
}

impl Picker {
    pub fn new(n: usize, order: MixOrder) -> Self {
        debug_assert!(n > 0);
        Picker { order, block: (0..n).collect(), pos: 0, rng: None }
    }

    /// Gives the picker its stream (at the application's start).
    pub fn seed(&mut self, rng: SimRng) {
        if self.block.len() > 1 {
            self.rng = Some(rng);
        }
    }

    /// The next combination's index.
    pub fn next(&mut self) -> usize {
        let n = self.block.len();
        let Some(rng) = self.rng.as_mut().filter(|_| n > 1) else {
            return 0;
        };
        let k = match self.order {
            MixOrder::Cyclic => self.pos % n,
            MixOrder::Random => rng.gen_range(0..n),
            MixOrder::PermutedBlocks => {
                if self.pos.is_multiple_of(n) {
                    self.block.shuffle(rng);
                }
                self.block[self.pos % n]
            }
        };
        self.pos += 1;
        k
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::{RngStreams, StreamKind};

    fn rng(seed: u64) -> SimRng {
        RngStreams::new(seed).stream(StreamKind::App, MIX_STREAM)
    }

    fn picks(n: usize, order: MixOrder, seed: u64, k: usize) -> Vec<usize> {
        let mut p = Picker::new(n, order);
        p.seed(rng(seed));
        (0..k).map(|_| p.next()).collect()
    }

    #[test]
    fn permuted_blocks_hold_every_combination_once() {
        let v = picks(8, MixOrder::PermutedBlocks, 3, 8 * 50);
        for block in v.chunks(8) {
            let mut b = block.to_vec();
            b.sort_unstable();
            assert_eq!(b, (0..8).collect::<Vec<_>>());
        }
        // Blocks are not all in one order.
        assert!(v.chunks(8).any(|b| b != &v[..8]));
        assert_ne!(v, picks(8, MixOrder::PermutedBlocks, 4, 8 * 50), "another seed, another order");
    }

    #[test]
    fn cyclic_goes_in_the_order_given_and_random_covers_all() {
        assert_eq!(picks(3, MixOrder::Cyclic, 1, 7), vec![0, 1, 2, 0, 1, 2, 0]);
        let v = picks(4, MixOrder::Random, 1, 4000);
        for k in 0..4 {
            let c = v.iter().filter(|&&x| x == k).count();
            assert!((c as i64 - 1000).abs() < 150, "{k}: {c}");
        }
    }

    #[test]
    fn one_combination_costs_no_draws() {
        let mut p = Picker::new(1, MixOrder::Random);
        p.seed(rng(1));
        assert!(p.rng.is_none());
        assert_eq!((p.next(), p.next()), (0, 0));
    }

    fn at(ms: u64) -> SimTime {
        SimTime::ZERO + SimDuration::from_millis(ms)
    }

    #[test]
    fn a_closed_loop_waits_for_the_end_then_thinks() {
        let mut s = Source::new(&Arrivals::ClosedLoop { think: DistConfig::Constant { value: 0.5 } }).unwrap();
        let mut r = rng(1);
        assert_eq!(s.first(at(100), &mut r), Some(at(100)));
        assert_eq!(s.due(at(100)), 1);
        assert_eq!(s.after_arrival(at(100), &mut r), None);
        assert_eq!(s.after_end(at(350), &mut r), Some(at(850)));
    }

    #[test]
    fn bursts_start_flows_together_and_the_gap_runs_from_the_burst_start() {
        let a = Arrivals::Bursts { flows: 4, gap: DistConfig::Constant { value: 2.0 } };
        let mut s = Source::new(&a).unwrap();
        let mut r = rng(1);
        assert_eq!(s.first(at(0), &mut r), Some(at(0)));
        assert_eq!(s.due(at(0)), 4);
        assert_eq!(s.after_arrival(at(0), &mut r), Some(at(2000)));
        assert_eq!(s.after_end(at(10), &mut r), None, "an open loop ignores completions");
        let zero = Arrivals::Bursts { flows: 4, gap: DistConfig::Constant { value: 0.0 } };
        assert!(Source::new(&zero).unwrap_err().contains("arrivals.gap has mean 0"));
        let none = Arrivals::Bursts { flows: 0, gap: DistConfig::Constant { value: 1.0 } };
        assert!(Source::new(&none).unwrap_err().starts_with("arrivals.flows = 0"));
    }

    #[test]
    fn a_replay_starts_every_row_due_at_its_instant() {
        let row = |ms: u64| ReplayFlow { start: at(ms), request_bytes: 1, response_bytes: 1, server_iw: 0 };
        let rows: Arc<[ReplayFlow]> = vec![row(50), row(300), row(300), row(900)].into();
        let mut s = Source::new(&Arrivals::Replay(rows)).unwrap();
        let mut r = rng(1);
        assert_eq!(s.first(at(100), &mut r), Some(at(100)), "rows before the start, at the start");
        assert_eq!(s.due(at(100)), 1);
        assert_eq!(s.after_arrival(at(100), &mut r), Some(at(300)));
        assert_eq!(s.due(at(300)), 2);
        assert_eq!(s.after_arrival(at(300), &mut r), Some(at(900)));
        assert_eq!(s.due(at(900)), 1);
        assert_eq!(s.after_arrival(at(900), &mut r), None);
        let unsorted: Arc<[ReplayFlow]> = vec![row(2), row(1)].into();
        assert!(Source::new(&Arrivals::Replay(unsorted)).is_err());
    }

    #[test]
    fn periodic_and_poisson_keep_their_clocks() {
        let mut p = Source::new(&Arrivals::Periodic(SimDuration::from_millis(200))).unwrap();
        let mut r = rng(1);
        assert_eq!(p.first(at(5), &mut r), Some(at(5)));
        assert_eq!(p.after_arrival(at(5), &mut r), Some(at(205)));
        assert!(Source::new(&Arrivals::Periodic(SimDuration::ZERO)).is_err());
        assert!(Source::new(&Arrivals::Poisson { rate_per_s: 0.0 }).is_err());
        let mut q = Source::new(&Arrivals::Poisson { rate_per_s: 2.0 }).unwrap();
        let n = 20_000;
        let mut t = q.first(at(0), &mut r).unwrap();
        for _ in 1..n {
            t = q.after_arrival(t, &mut r).unwrap();
        }
        let mean = t.as_secs_f64() / n as f64;
        assert!((mean - 0.5).abs() < 0.02, "mean gap {mean}");
    }
}
