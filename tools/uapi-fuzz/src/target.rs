//! The files the calls use, discovered at start-up: a missing debugfs knob
//! or configfs is left out of generation rather than failing every call.

use crate::desc::DBG_FILES;

/// Attachment directories the programs may create: fz0 to fz7.
const CFS_DIR_SLOTS: u64 = 8;

#[derive(Clone, Debug)]
pub struct Target {
    /// The cxl_ccm device of `ccm_open dev=0`.
    pub ccm_dev: String,
    pub reflux_dev: String,
    /// /sys/kernel/config/reflux, if configfs has it.
    pub configfs: Option<String>,
    /// /sys/kernel/debug/reflux0.
    pub debugfs: String,
    /// Indices into DBG_FILES of the files that exist.
    pub dbg_files: Vec<u64>,
    pub reflux: bool,
}

fn exists(p: &str) -> bool {
    std::path::Path::new(p).exists()
}

/// `wanted` if it exists, or else the highest-numbered `/dev/cxl_ccmN` (how many devices the
/// software device makes depends on its memory window), so that `ccm_open dev=0` reaches a
/// device; `wanted` if there is none at all.
fn ccm_device(wanted: &str) -> String {
    if exists(wanted) {
        return wanted.to_string();
    }
    let last = (0..64u32)
        .rev()
        .map(|n| format!("/dev/cxl_ccm{n}"))
        .find(|p| exists(p));
    match last {
        Some(p) => {
            eprintln!("uapi-fuzz: {wanted} is missing: fuzzing {p}");
            p
        }
        None => wanted.to_string(),
    }
}

impl Target {
    pub fn discover(ccm_dev: &str, reflux: bool) -> Target {
        let cfs = "/sys/kernel/config";
        if reflux && exists(cfs) && !exists(&format!("{cfs}/reflux")) {
            let (none, dir, ty) = (
                crate::sys::cstr("none"),
                crate::sys::cstr(cfs),
                crate::sys::cstr("configfs"),
            );
            // SAFETY: mount(2) with NUL-terminated strings; failure is fine.
            unsafe {
                libc::mount(
                    none.as_ptr(),
                    dir.as_ptr(),
                    ty.as_ptr(),
                    0,
                    std::ptr::null(),
                )
            };
        }
        let configfs = Some(format!("{cfs}/reflux")).filter(|p| reflux && exists(p));
        let debugfs = "/sys/kernel/debug/reflux0".to_string();
        let dbg_files = (0..DBG_FILES.len() as u64)
            .filter(|&i| exists(&format!("{debugfs}/{}", DBG_FILES[i as usize])))
            .collect();
        Target {
            ccm_dev: ccm_device(ccm_dev),
            reflux_dev: "/dev/reflux0".to_string(),
            configfs,
            debugfs,
            dbg_files,
            reflux: reflux && exists("/dev/reflux0"),
        }
    }

    /// The device of `ccm_open dev`: 0 the configured one, n cxl_ccm(n-1).
    pub fn ccm_path(&self, dev: u64) -> String {
        if dev == 0 {
            self.ccm_dev.clone()
        } else {
            format!("/dev/cxl_ccm{}", dev - 1)
        }
    }

    pub fn cfs_dir(&self, dir: u64) -> String {
        let root = self
            .configfs
            .as_deref()
            .unwrap_or("/sys/kernel/config/reflux");
        format!("{root}/fz{}", dir % CFS_DIR_SLOTS)
    }

    pub fn dbg_path(&self, file: u64) -> String {
        let name = DBG_FILES.get(file as usize).copied().unwrap_or("nosuch");
        format!("{}/{name}", self.debugfs)
    }

    /// Undoes what a program may leave behind that outlives its processes:
    /// configfs attachments and a paused migration (fault injection).
    pub fn cleanup(&self) {
        if let Some(root) = &self.configfs {
            // Every name cfs_dir() can make: a mutated index reaches past the generated ones,
            // and an attachment left behind pins the module (rmmod reflux: EAGAIN).
            for d in 0..CFS_DIR_SLOTS {
                let dir = format!("{root}/fz{d}");
                if exists(&dir) {
                    crate::sys::write_file(&format!("{dir}/enable"), b"0");
                    let p = crate::sys::cstr(&dir);
                    // SAFETY: rmdir(2) of a NUL-terminated path.
                    unsafe { libc::rmdir(p.as_ptr()) };
                }
            }
        }
        let stop = self.dbg_path(3);
        if exists(&stop) {
            crate::sys::write_file(&stop, b"0");
        }
    }
}
