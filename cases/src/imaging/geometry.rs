//! Patient-space geometry shared by series ordering and volumes (DICOM LPS, millimetres).

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
