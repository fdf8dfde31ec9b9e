//! Binomial checkpointing: the schedule that reverses a loop of `n` steps
//! keeping at most `k` of its states, recomputing the rest.
//!
//! Reverse mode needs a loop's states in reverse order. A loop marked
//! `#[checkpoint(snapshots = k)]` inside a `#[differentiate]` function keeps
//! no tape of its iterations: its primal pass saves the loop state (the
//! floats it carries and the buffers it changes) at a few steps, and its
//! adjoint pass follows a [`Checkpoints`] schedule of steps: restore the
//! latest saved state, run steps forward again (saving some of them), and
//! reverse one step (run it once more keeping that step's intermediates,
//! then its adjoint).
//!
//! The schedule is Griewank and Walther's *binomial* one (`revolve`,
//! ACM TOMS 26(1), 2000): with `k` saved states a loop of up to
//! `C(k + t, k)` steps is reversed running each step forward at most `t`
//! times, and the total number of forward steps is the least any schedule
//! with `k` states can achieve ([`optimal_steps`] computes that bound; the
//! tests check the schedule meets it).
//!
//! ```
//! use ad_runtime::checkpoint::{Checkpoints, Step};
//!
//! // A loop of 10 steps, `state = state * 1.5 + 1.0`, reversed with 3 saved states.
//! let mut schedule = Checkpoints::new(10, 3);
//! let mut state = 2.0;
//! schedule.store(state); // the state before step 0
//! for _ in 0..10 {
//!     if schedule.step() {
//!         schedule.store(state);
//!     }
//!     state = state * 1.5 + 1.0;
//! }
//! // The adjoint of `state` flows back through every step, last first.
//! let (mut work, mut reversed) = (*schedule.top(), Vec::new());
//! while let Some(step) = schedule.next_step() {
//!     match step {
//!         Step::Restore => work = *schedule.top(),
//!         Step::Store => schedule.store(work),
//!         Step::Advance(_) => work = work * 1.5 + 1.0,
//!         Step::Reverse(k) => {
//!             reversed.push(k);
//!             work = work * 1.5 + 1.0;
//!         }
//!     }
//! }
//! assert_eq!(reversed, (0..10).rev().collect::<Vec<_>>());
//! assert!(schedule.max_stored() <= 3);
//! ```

/// What the adjoint pass of a checkpointed loop does next (see
/// [`Checkpoints::next_step`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// Copy the latest saved state ([`Checkpoints::top`]) into the loop's variables.
    Restore,
    /// Save the loop's variables ([`Checkpoints::store`]).
    Store,
    /// Run step `k` of the loop (counting from 0 in the loop's order), keeping nothing.
    Advance(usize),
    /// Run step `k` keeping its intermediates, then its adjoint.
    Reverse(usize),
}

/// Work left in the adjoint pass, kept on a stack (the schedule's recursion
/// made explicit: its depth is at most `2k + 3` frames).
#[derive(Clone, Copy, Debug)]
enum Frame {
    /// Reverse steps `lo..hi` with `slots` saved states, the one at `lo` on top.
    Reverse { lo: usize, hi: usize, slots: usize },
    /// Run steps forward until the state is that before step `to`.
    AdvanceTo(usize),
    /// Save the state (before step `at`).
    Store(usize),
    /// Drop the latest saved state.
    Drop,
    /// Reverse step `k`, whose state is the current one.
    ReverseStep(usize),
}

/// The binomial checkpointing schedule of one loop, and its saved states.
///
/// Generated code makes one before a loop marked `#[checkpoint]`: the primal
/// pass calls [`store`](Self::store) with the state before the loop and
/// [`step`](Self::step) at the start of every iteration (storing the state if
/// it says so); the adjoint pass then runs the [`Step`]s [`next_step`](Self::next_step)
/// gives until there are none.
#[derive(Debug)]
pub struct Checkpoints<S> {
    trips: usize,
    snapshots: usize,
    /// Saved states, by the step they come before; steps increase.
    saved: Vec<(usize, S)>,
    /// The steps the primal pass saves the state before (the first descent
    /// of the recursion), and the next of them.
    plan: Vec<usize>,
    next_planned: usize,
    /// The primal pass's step count so far.
    primal_step: usize,
    /// The adjoint pass's work, and the step the current state comes
    /// before (`None` once a step was reversed or before a restore).
    frames: Vec<Frame>,
    position: Option<usize>,
    /// What the schedule did: for tests and reports.
    advances: usize,
    max_stored: usize,
    /// Whether the adjoint pass has begun.
    started: bool,
    /// For a loop whose trip count is not known when it starts: the
    /// spacing of the states the primal pass saves, and how many it keeps.
    online: Option<Online>,
}

/// The online schedule's primal pass: the state is saved every `spacing`
/// steps; when more than `limit` are saved, every other one is dropped and
/// the spacing doubles. The other half of the states is left for reversing
/// each stretch between two saved states by the binomial schedule.
#[derive(Clone, Copy, Debug)]
struct Online {
    spacing: usize,
    limit: usize,
}

impl<S> Checkpoints<S> {
    /// The schedule of a loop of `trips` steps keeping at most `snapshots`
    /// states (at least one: the state before the loop).
    #[must_use]
    pub fn new(trips: usize, snapshots: usize) -> Self {
        let snapshots = snapshots.max(1);
        // Room for every state it will save, and no more.
        let mut schedule = Self::empty(trips, snapshots, snapshots.min(trips + 1), None);
        schedule.make_plan();
        schedule
    }

    /// A schedule that has done nothing yet.
    fn empty(trips: usize, snapshots: usize, room: usize, online: Option<Online>) -> Self {
        Checkpoints {
            trips,
            snapshots,
            saved: Vec::with_capacity(room),
            plan: Vec::new(),
            next_planned: 0,
            primal_step: 0,
            frames: Vec::new(),
            position: None,
            advances: 0,
            max_stored: 0,
            started: false,
            online,
        }
    }

    /// The schedule of a loop of `trips` steps keeping as many states as
    /// `bytes` hold, each `state_bytes` long (at least one).
    #[must_use]
    pub fn with_memory(trips: usize, bytes: usize, state_bytes: usize) -> Self {
        Self::new(trips, bytes / state_bytes.max(1))
    }

    /// The schedule of a loop whose trip count is not known when it starts
    /// (a `while` or a `loop`), keeping at most `snapshots` states (at least
    /// two). The primal pass keeps at most half of them, evenly spaced (the
    /// spacing doubles when they are too many); once it ends, each stretch
    /// between two of them is reversed by the binomial schedule with the
    /// states left.
    #[must_use]
    pub fn online(snapshots: usize) -> Self {
        let snapshots = snapshots.max(2);
        let online = Online {
            spacing: 1,
            limit: snapshots / 2,
        };
        Self::empty(0, snapshots, snapshots, Some(online))
    }

    /// [`Checkpoints::online`] keeping as many states as `bytes` hold, each
    /// `state_bytes` long.
    #[must_use]
    pub fn online_with_memory(bytes: usize, state_bytes: usize) -> Self {
        Self::online(bytes / state_bytes.max(1))
    }

    /// The online schedule once the primal pass has ended: each stretch
    /// between saved states, last first, reversed with the states left.
    fn plan_stretches(&mut self) {
        self.trips = self.primal_step;
        let starts: Vec<usize> = self.saved.iter().map(|saved| saved.0).collect();
        self.reverse_stretches(&starts);
    }

    /// The adjoint pass's work once states before each of `starts` (from
    /// step 0, increasing) are saved: the stretch from each to the next,
    /// the last first, each with the states the earlier ones leave, and
    /// each stretch's state dropped before the one before it is reversed.
    /// Every step has run once, in the primal pass.
    fn reverse_stretches(&mut self, starts: &[usize]) {
        self.advances = self.trips;
        self.frames.clear();
        for (j, &lo) in starts.iter().enumerate() {
            if j > 0 {
                self.frames.push(Frame::Drop);
            }
            let hi = starts.get(j + 1).copied().unwrap_or(self.trips);
            self.frames.push(Frame::Reverse {
                lo,
                hi,
                slots: self.snapshots - j,
            });
        }
    }

    /// How many states the schedule may keep.
    #[must_use]
    pub fn snapshots(&self) -> usize {
        self.snapshots
    }

    /// The first descent of the recursion: the steps the primal pass saves
    /// the state before, and the work left for the adjoint pass.
    fn make_plan(&mut self) {
        let (mut lo, hi, mut slots) = (0, self.trips, self.snapshots);
        let mut plan = vec![0];
        while hi - lo > 1 && slots > 1 {
            lo += split(hi - lo, slots);
            plan.push(lo);
            slots -= 1;
        }
        self.reverse_stretches(&plan);
        self.plan = plan;
        self.next_planned = 1;
    }

    /// Called by the primal pass at the start of each iteration: whether to
    /// [`store`](Self::store) the state before it runs.
    #[inline]
    pub fn step(&mut self) -> bool {
        let k = self.primal_step;
        self.primal_step += 1;
        if let Some(online) = self.online {
            return k > 0 && k.is_multiple_of(online.spacing);
        }
        if self.plan.get(self.next_planned) == Some(&k) {
            self.next_planned += 1;
            true
        } else {
            false
        }
    }

    /// Saves `state`: the state before the loop, before a planned step of the
    /// primal pass, or on [`Step::Store`].
    pub fn store(&mut self, state: S) {
        let at = if self.started {
            self.position.expect("a state is stored where it is known")
        } else {
            // Before the loop, or at the step `step` just counted.
            self.primal_step.saturating_sub(1)
        };
        self.saved.push((at, state));
        self.max_stored = self.max_stored.max(self.saved.len());
        // Online, too many states: keep every other one, twice as far apart.
        if let Some(online) = &mut self.online
            && !self.started
            && self.saved.len() > online.limit.max(1)
        {
            online.spacing *= 2;
            let spacing = online.spacing;
            self.saved.retain(|saved| saved.0.is_multiple_of(spacing));
        }
    }

    /// The latest saved state.
    ///
    /// # Panics
    ///
    /// If no state was saved.
    #[must_use]
    pub fn top(&self) -> &S {
        &self.saved.last().expect("a saved state").1
    }

    /// The next step of the adjoint pass, or `None` when every step of the
    /// loop is reversed.
    pub fn next_step(&mut self) -> Option<Step> {
        if !self.started && self.online.is_some() {
            self.plan_stretches();
        }
        self.started = true;
        loop {
            match self.frames.pop()? {
                Frame::Reverse { lo, hi, slots } => {
                    if hi <= lo {
                        continue;
                    }
                    if hi - lo == 1 {
                        self.frames.push(Frame::ReverseStep(lo));
                    } else if slots <= 1 {
                        // One state: run forward from it to each step in turn.
                        self.frames.push(Frame::Reverse {
                            lo,
                            hi: hi - 1,
                            slots,
                        });
                        self.frames.push(Frame::ReverseStep(hi - 1));
                        self.frames.push(Frame::AdvanceTo(hi - 1));
                    } else {
                        let mid = lo + split(hi - lo, slots);
                        self.frames.push(Frame::Reverse { lo, hi: mid, slots });
                        self.frames.push(Frame::Drop);
                        self.frames.push(Frame::Reverse {
                            lo: mid,
                            hi,
                            slots: slots - 1,
                        });
                        self.frames.push(Frame::Store(mid));
                        self.frames.push(Frame::AdvanceTo(mid));
                    }
                    if self.position != Some(lo) {
                        debug_assert_eq!(self.saved.last().map(|saved| saved.0), Some(lo));
                        self.position = Some(lo);
                        return Some(Step::Restore);
                    }
                }
                Frame::AdvanceTo(to) => {
                    let k = self.position.expect("advancing from a known state");
                    if k < to {
                        self.position = Some(k + 1);
                        self.advances += 1;
                        if k + 1 < to {
                            self.frames.push(Frame::AdvanceTo(to));
                        }
                        return Some(Step::Advance(k));
                    }
                }
                Frame::Store(at) => {
                    debug_assert_eq!(self.position, Some(at));
                    return Some(Step::Store);
                }
                Frame::Drop => {
                    self.saved.pop();
                }
                Frame::ReverseStep(k) => {
                    self.position = None;
                    self.advances += 1;
                    return Some(Step::Reverse(k));
                }
            }
        }
    }

    /// How many steps ran forward so far, counting the primal pass and the
    /// reversed steps (each runs forward once more, keeping its values).
    #[must_use]
    pub fn forward_steps(&self) -> usize {
        self.advances
    }

    /// The most states saved at once so far.
    #[must_use]
    pub fn max_stored(&self) -> usize {
        self.max_stored
    }
}

/// Generated code's helpers for checkpointed loops.
#[doc(hidden)]
pub mod emitted {
    /// The number of steps of a loop over `range`.
    #[inline]
    pub fn trips<I: Iterator>(range: &I) -> usize {
        range.size_hint().0
    }

    /// The index of step `k` of a loop over `range`.
    #[inline]
    pub fn nth<I: Iterator>(mut range: I, k: usize) -> I::Item {
        range.nth(k).expect("a step of the loop")
    }

    /// The number of bytes of one loop state: its scalars, and its buffers
    /// (as slices).
    #[inline]
    pub fn state_bytes<S>(scalars: &S, buffers: &[usize]) -> usize {
        core::mem::size_of_val(scalars) + buffers.iter().sum::<usize>()
    }

    /// Puts a saved buffer back: `copy_from_slice` for a slice or an
    /// array, and for a `Vec` also its length.
    pub trait RestoreFrom<T> {
        /// Makes `self` equal to `saved`.
        fn restore_from(&mut self, saved: &[T]);
    }

    impl<T: Copy> RestoreFrom<T> for Vec<T> {
        #[inline]
        fn restore_from(&mut self, saved: &[T]) {
            self.clear();
            self.extend_from_slice(saved);
        }
    }

    impl<T: Copy> RestoreFrom<T> for [T] {
        #[inline]
        fn restore_from(&mut self, saved: &[T]) {
            self.copy_from_slice(saved);
        }
    }
}

/// Where the binomial schedule saves the state when reversing `len` steps
/// with `slots` states (the one before the first step among them, `slots >=
/// 2`, `len >= 2`): the number of steps after that first state.
///
/// This is `revolve`'s choice (Griewank and Walther, Algorithm 799), with
/// one change: when every step can have a state of its own (`len <= slots +
/// 1`) the next step is saved, which `revolve` leaves to its caller. The
/// tests compare the cost of every choice with the optimum found by
/// exhaustive search.
fn split(len: usize, slots: usize) -> usize {
    debug_assert!(len >= 2 && slots >= 2);
    if len <= slots + 1 {
        return 1;
    }
    let (reps, range) = repetitions(len, slots);
    let bino1 = range * reps / (slots + reps);
    let bino2 = if slots > 1 {
        bino1 * slots / (slots + reps - 1)
    } else {
        1
    };
    let bino3 = match slots {
        1 => 0,
        2 => 1,
        _ => bino2 * (slots - 1) / (slots + reps - 2),
    };
    let bino4 = bino2 * (reps - 1) / slots;
    let bino5 = match (slots, reps) {
        (0..=2, _) => 0,
        (_, 1) => 1,
        _ => bino3 * (slots - 2) / reps,
    };
    let mid = if len <= bino1 + bino3 {
        bino4
    } else if len >= range - bino5 {
        bino1
    } else {
        len - bino2 - bino3
    };
    mid.clamp(1, len - 1)
}

/// The fewest repetitions `t` with `C(slots + t, t) >= len` (each step runs
/// forward at most `t` more times), and that binomial.
fn repetitions(len: usize, slots: usize) -> (usize, usize) {
    let (mut reps, mut range) = (0_usize, 1_usize);
    while range < len {
        reps += 1;
        range = range * (reps + slots) / reps;
    }
    (reps, range)
}

/// The fewest steps any schedule runs forward to reverse `len` steps
/// keeping at most `slots` states, counting each reversed step once (it runs
/// forward again to keep its values) and not the primal pass: exhaustive
/// search, for tests of the schedule (`O(len² · slots)`).
#[must_use]
pub fn optimal_steps(len: usize, slots: usize) -> usize {
    let slots = slots.max(1);
    // cost[s][l]: reversing `l` steps with `s` states, the first restored.
    let mut cost = vec![vec![0_usize; len + 1]; slots + 1];
    for s in 1..=slots {
        for l in 1..=len {
            cost[s][l] = if l == 1 {
                1
            } else if s == 1 {
                l * (l + 1) / 2
            } else {
                (1..l)
                    .map(|mid| mid + cost[s - 1][l - mid] + cost[s][mid])
                    .min()
                    .expect("l >= 2")
            };
        }
    }
    cost[slots][len]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The cost of the schedule's own choices, by the same recursion.
    fn schedule_cost(len: usize, slots: usize) -> usize {
        match (len, slots) {
            (0, _) => 0,
            (1, _) => 1,
            (_, 1) => len * (len + 1) / 2,
            _ => {
                let mid = split(len, slots);
                mid + schedule_cost(len - mid, slots - 1) + schedule_cost(mid, slots)
            }
        }
    }

    #[test]
    fn the_split_is_optimal() {
        for slots in 1..10 {
            let optimal: Vec<usize> = (0..150).map(|len| optimal_steps(len, slots)).collect();
            for (len, &best) in optimal.iter().enumerate() {
                assert_eq!(schedule_cost(len, slots), best, "len {len}, slots {slots}");
            }
        }
    }

    /// Runs a schedule of `trips` steps on a counter state, checking that
    /// every restore finds the state it should and every step is reversed
    /// once, in reverse order.
    fn run(trips: usize, snapshots: usize) -> Checkpoints<usize> {
        run_with(Checkpoints::new(trips, snapshots), trips, snapshots.max(1))
    }

    /// Runs `schedule` on a loop of `trips` steps whose state before step
    /// `k` is `k`, keeping at most `most` states.
    fn run_with(mut schedule: Checkpoints<usize>, trips: usize, most: usize) -> Checkpoints<usize> {
        schedule.store(0);
        for k in 0..trips {
            if schedule.step() {
                schedule.store(k);
            }
            assert!(schedule.saved.len() <= most);
        }
        let (mut work, mut reversed) = (usize::MAX, Vec::new());
        while let Some(step) = schedule.next_step() {
            match step {
                Step::Restore => work = *schedule.top(),
                Step::Store => schedule.store(work),
                Step::Advance(k) => {
                    assert_eq!(work, k);
                    work += 1;
                }
                Step::Reverse(k) => {
                    assert_eq!(work, k);
                    reversed.push(k);
                    work = usize::MAX;
                }
            }
            assert!(schedule.saved.len() <= most);
        }
        assert_eq!(reversed, (0..trips).rev().collect::<Vec<_>>());
        assert!(
            schedule.saved.len() <= 1,
            "every state but the first is dropped"
        );
        schedule
    }

    #[test]
    fn every_step_is_reversed_from_the_right_state() {
        for trips in 0..60 {
            for snapshots in 0..8 {
                run(trips, snapshots);
            }
        }
    }

    #[test]
    fn the_steps_run_again_meet_the_binomial_bound() {
        // The primal pass runs every step once; what the first descent of
        // the recursion would advance it did already.
        for trips in 1..120 {
            for snapshots in 1..7 {
                let schedule = run(trips, snapshots);
                let first_descent = *schedule.plan.last().expect("a plan");
                assert_eq!(
                    schedule.forward_steps(),
                    trips + optimal_steps(trips, snapshots) - first_descent,
                    "trips {trips}, snapshots {snapshots}"
                );
            }
        }
    }

    #[test]
    fn a_long_loop_keeps_few_states() {
        let (trips, snapshots) = (100_000, 20);
        let schedule = run(trips, snapshots);
        assert_eq!(schedule.max_stored(), snapshots);
        // The fewest repetitions t with C(20 + t, t) >= 10^5 is 6: no step
        // runs forward more than t + 1 times.
        let (reps, _) = repetitions(trips, snapshots);
        assert_eq!(reps, 6);
        assert!(schedule.forward_steps() <= trips * (reps + 1));
    }

    /// [`run`] for the online schedule: the trip count is not told, and
    /// the primal pass keeps at most half the states.
    fn run_online(trips: usize, snapshots: usize) -> Checkpoints<usize> {
        let schedule = run_with(Checkpoints::online(snapshots), trips, snapshots.max(2));
        assert!(schedule.max_stored() <= snapshots.max(2));
        schedule
    }

    #[test]
    fn the_online_schedule_reverses_every_step_from_the_right_state() {
        for trips in 0..80 {
            for snapshots in 0..9 {
                run_online(trips, snapshots);
            }
        }
    }

    #[test]
    fn the_online_schedule_stays_within_its_states_on_long_loops() {
        let (trips, snapshots) = (200_000, 40);
        let schedule = run_online(trips, snapshots);
        assert!(schedule.max_stored() <= snapshots);
        // Stretches of at most 2 N / (K / 2) steps, each reversed with at
        // least K / 2 states: C(20 + t, t) >= 20,000 for t = 6.
        assert!(
            schedule.forward_steps() <= trips * 8,
            "{} forward steps",
            schedule.forward_steps()
        );
    }

    #[test]
    fn a_memory_budget_gives_the_count_of_states() {
        let schedule: Checkpoints<f64> = Checkpoints::with_memory(1000, 64 << 10, 8 << 10);
        assert_eq!(schedule.snapshots(), 8);
        let schedule: Checkpoints<f64> = Checkpoints::with_memory(1000, 100, 8 << 10);
        assert_eq!(schedule.snapshots(), 1);
    }
}
