#!/usr/bin/env python3
"""Prints the results table of docs/performance.md from criterion's output.

For every workload: the primal, `_vjp` and hand-written gradient times, and
the ratios `_vjp` ÷ primal, `_vjp` ÷ hand and hand ÷ primal. Given the output
of several runs, each time is the median of the runs' criterion mean
estimates, and the last column gives the range of `_vjp` ÷ primal over the
runs, which shows how much the machine moved the numbers. Plain Python 3.

Usage (each folder a copy of `target/criterion` after one run of
`cargo bench -p ad-examples --bench workloads`):

    python3 examples/table.py CRITERION_DIR[,CRITERION_DIR…]
"""

import sys

from plot import WORKLOADS, estimate, median_estimate, roots_of


def time(ns):
    """A time in the unit the tables use."""
    if ns < 1e3:
        return f"{ns:.1f} ns"
    if ns < 1e6:
        return f"{ns / 1e3:.2f} µs"
    return f"{ns / 1e6:.2f} ms"


def main(argv):
    roots = roots_of(argv)
    print("| workload | primal | `_vjp` | `_vjp` ÷ primal | hand-written | `_vjp` ÷ hand "
          "| hand ÷ primal | ÷ primal, each run |")
    print("|---|---|---|---|---|---|---|---|")
    for label, group, primal, vjp, hand in WORKLOADS:
        p, v, h = (median_estimate(roots, group, b) for b in (primal, vjp, hand))
        if None in (p, v, h):
            print(f"skipping {label}: no estimates for {group} in {roots}", file=sys.stderr)
            continue
        runs = sorted(
            estimate(root, group, vjp) / estimate(root, group, primal) for root in roots
        )
        spread = "–".join(f"{r:.2f}" for r in (runs[0], runs[-1]))
        print(f"| {label} | {time(p)} | {time(v)} | {v / p:.2f} | {time(h)} | {v / h:.2f} "
              f"| {h / p:.2f} | {spread} |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
