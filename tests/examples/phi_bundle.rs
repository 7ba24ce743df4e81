//! Writes the PHI corpus for the real-window test (tests/e2e/phi.test.mjs): the small study
//! bundle with every identifying attribute filled, in the directory given as the only argument.
//! Prints `{"bundle": …, "markers": […]}` so the test knows what must never appear.

use neurorater_tests::phi::plant_identifiers;
use neurorater_tests::write_small_bundle;
use std::path::PathBuf;

fn main() {
    let Some(dir) = std::env::args_os().nth(1).map(PathBuf::from) else {
        eprintln!("usage: phi_bundle DIR");
        std::process::exit(2);
    };
    let bundle = write_small_bundle(&dir, false);
    let markers = plant_identifiers(&bundle);
    println!(
        "{}",
        serde_json::json!({ "bundle": bundle, "markers": markers })
    );
}
