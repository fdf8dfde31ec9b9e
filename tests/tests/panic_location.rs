//! A failed assertion in `_vjp` reports the assertion's own line and column,
//! as the function does (`#[track_caller]`-style locations come from the
//! macro's tokens, which the expansion keeps with the user's spans).
//!
//! In a file of its own: it installs a panic hook, which is process-wide.

use std::cell::RefCell;
use std::panic::{self, AssertUnwindSafe};

use ad_runtime::differentiate;

#[differentiate]
fn positive_log(x: f64) -> f64 {
    assert!(x > 0.0, "x must be positive, not {x}");
    x.ln()
}

thread_local! {
    static LOCATION: RefCell<Option<(u32, u32)>> = const { RefCell::new(None) };
}

/// Where `f` panics: line and column.
fn panic_location(f: impl FnOnce()) -> (u32, u32) {
    LOCATION.with(|location| location.borrow_mut().take());
    let caught = panic::catch_unwind(AssertUnwindSafe(f));
    assert!(caught.is_err(), "expected a panic");
    LOCATION
        .with(|location| location.borrow_mut().take())
        .expect("the hook saw the panic")
}

#[test]
fn assertions_in_vjp_report_their_own_location() {
    panic::set_hook(Box::new(|info| {
        let location = info.location().map(|l| (l.line(), l.column()));
        LOCATION.with(|slot| *slot.borrow_mut() = location);
    }));
    let primal = panic_location(|| {
        positive_log(-1.0);
    });
    let vjp = panic_location(|| {
        positive_log_vjp(-1.0, 1.0);
    });
    let forward = panic_location(|| {
        drop(positive_log_forward(-1.0));
    });
    let _ = panic::take_hook();
    // The `assert!` is on the line after `fn positive_log`, 14 in this file.
    assert_eq!(primal, (14, 5));
    assert_eq!(vjp, primal);
    assert_eq!(forward, primal);
}
