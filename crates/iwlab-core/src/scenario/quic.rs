//! QUIC settings in scenario files: a top-level `[quic]` table and an application's `quic`
//! table (field by field over it), used by applications with `transport = "quic"` (for now
//! `short-flows`).
//!
//! ```toml
//! [quic]
//! profile = "rfc9002"          # quinn | rfc9002 (named stack defaults)
//! initial_window = "10pkt"     # bytes ("14720", "12kB") or datagrams ("10pkt")
//! max_datagram_size = 1200     # UDP payload bytes, >= 1200
//! certificate_chain = "4kB"    # DER bytes of the server's chain
//! cc = "reno"                  # reno | cubic | bbr (quinn-proto's controllers)
//! pacing = true                # quinn-proto always paces: only true is accepted
//! ```

use super::apps::{AppParams, AppSpec};
use super::error::ScenarioError;
use super::units::Size;
use crate::transport::Transport;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// What carries an application's connections.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum TransportSpec {
    #[default]
    Tcp,
    /// QUIC on quinn-proto (RFC 9000/9001/9002); settings from `[quic]` and the app's `quic`.
    Quic,
}

impl TransportSpec {
    pub fn is_tcp(&self) -> bool {
        *self == TransportSpec::Tcp
    }
}

/// An initial window in bytes or in datagrams of `max_datagram_size`.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum QuicWindow {
    Bytes(u64),
    Datagrams(u64),
}

const PKT_UNITS: &[&str] = &["pkt", "pkts", "packets", "datagrams"];

impl std::str::FromStr for QuicWindow {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let t = s.trim();
        if let Some(u) = PKT_UNITS.iter().find(|u| t.ends_with(*u)) {
            let n = t[..t.len() - u.len()].trim();
            return n.parse::<u64>().map(QuicWindow::Datagrams).map_err(|_| {
                format!("{s:?} is not a window; expected bytes (\"14720\", \"12kB\") or datagrams (\"10pkt\")")
            });
        }
        match t.parse::<Size>() {
            Ok(Size::Bytes(b)) => Ok(QuicWindow::Bytes(b)),
            _ => Err(format!("{s:?} is not a window; expected bytes (\"14720\", \"12kB\") or datagrams (\"10pkt\")")),
        }
    }
}

impl std::fmt::Display for QuicWindow {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        match self {
            QuicWindow::Bytes(b) => write!(f, "{b}"),
            QuicWindow::Datagrams(n) => write!(f, "{n}pkt"),
        }
    }
}

impl schemars::JsonSchema for QuicWindow {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "QuicWindow".into()
    }
    fn json_schema(g: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let units = PKT_UNITS.join("|");
        schemars::json_schema!({
            "description": "Bytes (\"14720\", \"12kB\") or datagrams of max_datagram_size (\"10pkt\").",
            "anyOf": [
                { "type": "integer", "minimum": 0 },
                { "type": "string", "pattern": format!(r"^\s*[0-9]+\s*({units})\s*$") },
                g.subschema_for::<Size>(),
            ],
        })
    }
}

impl Serialize for QuicWindow {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            QuicWindow::Bytes(b) => s.serialize_u64(*b),
            QuicWindow::Datagrams(_) => s.serialize_str(&self.to_string()),
        }
    }
}

impl<'de> Deserialize<'de> for QuicWindow {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Repr {
            Bytes(u64),
            Text(String),
        }
        match Repr::deserialize(d)? {
            Repr::Bytes(b) => Ok(QuicWindow::Bytes(b)),
            Repr::Text(t) => t.parse().map_err(serde::de::Error::custom),
        }
    }
}

/// `[quic]` or an application's `quic`: absent fields take the profile's defaults.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct QuicSpec {
    /// Named stack defaults: `"quinn"` (quinn-proto 0.11 as shipped: CUBIC) or `"rfc9002"`
    /// (RFC 9002's NewReno); both: IW per RFC 9002 §7.2, 1 200-byte datagrams (default "quinn").
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub profile: Option<String>,
    /// Bytes or `"Npkt"` (N × max_datagram_size), ≥ 2 datagrams (default RFC 9002 §7.2:
    /// min(10 × size, max(14 720, 2 × size))).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub initial_window: Option<QuicWindow>,
    /// UDP payload bytes of every datagram, 1200..=65527 (default 1200; PMTU discovery off).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_datagram_size: Option<u64>,
    /// DER bytes of the server's certificate chain (default 4kB).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub certificate_chain: Option<Size>,
    /// Congestion controller: `"reno"`, `"cubic"` or `"bbr"` (default: the profile's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cc: Option<String>,
    /// Pacing (RFC 9002 §7.7). quinn-proto always paces; `false` is refused.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pacing: Option<bool>,
}

impl QuicSpec {
    pub fn is_empty(&self) -> bool {
        *self == QuicSpec::default()
    }
}

type R<T> = Result<T, ScenarioError>;

/// `app`'s field if set there, else the scenario's; with the path errors name.
fn pick<'a, T>(
    app: &'a Option<T>,
    top: &'a Option<T>,
    app_path: &str,
    field: &str,
) -> Option<(&'a T, String)> {
    match (app, top) {
        (Some(v), _) => Some((v, format!("{app_path}.quic.{field}"))),
        (None, Some(v)) => Some((v, format!("quic.{field}"))),
        (None, None) => None,
    }
}

/// The stack settings `app` (at path `p`) runs with.
pub(crate) fn quic_config(top: &QuicSpec, app: &QuicSpec, p: &str) -> R<crate::quic::QuicConfig> {
    use crate::quic::{QuicCc, QuicConfig, QuicProfile};
    let profile = match pick(&app.profile, &top.profile, p, "profile") {
        None => QuicProfile::Quinn,
        Some((v, f)) => match v.as_str() {
            "quinn" => QuicProfile::Quinn,
            "rfc9002" => QuicProfile::Rfc9002,
            _ => return Err(ScenarioError::value(f, format!("{v:?}"), "one of \"quinn\", \"rfc9002\"")),
        },
    };
    let mut c = QuicConfig::profile(profile);
    if let Some((&v, f)) = pick(&app.max_datagram_size, &top.max_datagram_size, p, "max_datagram_size") {
        if !(1200..=65_527).contains(&v) {
            return Err(ScenarioError::value(f, v, "1200..=65527 bytes (RFC 9000 §14; UDP payload)"));
        }
        c.max_datagram_size = v as u16;
        c.initial_window = crate::quic::rfc9002_initial_window(c.max_datagram_size);
    }
    if let Some((&v, f)) = pick(&app.initial_window, &top.initial_window, p, "initial_window") {
        let bytes = match v {
            QuicWindow::Bytes(b) => b,
            QuicWindow::Datagrams(n) => n.saturating_mul(c.max_datagram_size as u64),
        };
        let min = 2 * c.max_datagram_size as u64;
        if bytes < min || bytes > 1 << 30 {
            return Err(ScenarioError::value(
                f,
                v,
                format!("{min}..=1073741824 bytes (at least 2 datagrams of {}, RFC 9002 §7.2)", c.max_datagram_size),
            ));
        }
        c.initial_window = bytes;
    }
    if let Some((&v, f)) = pick(&app.certificate_chain, &top.certificate_chain, p, "certificate_chain") {
        let (min, max) = (crate::quic::min_chain_bytes() as u64, crate::quic::MAX_CHAIN_BYTES as u64);
        match v {
            Size::Bytes(b) if (min..=max).contains(&b) => c.certificate_chain = b as u32,
            _ => return Err(ScenarioError::value(f, v, format!("{min}..={max} bytes (one Ed25519 certificate and padding)"))),
        }
    }
    if let Some((v, f)) = pick(&app.cc, &top.cc, p, "cc") {
        c.cc = match v.as_str() {
            "reno" | "newreno" => QuicCc::NewReno,
            "cubic" => QuicCc::Cubic,
            "bbr" => QuicCc::Bbr,
            _ => return Err(ScenarioError::value(f, format!("{v:?}"), "one of \"reno\", \"cubic\", \"bbr\"")),
        };
    }
    if let Some((&false, f)) = pick(&app.pacing, &top.pacing, p, "pacing") {
        return Err(ScenarioError::value(
            f,
            false,
            "true: quinn-proto always paces (bursts of max(10 datagrams, 2 ms of cwnd), then 1.25 x cwnd / srtt); \
             an unpaced QUIC sender needs another stack",
        ));
    }
    c.validate().map_err(|e| ScenarioError::invalid(format!("{p}.quic"), e))?;
    Ok(c)
}

/// The transport of application `a` (at path `p`), its QUIC stack built.
pub(crate) fn transport(top: &QuicSpec, a: &AppSpec, p: &str) -> R<Transport> {
    let (transport, quic) = match &a.params {
        AppParams::ShortFlows(s) => {
            if s.transport == TransportSpec::Quic && s.request.is_zero() {
                return Err(ScenarioError::value(
                    format!("{p}.request"),
                    s.request,
                    ">= 1 byte with transport = \"quic\" (the request opens the stream the response comes back on)",
                ));
            }
            (s.transport, &s.quic)
        }
        _ => return Ok(Transport::Tcp),
    };
    match transport {
        TransportSpec::Tcp if !quic.is_empty() => Err(ScenarioError::invalid(
            format!("{p}.quic"),
            "is set but transport = \"tcp\"; add transport = \"quic\" or remove the table",
        )),
        TransportSpec::Tcp => Ok(Transport::Tcp),
        TransportSpec::Quic => {
            #[cfg(feature = "quic")]
            {
                let c = quic_config(top, quic, p)?;
                let stack = crate::quic::QuicStack::new(c).map_err(|e| ScenarioError::invalid(format!("{p}.quic"), e))?;
                Ok(Transport::Quic(std::sync::Arc::new(stack)))
            }
            #[cfg(not(feature = "quic"))]
            {
                let _ = (top, quic);
                Err(ScenarioError::value(
                    format!("{p}.transport"),
                    "\"quic\"",
                    "\"tcp\" (this build has no `quic` feature)",
                ))
            }
        }
    }
}

/// [`quic_config`] for tests: `app` over `top`, errors as messages.
#[doc(hidden)]
pub fn quic_config_for_tests(top: &QuicSpec, app: &QuicSpec) -> Result<crate::quic::QuicConfig, String> {
    quic_config(top, app, "apps[0]").map_err(|e| e.message().to_string())
}
