//! Imaging against independent references: pydicom 3.0.2 + numpy (with pylibjpeg decoders) and
//! nibabel 5.4.2 computed every expected value in `data/expected.json` and
//! `data/expected/*.png` (scripts/reference/imaging/make_expected.py); the sample files
//! come from the pydicom and nibabel wheels (MIT; see data/README.md).

#[path = "support/imaging.rs"]
mod imaging_support;

use std::path::{Path, PathBuf};

use image::DynamicImage;
use imaging::{
    self, load_dicom_series, load_nifti, order_series, probe, read_dicom_meta, render,
    ImagingErrorKind, RenderOptions,
};
use serde_json::Value;

/// Lossy codecs (JPEG baseline/extended, JPEG 2000 irreversible, YBR rounding) may differ from
/// the reference decoders by small amounts: mean absolute difference per 8-bit sample allowed,
/// in grey levels (the role of dicom-rs's L1_ERROR_THRESHOLD).
const LOSSY_MEAN_ABS_ERROR: f64 = 1.0;
/// Header numbers are decimal strings in DICOM and f32 in NIfTI-1.
const FLOAT_TOLERANCE: f64 = 1e-4;
/// Lossy 12-bit JPEG: libjpeg-turbo (here) and pylibjpeg-libjpeg (the reference) each implement
/// ITU T.81's inverse DCT within its accuracy bounds (T.83) but round differently, so a stored
/// value may differ by one unit of the 12-bit range (0..4095). Measured 2026-11-23: 3,612 of
/// 262,144 samples of JPGExtended.dcm differ, none by more than 1.
const TWELVE_BIT_JPEG_MAX_ERROR: u16 = 1;

fn data_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data")
}

fn expected() -> Vec<Value> {
    let text = std::fs::read_to_string(data_dir().join("expected.json"))
        .expect("expected.json is committed");
    let doc: Value = serde_json::from_str(&text).expect("expected.json is JSON");
    doc["files"].as_array().expect("files is a list").clone()
}

fn samples_of(image: &DynamicImage) -> (u32, u32, bool, Vec<u8>) {
    match image {
        DynamicImage::ImageLuma8(i) => (i.width(), i.height(), false, i.as_raw().clone()),
        DynamicImage::ImageRgb8(i) => (i.width(), i.height(), true, i.as_raw().clone()),
        other => (
            other.width(),
            other.height(),
            other.color().has_color(),
            other.to_rgb8().into_raw(),
        ),
    }
}

#[test]
fn every_reference_file_renders_as_pydicom_and_nibabel_compute_it() {
    let mut failures = Vec::new();
    let mut compared = 0;
    for entry in expected() {
        let file = entry["file"].as_str().expect("file name");
        let lossless = entry["lossless"].as_bool().expect("lossless flag");
        for r in entry["renders"].as_array().expect("renders") {
            let frame = r["frame"].as_u64().expect("frame") as u32;
            let want = image::open(data_dir().join(r["png"].as_str().expect("png")))
                .expect("expected PNG");
            let got = match render(
                &data_dir().join(file),
                &RenderOptions {
                    frame: Some(frame),
                    window: None,
                },
            ) {
                Ok(image) => image,
                Err(e) => {
                    failures.push(format!("{file} frame {frame}: {e}"));
                    continue;
                }
            };
            let (w, h, colour, want) = samples_of(&want);
            let (gw, gh, gcolour, got) = samples_of(&got);
            if (w, h, colour) != (gw, gh, gcolour) {
                failures.push(format!("{file} frame {frame}: {gw}×{gh} colour={gcolour}, expected {w}×{h} colour={colour}"));
                continue;
            }
            compared += 1;
            let differing = want.iter().zip(&got).filter(|(a, b)| a != b).count();
            let mean_error = want
                .iter()
                .zip(&got)
                .map(|(a, b)| (*a as f64 - *b as f64).abs())
                .sum::<f64>()
                / want.len() as f64;
            if lossless && differing > 0 {
                failures.push(format!("{file} frame {frame}: {differing} of {} samples differ (mean error {mean_error:.3})", want.len()));
            } else if !lossless && mean_error > LOSSY_MEAN_ABS_ERROR {
                failures.push(format!(
                    "{file} frame {frame}: mean error {mean_error:.3} > {LOSSY_MEAN_ABS_ERROR}"
                ));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} failure(s):\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert!(
        compared >= 39,
        "only {compared} renders compared: a file dropped out of expected.json?"
    );
}

#[test]
fn probe_reports_what_pydicom_and_nibabel_read() {
    let mut failures = Vec::new();
    for entry in expected() {
        let file = entry["file"].as_str().expect("file name");
        let lossless = entry["lossless"].as_bool().expect("lossless flag");
        let got = match probe(&data_dir().join(file)) {
            Ok(p) => serde_json::to_value(p).expect("Probe serialises"),
            Err(e) => {
                failures.push(format!("{file}: {e}"));
                continue;
            }
        };
        for (key, want) in entry["probe"].as_object().expect("probe object") {
            // Lossy decoders may move the extremes by a few units; geometry is checked below.
            if key == "affine_ras" || (!lossless && key.starts_with("stored_")) {
                continue;
            }
            let have = &got[key];
            let same = match (want.as_f64(), have.as_f64()) {
                (Some(a), Some(b)) => (a - b).abs() <= FLOAT_TOLERANCE * a.abs().max(1.0),
                _ => match (want.as_array(), have.as_array()) {
                    (Some(a), Some(b)) => {
                        a.len() == b.len()
                            && a.iter().zip(b).all(|(x, y)| {
                                (x.as_f64().unwrap_or(f64::NAN) - y.as_f64().unwrap_or(f64::NAN))
                                    .abs()
                                    <= FLOAT_TOLERANCE
                            })
                    }
                    _ => want == have,
                },
            };
            if !same {
                failures.push(format!("{file}: {key} = {have}, expected {want}"));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} failure(s):\n{}",
        failures.len(),
        failures.join("\n")
    );
}

#[test]
fn nifti_geometry_is_nibabels_affine_in_lps() {
    for entry in expected() {
        let Some(affine) = entry["probe"]["affine_ras"].as_array() else {
            continue;
        };
        let file = entry["file"].as_str().expect("file name");
        let volume = load_nifti(&data_dir().join(file)).unwrap_or_else(|e| panic!("{e}"));
        for (i, row) in affine.iter().enumerate().take(3) {
            // RAS to LPS: x and y change sign.
            let sign = if i < 2 { -1.0 } else { 1.0 };
            for (j, v) in row.as_array().expect("affine row").iter().enumerate() {
                let want = sign * v.as_f64().expect("number");
                let got = volume.voxel_to_patient[i][j];
                assert!(
                    (want - got).abs() < FLOAT_TOLERANCE,
                    "{file}: affine[{i}][{j}] = {got}, nibabel {want}"
                );
            }
        }
        let dims = &entry["probe"]["dims"];
        assert_eq!(
            volume.dims[0] as u64,
            dims[0].as_u64().expect("dim"),
            "{file}"
        );
    }
}

#[test]
fn enhanced_multi_frame_uses_each_frames_rescale_and_window() {
    // Frame 2 of the derived file has slope 0.5, intercept 50, window 300/700 (make_expected.py).
    let p = data_dir().join("MR_small_enhanced_3frame.dcm");
    let frame2 = render(
        &p,
        &RenderOptions {
            frame: Some(2),
            window: None,
        },
    )
    .expect("renders");
    let frame0 = render(
        &p,
        &RenderOptions {
            frame: Some(0),
            window: None,
        },
    )
    .expect("renders");
    assert_ne!(frame0.as_bytes(), frame2.as_bytes());
    let volume = load_dicom_series(&[p]).expect("loads");
    assert_eq!(volume.dims, [64, 64, 3]);
    // Per-frame rescales differ, so the volume holds modality values with the identity rescale.
    assert_eq!(volume.rescale, imaging::Rescale::IDENTITY);
    // PlanePositionSequence z = 30, 32, 34 → 2 mm per slice; PixelSpacing 0.5 (rows) × 0.75 (columns).
    assert!((volume.voxel_to_patient[2][2] - 2.0).abs() < 1e-9);
    assert!((volume.voxel_to_patient[0][0] - 0.75).abs() < 1e-9);
    assert!((volume.voxel_to_patient[1][1] - 0.5).abs() < 1e-9);
}

#[test]
fn twelve_bit_jpeg_decodes_to_pydicoms_stored_values() {
    let entry = expected()
        .into_iter()
        .find(|e| e["file"] == "JPGExtended.dcm")
        .expect("the 12-bit JPEG file is in expected.json");
    let want = image::open(data_dir().join(entry["stored_values"]["png"].as_str().expect("png")))
        .expect("expected 16-bit PNG")
        .into_luma16();
    let path = data_dir().join("JPGExtended.dcm");
    assert_eq!(
        probe(&path).expect("probes").transfer_syntax.as_deref(),
        Some("1.2.840.10008.1.2.4.51")
    );
    let volume = load_dicom_series(&[path]).expect("decodes");
    assert_eq!(volume.dims, [256, 1024, 1]);
    let imaging::Samples::U16(got) = &volume.samples else {
        panic!("BitsAllocated 16, unsigned: U16 samples expected");
    };
    assert_eq!(got.len(), want.as_raw().len());
    let differences: Vec<u16> = got
        .iter()
        .zip(want.as_raw())
        .map(|(a, b)| a.abs_diff(*b))
        .collect();
    let largest = differences.iter().copied().max().unwrap_or(0);
    let differing = differences.iter().filter(|&&d| d > 0).count();
    assert!(
        largest <= TWELVE_BIT_JPEG_MAX_ERROR,
        "largest difference {largest} stored units ({differing} of {} samples differ)",
        got.len()
    );
    // Not a blank picture that trivially matches: the NM image spans 0..264.
    assert_eq!(got.iter().max(), want.as_raw().iter().max());
}

#[test]
fn a_twelve_bit_jpeg_that_breaks_the_standard_is_refused_with_the_reason() {
    // JPGExtended.dcm's original: its start-of-scan declares spectral selection 0..0, which a
    // sequential JPEG may not; pydicom's decoders refuse it too (make_expected.py, UNDECODABLE).
    let path = data_dir().join("JPEG-lossy.dcm");
    let err = render(&path, &RenderOptions::default()).expect_err("a broken stream");
    assert_eq!(err.kind, ImagingErrorKind::Decode, "{err}");
    let message = err.to_string();
    for part in [
        "JPEG-lossy.dcm",
        "1.2.840.10008.1.2.4.51",
        "libjpeg-turbo",
        "SOS",
    ] {
        assert!(message.contains(part), "{part} missing from: {message}");
    }
}

/// JPGExtended.dcm with its pixel data replaced by `fragments` (and `frames`, `rows`), written to
/// `dir/name`.
fn twelve_bit_variant(
    dir: &Path,
    name: &str,
    fragments: Vec<Vec<u8>>,
    frames: u32,
    rows: u16,
) -> PathBuf {
    use dicom_core::value::PixelFragmentSequence;
    use dicom_core::{DataElement, PrimitiveValue, VR};
    use dicom_dictionary_std::tags;
    let mut obj = dicom_object::open_file(data_dir().join("JPGExtended.dcm")).expect("opens");
    obj.put(DataElement::new(
        tags::PIXEL_DATA,
        VR::OB,
        PixelFragmentSequence::new(Vec::<u32>::new(), fragments),
    ));
    obj.put(DataElement::new(
        tags::NUMBER_OF_FRAMES,
        VR::IS,
        PrimitiveValue::from(frames.to_string()),
    ));
    obj.put(imaging_support::unsigned_short(tags::ROWS, rows));
    let path = dir.join(name);
    obj.write_to_file(&path).expect("written");
    path
}

#[test]
fn twelve_bit_frames_and_broken_streams_are_decoded_or_refused_never_guessed() {
    let dir = tempfile::tempdir().expect("temp dir");
    let original = dicom_object::open_file(data_dir().join("JPGExtended.dcm")).expect("opens");
    let stream: Vec<u8> = original
        .element(dicom_dictionary_std::tags::PIXEL_DATA)
        .expect("pixel data")
        .value()
        .fragments()
        .expect("encapsulated")
        .concat();
    let single = load_dicom_series(&[data_dir().join("JPGExtended.dcm")]).expect("decodes");
    // DICOM fragments have even lengths.
    let half = stream.len() / 4 * 2;

    // Two frames, one fragment each: the same picture twice.
    let two = twelve_bit_variant(dir.path(), "two.dcm", vec![stream.clone(); 2], 2, 1024);
    let volume = load_dicom_series(&[two]).expect("two frames decode");
    assert_eq!(volume.dims, [256, 1024, 2]);
    let (imaging::Samples::U16(both), imaging::Samples::U16(one)) =
        (&volume.samples, &single.samples)
    else {
        panic!("U16 samples expected");
    };
    assert_eq!(&both[..one.len()], &one[..]);
    assert_eq!(&both[one.len()..], &one[..]);

    let refused = |path: PathBuf, kind: ImagingErrorKind, reason: &str| {
        let err = render(&path, &RenderOptions::default()).expect_err(reason);
        assert_eq!(err.kind, kind, "{err}");
        assert!(err.to_string().contains(reason), "{reason} not in: {err}");
    };
    // Cut short: libjpeg-turbo's "premature end" warning is an error, not grey rows.
    refused(
        twelve_bit_variant(
            dir.path(),
            "cut.dcm",
            vec![stream[..half].to_vec()],
            1,
            1024,
        ),
        ImagingErrorKind::Decode,
        "libjpeg-turbo",
    );
    // Three fragments for two frames and no offset table: where frame 2 starts is unknown.
    let (head, tail) = stream.split_at(half);
    refused(
        twelve_bit_variant(
            dir.path(),
            "split.dcm",
            vec![head.to_vec(), tail.to_vec(), stream.clone()],
            2,
            1024,
        ),
        ImagingErrorKind::Decode,
        "cannot tell where each frame starts",
    );
    // The header and the stream disagree on the size.
    refused(
        twelve_bit_variant(dir.path(), "rows.dcm", vec![stream.clone()], 1, 512),
        ImagingErrorKind::Decode,
        "the JPEG stream is 256 × 1024 pixels, the header declares Columns 256 × Rows 512",
    );
}

#[test]
fn truncated_pixel_data_is_an_error_naming_file_and_transfer_syntax() {
    let path = data_dir().join("MR_truncated.dcm");
    let err =
        render(&path, &RenderOptions::default()).expect_err("MR_truncated.dcm lacks pixel bytes");
    let message = err.to_string();
    assert!(message.contains("MR_truncated.dcm"), "{message}");
    assert!(message.contains("1.2.840.10008.1.2.1"), "{message}");
    assert_eq!(err.kind, ImagingErrorKind::Truncated, "{err}");
}

#[test]
fn an_absurd_declared_size_is_refused_before_allocating() {
    use dicom_core::{DataElement, PrimitiveValue, VR};
    use dicom_dictionary_std::tags;
    use dicom_object::{FileMetaTableBuilder, InMemDicomObject};
    let dir = tempfile::tempdir().expect("temp dir");
    let mut obj = InMemDicomObject::new_empty();
    let put_text = |obj: &mut InMemDicomObject, tag, vr, v: &str| {
        obj.put(DataElement::new(tag, vr, PrimitiveValue::from(v)));
    };
    put_text(&mut obj, tags::SOP_INSTANCE_UID, VR::UI, "1.2.3.4");
    put_text(&mut obj, tags::SERIES_INSTANCE_UID, VR::UI, "1.2.3");
    put_text(
        &mut obj,
        tags::PHOTOMETRIC_INTERPRETATION,
        VR::CS,
        "MONOCHROME2",
    );
    put_text(&mut obj, tags::NUMBER_OF_FRAMES, VR::IS, "2147483648");
    obj.put(imaging_support::unsigned_short(tags::ROWS, 60000u16));
    obj.put(imaging_support::unsigned_short(tags::COLUMNS, 60000u16));
    obj.put(imaging_support::unsigned_short(tags::BITS_ALLOCATED, 16u16));
    obj.put(imaging_support::unsigned_short(tags::BITS_STORED, 16u16));
    obj.put(imaging_support::unsigned_short(
        tags::SAMPLES_PER_PIXEL,
        1u16,
    ));
    obj.put(DataElement::new(
        tags::PIXEL_DATA,
        VR::OW,
        PrimitiveValue::from(vec![0u8; 16]),
    ));
    let file = obj
        .with_meta(
            FileMetaTableBuilder::new()
                .transfer_syntax("1.2.840.10008.1.2.1")
                .media_storage_sop_class_uid("1.2.840.10008.5.1.4.1.1.7"),
        )
        .expect("meta");
    let path = dir.path().join("absurd.dcm");
    file.write_to_file(&path).expect("written");

    let err = render(&path, &RenderOptions::default()).expect_err("refused");
    assert_eq!(err.kind, ImagingErrorKind::TooLarge, "{err}");
    assert!(err.to_string().contains("absurd.dcm"));
    assert_eq!(
        probe(&path).expect_err("refused").kind,
        ImagingErrorKind::TooLarge
    );
    // The header alone is fine: import can still see what the file claims.
    assert_eq!(
        read_dicom_meta(&path).expect("header reads").frames,
        2_147_483_648
    );
}

#[test]
fn a_file_that_is_not_an_image_gets_a_clear_error() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = dir.path().join("notes.txt");
    std::fs::write(
        &path,
        "Patient moved during the FLAIR sequence.\n".repeat(10),
    )
    .expect("written");
    let err = render(&path, &RenderOptions::default()).expect_err("not an image");
    assert_eq!(err.kind, ImagingErrorKind::UnrecognisedFormat, "{err}");
    assert!(err.to_string().contains("notes.txt"), "{err}");
    let missing = dir.path().join("missing.dcm");
    assert_eq!(
        probe(&missing).expect_err("missing").kind,
        ImagingErrorKind::Io
    );
}

#[test]
fn frame_and_window_requests_outside_the_file_are_refused() {
    let path = data_dir().join("MR_small.dcm");
    let err = render(
        &path,
        &RenderOptions {
            frame: Some(1),
            window: None,
        },
    )
    .expect_err("one frame only");
    assert_eq!(err.kind, ImagingErrorKind::InvalidRequest);
    let err = render(
        &path,
        &RenderOptions {
            frame: None,
            window: Some((100.0, 0.5)),
        },
    )
    .expect_err("width < 1");
    assert_eq!(err.kind, ImagingErrorKind::InvalidRequest);
}

#[test]
fn a_requested_window_follows_the_standard_linear_formula() {
    // CT_small: stored + intercept -1024 (pydicom). Pixel (0,0) stored value from the reference
    // probe range is not enough, so compare against the formula applied to our own decode of
    // the same pixel through a second window: both windows must agree with C.11.2.1.2.1.
    let path = data_dir().join("CT_small.dcm");
    let narrow = render(
        &path,
        &RenderOptions {
            frame: None,
            window: Some((40.0, 80.0)),
        },
    )
    .expect("renders");
    let wide = render(
        &path,
        &RenderOptions {
            frame: None,
            window: Some((40.0, 4000.0)),
        },
    )
    .expect("renders");
    let (narrow, wide) = (narrow.to_luma8(), wide.to_luma8());
    // A pixel in the wide window at grey g has modality value x ≈ ((g/255) − 0.5)·3999 + 39.5;
    // in the narrow window every x ≤ -0.5 is black and every x > 79.5 is white.
    for (n, w) in narrow.pixels().zip(wide.pixels()) {
        let x = (w[0] as f64 / 255.0 - 0.5) * 3999.0 + 39.5;
        if x < -20.0 {
            assert_eq!(n[0], 0);
        }
        if x > 100.0 {
            assert_eq!(n[0], 255);
        }
    }
}

#[test]
fn header_meta_names_identifying_attributes() {
    // MR_small.dcm carries PatientName "CompressedSamples^MR1" (pydicom's dump of the file).
    let meta = read_dicom_meta(&data_dir().join("MR_small.dcm")).expect("reads");
    assert!(meta
        .identifying_attributes
        .contains(&dicom_core::Tag(0x0010, 0x0010)));
    assert_eq!((meta.rows, meta.columns, meta.frames), (64, 64, 1));
    assert_eq!(meta.transfer_syntax, "1.2.840.10008.1.2.1");
    assert!(!meta
        .identifying_attributes
        .contains(&dicom_core::Tag(0x0028, 0x0010)));
}

#[test]
fn order_series_sorts_shuffled_oblique_slices_along_the_normal() {
    let dir = tempfile::tempdir().expect("temp dir");
    let specs = imaging_support::oblique_series(7, 4, 5);
    // Written in a shuffled order with names that sort differently from the geometry.
    let shuffle = [4, 0, 6, 2, 5, 1, 3];
    let mut metas: Vec<_> = shuffle
        .iter()
        .map(|&k| {
            let path = imaging_support::write_slice(
                dir.path(),
                &format!("z{}.dcm", 9 - k),
                "1.2.826.0.1.9",
                &specs[k],
            );
            read_dicom_meta(&path).expect("reads")
        })
        .collect();
    order_series(&mut metas);
    let numbers: Vec<_> = metas.iter().map(|m| m.instance_number).collect();
    assert_eq!(numbers, (1..=7).map(Some).collect::<Vec<_>>());

    // Instance numbers that disagree with geometry: geometry wins.
    let mut reversed = metas.clone();
    for (m, n) in reversed.iter_mut().zip((1..=7).rev()) {
        m.instance_number = Some(n);
    }
    reversed.reverse();
    order_series(&mut reversed);
    assert_eq!(reversed[0].sop_instance_uid, metas[0].sop_instance_uid);

    // One slice without a position: InstanceNumber decides.
    let mut partial = metas.clone();
    partial[3].image_position_patient = None;
    partial.swap(0, 6);
    order_series(&mut partial);
    assert_eq!(
        partial
            .iter()
            .map(|m| m.instance_number)
            .collect::<Vec<_>>(),
        (1..=7).map(Some).collect::<Vec<_>>()
    );
}

#[test]
fn a_series_loads_as_one_volume_and_round_trips_through_nifti1() {
    let dir = tempfile::tempdir().expect("temp dir");
    let specs = imaging_support::oblique_series(5, 3, 4);
    let paths: Vec<_> = specs
        .iter()
        .enumerate()
        .map(|(k, s)| {
            imaging_support::write_slice(dir.path(), &format!("{k}.dcm"), "1.2.826.0.1.10", s)
        })
        .collect();
    let volume = load_dicom_series(&paths).expect("loads");
    assert_eq!(volume.dims, [4, 3, 5]);
    assert!(
        matches!(volume.samples, imaging::Samples::I16(_)),
        "16-bit stays 16-bit"
    );
    assert_eq!(
        volume.rescale,
        imaging::Rescale {
            slope: 1.0,
            intercept: -1024.0
        }
    );
    // Slice k, row r, column c stores k·100 + r + c; index = slice 2 × 12 + row 1 × 4 + column 3.
    assert_eq!(volume.samples.get(2 * 12 + 4 + 3), Some(204.0));
    // Column step = row cosine × column spacing 0.75; slice step = 2.5 mm along (0, −sin .2, cos .2).
    let a = volume.voxel_to_patient;
    assert!((a[0][0] - 0.75).abs() < 1e-9);
    assert!(
        (a[1][2] + 2.5 * 0.2f64.sin()).abs() < 1e-6 && (a[2][2] - 2.5 * 0.2f64.cos()).abs() < 1e-6
    );
    assert_eq!(volume.value_range, (-1024.0, -1024.0 + 400.0 + 2.0 + 3.0));

    let bytes = volume.to_nifti1_bytes();
    let header = nifti::NiftiHeader::from_reader(&bytes[..348])
        .expect("a NIfTI-1 header the nifti crate accepts");
    assert_eq!(&header.dim[..4], &[3, 4, 3, 5]);
    assert_eq!(
        (header.datatype, header.bitpix, header.vox_offset),
        (4, 16, 352.0)
    );
    assert_eq!(
        (header.scl_slope, header.scl_inter, header.sform_code),
        (1.0, -1024.0, 1)
    );
    // sform is RAS: x and y of LPS change sign.
    assert!((header.srow_x[0] as f64 + a[0][0]).abs() < 1e-6);
    assert!((header.srow_y[2] as f64 + a[1][2]).abs() < 1e-6);
    assert!((header.srow_z[3] as f64 - a[2][3]).abs() < 1e-4);
    assert_eq!(bytes.len(), 352 + 4 * 3 * 5 * 2);
    let voxel = |i: usize| i16::from_le_bytes([bytes[352 + 2 * i], bytes[353 + 2 * i]]);
    assert_eq!(voxel(2 * 12 + 4 + 3), 204);
    // The default window (from the full range) becomes cal_min..cal_max.
    assert_eq!((header.cal_min, header.cal_max), (-1024.0, -619.0));
}

#[test]
fn a_single_slice_lies_where_it_lies_in_the_whole_series() {
    let dir = tempfile::tempdir().expect("temp dir");
    let paths: Vec<_> = imaging_support::oblique_series(5, 3, 4)
        .iter()
        .enumerate()
        .map(|(k, s)| {
            imaging_support::write_slice(dir.path(), &format!("{k}.dcm"), "1.2.826.0.1.11", s)
        })
        .collect();
    let volume = load_dicom_series(&paths).expect("loads");
    // The slice step is mostly along z (cos 0.2 against sin 0.2): an axial series.
    assert_eq!(volume.slice_axis(), 2);
    assert!(volume.single_slice(5).is_none(), "there are slices 0..=4");

    let slice = volume.single_slice(3).expect("slice 3 exists");
    assert_eq!(slice.dims, [4, 3, 1]);
    let to_patient = |a: [[f64; 4]; 4], v: [f64; 3]| {
        [0, 1, 2].map(|r| a[r][0] * v[0] + a[r][1] * v[1] + a[r][2] * v[2] + a[r][3])
    };
    for (i, j) in [(0.0, 0.0), (3.0, 2.0)] {
        let whole = to_patient(volume.voxel_to_patient, [i, j, 3.0]);
        let alone = to_patient(slice.voxel_to_patient, [i, j, 0.0]);
        assert!(
            (0..3).all(|r| (whole[r] - alone[r]).abs() < 1e-9),
            "{whole:?} vs {alone:?}"
        );
    }
    // Slice k, row r, column c stores k·100 + r + c.
    assert_eq!(slice.samples.get(4 + 3), Some(300.0 + 1.0 + 3.0));
    assert_eq!(slice.samples.len(), 12);
    // Drawn with the whole series' window, so it looks as it does in the whole series.
    let (whole, alone) = (volume.to_nifti1_bytes(), slice.to_nifti1_bytes());
    let header = |b: &[u8]| nifti::NiftiHeader::from_reader(&b[..348]).expect("a header");
    let (hw, ha) = (header(&whole), header(&alone));
    assert_eq!(&ha.dim[..4], &[3, 4, 3, 1]);
    assert_eq!((ha.cal_min, ha.cal_max), (hw.cal_min, hw.cal_max));
    assert_eq!(&alone[352..], &whole[352 + 3 * 24..352 + 4 * 24]);
}

#[test]
fn key_images_stack_into_a_colour_volume() {
    let key = data_dir().join("key_image.png");
    let volume = imaging::load_key_images(&[key.clone(), key]).expect("loads");
    assert_eq!((volume.dims, volume.channels), ([64, 64, 2], 3));
    let nifti = volume.to_nifti1_bytes();
    assert_eq!(nifti.len(), 352 + 64 * 64 * 2 * 3);
    // One of them alone keeps its three interleaved bytes per pixel.
    let second = volume
        .single_slice(1)
        .expect("two key images")
        .to_nifti1_bytes();
    assert_eq!(&second[352..], &nifti[352 + 64 * 64 * 3..]);
}

/// The geometry import stores is read from headers alone; it must be the grid the decoded volume
/// has, to the bit: every DICOM fixture the volume loader decodes (one-file series, the enhanced
/// multi-frame file with per-frame positions among them), an oblique five-file series, each
/// NIfTI fixture (whose affine is also nibabel's, in LPS) and the key image.
#[test]
fn geometry_from_headers_is_the_decoded_volumes() {
    let mut compared = 0;
    for entry in expected() {
        let file = entry["file"].as_str().expect("file name");
        let path = data_dir().join(file);
        let (from_headers, decoded) = match entry["probe"]["format"].as_str() {
            Some("dicom") => {
                // Files import would refuse (no SeriesInstanceUID) or the viewer cannot stack.
                let (Ok(meta), Ok(volume)) = (
                    read_dicom_meta(&path),
                    load_dicom_series(std::slice::from_ref(&path)),
                ) else {
                    continue;
                };
                (imaging::dicom_series_geometry(&[meta]), volume.geometry())
            }
            Some("nifti1" | "nifti2") => {
                let geometry = imaging::nifti_geometry(&path).expect("the header reads");
                let affine = entry["probe"]["affine_ras"].as_array().expect("affine");
                for (i, row) in affine.iter().enumerate().take(3) {
                    let sign = if i < 2 { -1.0 } else { 1.0 };
                    for (j, v) in row.as_array().expect("row").iter().enumerate() {
                        let want = sign * v.as_f64().expect("number");
                        let got = geometry.voxel_to_patient[i][j];
                        assert!(
                            (want - got).abs() < FLOAT_TOLERANCE,
                            "{file}: affine[{i}][{j}] = {got}, nibabel {want}"
                        );
                    }
                }
                let dims: Vec<u64> = entry["probe"]["dims"]
                    .as_array()
                    .expect("dims")
                    .iter()
                    .map(|d| d.as_u64().expect("dim"))
                    .collect();
                assert_eq!(
                    geometry.dims.map(|d| d as u64),
                    [dims[0], dims[1], dims.get(2).copied().unwrap_or(1)],
                    "{file}: nibabel's shape"
                );
                (Some(geometry), load_nifti(&path).expect("loads").geometry())
            }
            Some("png" | "jpeg") => {
                let paths = vec![path.clone(), path.clone()];
                (
                    Some(imaging::key_images_geometry(&paths).expect("reads")),
                    imaging::load_key_images(&paths).expect("loads").geometry(),
                )
            }
            other => panic!("{file}: unexpected format {other:?}"),
        };
        assert_eq!(from_headers, Some(decoded), "{file}");
        compared += 1;
    }
    assert!(compared >= 25, "only {compared} files compared");
    eprintln!("{compared} fixtures compared");

    let enhanced = data_dir().join("MR_small_enhanced_3frame.dcm");
    let volume = load_dicom_series(std::slice::from_ref(&enhanced)).expect("loads");
    assert_eq!(volume.dims[2], 3);
    assert!(
        volume.voxel_to_patient[2][2] != 0.0,
        "per-frame positions give the slice step"
    );

    let dir = tempfile::tempdir().expect("temp dir");
    let specs = imaging_support::oblique_series(5, 3, 4);
    let mut metas: Vec<_> = specs
        .iter()
        .enumerate()
        .map(|(k, s)| {
            let path =
                imaging_support::write_slice(dir.path(), &format!("{k}.dcm"), "1.2.826.0.1.11", s);
            read_dicom_meta(&path).expect("reads")
        })
        .collect();
    order_series(&mut metas);
    let paths: Vec<PathBuf> = (0..5)
        .map(|k| dir.path().join(format!("{k}.dcm")))
        .collect();
    assert_eq!(
        imaging::dicom_series_geometry(&metas),
        Some(load_dicom_series(&paths).expect("loads").geometry())
    );
}
