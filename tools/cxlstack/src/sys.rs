// SPDX-License-Identifier: GPL-2.0

//! Reading the stack's state from the system: device nodes, debugfs, configfs. Everything is
//! found under a root directory (`/`, or a fixture tree in tests), and what cannot be read is
//! reported by its cause.

use crate::model::{self, Attachment};
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

/// The identity of a CCM device (`CXL_CCM_IOC_INFO`), where it could be read.
#[derive(Clone, Debug, Default)]
pub struct CcmInfo {
    pub abi: String,
    pub caps: u64,
    pub kernels: u64,
    pub mem_bytes: u64,
    pub max_tenants: u32,
}

/// One `/dev/cxl_ccmN`.
#[derive(Clone, Debug, Default)]
pub struct CcmDevice {
    pub name: String,
    pub info: Option<CcmInfo>,
    pub stats: Option<model::CcmStats>,
}

/// One reflux device, from its debugfs directory.
#[derive(Clone, Debug, Default)]
pub struct RefluxDevice {
    pub name: String,
    pub stats: Vec<(String, String)>,
    pub actors: Vec<model::Actor>,
    /// The device's configfs policy directory: file name and value, sorted by name; empty
    /// without configfs.
    pub policy: Vec<(String, String)>,
}

/// Everything `list` and `stat` show.
#[derive(Clone, Debug, Default)]
pub struct Snapshot {
    pub ccm: Vec<CcmDevice>,
    pub reflux: Vec<RefluxDevice>,
    pub attachments: Vec<Attachment>,
}

pub struct System {
    root: PathBuf,
}

/// The entries of `dir` whose names start with `prefix`, sorted by their number.
fn numbered(dir: &Path, prefix: &str) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|n| {
            n.strip_prefix(prefix)
                .is_some_and(|r| r.parse::<u32>().is_ok())
        })
        .collect();
    names.sort_by_key(|n| n[prefix.len()..].parse::<u32>().unwrap_or(u32::MAX));
    names
}

impl System {
    pub fn new(root: &Path) -> System {
        System {
            root: root.to_path_buf(),
        }
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.root.join(rel)
    }

    fn read(&self, rel: &str) -> io::Result<String> {
        fs::read_to_string(self.path(rel))
    }

    /// Reads everything; fails only when nothing of the stack is there, naming why.
    pub fn snapshot(&self) -> Result<Snapshot, String> {
        let debugfs = self.path("sys/kernel/debug");
        let ccm: Vec<CcmDevice> = numbered(&self.path("dev"), "cxl_ccm")
            .into_iter()
            .map(|name| self.ccm_device(name))
            .collect();
        let reflux: Vec<RefluxDevice> = numbered(&debugfs, "reflux")
            .into_iter()
            .map(|name| self.reflux_device(name))
            .collect();
        let attachments = self.attachments();
        if ccm.is_empty() && reflux.is_empty() {
            let why = if fs::read_dir(&debugfs).map_or(true, |mut d| d.next().is_none()) {
                "and debugfs is not mounted at /sys/kernel/debug (or not readable: run as root)"
            } else {
                "are the modules loaded? (modprobe cxl_ccm; modprobe reflux)"
            };
            return Err(format!("no cxl_ccm or reflux device found {why}"));
        }
        Ok(Snapshot {
            ccm,
            reflux,
            attachments,
        })
    }

    fn ccm_device(&self, name: String) -> CcmDevice {
        let stats = self
            .read(&format!("sys/kernel/debug/{name}/stats"))
            .ok()
            .and_then(|t| model::parse_ccm_stats(&t));
        let info = cxlccm::Device::open(&self.path(&format!("dev/{name}")).to_string_lossy())
            .ok()
            .map(|d| {
                let i = d.info();
                CcmInfo {
                    abi: format!("{}.{}", i.device_version >> 16, i.device_version & 0xffff),
                    caps: i.caps,
                    kernels: i.kernels,
                    mem_bytes: i.mem_size,
                    max_tenants: i.max_tenants,
                }
            });
        CcmDevice { name, info, stats }
    }

    fn reflux_device(&self, name: String) -> RefluxDevice {
        let dir = format!("sys/kernel/debug/{name}");
        RefluxDevice {
            stats: self
                .read(&format!("{dir}/stats"))
                .map(|t| model::parse_pairs(&t))
                .unwrap_or_default(),
            actors: self
                .read(&format!("{dir}/actors"))
                .map(|t| model::parse_actors(&t))
                .unwrap_or_default(),
            policy: self.policy(&name),
            name,
        }
    }

    /// The files of `/sys/kernel/config/reflux/<name>/`, each with its value.
    fn policy(&self, name: &str) -> Vec<(String, String)> {
        let dir = self.path(&format!("sys/kernel/config/reflux/{name}"));
        let mut files: Vec<(String, String)> = fs::read_dir(&dir)
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|e| {
                let value = fs::read_to_string(e.path()).ok()?;
                Some((e.file_name().into_string().ok()?, value.trim().to_string()))
            })
            .collect();
        files.sort();
        files
    }

    fn attachments(&self) -> Vec<Attachment> {
        let dir = self.path("sys/kernel/config/reflux");
        let mut names: Vec<std::ffi::OsString> = fs::read_dir(&dir)
            .into_iter()
            .flatten()
            .flatten()
            // The administrator's attachments; each bound device's policy directory (which
            // has no `device` file) is next to them.
            .filter(|e| e.path().join("device").is_file())
            .map(|e| e.file_name())
            .collect();
        names.sort();
        names
            .into_iter()
            .map(|os_name| {
                let attr = |a: &str| {
                    fs::read_to_string(dir.join(&os_name).join(a))
                        .map(|s| s.trim().to_string())
                        .unwrap_or_default()
                };
                Attachment {
                    device: attr("device"),
                    start: attr("start").parse().unwrap_or(0),
                    length: attr("length").parse().unwrap_or(0),
                    pipeline: attr("pipeline"),
                    checksum: attr("checksum") == "1",
                    enabled: attr("enable") == "1",
                    // A name that is not UTF-8 (configfs takes any bytes) is listed with
                    // U+FFFD for the bytes JSON cannot carry, rather than left out.
                    name: os_name.to_string_lossy().into_owned(),
                }
            })
            .collect()
    }

    /// Writes `value` to a file under the root, naming the cause of a failure.
    pub fn write(&self, rel: &str, value: &str) -> Result<(), String> {
        let p = self.path(rel);
        fs::write(&p, value).map_err(|e| describe(&p, &e))
    }

    /// Creates (`mkdir`) or removes (`rmdir`) a directory under the root.
    pub fn mkdir(&self, rel: &str, create: bool) -> Result<(), String> {
        let p = self.path(rel);
        let r = if create {
            fs::create_dir(&p)
        } else {
            fs::remove_dir(&p)
        };
        r.map_err(|e| describe(&p, &e))
    }
}

/// An I/O error on `p` as a sentence that names the likely cause.
pub fn describe(p: &Path, e: &io::Error) -> String {
    let hint = match e.raw_os_error() {
        // EPERM, EACCES
        Some(1) | Some(13) => " (not root?)",
        Some(2) => " (is the module loaded, and configfs/debugfs mounted?)",
        _ => "",
    };
    format!("{}: {e}{hint}", p.display())
}
