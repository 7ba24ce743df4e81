//! `series_volume`'s pipeline on real files: a DICOM from pydicom's test data, checked against the
//! facts pydicom itself reported (`imaging/tests/data/expected.json`, written by
//! `scripts/reference/imaging/make_expected.py`).

use cases::app::series::decode_verified;
use cases::model::SeriesKind;
use cases::store::{SeriesFile, SeriesFiles};
use neurorater_app::error::{CommandError, ErrorCode};
use sha2::{Digest, Sha256};
use std::path::PathBuf;

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../imaging/tests/data");
/// NIfTI-1: a 348-byte header, then 4 extension bytes, so voxels start at 352.
const NIFTI1_VOX_OFFSET: usize = 352;
/// Window edges are floats derived from the DICOM window; one grey level of slack.
const WINDOW_EDGE_TOLERANCE: f32 = 1.0;

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(FIXTURES).join(name)
}

fn pydicom_probe(name: &str) -> serde_json::Value {
    let text = std::fs::read_to_string(fixture("expected.json")).expect("expected.json readable");
    let expected: serde_json::Value = serde_json::from_str(&text).expect("expected.json is JSON");
    expected["files"]
        .as_array()
        .expect("files array")
        .iter()
        .find(|f| f["file"] == name)
        .unwrap_or_else(|| panic!("{name} in expected.json"))["probe"]
        .clone()
}

fn series_of(name: &str, sha256: String) -> SeriesFiles {
    SeriesFiles {
        kind: SeriesKind::Dicom,
        label: "T2".into(),
        files: vec![SeriesFile {
            path: fixture(name),
            sha256,
        }],
    }
}

fn sha256_of(name: &str) -> String {
    let bytes = std::fs::read(fixture(name)).expect("fixture readable");
    Sha256::digest(&bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn i16_at(bytes: &[u8], offset: usize) -> i16 {
    i16::from_le_bytes([bytes[offset], bytes[offset + 1]])
}

fn f32_at(bytes: &[u8], offset: usize) -> f32 {
    f32::from_le_bytes(bytes[offset..offset + 4].try_into().expect("4 bytes"))
}

#[test]
fn a_dicom_series_arrives_as_nifti1_with_pydicoms_geometry_and_window() {
    let name = "MR_small.dcm";
    let probe = pydicom_probe(name);
    let bytes = decode_verified(&series_of(name, sha256_of(name)))
        .expect("decodes")
        .to_nifti1_bytes();

    assert_eq!(i32::from_le_bytes(bytes[0..4].try_into().unwrap()), 348);
    // dim[] starts at byte 40: rank, then columns (i), rows (j), slices (k).
    let (columns, rows) = (i16_at(&bytes, 42), i16_at(&bytes, 44));
    assert_eq!(i64::from(columns), probe["columns"].as_i64().unwrap());
    assert_eq!(i64::from(rows), probe["rows"].as_i64().unwrap());
    assert_eq!(i16_at(&bytes, 46), 1, "one slice");
    let bytes_per_voxel = probe["bits_allocated"].as_u64().unwrap() as usize / 8;
    assert_eq!(
        bytes.len(),
        NIFTI1_VOX_OFFSET + columns as usize * rows as usize * bytes_per_voxel
    );

    // cal_max (byte 124) and cal_min (byte 128) carry the file's window, which NiiVue displays.
    let center = probe["window_center"].as_f64().unwrap() as f32;
    let width = probe["window_width"].as_f64().unwrap() as f32;
    let (cal_max, cal_min) = (f32_at(&bytes, 124), f32_at(&bytes, 128));
    assert!(
        (cal_min - (center - width / 2.0)).abs() <= WINDOW_EDGE_TOLERANCE,
        "cal_min {cal_min}"
    );
    assert!(
        (cal_max - (center + width / 2.0)).abs() <= WINDOW_EDGE_TOLERANCE,
        "cal_max {cal_max}"
    );
}

#[test]
fn an_image_changed_since_import_is_refused_naming_the_file() {
    let name = "MR_small.dcm";
    let stale_hash = "0".repeat(64);
    let error =
        CommandError::from(decode_verified(&series_of(name, stale_hash)).expect_err("refused"));
    assert_eq!(error.code, ErrorCode::ImageUnavailable);
    assert!(error.message.contains(name), "{}", error.message);
}

#[test]
fn a_missing_image_is_refused_naming_the_file() {
    let name = "no-such-image.dcm";
    let error =
        CommandError::from(decode_verified(&series_of(name, "0".repeat(64))).expect_err("refused"));
    assert_eq!(error.code, ErrorCode::ImageUnavailable);
    assert!(error.message.contains(name), "{}", error.message);
}
