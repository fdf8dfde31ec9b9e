//! Compile cost, end to end (issue 21): how long `cargo build` and
//! `cargo build --release` take on a crate holding one generated long
//! function, with and without `#[differentiate]`, split into the macro's
//! expansion and the rest of rustc's work, from rustc's own `-Z time-passes`.
//!
//! ```text
//! cargo run -p ad-testkit --release --bin compile-cost -- [SIZE…] [dev|release] [--write-docs]
//! ```
//!
//! Builds a scratch crate under `target/compile-cost/` that depends on
//! `ad-runtime` as a user's does, so the macro is compiled the way cargo
//! compiles it for that profile. `-Z time-passes` needs `RUSTC_BOOTSTRAP=1`,
//! which this sets for the scratch crate only: a measurement, not a build
//! users make. Prints a Markdown table and writes an SVG plot per profile
//! next to it (`docs/compile-cost-dev.svg`, `…-release.svg` when run from the
//! workspace root with `--write-docs`).

use std::fmt::Write as _;
use std::path::Path;
use std::process::Command;

use ad_testkit::long::Family;

/// A family of long functions, from its number of statements.
type MakeFamily = fn(usize) -> Family;

/// One build's times, in seconds, from `-Z time-passes`.
#[derive(Clone, Copy, Debug)]
struct Times {
    /// `expand_crate`: macro expansion, the attribute's work.
    expand: f64,
    /// `total`: all of rustc on the crate.
    total: f64,
}

/// One row of the table.
struct Row {
    family: &'static str,
    n: usize,
    profile: &'static str,
    alone: Times,
    differentiated: Times,
}

impl Row {
    /// rustc's time on the generated code: the whole build but the expansion.
    fn rustc_on_expansion(&self) -> f64 {
        self.differentiated.total - self.differentiated.expand
    }

    fn ratio(&self) -> f64 {
        self.rustc_on_expansion() / self.alone.total
    }

    fn expand_ms_per_1000(&self) -> f64 {
        self.differentiated.expand * 1000.0 / (self.n as f64 / 1000.0)
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let write_docs = args.iter().any(|arg| arg == "--write-docs");
    let mut sizes: Vec<usize> = args
        .iter()
        .filter_map(|arg| arg.replace('_', "").parse().ok())
        .collect();
    if sizes.is_empty() {
        sizes = vec![100, 1_000, 5_000, 20_000];
    }
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("ad-testkit is in the workspace")
        .to_path_buf();
    let scratch = workspace.join("target").join("compile-cost");
    write_crate(&scratch, &workspace);

    let families: [(&str, MakeFamily); 3] = [
        ("straight line", |n| Family::StraightLine { n }),
        ("in a loop", |n| Family::InALoop { n }),
        ("in branches", |n| Family::InBranches { n }),
    ];
    let chosen: Vec<&'static str> = ["dev", "release"]
        .into_iter()
        .filter(|profile| args.iter().any(|arg| arg == profile))
        .collect();
    let profiles = if chosen.is_empty() {
        vec!["dev", "release"]
    } else {
        chosen
    };
    let mut rows = Vec::new();
    for &profile in &profiles {
        // Dependencies first, so that no row pays for them.
        build(&scratch, profile, "pub fn warm_up() {}\n");
        for (family, make) in families {
            for &n in &sizes {
                let source = make(n).source("f").replacen("fn f", "pub fn f", 1);
                let alone = build(&scratch, profile, &source);
                let differentiated = build(
                    &scratch,
                    profile,
                    &format!("#[::ad_runtime::differentiate]\n{source}"),
                );
                let row = Row {
                    family,
                    n,
                    profile,
                    alone,
                    differentiated,
                };
                eprintln!(
                    "{profile:7} {family:13} {n:6}: expansion {:.3} s, rustc on it {:.2} s, alone {:.2} s ({:.2}×)",
                    row.differentiated.expand,
                    row.rustc_on_expansion(),
                    row.alone.total,
                    row.ratio()
                );
                rows.push(row);
            }
        }
    }
    println!("{}", table(&rows));
    if write_docs {
        for &profile in &profiles {
            let path = workspace
                .join("docs")
                .join(format!("compile-cost-{profile}.svg"));
            std::fs::write(&path, plot(&rows, profile)).expect("the plot is written");
            eprintln!("wrote {}", path.display());
        }
    }
}

/// The scratch crate: a library depending on `ad-runtime` by path.
fn write_crate(dir: &Path, workspace: &Path) {
    std::fs::create_dir_all(dir.join("src")).expect("the scratch crate's folder");
    let manifest = format!(
        "[package]\nname = \"compile-cost\"\nversion = \"0.0.0\"\nedition = \"2024\"\npublish = false\n\n\
         [dependencies]\nad-runtime = {{ path = {:?} }}\n\n[workspace]\n",
        workspace.join("ad-runtime")
    );
    std::fs::write(dir.join("Cargo.toml"), manifest).expect("the manifest is written");
}

/// Builds the scratch crate's library holding `source` and returns rustc's
/// times for it.
fn build(dir: &Path, profile: &str, source: &str) -> Times {
    std::fs::write(dir.join("src").join("lib.rs"), source).expect("the source is written");
    let output = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()))
        .current_dir(dir)
        .env("RUSTC_BOOTSTRAP", "1")
        .env("CARGO_TARGET_DIR", dir.join("target"))
        .args(["rustc", "--quiet", "--lib", "--profile", profile])
        .args(["--", "-Z", "time-passes"])
        .output()
        .expect("cargo runs");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "the build failed:\n{stderr}");
    let pass = |name: &str| -> f64 {
        stderr
            .lines()
            .find(|line| line.split_whitespace().last() == Some(name))
            .and_then(|line| line.strip_prefix("time:"))
            .and_then(|rest| rest.split(';').next())
            .and_then(|seconds| seconds.trim().parse().ok())
            .unwrap_or_else(|| panic!("no `{name}` in rustc's time-passes:\n{stderr}"))
    };
    Times {
        expand: pass("expand_crate"),
        total: pass("total"),
    }
}

fn table(rows: &[Row]) -> String {
    let mut out = String::from(
        "| profile | function | statements | expansion | per 1,000 statements | rustc on the expansion | the function alone | ratio |\n\
         |---|---|---:|---:|---:|---:|---:|---:|\n",
    );
    for row in rows {
        writeln!(
            out,
            "| {} | {} | {} | {:.0} ms | {:.0} ms | {:.2} s | {:.2} s | {:.1}× |",
            row.profile,
            row.family,
            row.n,
            row.differentiated.expand * 1000.0,
            row.expand_ms_per_1000(),
            row.rustc_on_expansion(),
            row.alone.total,
            row.ratio(),
        )
        .unwrap();
    }
    out
}

/// A log-log plot of build time against statements for one profile: a solid
/// line per family with `#[differentiate]` (expansion included), dashed for
/// the function alone.
fn plot(rows: &[Row], profile: &str) -> String {
    let rows: Vec<&Row> = rows.iter().filter(|row| row.profile == profile).collect();
    let (width, height, margin) = (640.0, 400.0, 60.0);
    let xs: Vec<f64> = rows.iter().map(|row| (row.n as f64).log10()).collect();
    let ys: Vec<f64> = rows
        .iter()
        .flat_map(|row| [row.alone.total, row.differentiated.total])
        .map(f64::log10)
        .collect();
    let (x0, x1) = bounds(&xs);
    let (y0, y1) = bounds(&ys);
    let px = |x: f64| margin + (x - x0) / (x1 - x0).max(1e-9) * (width - 2.0 * margin);
    let py = |y: f64| height - margin - (y - y0) / (y1 - y0).max(1e-9) * (height - 2.0 * margin);
    let mut svg = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{height}\" font-family=\"sans-serif\" font-size=\"12\">\n\
         <rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n\
         <text x=\"{}\" y=\"20\" text-anchor=\"middle\">cargo build{}: seconds of rustc against statements (log-log)</text>\n",
        width / 2.0,
        if profile == "release" {
            " --release"
        } else {
            ""
        }
    );
    // Axes, with a tick at each power of ten and each measured size.
    let axis = format!(
        "<path d=\"M{m} {t} V{b} H{r}\" stroke=\"black\" fill=\"none\"/>\n",
        m = margin,
        t = margin,
        b = height - margin,
        r = width - margin
    );
    svg.push_str(&axis);
    let mut sizes: Vec<usize> = rows.iter().map(|row| row.n).collect();
    sizes.sort_unstable();
    sizes.dedup();
    for n in sizes {
        let x = px((n as f64).log10());
        writeln!(
            svg,
            "<text x=\"{x:.1}\" y=\"{:.1}\" text-anchor=\"middle\">{n}</text>",
            height - margin + 16.0
        )
        .unwrap();
    }
    let mut decade = y0.floor();
    while decade <= y1.ceil() {
        if decade >= y0 - 1e-9 && decade <= y1 + 1e-9 {
            let y = py(decade);
            writeln!(
                svg,
                "<text x=\"{:.1}\" y=\"{:.1}\" text-anchor=\"end\">{} s</text>\n<path d=\"M{margin} {y:.1} H{:.1}\" stroke=\"#ddd\"/>",
                margin - 6.0,
                y + 4.0,
                10f64.powf(decade),
                width - margin
            )
            .unwrap();
        }
        decade += 1.0;
    }
    let colours = ["#1f77b4", "#d62728", "#2ca02c"];
    let mut families: Vec<&str> = rows.iter().map(|row| row.family).collect();
    families.dedup();
    for (k, family) in families.iter().enumerate() {
        let colour = colours[k % colours.len()];
        let of: Vec<&&Row> = rows.iter().filter(|row| row.family == *family).collect();
        for (dashed, pick) in [
            (
                false,
                (|row: &Row| row.differentiated.total) as fn(&Row) -> f64,
            ),
            (true, |row: &Row| row.alone.total),
        ] {
            let points: Vec<String> = of
                .iter()
                .map(|row| {
                    format!(
                        "{:.1},{:.1}",
                        px((row.n as f64).log10()),
                        py(pick(row).log10())
                    )
                })
                .collect();
            writeln!(
                svg,
                "<polyline points=\"{}\" fill=\"none\" stroke=\"{colour}\" stroke-width=\"2\"{}/>",
                points.join(" "),
                if dashed {
                    " stroke-dasharray=\"5,4\""
                } else {
                    ""
                }
            )
            .unwrap();
        }
        writeln!(
            svg,
            "<text x=\"{:.1}\" y=\"{:.1}\" fill=\"{colour}\">{family}</text>",
            margin + 10.0,
            margin + 16.0 * (k as f64 + 1.0)
        )
        .unwrap();
    }
    writeln!(
        svg,
        "<text x=\"{:.1}\" y=\"{:.1}\">solid: with #[differentiate]; dashed: the function alone</text>\n</svg>",
        margin + 10.0,
        margin + 16.0 * (families.len() as f64 + 1.0)
    )
    .unwrap();
    svg
}

fn bounds(values: &[f64]) -> (f64, f64) {
    let lo = values.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    (lo, hi)
}
