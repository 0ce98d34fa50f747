//! The few bpf(2) and statfs(2) calls aya does not expose (aya loads the object, creates the
//! maps, relocates and loads the programs):
//! * cgroup links: BPF_LINK_CREATE and BPF_OBJ_PIN. aya 0.14 creates cgroup/setsockopt links but
//!   cannot hand one over for pinning (CgroupSockoptLink has no conversion into an FdLink, unlike
//!   SockOpsLink), so both links are made here, the same way;
//! * a pinned link's cgroup, to tell an attached link from one whose cgroup was removed;
//! * BPF_LINK_DETACH: a link otherwise detaches when its last reference goes, which the kernel
//!   finishes later in a work queue; `detach` must be done when it returns;
//! * file-system magic numbers.
use std::{
    ffi::CString,
    io,
    os::{
        fd::{AsRawFd, BorrowedFd, FromRawFd, OwnedFd},
        unix::ffi::OsStrExt,
    },
    path::Path,
};

// include/uapi/linux/bpf.h: enum bpf_cmd.
const BPF_OBJ_PIN: libc::c_long = 6;
const BPF_OBJ_GET: libc::c_long = 7;
const BPF_OBJ_GET_INFO_BY_FD: libc::c_long = 15;
const BPF_LINK_CREATE: libc::c_long = 28;
const BPF_LINK_DETACH: libc::c_long = 34;
// enum bpf_attach_type.
pub const BPF_CGROUP_SOCK_OPS: u32 = 3;
pub const BPF_CGROUP_SETSOCKOPT: u32 = 22;
// include/uapi/linux/magic.h
pub const BPF_FS_MAGIC: i64 = 0xcafe4a11;
pub const CGROUP2_SUPER_MAGIC: i64 = 0x63677270;

fn bpf<T>(cmd: libc::c_long, attr: &mut T) -> io::Result<libc::c_long> {
    // SAFETY: `attr` is a #[repr(C)] struct laid out as the command's member of union bpf_attr.
    let r = unsafe { libc::syscall(libc::SYS_bpf, cmd, attr as *mut T, std::mem::size_of::<T>()) };
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r)
    }
}

fn c_path(path: &Path) -> io::Result<CString> {
    CString::new(path.as_os_str().as_bytes()).map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))
}

#[repr(C)]
struct Obj {
    pathname: u64,
    bpf_fd: u32,
    file_flags: u32,
}

/// Attaches a loaded program to a cgroup through a new link (BPF_LINK_CREATE: `prog_fd`,
/// `target_fd`, `attach_type`, `flags` — 0: cgroup links always allow other programs).
pub fn link_create(prog: BorrowedFd, cgroup: BorrowedFd, attach_type: u32) -> io::Result<OwnedFd> {
    #[repr(C)]
    struct LinkCreate {
        prog_fd: u32,
        target_fd: u32,
        attach_type: u32,
        flags: u32,
    }
    let mut attr =
        LinkCreate { prog_fd: prog.as_raw_fd() as u32, target_fd: cgroup.as_raw_fd() as u32, attach_type, flags: 0 };
    let fd = bpf(BPF_LINK_CREATE, &mut attr)?;
    // SAFETY: the kernel returned a new fd that nothing else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(fd as i32) })
}

/// Pins an object (BPF_OBJ_PIN); the directory must be on bpffs.
pub fn obj_pin(fd: BorrowedFd, path: &Path) -> io::Result<()> {
    let c = c_path(path)?;
    let mut attr = Obj { pathname: c.as_ptr() as u64, bpf_fd: fd.as_raw_fd() as u32, file_flags: 0 };
    bpf(BPF_OBJ_PIN, &mut attr).map(|_| ())
}

/// An fd for a pinned object (BPF_OBJ_GET: `pathname` u64, `bpf_fd` u32, `file_flags` u32).
pub fn obj_get(path: &Path) -> io::Result<OwnedFd> {
    let c = c_path(path)?;
    let mut attr = Obj { pathname: c.as_ptr() as u64, bpf_fd: 0, file_flags: 0 };
    let fd = bpf(BPF_OBJ_GET, &mut attr)?;
    // SAFETY: the kernel returned a new fd that nothing else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(fd as i32) })
}

/// A cgroup link as the kernel describes it (struct bpf_link_info, `cgroup` member).
#[derive(Debug, Clone, Copy)]
pub struct CgroupLink {
    pub id: u32,
    pub prog_id: u32,
    /// 0 once the cgroup has been removed: the link is then defunct.
    pub cgroup_id: u64,
    pub attach_type: u32,
}

pub fn cgroup_link_info(fd: &OwnedFd) -> io::Result<CgroupLink> {
    // struct bpf_link_info: type, id, prog_id, then a union (8-byte aligned) whose `cgroup`
    // member is { cgroup_id u64; attach_type u32 }; the union's largest member is 48 bytes.
    #[repr(C)]
    #[derive(Default)]
    struct LinkInfo {
        type_: u32,
        id: u32,
        prog_id: u32,
        cgroup_id: u64,
        attach_type: u32,
        rest: [u64; 6],
    }
    #[repr(C)]
    struct InfoByFd {
        bpf_fd: u32,
        info_len: u32,
        info: u64,
    }
    let mut info = LinkInfo::default();
    let mut attr = InfoByFd {
        bpf_fd: fd.as_raw_fd() as u32,
        info_len: std::mem::size_of::<LinkInfo>() as u32,
        info: &mut info as *mut LinkInfo as u64,
    };
    bpf(BPF_OBJ_GET_INFO_BY_FD, &mut attr)?;
    Ok(CgroupLink { id: info.id, prog_id: info.prog_id, cgroup_id: info.cgroup_id, attach_type: info.attach_type })
}

/// Detaches a link now, whoever else holds it (BPF_LINK_DETACH: `link_fd` u32).
pub fn link_detach(fd: &OwnedFd) -> io::Result<()> {
    let mut link_fd = fd.as_raw_fd() as u32;
    bpf(BPF_LINK_DETACH, &mut link_fd).map(|_| ())
}

/// The file-system magic number of `path` (statfs f_type).
pub fn fs_magic(path: &Path) -> io::Result<i64> {
    let c = c_path(path)?;
    // SAFETY: statfs writes into a zeroed struct we own.
    let mut st: libc::statfs = unsafe { std::mem::zeroed() };
    if unsafe { libc::statfs(c.as_ptr(), &mut st) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(st.f_type as i64)
}
