//! Patient-space geometry shared by series ordering, volumes and the geometry kept at import
//! (DICOM LPS, millimetres).

use std::path::{Path, PathBuf};

use super::error::{ImagingError, ImagingErrorKind};
use super::meta::DicomMeta;
use super::nifti;

/// Unit normal of the image plane: row direction × column direction. `None` when the
/// orientation is degenerate (zero or parallel vectors), which happens in hand-made files.
pub(crate) fn slice_normal(iop: &[f64; 6]) -> Option<[f64; 3]> {
    let (r, c) = ([iop[0], iop[1], iop[2]], [iop[3], iop[4], iop[5]]);
    let n = [
        r[1] * c[2] - r[2] * c[1],
        r[2] * c[0] - r[0] * c[2],
        r[0] * c[1] - r[1] * c[0],
    ];
    let length = (n[0] * n[0] + n[1] * n[1] + n[2] * n[2]).sqrt();
    (length > 1e-6).then(|| [n[0] / length, n[1] / length, n[2] / length])
}

/// Where a series' voxels lie, without its pixels: what lesion marks, key-image slices and missed
/// findings are checked against. The same grid [`super::Volume`] has once decoded, so it can be
/// read from the headers at import and kept in the database instead of decoding the series again.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SeriesGeometry {
    /// [columns, rows, slices].
    pub dims: [usize; 3],
    /// Voxel (column i, row j, slice k, 1) to patient LPS mm.
    pub voxel_to_patient: [[f64; 4]; 4],
}

/// Voxel → patient LPS mm of a DICOM series of `slices` frames whose first and last frames, in
/// display order, lie at `first` and `last` (`None` when a frame does not say): columns along the
/// orientation's row direction, rows along its column direction, scaled by `pixel_spacing` (row
/// spacing, column spacing); the slice step from the first to the last position, else the
/// plane's normal times `slice_spacing` (1 mm when unknown). A missing orientation is axial.
pub(crate) fn dicom_affine(
    orientation: Option<[f64; 6]>,
    pixel_spacing: [f64; 2],
    slice_spacing: Option<f64>,
    (first, last): (Option<[f64; 3]>, Option<[f64; 3]>),
    slices: usize,
) -> [[f64; 4]; 4] {
    let iop = orientation.unwrap_or([1.0, 0.0, 0.0, 0.0, 1.0, 0.0]);
    let normal = slice_normal(&iop).unwrap_or([0.0, 0.0, 1.0]);
    let origin = first.unwrap_or([0.0; 3]);
    let step = match (first, last) {
        (Some(a), Some(b)) if slices > 1 => {
            std::array::from_fn(|i| (b[i] - a[i]) / (slices - 1) as f64)
        }
        _ => normal.map(|n| n * slice_spacing.unwrap_or(1.0)),
    };
    let mut affine = [[0.0; 4]; 4];
    for axis in 0..3 {
        affine[axis][0] = iop[axis] * pixel_spacing[1];
        affine[axis][1] = iop[3 + axis] * pixel_spacing[0];
        affine[axis][2] = step[axis];
        affine[axis][3] = origin[axis];
    }
    affine[3][3] = 1.0;
    affine
}

/// A NIfTI affine (RAS+) in DICOM's patient LPS: x and y change sign.
pub(crate) fn lps_from_ras(ras: [[f64; 4]; 4]) -> [[f64; 4]; 4] {
    let mut lps = ras;
    for row in &mut lps[..2] {
        for value in row.iter_mut() {
            *value = -*value;
        }
    }
    lps
}

/// Key images have no patient geometry: 1 mm pixels, one slice per image.
pub(crate) const KEY_IMAGE_AFFINE: [[f64; 4]; 4] = [
    [1.0, 0.0, 0.0, 0.0],
    [0.0, 1.0, 0.0, 0.0],
    [0.0, 0.0, 1.0, 0.0],
    [0.0, 0.0, 0.0, 1.0],
];

/// The geometry of a DICOM series from its headers ([`super::read_dicom_meta`]), `ordered` as
/// [`super::order_series`] leaves it: the grid [`super::load_dicom_series`] decodes the same
/// files into. `None` for no files.
pub fn dicom_series_geometry(ordered: &[DicomMeta]) -> Option<SeriesGeometry> {
    let first = ordered.first()?;
    let with_frames = || ordered.iter().filter(|meta| meta.frames > 0);
    let slices: usize = with_frames().map(|meta| meta.frames as usize).sum();
    let ends = (
        with_frames()
            .next()
            .and_then(|meta| meta.first_frame_position),
        with_frames()
            .next_back()
            .and_then(|meta| meta.last_frame_position),
    );
    Some(SeriesGeometry {
        dims: [first.columns as usize, first.rows as usize, slices],
        voxel_to_patient: dicom_affine(
            first.image_orientation_patient,
            first.pixel_spacing,
            first.slice_spacing,
            ends,
            slices,
        ),
    })
}

/// The geometry of a NIfTI-1 or NIfTI-2 file's volume 0 from its header alone: the grid
/// [`super::load_nifti`] decodes it into.
pub fn nifti_geometry(path: &Path) -> Result<SeriesGeometry, ImagingError> {
    let mut stream = nifti::open_stream(path)?;
    let header = nifti::read_header(path, stream.as_mut())?;
    // `grid` refuses extents below 1, and a usize holds any i64 above 0 on 64-bit targets.
    let dims = header.grid(path)?.map(|n| n as usize);
    Ok(SeriesGeometry {
        dims,
        voxel_to_patient: lps_from_ras(header.affine_ras()),
    })
}

/// An empty list where key images were expected, for their geometry and for their pixels alike.
pub(super) fn no_key_images() -> ImagingError {
    ImagingError::new(
        Path::new(""),
        ImagingErrorKind::InvalidRequest,
        "no key images given",
    )
}

/// The geometry of PNG/JPEG key images from the first image's size: the grid
/// [`super::load_key_images`] stacks them into (it refuses images of another size).
pub fn key_images_geometry(paths: &[PathBuf]) -> Result<SeriesGeometry, ImagingError> {
    let first = paths.first().ok_or_else(no_key_images)?;
    let (width, height) = image::image_dimensions(first).map_err(|e| {
        ImagingError::new(
            first,
            ImagingErrorKind::InvalidHeader,
            format!("cannot be read as an image: {e}"),
        )
    })?;
    Ok(SeriesGeometry {
        dims: [width as usize, height as usize, paths.len()],
        voxel_to_patient: KEY_IMAGE_AFFINE,
    })
}
