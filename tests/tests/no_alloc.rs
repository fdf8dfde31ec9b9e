//! Straight-line `_vjp` code allocates nothing: every allocation on the test's
//! thread is counted by a global allocator while the generated code runs.

// The counting allocator needs `unsafe impl GlobalAlloc`; see its SAFETY comment.
#![allow(unsafe_code)]
// The buffer functions are written with index loops, as numeric code often is.
#![allow(clippy::needless_range_loop)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use ad_runtime::differentiate;
use ad_tests::fixtures::{power, power_vjp, weighted_sum, weighted_sum_vjp};

thread_local! {
    // `const`-initialised and without a destructor: reading it never allocates.
    static ALLOCATIONS: Cell<usize> = const { Cell::new(0) };
}

fn count_one() {
    let _ = ALLOCATIONS.try_with(|count| count.set(count.get() + 1));
}

/// Counts the allocations made on the current thread, then defers to `System`.
struct Counting;

// SAFETY: every method forwards its arguments unchanged to `System`, whose
// implementation upholds the `GlobalAlloc` contract; the only addition is
// incrementing a thread-local counter, which neither allocates nor touches the
// memory being managed. So `Counting` upholds exactly the contract `System` does.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count_one();
        // SAFETY: forwarded unchanged; the caller upholds `alloc`'s contract.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        count_one();
        // SAFETY: forwarded unchanged; the caller upholds `alloc_zeroed`'s contract.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count_one();
        // SAFETY: forwarded unchanged; `ptr` was allocated by `System` through
        // this allocator with `layout`, as the caller guarantees.
        unsafe { System.realloc(ptr, layout, new_size) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded unchanged; `ptr` was allocated by `System` through
        // this allocator with `layout`, as the caller guarantees.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// The number of allocations `f` makes on this thread.
fn allocations(f: impl FnOnce()) -> usize {
    let before = ALLOCATIONS.with(Cell::get);
    f();
    ALLOCATIONS.with(Cell::get) - before
}

#[differentiate(vjp, jvp)]
fn rosenbrock(x: f64, y: f64) -> f64 {
    let a = 1.0 - x;
    let b = y - x * x;
    a * a + 100.0 * b * b
}

#[differentiate(vjp, jvp)]
fn many_primitives(x: f64, y: f64) -> (f64, f64) {
    let r = x.hypot(y);
    let t = y.atan2(x).sin() * x.exp().ln_1p() + x.powi(3) + y.powf(x.abs() + 0.5);
    let m = x.max(y).min(r) + x.mul_add(y, 1.0);
    (r * t, m.tanh() / (1.0 + y * y).sqrt())
}

#[test]
fn straight_line_vjp_allocates_nothing() {
    // The counter sees an allocation when there is one.
    assert_eq!(
        allocations(|| drop(std::hint::black_box(vec![1.0_f64; 4]))),
        1
    );

    let mut sink = 0.0;
    let n = allocations(|| {
        for i in 0..100 {
            let x = f64::from(i) * 0.01;
            let (out, d_x, d_y) = rosenbrock_vjp(x, 0.5, 1.0);
            let ((a, b), e_x, e_y) = many_primitives_vjp(x + 0.1, 0.7, (1.0, -0.5));
            sink += out + d_x + d_y + a + b + e_x + e_y;
        }
    });
    assert!(sink.is_finite());
    assert_eq!(n, 0, "straight-line `_vjp` code allocated {n} times");
}

#[test]
fn straight_line_jvp_allocates_nothing() {
    let mut sink = 0.0;
    let n = allocations(|| {
        for i in 0..100 {
            let x = f64::from(i) * 0.01;
            let (out, t_out) = rosenbrock_jvp(x, 1.0, 0.5, -0.5);
            let ((a, b), (t_a, t_b)) = many_primitives_jvp(x + 0.1, 0.3, 0.7, 1.0);
            sink += out + t_out + a + b + t_a + t_b;
        }
    });
    assert!(sink.is_finite());
    assert_eq!(n, 0, "straight-line `_jvp` code allocated {n} times");
}

#[test]
fn a_loop_that_needs_nothing_saved_allocates_nothing() {
    let mut sink = 0.0;
    let n = allocations(|| {
        let (out, d_x, d_c) = weighted_sum_vjp(0.5, 2.0, 1000, 1.0);
        sink += out + d_x + d_c;
    });
    assert!(sink.is_finite());
    assert_eq!(n, 0, "a loop with nothing to save allocated {n} times");
}

#[test]
fn a_taped_loop_allocates_its_tape_once_then_reuses_it() {
    // The thread's tape pool allocates its list of buffers the first time a
    // tape goes back to it; `release_pool` empties the list but keeps it.
    let mut sink = power_vjp(1.0001, 1, 1.0).1;
    ad_runtime::tape::release_pool();
    // The tape's capacity is the trip count, reserved before the loop: one
    // allocation, never a reallocation, whatever the trip count (none fits in
    // the pool, which holds only smaller buffers).
    for trips in [1, 10, 1000] {
        let n = allocations(|| {
            let (out, d_x) = power_vjp(1.0001, trips, 1.0);
            sink += out + d_x;
        });
        assert_eq!(n, 1, "{trips} trips: {n} allocations");
    }
    // The tapes' storage went back to the thread's pool: later calls that fit
    // in it allocate nothing, until the pool is released.
    for trips in [1000, 10, 1000] {
        let n = allocations(|| {
            let (out, d_x) = power_vjp(1.0001, trips, 1.0);
            sink += out + d_x;
        });
        assert_eq!(n, 0, "{trips} trips after a call of 1000: {n} allocations");
    }
    ad_runtime::tape::release_pool();
    assert_eq!(ad_runtime::tape::pooled_buffers(), 0);
    let n = allocations(|| {
        let (out, d_x) = power_vjp(1.0001, 10, 1.0);
        sink += out + d_x;
    });
    assert_eq!(n, 1, "after `release_pool`: {n} allocations");
    assert!(sink.is_finite());
    let (out, d_x) = power_vjp(1.5, 3, 1.0);
    assert_eq!((out, d_x), (power(1.5, 3), 3.0 * 1.5 * 1.5));
    let (out, d_x, d_c) = weighted_sum_vjp(0.5, 2.0, 4, 1.0);
    assert_eq!(
        (out, d_x, d_c),
        (weighted_sum(0.5, 2.0, 4), 2.0 * 6.0, 0.5 * 6.0)
    );
}

#[test]
fn the_functions_measured_have_correct_gradients() {
    let grad = ad_tests::check_scalar(
        |p| rosenbrock(p[0], p[1]),
        |p, s| {
            let (out, d_x, d_y) = rosenbrock_vjp(p[0], p[1], s);
            (out, vec![d_x, d_y])
        },
        &[-1.2, 1.0],
    );
    ad_tests::assert_close(&grad, &[-215.6, -88.0]);
    ad_tests::check_vector(
        |p| {
            let (a, b) = many_primitives(p[0], p[1]);
            vec![a, b]
        },
        |p, s| {
            let ((a, b), d_x, d_y) = many_primitives_vjp(p[0], p[1], (s[0], s[1]));
            (vec![a, b], vec![d_x, d_y])
        },
        &[0.3, 0.7],
        &[1.0, -0.5],
    );
}

/// The extended Rosenbrock function over a slice: every element the adjoint
/// needs is read again from `x`, which nothing overwrites.
#[differentiate]
fn rosenbrock_slice(x: &[f64]) -> f64 {
    let mut s = 0.0;
    for i in 0..x.len() - 1 {
        let a = 1.0 - x[i];
        let b = x[i + 1] - x[i] * x[i];
        s += a * a + 100.0 * b * b;
    }
    s
}

/// A local buffer that does not depend on `x` has no shadow.
#[differentiate]
fn constant_weights(x: &[f64]) -> f64 {
    let mut w = vec![0.0; x.len()];
    for i in 0..x.len() {
        w[i] = (i + 1) as f64;
    }
    let mut s = 0.0;
    for i in 0..x.len() {
        s += w[i] * x[i] * x[i];
    }
    s
}

/// A local buffer that depends on `x` has one shadow.
#[differentiate]
fn active_local(x: &[f64]) -> f64 {
    let mut v = vec![0.0; x.len()];
    for i in 0..x.len() {
        v[i] = 2.0 * x[i];
    }
    let mut s = 0.0;
    for i in 0..x.len() {
        s += v[i] * v[i];
    }
    s
}

#[test]
fn buffers_allocate_only_what_the_adjoint_needs() {
    let x: Vec<f64> = (0..1000).map(|i| f64::from(i) * 1e-3).collect();
    let mut d_x = vec![0.0; x.len()];
    let mut sink = 0.0;
    // Nothing saved, no local buffer: no allocation, whatever the length.
    let n = allocations(|| sink += rosenbrock_slice_vjp(&x, &mut d_x, 1.0));
    assert_eq!(n, 0, "rosenbrock over a slice allocated {n} times");
    // The primal's own `w`, and no shadow for it.
    let n = allocations(|| sink += constant_weights_vjp(&x, &mut d_x, 1.0));
    assert_eq!(n, 1, "a constant local buffer: {n} allocations");
    // The primal's `v` and its shadow `d_v`, which `_vjp` gives back to the
    // thread's tape pool at its end (`__ad::recycle!`)…
    ad_runtime::tape::release_pool();
    let first = allocations(|| sink += active_local_vjp(&x, &mut d_x, 1.0));
    assert!(first >= 2, "an active local buffer: {first} allocations");
    // …where the next call takes it: only the primal's `v` is new.
    let n = allocations(|| sink += active_local_vjp(&x, &mut d_x, 1.0));
    assert_eq!(n, 1, "an active local buffer, again: {n} allocations");
    assert!(sink.is_finite());
}

/// `ad_runtime::logsumexp`, whose exponentials `_vjp` keeps for its pullback.
#[differentiate]
fn log_partition(x: &[f64]) -> f64 {
    ad_runtime::logsumexp(x)
}

#[test]
fn kept_exponentials_come_from_the_tape_pool() {
    let x: Vec<f64> = (0..1000).map(|i| (f64::from(i) * 0.37).sin()).collect();
    let mut d_x = vec![0.0; x.len()];
    let mut sink = log_partition_vjp(&x, &mut d_x, 1.0);
    ad_runtime::tape::release_pool();
    // One buffer for the n exponentials and their sum, given back to the pool
    // by the pullback: the next call takes it from there.
    let n = allocations(|| sink += log_partition_vjp(&x, &mut d_x, 1.0));
    assert_eq!(n, 1, "a first call: {n} allocations");
    let n = allocations(|| sink += log_partition_vjp(&x, &mut d_x, 1.0));
    assert_eq!(n, 0, "a second call: {n} allocations");
    assert!(sink.is_finite());
    // The gradient is the softmax of `x`.
    let x = [0.5, -1.0, 2.0, 2.0];
    let grad = ad_tests::check_scalar(
        log_partition,
        |p, s| {
            let mut d = vec![0.0; p.len()];
            (log_partition_vjp(p, &mut d, s), d)
        },
        &x,
    );
    let total: f64 = x.iter().map(|xi| xi.exp()).sum();
    let softmax: Vec<f64> = x.iter().map(|xi| xi.exp() / total).collect();
    ad_tests::assert_close(&grad, &softmax);
}

#[test]
fn the_buffer_functions_measured_have_correct_gradients() {
    let x = [0.5, -1.0, 2.0];
    let run = |vjp: fn(&[f64], &mut [f64], f64) -> f64| {
        move |p: &[f64], s: f64| {
            let mut d = vec![0.0; p.len()];
            (vjp(p, &mut d, s), d)
        }
    };
    let grad = ad_tests::check_scalar(rosenbrock_slice, run(rosenbrock_slice_vjp), &x);
    ad_tests::assert_close(
        &grad,
        &[
            -2.0 * 0.5 - 400.0 * 0.5 * (-1.25),
            200.0 * (-1.25) - 2.0 * 2.0 + 400.0,
            200.0 * 1.0,
        ],
    );
    let grad = ad_tests::check_scalar(constant_weights, run(constant_weights_vjp), &x);
    ad_tests::assert_close(&grad, &[2.0 * 0.5, -4.0, 6.0 * 2.0]);
    let grad = ad_tests::check_scalar(active_local, run(active_local_vjp), &x);
    ad_tests::assert_close(&grad, &[8.0 * 0.5, -8.0, 8.0 * 2.0]);
}
