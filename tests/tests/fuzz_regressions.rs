//! Replays every input in `fuzz/regressions/<target>/` (crashes the fuzzer found, minimised, and
//! the hostile files of docs/reliability.md) through the fuzz targets' own entry points, on
//! stable, so CI catches a regression without nightly or cargo-fuzz.

use neurorater_tests::fuzz_entry::TARGETS;
use std::path::PathBuf;

fn regressions() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../fuzz/regressions")
}

#[test]
fn every_regression_input_is_handled_without_a_panic() {
    let mut replayed = 0;
    for entry in std::fs::read_dir(regressions()).expect("fuzz/regressions exists") {
        let folder = entry.unwrap().path();
        let name = folder.file_name().unwrap().to_string_lossy().into_owned();
        let (_, run) = TARGETS
            .iter()
            .find(|(target, _)| *target == name)
            .unwrap_or_else(|| panic!("fuzz/regressions/{name} names no fuzz target"));
        for input in std::fs::read_dir(&folder).unwrap() {
            let input = input.unwrap().path();
            let bytes = std::fs::read(&input).unwrap();
            // A panic fails this test and names the file; an abort ends the process, and
            // cargo test reports which test was running.
            eprintln!("replaying {}", input.display());
            run(&bytes);
            replayed += 1;
        }
    }
    assert!(replayed > 0, "fuzz/regressions holds no inputs");
}
