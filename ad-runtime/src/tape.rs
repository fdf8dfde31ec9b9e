//! The tape: values a loop's primal pass saves for its adjoint.
//!
//! Generated code keeps one tape per saved value: every iteration of the primal
//! loop pushes the value, and every iteration of the reversed loop pops it, so
//! pushes and pops pair up in reverse order however loops and branches nest.
//! A loop whose adjoint needs nothing from its iterations has no tape at all.

pub use crate::pool::{MAX_BUFFERS, MAX_BYTES, Recycle, pooled_buffers, release_pool};

use crate::pool;

/// A stack of values saved by the primal pass, read back by the adjoint pass.
///
/// A tape of scalars ([`Recycle`]) takes its storage from the calling thread's
/// pool and gives it back when dropped, so a `_vjp` called again reuses the
/// memory of the last call (see [`release_pool`]).
///
/// ```
/// use ad_runtime::tape::Tape;
///
/// // What a loop's primal pass saves, its adjoint pass reads back, last first.
/// let mut tape = Tape::with_capacity(3);
/// for x in [1.0, 2.0, 3.0] {
///     tape.push(x);
/// }
/// assert_eq!(tape.len(), 3);
/// assert_eq!([tape.pop(), tape.pop(), tape.pop()], [3.0, 2.0, 1.0]);
/// assert!(tape.is_empty());
/// ```
#[derive(Clone, Debug, Default)]
pub struct Tape<T> {
    values: Vec<T>,
    /// Where the storage goes when the tape is dropped: the thread's pool for
    /// element types that have one.
    recycle: Option<fn(Vec<T>)>,
}

impl<T: Recycle> Tape<T> {
    /// An empty tape, with the largest buffer the pool holds (its size is not
    /// known when it is made: a loop nested in another [`Tape::reserve`]s
    /// before it runs).
    ///
    /// ```
    /// let mut tape = ad_runtime::tape::Tape::new();
    /// tape.push(1.5_f64);
    /// assert_eq!(tape.pop(), 1.5);
    /// ```
    #[inline]
    pub fn new() -> Self {
        Self::with_capacity(0)
    }

    /// An empty tape with room for `capacity` values (the trip count of a loop
    /// known before it runs), so that pushing never reallocates; from the pool
    /// if it holds a buffer that large.
    ///
    /// ```
    /// let tape = ad_runtime::tape::Tape::<f64>::with_capacity(100);
    /// assert!(tape.capacity() >= 100);
    /// ```
    #[inline]
    pub fn with_capacity(capacity: usize) -> Self {
        Tape {
            values: pool::take(capacity),
            recycle: Some(pool::give::<T>),
        }
    }
}

impl<T: 'static> Tape<T> {
    /// An empty tape of values of a type with no pool of its own (the
    /// pullbacks of calls, saved copies of small arrays), with room for
    /// `capacity` of them: its storage comes from, and goes back to, the
    /// calling thread's pool for its type, as for [`Tape::with_capacity`].
    ///
    /// ```
    /// use ad_runtime::tape::{Tape, pooled_buffers, release_pool};
    ///
    /// release_pool();
    /// let mut tape = Tape::recycled(2);
    /// tape.push([1.0, 2.0]);
    /// assert_eq!(tape.pop(), [1.0, 2.0]);
    /// drop(tape);
    /// assert_eq!(pooled_buffers(), 1);
    /// let again = Tape::<[f64; 2]>::recycled(2);
    /// assert_eq!(pooled_buffers(), 0, "taken again");
    /// assert!(again.capacity() >= 2);
    /// ```
    #[inline]
    pub fn recycled(capacity: usize) -> Self {
        Tape {
            values: pool::take_any(capacity),
            recycle: Some(pool::give_any::<T>),
        }
    }
}

impl<T> Tape<T> {
    /// Saves a value.
    #[inline]
    pub fn push(&mut self, value: T) {
        self.values.push(value);
    }

    /// Makes room for `additional` more values: a loop nested in another
    /// calls it before it runs, then pushes with [`Tape::push_reserved`].
    #[inline]
    pub fn reserve(&mut self, additional: usize) {
        self.values.reserve(additional);
    }

    /// Saves a value for which room was made ([`Tape::with_capacity`],
    /// [`Tape::reserve`]). The tape never grows here, so the loop around it
    /// has no call that may return: the compiler keeps the loop's values in
    /// registers.
    ///
    /// # Panics
    ///
    /// If there is no room, which is a bug in `#[differentiate]`.
    ///
    /// ```
    /// let mut tape = ad_runtime::tape::Tape::new();
    /// tape.reserve(2);
    /// tape.push_reserved(1.0);
    /// tape.push_reserved(2.0);
    /// assert_eq!(tape.pop(), 2.0);
    /// ```
    #[inline]
    #[track_caller]
    pub fn push_reserved(&mut self, value: T) {
        assert!(
            self.values.len() < self.values.capacity(),
            "ad-runtime: no room reserved on the tape; this is a bug in #[differentiate], please report it"
        );
        self.values.push(value);
    }

    /// Takes the value saved last.
    ///
    /// # Panics
    ///
    /// Panics if the tape is empty: generated code pops exactly what it pushed,
    /// so this is a bug in `#[differentiate]`.
    #[inline]
    #[track_caller]
    pub fn pop(&mut self) -> T {
        self.values.pop().expect(
            "ad-runtime: tape underflow; this is a bug in #[differentiate], please report it",
        )
    }

    /// Reads the values back, last first, without taking them: what a
    /// pullback that may run several times (one per row of a Jacobian) uses
    /// in place of [`Tape::pop`].
    ///
    /// ```
    /// let mut tape = ad_runtime::tape::Tape::new();
    /// tape.push(1.0);
    /// tape.push(2.0);
    /// // Read twice, as two pullbacks would; the tape keeps its values.
    /// for _ in 0..2 {
    ///     let mut reader = tape.reader();
    ///     assert_eq!((*reader.pop(), *reader.pop()), (2.0, 1.0));
    /// }
    /// assert_eq!(tape.len(), 2);
    /// ```
    #[inline]
    pub fn reader(&self) -> TapeReader<'_, T> {
        TapeReader {
            values: &self.values,
        }
    }

    /// How many values are saved.
    #[inline]
    pub fn len(&self) -> usize {
        self.values.len()
    }

    /// Whether no value is saved.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// How many values fit without reallocating.
    #[inline]
    pub fn capacity(&self) -> usize {
        self.values.capacity()
    }
}

impl<T> Drop for Tape<T> {
    fn drop(&mut self) {
        if let Some(recycle) = self.recycle {
            recycle(std::mem::take(&mut self.values));
        }
    }
}

/// Reads a [`Tape`] back to front; see [`Tape::reader`].
#[derive(Debug)]
pub struct TapeReader<'a, T> {
    values: &'a [T],
}

impl<'a, T> TapeReader<'a, T> {
    /// The last value not read yet.
    #[inline]
    #[track_caller]
    pub fn pop(&mut self) -> &'a T {
        let (last, rest) = self.values.split_last().expect(
            "ad-runtime: tape underflow; this is a bug in #[differentiate], please report it",
        );
        self.values = rest;
        last
    }
}

#[cfg(test)]
mod tests {
    use super::Tape;

    #[test]
    fn reserved_pushes_fit_and_an_unreserved_one_panics() {
        let mut tape = Tape::new();
        tape.reserve(2);
        tape.push_reserved(1.0);
        tape.push_reserved(2.0);
        let capacity = tape.capacity();
        for value in 2..capacity {
            tape.push_reserved(value as f64);
        }
        assert_eq!(tape.len(), capacity);
        let result = std::panic::catch_unwind(move || tape.push_reserved(0.0));
        assert!(result.is_err(), "a push past the reserved room must panic");
    }

    #[test]
    fn a_reader_reads_back_to_front_and_leaves_the_tape_as_it_was() {
        let mut tape = Tape::new();
        for value in [1.0, 2.0, 3.0] {
            tape.push(value);
        }
        for _ in 0..2 {
            let mut reader = tape.reader();
            assert_eq!(
                [*reader.pop(), *reader.pop(), *reader.pop()],
                [3.0, 2.0, 1.0]
            );
        }
        assert_eq!(tape.len(), 3);
        let result = std::panic::catch_unwind(|| *Tape::<f64>::new().reader().pop());
        assert!(result.is_err(), "reading past the start must panic");
    }

    #[test]
    fn pops_in_reverse_order_of_pushes() {
        let mut tape = Tape::with_capacity(3);
        for value in [1.0, 2.0, 3.0] {
            tape.push(value);
        }
        assert!(tape.capacity() >= 3);
        assert_eq!([tape.pop(), tape.pop(), tape.pop()], [3.0, 2.0, 1.0]);
        assert!(tape.is_empty());
    }

    #[test]
    fn popping_an_empty_tape_panics_with_a_bug_report() {
        let payload =
            std::panic::catch_unwind(|| Tape::<f64>::new().pop()).expect_err("empty tape");
        let message = payload
            .downcast_ref::<String>()
            .map(String::as_str)
            .or(payload.downcast_ref::<&str>().copied());
        assert!(
            message.is_some_and(|text| text.contains("tape underflow")),
            "{message:?}"
        );
    }
}
