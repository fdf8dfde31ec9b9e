//! Writes the forms benchmark's spellings (`ad_testkit::forms`) to
//! `examples/src/forms.rs`: `cargo run -p ad-testkit --bin forms`.

use std::path::Path;

fn main() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/src/forms.rs");
    let text =
        ad_testkit::forms::generate(ad_testkit::forms::SEED, ad_testkit::forms::PER_WORKLOAD);
    std::fs::write(&path, text).expect("examples/src/forms.rs is writable");
    println!("wrote {}", path.display());
}
