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
//!
//! The macros expand where they are invoked: `wire_image!` expects [`LeField`] in scope there (the
//! ABI files re-export it); everything from `core` is named by its full path.

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
