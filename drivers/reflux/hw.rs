// SPDX-License-Identifier: GPL-2.0

//! The device's identification and the enable/disable handshakes (abi.rs, "Lifecycle").

use core::sync::atomic::Ordering;
use kernel::{
    dev_err, dev_info, device::Device, io_mem::IoMem, kthread::usleep_range, memremap::MemRemap,
    prelude::*, shared_mem::SharedMem,
};

use crate::abi::{self, PmrLayout, Regs, Superblock};
use crate::regio::{self, read};

/// Offset of a ring's tail in its header.
pub(crate) const TAIL: usize = core::mem::offset_of!(abi::RingHeader, producer)
    + core::mem::offset_of!(abi::RingProducer, tail);
/// Offset of a ring's head in its header.
pub(crate) const HEAD: usize = core::mem::offset_of!(abi::RingHeader, consumer)
    + core::mem::offset_of!(abi::RingConsumer, head);

/// What the host reads from the registers before it touches the PMR.
#[derive(Clone, Copy)]
pub(crate) struct Identity {
    pub(crate) version: u32,
    pub(crate) caps: u64,
    pub(crate) pmr_size: u64,
    pub(crate) capacity_blocks: u64,
    pub(crate) nr_cores: u32,
}

/// Reads and checks the identification registers.
pub(crate) fn identify(regs: &IoMem, device: &Device) -> Result<Identity> {
    // Acquire on the magic: the device writes it last.
    let magic = read(regs, Regs::REG_MAGIC)?;
    if magic != abi::REGISTER_MAGIC {
        dev_err!(device, "no ReFlux device (magic {magic:#x})\n");
        return Err(ENODEV);
    }
    let version = read(regs, Regs::REG_VERSION)?;
    if abi::version_major(version) != abi::ABI_VERSION_MAJOR {
        dev_err!(
            device,
            "device ABI {}.{}, driver speaks {}.x\n",
            abi::version_major(version),
            abi::version_minor(version),
            abi::ABI_VERSION_MAJOR
        );
        return Err(ENODEV);
    }
    Ok(Identity {
        version,
        caps: read(regs, Regs::REG_CAPS)?,
        pmr_size: read(regs, Regs::REG_PMR_SIZE)?,
        capacity_blocks: read(regs, Regs::REG_CAPACITY_BLOCKS)?,
        nr_cores: read(regs, Regs::REG_NR_CORES)?,
    })
}

/// Reads the superblock, checks it, and takes the PMR for this mount: generation + 1, not clean,
/// every ring counter at `start`. The device must not be enabled.
pub(crate) fn mount(
    pmr: &MemRemap,
    id: &Identity,
    device: &Device,
    start: u32,
) -> Result<PmrLayout> {
    let mut raw = [0u8; core::mem::size_of::<Superblock>()];
    pmr.read_bytes(0, &mut raw)?;
    let mut sb = Superblock::from_bytes(&raw);
    let layout = sb.validate(id.pmr_size).map_err(|e| {
        dev_err!(device, "PMR superblock refused: {e:?}\n");
        EIO
    })?;
    if layout.params().nr_blocks < id.capacity_blocks {
        dev_err!(
            device,
            "device reports {} blocks, its PMR holds {}\n",
            id.capacity_blocks,
            layout.params().nr_blocks
        );
        return Err(EIO);
    }
    if sb.clean == 0 {
        dev_info!(
            device,
            "PMR was not unmounted cleanly (generation {}): acknowledged writes are in it\n",
            sb.generation
        );
    }
    sb.generation = sb.generation.wrapping_add(1);
    sb.clean = 0;
    pmr.write_bytes(0, &sb.to_bytes())?;
    for hdr in [layout.sq_header(), layout.cq_header()] {
        let hdr = hdr as usize;
        pmr.atomic_u32(hdr + TAIL)?.store(start, Ordering::Relaxed);
        pmr.atomic_u32(hdr + HEAD)?.store(start, Ordering::Relaxed);
    }
    Ok(layout)
}

/// Marks the PMR cleanly unmounted (after the device stopped).
pub(crate) fn unmount(pmr: &MemRemap) {
    let off = core::mem::offset_of!(Superblock, clean);
    if let Ok(clean) = pmr.atomic_u32(off) {
        clean.store(1, Ordering::Release);
    }
}

/// Waits up to ~2 s for `status & mask == want`.
fn wait_status(regs: &IoMem, mask: u32, want: u32) -> Result<u32> {
    for _ in 0..2000 {
        let s = read(regs, Regs::REG_DEV_STATUS)?;
        if s & abi::DEV_STATUS_FATAL != 0 || s & mask == want {
            return Ok(s);
        }
        usleep_range(1000, 1000);
    }
    Err(ETIMEDOUT)
}

/// Enables the device and waits until it is ready. On a failure the enable is withdrawn: the
/// device is left disabled, as a failed probe must leave it.
pub(crate) fn enable(regs: &IoMem, device: &Device) -> Result {
    let ctrl = regio::reg(regs, Regs::REG_DEV_CTRL)?;
    // writel(): after the ring counters and the superblock written before, which the device
    // loads.
    ctrl.store(abi::DEV_CTRL_ENABLE);
    let s = match wait_status(regs, abi::DEV_STATUS_READY, abi::DEV_STATUS_READY) {
        Ok(s) => s,
        Err(e) => {
            dev_err!(device, "the device did not become ready\n");
            // A device that gets ready late stops again.
            ctrl.store(0);
            return Err(e);
        }
    };
    if s & abi::DEV_STATUS_FATAL != 0 {
        match read(regs, Regs::REG_DEV_ERROR) {
            Ok(err) => dev_err!(device, "the device refused to start (error {err})\n"),
            Err(_) => dev_err!(device, "the device refused to start (error unreadable)\n"),
        }
        ctrl.store(0);
        return Err(EIO);
    }
    Ok(())
}

/// Disables the device and waits until it has stopped.
pub(crate) fn disable(regs: &IoMem, device: &Device) -> Result {
    regio::reg(regs, Regs::REG_DEV_CTRL)?.store(0);
    wait_status(regs, abi::DEV_STATUS_READY, 0)
        .map(|_| ())
        .inspect_err(|_| dev_err!(device, "the device did not stop\n"))
}

/// Enables or disables the completion interrupt.
pub(crate) fn set_irq(regs: &IoMem, on: bool) -> Result {
    let v = if on { abi::IRQ_CTRL_ENABLE } else { 0 };
    regio::reg(regs, Regs::REG_IRQ_CTRL)?.store(v);
    Ok(())
}
