//! Policy files: the `[iw]` section of a scenario — the same policy kinds
//! and parameters, validated by the same code — plus `[[routes]]` mapping destination
//! prefixes onto policies, for `iwlab run --policy` and `iwlab apply`.
//!
//! ```toml
//! [iw]
//! default = "ten"                      # optional
//! [iw.policies]
//! ten = { kind = "fixed", segments = 10 }
//!
//! [[routes]]
//! prefix = "10.77.2.0/24"              # IPv4 or IPv6 CIDR (host bits zero), or "default"
//! policy = "ten"
//! initrwnd = 20                        # optional, segments ≥ 1
//! congctl = "cubic"                    # optional, a congestion control name
//!
//! [tcp]                                # optional: pacing of every connection deployed
//! pacing = true                        # Linux's internal pacing (200 % / 120 % of cwnd/SRTT)
//! paced_iw = true                      # the first flight spread over the handshake RTT
//!
//! [quic]                               # optional: the QUIC settings deployed (`iwlab advise
//! initial_window = 14600               # --transport quic`): a scenario's `[quic]` keys, checked alike
//! max_datagram_size = 1460
//! pacing = true
//! ```
//!
//! `[tcp]` takes only what `iwlab flow-iw` deploys (a `sock_ops` program setting
//! `SO_MAX_PACING_RATE`): `paced_iw` needs `pacing`, because once a socket's max pacing rate was
//! set Linux keeps pacing it internally (`sk_setsockopt()` moves `sk_pacing_status` to
//! `SK_PACING_NEEDED` for good), so lifting the first flight's rate leaves the 200 %/120 % pacing.
//!
//! Every error names the field path (`routes[1].prefix`), the value, what is allowed, and
//! the line (the same locating as scenario files).

use super::error::{line_col, ErrorKind, ScenarioError};
use super::model::{IwSection, IwSpec};
use super::validate::{iw_section, one_of};
use crate::tcp::iw::IwConfig;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::net::IpAddr;

/// A destination prefix and its parsing: the one definition iwlab-bpf and the Python API use too.
pub use iwlab_prefix::Prefix;

/// A route of the file, as written.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RouteSpec {
    pub prefix: String,
    pub policy: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub initrwnd: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub congctl: Option<String>,
}

/// The file's `[tcp]`: the pacing deployed with the policies (scenario keys `tcp.pacing`,
/// `tcp.paced_iw`, same meaning).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PolicyTcp {
    #[serde(default)]
    pub pacing: bool,
    #[serde(default)]
    pub paced_iw: bool,
}

/// The file, as written.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PolicyFileSpec {
    #[serde(default)]
    pub iw: IwSection,
    #[serde(default)]
    pub routes: Vec<RouteSpec>,
    #[serde(default)]
    pub tcp: PolicyTcp,
    #[serde(default, skip_serializing_if = "super::quic::QuicSpec::is_empty")]
    pub quic: super::quic::QuicSpec,
}

/// A validated route.
#[derive(Clone, Debug, PartialEq)]
pub struct Route {
    pub prefix: Prefix,
    pub policy: String,
    pub initrwnd: Option<u32>,
    pub congctl: Option<String>,
    /// 1-based line of the route's `prefix` in the file (0 when not parsed from text).
    pub line: usize,
}

/// A validated policy file.
#[derive(Clone, Debug)]
pub struct PolicyFile {
    pub spec: PolicyFileSpec,
    /// The engine's configuration of each policy, by name.
    pub configs: BTreeMap<String, IwConfig>,
    pub routes: Vec<Route>,
}

impl PolicyFile {
    /// Parses and validates TOML text.
    pub fn from_toml_str(text: &str) -> Result<PolicyFile, ScenarioError> {
        if let Err(e) = text.parse::<toml::Table>() {
            let loc = e.span().map(|s| line_col(text, s.start));
            return Err(ScenarioError::new(ErrorKind::Syntax, "", e.message().trim(), loc));
        }
        let de = toml::Deserializer::new(text);
        let spec: PolicyFileSpec = serde_path_to_error::deserialize(de).map_err(|e| {
            let path = super::tagged::path_string(e.path());
            let inner = e.into_inner();
            let loc = inner.span().map(|s| line_col(text, s.start));
            super::locate_in(text, super::schema_error(path, inner.message().trim(), loc))
        })?;
        let mut f = Self::validate(spec).map_err(|e| super::locate_in(text, e))?;
        for (i, r) in f.routes.iter_mut().enumerate() {
            r.line = super::locate::locate(text, &format!("routes[{i}].prefix")).map_or(0, |o| line_col(text, o).0);
        }
        Ok(f)
    }

    /// Validates a parsed file.
    pub fn validate(spec: PolicyFileSpec) -> Result<PolicyFile, ScenarioError> {
        let configs = iw_section(&spec.iw)?;
        if !spec.iw.routes.is_empty() {
            return Err(ScenarioError::invalid("iw.routes", "a policy file writes its routes as [[routes]]"));
        }
        let routes = validate_routes(&spec.routes, &configs, "routes")?;
        if spec.tcp.paced_iw && !spec.tcp.pacing {
            return Err(ScenarioError::value(
                "tcp.paced_iw",
                true,
                "true only with tcp.pacing = true (Linux keeps pacing a socket internally once its \
                 SO_MAX_PACING_RATE was set, so a deployed paced IW is followed by internal pacing)",
            ));
        }
        #[cfg(feature = "quic")]
        if !spec.quic.is_empty() {
            // The same checks as a scenario's `[quic]` (the field paths read `quic.<field>`).
            super::quic::quic_config(&spec.quic, &super::quic::QuicSpec::default(), "")?;
        }
        Ok(PolicyFile { spec, configs, routes })
    }

    /// The policies as canonical JSON values (as a scenario's JSON has them), by name.
    pub fn policies_json(&self) -> BTreeMap<String, serde_json::Value> {
        self.spec
            .iw
            .policies
            .iter()
            .map(|(k, v)| (k.clone(), serde_json::to_value(v).expect("policies serialise")))
            .collect()
    }

    /// The whole file as canonical JSON: `policies`, `default`, `routes` (prefix text or
    /// null for the default route, policy, initrwnd, congctl, line), `tcp` (`pacing`, `paced_iw`),
    /// `quic` (the `[quic]` keys given; `{}` when none).
    pub fn to_json_string(&self) -> String {
        let routes: Vec<serde_json::Value> = self
            .routes
            .iter()
            .map(|r| {
                serde_json::json!({
                    "prefix": match r.prefix { Prefix::Default => None, p => Some(p.to_string()) },
                    "policy": r.policy,
                    "initrwnd": r.initrwnd,
                    "congctl": r.congctl,
                    "line": r.line,
                })
            })
            .collect();
        serde_json::json!({ "policies": self.policies_json(), "default": self.spec.iw.default, "routes": routes,
                            "tcp": {"pacing": self.spec.tcp.pacing, "paced_iw": self.spec.tcp.paced_iw},
                            "quic": serde_json::to_value(&self.spec.quic).expect("quic settings serialise") })
        .to_string()
    }
}

/// Validates routes (`[[routes]]` of a policy file, `[[iw.routes]]` of a scenario, at `path`)
/// against the defined policies.
pub(crate) fn validate_routes(
    specs: &[RouteSpec],
    configs: &BTreeMap<String, IwConfig>,
    path: &str,
) -> Result<Vec<Route>, ScenarioError> {
    let mut routes: Vec<Route> = Vec::new();
    for (i, r) in specs.iter().enumerate() {
        let path = format!("{path}[{i}]");
        let prefix = Prefix::parse(&r.prefix)
            .map_err(|why| ScenarioError::value(format!("{path}.prefix"), format!("{:?}", r.prefix), why))?;
        if let Some(j) = routes.iter().position(|o| o.prefix == prefix) {
            return Err(ScenarioError::value(
                format!("{path}.prefix"),
                format!("{:?}", r.prefix),
                format!("a prefix not routed already (routes[{j}] has {prefix})"),
            ));
        }
        if !configs.contains_key(&r.policy) {
            return Err(ScenarioError::value(
                format!("{path}.policy"),
                format!("{:?}", r.policy),
                one_of("a policy of [iw.policies]", configs.keys()),
            ));
        }
        if r.initrwnd == Some(0) {
            return Err(ScenarioError::value(format!("{path}.initrwnd"), 0, ">= 1 segment, or absent"));
        }
        if let Some(c) = &r.congctl {
            // TCP_CA_NAME_MAX is 16 bytes with the terminating NUL.
            let ok = !c.is_empty() && c.len() <= 15 && c.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
            if !ok {
                return Err(ScenarioError::value(
                    format!("{path}.congctl"),
                    format!("{c:?}"),
                    "a congestion control name: 1 to 15 letters, digits or '_' (e.g. \"cubic\", \"reno\", \"bbr\")",
                ));
            }
        }
        routes.push(Route {
            prefix,
            policy: r.policy.clone(),
            initrwnd: r.initrwnd,
            congctl: r.congctl.clone(),
            line: 0,
        });
    }
    Ok(routes)
}

/// The route of `routes` covering `addr`: the longest prefix, else the default route
/// (`iwlab_prefix::longest_match`).
pub fn route_for(routes: &[Route], addr: IpAddr) -> Option<usize> {
    iwlab_prefix::longest_match(routes.iter().map(|r| &r.prefix), addr)
}

/// The address of each simulated host, as the emulator gives them (python/iwlab/emulate/
/// plan.py): host g — left hosts first, then right, each group in file order — is
/// 198.18.0.0 + 4g + 2. Policy-file prefixes mean the same hosts in simulation and emulation.
pub fn sim_host_addresses(groups: &[super::GroupNodes]) -> Vec<(crate::net::packet::NodeId, IpAddr)> {
    const LINK_BASE: u32 = 0xC612_0000; // 198.18.0.0
    let mut g = 0u32;
    let mut out = Vec::new();
    for side in [super::GroupSide::Left, super::GroupSide::Right] {
        for grp in groups.iter().filter(|x| x.side == side) {
            for &n in &grp.nodes {
                out.push((n, IpAddr::V4((LINK_BASE + 4 * g + 2).into())));
                g += 1;
            }
        }
    }
    out
}

/// The destination → route table of a scenario's `[[iw.routes]]` (None without routes).
pub(crate) fn route_table(
    routes: &[Route],
    groups: &[super::GroupNodes],
) -> Option<std::sync::Arc<crate::tcp::iw::RouteTable>> {
    if routes.is_empty() {
        return None;
    }
    let hosts = sim_host_addresses(groups);
    let nodes = hosts.iter().map(|(n, _)| *n as usize + 1).max().unwrap_or(0);
    let mut route_of = vec![None; nodes];
    for (n, addr) in hosts {
        route_of[n as usize] = route_for(routes, addr).map(|i| i as u32);
    }
    let policy_of = routes.iter().map(|r| r.policy.clone()).collect();
    Some(std::sync::Arc::new(crate::tcp::iw::RouteTable { route_of, policy_of }))
}

/// Validates `[iw.policies]`-style specs given as JSON (`{"name": {"kind": …}}`), with the
/// scenario's code; returns the engine's configurations.
pub fn policies_from_json(text: &str) -> Result<BTreeMap<String, IwConfig>, ScenarioError> {
    let policies: BTreeMap<String, IwSpec> = serde_json::from_str(text)
        .map_err(|e| ScenarioError::new(ErrorKind::Schema, "iw.policies", format!("iw.policies: {e}"), None))?;
    iw_section(&IwSection { default: None, policies, routes: Vec::new() })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn err(text: &str) -> (String, Option<usize>) {
        let e = PolicyFile::from_toml_str(text).unwrap_err();
        (e.to_string(), e.line())
    }

    #[test]
    fn the_issues_minimal_example_loads() {
        let f = PolicyFile::from_toml_str(
            "[iw.policies]\nten = { kind = \"fixed\", segments = 10 }\n\n[[routes]]\nprefix = \"10.77.2.0/24\"\npolicy = \"ten\"\n",
        )
        .unwrap();
        assert_eq!(f.routes.len(), 1);
        assert_eq!(f.routes[0].prefix.to_string(), "10.77.2.0/24");
        assert_eq!(f.routes[0].line, 5);
        assert_eq!(f.configs["ten"], IwConfig::Fixed { segments: 10 });
        assert!(f.to_json_string().contains(r#""policies":{"ten":{"kind":"fixed","segments":10}}"#));
    }

    #[cfg(feature = "quic")]
    #[test]
    fn a_quic_table_is_checked_as_a_scenarios_and_kept_in_the_json() {
        let f = PolicyFile::from_toml_str("[quic]\ninitial_window = 14600\nmax_datagram_size = 1460\npacing = true\n")
            .unwrap();
        assert_eq!(f.spec.quic.max_datagram_size, Some(1460));
        assert!(f.to_json_string().contains(r#""quic":{"initial_window":14600,"max_datagram_size":1460,"pacing":true}"#));
        let (e, line) = err("[quic]\ninitial_window = 1000\n");
        assert!(e.contains("quic.initial_window") && e.contains("2400..="), "{e}");
        assert_eq!(line, Some(2));
        assert!(err("[quic]\npacing = false\n").0.contains("quinn-proto always paces"));
        assert!(PolicyFile::from_toml_str("[iw.policies]\nten = { kind = \"fixed\", segments = 10 }\n")
            .unwrap()
            .to_json_string()
            .contains(r#""quic":{}"#));
    }

    #[test]
    fn prefixes_are_cidr_with_host_bits_zero() {
        assert_eq!(Prefix::parse("2001:db8::/32").unwrap().to_string(), "2001:db8::/32");
        assert_eq!(Prefix::parse("0.0.0.0/0").unwrap().to_string(), "0.0.0.0/0");
        assert_eq!(Prefix::parse("::/0").unwrap().to_string(), "::/0");
        assert!(Prefix::parse("::1/0").unwrap_err().contains("the network is ::/0"));
        assert_eq!(Prefix::parse("10.0.0.1/32").unwrap().to_string(), "10.0.0.1/32");
        assert!(Prefix::parse("10.0.0.1/24").unwrap_err().contains("the network is 10.0.0.0/24"));
        assert!(Prefix::parse("10.0.0.0/33").unwrap_err().contains("0..=32"));
        assert!(Prefix::parse("10.0.0.0").unwrap_err().contains("length is missing"));
        assert!(Prefix::parse("10.0.0/8").unwrap_err().contains("not an IP address"));
    }

    #[test]
    fn errors_name_field_value_allowed_and_line() {
        let head = "[iw.policies]\nten = { kind = \"fixed\", segments = 10 }\n[[routes]]\n";
        let (m, l) = err(&format!("{head}prefix = \"10.77.2.1/24\"\npolicy = \"ten\"\n"));
        assert!(m.starts_with("routes[0].prefix = \"10.77.2.1/24\" is not allowed; expected"), "{m}");
        assert_eq!(l, Some(4));
        let (m, l) = err(&format!("{head}prefix = \"default\"\npolicy = \"nine\"\n"));
        assert!(
            m.contains(
                "routes[0].policy = \"nine\" is not allowed; expected a policy of [iw.policies], one of [\"ten\"]"
            ),
            "{m}"
        );
        assert_eq!(l, Some(5));
        let (m, l) = err(&format!("{head}prefix = \"default\"\npolicy = \"ten\"\ncolour = 1\n"));
        assert!(m.contains("unknown field `colour`"), "{m}");
        assert_eq!(l, Some(6));
        let (m, l) = err("[iw.policies]\nx = { kind = \"aimd\", min = 5, initial = 4 }\n");
        assert!(m.contains("iw.policies.x.initial = 4 is not allowed; expected 5 ..= 40"), "{m}");
        assert_eq!(l, Some(2));
        let (m, _) = err(&format!("{head}prefix = \"default\"\npolicy = \"ten\"\ninitrwnd = 0\n"));
        assert!(m.contains("routes[0].initrwnd = 0 is not allowed"), "{m}");
        let (m, _) = err(&format!("{head}prefix = \"default\"\npolicy = \"ten\"\ncongctl = \"cu bic\"\n"));
        assert!(m.contains("routes[0].congctl = \"cu bic\" is not allowed; expected a congestion control name"), "{m}");
        let two =
            format!("{head}prefix = \"::/0\"\npolicy = \"ten\"\n[[routes]]\nprefix = \"::/0\"\npolicy = \"ten\"\n");
        let (m, l) = err(&two);
        assert!(
            m.contains("routes[1].prefix = \"::/0\" is not allowed; expected a prefix not routed already (routes[0]"),
            "{m}"
        );
        assert_eq!(l, Some(7));
        let (m, l) = err("[iw]\ndefault = \"z\"\n");
        assert!(m.contains("iw.default = \"z\""), "{m}");
        assert_eq!(l, Some(2));
        let (m, _) = err("[[routes]\n");
        assert!(m.starts_with("syntax error at line 1"), "{m}");
    }

    #[test]
    fn tcp_carries_the_deployable_pacing_only() {
        let head = "[iw.policies]\nten = { kind = \"fixed\", segments = 10 }\n";
        let f = PolicyFile::from_toml_str(&format!("{head}[tcp]\npacing = true\npaced_iw = true\n")).unwrap();
        assert_eq!(f.spec.tcp, PolicyTcp { pacing: true, paced_iw: true });
        assert!(f.to_json_string().contains(r#""tcp":{"paced_iw":true,"pacing":true}"#), "{}", f.to_json_string());
        let plain = PolicyFile::from_toml_str(head).unwrap();
        assert_eq!(plain.spec.tcp, PolicyTcp::default());
        let (m, l) = err(&format!("{head}[tcp]\npaced_iw = true\n"));
        assert!(m.starts_with("tcp.paced_iw = true is not allowed; expected true only with tcp.pacing = true"), "{m}");
        assert_eq!(l, Some(4));
        // The ratios are per-namespace sysctls, not something a cgroup's programs deploy.
        let (m, l) = err(&format!("{head}[tcp]\npacing_ss_ratio = 150\n"));
        assert!(m.contains("unknown field `pacing_ss_ratio`") && m.contains("expected `pacing` or `paced_iw`"), "{m}");
        assert_eq!(l, Some(4));
        let (m, _) = err(&format!("{head}[tcp]\npacing = 1\n"));
        assert!(m.contains("tcp.pacing"), "{m}");
    }

    #[test]
    fn policies_from_json_uses_the_scenario_validation() {
        let c = policies_from_json(r#"{"a": {"kind": "learned", "samples": 4}}"#).unwrap();
        assert_eq!(c["a"], IwConfig::Learned { initial: 10, min: 3, max: 40, samples: 4, percentile: 50 });
        let e = policies_from_json(r#"{"a": {"kind": "learned", "percentile": 0}}"#).unwrap_err();
        assert!(e.to_string().contains("iw.policies.a.percentile = 0 is not allowed; expected 1 ..= 100"));
    }

    #[test]
    fn the_longest_prefix_then_the_default_route_covers_an_address() {
        let f = PolicyFile::from_toml_str(
            "[iw.policies]\na = { kind = \"rfc3390\" }\n[[routes]]\nprefix = \"default\"\npolicy = \"a\"\n\
             [[routes]]\nprefix = \"198.18.0.0/16\"\npolicy = \"a\"\n[[routes]]\nprefix = \"198.18.0.0/30\"\npolicy = \"a\"\n\
             [[routes]]\nprefix = \"2001:db8::/32\"\npolicy = \"a\"\n",
        )
        .unwrap();
        let at = |a: &str| route_for(&f.routes, a.parse().unwrap());
        assert_eq!(at("198.18.0.2"), Some(2));
        assert_eq!(at("198.18.0.6"), Some(1));
        assert_eq!(at("10.0.0.1"), Some(0));
        assert_eq!(at("2001:db8::1"), Some(3));
        assert_eq!(at("::1"), Some(0));
        assert_eq!(route_for(&f.routes[1..], "10.0.0.1".parse().unwrap()), None);
    }

    #[test]
    fn simulated_hosts_have_the_emulators_addresses() {
        use crate::scenario::{GroupNodes, GroupSide};
        let g = |name: &str, side, nodes: Vec<u32>| GroupNodes { name: name.into(), side, nodes, access: vec![] };
        let groups =
            [g("c", GroupSide::Left, vec![2, 3]), g("s", GroupSide::Right, vec![4]), g("d", GroupSide::Left, vec![5])];
        // Left hosts first (both left groups, in order), then right: g = 0, 1, 2 (node 5), 3 (node 4).
        let a: Vec<(u32, String)> = sim_host_addresses(&groups).into_iter().map(|(n, a)| (n, a.to_string())).collect();
        let want = [(2, "198.18.0.2"), (3, "198.18.0.6"), (5, "198.18.0.10"), (4, "198.18.0.14")];
        assert_eq!(a, want.map(|(n, s)| (n, s.to_string())));
    }
}
