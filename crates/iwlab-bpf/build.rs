//! Compiles the eBPF programs (bpf/*.bpf.c) with clang for the `bpf` target; the loader embeds
//! the objects. clang and libbpf's headers come from Debian (`make deps-bpf`); `$CLANG` overrides.
use std::{env, path::PathBuf, process::Command};

fn main() {
    let out_dir = PathBuf::from(env::var("OUT_DIR").unwrap());
    let clang = env::var("CLANG").unwrap_or_else(|_| "clang".into());
    // <linux/bpf.h> includes <asm/types.h>, which Debian keeps under the multiarch directory.
    let arch = env::var("CARGO_CFG_TARGET_ARCH").unwrap();
    let multiarch = format!("/usr/include/{arch}-linux-gnu");
    for f in ["bpf/flow_iw.bpf.c", "bpf/flow_iw.h", "bpf/evidence.bpf.c", "bpf/evidence.h"] {
        println!("cargo:rerun-if-changed={f}");
    }
    println!("cargo:rerun-if-env-changed=CLANG");
    for name in ["flow_iw", "evidence"] {
        let src = format!("bpf/{name}.bpf.c");
        let status = Command::new(&clang)
            .args(["-target", "bpf", "-O2", "-g", "-Wall", "-Werror", "-I", &multiarch, "-c"])
            .arg(&src)
            .arg("-o")
            .arg(out_dir.join(format!("{name}.bpf.o")))
            .status()
            .unwrap_or_else(|e| {
                panic!("cannot run {clang} ({e}): install clang and libbpf-dev (`make deps-bpf`) or set CLANG")
            });
        assert!(status.success(), "{clang} failed to compile {src} (see above)");
    }
}
