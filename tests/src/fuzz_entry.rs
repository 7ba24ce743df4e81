//! The entry points the fuzz targets in `fuzz/` drive, shared with the stable test that replays
//! `fuzz/regressions/` so CI re-checks every input the fuzzer ever found without nightly.
//!
//! Every entry point takes arbitrary bytes, goes through the same public functions the CLI and the
//! app call (files on disk, because that is how the product reads them), and returns nothing: the
//! only failure is a panic, an abort, a hang or running out of memory.

use cases::progress::NoProgress;
use imaging::{self, RenderOptions};
use std::cell::RefCell;
use std::path::{Path, PathBuf};
use tempfile::TempDir;

/// A fuzz target's entry point: arbitrary bytes in, a panic or abort the only failure.
pub type Target = fn(&[u8]);

/// The fuzz targets, by the name of their `fuzz/fuzz_targets/<name>.rs` and
/// `fuzz/regressions/<name>/` folder.
pub const TARGETS: &[(&str, Target)] = &[
    ("dicom", dicom),
    ("nifti", nifti),
    ("study_bundle", study_bundle),
    ("bundle_jsonl", bundle_jsonl),
    ("ratings_csv", ratings_csv),
];

/// Bundles and CSV tables from the fuzzer are split into their files at this byte.
pub const FILE_SEPARATOR: u8 = 0;

thread_local! {
    static SCRATCH: RefCell<Option<(TempDir, PathBuf)>> = const { RefCell::new(None) };
}

/// A per-thread folder holding a valid small bundle ([`crate::write_small_bundle`]); fuzzed files
/// overwrite its text files, the images stay.
fn with_scratch<R>(run: impl FnOnce(&Path) -> R) -> R {
    SCRATCH.with(|cell| {
        let mut slot = cell.borrow_mut();
        let (_, bundle) = slot.get_or_insert_with(|| {
            let dir = tempfile::tempdir().expect("temporary folder for fuzz inputs");
            let bundle = crate::write_small_bundle(&dir.path().join("bundle"), false);
            (dir, bundle)
        });
        run(bundle)
    })
}

fn as_image_file(bytes: &[u8], run: impl FnOnce(&Path)) {
    with_scratch(|bundle| {
        let path = bundle.parent().expect("scratch root").join("input.img");
        std::fs::write(&path, bytes).expect("write fuzz input");
        run(&path);
    })
}

fn decode_everything(path: &Path) {
    if imaging::probe(path).is_err() {
        return;
    }
    for frame in [None, Some(1)] {
        let _ = imaging::render(
            path,
            &RenderOptions {
                frame,
                window: None,
            },
        );
    }
    let _ = imaging::render(
        path,
        &RenderOptions {
            frame: None,
            window: Some((40.0, 80.0)),
        },
    );
}

/// A DICOM file: probe, render (default and explicit window), header, and as a one-file series.
pub fn dicom(bytes: &[u8]) {
    as_image_file(bytes, |path| {
        decode_everything(path);
        let _ = imaging::read_dicom_meta(path);
        if let Ok(volume) = imaging::load_dicom_series(&[path.to_owned()]) {
            let _ = volume.to_nifti1_bytes();
        }
    });
}

/// A NIfTI-1/2 file, plain or gzip: probe, render, and as the viewer's volume.
pub fn nifti(bytes: &[u8]) {
    as_image_file(bytes, |path| {
        decode_everything(path);
        if let Ok(volume) = imaging::load_nifti(path) {
            let _ = volume.to_nifti1_bytes();
        }
    });
}

fn split_files(bytes: &[u8]) -> (&[u8], &[u8]) {
    match bytes.iter().position(|&b| b == FILE_SEPARATOR) {
        Some(at) => (&bytes[..at], &bytes[at + 1..]),
        None => (bytes, &[]),
    }
}

fn load_bundle_with(study: &[u8], case: &[u8], responses: &[u8], grader: &[u8]) {
    with_scratch(|bundle| {
        let write = |rel: &str, bytes: &[u8]| {
            std::fs::write(bundle.join(rel), bytes).expect("write fuzz input");
        };
        write(cases::bundle::STUDY_FILE, study);
        write("cases/ms-01/case.json", case);
        write(cases::bundle::RESPONSES_FILE, responses);
        write(cases::bundle::GRADER_FILE, grader);
        let _ = cases::bundle::load(bundle, &NoProgress);
    })
}

/// `study.json`, a NUL byte, then `cases/ms-01/case.json` of a bundle whose images, responses and
/// grader scores are valid.
pub fn study_bundle(bytes: &[u8]) {
    let (study, case) = split_files(bytes);
    load_bundle_with(
        study,
        case,
        crate::RESPONSES_JSONL.as_bytes(),
        crate::GRADER_JSONL.as_bytes(),
    );
}

/// `responses.jsonl`, a NUL byte, then `grader.jsonl` of a bundle whose study and case are valid.
pub fn bundle_jsonl(bytes: &[u8]) {
    let (responses, grader) = split_files(bytes);
    load_bundle_with(
        crate::STUDY_JSON.as_bytes(),
        crate::CASE_JSON.as_bytes(),
        responses,
        grader,
    );
}

/// The long ratings CSV of `neurorater calibrate --csv`; a table that parses is reported on
/// (JSON, HTML and CSV tables) with the first rater as the grader and a few bootstrap resamples.
pub fn ratings_csv(bytes: &[u8]) {
    // The CLI reads the file with read_to_string, which refuses invalid UTF-8 before parsing.
    let Ok(text) = std::str::from_utf8(bytes) else {
        return;
    };
    let Ok(table) = calibration::csv_input::parse_long_csv(text, "ratings.csv") else {
        return;
    };
    // The statistics are fuzzed for panics on odd values, not for throughput on big tables.
    if table.scores.len() > 200 {
        return;
    }
    let grader = table.scores.first().map(|s| s.rater.clone());
    let input = calibration::input::CalibrationInput {
        table,
        ..Default::default()
    };
    let options = calibration::input::ReportOptions {
        grader,
        bootstrap_resamples: 10,
        // The fit is replayed; its intervals' hundreds of refits a table would make this
        // replay minutes long (the budget in `variance` keeps a flat profile bounded).
        variance_component_intervals: false,
        ..Default::default()
    };
    if let Ok(report) =
        calibration::report::build_report(&input, &options, &calibration::bootstrap::NoProgress)
    {
        let _ = calibration::tables::to_json(&report);
        let _ = calibration::tables::to_csv_tables(&report);
        let _ = calibration::html::to_html(&report);
    }
}
