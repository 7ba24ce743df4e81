//! Imaging speed: decode + VOI of one parsed 512² 16-bit slice (goal ≤ 1 ms; reading and parsing
//! the file are measured apart), loading a 300-slice series as a volume, a NIfTI reslice, and
//! rendering real compressed sample files. Loading the 300-slice series also prints its peak
//! memory against its decoded size (goal < 1.5×).

#[path = "../tests/support/imaging.rs"]
mod imaging_support;

use std::hint::black_box;
use std::path::Path;

use criterion::{criterion_group, criterion_main, Criterion};
use imaging::{load_dicom_series, load_nifti, render, ParsedDicom, RenderOptions};

fn slice_512(dir: &Path) -> std::path::PathBuf {
    let spec = imaging_support::oblique_series(1, 512, 512).remove(0);
    imaging_support::write_slice(dir, "slice.dcm", "1.2.826.0.1.20", &spec)
}

/// The slice goal is decode + VOI; reading and parsing the file is measured apart, and the whole
/// `render` (what the CLI pays per file) too.
fn render_one_slice(c: &mut Criterion) {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = slice_512(dir.path());
    let windowed = RenderOptions {
        frame: None,
        window: Some((40.0, 400.0)),
    };
    c.bench_function("512x512 int16 slice: read + parse the file", |b| {
        b.iter(|| ParsedDicom::open(black_box(&path)).expect("parses"))
    });
    let parsed = ParsedDicom::open(&path).expect("parses");
    c.bench_function(
        "512x512 int16 slice: decode + rescale + VOI (default window = full range)",
        |b| {
            b.iter(|| {
                black_box(&parsed)
                    .render(&RenderOptions::default())
                    .expect("renders")
            })
        },
    );
    c.bench_function(
        "512x512 int16 slice: decode + rescale + VOI (requested window)",
        |b| b.iter(|| black_box(&parsed).render(&windowed).expect("renders")),
    );
    c.bench_function(
        "512x512 int16 slice: render (read + parse + decode + rescale + VOI)",
        |b| b.iter(|| render(black_box(&path), &RenderOptions::default()).expect("renders")),
    );
}

fn render_real_files(c: &mut Criterion) {
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
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
    report_peak_memory(&paths);
    let mut group = c.benchmark_group("series");
    group.sample_size(10);
    group.bench_function("load_dicom_series 300 x 512x512 int16", |b| {
        b.iter(|| load_dicom_series(black_box(&paths)).expect("loads"))
    });
    group.finish();
}

/// A `/proc/self/status` field in KiB (Linux).
fn status_kib(field: &str) -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with(field))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Peak resident memory while loading the series, above what was resident before, against the
/// decoded size: the high-water mark is reset first (`clear_refs` 5), so the peak is this load's.
fn report_peak_memory(paths: &[std::path::PathBuf]) {
    let reset = std::fs::write("/proc/self/clear_refs", "5").is_ok();
    let (Some(before), true) = (status_kib("VmRSS:"), reset) else {
        eprintln!("peak memory: not measurable here (needs Linux /proc with clear_refs)");
        return;
    };
    let volume = load_dicom_series(paths).expect("loads");
    let peak = status_kib("VmHWM:").unwrap_or(0);
    let decoded = volume.samples.len() * volume.samples.bytes_per_sample();
    let grown = peak.saturating_sub(before) * 1024;
    eprintln!(
        "peak memory loading {} slices: {:.1} MiB above the start for {:.1} MiB decoded = {:.2}x",
        volume.dims[2],
        grown as f64 / (1 << 20) as f64,
        decoded as f64 / (1 << 20) as f64,
        grown as f64 / decoded as f64
    );
    let nifti = volume.to_nifti1_bytes();
    let peak_with_nifti = status_kib("VmHWM:").unwrap_or(0);
    eprintln!(
        "  ... and with its NIfTI copy for the viewer ({:.1} MiB): {:.2}x",
        nifti.len() as f64 / (1 << 20) as f64,
        (peak_with_nifti.saturating_sub(before) * 1024) as f64 / decoded as f64
    );
}

/// Reslicing a volume the viewer way: NiiVue reslices on the GPU, so the CPU-side cost of a new
/// plane is reading the NIfTI file and walking its voxels along another axis (coronal here).
fn nifti_reslice(c: &mut Criterion) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/example4d.nii.gz");
    let volume = load_nifti(&path).expect("loads");
    let [nx, ny, nz] = volume.dims;
    c.bench_function(
        &format!("coronal reslice of a {nx}x{ny}x{nz} NIfTI volume (all rows)"),
        |b| {
            b.iter(|| {
                let mut plane = vec![0f64; nx * nz];
                for j in 0..ny {
                    for k in 0..nz {
                        for i in 0..nx {
                            plane[k * nx + i] =
                                volume.samples.get((k * ny + j) * nx + i).unwrap_or(0.0);
                        }
                    }
                    black_box(&plane);
                }
            })
        },
    );
    c.bench_function("load_nifti example4d.nii.gz (gunzip + volume 0)", |b| {
        b.iter(|| load_nifti(black_box(&path)).expect("loads"))
    });
}

criterion_group!(
    benches,
    render_one_slice,
    render_real_files,
    load_series,
    nifti_reslice
);
criterion_main!(benches);
