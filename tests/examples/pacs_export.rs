//! Writes the PACS export of `neurorater_tests::pacs_export` (the scaffold tests' fixture) into
//! the directory given as the only argument, to try `neurorater scaffold` on by hand or in the
//! real window. Prints `{"root": …, "markers": […]}`.

use neurorater_tests::pacs_export::write_pacs_export;
use std::path::PathBuf;

fn main() {
    let Some(dir) = std::env::args_os().nth(1).map(PathBuf::from) else {
        eprintln!("usage: pacs_export DIR");
        std::process::exit(2);
    };
    let export = write_pacs_export(&dir);
    println!(
        "{}",
        serde_json::json!({ "root": export.root, "markers": export.markers })
    );
}
