//! Writes the scale benchmark's export (scripts/bench/scaffold_scale.sh):
//! `scale_export DIR CASES SERIES SLICES SIZE`, e.g. `DIR 100 4 150 256` for 60,000 files.

use neurorater_tests::pacs_export::write_scale_export;
use std::path::PathBuf;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let numbers: Option<Vec<u32>> = args.iter().skip(1).map(|a| a.parse().ok()).collect();
    let (Some(dir), Some(&[cases, series, slices, size])) = (args.first(), numbers.as_deref())
    else {
        eprintln!("usage: scale_export DIR CASES SERIES SLICES SIZE");
        std::process::exit(2);
    };
    let Ok(size) = u16::try_from(size) else {
        eprintln!("SIZE must be at most 65535");
        std::process::exit(2);
    };
    let files = write_scale_export(&PathBuf::from(dir), cases, series, slices, size);
    println!("{files}");
}
