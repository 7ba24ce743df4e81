//! Imaging speed: decode + VOI of one 512² 16-bit slice (goal ≤ 1 ms), loading a 300-slice
//! series as a volume, and rendering real compressed sample files.

#[path = "../tests/imaging_support.rs"]
mod imaging_support;

use std::hint::black_box;
use std::path::Path;

use cases::imaging::{load_dicom_series, render, RenderOptions};
use criterion::{criterion_group, criterion_main, Criterion};

fn slice_512(dir: &Path) -> std::path::PathBuf {
    let spec = imaging_support::oblique_series(1, 512, 512).remove(0);
    imaging_support::write_slice(dir, "slice.dcm", "1.2.826.0.1.20", &spec)
}

fn render_one_slice(c: &mut Criterion) {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = slice_512(dir.path());
    c.bench_function(
        "render 512x512 int16 slice (read + decode + rescale + VOI)",
        |b| b.iter(|| render(black_box(&path), &RenderOptions::default()).expect("renders")),
    );
    let windowed = RenderOptions {
        frame: None,
        window: Some((40.0, 400.0)),
    };
    c.bench_function("render 512x512 int16 slice with a requested window", |b| {
        b.iter(|| render(black_box(&path), &windowed).expect("renders"))
    });
}

fn render_real_files(c: &mut Criterion) {
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/imaging");
    for file in [
        "CT_small.dcm",
        "MR_small_RLE.dcm",
        "MR_small_jp2klossless.dcm",
        "MR_small_jpeg_ls_lossless.dcm",
        "example4d.nii.gz",
    ] {
        let path = data.join(file);
        c.bench_function(&format!("render {file}"), |b| {
            b.iter(|| render(black_box(&path), &RenderOptions::default()).expect("renders"))
        });
    }
}

fn load_series(c: &mut Criterion) {
    let dir = tempfile::tempdir().expect("temp dir");
    let paths: Vec<_> = imaging_support::oblique_series(300, 512, 512)
        .iter()
        .enumerate()
        .map(|(k, spec)| {
            imaging_support::write_slice(dir.path(), &format!("{k:03}.dcm"), "1.2.826.0.1.21", spec)
        })
        .collect();
    let mut group = c.benchmark_group("series");
    group.sample_size(10);
    group.bench_function("load_dicom_series 300 x 512x512 int16", |b| {
        b.iter(|| load_dicom_series(black_box(&paths)).expect("loads"))
    });
    group.finish();
}

criterion_group!(benches, render_one_slice, render_real_files, load_series);
criterion_main!(benches);
