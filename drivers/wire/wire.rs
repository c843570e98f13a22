// SPDX-License-Identifier: GPL-2.0

//! The wire-format machinery of the device ABIs, defined once for both of them.
//!
//! `drivers/cxl_ccm/abi.rs` and `drivers/reflux/abi.rs` each compile this file in as their
//! private module `wire` (`#[path = "../wire/wire.rs"] mod wire;`), so every crate that includes
//! either ABI file (the kernel modules, the software devices under `tools/testing/`, the host
//! crates under `tools/`) gets it with the ABI and needs nothing of its own. It uses `core` only
//! and no `unsafe`.
//!
//! - [`LeField`]: a fixed-width little-endian field; implemented here for the integer widths and
//!   arrays the ABIs use, and by an ABI file for a struct that is itself a field.
//! - `wire_image!`: `to_bytes()`/`from_bytes()` of a struct copied through shared memory as bytes.
//! - `assert_layout!`: the compile-time size, alignment and offset checks that freeze a layout.
//! - `registers!`: a register block declared once (struct, offsets, widths, access, layout
//!   checks), with a typed handle [`Reg`] per register.
//!
//! The macros expand where they are invoked: `wire_image!` expects [`LeField`] in scope there,
//! `registers!` expects [`Reg`] and `assert_layout!` (the ABI files re-export or import them);
//! everything from `core` is named by its full path.

/// A fixed-width little-endian field of a struct that crosses the link.
pub trait LeField: Copy {
    /// Bytes of the field.
    const SIZE: usize;
    /// Writes the field at `at`; bytes outside `out` are not written.
    fn put(self, out: &mut [u8], at: usize);
    /// Reads the field at `at`; bytes outside `b` read as zero.
    fn get(b: &[u8], at: usize) -> Self;
}

macro_rules! le_int {
    ($($t:ty),*) => {$(
        impl LeField for $t {
            const SIZE: usize = ::core::mem::size_of::<$t>();
            fn put(self, out: &mut [u8], at: usize) {
                let bytes = self.to_le_bytes();
                if let Some(dst) = out.get_mut(at..at + bytes.len()) {
                    dst.copy_from_slice(&bytes);
                }
            }
            fn get(b: &[u8], at: usize) -> Self {
                let mut bytes = [0u8; ::core::mem::size_of::<$t>()];
                if let Some(src) = b.get(at..at + bytes.len()) {
                    bytes.copy_from_slice(src);
                }
                <$t>::from_le_bytes(bytes)
            }
        }
    )*};
}
le_int!(u8, u16, u32, i32, u64);

/// An array is its elements one after the other (`[u8; N]`: the bytes as they are).
impl<T: LeField, const N: usize> LeField for [T; N] {
    const SIZE: usize = T::SIZE * N;
    fn put(self, out: &mut [u8], at: usize) {
        for (i, v) in self.into_iter().enumerate() {
            v.put(out, at + i * T::SIZE);
        }
    }
    fn get(b: &[u8], at: usize) -> Self {
        core::array::from_fn(|i| T::get(b, at + i * T::SIZE))
    }
}

/// `to_bytes()` and `from_bytes()` for a struct that is copied into or out of shared memory (the
/// CCM region, the ReFlux PMR) as bytes: the listed fields little-endian at their offsets,
/// everything else (reserved) zero. The struct must implement `Default`.
macro_rules! wire_image {
    ($ty:ty, { $($field:ident),* $(,)? }) => {
        impl $ty {
            /// The little-endian bytes of the struct, reserved fields zero.
            pub fn to_bytes(&self) -> [u8; ::core::mem::size_of::<$ty>()] {
                let mut out = [0u8; ::core::mem::size_of::<$ty>()];
                $( LeField::put(self.$field, &mut out, ::core::mem::offset_of!($ty, $field)); )*
                out
            }

            /// Decodes the little-endian bytes of the struct; reserved fields read as zero.
            #[allow(clippy::needless_update)]
            pub fn from_bytes(b: &[u8; ::core::mem::size_of::<$ty>()]) -> Self {
                Self {
                    $( $field: LeField::get(b, ::core::mem::offset_of!($ty, $field)), )*
                    ..Default::default()
                }
            }
        }
    };
}
pub(crate) use wire_image;

/// Asserts the size, alignment and field offsets of a boundary-crossing type at compile time.
macro_rules! assert_layout {
    ($ty:ty, size = $size:expr, align = $align:expr, { $($field:ident @ $off:expr),* $(,)? }) => {
        const _: () = assert!(
            ::core::mem::size_of::<$ty>() == $size,
            concat!("size of ", stringify!($ty))
        );
        const _: () = assert!(
            ::core::mem::align_of::<$ty>() == $align,
            concat!("alignment of ", stringify!($ty))
        );
        $(
            const _: () = assert!(
                ::core::mem::offset_of!($ty, $field) == $off,
                concat!("offset of ", stringify!($ty), ".", stringify!($field))
            );
        )*
    };
}
pub(crate) use assert_layout;

/// The access a host has to a register; the device's is the converse. A marker for [`Reg`].
pub trait Access {}
/// A register the host may read ([`Ro`], [`Rw`]).
pub trait Readable: Access {}
/// A register the host may write ([`Rw`], [`Wo`]).
pub trait Writable: Access {}

/// Read-only for the host: the device writes it.
#[derive(Clone, Copy, Debug)]
pub enum Ro {}
/// Read-write: the host writes it and may read it back.
#[derive(Clone, Copy, Debug)]
pub enum Rw {}
/// Write-only for the host: reading it back means nothing.
#[derive(Clone, Copy, Debug)]
pub enum Wo {}

impl Access for Ro {}
impl Access for Rw {}
impl Access for Wo {}
impl Readable for Ro {}
impl Readable for Rw {}
impl Writable for Rw {}
impl Writable for Wo {}

/// A width a register may have: the device ABIs use 32- and 64-bit registers only.
pub trait RegWidth: Copy {}
impl RegWidth for u32 {}
impl RegWidth for u64 {}

/// A register: its offset in its block, its width `T` and the host's access `A`.
///
/// A driver's accessors take a `Reg` rather than an offset, so that the width of a load or store
/// is the register's and a store to a read-only register does not compile.
pub struct Reg<T, A> {
    offset: usize,
    // `fn() -> _`: `Reg` is `Copy`, `Send` and `Sync` whatever `T` and `A` are.
    _kind: ::core::marker::PhantomData<fn() -> (T, A)>,
}

impl<T, A> Clone for Reg<T, A> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T, A> Copy for Reg<T, A> {}

impl<T: RegWidth, A: Access> Reg<T, A> {
    /// The register at byte `offset` of its block.
    pub const fn new(offset: usize) -> Self {
        Self {
            offset,
            _kind: ::core::marker::PhantomData,
        }
    }

    /// The register's byte offset in its block.
    pub const fn offset(self) -> usize {
        self.offset
    }

    /// The same register in a block that starts at `base` of a larger mapping (a tenant's page
    /// of the register block). Saturates: an offset past the mapping fails the access's bounds
    /// check rather than wrapping onto another register.
    pub const fn at(self, base: usize) -> Self {
        Self::new(base.saturating_add(self.offset))
    }
}

/// Declares a register block once: the `#[repr(C)]` struct, and for every register its offset,
/// width (the field's type), host access and documentation.
///
/// ```ignore
/// registers! {
///     /// The block.
///     #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
///     pub struct Block, size = 0x10, align = 8 {
///         /// Device writes at reset: the magic.
///         0x00 magic: u32, Ro REG_MAGIC;
///         /// Host writes: `CTRL_*`.
///         0x04 ctrl: u32, Rw REG_CTRL {
///             /// [`Block::ctrl`]: go.
///             pub const CTRL_GO: u32 = 1;
///         };
///         /// Zero.
///         0x08 reserved: u64;
///     }
/// }
/// ```
///
/// generates the struct with one `pub` field per line (the line's documentation on it), and for
/// every line that names an access and a constant:
///
/// - `pub const REG_CTRL: usize`, the offset (for the software devices, which write every
///   register and so do not use the host's access);
/// - `Block::REG_CTRL: Reg<u32, Rw>`, the typed handle a driver's accessors take;
/// - the items in braces (the register's bit values), beside the register;
///
/// and the layout checks: the struct's size and alignment, and each field's offset against the
/// declared one, so that a wrong offset stops the build. Lines without an access are reserved
/// fields: checked, no constants.
macro_rules! registers {
    (
        $(#[$meta:meta])*
        $vis:vis struct $name:ident, size = $size:literal, align = $align:literal {
            $(
                $(#[$fmeta:meta])*
                $off:literal $field:ident: $ty:ty $(, $acc:ident $reg:ident $({ $($bits:item)* })?)?;
            )*
        }
    ) => {
        $(#[$meta])*
        #[repr(C)]
        $vis struct $name {
            $( $(#[$fmeta])* pub $field: $ty, )*
        }

        $(
            registers!(@reg $name, $field, $off, $ty, [$(#[$fmeta])*] $(, $acc $reg $({ $($bits)* })?)?);
        )*

        assert_layout!($name, size = $size, align = $align, { $($field @ $off),* });
    };

    // A reserved field: no constants.
    (@reg $name:ident, $field:ident, $off:literal, $ty:ty, [$($doc:tt)*]) => {};

    (@reg $name:ident, $field:ident, $off:literal, $ty:ty, [$($doc:tt)*], $acc:ident $reg:ident
        $({ $($bits:item)* })?) => {
        #[doc = concat!("Register [`", stringify!($name), "::", stringify!($field), "`] (`",
            stringify!($acc), "`, `", stringify!($ty), "`, at ", stringify!($off), ").")]
        #[doc = ""]
        $($doc)*
        pub const $reg: usize = $off;

        impl $name {
            #[doc = concat!("Register `", stringify!($field), "` (`", stringify!($acc), "`, `",
                stringify!($ty), "`, at ", stringify!($off), ").")]
            #[doc = ""]
            $($doc)*
            pub const $reg: Reg<$ty, $acc> = Reg::new($off);
        }

        $($($bits)*)?
    };
}
pub(crate) use registers;
