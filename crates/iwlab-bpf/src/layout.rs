//! What the loader shares with bpf/flow_iw.h: the config map's value, the counters, the pins.
//! A test below reads the header, so the two cannot drift apart.

/// `struct iwlab_flow_iw_config`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Config {
    pub default_iw: u32,
    pub max_iw: u32,
    pub flags: u32,
    pub reserved: u32,
}

// SAFETY: plain u32 fields, no padding.
unsafe impl aya::Pod for Config {}

/// `IWLAB_CFG_CREATED_CGROUP`, `IWLAB_CFG_PACING`, `IWLAB_CFG_PACED_IW`.
pub const CFG_CREATED_CGROUP: u32 = 1;
pub const CFG_PACING: u32 = 2;
pub const CFG_PACED_IW: u32 = 4;

/// `enum iwlab_flow_iw_stat`, in order.
pub const STATS: [&str; 10] = [
    "default_set",
    "default_failed",
    "hint_set",
    "hint_refused",
    "hint_invalid",
    "pacing_set",
    "paced_iw_set",
    "paced_iw_lifted",
    "paced_iw_no_rtt",
    "pacing_failed",
];

/// Program and map names in the object (section symbols), and the names they are pinned under.
pub const SOCKOPS: &str = "iwlab_iw_sockops";
pub const SETSOCKOPT: &str = "iwlab_iw_setopt";
pub const CONFIG_MAP: &str = "iwlab_iw_config";
pub const STATS_MAP: &str = "iwlab_iw_stats";
pub const PIN_SOCKOPS: &str = "link_sockops";
pub const PIN_SETSOCKOPT: &str = "link_setsockopt";
pub const PIN_CONFIG: &str = "map_config";
pub const PIN_STATS: &str = "map_stats";
/// Every pin, in the order detach removes them (links first: the programs stop before their maps go).
pub const PINS: [&str; 4] = [PIN_SOCKOPS, PIN_SETSOCKOPT, PIN_CONFIG, PIN_STATS];

#[cfg(test)]
mod tests {
    use super::*;

    const HEADER: &str = include_str!("../bpf/flow_iw.h");

    #[test]
    fn config_struct_has_the_headers_fields_in_order() {
        let body = HEADER.split("struct iwlab_flow_iw_config {").nth(1).unwrap();
        let body = body.split("};").next().unwrap();
        let fields: Vec<&str> = body
            .lines()
            .filter_map(|l| l.trim().strip_prefix("__u32 "))
            .map(|l| l.split(';').next().unwrap())
            .collect();
        assert_eq!(fields, ["default_iw", "max_iw", "flags", "reserved"]);
        assert_eq!(std::mem::size_of::<Config>(), 4 * fields.len());
    }

    #[test]
    fn counters_are_the_headers_enum_in_order() {
        let body = HEADER.split("enum iwlab_flow_iw_stat {").nth(1).unwrap();
        let names: Vec<String> = body
            .lines()
            .map(|l| l.trim().trim_end_matches(',').split(" = ").next().unwrap().to_string())
            .take_while(|l| l != "};")
            .filter(|l| !l.is_empty() && l != "IWLAB_STAT_COUNT")
            .collect();
        let ours: Vec<String> = STATS.iter().map(|s| format!("IWLAB_STAT_{}", s.to_uppercase())).collect();
        assert_eq!(names, ours);
    }

    #[test]
    fn config_flags_match() {
        assert!(HEADER.contains(&format!("#define IWLAB_CFG_CREATED_CGROUP {CFG_CREATED_CGROUP}u")));
        assert!(HEADER.contains(&format!("#define IWLAB_CFG_PACING {CFG_PACING}u")));
        assert!(HEADER.contains(&format!("#define IWLAB_CFG_PACED_IW {CFG_PACED_IW}u")));
    }
}
