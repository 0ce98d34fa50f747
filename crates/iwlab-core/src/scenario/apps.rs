//! Application entries (`[[apps]]`): the fields every kind shares ([`AppCommon`]) and the
//! parameters of each kind ([`AppParams`]), written flat in one table with a `kind`:
//!
//! ```toml
//! [[apps]]
//! kind = "web"                 # ftp | bulk | web | short-flows | poisson-flows | udp
//! clients = "clients"          # host group of the clients
//! servers = "servers"          # host group of the servers
//! count = 16                   # instances
//! start = { kind = "uniform", lo = 0, hi = 5 }   # per instance, seconds
//! server_iw = "iw3"
//! think = { kind = "uniform", lo = 1, hi = 5 }
//! ```
//!
//! **Instance → hosts.** Instance `i` (0-based) of an entry runs between client host
//! `(offset + i) mod C` of the `clients` group and server host `(offset + i) mod S` of the
//! `servers` group (C, S: the groups' sizes) — the RFC 2415 study (docs/studies.md): "web client i sits on client node
//! i mod 4 and uses server node i mod 4". With `mapping = "distinct"` the hosts must not
//! wrap: `offset + count` must not exceed either group, so every instance has hosts of its
//! own. Several entries may share hosts.
//!
//! **Direction.** Data flows server → client: servers answer requests (FTP, web, short flows,
//! Poisson flows), send bulk data (unless `upload`), and send UDP.

use super::dist::{DistSpec, FixedOrDist};
use super::model::TcpSpec;
use super::tagged::{self, kind_enum};
use super::units::{Bytes, Duration, RateOrShare, Share, Size};
use serde::{Deserialize, Deserializer, Serialize};

/// How instance `i` maps to hosts of the client and server groups.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Mapping {
    /// Host `(offset + i) mod group size` (instances may share a host).
    #[default]
    Modulo,
    /// Host `offset + i`; an error if that runs past the group.
    Distinct,
}

/// Fields every application kind has; each is documented once, on the file form below (`AppFile`,
/// whose documentation the JSON Schema and docs/scenario-format.md carry).
#[derive(Clone, Debug, PartialEq)]
pub struct AppCommon {
    pub name: Option<String>,
    pub clients: String,
    pub servers: String,
    pub count: u32,
    pub mapping: Mapping,
    pub offset: u32,
    pub start: FixedOrDist<Duration>,
    pub server_iw: Option<String>,
    pub client_iw: Option<String>,
    pub tcp: TcpSpec,
}

fn one() -> u32 {
    1
}
fn zero_start() -> FixedOrDist<Duration> {
    FixedOrDist::Fixed(Duration::ZERO)
}
fn d_ftp_size() -> Size {
    Size::Bytes(1_000_000)
}
fn d_request() -> Size {
    Size::Bytes(250)
}
fn d_short_request() -> Size {
    Size::Bytes(100)
}
fn d_object() -> FixedOrDist<Bytes> {
    FixedOrDist::Dist(DistSpec::Pareto { shape: 1.2, scale: 1122.46, unit: None, min: None, cap: Some(1e6) })
}
fn d_embedded_count() -> FixedOrDist<u32> {
    FixedOrDist::Fixed(3)
}
fn d_think() -> FixedOrDist<Duration> {
    FixedOrDist::Dist(DistSpec::Uniform { lo: 1.0, hi: 5.0, unit: None, min: None, cap: None })
}
fn d_udp_payload() -> Bytes {
    Bytes::new(1000)
}

/// HTTP version of a web client.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub enum HttpSpec {
    /// One connection per object; embedded objects on parallel connections.
    #[default]
    #[serde(rename = "1.0")]
    Http10,
    /// One persistent connection per page.
    #[serde(rename = "1.1")]
    Http11,
}

kind_enum! {
/// When a flow source starts flows, by `kind` (`traffic::arrivals`); each instance of the
/// app is one source.
#[derive(Clone, Debug, PartialEq)]
pub enum ArrivalsSpec via ArrivalsRepr {
    /// One flow every `period` (> 0), the first at the instance's start.
    Periodic { period: Duration },
    /// A Poisson process: `rate` flows per second (> 0), or `load`, a share of the
    /// bottleneck (servers' side → clients' side): rate = load × bottleneck rate /
    /// (8 × mean response bytes over the mix), per instance. Exactly one of the two.
    Poisson {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        rate: Option<f64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        load: Option<Share>,
    },
    /// `flows` flows at once (≥ 1), the next burst `gap` after this burst's start (> 0 on
    /// average; an exponential gap makes Poisson bursts). The first burst at the start.
    Bursts { flows: u32, gap: FixedOrDist<Duration> },
    /// One flow at a time: the next starts `think` after the previous one completed (the
    /// client has the last byte of the response) or failed. The first at the start.
    ClosedLoop { think: FixedOrDist<Duration> },
    /// Flows at the start times of a CSV file (columns `start` in seconds from the run's
    /// start, `response` in bytes, optional `server_iw` and `request`); `file` is relative
    /// to the scenario file.
    Replay { file: String },
}
}

impl ArrivalsSpec {
    /// The `kind` as written.
    pub fn kind(&self) -> &'static str {
        match self {
            ArrivalsSpec::Periodic { .. } => "periodic",
            ArrivalsSpec::Poisson { .. } => "poisson",
            ArrivalsSpec::Bursts { .. } => "bursts",
            ArrivalsSpec::ClosedLoop { .. } => "closed-loop",
            ArrivalsSpec::Replay { .. } => "replay",
        }
    }
}

/// One (response size, server IW) combination of a `mix`.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MixSpec {
    /// Response bytes, ≥ 1 (`"9seg"`: 9 full segments of the server's MSS).
    pub response: Size,
    /// IW policy name of the server for these flows (default: the app's `server_iw`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_iw: Option<String>,
}

/// The order in which a source goes through its `mix`.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum MixOrderSpec {
    /// Blocks of every combination once, each block in an order drawn from the app's seed.
    #[default]
    PermutedBlocks,
    /// In the order given, over and over.
    Cyclic,
    /// Each flow's combination drawn uniformly and independently.
    Random,
}

macro_rules! app_kinds {
    ($(
        $(#[$vdoc:meta])*
        $V:ident($P:ident) = $tag:literal {
            $( $(#[$fattr:meta])* $f:ident : $t:ty ),* $(,)?
        }
    )*) => {
        $(
            $(#[$vdoc])*
            #[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
            #[serde(deny_unknown_fields)]
            pub struct $P { $( $(#[$fattr])* pub $f : $t ),* }
        )*

        /// The kind-specific part of an application entry.
        #[derive(Clone, Debug, PartialEq)]
        #[allow(clippy::large_enum_variant)] // configuration data, built once
        pub enum AppParams { $( $V($P) ),* }

        impl AppParams {
            /// Every `kind`.
            pub const KINDS: &'static [&'static str] = &[$($tag),*];
            /// This entry's `kind`.
            pub fn kind(&self) -> &'static str {
                match self { $( AppParams::$V(_) => $tag ),* }
            }
        }

        /// The file form of an entry: common and kind fields in one table (serde has no
        /// `flatten` with `deny_unknown_fields`, so the common fields are repeated per kind).
        /// Its schema is the format's (`AppSpec`'s `JsonSchema`), so the common fields carry
        /// [`AppCommon`]'s documentation here too.
        #[derive(Serialize, schemars::JsonSchema)]
        #[serde(tag = "kind", deny_unknown_fields)]
        #[allow(clippy::large_enum_variant)]
        enum AppFile {
            $(
                $(#[$vdoc])*
                #[serde(rename = $tag)]
                $V {
                    /// Label in records (default `"<kind>-<index>"`, e.g. `"web-0"`).
                    #[serde(default, skip_serializing_if = "Option::is_none")]
                    name: Option<String>,
                    /// Host group of the clients (they open the connections).
                    clients: String,
                    /// Host group of the servers (a different group).
                    servers: String,
                    /// Number of instances, 0..=100 000 (default 1); 0 keeps the entry but starts
                    /// nothing (a sweep over 0..N clients). For `poisson-flows`: the number of
                    /// (client, server) pairs of its single flow source.
                    #[serde(default = "one")]
                    count: u32,
                    /// Instance → host mapping (default "modulo").
                    #[serde(default)]
                    mapping: Mapping,
                    /// Host index of instance 0 in both groups (default 0).
                    #[serde(default)]
                    offset: u32,
                    /// When each instance starts: a duration, or a distribution (seconds unless
                    /// `unit`) drawn per instance from the scenario seed (default 0s).
                    #[serde(default = "zero_start")]
                    start: FixedOrDist<Duration>,
                    /// IW policy of the servers (default: `iw.default`).
                    #[serde(default, skip_serializing_if = "Option::is_none")]
                    server_iw: Option<String>,
                    /// IW policy of the clients (default: `iw.default`).
                    #[serde(default, skip_serializing_if = "Option::is_none")]
                    client_iw: Option<String>,
                    /// Overrides of the scenario's `[tcp]`, field by field.
                    #[serde(default, skip_serializing_if = "TcpSpec::is_empty")]
                    tcp: TcpSpec,
                    $( $(#[$fattr])* $f : $t ),*
                }
            ),*
        }

        /// [`AppFile`] externally tagged, for deserialisation (see `tagged`).
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        #[allow(clippy::large_enum_variant)]
        enum AppFileRepr {
            $(
                #[serde(rename = $tag)]
                $V {
                    #[serde(default, skip_serializing_if = "Option::is_none")]
                    name: Option<String>,
                    clients: String,
                    servers: String,
                    #[serde(default = "one")]
                    count: u32,
                    #[serde(default)]
                    mapping: Mapping,
                    #[serde(default)]
                    offset: u32,
                    #[serde(default = "zero_start")]
                    start: FixedOrDist<Duration>,
                    #[serde(default, skip_serializing_if = "Option::is_none")]
                    server_iw: Option<String>,
                    #[serde(default, skip_serializing_if = "Option::is_none")]
                    client_iw: Option<String>,
                    #[serde(default, skip_serializing_if = "TcpSpec::is_empty")]
                    tcp: TcpSpec,
                    $( $(#[$fattr])* $f : $t ),*
                }
            ),*
        }

        impl From<AppFileRepr> for AppSpec {
            fn from(f: AppFileRepr) -> AppSpec {
                match f {
                    $(
                        AppFileRepr::$V { name, clients, servers, count, mapping, offset, start, server_iw, client_iw, tcp, $($f),* } => AppSpec {
                            common: AppCommon { name, clients, servers, count, mapping, offset, start, server_iw, client_iw, tcp },
                            params: AppParams::$V($P { $($f),* }),
                        },
                    )*
                }
            }
        }

        impl From<AppSpec> for AppFile {
            fn from(a: AppSpec) -> AppFile {
                let AppCommon { name, clients, servers, count, mapping, offset, start, server_iw, client_iw, tcp } = a.common;
                match a.params {
                    $(
                        AppParams::$V($P { $($f),* }) => AppFile::$V {
                            name, clients, servers, count, mapping, offset, start, server_iw, client_iw, tcp, $($f),*
                        },
                    )*
                }
            }
        }
    };
}

app_kinds! {
    /// `kind = "ftp"`: repeated transfers, each on a new connection: the client sends
    /// `request`, the server answers `size` (the FTP clients of the RFC 2415 study, docs/studies.md: 1 MB back to back).
    Ftp(FtpParams) = "ftp" {
        /// Bytes per transfer, ≥ 1 (`"Nseg"`: N server MSS) (default 1MB = 10⁶ B).
        #[serde(default = "d_ftp_size")]
        size: Size,
        /// Request bytes, ≥ 1 (default 250B).
        #[serde(default = "d_request")]
        request: Size,
        /// Pause between a completed transfer and the next request, fixed or drawn (seconds
        /// unless `unit`); absent = back to back.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        gap: Option<FixedOrDist<Duration>>,
        /// Transfers per instance, ≥ 1; absent = until the end of the run.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        transfers: Option<u32>,
    }
    /// `kind = "bulk"`: one connection that never runs out of data (iperf-like).
    Bulk(BulkParams) = "bulk" {
        /// The client sends instead of the server (default false).
        #[serde(default)]
        upload: bool,
    }
    /// `kind = "web"`: an HTTP client: a page = a primary object, then `embedded_count`
    /// embedded objects (HTTP/1.0: on parallel new connections once the primary is in;
    /// HTTP/1.1: on the page's one connection), then a think time. Defaults are the RFC 2415 study's (docs/studies.md).
    Web(WebParams) = "web" {
        /// `"1.0"` or `"1.1"` (default "1.0").
        #[serde(default)]
        http: HttpSpec,
        /// Request bytes per object, ≥ 1 (default 250B).
        #[serde(default = "d_request")]
        request: Size,
        /// Primary object size, bytes, fixed or drawn per object [Pareto I shape 1.2, scale
        /// 1122.46 B (median 2000 B), cap 10⁶ B].
        #[serde(default = "d_object")]
        primary: FixedOrDist<Bytes>,
        /// Embedded object size (default as `primary`).
        #[serde(default = "d_object")]
        embedded: FixedOrDist<Bytes>,
        /// Embedded objects per page, a count or a distribution (rounded) (default 3).
        #[serde(default = "d_embedded_count")]
        embedded_count: FixedOrDist<u32>,
        /// Think time after a page (seconds unless `unit`) (default uniform 1..5 s).
        #[serde(default = "d_think")]
        think: FixedOrDist<Duration>,
        /// Pages per instance, ≥ 1; absent = until the end of the run.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        pages: Option<u32>,
    }
    /// `kind = "short-flows"`: request/response flows, each on a new connection, started by
    /// the `arrivals` model (open loop, bursts, closed loop or replayed; the congested-links study, docs/studies.md). Each flow's
    /// response size and server IW: `response` and `server_iw`, or one combination of `mix`
    /// (exactly one of `response` and `mix`; neither with replayed arrivals, whose file has them).
    ShortFlows(ShortFlowsParams) = "short-flows" {
        /// Request bytes, ≥ 0 (default 100B).
        #[serde(default = "d_short_request")]
        request: Size,
        /// Response bytes, ≥ 1; `"10seg"` = 10 full segments of the server's MSS.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        response: Option<Size>,
        /// (response, server IW) combinations the flows go through in `mix_order`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        mix: Option<Vec<MixSpec>>,
        /// `"permuted-blocks"` (default), `"cyclic"` or `"random"`; only with `mix`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        mix_order: Option<MixOrderSpec>,
        /// When flows start.
        arrivals: ArrivalsSpec,
        /// Flows per instance, ≥ 1; absent = until the end.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        flows: Option<u32>,
        /// `"tcp"` (default) or `"quic"` (quinn-proto; settings from `[quic]` and `quic`).
        #[serde(default, skip_serializing_if = "super::quic::TransportSpec::is_tcp")]
        transport: super::quic::TransportSpec,
        /// Overrides of the scenario's `[quic]`, field by field (with `transport = "quic"`).
        #[serde(default, skip_serializing_if = "super::quic::QuicSpec::is_empty")]
        quic: super::quic::QuicSpec,
    }
    /// `kind = "poisson-flows"`: one source of Poisson flow arrivals over `count` (client,
    /// server) pairs chosen uniformly per flow; response sizes from `size` (the IW-function study, docs/studies.md; docs/scenario-format.md).
    /// Give exactly one of `rate` and `load`.
    PoissonFlows(PoissonFlowsParams) = "poisson-flows" {
        /// Response size, bytes, fixed or drawn per flow (its mean must be finite for `load`).
        size: FixedOrDist<Bytes>,
        /// Flows per second, > 0.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        rate: Option<f64>,
        /// Offered load as a fraction of the bottleneck (0 < load ≤ 1): rate = load ×
        /// bottleneck rate (servers' side → clients' side) / (8 × mean size).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        load: Option<f64>,
        /// Request bytes, ≥ 1 (default 100B).
        #[serde(default = "d_short_request")]
        request: Size,
        /// Flows in all, ≥ 1; absent = until the end.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        flows: Option<u32>,
    }
    /// `kind = "udp"`: UDP background from the server to the client host, constant bit rate
    /// or Poisson, each packet `payload` + 28 header bytes (the congested-links study's constant congestion, docs/studies.md).
    Udp(UdpParams) = "udp" {
        /// Wire rate (headers included): absolute (`"600kbps"`, > 0) or a share of the
        /// bottleneck in the servers' side → clients' side direction (`"60%"`, 0 < x ≤ 100).
        rate: RateOrShare,
        /// Payload bytes per packet, 1..=65507 (default 1000B).
        #[serde(default = "d_udp_payload")]
        payload: Bytes,
        /// Exponential gaps instead of constant ones (default false).
        #[serde(default)]
        poisson: bool,
        /// When to stop sending; absent = the end of the run.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        stop: Option<Duration>,
    }
}

/// One `[[apps]]` entry: the common fields and the kind's parameters.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(into = "AppFile")]
pub struct AppSpec {
    pub common: AppCommon,
    pub params: AppParams,
}

impl<'de> Deserialize<'de> for AppSpec {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        tagged::deserialize::<AppFileRepr, D>(d).map(AppSpec::from)
    }
}

/// An entry's schema is its file form's: common and kind fields in one table with a `kind`.
impl schemars::JsonSchema for AppSpec {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "App".into()
    }
    fn json_schema(g: &mut schemars::SchemaGenerator) -> schemars::Schema {
        <AppFile as schemars::JsonSchema>::json_schema(g)
    }
}

impl AppSpec {
    pub fn kind(&self) -> &'static str {
        self.params.kind()
    }
}
