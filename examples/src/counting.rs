//! A global allocator that counts: bytes in use, their peak, and
//! allocations, for the examples that measure memory (`memory`, `rollout`,
//! `checkpointing`). Each declares it as its own:
//!
//! ```
//! use ad_examples::counting::{Counting, measure};
//!
//! #[global_allocator]
//! static ALLOCATOR: Counting = Counting;
//!
//! let (v, peak, allocations) = measure(|| vec![0_u8; 1000]);
//! assert_eq!((v.len(), allocations), (1000, 1));
//! assert!(peak >= 1000);
//! ```

// The allocator needs `unsafe impl GlobalAlloc`; see its SAFETY comment.
#![allow(unsafe_code)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

/// The system allocator, counting bytes in use, their peak and allocations.
pub struct Counting;

static CURRENT: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);
static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);

fn grow(bytes: usize) {
    let now = CURRENT.fetch_add(bytes, Ordering::Relaxed) + bytes;
    PEAK.fetch_max(now, Ordering::Relaxed);
    ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
}

// SAFETY: every method forwards to `System` with the same arguments, so this
// implementation upholds the `GlobalAlloc` contract; the only addition is
// counting in atomics, which neither allocates nor touches the memory.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        grow(layout.size());
        // SAFETY: forwarded unchanged; the caller upholds `alloc`'s contract.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        grow(layout.size());
        // SAFETY: as for `alloc`.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        CURRENT.fetch_sub(layout.size(), Ordering::Relaxed);
        // SAFETY: forwarded unchanged; `ptr` came from this allocator.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        CURRENT.fetch_sub(layout.size(), Ordering::Relaxed);
        grow(new_size);
        // SAFETY: forwarded unchanged; the caller upholds `realloc`'s contract.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

/// Runs `f` once; returns its value, the peak bytes it added over what was
/// in use before, and the number of allocations it made. Meaningful only in
/// a program whose global allocator is [`Counting`].
///
/// The thread's tape pool is emptied first, so the call allocates its tapes
/// as a first call does; a later call would reuse them and allocate less.
pub fn measure<T>(f: impl FnOnce() -> T) -> (T, usize, usize) {
    ad_runtime::tape::release_pool();
    let before = CURRENT.load(Ordering::Relaxed);
    PEAK.store(before, Ordering::Relaxed);
    let count = ALLOCATIONS.load(Ordering::Relaxed);
    let value = f();
    let peak = PEAK.load(Ordering::Relaxed).saturating_sub(before);
    (value, peak, ALLOCATIONS.load(Ordering::Relaxed) - count)
}

/// Bytes in a readable unit.
#[must_use]
pub fn human(bytes: usize) -> String {
    let b = bytes as f64;
    if bytes < 1 << 10 {
        format!("{bytes} B")
    } else if bytes < 1 << 20 {
        format!("{:.1} KiB", b / 1024.0)
    } else if bytes < 1 << 30 {
        format!("{:.1} MiB", b / (1024.0 * 1024.0))
    } else {
        format!("{:.2} GiB", b / (1024.0 * 1024.0 * 1024.0))
    }
}
