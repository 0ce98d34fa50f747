//! Fingerprints the engine: a SHA-256 of the simulator core's sources and the lock file, so a
//! sweep can tell runs stored by another engine build (whose results may differ) from its own.

use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            files(&p, out);
        } else {
            out.push(p);
        }
    }
}

fn main() {
    let here = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap());
    let core = here.join("../iwlab-core");
    let lock = here.join("../../Cargo.lock");
    let mut paths = Vec::new();
    files(&core.join("src"), &mut paths);
    paths.push(core.join("Cargo.toml"));
    paths.push(lock.clone());
    paths.sort();
    let mut h = Sha256::new();
    let mut found = 0;
    for p in &paths {
        if let Ok(bytes) = std::fs::read(p) {
            h.update(p.strip_prefix(&here).unwrap_or(p).to_string_lossy().as_bytes());
            h.update((bytes.len() as u64).to_le_bytes());
            h.update(&bytes);
            found += 1;
        }
    }
    let id = if found == 0 {
        // Built outside the workspace: only the package version identifies the engine.
        format!("v{}", std::env::var("CARGO_PKG_VERSION").unwrap())
    } else {
        h.finalize().iter().take(6).map(|b| format!("{b:02x}")).collect()
    };
    println!("cargo:rustc-env=IWLAB_ENGINE_ID={id}");
    println!("cargo:rerun-if-changed={}", core.join("src").display());
    println!("cargo:rerun-if-changed={}", core.join("Cargo.toml").display());
    println!("cargo:rerun-if-changed={}", lock.display());
}
