//! `ad_runtime::optim` on parameter structs: SGD with momentum and Adam train
//! a `#[derive(Tangent)]` struct through its `_vjp` to the known minimum, and
//! a training step (clearing the shadow, `_vjp`, the optimiser's step)
//! allocates nothing once the optimiser is made: every allocation on the
//! test's thread is counted by a global allocator.

// The counting allocator needs `unsafe impl GlobalAlloc`; see its SAFETY comment.
#![allow(unsafe_code)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use ad_runtime::optim::{Adam, Sgd};
use ad_runtime::{Tangent, differentiate};

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

/// A quadratic model `y = a x² + b x + c` whose coefficients are a struct: a
/// `Vec` field (on the heap, which a step must not reallocate), a float and a
/// skipped name.
#[derive(Clone, Debug, PartialEq, Tangent)]
struct Quadratic {
    ab: Vec<f64>,
    c: f64,
    #[tangent(skip)]
    name: &'static str,
}

/// The points `(x, y)` of `y = 0.5 x² − 2 x + 1`, exactly: the least-squares
/// minimum of [`loss`] is `a = 0.5, b = −2, c = 1`, with loss 0.
const XS: [f64; 5] = [-1.0, -0.5, 0.0, 0.5, 1.0];
const TRUE_AB: [f64; 2] = [0.5, -2.0];
const TRUE_C: f64 = 1.0;

fn ys() -> [f64; 5] {
    XS.map(|x| TRUE_AB[0] * x * x + TRUE_AB[1] * x + TRUE_C)
}

/// The mean squared error of the model on the points, straight-line code: its
/// `_vjp` allocates nothing.
#[differentiate(wrt(p))]
fn loss(p: &Quadratic, xs: &[f64; 5], ys: &[f64; 5]) -> f64 {
    let r0 = p.ab[0] * xs[0] * xs[0] + p.ab[1] * xs[0] + p.c - ys[0];
    let r1 = p.ab[0] * xs[1] * xs[1] + p.ab[1] * xs[1] + p.c - ys[1];
    let r2 = p.ab[0] * xs[2] * xs[2] + p.ab[1] * xs[2] + p.c - ys[2];
    let r3 = p.ab[0] * xs[3] * xs[3] + p.ab[1] * xs[3] + p.c - ys[3];
    let r4 = p.ab[0] * xs[4] * xs[4] + p.ab[1] * xs[4] + p.c - ys[4];
    (r0 * r0 + r1 * r1 + r2 * r2 + r3 * r3 + r4 * r4) / 5.0
}

fn start() -> Quadratic {
    Quadratic {
        ab: vec![0.0, 0.0],
        c: 0.0,
        name: "quadratic",
    }
}

fn distance_to_minimum(p: &Quadratic) -> f64 {
    let errors = [p.ab[0] - TRUE_AB[0], p.ab[1] - TRUE_AB[1], p.c - TRUE_C];
    errors.iter().fold(0.0, |worst, e| worst.max(e.abs()))
}

/// One training step: clear the shadow, take the gradient, step.
fn train(
    p: &mut Quadratic,
    d_p: &mut Quadratic,
    ys: &[f64; 5],
    steps: usize,
    mut step: impl FnMut(&mut Quadratic, &Quadratic),
) {
    for _ in 0..steps {
        d_p.set_zero();
        loss_vjp(p, d_p, &XS, ys, 1.0);
        step(p, d_p);
    }
}

#[test]
fn sgd_with_momentum_finds_the_least_squares_coefficients() {
    let ys = ys();
    let mut p = start();
    let mut d_p = p.zero();
    let mut sgd = Sgd::new(&p, 0.1).with_momentum(0.9);
    train(&mut p, &mut d_p, &ys, 1000, |p, d_p| sgd.step(p, d_p));
    assert!(distance_to_minimum(&p) < 1e-9, "{p:?}");
    assert!(loss(&p, &XS, &ys) < 1e-18);
    assert_eq!(p.name, "quadratic");
}

#[test]
fn adam_finds_the_least_squares_coefficients() {
    let ys = ys();
    let mut p = start();
    let mut d_p = p.zero();
    let mut adam = Adam::new(&p, 0.05);
    train(&mut p, &mut d_p, &ys, 2000, |p, d_p| adam.step(p, d_p));
    adam.set_rate(0.002);
    train(&mut p, &mut d_p, &ys, 2000, |p, d_p| adam.step(p, d_p));
    assert!(distance_to_minimum(&p) < 1e-4, "{p:?}");
    assert_eq!(adam.steps(), 4000);
}

#[test]
fn a_training_step_allocates_nothing_once_the_optimiser_is_made() {
    let ys = ys();
    let mut p = start();
    let mut d_p = p.zero();
    let mut adam = Adam::new(&p, 0.05);
    let mut sgd = Sgd::new(&p, 0.05).with_momentum(0.9);
    let adam_steps = allocations(|| {
        train(&mut p, &mut d_p, &ys, 100, |p, d_p| adam.step(p, d_p));
    });
    let sgd_steps = allocations(|| {
        train(&mut p, &mut d_p, &ys, 100, |p, d_p| sgd.step(p, d_p));
    });
    assert_eq!((adam_steps, sgd_steps), (0, 0));
    // The counter sees what allocates: making an optimiser (its state) and a
    // shadow (its `Vec` field).
    assert!(allocations(|| drop(Adam::new(&p, 0.05))) >= 1);
    assert!(allocations(|| drop(p.zero())) >= 1);
    assert!(distance_to_minimum(&p) < 0.5, "the steps ran: {p:?}");
}
