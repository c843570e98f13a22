// SPDX-License-Identifier: GPL-2.0

//! cxlstack_smoke: end-to-end test of the tree's Rust abstractions.
//!
//! `/dev/cxlstack_smoke` (ABI: `include/uapi/linux/cxlstack_smoke.h`) gives every open file
//! its own buffer of pinned pages with a chosen caching mode, mappable into user space, and
//! its own kernel thread that fills the buffer with a known sequence on request. The selftest
//! in `selftests/smoke/` maps the buffer, asks for fills and checks every word, and checks the
//! errors returned for bad commands, arguments and mappings.

use core::sync::atomic::{fence, Ordering};
use kernel::prelude::*;
use kernel::{
    cache_mode::CacheMode,
    ioctl::{_IOR, _IOW, _IOWR},
    ioctl_arg::IoctlArg,
    kthread::{self, KThread},
    miscdevice::{MiscDevice, MiscDeviceOptions, MiscDeviceRegistration},
    new_condvar, new_mutex,
    page::PAGE_SIZE,
    pinned_pages::{PinnedPages, ANY_NODE},
    pr_warn_ratelimited,
    shared_mem::SharedMem,
    sync::{Arc, CondVar, Mutex},
    types::{AsBytes, FromBytes},
    vma::VmArea,
};

module! {
    type: SmokeModule,
    name: "cxlstack_smoke",
    author: "cxlstack developers",
    description: "Smoke test of the cxlstack Rust abstractions (misc device, kthread, pinned pages)",
    license: "GPL",
}

const ABI_VERSION: u32 = 1;
/// The largest buffer a file may ask for, in pages.
const MAX_PAGES: u32 = 64;
const IOC_MAGIC: u32 = 0xCE;

/// `struct cxlstack_smoke_info`.
#[repr(C)]
#[derive(Default)]
struct Info {
    abi_version: u32,
    page_size: u32,
    max_pages: u32,
    reserved: u32,
}

/// `struct cxlstack_smoke_setup`.
#[repr(C)]
#[derive(Default)]
struct Setup {
    npages: u32,
    cache_mode: u32,
    reserved: [u64; 2],
}

/// `struct cxlstack_smoke_fill`.
#[repr(C)]
#[derive(Default)]
struct Fill {
    seed: u64,
    count: u64,
    generation: u64,
    reserved: u64,
}

// SAFETY: the structs are `repr(C)`, made of integers only and have no padding (checked below),
// so every bit pattern is valid and every byte is initialized.
unsafe impl FromBytes for Info {}
// SAFETY: as above.
unsafe impl AsBytes for Info {}
// SAFETY: as above.
unsafe impl FromBytes for Setup {}
// SAFETY: as above.
unsafe impl AsBytes for Setup {}
// SAFETY: as above.
unsafe impl FromBytes for Fill {}
// SAFETY: as above.
unsafe impl AsBytes for Fill {}

kernel::static_assert!(core::mem::size_of::<Info>() == 16);
kernel::static_assert!(core::mem::size_of::<Setup>() == 24);
kernel::static_assert!(core::mem::size_of::<Fill>() == 32);

const IOC_INFO: u32 = _IOR::<Info>(IOC_MAGIC, 0x80);
const IOC_SETUP: u32 = _IOW::<Setup>(IOC_MAGIC, 0x81);
const IOC_FILL: u32 = _IOWR::<Fill>(IOC_MAGIC, 0x82);

/// `cxlstack_smoke_value()` of the UAPI header.
fn smoke_value(seed: u64, i: u64) -> u64 {
    let mut x = seed.wrapping_add((i + 1).wrapping_mul(0x9e3779b97f4a7c15));
    x ^= x >> 31;
    x = x.wrapping_mul(0xbf58476d1ce4e5b9);
    x ^ (x >> 29)
}

/// A fill request handed to the thread.
#[derive(Clone, Copy)]
struct Job {
    seed: u64,
    count: u64,
}

struct ChannelState {
    job: Option<Job>,
    /// Fills requested and completed on this file.
    requested: u64,
    completed: u64,
}

/// Where the ioctl and the file's thread meet.
#[pin_data]
struct Channel {
    #[pin]
    state: Mutex<ChannelState>,
    #[pin]
    cond: CondVar,
}

/// The buffer and the thread of a file, once set up.
struct Running {
    pages: Arc<PinnedPages>,
    // Stopped and joined on drop; it holds its own reference to the pages.
    _thread: KThread,
}

/// Per-open state.
#[pin_data]
struct SmokeFile {
    chan: Arc<Channel>,
    #[pin]
    running: Mutex<Option<Running>>,
}

impl SmokeFile {
    fn pages(&self) -> Option<Arc<PinnedPages>> {
        self.running.lock().as_ref().map(|r| r.pages.clone())
    }

    fn setup(&self, arg: Setup) -> Result<isize> {
        if arg.reserved != [0, 0] {
            pr_warn_ratelimited!("SETUP: reserved fields must be 0\n");
            return Err(EINVAL);
        }
        if arg.npages == 0 || arg.npages > MAX_PAGES {
            pr_warn_ratelimited!("SETUP: npages {} not in 1..={}\n", arg.npages, MAX_PAGES);
            return Err(EINVAL);
        }
        let Some(mode) = CacheMode::from_raw(arg.cache_mode) else {
            pr_warn_ratelimited!("SETUP: unknown cache mode {}\n", arg.cache_mode);
            return Err(EINVAL);
        };
        let mut running = self.running.lock();
        if running.is_some() {
            pr_warn_ratelimited!("SETUP: this file is already set up\n");
            return Err(EBUSY);
        }
        let pages = Arc::new(
            PinnedPages::alloc(arg.npages as usize, ANY_NODE, mode)?,
            GFP_KERNEL,
        )?;
        let (chan, buf) = (self.chan.clone(), pages.clone());
        let thread = KThread::spawn(kernel::fmt!("cxlstack_smoke"), move || {
            fill_thread(chan, buf)
        })?;
        *running = Some(Running {
            pages,
            _thread: thread,
        });
        Ok(0)
    }

    fn fill(&self, arg: &Fill) -> Result<u64> {
        if arg.reserved != 0 {
            pr_warn_ratelimited!("FILL: reserved field must be 0\n");
            return Err(EINVAL);
        }
        let Some(pages) = self.pages() else {
            pr_warn_ratelimited!("FILL before SETUP\n");
            return Err(EINVAL);
        };
        let words = (pages.len() / 8) as u64;
        if arg.count == 0 || arg.count > words {
            pr_warn_ratelimited!("FILL: count {} not in 1..={}\n", arg.count, words);
            return Err(EINVAL);
        }
        let mut state = self.chan.state.lock();
        if state.job.is_some() || state.completed != state.requested {
            return Err(EBUSY);
        }
        state.job = Some(Job {
            seed: arg.seed,
            count: arg.count,
        });
        state.requested += 1;
        let want = state.requested;
        self.chan.cond.notify_all();
        while state.completed < want {
            if self.chan.cond.wait_interruptible(&mut state) {
                // The fill goes on; its generation is reported by the next successful FILL.
                return Err(EINTR);
            }
        }
        Ok(want)
    }
}

/// The body of a file's kernel thread: waits for jobs and writes the sequence.
fn fill_thread(chan: Arc<Channel>, pages: Arc<PinnedPages>) -> i32 {
    loop {
        let job = {
            let mut state = chan.state.lock();
            loop {
                if kthread::should_stop() {
                    return 0;
                }
                if let Some(job) = state.job.take() {
                    break job;
                }
                // Interruptible: `kthread_stop()` makes it return even if the stop request
                // arrives between the check above and the sleep. Kernel threads get no
                // other signals, so a pending signal means a stop request: loop to check.
                let _stop_requested = chan.cond.wait_interruptible(&mut state);
            }
        };
        for i in 0..job.count {
            // `fill()` bounded `count` by the buffer's size.
            match pages.atomic_u64((i as usize) * 8) {
                Ok(word) => word.store(smoke_value(job.seed, i), Ordering::Relaxed),
                Err(_) => break,
            }
        }
        // Drains write-combining buffers and orders the words before the completion that the
        // ioctl (and through it, user space) observes.
        fence(Ordering::SeqCst);
        let mut state = chan.state.lock();
        state.completed += 1;
        chan.cond.notify_all();
    }
}

struct SmokeDevice;

#[vtable]
impl MiscDevice for SmokeDevice {
    type Ptr = Pin<KBox<SmokeFile>>;
    type RegistrationData = ();

    fn open(_data: &()) -> Result<Self::Ptr> {
        let chan = Arc::pin_init(
            pin_init!(Channel {
                state <- new_mutex!(ChannelState { job: None, requested: 0, completed: 0 }),
                cond <- new_condvar!(),
            }),
            GFP_KERNEL,
        )?;
        KBox::pin_init(
            pin_init!(SmokeFile { chan, running <- new_mutex!(None) }),
            GFP_KERNEL,
        )
    }

    fn ioctl(file: Pin<&SmokeFile>, cmd: u32, arg: usize) -> Result<isize> {
        match cmd {
            IOC_INFO => {
                let info = Info {
                    abi_version: ABI_VERSION,
                    page_size: PAGE_SIZE as u32,
                    max_pages: MAX_PAGES,
                    reserved: 0,
                };
                IoctlArg::<Info>::new(cmd, arg)?.write(&info)?;
                Ok(0)
            }
            IOC_SETUP => file.setup(IoctlArg::<Setup>::new(cmd, arg)?.read()?),
            IOC_FILL => {
                let uarg = IoctlArg::<Fill>::new(cmd, arg)?;
                let mut fill = uarg.read()?;
                fill.generation = file.fill(&fill)?;
                uarg.write(&fill)?;
                Ok(0)
            }
            _ => {
                pr_warn_ratelimited!("unknown ioctl {:#x}\n", cmd);
                Err(ENOTTY)
            }
        }
    }

    fn mmap(file: Pin<&SmokeFile>, vma: &VmArea) -> Result {
        let Some(pages) = file.pages() else {
            pr_warn_ratelimited!("mmap before SETUP\n");
            return Err(EINVAL);
        };
        pages.map_to_user(vma).inspect_err(|e| {
            pr_warn_ratelimited!(
                "mmap of {} bytes at page {} refused ({:?}); buffer has {} pages\n",
                vma.len(),
                vma.pgoff(),
                e,
                pages.page_count()
            );
        })
    }
}

kernel::misc_file_ops!(SMOKE_FOPS, SmokeDevice);

struct SmokeModule {
    _reg: Pin<KBox<MiscDeviceRegistration<SmokeDevice>>>,
}

impl kernel::Module for SmokeModule {
    fn init(_module: &'static ThisModule) -> Result<Self> {
        let opts = MiscDeviceOptions {
            name: kernel::c_str!("cxlstack_smoke"),
            mode: 0o600,
        };
        let reg = KBox::pin_init(
            MiscDeviceRegistration::register(opts, &SMOKE_FOPS, ())?,
            GFP_KERNEL,
        )?;
        pr_info!("/dev/cxlstack_smoke ready (minor {})\n", reg.minor());
        Ok(SmokeModule { _reg: reg })
    }
}
