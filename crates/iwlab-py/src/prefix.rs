//! Route prefixes for the Python policy file (`iwlab.policy.file`): which route covers an
//! address, and the policy kinds whose routes the eBPF reader may sum. Thin wrappers of
//! `iwlab_prefix` and `iwlab_core::tcp::iw`; Python holds no matching of its own.

use iwlab_core::tcp::iw::IwConfig;
use iwlab_prefix::{longest_match, peer_match, Prefix};
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use std::net::IpAddr;

fn prefixes(list: &[String]) -> PyResult<Vec<Prefix>> {
    list.iter()
        .enumerate()
        .map(|(i, s)| {
            Prefix::parse(s)
                .map_err(|why| PyValueError::new_err(format!("prefixes[{i}] = {s:?} is not allowed; expected {why}")))
        })
        .collect()
}

fn address(addr: &str) -> PyResult<IpAddr> {
    addr.parse().map_err(|_| {
        PyValueError::new_err(format!("addr = {addr:?} is not allowed; expected an IPv4 or IPv6 address"))
    })
}

/// The index of the prefix covering `addr`: the longest network of its family (the first of
/// equal length), else the first "default"; None if neither. ValueError for a bad prefix or
/// address, naming it.
#[pyfunction]
fn route_for(prefixes: Vec<String>, addr: &str) -> PyResult<Option<usize>> {
    Ok(longest_match(&self::prefixes(&prefixes)?, address(addr)?))
}

/// As `route_for`, for a connection's peer: an IPv4-mapped IPv6 address is matched as its IPv4
/// address, a loopback peer has no route.
#[pyfunction]
fn peer_route(prefixes: Vec<String>, addr: &str) -> PyResult<Option<usize>> {
    Ok(peer_match(&self::prefixes(&prefixes)?, address(addr)?))
}

/// The index of the prefix equal to `prefix` ("default" or a CIDR, compared as networks, so
/// "2001:DB8::/32" is "2001:db8::/32"); None if there is none or `prefix` is not a prefix.
#[pyfunction]
fn prefix_index(prefixes: Vec<String>, prefix: &str) -> PyResult<Option<usize>> {
    let Ok(want) = Prefix::parse(prefix) else { return Ok(None) };
    Ok(self::prefixes(&prefixes)?.iter().position(|p| *p == want))
}

/// The policy kinds whose routes' clean closes may be summed per prefix
/// (`IwConfig::SUMMARY_KINDS`: their decisions depend only on IW-loss events).
#[pyfunction]
fn summary_kinds() -> Vec<&'static str> {
    IwConfig::SUMMARY_KINDS.to_vec()
}

pub fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(route_for, m)?)?;
    m.add_function(wrap_pyfunction!(peer_route, m)?)?;
    m.add_function(wrap_pyfunction!(prefix_index, m)?)?;
    m.add_function(wrap_pyfunction!(summary_kinds, m)?)?;
    Ok(())
}
