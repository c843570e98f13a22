//! Loads and stores to a mapping that may fault: SIGSEGV and SIGBUS are
//! results of the call (an unbound device, a read-only or unmapped page),
//! not crashes of the executor. The access runs in inline assembly with the
//! address of its recovery label in r8; the signal handler resumes there and
//! puts the signal number in rdx. Unlike forking a child for the access, the
//! fault is taken by the task that has KCOV enabled, so the driver's fault
//! handler is covered.

use std::sync::atomic::{AtomicBool, Ordering};

static ACTIVE: AtomicBool = AtomicBool::new(false);

extern "C" fn on_fault(sig: libc::c_int, _info: *mut libc::siginfo_t, ctx: *mut libc::c_void) {
    if !ACTIVE.load(Ordering::Relaxed) {
        // A fault outside an access: a real crash. Die of it.
        // SAFETY: restoring the default action; the fault repeats on return.
        unsafe { libc::signal(sig, libc::SIG_DFL) };
        return;
    }
    // SAFETY: ctx is the ucontext_t the kernel passed to this SA_SIGINFO handler.
    unsafe {
        let uc = ctx as *mut libc::ucontext_t;
        let g = &mut (*uc).uc_mcontext.gregs;
        g[libc::REG_RIP as usize] = g[libc::REG_R8 as usize];
        g[libc::REG_RDX as usize] = sig as i64;
    }
}

/// Installs the handler (once per process; forked children inherit it).
pub fn install() {
    for sig in [libc::SIGSEGV, libc::SIGBUS] {
        // SAFETY: a zeroed sigaction with our handler is a valid argument.
        unsafe {
            let mut sa: libc::sigaction = std::mem::zeroed();
            sa.sa_sigaction = on_fault as *const () as usize;
            sa.sa_flags = libc::SA_SIGINFO | libc::SA_NODEFER;
            libc::sigaction(sig, &sa, std::ptr::null_mut());
        }
    }
}

/// Reads the u32 at `addr`: Ok(value) or Err(signal).
pub fn read_u32(addr: u64) -> Result<u32, i32> {
    let v: u32;
    let sig: u64;
    ACTIVE.store(true, Ordering::SeqCst);
    // SAFETY: a fault is recovered by on_fault (r8 holds the resume label);
    // no Rust reference is made to the memory.
    unsafe {
        std::arch::asm!(
            "lea r8, [rip + 2f]",
            "xor edx, edx",
            "mov eax, dword ptr [rdi]",
            "2:",
            in("rdi") addr, out("eax") v, out("r8") _, out("rdx") sig,
            options(nostack)
        );
    }
    ACTIVE.store(false, Ordering::SeqCst);
    if sig == 0 {
        Ok(v)
    } else {
        Err(sig as i32)
    }
}

/// Reads the byte at `addr`.
pub fn read_u8(addr: u64) -> Result<u8, i32> {
    let v: u32;
    let sig: u64;
    ACTIVE.store(true, Ordering::SeqCst);
    // SAFETY: as in read_u32.
    unsafe {
        std::arch::asm!(
            "lea r8, [rip + 2f]",
            "xor edx, edx",
            "movzx eax, byte ptr [rdi]",
            "2:",
            in("rdi") addr, out("eax") v, out("r8") _, out("rdx") sig,
            options(nostack)
        );
    }
    ACTIVE.store(false, Ordering::SeqCst);
    if sig == 0 {
        Ok(v as u8)
    } else {
        Err(sig as i32)
    }
}

/// Fills `len` bytes at `addr` with `byte` (rep stosb); Err(signal) at
/// the first fault.
pub fn fill(addr: u64, len: u64, byte: u8) -> Result<(), i32> {
    let sig: u64;
    ACTIVE.store(true, Ordering::SeqCst);
    // SAFETY: as in read_u32; the memory written is the program's mapping,
    // never memory Rust owns (the fuzzer only maps device files there).
    unsafe {
        std::arch::asm!(
            "lea r8, [rip + 2f]",
            "xor edx, edx",
            "rep stosb",
            "2:",
            inout("rdi") addr => _, inout("rcx") len => _, in("al") byte,
            out("r8") _, out("rdx") sig,
            options(nostack)
        );
    }
    ACTIVE.store(false, Ordering::SeqCst);
    if sig == 0 {
        Ok(())
    } else {
        Err(sig as i32)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn faults_are_results() {
        install();
        assert_eq!(read_u8(0), Err(libc::SIGSEGV));
        assert_eq!(read_u32(8), Err(libc::SIGSEGV));
        let x: u32 = 0x1234_5678;
        assert_eq!(read_u32(&x as *const u32 as u64), Ok(0x1234_5678));
        let mut buf = [0u8; 16];
        assert_eq!(fill(buf.as_mut_ptr() as u64, 16, 7), Ok(()));
        assert_eq!(std::hint::black_box(buf), [7u8; 16]);
        let ro = b"read-only";
        assert_eq!(fill(ro.as_ptr() as u64, 1, 0), Err(libc::SIGSEGV));
    }
}
