#!/usr/bin/env python3
"""Draws docs/performance.svg from the criterion output of the workloads benchmark.

For every workload, two bars: `_vjp` ÷ primal and `_vjp` ÷ hand-written gradient
(log scale), with the targets drawn as lines: ≤ 3 and ≤ 1.5 for the ratio to the
primal, ≤ 1.2 for the ratio to the hand-written gradient. Plain Python 3, no
third-party packages: the SVG is written by hand.

Usage (after `cargo bench -p ad-examples --bench workloads`):

    python3 examples/plot.py [CRITERION_DIR[,CRITERION_DIR…]] [OUTPUT]

CRITERION_DIR defaults to `$CARGO_TARGET_DIR/criterion`, else `target/criterion`;
OUTPUT to `docs/performance.svg`. With several folders (copies of criterion's
output after separate runs, separated by commas), each time is the median of
the runs' estimates, as `examples/table.py` prints them.
"""

import json
import math
import os
import sys

# (label, criterion group, primal bench, vjp bench, hand bench)
WORKLOADS = [
    ("W1 n=1e3", "w1_rosenbrock_1e3", "primal", "vjp", "hand"),
    ("W1 n=1e6", "w1_rosenbrock_1e6", "primal", "vjp", "hand"),
    ("W2 mlp", "w2_mlp", "primal", "vjp", "hand"),
    ("W3 scalar", "w3_scalar", "primal", "vjp", "hand"),
    ("W4 loops", "w4_logsumexp_1e6", "primal_loops", "vjp_loops", "hand"),
    ("W4 detached", "w4_logsumexp_1e6", "primal_detached", "vjp_detached", "hand"),
    ("W4 primitive", "w4_logsumexp_1e6", "primal_primitive", "vjp_primitive", "hand"),
    ("llsq", "gb_llsq", "primal", "vjp", "hand"),
    ("lse", "gb_lse", "primal", "vjp", "hand"),
    ("ode", "gb_ode", "primal", "vjp", "hand"),
    ("gmm", "gb_gmm", "primal", "vjp", "hand"),
    ("lstm", "gb_lstm", "primal", "vjp", "hand"),
]


def estimate(root, group, bench):
    """Criterion's point estimate of the mean, in nanoseconds, or None."""
    path = os.path.join(root, group, bench, "new", "estimates.json")
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)["mean"]["point_estimate"]
    except (OSError, KeyError, ValueError):
        return None


def median(values):
    """The median of a non-empty list (the mean of the middle two if even)."""
    values = sorted(values)
    middle = len(values) // 2
    if len(values) % 2:
        return values[middle]
    return (values[middle - 1] + values[middle]) / 2


def median_estimate(roots, group, bench):
    """The median over `roots` of criterion's mean estimate, or None if a run lacks it."""
    found = [estimate(root, group, bench) for root in roots]
    if not found or None in found:
        return None
    return median(found)


def roots_of(argv):
    """The criterion folders named by the first argument, or the default one."""
    default_root = os.path.join(os.environ.get("CARGO_TARGET_DIR", "target"), "criterion")
    return (argv[1] if len(argv) > 1 else default_root).split(",")


def main(argv):
    roots = roots_of(argv)
    output = argv[2] if len(argv) > 2 else os.path.join("docs", "performance.svg")

    rows = []
    for label, group, primal, vjp, hand in WORKLOADS:
        p, v, h = (median_estimate(roots, group, b) for b in (primal, vjp, hand))
        if None in (p, v, h):
            print(f"skipping {label}: no estimates for {group} in {roots}", file=sys.stderr)
            continue
        rows.append((label, v / p, v / h))
    if not rows:
        print(f"no criterion estimates in {roots}: run the benchmark first", file=sys.stderr)
        return 1

    # Log-scale y axis from 0.25 to the next power of two above the largest ratio.
    top = max(max(r[1], r[2]) for r in rows)
    y_min, y_max = 0.25, 2.0 ** math.ceil(math.log2(max(top, 4.0) * 1.1))
    width, height = 1000, 420
    left, right, upper, lower = 60, 20, 40, 110
    plot_w, plot_h = width - left - right, height - upper - lower

    def y(value):
        frac = (math.log(value) - math.log(y_min)) / (math.log(y_max) - math.log(y_min))
        return upper + plot_h * (1.0 - frac)

    out = []
    add = out.append
    add(
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="12">'
    )
    add(f'<rect width="{width}" height="{height}" fill="white"/>')
    add(
        f'<text x="{width / 2}" y="22" text-anchor="middle" font-size="15">'
        "_vjp time ÷ primal and ÷ hand-written gradient (log scale)</text>"
    )
    # Grid and y labels at powers of two.
    value = y_min
    while value <= y_max * 1.0001:
        yy = y(value)
        add(f'<line x1="{left}" y1="{yy:.1f}" x2="{width - right}" y2="{yy:.1f}" stroke="#ddd"/>')
        label = f"{value:g}"
        add(f'<text x="{left - 6}" y="{yy + 4:.1f}" text-anchor="end">{label}</text>')
        value *= 2.0
    add(
        f'<line x1="{left}" y1="{upper}" x2="{left}" y2="{upper + plot_h}" stroke="black"/>'
    )

    slot = plot_w / len(rows)
    bar = slot * 0.32
    base = y(y_min)
    colors = ("#3b6ea8", "#e08a2c")
    for i, (label, vs_primal, vs_hand) in enumerate(rows):
        x0 = left + i * slot + slot * 0.15
        for j, ratio in enumerate((vs_primal, vs_hand)):
            x = x0 + j * bar
            yy = y(max(ratio, y_min))
            add(
                f'<rect x="{x:.1f}" y="{yy:.1f}" width="{bar:.1f}" height="{base - yy:.1f}" '
                f'fill="{colors[j]}"><title>{label}: {ratio:.2f}</title></rect>'
            )
            add(
                f'<text x="{x + bar / 2:.1f}" y="{yy - 3:.1f}" text-anchor="middle" '
                f'font-size="10">{ratio:.2g}</text>'
            )
        cx = left + i * slot + slot / 2
        add(
            f'<text x="{cx:.1f}" y="{upper + plot_h + 14}" text-anchor="end" '
            f'transform="rotate(-35 {cx:.1f} {upper + plot_h + 14})">{label}</text>'
        )

    targets = [
        (3.0, "#3b6ea8", "÷ primal ≤ 3 (all)"),
        (1.5, "#3b6ea8", "÷ primal ≤ 1.5 (W1, W4)"),
        (1.2, "#e08a2c", "÷ hand ≤ 1.2"),
    ]
    for value, color, _ in targets:
        yy = y(value)
        add(
            f'<line x1="{left}" y1="{yy:.1f}" x2="{width - right}" y2="{yy:.1f}" '
            f'stroke="{color}" stroke-dasharray="6 4" stroke-width="1.5"/>'
        )

    # The legend: the two bars, then the three target lines.
    legend_y = height - 22
    for j, text in enumerate(("_vjp ÷ primal", "_vjp ÷ hand-written")):
        lx = left + j * 140
        add(f'<rect x="{lx}" y="{legend_y - 10}" width="12" height="12" fill="{colors[j]}"/>')
        add(f'<text x="{lx + 18}" y="{legend_y}">{text}</text>')
    for j, (_, color, text) in enumerate(targets):
        lx = left + 300 + j * 220
        add(
            f'<line x1="{lx}" y1="{legend_y - 4}" x2="{lx + 24}" y2="{legend_y - 4}" '
            f'stroke="{color}" stroke-dasharray="6 4" stroke-width="1.5"/>'
        )
        add(f'<text x="{lx + 30}" y="{legend_y}">target {text}</text>')
    add("</svg>")

    with open(output, "w", encoding="utf-8") as f:
        f.write("\n".join(out) + "\n")
    print(f"wrote {output} ({len(rows)} workloads)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
