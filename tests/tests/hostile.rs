//! Hostile inputs: each is refused with an error that names the file and the reason, in bounded
//! memory and CPU time. Image files are opened in a child process of this test binary that runs
//! under `ulimit -v` (address space) and `ulimit -t` (CPU seconds): an allocation the size a header
//! declares, unbounded recursion or an endless loop kills the child and fails the test; no
//! wall-clock assertions. Bounds are in docs/reliability.md.

use cases::bundle::Problem;
use cases::progress::NoProgress;
use dicom_core::{DataElement, PrimitiveValue, VR};
use dicom_dictionary_std::tags;
use imaging::{self, ImagingErrorKind};
use neurorater_tests::{slice_file, write_small_bundle, Slice};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Address space a child may map (KiB): code, stacks and allocator arenas of the test binary
/// fit with room to spare; a header's declared size (≥ 2 GiB in these files) does not.
const CHILD_ADDRESS_SPACE_KIB: u64 = 1024 * 1024;
/// CPU seconds a child may use (far above the milliseconds these refusals take).
const CHILD_CPU_SECONDS: u64 = 60;
const CHILD_OPERATION: &str = "NEURORATER_HOSTILE_OPERATION";
const CHILD_INPUT: &str = "NEURORATER_HOSTILE_INPUT";

struct ChildOutcome {
    /// The refusal's text (`ok` when the operation succeeded).
    outcome: String,
    peak_rss_kib: u64,
}

/// Runs `operation` on `input` in a child process with bounded address space and CPU time.
fn in_bounded_child(operation: &str, input: &Path) -> ChildOutcome {
    let exe = std::env::current_exe().unwrap();
    let output = Command::new("sh")
        .arg("-c")
        .arg(format!(
            "ulimit -v {CHILD_ADDRESS_SPACE_KIB} && ulimit -t {CHILD_CPU_SECONDS} && exec \"$0\" \"$@\""
        ))
        .arg(exe)
        .args([
            "bounded_child_entry",
            "--exact",
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD_OPERATION, operation)
        .env(CHILD_INPUT, input)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let field = |name: &str| {
        stdout
            .lines()
            .find_map(|l| l.split_once(name).map(|(_, value)| value))
            .map(str::to_owned)
    };
    assert!(
        output.status.success(),
        "{operation} on {} did not finish within {CHILD_ADDRESS_SPACE_KIB} KiB / {CHILD_CPU_SECONDS} s CPU: {}\n{stdout}\n{}",
        input.display(),
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    ChildOutcome {
        outcome: field("OUTCOME: ").expect("the child reports its outcome"),
        peak_rss_kib: field("PEAK_RSS_KIB: ")
            .and_then(|v| v.parse().ok())
            .expect("the child reports its peak RSS"),
    }
}

fn peak_rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .unwrap()
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap()
}

/// The child half of [`in_bounded_child`]; run on its own it has nothing to do and fails.
#[test]
#[ignore = "run by in_bounded_child in a child process under ulimit"]
fn bounded_child_entry() {
    let operation = std::env::var(CHILD_OPERATION).expect("started by in_bounded_child");
    let input = PathBuf::from(std::env::var_os(CHILD_INPUT).expect("started by in_bounded_child"));
    let outcome = match operation.as_str() {
        "probe" => imaging::probe(&input)
            .map(|_| ())
            .map_err(|e| e.to_string()),
        "render" => imaging::render(&input, &Default::default())
            .map(|_| ())
            .map_err(|e| e.to_string()),
        "read_dicom_meta" => imaging::read_dicom_meta(&input)
            .map(|_| ())
            .map_err(|e| e.to_string()),
        "load_dicom_series" => imaging::load_dicom_series(std::slice::from_ref(&input))
            .map(|_| ())
            .map_err(|e| e.to_string()),
        "load_nifti" => imaging::load_nifti(&input)
            .map(|_| ())
            .map_err(|e| e.to_string()),
        "load_bundle" => cases::bundle::load(&input, &NoProgress)
            .map(|_| ())
            .map_err(|problems| problem_text(&problems)),
        other => panic!("unknown operation {other}"),
    };
    println!("OUTCOME: {}", outcome.err().unwrap_or_else(|| "ok".into()));
    println!("PEAK_RSS_KIB: {}", peak_rss_kib());
}

fn problem_text(problems: &[Problem]) -> String {
    problems
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(" | ")
}

fn small_slice() -> Slice<'static> {
    Slice {
        series_uid: "2.25.2000",
        sop_uid: "2.25.30001",
        instance_number: 1,
        z: 0.0,
        rows: 8,
        columns: 8,
        value: 100,
        identified: false,
    }
}

/// The bytes of a valid small slice with its PixelData element (always last) cut off, so a test
/// can append elements by hand with any length field it likes.
fn slice_without_pixel_data() -> Vec<u8> {
    let mut bytes = Vec::new();
    slice_file(&small_slice()).write_all(&mut bytes).unwrap();
    // Explicit VR little endian OW: tag (4) + VR (2) + reserved (2) + length (4), then 8×8×2 bytes.
    let pixel_element = 12 + 8 * 8 * 2;
    let cut = bytes.len() - pixel_element;
    assert_eq!(&bytes[cut..cut + 4], &[0xE0, 0x7F, 0x10, 0x00]);
    bytes.truncate(cut);
    bytes
}

/// An explicit VR little endian element header with a 4-byte length (OB, OW, SQ, UT, UN…).
fn long_element_header(group: u16, element: u16, vr: &[u8; 2], length: u32) -> Vec<u8> {
    let mut header = Vec::new();
    header.extend(group.to_le_bytes());
    header.extend(element.to_le_bytes());
    header.extend(vr);
    header.extend([0, 0]);
    header.extend(length.to_le_bytes());
    header
}

fn write(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    path
}

/// Peak resident memory of a child refusing a hostile file (the test binary alone is ~10 MiB).
const REFUSAL_PEAK_RSS_KIB: u64 = 256 * 1024;

fn assert_refused(outcome: &ChildOutcome, file: &Path, expected: &[&str]) {
    assert_ne!(outcome.outcome, "ok", "{} was accepted", file.display());
    assert!(
        outcome.peak_rss_kib < REFUSAL_PEAK_RSS_KIB,
        "refusing {} took {} KiB",
        file.display(),
        outcome.peak_rss_kib
    );
    assert!(
        outcome.outcome.contains(&file.display().to_string()),
        "the refusal names the file: {}",
        outcome.outcome
    );
    for phrase in expected {
        assert!(
            outcome.outcome.contains(phrase),
            "the refusal says {phrase:?}: {}",
            outcome.outcome
        );
    }
}

#[test]
fn a_dicom_header_declaring_2_to_the_31_frames_of_65535_squared_pixels_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let mut file = slice_file(&small_slice());
    file.put(DataElement::new(
        tags::ROWS,
        VR::US,
        PrimitiveValue::from(65535u16),
    ));
    file.put(DataElement::new(
        tags::COLUMNS,
        VR::US,
        PrimitiveValue::from(65535u16),
    ));
    file.put(DataElement::new(
        tags::NUMBER_OF_FRAMES,
        VR::IS,
        PrimitiveValue::from("2147483648"),
    ));
    let path = dir.path().join("bomb.dcm");
    file.write_to_file(&path).unwrap();
    for operation in ["probe", "render", "load_dicom_series"] {
        let outcome = in_bounded_child(operation, &path);
        assert_refused(&outcome, &path, &["NumberOfFrames 2147483648", "limit"]);
    }
}

#[test]
fn a_dicom_pixel_data_element_declaring_4_gib_in_a_small_file_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let mut bytes = slice_without_pixel_data();
    bytes.extend(long_element_header(0x7FE0, 0x0010, b"OW", 0xFFFF_FFF0));
    bytes.extend([0u8; 64]);
    let path = write(dir.path(), "pixel-4gib.dcm", &bytes);
    for operation in ["probe", "load_dicom_series"] {
        let outcome = in_bounded_child(operation, &path);
        assert_refused(&outcome, &path, &[]);
    }
}

#[test]
fn a_dicom_text_element_declaring_4_gib_is_refused_by_the_header_reader() {
    let dir = tempfile::tempdir().unwrap();
    let mut bytes = slice_without_pixel_data();
    // (0040,A160) TextValue, UT: 4-byte length, read before PixelData by every reader.
    bytes.extend(long_element_header(0x0040, 0xA160, b"UT", 0xFFFF_FFF0));
    bytes.extend(b"ZZ".repeat(32));
    let path = write(dir.path(), "text-4gib.dcm", &bytes);
    for operation in ["read_dicom_meta", "probe"] {
        let outcome = in_bounded_child(operation, &path);
        assert_refused(&outcome, &path, &[]);
    }
}

#[test]
fn an_element_with_an_invalid_vr_is_refused_before_dicom_rs_reads_it_as_a_long_un() {
    // Found by the `dicom` fuzz target: an unknown VR, which dicom-rs reads as UN with a 4-byte
    // length (here 512 MiB) where a walk reading the 2-byte form sees an empty element followed
    // by a valid empty one, (0810,2000) LO, made of the same bytes.
    let dir = tempfile::tempdir().unwrap();
    let mut bytes = slice_without_pixel_data();
    bytes.extend(long_element_header(
        0x0008,
        0x025A,
        &[0x02, 0x00],
        0x2000_0810,
    ));
    bytes.extend(b"LO\0\0");
    let path = write(dir.path(), "invalid-vr.dcm", &bytes);
    for operation in ["read_dicom_meta", "probe", "render", "load_dicom_series"] {
        let outcome = in_bounded_child(operation, &path);
        assert_refused(
            &outcome,
            &path,
            &["(0008,025A)", "invalid value representation"],
        );
    }
}

#[test]
fn a_file_meta_element_with_an_invalid_vr_is_refused_before_dicom_rs_reads_it_as_a_long_un() {
    // Found by the `dicom` fuzz target: the transfer syntax element's VR mutated; dicom-rs took
    // the first bytes of the UID ("1.2.") as a 4-byte length and reserved 775 MB for it.
    let dir = tempfile::tempdir().unwrap();
    let mut bytes = Vec::new();
    slice_file(&small_slice()).write_all(&mut bytes).unwrap();
    let transfer_syntax = bytes
        .windows(6)
        .position(|w| w == b"\x02\x00\x10\x00UI")
        .expect("the file meta group has a transfer syntax");
    bytes[transfer_syntax + 4..transfer_syntax + 6].copy_from_slice(&[0xB0, 0xB6]);
    let path = write(dir.path(), "meta-invalid-vr.dcm", &bytes);
    for operation in ["read_dicom_meta", "probe", "render", "load_dicom_series"] {
        let outcome = in_bounded_child(operation, &path);
        assert_refused(
            &outcome,
            &path,
            &["(0002,0010)", "invalid value representation"],
        );
    }
}

#[test]
fn a_file_meta_group_length_covering_a_foreign_element_moves_the_data_set_for_the_walk_too() {
    // Found by the `dicom` fuzz target (fuzz/regressions/dicom/meta-group-length-hides-element):
    // (0002,0000) says the group runs past the next element, (0003,0012). dicom-rs reads the file
    // meta group by that length and starts the deflated data set after it, where an element
    // declares 1.3 GB, which it reserved; the walk took (0003,0012) for the start of the data
    // set, inflated from there and saw nothing wrong. It now ends the group where dicom-rs does.
    let input = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../fuzz/regressions/dicom/meta-group-length-hides-element");
    let dir = tempfile::tempdir().unwrap();
    let path = write(
        dir.path(),
        "meta-group-length.dcm",
        &std::fs::read(&input).unwrap(),
    );
    for operation in ["read_dicom_meta", "probe", "render", "load_dicom_series"] {
        let outcome = in_bounded_child(operation, &path);
        assert_refused(
            &outcome,
            &path,
            &["(0000,0000)", "invalid value representation"],
        );
    }
}

#[test]
fn an_undefined_length_element_other_than_pixel_data_is_walked_as_the_sequence_dicom_rs_reads() {
    // Found by the `dicom` fuzz target (fuzz/regressions/dicom/undefined-length-ow-is-a-sequence):
    // an OW element of undefined length that is not PixelData. dicom-rs reads it as a sequence of
    // data set items, where an element declared 4 GiB, which it reserved (4.2 GB peak RSS in the
    // release CLI); the walk took it for pixel data fragments and skipped the item unread.
    let dir = tempfile::tempdir().unwrap();
    let mut bytes = slice_without_pixel_data();
    bytes.extend(long_element_header(0x7F2D, 0x0010, b"OW", 0xFFFF_FFFF));
    let inner = long_element_header(0x0009, 0x1000, b"OB", 0xFFFF_FFF0);
    let item_len = (inner.len() + 16) as u32;
    bytes.extend([0xFE, 0xFF, 0x00, 0xE0]);
    bytes.extend(item_len.to_le_bytes());
    bytes.extend(inner);
    bytes.extend([0u8; 16]);
    bytes.extend([0xFE, 0xFF, 0xDD, 0xE0, 0, 0, 0, 0]);
    let path = write(dir.path(), "undefined-ow.dcm", &bytes);
    for operation in ["read_dicom_meta", "probe", "render", "load_dicom_series"] {
        let outcome = in_bounded_child(operation, &path);
        assert_refused(
            &outcome,
            &path,
            &["element (0009,1000) declares 4294967280 bytes"],
        );
    }
}

/// `depth` sequences of undefined length, each in an item of the one around it; closed properly
/// when `closed`, otherwise the file ends inside the innermost.
fn nested_sequences(depth: usize, closed: bool) -> Vec<u8> {
    let mut bytes = slice_without_pixel_data();
    // (0040,0275) RequestAttributesSequence.
    let sequence = long_element_header(0x0040, 0x0275, b"SQ", 0xFFFF_FFFF);
    let item_start = [0xFE, 0xFF, 0x00, 0xE0, 0xFF, 0xFF, 0xFF, 0xFF];
    for _ in 0..depth {
        bytes.extend(&sequence);
        bytes.extend(item_start);
    }
    if closed {
        let item_end = [0xFE, 0xFF, 0x0D, 0xE0, 0, 0, 0, 0];
        let sequence_end = [0xFE, 0xFF, 0xDD, 0xE0, 0, 0, 0, 0];
        for _ in 0..depth {
            bytes.extend(item_end);
            bytes.extend(sequence_end);
        }
    }
    bytes
}

#[test]
fn deeply_nested_dicom_sequences_are_read_or_refused_without_exhausting_the_stack() {
    let dir = tempfile::tempdir().unwrap();
    for (name, closed) in [("nested-closed.dcm", true), ("nested-open.dcm", false)] {
        let path = write(dir.path(), name, &nested_sequences(100_000, closed));
        for operation in ["read_dicom_meta", "probe"] {
            let outcome = in_bounded_child(operation, &path);
            // No pixel data follows the sequences: probe must refuse; the header reader may
            // accept the closed nesting (it is valid DICOM) but must not crash on either.
            if operation == "probe" || !closed {
                assert_refused(&outcome, &path, &[]);
            }
        }
    }
}

#[test]
fn sequences_nested_to_the_depth_limit_are_read_on_a_test_thread_stack() {
    // 64 is the documented limit (docs/reliability.md); this runs on a 2 MiB test thread, the
    // smallest stack the app's command threads have.
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), "nested-64.dcm", &nested_sequences(64, true));
    let meta = imaging::read_dicom_meta(&path).unwrap();
    assert_eq!(meta.sop_instance_uid, "2.25.30001");
    let path = write(dir.path(), "nested-65.dcm", &nested_sequences(65, true));
    let refusal = imaging::read_dicom_meta(&path).unwrap_err().to_string();
    assert!(refusal.contains("nested more than 64 deep"), "{refusal}");
}

/// A NIfTI-1 header (little endian) with the given dims and datatype, voxels at byte 352.
fn nifti1_header(dim: [i16; 8], datatype: i16, bitpix: i16) -> Vec<u8> {
    let mut header = vec![0u8; 352];
    header[0..4].copy_from_slice(&348i32.to_le_bytes());
    for (i, d) in dim.iter().enumerate() {
        header[40 + 2 * i..42 + 2 * i].copy_from_slice(&d.to_le_bytes());
    }
    header[70..72].copy_from_slice(&datatype.to_le_bytes());
    header[72..74].copy_from_slice(&bitpix.to_le_bytes());
    for i in 0..8 {
        header[76 + 4 * i..80 + 4 * i].copy_from_slice(&1f32.to_le_bytes());
    }
    header[108..112].copy_from_slice(&352f32.to_le_bytes());
    header[112..116].copy_from_slice(&1f32.to_le_bytes()); // scl_slope
    header[344..348].copy_from_slice(b"n+1\0");
    header
}

#[test]
fn a_nifti_header_declaring_more_than_the_decoded_limit_is_refused_plain_and_gzipped() {
    let dir = tempfile::tempdir().unwrap();
    let header = nifti1_header([3, 32767, 32767, 32767, 1, 1, 1, 1], 4, 16);
    let plain = write(dir.path(), "bomb.nii", &header);
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(&header).unwrap();
    // A gzip bomb body: 64 MiB of zeros compress to about 64 KiB.
    let zeros = vec![0u8; 1 << 20];
    for _ in 0..64 {
        gz.write_all(&zeros).unwrap();
    }
    let gzipped = write(dir.path(), "bomb.nii.gz", &gz.finish().unwrap());
    for path in [&plain, &gzipped] {
        for operation in ["probe", "load_nifti"] {
            let outcome = in_bounded_child(operation, path);
            assert_refused(&outcome, path, &["32767", "limit"]);
        }
    }
}

#[test]
fn a_nifti_declaring_just_under_the_limit_with_no_voxels_is_refused_as_truncated() {
    let dir = tempfile::tempdir().unwrap();
    // 1024 × 1024 × 1000 int16 = 2 097 152 000 bytes: under the 2 GiB limit, above the child's
    // whole address space, so the data may not be allocated before it is read.
    let mut bytes = nifti1_header([3, 1024, 1024, 1000, 1, 1, 1, 1], 4, 16);
    bytes.extend([0u8; 16]);
    let path = write(dir.path(), "short.nii", &bytes);
    let outcome = in_bounded_child("probe", &path);
    assert_refused(&outcome, &path, &["truncated"]);
    assert_eq!(
        imaging::probe(&path).unwrap_err().kind,
        ImagingErrorKind::Truncated
    );
}

// ---- bundles -------------------------------------------------------------------------------

fn bundle() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let bundle = write_small_bundle(&dir.path().join("bundle"), false);
    (dir, bundle)
}

fn load_problems(bundle: &Path) -> String {
    match cases::bundle::load(bundle, &NoProgress) {
        Ok(_) => panic!("{} was accepted", bundle.display()),
        Err(problems) => problem_text(&problems),
    }
}

fn set_series_path(bundle: &Path, path: &str) {
    let case = bundle.join("cases/ms-01/case.json");
    let text = std::fs::read_to_string(&case).unwrap();
    let text = text.replacen(r#""path": "flair""#, &format!(r#""path": {path:?}"#), 1);
    std::fs::write(case, text).unwrap();
}

#[test]
fn series_paths_leaving_the_bundle_are_refused_with_the_field() {
    let outside = tempfile::tempdir().unwrap();
    std::fs::create_dir(outside.path().join("series")).unwrap();
    for path in ["../../outside", "/etc", "flair/../../../x"] {
        let (_dir, bundle) = bundle();
        set_series_path(&bundle, path);
        let problems = load_problems(&bundle);
        assert!(
            problems.contains("cases/ms-01/case.json:")
                && problems.contains("series[0].path")
                && problems.contains("must be a relative path inside the bundle"),
            "{path}: {problems}"
        );
    }
    let (_dir, bundle) = bundle();
    std::os::unix::fs::symlink(
        outside.path().join("series"),
        bundle.join("cases/ms-01/linked"),
    )
    .unwrap();
    set_series_path(&bundle, "linked");
    let problems = load_problems(&bundle);
    assert!(
        problems.contains("series[0].path") && problems.contains("leads outside the bundle"),
        "{problems}"
    );
}

#[test]
fn an_image_symlinked_from_outside_the_bundle_is_refused_by_name() {
    let outside = tempfile::tempdir().unwrap();
    let (_dir, bundle) = bundle();
    let flair = bundle.join("cases/ms-01/flair");
    std::fs::rename(flair.join("a.dcm"), outside.path().join("a.dcm")).unwrap();
    std::os::unix::fs::symlink(outside.path().join("a.dcm"), flair.join("a.dcm")).unwrap();
    let problems = load_problems(&bundle);
    assert!(
        problems.contains("cases/ms-01/flair/a.dcm") && problems.contains("outside the bundle"),
        "{problems}"
    );
}

#[test]
fn bundle_text_files_symlinked_from_outside_are_refused() {
    let outside = tempfile::tempdir().unwrap();
    for rel in ["study.json", "cases/ms-01/case.json", "responses.jsonl"] {
        let (_dir, bundle) = bundle();
        let target = outside.path().join(rel.replace('/', "_"));
        std::fs::rename(bundle.join(rel), &target).unwrap();
        std::os::unix::fs::symlink(&target, bundle.join(rel)).unwrap();
        let problems = load_problems(&bundle);
        assert!(
            problems.contains(&format!("{rel}: -: leads outside the bundle")),
            "{rel}: {problems}"
        );
    }
}

#[test]
fn invalid_utf8_is_refused_with_its_line() {
    let (_dir, bundle) = bundle();
    let path = bundle.join("responses.jsonl");
    let mut bytes = std::fs::read(&path).unwrap();
    let second_line = bytes.iter().position(|&b| b == b'\n').unwrap() + 1;
    bytes.splice(second_line..second_line, [0xFF, 0xFE, b'x']);
    std::fs::write(&path, bytes).unwrap();
    let problems = load_problems(&bundle);
    assert!(
        problems.contains("responses.jsonl:2: -: is not valid UTF-8"),
        "{problems}"
    );
}

#[test]
fn deeply_nested_json_is_refused_with_the_file_and_line() {
    let (_dir, bundle) = bundle();
    let case = bundle.join("cases/ms-01/case.json");
    let text = std::fs::read_to_string(&case).unwrap();
    let nested = format!("{}1{}", "[".repeat(100_000), "]".repeat(100_000));
    let text = text.replacen(r#""EDSS": 2.0"#, &format!(r#""EDSS": {nested}"#), 1);
    std::fs::write(&case, text).unwrap();
    let problems = load_problems(&bundle);
    assert!(
        problems.contains("cases/ms-01/case.json:7:") && problems.contains("recursion limit"),
        "{problems}"
    );
}

#[test]
fn a_response_line_longer_than_the_limit_is_refused_with_its_line() {
    let (_dir, bundle) = bundle();
    let path = bundle.join("responses.jsonl");
    let mut text = std::fs::read_to_string(&path).unwrap();
    let answer = "x".repeat(cases::bundle::MAX_LINE_BYTES + 1);
    text.push_str(&format!(
        r#"{{"case_id": "ms-01", "task_id": "dx", "model": "vlm-c", "sample": 0, "answer": "{answer}"}}"#
    ));
    text.push('\n');
    std::fs::write(&path, text).unwrap();
    let problems = load_problems(&bundle);
    assert!(
        problems.contains("responses.jsonl:6: -: the line is")
            && problems.contains(&cases::bundle::MAX_LINE_BYTES.to_string()),
        "{problems}"
    );
}

#[test]
fn bundle_text_files_larger_than_the_limit_are_refused_without_being_read() {
    for (rel, limit) in [
        ("responses.jsonl", cases::bundle::MAX_JSONL_BYTES),
        ("cases/ms-01/case.json", cases::bundle::MAX_JSON_BYTES),
    ] {
        let (_dir, bundle) = bundle();
        // A sparse file: its declared size costs no disk, and reading it would cost the memory
        // the child does not have.
        std::fs::OpenOptions::new()
            .append(true)
            .open(bundle.join(rel))
            .unwrap()
            .set_len(limit + 1)
            .unwrap();
        let outcome = in_bounded_child("load_bundle", &bundle);
        assert!(
            outcome
                .outcome
                .contains(&format!("{rel}: -: is {} bytes", limit + 1))
                && outcome.outcome.contains(&limit.to_string()),
            "{}",
            outcome.outcome
        );
        assert!(
            outcome.peak_rss_kib < REFUSAL_PEAK_RSS_KIB,
            "{}",
            outcome.peak_rss_kib
        );
    }
}
