//! Data-parallel gradients: a batch split across threads, the same bits for
//! any number of threads.
//!
//! A loss that is a sum over a batch (`Σᵢ ℓ(params, itemᵢ)`) has a gradient
//! that is a sum too. [`gradient_sum`] cuts the batch into chunks of a fixed
//! size, runs your `_vjp` on each chunk with a shadow of its own (on as many
//! threads as you ask for, scoped: no `'static` bounds, no thread pool), and
//! adds the chunks' gradients and losses **in chunk order**. The chunks do not
//! depend on the number of threads, and neither does the order of the
//! additions, so the result is bit for bit the same with 1, 2 or 64 threads —
//! float addition is not associative, and a reduction in completion order
//! would not be.
//!
//! ```
//! use ad_runtime::{differentiate, parallel};
//!
//! /// Squared error of a line over a chunk of points `(x, y)`, stored flat.
//! #[differentiate(wrt(w))]
//! fn chunk_loss(w: &[f64], points: &[f64]) -> f64 {
//!     points.chunks_exact(2).map(|p| (w[0] * p[0] + w[1] - p[1]).powi(2)).sum()
//! }
//!
//! let points: Vec<[f64; 2]> = (0..1000).map(|i| [i as f64 / 1000.0, 0.5]).collect();
//! let w = [0.3, 0.1];
//! let run = |threads| {
//!     parallel::gradient_sum(&points, 64, w.len(), threads, |chunk, d_w| {
//!         chunk_loss_vjp(&w, d_w, chunk.as_flattened(), 1.0)
//!     })
//! };
//! let (loss, grad) = run(1);
//! assert_eq!(run(2), (loss, grad.clone()));
//! assert_eq!(run(7), (loss, grad));
//! ```

use crate::Float;

/// The loss and gradient of a sum over `items`, computed chunk by chunk on
/// `threads` threads and added in chunk order (see the [module](self)).
///
/// `vjp(chunk, shadow)` gets consecutive items (at most `chunk` of them) and
/// a zeroed shadow of `n_params` floats: it adds the chunk's gradient into
/// the shadow (as a generated `_vjp` with the seed 1 does) and returns the
/// chunk's loss. The result is the sum of the losses and the sum of the
/// gradients, each added in chunk order, starting from zero.
///
/// Memory: one shadow per chunk, `items.len() / chunk` of them at most.
///
/// # Panics
///
/// If `chunk` or `threads` is 0, or if `vjp` panics (on any thread).
pub fn gradient_sum<T, I, F>(
    items: &[I],
    chunk: usize,
    n_params: usize,
    threads: usize,
    vjp: F,
) -> (T, Vec<T>)
where
    T: Float + Send,
    I: Sync,
    F: Fn(&[I], &mut [T]) -> T + Sync,
{
    assert!(
        chunk > 0,
        "ad_runtime::parallel::gradient_sum: `chunk` is 0"
    );
    assert!(
        threads > 0,
        "ad_runtime::parallel::gradient_sum: `threads` is 0"
    );
    let chunks: Vec<&[I]> = items.chunks(chunk).collect();
    let mut losses = vec![T::ZERO; chunks.len()];
    let mut shadows = vec![T::ZERO; chunks.len() * n_params];
    // Chunk `k` goes to thread `k % threads`, with its slots.
    let mut work: Vec<Vec<Slot<'_, T, I>>> = (0..threads).map(|_| Vec::new()).collect();
    let mut rest: &mut [T] = &mut shadows;
    for (k, (loss, &items)) in losses.iter_mut().zip(&chunks).enumerate() {
        let (shadow, tail) = std::mem::take(&mut rest).split_at_mut(n_params);
        rest = tail;
        work[k % threads].push((items, loss, shadow));
    }
    let vjp = &vjp;
    std::thread::scope(|scope| {
        let mut handles = Vec::new();
        let mut work = work.into_iter();
        // This thread does the first share itself.
        let own = work.next().unwrap_or_default();
        for share in work.filter(|share| !share.is_empty()) {
            handles.push(scope.spawn(move || run(vjp, share)));
        }
        run(vjp, own);
        for handle in handles {
            if let Err(panic) = handle.join() {
                std::panic::resume_unwind(panic);
            }
        }
    });
    // In chunk order, whatever the threads.
    let mut loss = T::ZERO;
    let mut gradient = vec![T::ZERO; n_params];
    for (k, &chunk_loss) in losses.iter().enumerate() {
        loss += chunk_loss;
        let shadow = &shadows[k * n_params..(k + 1) * n_params];
        for (total, &part) in gradient.iter_mut().zip(shadow) {
            *total += part;
        }
    }
    (loss, gradient)
}

/// A chunk of items, and where its loss and its gradient go.
type Slot<'a, T, I> = (&'a [I], &'a mut T, &'a mut [T]);

/// Runs `vjp` on each chunk of a thread's share, into its slots.
fn run<T, I, F>(vjp: &F, share: Vec<Slot<'_, T, I>>)
where
    T: Float,
    F: Fn(&[I], &mut [T]) -> T,
{
    for (items, loss, shadow) in share {
        *loss = vjp(items, shadow);
    }
}

#[cfg(test)]
mod tests {
    use super::gradient_sum;

    /// A sum whose order matters in the last bits, against the same sum
    /// taken chunk by chunk in order on one thread.
    #[test]
    fn the_result_does_not_depend_on_the_number_of_threads() {
        let items: Vec<f64> = (0..1013)
            .map(|i| (f64::from(i) * 0.37).sin() * 1e3)
            .collect();
        let vjp = |chunk: &[f64], d: &mut [f64]| {
            for &x in chunk {
                d[0] += x * 1e-3;
                d[1] += x.cos();
            }
            chunk.iter().map(|x| x * x).sum::<f64>()
        };
        let (loss, grad) = gradient_sum(&items, 100, 2, 1, vjp);
        for threads in [2, 3, 4, 16, 200] {
            let (l, g) = gradient_sum(&items, 100, 2, threads, vjp);
            assert_eq!(l.to_bits(), loss.to_bits(), "{threads} threads");
            assert_eq!(g, grad, "{threads} threads");
        }
        // The chunks' sums, in chunk order.
        let mut expected = (0.0, [0.0, 0.0]);
        for chunk in items.chunks(100) {
            let mut d = [0.0; 2];
            expected.0 += vjp(chunk, &mut d);
            expected.1[0] += d[0];
            expected.1[1] += d[1];
        }
        assert_eq!(loss.to_bits(), expected.0.to_bits());
        assert_eq!(grad, expected.1.to_vec());
    }

    #[test]
    fn an_empty_batch_gives_zeros() {
        let (loss, grad) = gradient_sum(&[] as &[f64], 8, 3, 4, |_, _| 1.0);
        assert_eq!((loss, grad), (0.0, vec![0.0; 3]));
    }

    #[test]
    #[should_panic(expected = "chunk 2")]
    fn a_panic_on_a_thread_reaches_the_caller() {
        let items = [0.0_f64; 10];
        let _ = gradient_sum(&items, 2, 1, 3, |chunk: &[f64], _: &mut [f64]| {
            let k = (chunk.as_ptr() as usize - items.as_ptr() as usize) / 16;
            assert!(k != 2, "chunk {k}");
            0.0
        });
    }
}
