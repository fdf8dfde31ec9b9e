#!/usr/bin/env python3
"""The benchmark workloads of issue 6 in JAX on the CPU: grad ÷ primal ratios.

Runs W1 (extended Rosenbrock), W2 (the MLP loss), W3 (the scalar expression),
W4 (logsumexp) and the GradBench problems llsq, lse, ode, gmm and lstm at the sizes
of `examples/src/workloads.rs`, each as `jax.jit(f)` and `jax.jit(jax.grad(f))` in
float64, and prints the time of each and their ratio. Compare with the `_vjp` ÷
primal column of `docs/performance.md`.

Run with `python3 examples/jax/workloads.py`. Without `jax` it says so and exits 0.
"""

import sys
import time


def main() -> int:
    try:
        import jax
    except ImportError:
        print("jax is not installed: nothing to measure (pip install jax)")
        return 0
    jax.config.update("jax_enable_x64", True)
    jax.config.update("jax_platform_name", "cpu")
    import jax.numpy as jnp
    import numpy as np

    rng = np.random.default_rng(0)

    def timed(f, *args, repeat=20):
        """Median seconds of one call of a jitted `f`, after a compiling call."""
        jax.block_until_ready(f(*args))
        times = []
        for _ in range(repeat):
            start = time.perf_counter()
            jax.block_until_ready(f(*args))
            times.append(time.perf_counter() - start)
        times.sort()
        return times[len(times) // 2]

    # W1
    def rosenbrock(x):
        return jnp.sum((1.0 - x[:-1]) ** 2 + 100.0 * (x[1:] - x[:-1] ** 2) ** 2)

    # W2: weights flat, w1 128 × 784 and w2 10 × 128, one row per output unit.
    n_in, n_hidden, n_classes, batch = 784, 128, 10, 32

    def mlp(params, x, labels):
        w1 = params[: n_hidden * n_in].reshape(n_hidden, n_in)
        at = n_hidden * n_in
        b1 = params[at : at + n_hidden]
        at += n_hidden
        w2 = params[at : at + n_classes * n_hidden].reshape(n_classes, n_hidden)
        b2 = params[at + n_classes * n_hidden :]
        h = jnp.tanh(x @ w1.T + b1)
        z = h @ w2.T + b2
        lse = jax.scipy.special.logsumexp(z, axis=1)
        return jnp.mean(lse - z[jnp.arange(batch), labels])

    # W3
    def w3(xy):
        x, y = xy[0], xy[1]
        return (jnp.sin(x) * jnp.exp(y) + jnp.log(1.0 + x * x)) / (1.0 + y * y)

    # W4 and lse
    def lse(x):
        m = jnp.max(x)
        return m + jnp.log(jnp.sum(jnp.exp(x - m)))

    # llsq
    def llsq(x, n=1024):
        t = -1.0 + 2.0 * jnp.arange(n) / (n - 1)
        powers = t[:, None] ** jnp.arange(x.shape[0])[None, :]
        return 0.5 * jnp.sum((jnp.sign(t) - powers @ x) ** 2)

    # ode: the last entry of y(2) after s Runge–Kutta steps.
    def ode(x, s=10):
        h = 2.0 / s

        def f(y):
            return jnp.concatenate([x[:1], x[1:] * y[:-1]])

        def step(y, _):
            k1 = f(y)
            k2 = f(y + h * k1 / 2)
            k3 = f(y + h * k2 / 2)
            k4 = f(y + h * k3)
            return y + h * (k1 + 2 * k2 + 2 * k3 + k4) / 6, None

        y, _ = jax.lax.scan(step, jnp.zeros_like(x), None, length=s)
        return y[-1]

    # gmm with M_k = Q_k (ADBench's layout); l row after row, D(D−1)/2 per component.
    d, k, n = 10, 25, 1000
    rows, cols = np.tril_indices(d, -1)

    def gmm(params, x, gamma=1.0, m=0.0):
        alpha, mu, q, l = params
        qmat = jnp.zeros((k, d, d)).at[:, rows, cols].set(l.reshape(k, -1))
        qmat = qmat + jax.vmap(jnp.diag)(jnp.exp(q))
        diff = x[:, None, :] - mu[None, :, :]
        z = jnp.einsum("krc,nkc->nkr", qmat, diff)
        beta = alpha + jnp.sum(q, axis=1) - 0.5 * jnp.sum(z * z, axis=2)
        lse_b = jax.scipy.special.logsumexp(beta, axis=1)
        lse_a = jax.scipy.special.logsumexp(alpha)
        frob = jnp.sum(jnp.exp(q) ** 2) + jnp.sum(l**2)
        return jnp.sum(lse_b) - n * lse_a - 0.5 * gamma**2 * frob + m * jnp.sum(q)

    # lstm: ADBench's diagonal LSTM, l layers of b cells, c steps.
    layers, b, c = 2, 14, 1024

    def lstm(params, state, sequence):
        main, extra = params
        main = main.reshape(layers, 8, b)
        hidden0 = state.reshape(layers, 2, b)[:, 0]
        cell0 = state.reshape(layers, 2, b)[:, 1]
        sig = jax.nn.sigmoid

        def step(carry, t):
            hidden, cell = carry
            inp = sequence[t] * extra[0]
            hs, cs = [], []
            for j in range(layers):
                w = main[j]
                h = hidden[j]
                forget = sig(inp * w[0] + w[4])
                ingate = sig(h * w[1] + w[5])
                outgate = sig(inp * w[2] + w[6])
                change = jnp.tanh(h * w[3] + w[7])
                nc = cell[j] * forget + ingate * change
                nh = outgate * jnp.tanh(nc)
                hs.append(nh)
                cs.append(nc)
                inp = nh
            y = inp * extra[1] + extra[2]
            norm = jnp.log(jnp.sum(jnp.exp(y)) + 2.0)
            score = jnp.sum(sequence[t + 1] * (y - norm))
            return (jnp.stack(hs), jnp.stack(cs)), score

        _, scores = jax.lax.scan(step, (hidden0, cell0), jnp.arange(c - 1))
        return -jnp.sum(scores) / ((c - 1) * b)

    x_mlp = jnp.asarray(rng.random((batch, n_in)))
    labels = jnp.asarray([(s * 7 + 3) % n_classes for s in range(batch)])
    n_params = n_hidden * n_in + n_hidden + n_classes * n_hidden + n_classes
    gmm_x = jnp.asarray(rng.uniform(-2, 2, (n, d)))
    gmm_params = (
        jnp.asarray(rng.uniform(-1, 1, k)),
        jnp.asarray(rng.uniform(-2, 2, (k, d))),
        jnp.asarray(rng.uniform(-0.5, 0.5, (k, d))),
        jnp.asarray(rng.uniform(-0.3, 0.3, k * d * (d - 1) // 2)),
    )
    lstm_params = (
        jnp.asarray(rng.uniform(-1, 1, 8 * layers * b)),
        jnp.asarray(rng.uniform(-1, 1, (3, b))),
    )
    lstm_state = jnp.asarray(rng.uniform(-1, 1, 2 * layers * b))
    lstm_seq = jnp.asarray(rng.random((c, b)))

    workloads = [
        ("W1 rosenbrock n=1e3", rosenbrock, (jnp.asarray(rng.uniform(-1.5, 1.5, 1000)),)),
        ("W1 rosenbrock n=1e6", rosenbrock, (jnp.asarray(rng.uniform(-1.5, 1.5, 10**6)),)),
        (
            "W2 mlp",
            mlp,
            (jnp.asarray(rng.uniform(-1, 1, n_params) / np.sqrt(n_in)), x_mlp, labels),
        ),
        ("W3 scalar", w3, (jnp.asarray([0.7, -0.3]),)),
        ("W4 logsumexp n=1e6", lse, (jnp.asarray(rng.uniform(-5, 5, 10**6)),)),
        ("llsq m=128 n=1024", llsq, (jnp.asarray(rng.random(128)),)),
        ("lse n=1e5", lse, (jnp.asarray(rng.uniform(-5, 5, 10**5)),)),
        ("ode n=1000 s=10", ode, (jnp.asarray(rng.random(1000)),)),
        ("gmm d=10 k=25 n=1000", gmm, (gmm_params, gmm_x)),
        ("lstm l=2 b=14 c=1024", lstm, (lstm_params, lstm_state, lstm_seq)),
    ]

    print(f"jax {jax.__version__} on {jax.devices()[0]}, float64")
    print("| workload | primal | grad | grad ÷ primal |")
    print("|---|---|---|---|")
    for name, f, args in workloads:
        primal = timed(jax.jit(f), *args)
        grad = timed(jax.jit(jax.grad(f)), *args)
        print(f"| {name} | {primal * 1e6:.1f} µs | {grad * 1e6:.1f} µs | {grad / primal:.2f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
