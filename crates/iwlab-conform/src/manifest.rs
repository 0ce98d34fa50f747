//! Known divergences between the engine and Linux: `tests/conformance/known-divergences.toml`,
//! one `[[divergence]]` per script that fails on purpose (`script`, `rule`, `why`). The corpus
//! test expects exactly these scripts to fail, so an engine fix that makes one pass must also
//! remove its entry. `[[kernel_unverified]]` (`script`, `why`) lists the scripts that pin a rule
//! from the kernel's source without a run on a kernel (the engine must pass them like any other).

use serde::Deserialize;

#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct Divergence {
    /// Path relative to tests/conformance/.
    pub script: String,
    /// The Linux rule the engine does not follow (kernel function).
    pub rule: String,
    /// Why it is not fixed yet.
    pub why: String,
}

/// A corpus script written from the kernel's source and not run on a kernel.
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub struct Unverified {
    pub script: String,
    /// Why no kernel run backs it.
    pub why: String,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    #[serde(default)]
    pub divergence: Vec<Divergence>,
    #[serde(default)]
    pub kernel_unverified: Vec<Unverified>,
}

impl Manifest {
    pub fn parse(text: &str) -> Result<Manifest, String> {
        toml::from_str(text).map_err(|e| e.to_string())
    }
    pub fn get(&self, script: &str) -> Option<&Divergence> {
        self.divergence.iter().find(|d| d.script == script)
    }
}
