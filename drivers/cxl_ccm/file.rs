// SPDX-License-Identifier: GPL-2.0

//! An open file of `/dev/cxl_ccmN`: its ioctls (`INFO`, `CONFIGURE`, and the data plane of the
//! tenant it becomes), `mmap` and `poll`.

use kernel::{
    ioctl_arg::IoctlArg,
    miscdevice::MiscDevice,
    pr_warn_ratelimited,
    prelude::*,
    sync::{Arc, Mutex},
    types::{AsBytes, FromBytes},
    vma::VmArea,
    wait::{PollTable, POLL_ERROR, POLL_HANGUP},
};

use crate::proto::tenant_config::{TenantConfig, TenantRequest};
use crate::tenant::Tenant;
use crate::{abi, uapi, CcmDev};

/// Checks a CONFIGURE request; `EINVAL` for a malformed one, `EOPNOTSUPP` for one the device
/// cannot serve.
fn configure(dev: &CcmDev, arg: &uapi::Configure) -> Result<TenantConfig> {
    if arg.flags & !uapi::CONFIGURE_FIFO != 0 || arg.reserved0 != 0 || arg.reserved != [0; 4] {
        pr_warn_ratelimited!("CONFIGURE: unknown flags, or reserved fields not 0\n");
        return Err(EINVAL);
    }
    if arg.streaming_order > abi::ORDER_IN_ORDER {
        pr_warn_ratelimited!(
            "CONFIGURE: unknown streaming order {}\n",
            arg.streaming_order
        );
        return Err(EINVAL);
    }
    let req = TenantRequest {
        mode: arg.mode,
        slot_size: arg.slot_size,
        metadata_slots: arg.metadata_slots,
        payload_slots: arg.payload_slots,
        streaming_factor: arg.streaming_factor,
        in_order: arg.streaming_order == abi::ORDER_IN_ORDER,
        poll_interval_ns: arg.poll_interval_ns,
        input_size: arg.input_size,
    };
    match TenantConfig::validate(&req, &dev.id.limits()) {
        Ok(cfg) => Ok(cfg),
        Err(e) if e.is_unsupported() => {
            pr_warn_ratelimited!(
                "CONFIGURE: the device does not serve mode {} (in order: {})\n",
                arg.mode,
                req.in_order
            );
            Err(EOPNOTSUPP)
        }
        Err(e) => {
            pr_warn_ratelimited!("CONFIGURE: refused: {:?}\n", e);
            Err(EINVAL)
        }
    }
}

/// An open file of `/dev/cxl_ccmN`: a tenant once configured.
#[pin_data]
pub(crate) struct CcmFile {
    dev: Arc<CcmDev>,
    #[pin]
    tenant: Mutex<Option<Arc<Tenant>>>,
}

impl CcmFile {
    /// Runs `f` on the file's tenant; `EBADFD` before `CONFIGURE`, `ENODEV` once unbound.
    ///
    /// The file lock is not held during `f`, which may block (`WAIT`, a full launch ring) while
    /// another thread or a forked child uses the same file.
    fn with_tenant<R>(&self, what: &str, f: impl FnOnce(&Tenant) -> Result<R>) -> Result<R> {
        if !self.dev.hw.is_available() {
            return Err(ENODEV);
        }
        let Some(t) = self.tenant.lock().clone() else {
            pr_warn_ratelimited!("{}: CONFIGURE the file first\n", what);
            // The file is not a tenant yet.
            return Err(EBADFD);
        };
        f(&t)
    }

    /// `CONFIGURE`; `publish` copies the outputs out to the caller.
    ///
    /// The outputs (the tenant number, the mmap lengths) are known once a tenant number is
    /// reserved, so they are copied out before the tenant is set up: a caller that cannot be
    /// told them gets `EFAULT` with the file still unconfigured, and may retry. The copy-out
    /// runs under no lock: `mmap` takes the file lock under the mm's lock, which a fault in the
    /// copy would take under the file lock. A concurrent `CONFIGURE` of the same file may thus
    /// pass the first check too; the file lock decides, and the loser gets `EBUSY`.
    fn configure(
        &self,
        arg: &uapi::Configure,
        publish: impl FnOnce(&uapi::Configure) -> Result,
    ) -> Result {
        let cfg = configure(&self.dev, arg)?;
        self.check_unconfigured()?;
        // Nothing is done yet: a pending signal is served first, and the call restarted.
        if kernel::current!().signal_pending() {
            return Err(ERESTARTSYS);
        }
        if !self.dev.hw.is_available() {
            return Err(ENODEV);
        }
        let Some(number) = self.dev.get_tenant() else {
            pr_warn_ratelimited!(
                "CONFIGURE: all {} tenants are taken\n",
                self.dev.id.max_tenants
            );
            return Err(EBUSY);
        };
        // On failure, dropping `number` frees it again.
        publish(&Tenant::outputs(&self.dev, number.index, &cfg, arg)?)?;
        let mut guard = self.tenant.lock();
        if guard.is_some() {
            pr_warn_ratelimited!("CONFIGURE: the file is already a tenant\n");
            return Err(EBUSY);
        }
        *guard = Some(Tenant::configure(&self.dev, number, cfg, arg)?);
        Ok(())
    }

    /// `EBUSY` if the file is a tenant already.
    fn check_unconfigured(&self) -> Result {
        if self.tenant.lock().is_some() {
            pr_warn_ratelimited!("CONFIGURE: the file is already a tenant\n");
            return Err(EBUSY);
        }
        Ok(())
    }
}

#[vtable]
impl MiscDevice for CcmFile {
    type Ptr = Pin<KBox<CcmFile>>;
    type RegistrationData = Arc<CcmDev>;

    fn open(dev: &Arc<CcmDev>) -> Result<Pin<KBox<CcmFile>>> {
        KBox::pin_init(
            pin_init!(CcmFile {
                dev: dev.clone(),
                tenant <- kernel::new_mutex!(None),
            }),
            GFP_KERNEL,
        )
    }

    fn ioctl(file: Pin<&CcmFile>, cmd: u32, arg: usize) -> Result<isize> {
        match cmd {
            uapi::IOC_INFO => {
                let uarg = IoctlArg::<uapi::Info>::new(cmd, arg)?;
                let inp = uarg.read()?;
                if inp.flags != 0 {
                    pr_warn_ratelimited!("INFO: flags {:#x} must be 0\n", inp.flags);
                    return Err(EINVAL);
                }
                uarg.write(&file.dev.info()?)?;
            }
            uapi::IOC_CONFIGURE => {
                let uarg = IoctlArg::<uapi::Configure>::new(cmd, arg)?;
                let c = uarg.read()?;
                let result = file.configure(&c, |out| uarg.write(out));
                restore_on_error(&uarg, &c, result)?;
            }
            uapi::IOC_LAUNCH => {
                let uarg = IoctlArg::<uapi::Launch>::new(cmd, arg)?;
                let l = uarg.read()?;
                let input = &l;
                let publish = |tag| uarg.write(&with_tag(input, tag));
                let result = file.with_tenant("LAUNCH", |t| t.launch(input, publish));
                // A restarted call must find its input (tag 0) as it passed it.
                restore_on_error(&uarg, &l, result)?;
            }
            uapi::IOC_RELEASE => {
                let uarg = IoctlArg::<uapi::Release>::new(cmd, arg)?;
                let mut r = uarg.read()?;
                // A release cannot be undone (its credit may reach the device at once), and its
                // outputs are known only after it: check that they can be written before it.
                // Writing back the bytes just read changes nothing. Only another thread revoking
                // write access in between can still fail the copy-out after the release.
                uarg.write(&r)?;
                let result = file.with_tenant("RELEASE", |t| Ok(t.release(&mut r)))?;
                // The outputs say how far a failed release got.
                uarg.write(&r)?;
                result?;
            }
            uapi::IOC_STATS => {
                let uarg = IoctlArg::<uapi::Stats>::new(cmd, arg)?;
                let s = uarg.read()?;
                file.with_tenant("STATS", |t| t.stats(&s, |out| uarg.write(out)))?;
            }
            uapi::IOC_WAIT => {
                let uarg = IoctlArg::<uapi::Wait>::new(cmd, arg)?;
                let mut w = uarg.read()?;
                // Fail before waiting (and before the deadlock check publishes credit) if the
                // outputs cannot be written; writing back the bytes just read changes nothing.
                uarg.write(&w)?;
                let result = file.with_tenant("WAIT", |t| Ok(t.wait(&mut w)))?;
                // `ready` and `metadata_tail` are meaningful after a timeout too.
                uarg.write(&w)?;
                result?;
            }
            _ => {
                pr_warn_ratelimited!("unknown ioctl {cmd:#x}\n");
                return Err(ENOTTY);
            }
        }
        Ok(0)
    }

    fn mmap(file: Pin<&CcmFile>, vma: &VmArea) -> Result {
        file.with_tenant("mmap", |t| t.mmap(vma))
    }

    fn poll(file: Pin<&CcmFile>, table: &PollTable) -> Result<u32> {
        match file.with_tenant("poll", |t| t.poll(table)) {
            Ok(mask) => Ok(mask),
            Err(e) if e == ENODEV => Ok(POLL_HANGUP),
            Err(_) => Ok(POLL_ERROR),
        }
    }
}

/// The `LAUNCH` argument as returned: the input with the tag filled in.
fn with_tag(input: &uapi::Launch, tag: u32) -> uapi::Launch {
    uapi::Launch { tag, ..*input }
}

/// Passes `result` on; on an error, writes the argument back as it was read, so that a failed
/// call leaves it as the caller passed it (outputs copied out before a later step failed are
/// taken back). Best effort: if that copy fails too, the error of the call is what matters.
fn restore_on_error<T: FromBytes + AsBytes>(
    uarg: &IoctlArg<T>,
    input: &T,
    result: Result<impl Sized>,
) -> Result {
    match result {
        Ok(_) => Ok(()),
        Err(e) => {
            // The call's own error is reported whatever this copy gives.
            let _ = uarg.write(input);
            Err(e)
        }
    }
}
