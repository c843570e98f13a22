// SPDX-License-Identifier: GPL-2.0

//! The administrator's interface: pipelines attached to byte ranges of a device, in configfs.
//!
//! ```text
//! mkdir /sys/kernel/config/reflux/logs            # an attachment, any name
//! cd /sys/kernel/config/reflux/logs
//! echo reflux0 > device; echo 64M > start; echo 32M > length
//! echo compress > pipeline; echo 1 > checksum
//! echo 1 > enable                                  # requests in the range use it from now on
//! echo 0 > enable; cd ..; rmdir logs               # back to the device's default pipeline
//! ```
//!
//! Start and length are multiples of 128 KiB ([`ALIGN_BYTES`]); attachments of one device do not
//! overlap. The values are fixed while the attachment is enabled (`EBUSY`). `enable` checks
//! everything against the device: no such device bound (`ENODEV`), a pipeline the device does
//! not offer (`EOPNOTSUPP`), a range past its end (`ERANGE`), an overlap (`EBUSY`), too many
//! (`ENOSPC`), anything else malformed (`EINVAL`); each refusal is logged, ratelimited.
//!
//! A request outside every attachment takes the device's default pipeline (the `pipeline=` and
//! `checksum=` module parameters). When a device goes away its attachments go with it (`enable`
//! reads 0 again); configfs keeps the module loaded while any attachment directory exists.
//!
//! Each bound device publishes its [`DevAttachments`] in the [`Registry`], which lives in the
//! configfs subsystem and is reached from the platform driver through [`registry`].

use core::sync::atomic::{AtomicU32, Ordering};

use kernel::{
    c_str,
    configfs::{Attribute, Item, Page},
    fmt, new_mutex, new_spinlock, pr_warn_ratelimited,
    prelude::*,
    str::CString,
    sync::{Arc, Mutex, SpinLock},
};

use crate::abi;
use crate::proto::attach::{
    parse_bool, parse_size, trim, AttachError, Attachment, Lookup, Table, ALIGN_BYTES,
};
use crate::proto::pipeline::Pipeline;

/// The attachments of one bound device: read by every request, changed by configfs.
#[pin_data]
pub(crate) struct DevAttachments {
    /// The disk's name (`reflux0`).
    pub(crate) name: CString,
    /// Capacity in blocks.
    capacity: u64,
    /// The device's capability bits (which pipelines it runs).
    caps: u64,
    #[pin]
    inner: SpinLock<Inner>,
}

struct Inner {
    /// The device went away: nothing attaches any more.
    gone: bool,
    table: Table,
}

impl DevAttachments {
    pub(crate) fn new(name: &CStr, capacity: u64, caps: u64) -> Result<Arc<Self>> {
        Arc::pin_init(
            try_pin_init!(Self {
                name: CString::try_from_fmt(fmt!("{name}"))?,
                capacity,
                caps,
                inner <- new_spinlock!(Inner { gone: false, table: Table::EMPTY }),
            }? Error),
            GFP_KERNEL,
        )
    }

    /// The pipeline of `nr` blocks from `lba`.
    pub(crate) fn lookup(&self, lba: u64, nr: u64) -> Lookup {
        self.inner.lock().table.lookup(lba, nr)
    }

    /// A copy of the table (for the scheduler and debugfs).
    pub(crate) fn table(&self) -> Table {
        self.inner.lock().table.clone()
    }

    /// Adds `a`; `None` if the device went away meanwhile (as if it had not been found).
    fn attach(&self, a: Attachment) -> Option<Result<(), AttachError>> {
        let mut inner = self.inner.lock();
        (!inner.gone).then(|| inner.table.insert(a))
    }

    fn detach(&self, id: u32) -> bool {
        self.inner.lock().table.remove(id).is_some()
    }

    fn is_attached(&self, id: u32) -> bool {
        self.inner.lock().table.iter().any(|a| a.id == id)
    }

    /// The device goes away: drops every attachment; returns how many there were.
    fn retire(&self) -> usize {
        let mut inner = self.inner.lock();
        inner.gone = true;
        inner.table.clear()
    }
}

/// The bound devices, by name, for configfs to find.
#[pin_data]
pub(crate) struct Registry {
    #[pin]
    /// Freed slots are `None` and reused.
    devs: Mutex<KVec<Option<Arc<DevAttachments>>>>,
    next_id: AtomicU32,
}

impl Registry {
    /// The registry, shared by the configfs subsystem (its parent) and the platform driver's
    /// context (probe adds devices, remove takes them out).
    pub(crate) fn new() -> Result<Arc<Self>> {
        Arc::pin_init(
            try_pin_init!(Self {
                devs <- new_mutex!(KVec::new()),
                next_id: AtomicU32::new(1),
            }? Error),
            GFP_KERNEL,
        )
    }

    fn find(&self, name: &[u8]) -> Option<Arc<DevAttachments>> {
        self.devs
            .lock()
            .iter()
            .flatten()
            .find(|d| d.name.as_bytes() == name)
            .cloned()
    }

    /// A device is bound: configfs attachments may name it.
    pub(crate) fn add(&self, dev: Arc<DevAttachments>) -> Result {
        let mut devs = self.devs.lock();
        match devs.iter_mut().find(|d| d.is_none()) {
            Some(slot) => *slot = Some(dev),
            None => devs.push(Some(dev), GFP_KERNEL)?,
        }
        Ok(())
    }

    /// A device goes away: its attachments are dropped (and said so).
    pub(crate) fn remove(&self, dev: &DevAttachments) {
        for slot in self.devs.lock().iter_mut() {
            if slot
                .as_ref()
                .is_some_and(|d| core::ptr::eq::<DevAttachments>(&**d, dev))
            {
                *slot = None;
            }
        }
        let n = dev.retire();
        if n > 0 {
            pr_info!("{}: {n} attachments dropped with the device\n", &*dev.name);
        }
    }
}

/// An attachment directory.
#[pin_data]
pub(crate) struct AttachItem {
    id: u32,
    /// The directory's name, for log lines.
    name: CString,
    #[pin]
    settings: Mutex<Settings>,
}

struct Settings {
    device: Option<CString>,
    start: u64,
    length: u64,
    pipeline: Pipeline,
    checksum: bool,
    /// Where it is attached, if enabled.
    enabled: Option<Arc<DevAttachments>>,
}

impl Settings {
    /// Enabled and still attached (the device may have gone away since).
    fn live(&self, id: u32) -> bool {
        self.enabled.as_ref().is_some_and(|d| d.is_attached(id))
    }
}

const ATTR_DEVICE: usize = 0;
const ATTR_START: usize = 1;
const ATTR_LENGTH: usize = 2;
const ATTR_PIPELINE: usize = 3;
const ATTR_CHECKSUM: usize = 4;
const ATTR_ENABLE: usize = 5;

/// Longest device name accepted (`reflux` and an instance number fit many times over).
const MAX_NAME: usize = 31;

impl AttachItem {
    fn refuse(&self, what: &str, e: Error) -> Error {
        pr_warn_ratelimited!("attachment {}: {what}\n", &*self.name);
        e
    }

    fn enable(&self, s: &mut Settings, reg: &Registry) -> Result {
        if s.live(self.id) {
            return Ok(());
        }
        s.enabled = None;
        let Some(name) = s.device.as_ref() else {
            return Err(self.refuse("no device named", EINVAL));
        };
        let Some(dev) = reg.find(name.as_bytes()) else {
            return Err(self.refuse("no such device is bound", ENODEV));
        };
        let pipeline = s.pipeline.id();
        if dev.caps & abi::cap_pipeline(pipeline) == 0 {
            return Err(self.refuse("the device does not offer the pipeline", EOPNOTSUPP));
        }
        let flags = if s.checksum && s.pipeline != Pipeline::Passthrough {
            abi::PIPE_FLAG_CHECKSUM
        } else {
            0
        };
        let a = Attachment::new(self.id, s.start, s.length, pipeline, flags, dev.capacity);
        let added = match a {
            Ok(a) => dev.attach(a).map(|r| r.map(|()| a)),
            Err(e) => Some(Err(e)),
        };
        let Some(added) = added else {
            return Err(self.refuse("the device went away", ENODEV));
        };
        let a = added.map_err(|e| {
            let errno = match e {
                AttachError::BeyondDevice => ERANGE,
                AttachError::Overlap(_) => EBUSY,
                AttachError::Full => ENOSPC,
                AttachError::Unaligned | AttachError::Empty | AttachError::Pipeline(_) => EINVAL,
            };
            pr_warn_ratelimited!("attachment {}: {e}\n", &*self.name);
            errno
        })?;
        pr_info!(
            "{}: blocks {}..{} use pipeline {} flags {:#x} (attachment {})\n",
            &*dev.name,
            a.start,
            a.end,
            s.pipeline.name(),
            flags,
            &*self.name
        );
        s.enabled = Some(dev);
        Ok(())
    }

    fn disable(&self, s: &mut Settings) {
        if let Some(dev) = s.enabled.take() {
            if dev.detach(self.id) {
                pr_info!("{}: attachment {} detached\n", &*dev.name, &*self.name);
            }
        }
    }
}

impl Item for AttachItem {
    type Parent = Arc<Registry>;

    const ATTRS: &'static [Attribute] = &[
        Attribute::rw(c_str!("device")),
        Attribute::rw(c_str!("start")),
        Attribute::rw(c_str!("length")),
        Attribute::rw(c_str!("pipeline")),
        Attribute::rw(c_str!("checksum")),
        Attribute::rw(c_str!("enable")),
    ];

    fn make(reg: &Arc<Registry>, name: &CStr) -> impl PinInit<Self, Error> {
        try_pin_init!(Self {
            id: reg.next_id.fetch_add(1, Ordering::Relaxed),
            name: CString::try_from_fmt(fmt!("{name}"))?,
            settings <- new_mutex!(Settings {
                device: None,
                start: 0,
                length: 0,
                pipeline: Pipeline::Passthrough,
                checksum: false,
                enabled: None,
            }),
        }? Error)
    }

    fn show(&self, _reg: &Arc<Registry>, attr: usize, out: &mut Page<'_>) -> Result {
        let s = self.settings.lock();
        match attr {
            ATTR_DEVICE => match s.device.as_ref() {
                Some(d) => out.text(fmt!("{}\n", &**d)),
                None => out.text(fmt!("\n")),
            },
            ATTR_START => out.text(fmt!("{}\n", s.start)),
            ATTR_LENGTH => out.text(fmt!("{}\n", s.length)),
            ATTR_PIPELINE => out.text(fmt!("{}\n", s.pipeline.name())),
            ATTR_CHECKSUM => out.text(fmt!("{}\n", u8::from(s.checksum))),
            ATTR_ENABLE => out.text(fmt!("{}\n", u8::from(s.live(self.id)))),
            _ => Err(EINVAL),
        }
    }

    fn store(&self, reg: &Arc<Registry>, attr: usize, input: &[u8]) -> Result {
        let mut s = self.settings.lock();
        if attr == ATTR_ENABLE {
            return match parse_bool(input) {
                Some(true) => self.enable(&mut s, reg),
                Some(false) => {
                    self.disable(&mut s);
                    Ok(())
                }
                None => Err(self.refuse("enable takes 0 or 1", EINVAL)),
            };
        }
        if s.live(self.id) {
            return Err(self.refuse("enabled: write 0 to enable first", EBUSY));
        }
        match attr {
            ATTR_DEVICE => {
                let name = trim(input);
                if name.is_empty()
                    || name.len() > MAX_NAME
                    || !name.iter().all(|c| c.is_ascii_graphic() && *c != b'/')
                {
                    return Err(self.refuse("not a device name", EINVAL));
                }
                let name = core::str::from_utf8(name).map_err(|_| EINVAL)?;
                s.device = Some(CString::try_from_fmt(fmt!("{name}"))?);
            }
            ATTR_START | ATTR_LENGTH => {
                let v = parse_size(input)
                    .ok_or_else(|| self.refuse("not a size (bytes, K, M, G)", EINVAL))?;
                if v % ALIGN_BYTES != 0 {
                    return Err(self.refuse("not a multiple of 128 KiB", EINVAL));
                }
                if attr == ATTR_START {
                    s.start = v;
                } else {
                    s.length = v;
                }
            }
            ATTR_PIPELINE => {
                s.pipeline = Pipeline::from_name(trim(input)).ok_or_else(|| {
                    self.refuse(
                        "pipeline is passthrough, checksum, compress or encrypt",
                        EINVAL,
                    )
                })?;
            }
            ATTR_CHECKSUM => {
                s.checksum = parse_bool(input)
                    .ok_or_else(|| self.refuse("checksum takes 0 or 1", EINVAL))?;
            }
            _ => return Err(EINVAL),
        }
        Ok(())
    }

    fn drop_item(&self, _reg: &Arc<Registry>) {
        self.disable(&mut self.settings.lock());
    }
}
