//! attach / configure / status / detach of the per-flow IW programs for one cgroup.
//!
//! Everything attached lives in one pin directory (on bpffs): two cgroup links and two maps.
//! The pins are what keeps the programs attached after this process exits, and the only state:
//! `status` and `detach` find everything from the directory. Attach is all-or-nothing: until
//! the links are pinned (last) they are held by this process alone, so an error or a kill
//! leaves nothing attached; `detach` removes whatever part of a directory exists.
use std::{
    fs::{self, File},
    io,
    os::{
        fd::{AsFd, OwnedFd},
        unix::fs::MetadataExt,
    },
    path::{Path, PathBuf},
};

use aya::{
    maps::{Array, MapData, PerCpuArray},
    programs::{CgroupSockopt, SockOps},
    Ebpf,
};
use serde_json::{json, Value};

use crate::{
    layout::{self, Config},
    sys, Error,
};

static OBJECT: &[u8] = aya::include_bytes_aligned!(concat!(env!("OUT_DIR"), "/flow_iw.bpf.o"));

pub struct AttachArgs {
    pub cgroup: PathBuf,
    pub pins: PathBuf,
    pub config: Config,
}

fn kernel(what: &str, e: impl std::fmt::Display) -> Error {
    Error::Kernel(format!("{what}: {e}"))
}

/// A cgroup v2 directory below the hierarchy's root: programs never go on the root cgroup.
pub(crate) fn check_cgroup(cgroup: &Path) -> Result<(), Error> {
    let magic = sys::fs_magic(cgroup).map_err(|e| Error::Usage(format!("cgroup {}: {e}", cgroup.display())))?;
    if magic != sys::CGROUP2_SUPER_MAGIC {
        return Err(Error::Usage(format!("cgroup {}: not on a cgroup2 file system", cgroup.display())));
    }
    let parent = cgroup.parent().unwrap_or(cgroup);
    if sys::fs_magic(parent).ok() != Some(sys::CGROUP2_SUPER_MAGIC) {
        return Err(Error::Usage(format!(
            "cgroup {}: is the root of the cgroup2 hierarchy; attach to a cgroup of its own",
            cgroup.display()
        )));
    }
    Ok(())
}

fn check_pin_parent(pins: &Path) -> Result<(), Error> {
    let parent = pins.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    match sys::fs_magic(parent) {
        Ok(sys::BPF_FS_MAGIC) => Ok(()),
        Ok(_) => {
            Err(Error::Usage(format!("pins {}: {} is not on a bpf file system", pins.display(), parent.display())))
        }
        Err(e) => Err(Error::Usage(format!("pins {}: {}: {e}", pins.display(), parent.display()))),
    }
}

fn load() -> Result<Ebpf, Error> {
    let mut ebpf = Ebpf::load(OBJECT).map_err(|e| kernel("loading the BPF object", e))?;
    let sockops: &mut SockOps = ebpf.program_mut(layout::SOCKOPS).unwrap().try_into().unwrap();
    sockops.load().map_err(|e| kernel(&format!("loading {}", layout::SOCKOPS), e))?;
    let setopt: &mut CgroupSockopt = ebpf.program_mut(layout::SETSOCKOPT).unwrap().try_into().unwrap();
    setopt.load().map_err(|e| kernel(&format!("loading {}", layout::SETSOCKOPT), e))?;
    Ok(ebpf)
}

/// Loads both programs (the verifier runs) and attaches nothing.
pub fn check() -> Result<Value, Error> {
    load()?;
    Ok(json!({"ok": true, "programs": [layout::SOCKOPS, layout::SETSOCKOPT]}))
}

pub fn attach(a: &AttachArgs) -> Result<Value, Error> {
    check_cgroup(&a.cgroup)?;
    check_pin_parent(&a.pins)?;
    if a.pins.exists() {
        return Err(Error::Usage(format!(
            "pins {}: already exists (attached? see `status`; remove with `detach`)",
            a.pins.display()
        )));
    }
    let mut ebpf = load()?;
    write_config(ebpf.map_mut(layout::CONFIG_MAP).unwrap().try_into().unwrap(), a.config)?;
    let cg = File::open(&a.cgroup).map_err(|e| Error::Usage(format!("cgroup {}: {e}", a.cgroup.display())))?;
    // Links (not BPF_PROG_ATTACH): they run alongside programs others attach to the same cgroup
    // or its parents, and they can be pinned; held only by this process until pinned.
    let link = |prog: &str, attach_type: u32| -> Result<OwnedFd, Error> {
        let fd = ebpf.program(prog).unwrap().fd().map_err(|e| kernel(prog, e))?;
        sys::link_create(fd.as_fd(), cg.as_fd(), attach_type).map_err(|e| kernel(&format!("attaching {prog}"), e))
    };
    let sockops_link = link(layout::SOCKOPS, sys::BPF_CGROUP_SOCK_OPS)?;
    let setopt_link = link(layout::SETSOCKOPT, sys::BPF_CGROUP_SETSOCKOPT)?;

    let pin = || -> Result<(), Error> {
        fs::create_dir(&a.pins).map_err(|e| kernel(&format!("mkdir {}", a.pins.display()), e))?;
        for (map, name) in [(layout::CONFIG_MAP, layout::PIN_CONFIG), (layout::STATS_MAP, layout::PIN_STATS)] {
            ebpf.map(map).unwrap().pin(a.pins.join(name)).map_err(|e| kernel(&format!("pinning {name}"), e))?;
        }
        // Links last: once pinned, the programs stay attached after this process exits.
        for (link, name) in [(sockops_link, layout::PIN_SOCKOPS), (setopt_link, layout::PIN_SETSOCKOPT)] {
            sys::obj_pin(link.as_fd(), &a.pins.join(name)).map_err(|e| kernel(&format!("pinning {name}"), e))?;
        }
        Ok(())
    };
    if let Err(e) = pin() {
        // Unpinned links detach when this process lets go of them; remove what was pinned.
        let _ = detach(&a.pins);
        return Err(e);
    }
    status(&a.pins)
}

fn config_map(pins: &Path) -> Result<Array<MapData, Config>, Error> {
    let data = MapData::from_pin(pins.join(layout::PIN_CONFIG)).map_err(|e| kernel("opening the config map", e))?;
    Array::try_from(aya::maps::Map::Array(data)).map_err(|e| kernel("config map", e))
}

fn write_config(mut map: Array<&mut MapData, Config>, c: Config) -> Result<(), Error> {
    map.set(0, c, 0).map_err(|e| kernel("writing the config map", e))
}

/// Changes the default IW, the largest accepted hint and the pacing flags of an attached cgroup
/// (connections established from then on).
pub fn configure(pins: &Path, default_iw: u32, max_iw: u32, pacing: u32) -> Result<Value, Error> {
    let mut map = config_map(pins)?;
    let mut c = map.get(&0, 0).map_err(|e| kernel("reading the config map", e))?;
    c.default_iw = default_iw;
    c.max_iw = max_iw;
    c.flags = (c.flags & layout::CFG_CREATED_CGROUP) | pacing;
    map.set(0, c, 0).map_err(|e| kernel("writing the config map", e))?;
    status(pins)
}

fn link_json(path: &Path) -> Value {
    match sys::obj_get(path).and_then(|fd| sys::cgroup_link_info(&fd)) {
        Ok(l) => json!({"id": l.id, "prog_id": l.prog_id, "cgroup_id": l.cgroup_id, "attach_type": l.attach_type,
                        "defunct": l.cgroup_id == 0}),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Value::Null,
        Err(e) => json!({"error": e.to_string()}),
    }
}

pub fn status(pins: &Path) -> Result<Value, Error> {
    if !pins.exists() {
        return Ok(json!({"attached": false, "pins": pins}));
    }
    let sockops = link_json(&pins.join(layout::PIN_SOCKOPS));
    let setopt = link_json(&pins.join(layout::PIN_SETSOCKOPT));
    let config = config_map(pins).ok().and_then(|m| m.get(&0, 0).ok());
    let stats = MapData::from_pin(pins.join(layout::PIN_STATS))
        .ok()
        .and_then(|d| PerCpuArray::<_, u64>::try_from(aya::maps::Map::PerCpuArray(d)).ok())
        .map(|m| {
            layout::STATS
                .iter()
                .enumerate()
                .map(|(i, name)| {
                    let total: u64 = m.get(&(i as u32), 0).map(|v| v.iter().sum()).unwrap_or(0);
                    (name.to_string(), json!(total))
                })
                .collect::<serde_json::Map<_, _>>()
        });
    let linked = |l: &Value| l.get("id").is_some() && l["defunct"] == json!(false);
    Ok(json!({
        "attached": linked(&sockops) && linked(&setopt),
        "pins": pins,
        "links": {"sockops": sockops, "setsockopt": setopt},
        "config": config.map(|c| json!({"default_iw": c.default_iw, "max_iw": c.max_iw,
                                        "created_cgroup": c.flags & layout::CFG_CREATED_CGROUP != 0,
                                        "pacing": c.flags & layout::CFG_PACING != 0,
                                        "paced_iw": c.flags & layout::CFG_PACED_IW != 0})),
        "stats": stats,
    }))
}

/// Detaches the links at once (BPF_LINK_DETACH), then removes every pin and the directory.
pub fn detach(pins: &Path) -> Result<Value, Error> {
    if !pins.exists() {
        return Ok(json!({"detached": [], "pins": pins, "note": "nothing attached"}));
    }
    let before = status(pins)?;
    let mut removed = vec![];
    for name in layout::PINS {
        let path = pins.join(name);
        if !path.exists() {
            continue;
        }
        if name.starts_with("link_") {
            if let Ok(fd) = sys::obj_get(&path) {
                sys::link_detach(&fd).map_err(|e| kernel(&format!("detaching {}", path.display()), e))?;
            }
        }
        fs::remove_file(&path).map_err(|e| kernel(&format!("unpinning {}", path.display()), e))?;
        removed.push(name);
    }
    fs::remove_dir(pins).map_err(|e| {
        Error::Kernel(format!("removing {}: {e} (something else was pinned there; left as it is)", pins.display()))
    })?;
    Ok(json!({"detached": removed, "pins": pins, "before": before}))
}

/// The cgroup id of a cgroup2 directory (its inode number), to compare with a link's.
pub fn cgroup_id(cgroup: &Path) -> Result<u64, Error> {
    fs::metadata(cgroup).map(|m| m.ino()).map_err(|e| Error::Usage(format!("cgroup {}: {e}", cgroup.display())))
}
