//! Replays every input in `fuzz/regressions/<target>/` (crashes and slow inputs the fuzzer found)
//! and in `fuzz/corpus-min/<target>/` (the corpus the fuzzer grew, minimised with `cargo fuzz
//! cmin`) through the fuzz targets' own entry points, on stable, so CI catches a regression
//! without nightly or cargo-fuzz.

use neurorater_tests::fuzz_entry::TARGETS;
use std::path::PathBuf;

fn fuzz_folder(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../fuzz")
        .join(name)
}

/// Runs every input under `fuzz/<folder>/<target>/`; returns how many there were.
fn replay(folder: &str) -> usize {
    let mut replayed = 0;
    let root = fuzz_folder(folder);
    for entry in std::fs::read_dir(&root).unwrap_or_else(|e| panic!("fuzz/{folder}: {e}")) {
        let folder_path = entry.unwrap().path();
        let name = folder_path
            .file_name()
            .unwrap()
            .to_string_lossy()
            .into_owned();
        let (_, run) = TARGETS
            .iter()
            .find(|(target, _)| *target == name)
            .unwrap_or_else(|| panic!("fuzz/{folder}/{name} names no fuzz target"));
        for input in std::fs::read_dir(&folder_path).unwrap() {
            let input = input.unwrap().path();
            let bytes = std::fs::read(&input).unwrap();
            // A panic fails this test and names the file; an abort ends the process, and
            // cargo test reports which test was running.
            eprintln!("replaying {}", input.display());
            run(&bytes);
            replayed += 1;
        }
    }
    replayed
}

#[test]
fn every_regression_input_is_handled_without_a_panic() {
    assert!(
        replay("regressions") > 0,
        "fuzz/regressions holds no inputs"
    );
}

#[test]
fn every_input_of_the_minimised_corpus_is_handled_without_a_panic() {
    // Every target has a corpus: a missing one would mean it was never fuzzed or never committed.
    for (target, _) in TARGETS {
        let folder = fuzz_folder("corpus-min").join(target);
        assert!(
            std::fs::read_dir(&folder).is_ok_and(|mut entries| entries.next().is_some()),
            "{} holds no inputs",
            folder.display()
        );
    }
    assert!(replay("corpus-min") > 0);
}
