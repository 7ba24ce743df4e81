//! Imaging: faithful decoding of the scans clinicians and models look at.
//!
//! A crate of its own, below the domain (`cases`): it knows no database, no study and no UI, only
//! files and dicom-rs, so it is tested and fuzzed on its own (dicom-rs's own layering: parsing and
//! pixel data apart from what uses them).
//!
//! # API
//! - [`probe`]`(path) -> Probe` and [`render`]`(path, &RenderOptions) -> DynamicImage` (L8 or
//!   Rgb8), [`render_png`]: docs/formats.md §4 for DICOM (every dicom-rs codec), NIfTI-1/2 (.nii,
//!   .nii.gz) and PNG/JPEG. The format is found from the content, not the name.
//!   [`ParsedDicom`]`::open(path)` then `.render(&RenderOptions)` parses a DICOM file once and
//!   renders it as often as needed (decode + VOI only).
//! - [`read_dicom_meta`]`(path) -> DicomMeta`: a DICOM header without pixel data (grouping,
//!   ordering, de-identification facts). [`order_series`]`(&mut [DicomMeta])` sorts one series
//!   along the slice normal, InstanceNumber as fallback. [`identifying_tags`] and
//!   [`uid_tags_to_replace`] are the PS3.15 Annex E basic profile.
//! - [`load_dicom_series`], [`load_nifti`], [`load_key_images`] `-> Volume`: one volume for the
//!   viewer (stored values + rescale, LPS geometry, window presets);
//!   [`Volume::to_nifti1_bytes`] hands it to NiiVue.
//! - [`dicom_series_geometry`] (from the headers [`read_dicom_meta`] read), [`nifti_geometry`],
//!   [`key_images_geometry`] `-> SeriesGeometry`: the grid and voxel → patient affine the volume
//!   has once decoded, from the headers alone, so import can keep it (`Volume::geometry`).
//! - Measurements in patient mm: [`distance_mm`], [`Volume::roi_stats`] (mean, SD, min, max of
//!   the modality values inside an ellipse or outline, pixel count, area), [`outline_diameters`]
//!   and [`ellipse_diameters`] (the bidimensional RANO diameters).
//!
//! Errors are [`ImagingError`]: the file, the DICOM transfer syntax when known, and the reason;
//! [`ImagingErrorKind`] lets callers branch without reading text. Nothing here panics on a file's
//! content, truncated pixel data is an error, and declared sizes above [`MAX_DECODED_BYTES`] are
//! refused before anything is allocated.

mod decoded;
mod deid;
mod dicom;
mod error;
mod geometry;
mod guard;
mod jpeg12;
mod measure;
mod meta;
mod nifti;
mod raster;
mod render;
mod samples;
pub mod vector;
mod voi;
mod volume;

pub use decoded::Rescale;
pub use deid::{identifying_tags, is_identifying, is_private, uid_tags_to_replace};
pub use error::{ImagingError, ImagingErrorKind};
pub use geometry::{dicom_series_geometry, key_images_geometry, nifti_geometry, SeriesGeometry};
pub use measure::{
    apply as apply_affine, distance_mm, ellipse_diameters, outline_diameters, patient_to_voxel,
    Diameters, RoiShape, RoiStats,
};
pub use meta::{order_series, read_dicom_meta, DicomMeta};
// The PACS scan (`cases::scaffold`) walks headers itself and reads them from files it already
// opened, so these pieces of the decoder are public for it.
pub use guard::{check_dicom_header_bytes, check_dicom_structure, HeaderEnd, PixelDataAt};
pub use meta::{dicom_meta_of, text as dicom_text};
pub use render::{probe, render, render_png, ParsedDicom, Probe, RenderOptions};
pub use samples::Samples;
pub use voi::{VoiFunction, Window};
pub use volume::{load_dicom_series, load_key_images, load_nifti, Volume};

/// The largest decoded image (all frames, or one NIfTI volume) we accept: 2 GiB. A header
/// declaring more is refused before allocation, whatever the file's real size.
pub const MAX_DECODED_BYTES: u64 = 2 << 30;
