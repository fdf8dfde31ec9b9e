//! The memory a checkpointed loop keeps, measured: a counting global
//! allocator records the peak of the bytes allocated while `_vjp` runs. A
//! rollout of `N` steps (10⁶ in release, 10⁵ in debug) with `K = √N` saved
//! states peaks below `K + 1` states plus a constant, where the taped loop
//! keeps every step; both give the same gradient, bit for bit.
//!
//! A checkpointed call (`ad_runtime::checkpoint(g(x))`) in a loop of `N`
//! steps keeps its argument per step, where the plain call keeps its
//! pullback and the callee's tape.
//!
//! One test only: the counters are global, and tests run in parallel.

// The counting allocator needs `unsafe impl GlobalAlloc`; see its SAFETY comment.
#![allow(unsafe_code)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

use ad_runtime::differentiate;

struct Counting;

static CURRENT: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

// SAFETY: every method forwards its arguments unchanged to `System`, whose
// implementation upholds the `GlobalAlloc` contract; the only addition is
// updating two atomic counters, which neither allocates nor touches the
// memory being managed (`alloc_zeroed` is the default, through `alloc`).
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let now = CURRENT.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
        PEAK.fetch_max(now, Ordering::Relaxed);
        // SAFETY: forwarded unchanged (see the impl).
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        CURRENT.fetch_sub(layout.size(), Ordering::Relaxed);
        // SAFETY: forwarded unchanged (see the impl).
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if new_size > layout.size() {
            let now = CURRENT.fetch_add(new_size - layout.size(), Ordering::Relaxed) + new_size
                - layout.size();
            PEAK.fetch_max(now, Ordering::Relaxed);
        } else {
            CURRENT.fetch_sub(layout.size() - new_size, Ordering::Relaxed);
        }
        // SAFETY: forwarded unchanged (see the impl).
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// The bytes `run` allocates at its peak, beyond what was allocated before.
fn peak_bytes<R>(run: impl FnOnce() -> R) -> (R, usize) {
    ad_runtime::tape::release_pool();
    let before = CURRENT.load(Ordering::Relaxed);
    PEAK.store(before, Ordering::Relaxed);
    let result = run();
    let peak = PEAK.load(Ordering::Relaxed) - before;
    ad_runtime::tape::release_pool();
    (result, peak)
}

/// A chain of `m` masses on springs, its positions and velocities in two
/// buffers, stepped by semi-implicit Euler.
macro_rules! chain {
    ($name:ident $(, $ck:meta)?) => {
        #[differentiate]
        fn $name(x: &mut [f64], v: &mut [f64], k: f64, steps: usize, snapshots: usize) -> f64 {
            let _ = snapshots;
            let m = x.len();
            let dt = 1e-3;
            $(#[$ck])?
            for _ in 0..steps {
                for i in 1..m - 1 {
                    let force = k * (x[i - 1] - 2.0 * x[i] + x[i + 1]) - 0.1 * x[i].powi(3);
                    v[i] += dt * force;
                }
                for i in 1..m - 1 {
                    x[i] += dt * v[i];
                }
            }
            x.iter().map(|p| p * p).sum::<f64>()
        }
    };
}
chain!(chain, checkpoint(snapshots = snapshots));

/// `chain_vjp`'s type: positions and velocities with their shadows, the
/// stiffness, the steps, the snapshots and the seed.
type ChainVjp =
    fn(&mut [f64], &mut [f64], &mut [f64], &mut [f64], f64, usize, usize, f64) -> (f64, f64);
chain!(chain_taped);

/// A step whose pullback holds a tape of 64 values.
#[differentiate]
fn substeps(x: f64, k: f64) -> f64 {
    let mut y = x;
    for _ in 0..64 {
        y += 0.01 * (k * y).sin();
    }
    y
}

/// `steps` calls of [`substeps`], each checkpointed or not.
macro_rules! calls {
    ($name:ident, $($mark:ident)::*) => {
        #[differentiate]
        fn $name(x0: f64, k: f64, steps: usize) -> f64 {
            let mut x = x0;
            for _ in 0..steps {
                x = $($mark)::*(substeps(x, k));
            }
            x
        }
    };
}
calls!(calls_checkpointed, ad_runtime::checkpoint);
calls!(calls_taped,);

#[test]
fn checkpointing_keeps_less_than_the_tape() {
    let steps: usize = if cfg!(debug_assertions) {
        100_000
    } else {
        1_000_000
    };
    let snapshots = steps.isqrt();
    let m = 4;
    let start: Vec<f64> = (0..m).map(|i| (i as f64 * 0.7).sin()).collect();
    let run = |vjp: ChainVjp| {
        let (mut x, mut v) = (start.clone(), vec![0.0; m]);
        let (mut d_x, mut d_v) = (vec![0.0; m], vec![0.0; m]);
        let out = vjp(
            &mut x, &mut d_x, &mut v, &mut d_v, 3.0, steps, snapshots, 1.0,
        );
        (out, x, v, d_x, d_v)
    };
    let (checkpointed, checkpointed_peak) = peak_bytes(|| run(chain_vjp));
    let (taped, taped_peak) = peak_bytes(|| run(chain_taped_vjp));
    assert_eq!(checkpointed, taped, "the same gradient, bit for bit");

    // One saved state: its step, two scalars, the two buffers as `Vec`s.
    let state = 8 + 16 + 2 * (24 + m * 8);
    // K saved states, the final contents kept while steps run again, and
    // one iteration's tape.
    let bound = (snapshots + 1) * state + (64 << 10);
    assert!(
        checkpointed_peak <= bound,
        "{steps} steps with {snapshots} snapshots peaked at {checkpointed_peak} bytes, over {bound}"
    );
    // The taped loop keeps at least a float per step.
    assert!(
        taped_peak >= steps * 8,
        "the taped loop peaked at {taped_peak} bytes"
    );
    // √N states against N steps: 100 times less at 10⁶ steps.
    let factor = if cfg!(debug_assertions) { 10 } else { 100 };
    assert!(
        taped_peak >= factor * checkpointed_peak,
        "taped {taped_peak} bytes, checkpointed {checkpointed_peak}"
    );

    // Checkpointed calls: a float per step, against a pullback and its tape.
    let calls = 10_000;
    let (checkpointed, checkpointed_peak) =
        peak_bytes(|| calls_checkpointed_vjp(0.3, 1.1, calls, 1.0));
    let (taped, taped_peak) = peak_bytes(|| calls_taped_vjp(0.3, 1.1, calls, 1.0));
    assert_eq!(checkpointed, taped, "the same gradient, bit for bit");
    let bound = calls * 8 + (16 << 10);
    assert!(
        checkpointed_peak <= bound,
        "{calls} checkpointed calls peaked at {checkpointed_peak} bytes, over {bound}"
    );
    assert!(
        taped_peak >= 20 * checkpointed_peak,
        "taped calls {taped_peak} bytes, checkpointed {checkpointed_peak}"
    );
}
