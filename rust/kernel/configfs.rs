// SPDX-License-Identifier: GPL-2.0

//! configfs subsystems whose root directory lets the administrator create (`mkdir`) and remove
//! (`rmdir`) items of one Rust type, each item a directory of text attributes.
//!
//! C header: [`include/linux/configfs.h`](srctree/include/linux/configfs.h)
//!
//! A [`Subsystem`] owns its C structures (the `configfs_subsystem`, the two item types, their
//! operations and the attribute table) and a `Parent` value every item can see — typically the
//! registry of the devices the items configure. Registering it creates
//! `/sys/kernel/config/<name>/`; dropping its last reference unregisters it.
//!
//! Next to the administrator's items, the driver can make directories of its own in the
//! subsystem's root, one per object it owns (a bound device, say): a [`GroupType`] describes
//! their attributes ([`Group`]), and [`GroupType::register`] makes one, which lasts until the
//! returned [`GroupRegistration`] is dropped.
//!
//! Each `mkdir` there calls [`Item::make`]; the value it initialises lives in a pinned heap box
//! next to the C `config_item` until configfs drops the item's last reference (`release`), which is after
//! `rmdir` ([`Item::drop_item`]) and after every open attribute file is closed. configfs takes a
//! reference on the owning module for each item, so the module cannot be unloaded while items
//! exist: the subsystem (and its `Parent`) outlives every item.
//!
//! Attributes are named by [`Item::ATTRS`] (at most [`MAX_ATTRS`]); a read calls [`Item::show`]
//! with the attribute's index and a page to write into, a write calls [`Item::store`] with the
//! bytes written (at most a page). configfs serialises nothing between different open files of
//! one item, so items use interior mutability.
//!
//! # Examples
//!
//! ```
//! use core::{fmt::Write, sync::atomic::{AtomicU32, Ordering}};
//! use kernel::{c_str, configfs::{Attribute, Item, Page}};
//!
//! struct Knob(AtomicU32);
//! impl Item for Knob {
//!     type Parent = ();
//!     const ATTRS: &'static [Attribute] = &[Attribute::rw(c_str!("value"))];
//!     fn make(_: &(), _name: &CStr) -> impl PinInit<Self, Error> {
//!         Knob(AtomicU32::new(0))
//!     }
//!     fn show(&self, _: &(), _attr: usize, out: &mut Page<'_>) -> Result {
//!         out.text(format_args!("{}\n", self.0.load(Ordering::Relaxed)))
//!     }
//!     fn store(&self, _: &(), _attr: usize, input: &[u8]) -> Result {
//!         let s = core::str::from_utf8(input).map_err(|_| EINVAL)?;
//!         self.0.store(s.trim().parse().map_err(|_| EINVAL)?, Ordering::Relaxed);
//!         Ok(())
//!     }
//! }
//! ```

use crate::{
    bindings,
    error::to_result,
    ffi::c_char,
    page::PAGE_SIZE,
    prelude::*,
    str::CStr,
    sync::{Arc, LockClassKey, UniqueArc},
    types::Opaque,
    ThisModule,
};
use core::{fmt, marker::PhantomData, ptr};

/// The most attributes an item type has.
pub const MAX_ATTRS: usize = 8;

/// An attribute of an item: a file in its directory.
pub struct Attribute {
    /// The file name.
    pub name: &'static CStr,
    /// Writable by root (mode 0644) or read-only (0444).
    pub writable: bool,
}

impl Attribute {
    /// A read-write attribute.
    pub const fn rw(name: &'static CStr) -> Self {
        Self {
            name,
            writable: true,
        }
    }

    /// A read-only attribute.
    pub const fn ro(name: &'static CStr) -> Self {
        Self {
            name,
            writable: false,
        }
    }
}

/// The items the administrator creates in a [`Subsystem`]'s directory.
pub trait Item: Send + Sync + Sized {
    /// What the subsystem holds for all its items.
    type Parent: Send + Sync;

    /// The item's attributes; the index into this slice names one in `show` and `store`.
    const ATTRS: &'static [Attribute];

    /// `mkdir <name>`: the initialiser of a new item (in place: it may hold locks), or the
    /// error `mkdir` fails with.
    fn make(parent: &Self::Parent, name: &CStr) -> impl PinInit<Self, Error>;

    /// A read of attribute `attr`: writes its text into `out`.
    fn show(&self, parent: &Self::Parent, attr: usize, out: &mut Page<'_>) -> Result;

    /// A write of `input` to attribute `attr` (writable ones only); an error fails the write.
    fn store(&self, parent: &Self::Parent, attr: usize, input: &[u8]) -> Result;

    /// `rmdir`: the item leaves the tree. No `show` or `store` runs after this starts.
    fn drop_item(&self, _parent: &Self::Parent) {}
}

/// The page a [`Item::show`] writes into.
pub struct Page<'a> {
    buf: &'a mut [u8],
    len: usize,
}

impl Page<'_> {
    /// Appends formatted text; `ENOSPC` if it does not fit in the page.
    pub fn text(&mut self, args: fmt::Arguments<'_>) -> Result {
        fmt::Write::write_fmt(self, args).map_err(|_| ENOSPC)
    }
}

impl fmt::Write for Page<'_> {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        let end = self.len.checked_add(s.len()).ok_or(fmt::Error)?;
        let dst = self.buf.get_mut(self.len..end).ok_or(fmt::Error)?;
        dst.copy_from_slice(s.as_bytes());
        self.len = end;
        Ok(())
    }
}

type ShowFn = unsafe extern "C" fn(*mut bindings::config_item, *mut c_char) -> isize;
type StoreFn = unsafe extern "C" fn(*mut bindings::config_item, *const c_char, usize) -> isize;

/// The C attributes of `attrs`, each with the callback of its index in `shows` and `stores`,
/// and the NULL-terminated table of pointers to them (into the first vector's heap buffer,
/// which must not grow afterwards). `EINVAL` if there are more attributes than callbacks.
#[allow(clippy::type_complexity)]
fn attribute_table(
    attrs: &[Attribute],
    shows: &[ShowFn],
    stores: &[StoreFn],
    module: &'static ThisModule,
) -> Result<(
    KVec<bindings::configfs_attribute>,
    KVec<*mut bindings::configfs_attribute>,
)> {
    if attrs.len() > shows.len() || attrs.len() > stores.len() {
        return Err(EINVAL);
    }
    let mut table = KVec::with_capacity(attrs.len(), GFP_KERNEL)?;
    for ((a, show), store) in attrs.iter().zip(shows).zip(stores) {
        table.push(
            bindings::configfs_attribute {
                ca_name: a.name.as_char_ptr(),
                ca_owner: module.as_ptr(),
                ca_mode: if a.writable { 0o644 } else { 0o444 },
                show: Some(*show),
                store: a.writable.then_some(*store),
            },
            GFP_KERNEL,
        )?;
    }
    let mut ptrs = KVec::with_capacity(table.len() + 1, GFP_KERNEL)?;
    // `table` is never pushed to again: its elements stay where they are.
    for a in table.iter_mut() {
        ptrs.push(ptr::from_mut(a), GFP_KERNEL)?;
    }
    ptrs.push(ptr::null_mut(), GFP_KERNEL)?;
    Ok((table, ptrs))
}

/// A registered configfs subsystem whose root directory holds items of type `T`.
///
/// # Invariants
///
/// Once [`Subsystem::new`] returned it, `subsys` is registered with configfs (until drop), its
/// root group has type `root_type`, whose group operations are `group_ops`; every item created
/// in it is an [`ItemBox<T>`] of type `item_type` (operations `item_ops`, attributes
/// `attr_ptrs`, which point into `attrs`). None of these move or change while registered.
#[pin_data(PinnedDrop)]
pub struct Subsystem<T: Item> {
    #[pin]
    subsys: Opaque<bindings::configfs_subsystem>,
    #[pin]
    root_type: Opaque<bindings::config_item_type>,
    #[pin]
    item_type: Opaque<bindings::config_item_type>,
    #[pin]
    group_ops: Opaque<bindings::configfs_group_operations>,
    #[pin]
    item_ops: Opaque<bindings::configfs_item_operations>,
    attrs: KVec<bindings::configfs_attribute>,
    attr_ptrs: KVec<*mut bindings::configfs_attribute>,
    #[pin]
    parent: T::Parent,
    registered: bool,
}

// SAFETY: the C structures are only touched by configfs (under its own locks) after
// registration; the rest is `T::Parent`, which is `Send`, and immutable data.
unsafe impl<T: Item> Send for Subsystem<T> {}
// SAFETY: as above; `T::Parent` is `Sync` and items only get shared references to it.
unsafe impl<T: Item> Sync for Subsystem<T> {}

/// An item as configfs sees it: the C item, then the Rust value.
#[pin_data]
struct ItemBox<T: Item> {
    #[pin]
    item: Opaque<bindings::config_item>,
    subsys: *const Subsystem<T>,
    #[pin]
    data: T,
}

impl<T: Item> ItemBox<T> {
    fn new(subsys: *const Subsystem<T>, data: impl PinInit<T, Error>) -> impl PinInit<Self, Error> {
        try_pin_init!(Self {
            item: Opaque::uninit(),
            subsys,
            data <- data,
        }? Error)
    }
}

impl<T: Item> Subsystem<T> {
    const SHOW: [ShowFn; MAX_ATTRS] = [
        Self::show::<0>,
        Self::show::<1>,
        Self::show::<2>,
        Self::show::<3>,
        Self::show::<4>,
        Self::show::<5>,
        Self::show::<6>,
        Self::show::<7>,
    ];
    const STORE: [StoreFn; MAX_ATTRS] = [
        Self::store::<0>,
        Self::store::<1>,
        Self::store::<2>,
        Self::store::<3>,
        Self::store::<4>,
        Self::store::<5>,
        Self::store::<6>,
        Self::store::<7>,
    ];

    /// Creates `/sys/kernel/config/<name>/` for items of type `T`, with `parent` for them all.
    ///
    /// `EINVAL` if `T` has more than [`MAX_ATTRS`] attributes; configfs's error if the name is
    /// taken or configfs is not available.
    pub fn new(
        name: &'static CStr,
        module: &'static ThisModule,
        key: &'static LockClassKey,
        parent: impl PinInit<T::Parent, Error>,
    ) -> Result<Arc<Self>> {
        let (attrs, attr_ptrs) = attribute_table(T::ATTRS, &Self::SHOW, &Self::STORE, module)?;

        let mut this = UniqueArc::try_pin_init(
            try_pin_init!(Self {
                subsys: Opaque::uninit(),
                root_type: Opaque::uninit(),
                item_type: Opaque::uninit(),
                group_ops: Opaque::uninit(),
                item_ops: Opaque::uninit(),
                attrs,
                attr_ptrs,
                parent <- parent,
                registered: false,
            }? Error),
            GFP_KERNEL,
        )?;
        // SAFETY: nothing is moved out of `this`; only fields are written in place.
        let me = unsafe { this.as_mut().get_unchecked_mut() };
        // SAFETY: the C structures are ours and not yet visible to configfs; all-zero is a valid
        // value of each (null pointers, no operations). The pointers stored are to fields of the
        // pinned `this`, and to `attr_ptrs`'s heap buffer, all of which outlive the registration
        // (it ends in `drop`). `su_group` and `su_mutex` are initialised before registration as
        // configfs requires; the name is `'static`.
        unsafe {
            ptr::write_bytes(me.subsys.get(), 0, 1);
            ptr::write_bytes(me.root_type.get(), 0, 1);
            ptr::write_bytes(me.item_type.get(), 0, 1);
            ptr::write_bytes(me.group_ops.get(), 0, 1);
            ptr::write_bytes(me.item_ops.get(), 0, 1);
            (*me.group_ops.get()).make_item = Some(Self::make_item);
            (*me.group_ops.get()).drop_item = Some(Self::drop_item);
            (*me.item_ops.get()).release = Some(Self::release);
            (*me.root_type.get()).ct_owner = module.as_ptr();
            (*me.root_type.get()).ct_group_ops = me.group_ops.get();
            (*me.item_type.get()).ct_owner = module.as_ptr();
            (*me.item_type.get()).ct_item_ops = me.item_ops.get();
            (*me.item_type.get()).ct_attrs = me.attr_ptrs.as_mut_ptr();
            let s = me.subsys.get();
            bindings::config_group_init_type_name(
                ptr::addr_of_mut!((*s).su_group),
                name.as_char_ptr(),
                me.root_type.get(),
            );
            bindings::__mutex_init(
                ptr::addr_of_mut!((*s).su_mutex),
                name.as_char_ptr(),
                key.as_ptr(),
            );
            to_result(bindings::configfs_register_subsystem(s))?;
        }
        me.registered = true;
        Ok(this.into())
    }

    /// The value every item sees.
    pub fn parent(&self) -> &T::Parent {
        &self.parent
    }

    /// # Safety
    ///
    /// `item` is the `config_item` of a live [`ItemBox<T>`].
    unsafe fn item_box<'a>(item: *mut bindings::config_item) -> &'a ItemBox<T> {
        // SAFETY: by the caller's contract, `item` is the `item` field of an `ItemBox<T>`, which
        // is alive while configfs holds a reference to the item (during every callback).
        unsafe { &*crate::container_of!(item, ItemBox<T>, item) }
    }

    unsafe extern "C" fn make_item(
        group: *mut bindings::config_group,
        name: *const c_char,
    ) -> *mut bindings::config_item {
        // SAFETY: configfs calls this only for the root group of a subsystem whose type has
        // `group_ops`, that is `su_group` inside our `subsys`, and the subsystem is registered
        // (so alive and pinned).
        let this = unsafe {
            let subsys = crate::container_of!(group, bindings::configfs_subsystem, su_group);
            &*crate::container_of!(subsys, Self, subsys)
        };
        // SAFETY: configfs passes the new directory's name, NUL-terminated.
        let name = unsafe { CStr::from_char_ptr(name) };
        let init = ItemBox::new(ptr::from_ref(this), T::make(&this.parent, name));
        let boxed = match KBox::pin_init(init, GFP_KERNEL) {
            Ok(b) => b,
            Err(e) => return e.to_ptr(),
        };
        // SAFETY: the box is never moved out of: `release` drops it in place.
        let raw = KBox::into_raw(unsafe { Pin::into_inner_unchecked(boxed) });
        // SAFETY: `raw` is a fresh, exclusively owned allocation. A zeroed `config_item` is what
        // `config_item_init_type_name` expects; it copies the name. From here configfs owns the
        // box and gives it back in `release`.
        unsafe {
            let item = (*raw).item.get();
            ptr::write_bytes(item, 0, 1);
            bindings::config_item_init_type_name(item, name.as_char_ptr(), this.item_type.get());
            item
        }
    }

    unsafe extern "C" fn drop_item(
        _group: *mut bindings::config_group,
        item: *mut bindings::config_item,
    ) {
        // SAFETY: every item of the root group was made by `make_item`; configfs holds the
        // reference `make_item` returned until this callback drops it.
        unsafe {
            let b = Self::item_box(item);
            b.data.drop_item(&(*b.subsys).parent);
            bindings::config_item_put(item);
        }
    }

    unsafe extern "C" fn release(item: *mut bindings::config_item) {
        // SAFETY: the last reference of an item made by `make_item` is gone: nobody else can
        // reach the box, which `make_item` leaked from a `KBox`.
        unsafe {
            let raw = crate::container_of!(item, ItemBox<T>, item).cast_mut();
            drop(KBox::from_raw(raw));
        }
    }

    unsafe extern "C" fn show<const I: usize>(
        item: *mut bindings::config_item,
        page: *mut c_char,
    ) -> isize {
        // SAFETY: configfs calls attribute operations on live items of `item_type` only, with
        // a page-sized, writable buffer of its own.
        let (b, buf) = unsafe {
            (
                Self::item_box(item),
                core::slice::from_raw_parts_mut(page.cast::<u8>(), PAGE_SIZE),
            )
        };
        let mut out = Page { buf, len: 0 };
        // SAFETY: the subsystem outlives its items (see the module documentation).
        let parent = unsafe { &(*b.subsys).parent };
        match b.data.show(parent, I, &mut out) {
            // At most PAGE_SIZE.
            Ok(()) => out.len as isize,
            Err(e) => e.to_errno() as isize,
        }
    }

    unsafe extern "C" fn store<const I: usize>(
        item: *mut bindings::config_item,
        page: *const c_char,
        count: usize,
    ) -> isize {
        // SAFETY: as in `show`; configfs passes `count` (at most a page) bytes it copied in.
        let (b, input) = unsafe {
            (
                Self::item_box(item),
                core::slice::from_raw_parts(page.cast::<u8>(), count),
            )
        };
        // SAFETY: the subsystem outlives its items.
        let parent = unsafe { &(*b.subsys).parent };
        match b.data.store(parent, I, input) {
            Ok(()) => count as isize,
            Err(e) => e.to_errno() as isize,
        }
    }
}

#[pinned_drop]
impl<T: Item> PinnedDrop for Subsystem<T> {
    fn drop(self: Pin<&mut Self>) {
        if self.registered {
            // SAFETY: registered in `new` (type invariant) and not yet unregistered. No item
            // exists: each holds a reference on the module that owns this subsystem.
            unsafe { bindings::configfs_unregister_subsystem(self.subsys.get()) };
        }
    }
}

/// The most attributes a [`Group`] has.
pub const MAX_GROUP_ATTRS: usize = 32;

/// The attributes of a directory the driver makes in a subsystem ([`GroupType::register`]).
///
/// configfs serialises nothing between different open files of one directory, so groups use
/// interior mutability.
pub trait Group: Send + Sync {
    /// The directory's attributes; the index into this slice names one in `show` and `store`.
    const ATTRS: &'static [Attribute];

    /// A read of attribute `attr`: writes its text into `out`.
    fn show(&self, attr: usize, out: &mut Page<'_>) -> Result;

    /// A write of `input` to attribute `attr` (writable ones only); an error fails the write.
    fn store(&self, attr: usize, input: &[u8]) -> Result;
}

/// The type of the directories of [`Group`] `G` that a driver makes in the subsystem of `T`.
///
/// # Invariants
///
/// `item_type` has attributes `attr_ptrs` (pointing into `attrs`) and no operations; none of
/// them moves or changes while a [`GroupRegistration`] of this type exists (each holds an
/// [`Arc`] to it).
#[pin_data]
pub struct GroupType<T: Item, G: Group> {
    subsys: Arc<Subsystem<T>>,
    #[pin]
    item_type: Opaque<bindings::config_item_type>,
    attrs: KVec<bindings::configfs_attribute>,
    attr_ptrs: KVec<*mut bindings::configfs_attribute>,
    _group: PhantomData<G>,
}

// SAFETY: the C structures are only read by configfs after creation; the rest is an `Arc` to a
// `Send + Sync` subsystem and immutable data.
unsafe impl<T: Item, G: Group> Send for GroupType<T, G> {}
// SAFETY: as above.
unsafe impl<T: Item, G: Group> Sync for GroupType<T, G> {}

/// Generates the attribute callbacks of a [`GroupType`], one per attribute index.
macro_rules! group_callbacks {
    ($($i:literal)*) => {
        const SHOW: [ShowFn; MAX_GROUP_ATTRS] = [$(Self::show::<$i>,)*];
        const STORE: [StoreFn; MAX_GROUP_ATTRS] = [$(Self::store::<$i>,)*];
    };
}

impl<T: Item, G: Group> GroupType<T, G> {
    group_callbacks!(0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27
        28 29 30 31);

    /// The type of `G`'s directories in `subsys`, whose files belong to `module`. `EINVAL` if
    /// `G` has more than [`MAX_GROUP_ATTRS`] attributes.
    pub fn new(subsys: Arc<Subsystem<T>>, module: &'static ThisModule) -> Result<Arc<Self>> {
        let (attrs, attr_ptrs) = attribute_table(G::ATTRS, &Self::SHOW, &Self::STORE, module)?;
        let mut this = UniqueArc::try_pin_init(
            try_pin_init!(Self {
                subsys,
                item_type: Opaque::uninit(),
                attrs,
                attr_ptrs,
                _group: PhantomData,
            }? Error),
            GFP_KERNEL,
        )?;
        // SAFETY: nothing is moved out of `this`; only a field is written in place.
        let me = unsafe { this.as_mut().get_unchecked_mut() };
        // SAFETY: the type is ours and not yet visible to configfs; all-zero is a valid value
        // (no operations). The attribute table is `attr_ptrs`'s heap buffer, which lives as
        // long as `this`.
        unsafe {
            ptr::write_bytes(me.item_type.get(), 0, 1);
            (*me.item_type.get()).ct_owner = module.as_ptr();
            (*me.item_type.get()).ct_attrs = me.attr_ptrs.as_mut_ptr();
        }
        Ok(this.into())
    }

    /// Makes the directory `<subsystem>/<name>/` with the attributes of `data`: `EEXIST` if
    /// the name is taken (by an item of the administrator's, too).
    pub fn register(
        self: &Arc<Self>,
        name: &CStr,
        data: Arc<G>,
    ) -> Result<Pin<KBox<GroupRegistration<T, G>>>> {
        let reg = KBox::pin_init(
            try_pin_init!(GroupRegistration {
                group: Opaque::uninit(),
                data,
                ty: self.clone(),
                registered: core::sync::atomic::AtomicBool::new(false),
            }? Error),
            GFP_KERNEL,
        )?;
        let group = reg.group.get();
        let root = self.subsys.subsys.get();
        // SAFETY: `group` is ours, pinned, and not yet visible to configfs; a zeroed group is
        // what `config_group_init_type_name` expects (it copies the name). The subsystem is
        // registered (it lives as long as `self`) and its root group outlives the child: the
        // registration holds `self`, which holds the subsystem.
        to_result(unsafe {
            ptr::write_bytes(group, 0, 1);
            bindings::config_group_init_type_name(group, name.as_char_ptr(), self.item_type.get());
            bindings::configfs_register_group(ptr::addr_of_mut!((*root).su_group), group)
        })
        .inspect_err(|_| {
            // SAFETY: not registered: drop the name's reference without unregistering.
            unsafe { bindings::config_item_put(ptr::addr_of_mut!((*group).cg_item)) };
        })?;
        // INVARIANT: registered above.
        reg.registered
            .store(true, core::sync::atomic::Ordering::Relaxed);
        Ok(reg)
    }

    /// # Safety
    ///
    /// `item` is the item of a registered [`GroupRegistration`] of this type.
    unsafe fn group<'a>(item: *mut bindings::config_item) -> &'a GroupRegistration<T, G> {
        // SAFETY: by the caller's contract, `item` is inside the `group` field of a
        // registration, which lives until after it is unregistered; configfs calls attribute
        // operations only before that.
        unsafe {
            let group = crate::container_of!(item, bindings::config_group, cg_item);
            &*crate::container_of!(group, GroupRegistration<T, G>, group)
        }
    }

    unsafe extern "C" fn show<const I: usize>(
        item: *mut bindings::config_item,
        page: *mut c_char,
    ) -> isize {
        // SAFETY: configfs calls attribute operations on registered groups of `item_type`
        // only, with a page-sized, writable buffer of its own.
        let (g, buf) = unsafe {
            (
                Self::group(item),
                core::slice::from_raw_parts_mut(page.cast::<u8>(), PAGE_SIZE),
            )
        };
        let mut out = Page { buf, len: 0 };
        match g.data.show(I, &mut out) {
            // At most PAGE_SIZE.
            Ok(()) => out.len as isize,
            Err(e) => e.to_errno() as isize,
        }
    }

    unsafe extern "C" fn store<const I: usize>(
        item: *mut bindings::config_item,
        page: *const c_char,
        count: usize,
    ) -> isize {
        // SAFETY: as in `show`; configfs passes `count` (at most a page) bytes it copied in.
        let (g, input) = unsafe {
            (
                Self::group(item),
                core::slice::from_raw_parts(page.cast::<u8>(), count),
            )
        };
        match g.data.store(I, input) {
            Ok(()) => count as isize,
            Err(e) => e.to_errno() as isize,
        }
    }
}

/// A directory the driver made ([`GroupType::register`]); dropping it removes the directory.
///
/// The removal waits for every `show` and `store` in progress, and none runs after it: reads and
/// writes of files still open fail, and no longer reach the group's data.
#[pin_data(PinnedDrop)]
pub struct GroupRegistration<T: Item, G: Group> {
    #[pin]
    group: Opaque<bindings::config_group>,
    data: Arc<G>,
    ty: Arc<GroupType<T, G>>,
    registered: core::sync::atomic::AtomicBool,
}

// SAFETY: the C group is only touched by configfs (under its own locks); the rest is `Send`.
unsafe impl<T: Item, G: Group> Send for GroupRegistration<T, G> {}
// SAFETY: as above; attribute callbacks get shared references to `data`, which is `Sync`.
unsafe impl<T: Item, G: Group> Sync for GroupRegistration<T, G> {}

impl<T: Item, G: Group> GroupRegistration<T, G> {
    /// The group's data.
    pub fn data(&self) -> &Arc<G> {
        &self.data
    }
}

#[pinned_drop]
impl<T: Item, G: Group> PinnedDrop for GroupRegistration<T, G> {
    fn drop(self: Pin<&mut Self>) {
        if !self.registered.load(core::sync::atomic::Ordering::Relaxed) {
            return;
        }
        let group = self.group.get();
        // SAFETY: registered (checked above) under the subsystem `ty` keeps alive.
        // `configfs_unregister_group` returns once no attribute operation runs or can start;
        // dropping the initial reference then frees nothing of ours (the type has no
        // `release`), only a long name configfs may have allocated.
        unsafe {
            bindings::configfs_unregister_group(group);
            bindings::config_item_put(ptr::addr_of_mut!((*group).cg_item));
        }
    }
}
