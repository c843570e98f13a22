// SPDX-License-Identifier: GPL-2.0

//! debugfs directories holding read-only files whose contents a Rust type renders, write-only
//! files whose writes a Rust type handles (test hooks such as fault injection), and read-write
//! files that do both (a knob whose current value can be read back).
//!
//! C header: [`include/linux/debugfs.h`](srctree/include/linux/debugfs.h)
//!
//! A [`Dir`] owns the data of its files: [`Dir::show_file`] takes an `Arc` of a type that
//! implements [`Show`], and dropping the directory first removes it with all its files —
//! `debugfs_remove()` waits for reads in progress and cuts off later ones — and only then drops
//! the data. A file therefore never outlives its data, and no code of the module runs after the
//! directory is gone: the file operations other than `open`, `show` and `write` are the kernel's
//! own `seq_file` helpers. The operation tables themselves are the module's, and debugfs's proxy
//! reads them when a file that outlived its directory is closed, so they name the module as their
//! owner ([`Owner`]): an open file pins the module, as in C.
//!
//! debugfs is for debugging: creation failures are not errors (the directory or file is then
//! simply missing), as `Documentation/filesystems/debugfs.rst` asks.
//!
//! # Examples
//!
//! ```
//! use core::fmt::Write;
//! use kernel::{c_str, debugfs::{Dir, SeqWriter, Show}, sync::Arc};
//!
//! struct Answer(u32);
//! impl Show for Answer {
//!     fn show(&self, out: &mut SeqWriter<'_>) -> core::fmt::Result {
//!         writeln!(out, "answer: {}", self.0)
//!     }
//! }
//!
//! kernel::module_owner!(Owner);
//! let mut dir = Dir::<Owner>::new(c_str!("rust_debugfs_doctest"));
//! dir.show_file(c_str!("answer"), Arc::new(Answer(42), GFP_KERNEL)?)?;
//! drop(dir);
//! # Ok::<(), Error>(())
//! ```

use crate::{
    bindings,
    ffi::{c_int, c_void},
    owner::Owner,
    prelude::*,
    str::CStr,
    sync::Arc,
};
use core::{fmt, marker::PhantomData};

/// Renders the contents of a debugfs file.
pub trait Show: Send + Sync {
    /// Writes the file's contents; called for every read from the start of the file.
    fn show(&self, out: &mut SeqWriter<'_>) -> fmt::Result;
}

/// The output of a [`Show::show`] call (a `seq_file`).
pub struct SeqWriter<'a> {
    m: *mut bindings::seq_file,
    _p: PhantomData<&'a mut bindings::seq_file>,
}

impl fmt::Write for SeqWriter<'_> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        // SAFETY: `m` is the `seq_file` of the `show` call this writer lives in; `seq_write`
        // copies `s` and records an overflow itself (the read is then retried with more room).
        unsafe { bindings::seq_write(self.m, s.as_ptr().cast(), s.len()) };
        Ok(())
    }
}

/// A debugfs directory and the data of the files in it.
///
/// # Invariants
///
/// `dentry` is what `debugfs_create_dir` returned (possibly an error pointer, which the debugfs
/// functions accept and ignore). Every file in it was created with a pointer into one of `data`,
/// and with operations owned by `O`, the module of the `Show` and `Store` types.
pub struct Dir<O: Owner> {
    dentry: *mut bindings::dentry,
    data: KVec<Arc<dyn Show>>,
    stores: KVec<Arc<dyn Store>>,
    _owner: PhantomData<O>,
}

// SAFETY: the dentry pointer is only passed to debugfs functions, which may be called from any
// thread; the data is `Send + Sync`.
unsafe impl<O: Owner> Send for Dir<O> {}
// SAFETY: as above; `&Dir` exposes nothing but the creation of sub-entries.
unsafe impl<O: Owner> Sync for Dir<O> {}

impl<O: Owner> Dir<O> {
    /// Creates a directory at the debugfs root.
    ///
    /// There are no subdirectories: removing a parent removes its children, so a child `Dir`
    /// dropped later would remove a dentry that is gone.
    pub fn new(name: &CStr) -> Self {
        let root = core::ptr::null_mut();
        // SAFETY: `name` is a valid C string; a null parent is the debugfs root.
        let dentry = unsafe { bindings::debugfs_create_dir(name.as_char_ptr(), root) };
        // INVARIANT: no file yet.
        Self {
            dentry,
            data: KVec::new(),
            stores: KVec::new(),
            _owner: PhantomData,
        }
    }

    /// Creates a read-only file whose contents `data` renders; the directory keeps `data`.
    ///
    /// Fails only if there is no memory to keep `data`.
    pub fn show_file<T: Show + 'static>(&mut self, name: &CStr, data: Arc<T>) -> Result {
        let ptr = (&*data as *const T).cast::<c_void>().cast_mut();
        self.data.push(data, GFP_KERNEL)?;
        // SAFETY: `name` is a valid C string and `dentry` a directory (or an error pointer);
        // `ptr` stays valid until the directory is removed (it is kept in `data`, which drop
        // frees only after `debugfs_remove`); the fops are a static table.
        unsafe {
            bindings::debugfs_create_file(
                name.as_char_ptr(),
                0o444,
                self.dentry,
                ptr,
                ShowFops::<T, O>::build(),
            )
        };
        Ok(())
    }
}

impl<O: Owner> Dir<O> {
    /// Creates a write-only file (mode 0200) whose writes `data` handles; the directory keeps
    /// `data`. A write of more than [`STORE_MAX`] bytes fails with `EINVAL`; the result of
    /// [`Store::store`] is the result of the write.
    pub fn store_file<T: Store + 'static>(&mut self, name: &CStr, data: Arc<T>) -> Result {
        let ptr = (&*data as *const T).cast::<c_void>().cast_mut();
        self.stores.push(data, GFP_KERNEL)?;
        // SAFETY: as in `show_file`: `ptr` is kept alive in `stores` until after the removal.
        unsafe {
            bindings::debugfs_create_file(
                name.as_char_ptr(),
                0o200,
                self.dentry,
                ptr,
                StoreFops::<T, O>::build(),
            )
        };
        Ok(())
    }
}

impl<O: Owner> Dir<O> {
    /// Creates a read-write file (mode 0600): a read renders `data` as in [`Dir::show_file`], a
    /// write goes to it as in [`Dir::store_file`]; the directory keeps `data`.
    pub fn show_store_file<T: Show + Store + 'static>(
        &mut self,
        name: &CStr,
        data: Arc<T>,
    ) -> Result {
        let ptr = (&*data as *const T).cast::<c_void>().cast_mut();
        self.data.push(data, GFP_KERNEL)?;
        // SAFETY: as in `show_file`: `ptr` is kept alive in `data` until after the removal.
        unsafe {
            bindings::debugfs_create_file(
                name.as_char_ptr(),
                0o600,
                self.dentry,
                ptr,
                ShowStoreFops::<T, O>::build(),
            )
        };
        Ok(())
    }
}

/// The longest write a [`Store`] file takes.
pub const STORE_MAX: usize = 64;

/// What a write-only debugfs file does with one write.
pub trait Store: Send + Sync {
    /// Handles `input`, the bytes of one `write()` (at most [`STORE_MAX`]).
    fn store(&self, input: &[u8]) -> Result;
}

struct StoreFops<T, O>(PhantomData<(T, O)>);

impl<T: Store, O: Owner> StoreFops<T, O> {
    const VTABLE: bindings::file_operations = bindings::file_operations {
        owner: O::MODULE,
        open: Some(bindings::simple_open),
        write: Some(store_write::<T>),
        // SAFETY: as in `ShowFops`.
        ..unsafe { core::mem::MaybeUninit::zeroed().assume_init() }
    };

    fn build() -> &'static bindings::file_operations {
        &Self::VTABLE
    }
}

/// # Safety
///
/// Called by debugfs for a file created by [`Dir::store_file`] with a `T`, opened with
/// `simple_open` (which put the `T` in `private_data`).
unsafe extern "C" fn store_write<T: Store>(
    file: *mut bindings::file,
    buf: *const crate::ffi::c_char,
    count: usize,
    _ppos: *mut bindings::loff_t,
) -> isize {
    // SAFETY: `private_data` is the `T` of the file, alive while the file is registered; writes
    // are drained before it is removed.
    let data = unsafe { &*(*file).private_data.cast::<T>() };
    // SAFETY: `buf` and `count` are those of the `write()` call.
    unsafe { store_user(data, buf, count) }
}

/// # Safety
///
/// Called by debugfs for a file created by [`Dir::show_store_file`] with a `T`, opened with
/// `show_open::<T>` (which put a `seq_file` whose `private` is the `T` in `private_data`).
unsafe extern "C" fn show_store_write<T: Show + Store>(
    file: *mut bindings::file,
    buf: *const crate::ffi::c_char,
    count: usize,
    _ppos: *mut bindings::loff_t,
) -> isize {
    // SAFETY: `single_open` made `private_data` the file's `seq_file`, and its `private` the `T`,
    // alive while the file is registered; writes are drained before it is removed.
    let seq = unsafe { (*file).private_data.cast::<bindings::seq_file>() };
    // SAFETY: as above, `seq` is the file's `seq_file`.
    let data = unsafe { &*(*seq).private.cast::<T>() };
    // SAFETY: `buf` and `count` are those of the `write()` call.
    unsafe { store_user(data, buf, count) }
}

/// Copies one write of `count` bytes from user space and hands it to `data`; the result of the
/// `write()`.
///
/// # Safety
///
/// `buf` is the user pointer of a `write()` call of `count` bytes (`copy_from_user` checks it).
unsafe fn store_user<T: Store>(data: &T, buf: *const crate::ffi::c_char, count: usize) -> isize {
    if count > STORE_MAX {
        return EINVAL.to_errno() as isize;
    }
    let mut kbuf = [0u8; STORE_MAX];
    // SAFETY: `kbuf` has room for `count <= STORE_MAX` bytes; `buf` is a user pointer, checked
    // by `copy_from_user`.
    let left = unsafe { bindings::copy_from_user(kbuf.as_mut_ptr().cast(), buf.cast(), count) };
    if left != 0 {
        return EFAULT.to_errno() as isize;
    }
    match data.store(&kbuf[..count]) {
        Ok(()) => count as isize,
        Err(e) => e.to_errno() as isize,
    }
}

impl<O: Owner> Drop for Dir<O> {
    fn drop(&mut self) {
        // SAFETY: `dentry` came from `debugfs_create_dir` (type invariant); removal is
        // recursive and waits for the users of every file, after which no `show` runs.
        unsafe { bindings::debugfs_remove(self.dentry) };
        // Only now may the files' data go (the fields drop after this).
    }
}

struct ShowFops<T, O>(PhantomData<(T, O)>);

impl<T: Show, O: Owner> ShowFops<T, O> {
    const VTABLE: bindings::file_operations = bindings::file_operations {
        owner: O::MODULE,
        open: Some(show_open::<T>),
        read: Some(bindings::seq_read),
        llseek: Some(bindings::seq_lseek),
        release: Some(bindings::single_release),
        // SAFETY: all-zero is a valid `file_operations` (no other callbacks).
        ..unsafe { core::mem::MaybeUninit::zeroed().assume_init() }
    };

    fn build() -> &'static bindings::file_operations {
        &Self::VTABLE
    }
}

struct ShowStoreFops<T, O>(PhantomData<(T, O)>);

impl<T: Show + Store, O: Owner> ShowStoreFops<T, O> {
    const VTABLE: bindings::file_operations = bindings::file_operations {
        owner: O::MODULE,
        open: Some(show_open::<T>),
        read: Some(bindings::seq_read),
        write: Some(show_store_write::<T>),
        llseek: Some(bindings::seq_lseek),
        release: Some(bindings::single_release),
        // SAFETY: as in `ShowFops`.
        ..unsafe { core::mem::MaybeUninit::zeroed().assume_init() }
    };

    fn build() -> &'static bindings::file_operations {
        &Self::VTABLE
    }
}

/// # Safety
///
/// Called by debugfs for a file created by [`Dir::show_file`] or [`Dir::show_store_file`] with
/// a `T`.
unsafe extern "C" fn show_open<T: Show>(
    inode: *mut bindings::inode,
    file: *mut bindings::file,
) -> c_int {
    // SAFETY: `inode` is the file's inode; `i_private` is the `T` given at creation.
    let data = unsafe { (*inode).i_private };
    // SAFETY: `file` is being opened; `single_open` sets up its `seq_file` with `data`.
    unsafe { bindings::single_open(file, Some(show_seq::<T>), data) }
}

/// # Safety
///
/// Called by `seq_read` for a file opened by `show_open::<T>`.
unsafe extern "C" fn show_seq<T: Show>(m: *mut bindings::seq_file, _v: *mut c_void) -> c_int {
    // SAFETY: `private` is the `T` of `show_open`, alive while the file is registered, and reads
    // are drained before it is removed.
    let data = unsafe { &*(*m).private.cast::<T>() };
    let mut out = SeqWriter { m, _p: PhantomData };
    match data.show(&mut out) {
        Ok(()) => 0,
        Err(_) => EINVAL.to_errno(),
    }
}
