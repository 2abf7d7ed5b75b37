//! TUN devices, created inside a named network namespace (/var/run/netns/NAME or any nsfs path).
//! The devices are not persistent: they disappear when ccbench-link exits, whatever the reason,
//! which is half of the clean-up guarantee.
use std::ffi::CString;
use std::io;
use std::os::fd::RawFd;

const IFF_TUN: libc::c_short = 0x0001;
const IFF_NO_PI: libc::c_short = 0x1000;
const IFF_VNET_HDR: libc::c_short = 0x4000;
const TUNSETIFF: libc::c_ulong = 0x4004_54ca;
const TUNSETOFFLOAD: libc::c_ulong = 0x4004_54d0;
const TUN_F_CSUM: libc::c_ulong = 0x01;
const TUN_F_TSO4: libc::c_ulong = 0x02;
/// Size of struct virtio_net_hdr (the TUN default with IFF_VNET_HDR).
pub const VNET_HDR_LEN: usize = 10;

#[repr(C)]
struct IfReq {
    name: [u8; 16],
    flags: libc::c_short,
    _pad: [u8; 22],
}

fn cerr(what: &str) -> io::Error {
    let e = io::Error::last_os_error();
    io::Error::new(e.kind(), format!("{what}: {e}"))
}

/// Open a namespace file (a name is looked up under /var/run/netns).
pub fn open_netns(ns: &str) -> io::Result<RawFd> {
    let path = if ns.contains('/') { ns.to_string() } else { format!("/var/run/netns/{ns}") };
    let c = CString::new(path.clone()).unwrap();
    let fd = unsafe { libc::open(c.as_ptr(), libc::O_RDONLY | libc::O_CLOEXEC) };
    if fd < 0 {
        return Err(cerr(&format!("open {path}")));
    }
    Ok(fd)
}

pub fn setns(fd: RawFd) -> io::Result<()> {
    if unsafe { libc::setns(fd, libc::CLONE_NEWNET) } != 0 {
        return Err(cerr("setns"));
    }
    Ok(())
}

/// Create TUN device `name` in the calling thread's current network namespace.
pub fn create_tun(name: &str, vnet: bool) -> io::Result<RawFd> {
    if name.is_empty() || name.len() > 15 {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, format!("bad interface name '{name}'")));
    }
    let path = CString::new("/dev/net/tun").unwrap();
    let fd = unsafe { libc::open(path.as_ptr(), libc::O_RDWR | libc::O_NONBLOCK | libc::O_CLOEXEC) };
    if fd < 0 {
        return Err(cerr("open /dev/net/tun"));
    }
    let flags = IFF_TUN | IFF_NO_PI | if vnet { IFF_VNET_HDR } else { 0 };
    let mut req = IfReq { name: [0; 16], flags, _pad: [0; 22] };
    req.name[..name.len()].copy_from_slice(name.as_bytes());
    if unsafe { libc::ioctl(fd, TUNSETIFF as _, &mut req as *mut IfReq) } != 0 {
        let e = cerr(&format!("TUNSETIFF {name}"));
        unsafe { libc::close(fd) };
        return Err(e);
    }
    if vnet {
        // Let the kernel hand us TSO super-packets and partial checksums (IPv4 TCP only).
        if unsafe { libc::ioctl(fd, TUNSETOFFLOAD as _, TUN_F_CSUM | TUN_F_TSO4) } != 0 {
            let e = cerr(&format!("TUNSETOFFLOAD {name}"));
            unsafe { libc::close(fd) };
            return Err(e);
        }
    }
    Ok(fd)
}

/// Create the TUN device `name` inside namespace `ns` and return to the original namespace.
pub fn create_tun_in(ns: Option<&str>, name: &str, vnet: bool) -> io::Result<RawFd> {
    match ns {
        None => create_tun(name, vnet),
        Some(ns) => {
            let orig = open_netns("/proc/thread-self/ns/net")?;
            let target = open_netns(ns)?;
            setns(target)?;
            let r = create_tun(name, vnet);
            let back = setns(orig);
            unsafe {
                libc::close(target);
                libc::close(orig);
            }
            back?;
            r
        }
    }
}
