//! Tape storage reused across calls.
//!
//! A `_vjp` call that runs loops fills one tape per saved value and drops them
//! all when it returns. Fresh memory for those tapes costs a page fault per
//! page the first time it is written, and the system allocator hands large
//! blocks back to the kernel when they are freed, so every call paid those
//! faults again: 40% of the logsumexp workload's time (see
//! `docs/performance.md`). Tapes of scalars (floats, integers, `bool`) are
//! therefore taken from, and given back to, a pool kept by each thread, as
//! Tapenade keeps its stack between calls.
//!
//! The pool holds at most [`MAX_BUFFERS`] buffers and [`MAX_BYTES`] bytes per
//! element type; [`release_pool`] frees what the calling thread holds.
//!
//! Tapes of other values (the pullbacks of calls in loops, saved copies of
//! small arrays) have types the runtime cannot name: each is a closure or an
//! instance of a generic type. Their storage is kept by type too, in pools
//! found by [`TypeId`] ([`take_any`], [`give_any`]), with at most
//! [`MAX_BYTES`] for all of them together.

use std::any::{Any, TypeId};
use std::cell::RefCell;
use std::mem::size_of;
use std::thread::LocalKey;

/// The most buffers the pool keeps per element type and thread.
pub const MAX_BUFFERS: usize = 32;

/// The most bytes the pool keeps per element type and thread: 256 MiB.
pub const MAX_BYTES: usize = 256 << 20;

/// The buffers one thread keeps for tapes of one element type.
#[doc(hidden)]
#[derive(Debug)]
pub struct Pool<T> {
    free: Vec<Vec<T>>,
    bytes: usize,
}

impl<T> Pool<T> {
    /// An empty pool.
    pub const fn new() -> Self {
        Pool {
            free: Vec::new(),
            bytes: 0,
        }
    }

    /// A buffer with room for `capacity` values: the smallest kept one with
    /// that room, or a new one. For `capacity == 0` (a tape whose size is not
    /// known when it is made) the largest kept one.
    fn take(&mut self, capacity: usize) -> Vec<T> {
        let fits = self
            .free
            .iter()
            .enumerate()
            .filter(|(_, buffer)| buffer.capacity() >= capacity);
        let chosen = if capacity == 0 {
            fits.max_by_key(|(_, buffer)| buffer.capacity())
        } else {
            fits.min_by_key(|(_, buffer)| buffer.capacity())
        };
        match chosen.map(|(index, _)| index) {
            Some(index) => {
                let buffer = self.free.swap_remove(index);
                self.bytes -= bytes_of(&buffer);
                buffer
            }
            None => Vec::with_capacity(capacity),
        }
    }

    /// Keeps `buffer` for a later tape, emptied, unless it would take the
    /// pool over its limits, in which case the smallest buffers go first.
    fn give(&mut self, mut buffer: Vec<T>) {
        buffer.clear();
        let bytes = bytes_of(&buffer);
        if bytes == 0 || bytes > MAX_BYTES {
            return;
        }
        self.bytes += bytes;
        self.free.push(buffer);
        while self.free.len() > MAX_BUFFERS || self.bytes > MAX_BYTES {
            let smallest = (0..self.free.len())
                .min_by_key(|&index| self.free[index].capacity())
                .expect("the pool is over its limits, so it holds a buffer");
            self.bytes -= bytes_of(&self.free.swap_remove(smallest));
        }
    }

    /// How many buffers are kept.
    fn len(&self) -> usize {
        self.free.len()
    }

    fn clear(&mut self) {
        self.free.clear();
        self.bytes = 0;
    }
}

impl<T> Default for Pool<T> {
    fn default() -> Self {
        Self::new()
    }
}

fn bytes_of<T>(buffer: &Vec<T>) -> usize {
    buffer.capacity() * size_of::<T>()
}

/// An element type whose tapes reuse storage from the thread's pool.
///
/// Implemented for the primitive number types and `bool`: the values
/// `#[differentiate]` saves in loops. Tapes of other values (pullbacks of
/// calls, copies of buffers) allocate as usual.
pub trait Recycle: Sized + 'static {
    /// The calling thread's pool for this type.
    #[doc(hidden)]
    fn pool() -> &'static LocalKey<RefCell<Pool<Self>>>;
}

/// A buffer for a tape of `capacity` values, from the pool if it has one.
pub(crate) fn take<T: Recycle>(capacity: usize) -> Vec<T> {
    T::pool()
        .try_with(|pool| {
            pool.try_borrow_mut()
                .ok()
                .map(|mut pool| pool.take(capacity))
        })
        .ok()
        .flatten()
        .unwrap_or_else(|| Vec::with_capacity(capacity))
}

/// Gives a tape's buffer back to the pool (or frees it, while the thread exits).
pub(crate) fn give<T: Recycle>(buffer: Vec<T>) {
    let _ = T::pool().try_with(|pool| {
        if let Ok(mut pool) = pool.try_borrow_mut() {
            pool.give(buffer);
        }
    });
}

/// A [`Pool`] of some element type, as the pools by type hold it.
trait AnyPool {
    fn bytes(&self) -> usize;
    fn len(&self) -> usize;
    fn clear(&mut self);
    fn as_any(&mut self) -> &mut dyn Any;
}

impl<T: 'static> AnyPool for Pool<T> {
    fn bytes(&self) -> usize {
        self.bytes
    }
    fn len(&self) -> usize {
        self.free.len()
    }
    fn clear(&mut self) {
        Pool::clear(self);
    }
    fn as_any(&mut self) -> &mut dyn Any {
        self
    }
}

thread_local! {
    /// The calling thread's pools for element types with no pool of their
    /// own, one per type, looked up by a scan (a program has a few such
    /// types, one per call in a loop).
    static ANY_POOLS: RefCell<Vec<(TypeId, Box<dyn AnyPool>)>> = const { RefCell::new(Vec::new()) };
}

/// A buffer for a tape of `capacity` values of any type, from its pool if
/// that has one.
pub(crate) fn take_any<T: 'static>(capacity: usize) -> Vec<T> {
    ANY_POOLS
        .try_with(|pools| {
            let mut pools = pools.try_borrow_mut().ok()?;
            let (_, pool) = pools.iter_mut().find(|(id, _)| *id == TypeId::of::<T>())?;
            let pool = pool.as_any().downcast_mut::<Pool<T>>()?;
            Some(pool.take(capacity))
        })
        .ok()
        .flatten()
        .unwrap_or_else(|| Vec::with_capacity(capacity))
}

/// Gives a tape's buffer back to its type's pool, then keeps all these
/// pools within [`MAX_BYTES`] together, emptying the largest first.
pub(crate) fn give_any<T: 'static>(mut buffer: Vec<T>) {
    // The values are dropped before the pools are borrowed: a pullback may
    // hold tapes of its own, which come back here.
    buffer.clear();
    let _ = ANY_POOLS.try_with(|pools| {
        let Ok(mut pools) = pools.try_borrow_mut() else {
            return;
        };
        let id = TypeId::of::<T>();
        let position = match pools.iter().position(|(kept, _)| *kept == id) {
            Some(position) => position,
            None => {
                pools.push((id, Box::new(Pool::<T>::new())));
                pools.len() - 1
            }
        };
        if let Some(pool) = pools[position].1.as_any().downcast_mut::<Pool<T>>() {
            pool.give(buffer);
        }
        let mut total: usize = pools.iter().map(|(_, pool)| pool.bytes()).sum();
        while total > MAX_BYTES {
            let largest = pools
                .iter_mut()
                .max_by_key(|(_, pool)| pool.bytes())
                .expect("over the limit, so some pool holds bytes");
            total -= largest.1.bytes();
            largest.1.clear();
        }
    });
}

macro_rules! recycle {
    ($($ty:ty),* $(,)?) => {
        $(
            impl Recycle for $ty {
                fn pool() -> &'static LocalKey<RefCell<Pool<Self>>> {
                    thread_local! {
                        static POOL: RefCell<Pool<$ty>> = const { RefCell::new(Pool::new()) };
                    }
                    &POOL
                }
            }
        )*

        /// Frees the tape storage the calling thread keeps for later calls.
        ///
        /// ```
        /// use ad_runtime::differentiate;
        ///
        /// #[differentiate]
        /// fn product(x: &[f64]) -> f64 {
        ///     let mut p = 1.0;
        ///     for i in 0..x.len() {
        ///         p = p * x[i]; // the adjoint needs each `p`: a tape
        ///     }
        ///     p
        /// }
        ///
        /// let x = vec![1.5; 1000];
        /// let mut d_x = vec![0.0; 1000];
        /// product_vjp(&x, &mut d_x, 1.0);
        /// // The tape's storage is kept for the next call.
        /// assert_eq!(ad_runtime::tape::pooled_buffers(), 1);
        /// ad_runtime::tape::release_pool();
        /// assert_eq!(ad_runtime::tape::pooled_buffers(), 0);
        /// ```
        pub fn release_pool() {
            $(
                let _ = <$ty as Recycle>::pool().try_with(|pool| pool.borrow_mut().clear());
            )*
            let _ = ANY_POOLS.try_with(|pools| pools.borrow_mut().clear());
        }

        /// How many tape buffers the calling thread keeps for later calls.
        ///
        /// ```
        /// use ad_runtime::tape::{Tape, pooled_buffers, release_pool};
        ///
        /// release_pool();
        /// drop(Tape::<f64>::with_capacity(10)); // a dropped tape gives its storage to the pool
        /// assert_eq!(pooled_buffers(), 1);
        /// release_pool();
        /// assert_eq!(pooled_buffers(), 0);
        /// ```
        pub fn pooled_buffers() -> usize {
            0 $(
                + <$ty as Recycle>::pool()
                    .try_with(|pool| pool.borrow().len())
                    .unwrap_or(0)
            )*
                + ANY_POOLS
                    .try_with(|pools| pools.borrow().iter().map(|(_, pool)| pool.len()).sum::<usize>())
                    .unwrap_or(0)
        }
    };
}

recycle!(
    f32, f64, i8, i16, i32, i64, i128, isize, u8, u16, u32, u64, u128, usize, bool
);

#[cfg(test)]
mod tests {
    use super::{MAX_BUFFERS, MAX_BYTES, Pool, give_any, take_any};

    #[test]
    fn pools_by_type_hand_back_storage_and_share_one_limit() {
        // A closure type, as the pullbacks generated code saves.
        let captured = 2.0;
        let pullback = move |d: f64| d * captured;
        let mut buffer = take_any(100);
        buffer.push(pullback);
        assert_eq!(buffer[0](1.5), 3.0);
        give_any(buffer);
        let again: Vec<_> = take_any::<[f64; 2]>(10);
        assert_eq!(again.capacity(), 10, "another type has a pool of its own");
        let mut same = take_any(50);
        same.push(pullback);
        assert!(same.capacity() >= 100, "the closure's storage came back");
        // Two types over the shared limit together: the larger is emptied.
        // (Capacity is reserved, not touched: no memory is written.)
        let per_type = MAX_BYTES / 16 * 10;
        give_any(Vec::<[u64; 2]>::with_capacity(per_type / 16));
        give_any(Vec::<u64>::with_capacity(per_type / 8 + 1));
        assert_eq!(
            take_any::<u64>(1).capacity(),
            1,
            "the larger one was dropped"
        );
        assert!(take_any::<[u64; 2]>(1).capacity() >= per_type / 16);
    }

    #[test]
    fn takes_the_smallest_buffer_that_fits() {
        let mut pool = Pool::<f64>::new();
        pool.give(Vec::with_capacity(100));
        pool.give(Vec::with_capacity(10));
        pool.give(Vec::with_capacity(1000));
        assert_eq!(pool.take(50).capacity(), 100);
        assert_eq!(pool.take(5).capacity(), 10);
        // Nothing kept fits: a new buffer, and the kept one stays.
        assert_eq!(pool.take(5000).capacity(), 5000);
        assert_eq!(pool.len(), 1);
        // An unknown size takes the largest.
        pool.give(Vec::with_capacity(20));
        assert_eq!(pool.take(0).capacity(), 1000);
    }

    #[test]
    fn given_buffers_come_back_empty() {
        let mut pool = Pool::<f64>::new();
        pool.give(vec![1.0, 2.0, 3.0]);
        let buffer = pool.take(2);
        assert!(buffer.is_empty() && buffer.capacity() >= 3);
    }

    #[test]
    fn keeps_within_its_limits_dropping_the_smallest_first() {
        let mut pool = Pool::<u8>::new();
        for capacity in 1..=MAX_BUFFERS + 5 {
            pool.give(Vec::with_capacity(capacity));
        }
        assert_eq!(pool.len(), MAX_BUFFERS);
        assert_eq!(pool.take(1).capacity(), 6, "the five smallest were dropped");

        let mut pool = Pool::<u8>::new();
        pool.give(Vec::with_capacity(MAX_BYTES + 1));
        assert_eq!(pool.len(), 0, "a buffer over the byte limit is not kept");
        pool.give(Vec::with_capacity(MAX_BYTES / 2));
        pool.give(Vec::with_capacity(MAX_BYTES / 2 + 1));
        assert_eq!(pool.len(), 1);
        assert_eq!(pool.take(1).capacity(), MAX_BYTES / 2 + 1);
    }
}
