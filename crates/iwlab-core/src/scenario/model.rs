//! The scenario model: serde structs, one per table of the file. Every field says its unit,
//! default and valid range; [`Scenario::validate`] checks the ranges and references.
//! Unknown keys are rejected everywhere (`deny_unknown_fields`); tables that come in
//! variants carry a `kind`.

use super::apps::AppSpec;
use super::dist::FixedOrDist;
use super::tagged::{self, kind_enum};
use super::units::{Bytes, Duration, QueueLimit, Rate, Size};
use crate::net::queue::{CodelConfig, RedConfig};
use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize, Serializer};
use std::collections::BTreeMap;
use std::fmt;
use std::marker::PhantomData;
use std::path::PathBuf;

/// A whole scenario file.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    /// Short identifier, used in records and file names. Required, non-empty.
    pub name: String,
    /// Free text: what the scenario models and how a study varies it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Seed of every random stream (per-host draws, start times, links, flows). Default 1;
    /// `Scenario::build(Some(seed))` overrides it. 0 ..= 2⁶³−1 (a TOML integer).
    #[serde(default = "default_seed")]
    pub seed: u64,
    /// Simulated time; the run stops at this instant. Duration, > 0.
    pub duration: Duration,
    /// Records before this instant are warm-up (the study layer drops them). Duration,
    /// default 0 s, < `duration`.
    #[serde(default)]
    pub warmup: Duration,
    /// Period of queue-length sampling on the bottleneck; absent = no sampling. Duration, > 0.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sample_interval: Option<Duration>,
    /// The network.
    pub topology: TopologySpec,
    /// TCP options of every endpoint, unless an application overrides them. Absent fields
    /// take the engine's defaults ([`crate::tcp::config::TcpConfig::default`]).
    #[serde(default, skip_serializing_if = "TcpSpec::is_empty")]
    pub tcp: TcpSpec,
    /// Named initial-window policies and the default one.
    #[serde(default, skip_serializing_if = "IwSection::is_empty")]
    pub iw: IwSection,
    /// QUIC stack settings of applications with `transport = "quic"` (see [`super::quic`]).
    #[serde(default, skip_serializing_if = "super::quic::QuicSpec::is_empty")]
    pub quic: super::quic::QuicSpec,
    /// The applications, in order (their index is the `apps[i]` of error messages).
    #[serde(default)]
    pub apps: Vec<AppSpec>,
    /// Folder of the file the scenario came from (relative CDF files are resolved against
    /// it); not part of the format.
    #[serde(skip)]
    pub base_dir: Option<PathBuf>,
}

fn default_seed() -> u64 {
    1
}

/// The network, by `kind`. Only `"dumbbell"` for now.
#[derive(Clone, Debug, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum TopologySpec {
    /// Left hosts — router L — bottleneck — router R — right hosts, each host on its own
    /// access link.
    Dumbbell(DumbbellSpec),
}

#[derive(Deserialize)]
#[serde(rename_all = "kebab-case")]
enum TopologyRepr {
    Dumbbell(DumbbellSpec),
}

impl<'de> Deserialize<'de> for TopologySpec {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Ok(match tagged::deserialize(d)? {
            TopologyRepr::Dumbbell(x) => TopologySpec::Dumbbell(x),
        })
    }
}

/// A dumbbell (see [`crate::net::dumbbell`]). Hosts are numbered per group in order; the
/// groups of a side are laid out in the order listed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DumbbellSpec {
    /// The link between the routers.
    pub bottleneck: BottleneckSpec,
    /// Host groups behind router L (the forward direction leaves from here).
    #[serde(default)]
    pub left: Vec<HostGroup>,
    /// Host groups behind router R.
    #[serde(default)]
    pub right: Vec<HostGroup>,
    /// Per-packet jitter on every link direction (`"200us"`), ≥ 0, default 0: each packet's
    /// propagation is lengthened by a uniform draw in [0, jitter) from the link's own random
    /// stream, never overtaking the packet before it. A deterministic simulator's flows with equal
    /// RTTs otherwise stay locked in phase with the queue's departures (Floyd & Jacobson,
    /// "On Traffic Phase Effects in Packet-Switched Gateways", 1992; ns-2's TCP `overhead_`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jitter: Option<Duration>,
}

/// The bottleneck: `rate`, `delay` and `queue` describe the forward direction (L → R) and,
/// unless `reverse` overrides some of them, the reverse direction too.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BottleneckSpec {
    /// Rate, > 0 (`"1.5Mbps"`).
    pub rate: Rate,
    /// One-way propagation delay (`"50ms"`), ≥ 0.
    pub delay: Duration,
    /// Queue discipline of the output port.
    pub queue: QueueSpec,
    /// Overrides for R → L; absent fields are copied from the forward direction.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reverse: Option<LinkOverride>,
    /// Random loss on the bottleneck, before the queue.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loss: Option<LossSpec>,
}

/// Per-direction overrides of a link; each absent field keeps the other direction's value.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LinkOverride {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate: Option<Rate>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delay: Option<Duration>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue: Option<QueueSpec>,
}

kind_enum! {
/// Link loss rules, by `kind`.
#[derive(Clone, Debug, PartialEq)]
pub enum LossSpec via LossRepr {
    /// Every packet is dropped with probability `p` (0 ≤ p < 1), independently, from the
    /// link's own random stream.
    Random {
        p: f64,
        /// Which bottleneck directions: `"both"` (default), `"forward"` (L → R), `"reverse"`.
        #[serde(default)]
        direction: Direction,
    },
}
}

/// Directions of the bottleneck.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Direction {
    #[default]
    Both,
    Forward,
    Reverse,
}

/// A group of `count` hosts on one side, each on its own access link.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct HostGroup {
    /// Unique across both sides; applications name it in `clients` / `servers`.
    pub name: String,
    /// Hosts in the group, ≥ 1 (at most 10 000 hosts in all groups together).
    pub count: u32,
    /// The access link of every host of the group.
    pub access: AccessSpec,
}

/// A host's access link. `rate` and `delay` are fixed, or a distribution drawn **per host**
/// from the scenario seed (population experiments, the RFC 6928 study, docs/studies.md): the i-th host
/// of the group gets the i-th draw of a stream owned by (group, field), so adding hosts never
/// changes the earlier hosts' draws. Both directions get the same draw unless `up` overrides.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AccessSpec {
    /// Rate, > 0; a distribution's draws (bits/s unless `unit`) are rounded to whole
    /// bits/s and must stay ≥ 1 bps (give a `min` for laws that reach 0).
    pub rate: FixedOrDist<Rate>,
    /// One-way propagation delay, ≥ 0 (a distribution is in seconds unless `unit`).
    pub delay: FixedOrDist<Duration>,
    /// Queue at each end of the link. Default drop-tail, 100 packets.
    #[serde(default = "default_access_queue")]
    pub queue: QueueSpec,
    /// Overrides for the host → router direction (uploads, requests, ACKs of downloads);
    /// a distribution here is drawn separately.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub up: Option<AccessOverride>,
}

/// Overrides of an access link's host → router direction.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AccessOverride {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate: Option<FixedOrDist<Rate>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delay: Option<FixedOrDist<Duration>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue: Option<QueueSpec>,
}

fn default_access_queue() -> QueueSpec {
    QueueSpec::DropTail { limit: QueueLimit::packets(100) }
}

kind_enum! {
/// A queue discipline, by `kind`. Absent RED/CoDel parameters take the engine's defaults
/// ([`RedConfig::default`], [`CodelConfig::default`]).
#[derive(Clone, Debug, PartialEq)]
pub enum QueueSpec via QueueRepr {
    /// First in, first out; arrivals beyond `limit` are dropped.
    DropTail {
        /// `"25pkt"` or bytes (`"64kB"`), > 0.
        limit: QueueLimit,
    },
    /// RED (Floyd & Jacobson 1993), see [`crate::net::queue::red`].
    Red {
        /// Hard limit (default 25 packets).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        limit: Option<QueueLimit>,
        /// Average-queue thresholds, packets (default 5 and 15; 0 ≤ min_th ≤ max_th).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        min_th: Option<f64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        max_th: Option<f64>,
        /// Drop probability at max_th (default 0.1; 0..=1).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        max_p: Option<f64>,
        /// EWMA weight (default 0.002; 0..=1).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        w_q: Option<f64>,
        /// Gentle RED (default true).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        gentle: Option<bool>,
        /// Mark ECT packets instead of dropping (default false).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        ecn: Option<bool>,
        /// Mean packet size (default 1000 B; > 0).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        mean_pkt_size: Option<Bytes>,
        /// Byte mode (default false).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        byte_mode: Option<bool>,
    },
    /// CoDel (RFC 8289), see [`crate::net::queue::codel`].
    Codel {
        /// Hard limit (default 1000 packets).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        limit: Option<QueueLimit>,
        /// TARGET (default 5 ms; > 0, < interval).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        target: Option<Duration>,
        /// INTERVAL (default 100 ms; > 0).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        interval: Option<Duration>,
        /// Mark ECT packets instead of dropping (default false).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        ecn: Option<bool>,
        /// maxpacket (default 1514 B).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        mtu: Option<Bytes>,
    },
}
}

impl QueueSpec {
    pub fn kind(&self) -> &'static str {
        match self {
            QueueSpec::DropTail { .. } => "drop-tail",
            QueueSpec::Red { .. } => "red",
            QueueSpec::Codel { .. } => "codel",
        }
    }

    /// The engine's configuration, defaults filled in (not validated).
    pub fn config(&self) -> crate::net::queue::QueueConfig {
        use crate::net::queue::QueueConfig;
        match self {
            QueueSpec::DropTail { limit } => QueueConfig::DropTail { limit: limit.0 },
            QueueSpec::Red { limit, min_th, max_th, max_p, w_q, gentle, ecn, mean_pkt_size, byte_mode } => {
                let d = RedConfig::default();
                QueueConfig::Red(RedConfig {
                    limit: limit.map_or(d.limit, |l| l.0),
                    min_th: min_th.unwrap_or(d.min_th),
                    max_th: max_th.unwrap_or(d.max_th),
                    max_p: max_p.unwrap_or(d.max_p),
                    w_q: w_q.unwrap_or(d.w_q),
                    gentle: gentle.unwrap_or(d.gentle),
                    ecn: ecn.unwrap_or(d.ecn),
                    mean_pkt_size: mean_pkt_size.map_or(d.mean_pkt_size, |b| b.get().min(u32::MAX as u64) as u32),
                    byte_mode: byte_mode.unwrap_or(d.byte_mode),
                })
            }
            QueueSpec::Codel { limit, target, interval, ecn, mtu } => {
                let d = CodelConfig::default();
                QueueConfig::Codel(CodelConfig {
                    limit: limit.map_or(d.limit, |l| l.0),
                    target: target.map_or(d.target, Duration::get),
                    interval: interval.map_or(d.interval, Duration::get),
                    ecn: ecn.unwrap_or(d.ecn),
                    mtu: mtu.map_or(d.mtu, |b| b.get().min(u32::MAX as u64) as u32),
                })
            }
        }
    }
}

/// TCP options. Every field is optional: the scenario-level `[tcp]` fills in the engine's
/// defaults ([`crate::tcp::config::TcpConfig::default`], given as "default …" below), and an
/// application's `tcp` table overrides the scenario's, field by field. The same resolved
/// options apply to both ends of the application's connections.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TcpSpec {
    /// A named set of defaults under this table's fields: `"linux"` (what Linux 6.x does by
    /// default; see `scenario/profile.rs` and docs/scenario-format.md). Fields set explicitly —
    /// here, in `[tcp]` or in an application's `tcp` — override it (default none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<String>,
    /// Sender maximum segment size, payload bytes, 1..=65000 (default 1460). With timestamps the
    /// wire segment is 12 bytes longer (Linux: MSS 1460 → 1448 payload bytes: write 1448).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mss: Option<Bytes>,
    /// Congestion control: `"reno"`, `"newreno"` (the same controller) or `"cubic"` (default "reno").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cc: Option<String>,
    /// CUBIC parameters, only with `cc = "cubic"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cubic: Option<CubicSpec>,
    /// Loss recovery: `"reno"`, `"newreno"`, `"sack"` (RFC 6675) or `"rack"` (RFC 8985 RACK
    /// with SACK recovery); `sack` and `rack` need `sack = true` (default "newreno").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recovery: Option<String>,
    /// RFC 8985 §7 Tail Loss Probe; needs `sack = true` (default true with `recovery =
    /// "rack"`, else false).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tlp: Option<bool>,
    /// Offer and use SACK (RFC 2018) (default false).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sack: Option<bool>,
    /// Offer and use timestamps (RFC 7323; 12 option bytes per segment) (default false).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timestamps: Option<bool>,
    /// `false` ACKs every segment; a table `{ segments = 2, timeout = "200ms" }` delays
    /// ACKs (RFC 5681 §4.2; segments ≥ 1, timeout > 0); `true` = that table (default true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub delayed_ack: Option<DelayedAckSpec>,
    /// Receive buffer: the largest advertised window (RFC 2415's "maximum window"), bytes
    /// or segments of this endpoint's MSS (`"11seg"`), ≥ 1 MSS (default 1 GiB).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rcv_wnd: Option<Size>,
    /// Initial receive window (Linux `initrwnd`), bytes or segments, ≥ 1 MSS, or `false`
    /// to advertise `rcv_wnd` from the start (default false).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub initial_rcv_wnd: Option<Switch<Size>>,
    /// RTO before any RTT sample (RFC 6298 (2.1)), > 0 (default 1s).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub initial_rto: Option<Duration>,
    /// Lower bound of the RTO (RFC 6298 (2.4); Linux 200 ms), ≤ max_rto (default 1s).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_rto: Option<Duration>,
    /// Upper bound of the RTO (RFC 6298 (2.5)) (default 60s).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_rto: Option<Duration>,
    /// Clock granularity G (RFC 6298); timers are rounded up to it; 0 = exact (default 0s).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub granularity: Option<Duration>,
    /// Timer clock, ticks per second (Linux CONFIG_HZ: 100, 250, 300 or 1000): the
    /// retransmission, loss-probe, RACK, zero-window and delayed-ACK timers count whole ticks
    /// and run from Linux's timer wheel; 0 = exact (default 0, under the linux profile too).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hz: Option<u32>,
    /// Duplicate ACKs that trigger fast retransmit, ≥ 1 (default 3).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dupthresh: Option<u32>,
    /// RFC 3042 Limited Transmit (default false).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limited_transmit: Option<bool>,
    /// RFC 3465 Appropriate Byte Counting limit L, segments; 0 = count ACKs, no ABC (default 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub abc_l: Option<u32>,
    /// IW after a retransmitted SYN or SYN-ACK: `"reduce-to-one"` (RFC 3390 §2 / RFC 5681
    /// §3.1) or `"rfc6928"` (keep it unless retransmitted more than once) (default "rfc6928").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub syn_loss: Option<SynLossSpec>,
    /// RFC 5681 §4.1 restart window after an idle period longer than the RTO (default true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub restart_after_idle: Option<bool>,
    /// RFC 3168 ECN (default false).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ecn: Option<bool>,
    /// Initial ssthresh, bytes or segments, or `false` for "arbitrarily high" (RFC 5681) (default false).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub initial_ssthresh: Option<Switch<Size>>,
    /// SYN / SYN-ACK retransmissions before a connection gives up (default 6).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub syn_retries: Option<u32>,
    /// Sender pacing at ratio × cwnd / SRTT, as Linux's internal pacing (default false).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pacing: Option<bool>,
    /// Pacing ratio in slow start (cwnd < ssthresh/2), percent, 1..=10000 (default 200).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pacing_ss_ratio: Option<u32>,
    /// Pacing ratio otherwise, percent, 1..=10000 (default 120).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pacing_ca_ratio: Option<u32>,
    /// Spread the initial window over the handshake RTT (default false).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paced_iw: Option<bool>,
    /// Which rules move the pacing clock: `"exact"` (default: every departure paced, no
    /// credit) or `"linux"` (tcp_update_skb_after_send: the first 10 data segments unpaced, a
    /// late departure forgiven up to half a gap).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pacer: Option<String>,
    /// Proportional Rate Reduction (RFC 6937) for cwnd during SACK or RACK recovery: `true`
    /// (= `"ssrb"`), `"crb"`, `"ssrb"`, `"linux"` (SSRB's extra segment only on ACKs that
    /// advance snd.una), or `false` (default false: RFC 6675's cwnd = ssthresh).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prr: Option<FlagOr>,
    /// Slow-start exit on RTT increase: `true` (= `"rfc9406"`, HyStart++), `"rfc9406"`,
    /// `"linux"` (Linux CUBIC's HyStart delay detector), or `false` (default false).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hystart: Option<FlagOr>,
    /// Linux quick-ACK mode: the receiver ACKs its first this many ACKs' worth of data at once
    /// even with delayed ACKs (Linux TCP_MAX_QUICKACKS = 16); 0 = off (default 0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub quickack: Option<u32>,
    /// RTO and loss-probe arithmetic: `"rfc"` (RFC 6298 RTO, RFC 8985 PTO; default) or
    /// `"linux"` (tcp_rtt_estimator/__tcp_set_rto: RTO = SRTT + max(variance, min_rto);
    /// tcp_schedule_loss_probe: PTO = 2·SRTT + min_rto with one segment out, + 2 ms otherwise).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timers: Option<String>,
    /// When an RTO reduces ssthresh: `"each-expiry"` (RFC 5681 (4); default) or
    /// `"once-per-window"` (Linux tcp_enter_loss: not again inside fast recovery or on a
    /// repeated expiry of the same episode).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rto_ssthresh: Option<String>,
    /// When an ACK grows cwnd: `"every-ack"` (RFC 5681; default) or `"cwnd-limited"` (Linux
    /// tcp_is_cwnd_limited: only while the flow fills its window; in slow start while
    /// cwnd < 2 * the segments out).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwnd_growth: Option<String>,
    /// The window after idle: `"rfc5681"` (min(IW, cwnd) at once; default) or `"halve-per-rto"`
    /// (Linux tcp_cwnd_restart: cwnd halves once per RTO of idle, down to min(IW, cwnd)).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idle_restart: Option<String>,
    /// How a close after a write sends the FIN: `"with-write"` (the FIN rides on the last data
    /// segment; a bare FIN ignores cwnd; default) or `"after-write"` (Linux tcp_send_fin: the
    /// write leaves first, the FIN joins the last segment only if it is unsent, else goes
    /// alone when cwnd has room).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fin: Option<String>,
    /// The window of the resends after an RTO: `"from-snd-una"` (go-back-N within
    /// snd.una + cwnd, SACKed segments included; default) or `"packets-in-flight"` (Linux
    /// tcp_xmit_retransmit_queue: resend while the packets in flight, SACKed ones not
    /// counted, are below cwnd).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rto_window: Option<String>,
    /// The degree of reordering: `"fixed"` (`dupthresh` throughout; default) or `"learned"`
    /// (Linux tcp_check_sack_reordering: raised from SACKs of segments below the highest
    /// SACKed; above `dupthresh`, ACKs that only SACK data grow cwnd).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reordering: Option<String>,
    /// F-RTO (RFC 5682 with SACK, Linux net.ipv4.tcp_frto = 2): after an RTO, an ACK of data
    /// never retransmitted shows the timeout was spurious and undoes it; the first ACK of the
    /// retransmission lets new data out instead of more retransmissions (default false).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub frto: Option<bool>,
    /// D-SACK (RFC 2883, Linux net.ipv4.tcp_dsack = 1): the receiver reports duplicate
    /// segments in a first SACK block; the sender counts retransmissions so shown needless and
    /// widens RACK's reordering window (default false).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dsack: Option<bool>,
    /// Undo a cwnd reduction shown spurious (Linux tcp_try_undo_*: every retransmission of the
    /// episode D-SACKed, or a timestamp echo older than the first retransmission, RFC 3522):
    /// cwnd and ssthresh back to their values before it (default false). F-RTO's own undo
    /// comes with `frto`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub undo: Option<bool>,
}

/// `true`, `false` or a variant name.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(untagged)]
pub enum FlagOr {
    Flag(bool),
    Name(String),
}

impl TcpSpec {
    pub fn is_empty(&self) -> bool {
        *self == TcpSpec::default()
    }
}

/// CUBIC parameters (RFC 9438); absent ones take [`crate::tcp::cc::CubicConfig::default`].
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CubicSpec {
    /// β_cubic, 0 < β < 1 (default 0.7).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub beta: Option<f64>,
    /// C, segments/s³, > 0 (default 0.4).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub c: Option<f64>,
    /// Fast convergence (default true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fast_convergence: Option<bool>,
    /// Reno-friendly region (default true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reno_friendly: Option<bool>,
    /// What β multiplies at a congestion event: "flight-size" (RFC 9438, default) or "cwnd".
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ssthresh_from: Option<String>,
    /// How the curve is computed: "rfc9438" (real numbers, default) or "linux" (tcp_cubic.c's
    /// integer arithmetic).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arithmetic: Option<String>,
}

/// IW rule after SYN / SYN-ACK loss.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum SynLossSpec {
    ReduceToOne,
    Rfc6928,
}

/// Delayed ACKs: `false`, `true` (2 segments, 200 ms) or `{ segments, timeout }`.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum DelayedAckSpec {
    /// ACK every segment.
    Off,
    /// ACK at least every `segments` full segments, or after `timeout`.
    On { segments: u32, timeout: Duration },
}

/// Delayed ACKs on: an ACK at least every `segments` full segments, or after `timeout`.
#[derive(Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
struct DelayedAckTable {
    /// Full segments per ACK, ≥ 1 (default 2).
    #[serde(default = "two")]
    segments: u32,
    /// Longest delay of an ACK (default 200ms).
    #[serde(default = "two_hundred_ms")]
    timeout: Duration,
}

fn two() -> u32 {
    2
}
fn two_hundred_ms() -> Duration {
    Duration::from_millis(200)
}

impl schemars::JsonSchema for DelayedAckSpec {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "DelayedAck".into()
    }
    fn json_schema(g: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "description": "false, true (2 segments, 200ms) or { segments, timeout }.",
            "anyOf": [{ "type": "boolean" }, g.subschema_for::<DelayedAckTable>()],
        })
    }
}

impl Serialize for DelayedAckSpec {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match *self {
            DelayedAckSpec::Off => s.serialize_bool(false),
            DelayedAckSpec::On { segments, timeout } => DelayedAckTable { segments, timeout }.serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for DelayedAckSpec {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = DelayedAckSpec;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("false, true, or a table { segments = 2, timeout = \"200ms\" }")
            }
            fn visit_bool<E: de::Error>(self, v: bool) -> Result<DelayedAckSpec, E> {
                Ok(if v {
                    DelayedAckSpec::On { segments: two(), timeout: two_hundred_ms() }
                } else {
                    DelayedAckSpec::Off
                })
            }
            fn visit_map<A: de::MapAccess<'de>>(self, map: A) -> Result<DelayedAckSpec, A::Error> {
                let t = DelayedAckTable::deserialize(de::value::MapAccessDeserializer::new(map))?;
                Ok(DelayedAckSpec::On { segments: t.segments, timeout: t.timeout })
            }
        }
        d.deserialize_any(V)
    }
}

/// `false`, or a value: an optional setting that a later layer can switch off again.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Switch<T> {
    Off,
    On(T),
}

impl<T: schemars::JsonSchema> schemars::JsonSchema for Switch<T> {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        format!("Switch_{}", T::schema_name()).into()
    }
    fn json_schema(g: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "description": "false, or a value.",
            "anyOf": [{ "const": false }, g.subschema_for::<T>()],
        })
    }
}

impl<T: Serialize> Serialize for Switch<T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Switch::Off => s.serialize_bool(false),
            Switch::On(v) => v.serialize(s),
        }
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Switch<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<T>(PhantomData<T>);
        impl<'de, T: Deserialize<'de>> Visitor<'de> for V<T> {
            type Value = Switch<T>;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("false or a value")
            }
            fn visit_bool<E: de::Error>(self, v: bool) -> Result<Switch<T>, E> {
                if v {
                    Err(E::custom("true is not allowed; expected false or a value"))
                } else {
                    Ok(Switch::Off)
                }
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<Switch<T>, E> {
                T::deserialize(de::value::StrDeserializer::<E>::new(v)).map(Switch::On)
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Switch<T>, E> {
                T::deserialize(de::value::U64Deserializer::<E>::new(v)).map(Switch::On)
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Switch<T>, E> {
                T::deserialize(de::value::I64Deserializer::<E>::new(v)).map(Switch::On)
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Switch<T>, E> {
                T::deserialize(de::value::F64Deserializer::<E>::new(v)).map(Switch::On)
            }
        }
        d.deserialize_any(V(PhantomData))
    }
}

/// Initial-window policies. Each application names the policy of its servers and of its
/// clients (`server_iw`, `client_iw`), falling back to `default`.
///
/// **Instances**: one policy instance exists per (host, policy name) pair, created the first
/// time an application on that host uses that name. Every connection a host sends on with
/// that policy — across all applications and instances on the host — shares the instance,
/// so a per-destination fallback cache (`rfc6928-fallback`) lives on the sending host, as
/// RFC 6928 §4 describes. Two policies with the same parameters but different names are
/// separate instances (use that to keep populations' caches apart).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct IwSection {
    /// Policy used where an application names none. Required if some application does.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<String>,
    /// Policies by name.
    #[serde(default)]
    pub policies: BTreeMap<String, IwSpec>,
    /// Destination routes (`[[iw.routes]]`, what `iwlab run --policy FILE` adds): a sender's
    /// IW towards a host whose address (the emulator's, 198.18.0.0 + 4g + 2) a route covers is
    /// that route's policy (tcp/iw/routed.rs); other destinations use the application's.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub routes: Vec<super::policy_file::RouteSpec>,
}

impl IwSection {
    pub fn is_empty(&self) -> bool {
        self.default.is_none() && self.policies.is_empty() && self.routes.is_empty()
    }
}

kind_enum! {
/// An initial-window policy, by `kind` (the names of [`crate::tcp::iw::IwConfig::NAMES`]).
#[derive(Clone, Debug, PartialEq)]
pub enum IwSpec via IwRepr {
    /// A fixed number of segments, ≥ 1 (Linux `initcwnd N`; RFC 2415's IW 1..4).
    Fixed { segments: u32 },
    /// RFC 3390: min(4·MSS, max(2·MSS, 4380)) bytes.
    Rfc3390 {},
    /// RFC 6928: min(10·MSS, max(2·MSS, 14600)) bytes.
    Rfc6928 {},
    /// RFC 6928 with a per-destination cache of loss evidence on the sending host: cached
    /// destinations get the RFC 3390 IW until `expiry` (> 0) has passed [3600 s, Linux's
    /// tcp_metrics lifetime].
    Rfc6928Fallback {
        #[serde(default = "default_expiry")]
        expiry: Duration,
        /// Destinations the cache holds, ≥ 1 [16 384]; a full cache drops expired entries,
        /// then the one expiring soonest.
        #[serde(default = "default_max_entries", skip_serializing_if = "is_default_max_entries")]
        max_entries: u32,
    },
    /// IW(s) = V if s ≤ θ, else ⌊(θ/s)·V + (1 − θ/s)·MinIW⌋ segments (You et al.; Barik &
    /// Divakaran), s = the size the application declares for the connection.
    SizeBased {
        /// θ, bytes, > 0 (default 200 kB = 200 000 B).
        #[serde(default = "default_theta")]
        theta: Bytes,
        /// V, segments, ≥ 1 (default 10).
        #[serde(default = "default_v")]
        v: u32,
        /// MinIW, segments, ≥ 1 (default 4).
        #[serde(default = "default_min_iw")]
        min_iw: u32,
    },
    /// Per-destination AIMD on the IW (segments; tcp/iw/aimd.rs): starts at `initial`,
    /// + `step` after `raise_after` consecutive clean connections, halved on RFC 6928 §4
    /// evidence (loss in the IW after > 4 KB), within [`min`, `max`].
    /// 1 ≤ min ≤ initial ≤ max; step, raise_after ≥ 1 [10, 3, 40, 1, 8].
    Aimd {
        #[serde(default = "default_initial")]
        initial: u32,
        #[serde(default = "default_adaptive_min")]
        min: u32,
        #[serde(default = "default_adaptive_max")]
        max: u32,
        #[serde(default = "default_step")]
        step: u32,
        #[serde(default = "default_raise_after")]
        raise_after: u32,
    },
    /// Per-destination IW learned from the last `samples` connections' min(cwnd at close,
    /// bytes acked): their `percentile` (nearest rank), ⌊/MSS⌋ segments, clamped to [`min`,
    /// `max`]; `initial` before any (tcp/iw/learned.rs).
    /// 1 ≤ min ≤ initial ≤ max; samples ≥ 1; 1 ≤ percentile ≤ 100 [10, 3, 40, 8, 50].
    Learned {
        #[serde(default = "default_initial")]
        initial: u32,
        #[serde(default = "default_adaptive_min")]
        min: u32,
        #[serde(default = "default_adaptive_max")]
        max: u32,
        #[serde(default = "default_samples")]
        samples: u32,
        #[serde(default = "default_percentile")]
        percentile: u32,
    },
}
}

fn default_max_entries() -> u32 {
    crate::tcp::iw::fallback_cache::DEFAULT_MAX_ENTRIES as u32
}
fn is_default_max_entries(n: &u32) -> bool {
    *n == default_max_entries()
}
fn default_initial() -> u32 {
    10
}
fn default_adaptive_min() -> u32 {
    3
}
fn default_adaptive_max() -> u32 {
    40
}
fn default_step() -> u32 {
    1
}
fn default_raise_after() -> u32 {
    8
}
fn default_samples() -> u32 {
    8
}
fn default_percentile() -> u32 {
    50
}

fn default_expiry() -> Duration {
    Duration::from_secs(3600)
}
fn default_theta() -> Bytes {
    Bytes::new(200_000)
}
fn default_v() -> u32 {
    10
}
fn default_min_iw() -> u32 {
    4
}

impl IwSpec {
    /// The engine's configuration (not validated).
    pub fn config(&self) -> crate::tcp::iw::IwConfig {
        use crate::tcp::iw::IwConfig;
        match *self {
            IwSpec::Fixed { segments } => IwConfig::Fixed { segments },
            IwSpec::Rfc3390 {} => IwConfig::Rfc3390,
            IwSpec::Rfc6928 {} => IwConfig::Rfc6928,
            IwSpec::Rfc6928Fallback { expiry, max_entries } => {
                IwConfig::Rfc6928Fallback { expiry: expiry.get(), max_entries }
            }
            IwSpec::SizeBased { theta, v, min_iw } => IwConfig::SizeBased { theta_bytes: theta.get(), v, min_iw },
            IwSpec::Aimd { initial, min, max, step, raise_after } => {
                IwConfig::Aimd { initial, min, max, step, raise_after }
            }
            IwSpec::Learned { initial, min, max, samples, percentile } => {
                IwConfig::Learned { initial, min, max, samples, percentile }
            }
        }
    }
}
