//! Measurements in patient millimetres: a distance, the bidimensional (RANO) diameters of an
//! outline, and the statistics of the voxels inside an ellipse or a freehand outline, read from
//! the decoded volume itself (modality values: HU for CT, stored signal otherwise).
//!
//! An ROI is measured on one native slice of the series: its points, mapped to voxel
//! coordinates, must all round to the same slice. A pixel counts when its centre lies inside the
//! shape (even-odd rule for an outline, as PNPOLY decides it); only the shape's bounding box is
//! visited, one scanline at a time, so a large ROI on a 512² slice costs well under a frame.

use crate::vector::{cross, dot, norm, sub};
use std::path::Path;

use super::error::{ImagingError, ImagingErrorKind};
use super::samples::{with_samples, Sample, Samples};
use super::volume::Volume;

/// A voxel's slice coordinate may differ from its slice's centre by half a slice, plus this
/// (rounding of a click on the slice the viewer shows).
const SLICE_SLACK: f64 = 1e-6;

/// Euclidean distance between two points, in the points' unit (patient mm).
pub fn distance_mm(a: [f64; 3], b: [f64; 3]) -> f64 {
    let d = sub(b, a);
    dot(d, d).sqrt()
}

/// An ROI in patient LPS mm.
#[derive(Debug, Clone, PartialEq)]
pub enum RoiShape {
    /// Centre and the ends of its two semi-axes (which need not be perpendicular: the shape is
    /// `centre + cos θ · (a − centre) + sin θ · (b − centre)`).
    Ellipse {
        centre: [f64; 3],
        a: [f64; 3],
        b: [f64; 3],
    },
    /// A closed outline of 3 or more points, last joined back to first.
    Outline(Vec<[f64; 3]>),
}

/// The modality values of the pixels whose centres lie inside an ROI.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RoiStats {
    /// The native slice (0-based, along the series' third voxel axis) the ROI lies on.
    pub slice: usize,
    pub pixels: u64,
    /// NaN when no pixel centre lies inside.
    pub mean: f64,
    /// Population standard deviation (n in the denominator, as numpy's default and OHIF's).
    pub sd: f64,
    pub min: f64,
    pub max: f64,
    /// The drawn shape's own area (π·|a×b| for an ellipse, the shoelace area of an outline).
    pub area_mm2: f64,
    /// The area of the pixels counted: `pixels` × one pixel's area.
    pub pixel_area_mm2: f64,
}

/// The bidimensional measurement of RANO (and WHO): the longest diameter in the plane and the
/// longest diameter perpendicular to it, each with its end points (patient mm).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Diameters {
    pub longest_mm: f64,
    pub longest: [[f64; 3]; 2],
    pub perpendicular_mm: f64,
    pub perpendicular: [[f64; 3]; 2],
    /// longest × perpendicular, mm².
    pub product_mm2: f64,
}

fn invalid(message: impl Into<String>) -> ImagingError {
    ImagingError::new(Path::new(""), ImagingErrorKind::InvalidRequest, message)
}

impl Volume {
    /// The statistics of the voxels inside `shape`, which must lie on one native slice.
    pub fn roi_stats(&self, shape: &RoiShape) -> Result<RoiStats, ImagingError> {
        if self.channels != 1 {
            return Err(invalid(
                "ROI statistics need a greyscale series; this one is colour",
            ));
        }
        let to_voxel = patient_to_voxel(&self.voxel_to_patient)
            .ok_or_else(|| invalid("the series' geometry cannot be inverted"))?;
        let points: Vec<[f64; 3]> = match shape {
            RoiShape::Ellipse { centre, a, b } => vec![*centre, *a, *b],
            RoiShape::Outline(points) => points.clone(),
        };
        if points.len() < 3 || points.iter().flatten().any(|c| !c.is_finite()) {
            return Err(invalid("an ROI needs 3 or more finite points"));
        }
        let voxels: Vec<[f64; 3]> = points.iter().map(|p| apply(&to_voxel, *p)).collect();
        let slice = one_slice(&voxels, self.dims[2])?;
        let [columns, rows, _] = self.dims;
        let mut spans = Spans::default();
        let area_mm2 = match shape {
            RoiShape::Ellipse { centre, a, b } => {
                ellipse_spans(&voxels, columns, rows, &mut spans)?;
                std::f64::consts::PI * norm(cross(sub(*a, *centre), sub(*b, *centre)))
            }
            RoiShape::Outline(outline) => {
                outline_spans(&voxels, columns, rows, &mut spans);
                polygon_area(outline)
            }
        };
        let plane_len = columns * rows;
        let base = slice * plane_len;
        let acc = with_samples!(&self.samples, v => accumulate(&v[base..base + plane_len], columns, &spans.0));
        let pixel_area = norm(cross(
            column(&self.voxel_to_patient, 0),
            column(&self.voxel_to_patient, 1),
        ));
        let (lo, hi) = self.rescale.range((acc.min, acc.max));
        let (slope, intercept) = (self.rescale.slope, self.rescale.intercept);
        let empty = acc.n == 0;
        Ok(RoiStats {
            slice,
            pixels: acc.n,
            mean: if empty {
                f64::NAN
            } else {
                acc.mean() * slope + intercept
            },
            sd: if empty {
                f64::NAN
            } else {
                acc.sd() * slope.abs()
            },
            min: if empty { f64::NAN } else { lo },
            max: if empty { f64::NAN } else { hi },
            area_mm2,
            pixel_area_mm2: acc.n as f64 * pixel_area,
        })
    }
}

/// The slice every voxel coordinate rounds to, or an error saying the ROI does not lie on one.
fn one_slice(voxels: &[[f64; 3]], slices: usize) -> Result<usize, ImagingError> {
    let k = voxels.iter().map(|v| v[2]).sum::<f64>() / voxels.len() as f64;
    let slice = k.round();
    if voxels
        .iter()
        .any(|v| (v[2] - slice).abs() > 0.5 + SLICE_SLACK)
    {
        return Err(invalid(
            "the ROI does not lie on one slice of the series: draw it in the plane the series was acquired in",
        ));
    }
    if slice < 0.0 || slice >= slices as f64 {
        return Err(invalid(format!(
            "the ROI lies outside the series (slice {slice}, the series has {slices})"
        )));
    }
    Ok(slice as usize)
}

/// Runs of pixels inside the ROI: (row, first column, last column), inclusive.
#[derive(Default)]
struct Spans(Vec<(usize, usize, usize)>);

impl Spans {
    /// Adds the columns `from..=to` (fractional bounds) of `row`, clipped to the image.
    fn push(&mut self, row: usize, from: f64, to_exclusive: f64, columns: usize) {
        let first = from.ceil().max(0.0);
        let end = to_exclusive.ceil().min(columns as f64);
        if end > first {
            self.0.push((row, first as usize, end as usize - 1));
        }
    }
}

/// The rows of the image whose centres lie from `lo` to `hi` (fractional, inclusive).
fn rows_between(lo: f64, hi: f64, rows: usize) -> std::ops::Range<usize> {
    let first = lo.ceil().clamp(0.0, rows as f64) as usize;
    let end = (hi.floor() + 1.0).clamp(0.0, rows as f64) as usize;
    first..end.max(first)
}

/// Pixel (i, j) is inside when `(i, j) − c = s·u + t·v` with s² + t² ≤ 1, where c, c+u, c+v are
/// the centre and semi-axis ends in voxel coordinates (i, j).
fn ellipse_spans(
    voxels: &[[f64; 3]],
    columns: usize,
    rows: usize,
    spans: &mut Spans,
) -> Result<(), ImagingError> {
    let c = voxels[0];
    let u = [voxels[1][0] - c[0], voxels[1][1] - c[1]];
    let v = [voxels[2][0] - c[0], voxels[2][1] - c[1]];
    let det = u[0] * v[1] - u[1] * v[0];
    if det.abs() < 1e-9 {
        return Err(invalid("the ellipse has no area"));
    }
    // Row j crosses the ellipse where |s(i)|² + |t(i)|² ≤ 1, a quadratic in i:
    // s = ( v1·x − v0·y)/det, t = (−u1·x + u0·y)/det with x = i − c0, y = j − c1.
    let half_height = (u[1] * u[1] + v[1] * v[1]).sqrt();
    for j in rows_between(c[1] - half_height, c[1] + half_height, rows) {
        let y = j as f64 - c[1];
        // s = (v1 x − v0 y)/det, t = (u0 y − u1 x)/det; s² + t² = (A x² + B x + C)/det².
        let a = v[1] * v[1] + u[1] * u[1];
        let b = -2.0 * (v[1] * v[0] + u[1] * u[0]) * y;
        let cc = (v[0] * v[0] + u[0] * u[0]) * y * y - det * det;
        let disc = b * b - 4.0 * a * cc;
        if disc < 0.0 || a <= 0.0 {
            continue;
        }
        let root = disc.sqrt();
        let (x0, x1) = ((-b - root) / (2.0 * a), (-b + root) / (2.0 * a));
        spans.push(j, nudge(c[0] + x0, -1.0), nudge(c[0] + x1, 1.0), columns);
    }
    Ok(())
}

/// `x` moved outwards (`direction` ±1) by a relative 1e-12, so that a pixel centre on the
/// ellipse's rim (s² + t² = 1, up to rounding of the roots) is inside, and `Spans::push`'s
/// exclusive end keeps it.
fn nudge(x: f64, direction: f64) -> f64 {
    x + direction * x.abs().max(1.0) * 1e-12
}

/// Row by row, the even-odd spans of a closed outline (voxel coordinates i, j): a pixel centre
/// is inside when a ray from it towards +i crosses the outline an odd number of times, an edge
/// counting when exactly one of its ends lies above the row (PNPOLY's rule).
fn outline_spans(voxels: &[[f64; 3]], columns: usize, rows: usize, spans: &mut Spans) {
    let (lo, hi) = voxels
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(l, h), v| {
            (l.min(v[1]), h.max(v[1]))
        });
    let mut crossings: Vec<f64> = Vec::new();
    for j in rows_between(lo, hi, rows) {
        let y = j as f64;
        crossings.clear();
        for (n, p) in voxels.iter().enumerate() {
            let q = voxels[(n + 1) % voxels.len()];
            if (p[1] > y) != (q[1] > y) {
                crossings.push(p[0] + (q[0] - p[0]) * (y - p[1]) / (q[1] - p[1]));
            }
        }
        crossings.sort_by(f64::total_cmp);
        // A centre i is inside when an odd number of crossings lie strictly beyond it:
        // i ∈ [c₀, c₁), [c₂, c₃), …
        for pair in crossings.chunks_exact(2) {
            spans.push(j, pair[0], pair[1], columns);
        }
    }
}

/// Sums of the stored values in the spans, shifted by the first value for a stable variance.
struct Accumulator {
    n: u64,
    shift: f64,
    sum: f64,
    sum_sq: f64,
    min: f64,
    max: f64,
}

impl Accumulator {
    fn mean(&self) -> f64 {
        self.shift + self.sum / self.n as f64
    }

    fn sd(&self) -> f64 {
        let n = self.n as f64;
        ((self.sum_sq - self.sum * self.sum / n) / n)
            .max(0.0)
            .sqrt()
    }
}

fn accumulate<T: Sample>(
    plane: &[T],
    columns: usize,
    spans: &[(usize, usize, usize)],
) -> Accumulator {
    let mut acc = Accumulator {
        n: 0,
        shift: 0.0,
        sum: 0.0,
        sum_sq: 0.0,
        min: f64::INFINITY,
        max: f64::NEG_INFINITY,
    };
    let mut shifted = false;
    for &(row, first, last) in spans {
        for x in &plane[row * columns + first..=row * columns + last] {
            let value = x.value();
            if !shifted {
                acc.shift = value;
                shifted = true;
            }
            let d = value - acc.shift;
            acc.n += 1;
            acc.sum += d;
            acc.sum_sq += d * d;
            acc.min = acc.min.min(value);
            acc.max = acc.max.max(value);
        }
    }
    acc
}

/// The shoelace area of a closed planar outline in 3-D: half the length of Σ pᵢ × pᵢ₊₁.
fn polygon_area(outline: &[[f64; 3]]) -> f64 {
    let origin = outline[0];
    let mut total = [0.0; 3];
    for n in 1..outline.len().saturating_sub(1) {
        let c = cross(sub(outline[n], origin), sub(outline[n + 1], origin));
        total = [total[0] + c[0], total[1] + c[1], total[2] + c[2]];
    }
    norm(total) / 2.0
}

/// The bidimensional diameters of a closed planar outline (patient mm): the longest distance
/// between two of its points, then the longest chord inside it perpendicular to that one.
/// `None` for fewer than 3 points or an outline with no area.
pub fn outline_diameters(outline: &[[f64; 3]]) -> Option<Diameters> {
    let flat = Plane2::of(outline)?;
    let points: Vec<[f64; 2]> = outline.iter().map(|p| flat.coords(*p)).collect();
    let hull = convex_hull(&points);
    let (mut best, mut ends) = (0.0, (points[0], points[0]));
    for (n, a) in hull.iter().enumerate() {
        for b in &hull[n + 1..] {
            let d = (b[0] - a[0]).hypot(b[1] - a[1]);
            if d > best {
                (best, ends) = (d, (*a, *b));
            }
        }
    }
    if best <= 0.0 {
        return None;
    }
    let axis = [
        (ends.1[0] - ends.0[0]) / best,
        (ends.1[1] - ends.0[1]) / best,
    ];
    let across = [-axis[1], axis[0]];
    // Along a line perpendicular to the axis, each inside stretch's length changes linearly
    // between the offsets of the outline's points, so the longest lies at one of them; at each,
    // edges ending exactly on the line are counted from either side.
    let along = |p: &[f64; 2]| p[0] * axis[0] + p[1] * axis[1];
    let mut widest = (0.0, [0.0; 2], [0.0; 2]);
    let mut crossings: Vec<f64> = Vec::new();
    for t in points.iter().map(along) {
        for above in [
            (|x: f64, t: f64| x > t) as fn(f64, f64) -> bool,
            |x: f64, t: f64| x >= t,
        ] {
            crossings.clear();
            for (n, p) in points.iter().enumerate() {
                let q = points[(n + 1) % points.len()];
                let (tp, tq) = (along(p), along(&q));
                if above(tp, t) != above(tq, t) {
                    let f = (t - tp) / (tq - tp);
                    let x = [p[0] + (q[0] - p[0]) * f, p[1] + (q[1] - p[1]) * f];
                    crossings.push(x[0] * across[0] + x[1] * across[1]);
                }
            }
            crossings.sort_by(f64::total_cmp);
            for pair in crossings.chunks_exact(2) {
                if pair[1] - pair[0] > widest.0 {
                    let at = |s: f64| [axis[0] * t + across[0] * s, axis[1] * t + across[1] * s];
                    widest = (pair[1] - pair[0], at(pair[0]), at(pair[1]));
                }
            }
        }
    }
    Some(Diameters {
        longest_mm: best,
        longest: [flat.point(ends.0), flat.point(ends.1)],
        perpendicular_mm: widest.0,
        perpendicular: [flat.point(widest.1), flat.point(widest.2)],
        product_mm2: best * widest.0,
    })
}

/// The bidimensional diameters of an ellipse (centre and the ends of two semi-axes, patient
/// mm): its major and minor axes, which are perpendicular. `None` when it has no area.
pub fn ellipse_diameters(centre: [f64; 3], a: [f64; 3], b: [f64; 3]) -> Option<Diameters> {
    let (u, v) = (sub(a, centre), sub(b, centre));
    // The point at angle θ is c + cos θ u + sin θ v; its squared distance from c is extreme where
    // tan 2θ = 2 u·v / (u·u − v·v).
    let theta = 0.5 * (2.0 * dot(u, v)).atan2(dot(u, u) - dot(v, v));
    let at = |th: f64| -> [f64; 3] { std::array::from_fn(|i| th.cos() * u[i] + th.sin() * v[i]) };
    let (mut major, mut minor) = (at(theta), at(theta + std::f64::consts::FRAC_PI_2));
    if norm(minor) > norm(major) {
        std::mem::swap(&mut major, &mut minor);
    }
    if norm(minor) <= 0.0 || norm(cross(u, v)) <= 0.0 {
        return None;
    }
    let ends = |d: [f64; 3]| -> [[f64; 3]; 2] {
        [
            std::array::from_fn(|i| centre[i] - d[i]),
            std::array::from_fn(|i| centre[i] + d[i]),
        ]
    };
    let (longest_mm, perpendicular_mm) = (2.0 * norm(major), 2.0 * norm(minor));
    Some(Diameters {
        longest_mm,
        longest: ends(major),
        perpendicular_mm,
        perpendicular: ends(minor),
        product_mm2: longest_mm * perpendicular_mm,
    })
}

/// An orthonormal frame in the plane of an outline: origin, two in-plane unit axes.
struct Plane2 {
    origin: [f64; 3],
    e1: [f64; 3],
    e2: [f64; 3],
}

impl Plane2 {
    /// The outline's plane from its Newell normal; `None` when it has no area.
    fn of(outline: &[[f64; 3]]) -> Option<Plane2> {
        if outline.len() < 3 {
            return None;
        }
        let origin = outline[0];
        let mut normal = [0.0; 3];
        for n in 1..outline.len() - 1 {
            let c = cross(sub(outline[n], origin), sub(outline[n + 1], origin));
            normal = [normal[0] + c[0], normal[1] + c[1], normal[2] + c[2]];
        }
        let length = norm(normal);
        if length.is_nan() || length <= 1e-12 {
            return None;
        }
        let normal = normal.map(|x| x / length);
        let far = outline
            .iter()
            .map(|p| sub(*p, origin))
            .max_by(|a, b| norm(*a).total_cmp(&norm(*b)))?;
        let e1 = far.map(|x| x / norm(far));
        Some(Plane2 {
            origin,
            e1,
            e2: cross(normal, e1),
        })
    }

    fn coords(&self, p: [f64; 3]) -> [f64; 2] {
        let d = sub(p, self.origin);
        [dot(d, self.e1), dot(d, self.e2)]
    }

    fn point(&self, [x, y]: [f64; 2]) -> [f64; 3] {
        std::array::from_fn(|i| self.origin[i] + x * self.e1[i] + y * self.e2[i])
    }
}

/// The convex hull (Andrew's monotone chain): the longest distance between two points of a set
/// is between two of its hull's corners.
fn convex_hull(points: &[[f64; 2]]) -> Vec<[f64; 2]> {
    let mut sorted = points.to_vec();
    sorted.sort_by(|a, b| a[0].total_cmp(&b[0]).then(a[1].total_cmp(&b[1])));
    sorted.dedup();
    if sorted.len() < 3 {
        return sorted;
    }
    let turn = |o: [f64; 2], a: [f64; 2], b: [f64; 2]| {
        (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0])
    };
    let mut hull: Vec<[f64; 2]> = Vec::with_capacity(sorted.len() * 2);
    for pass in [sorted.clone(), sorted.iter().rev().copied().collect()] {
        let start = hull.len();
        for p in pass {
            while hull.len() >= start + 2
                && turn(hull[hull.len() - 2], hull[hull.len() - 1], p) <= 0.0
            {
                hull.pop();
            }
            hull.push(p);
        }
        hull.pop();
    }
    hull
}

/// Patient LPS mm → voxel (i, j, k): the inverse of a voxel → patient affine (last row 0 0 0 1),
/// `None` when it is singular.
pub fn patient_to_voxel(m: &[[f64; 4]; 4]) -> Option<[[f64; 4]; 4]> {
    let a = |r: usize, c: usize| m[r][c];
    let det = a(0, 0) * (a(1, 1) * a(2, 2) - a(1, 2) * a(2, 1))
        - a(0, 1) * (a(1, 0) * a(2, 2) - a(1, 2) * a(2, 0))
        + a(0, 2) * (a(1, 0) * a(2, 1) - a(1, 1) * a(2, 0));
    if det.abs() < 1e-12 || !det.is_finite() {
        return None;
    }
    let mut inv = [[0.0; 4]; 4];
    for (r, row) in inv.iter_mut().take(3).enumerate() {
        for (c, cell) in row.iter_mut().take(3).enumerate() {
            // Cofactor of (c, r), transposed.
            let (r1, r2) = ((c + 1) % 3, (c + 2) % 3);
            let (c1, c2) = ((r + 1) % 3, (r + 2) % 3);
            *cell = (a(r1, c1) * a(r2, c2) - a(r1, c2) * a(r2, c1)) / det;
        }
        row[3] = -(0..3).map(|c| row[c] * m[c][3]).sum::<f64>();
    }
    inv[3][3] = 1.0;
    Some(inv)
}

/// `m` applied to the point `p` (homogeneous coordinate 1).
pub fn apply(m: &[[f64; 4]; 4], p: [f64; 3]) -> [f64; 3] {
    std::array::from_fn(|r| m[r][0] * p[0] + m[r][1] * p[1] + m[r][2] * p[2] + m[r][3])
}

fn column(m: &[[f64; 4]; 4], axis: usize) -> [f64; 3] {
    [m[0][axis], m[1][axis], m[2][axis]]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decoded::Rescale;

    /// A 10×8×3 CT-like volume, 0.5 mm × 0.8 mm pixels, 5 mm slices, origin (−2, −3, 10); the
    /// stored value of voxel (i, j, k) is 100k + 10j + i, HU = stored − 1024.
    fn volume() -> Volume {
        let (columns, rows, slices) = (10, 8, 3);
        let samples = (0..slices)
            .flat_map(|k| {
                (0..rows)
                    .flat_map(move |j| (0..columns).map(move |i| (100 * k + 10 * j + i) as u16))
            })
            .collect();
        Volume {
            dims: [columns, rows, slices],
            voxel_to_patient: [
                [0.5, 0.0, 0.0, -2.0],
                [0.0, 0.8, 0.0, -3.0],
                [0.0, 0.0, 5.0, 10.0],
                [0.0, 0.0, 0.0, 1.0],
            ],
            samples: Samples::U16(samples),
            channels: 1,
            rescale: Rescale {
                slope: 1.0,
                intercept: -1024.0,
            },
            windows: Vec::new(),
            modality: Some("CT".into()),
            monochrome1: false,
            value_range: (-1024.0, 0.0),
        }
    }

    /// Patient mm of voxel (i, j) on slice k of [`volume`].
    fn at(i: f64, j: f64, k: f64) -> [f64; 3] {
        [-2.0 + 0.5 * i, -3.0 + 0.8 * j, 10.0 + 5.0 * k]
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-9
    }

    #[test]
    fn a_rectangle_counts_the_pixel_centres_inside_it() {
        // Columns 2..=4 (centres 2, 3, 4 inside 1.6..4.4), rows 1..=2 (inside 0.7..2.2), slice 1.
        let outline = vec![
            at(1.6, 0.7, 1.0),
            at(4.4, 0.7, 1.0),
            at(4.4, 2.2, 1.0),
            at(1.6, 2.2, 1.0),
        ];
        let stats = volume().roi_stats(&RoiShape::Outline(outline)).unwrap();
        let stored: Vec<f64> = [1, 2]
            .iter()
            .flat_map(|j| [2, 3, 4].map(|i| (100 + 10 * j + i) as f64))
            .collect();
        let n = stored.len() as f64;
        let mean = stored.iter().sum::<f64>() / n;
        let sd = (stored.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n).sqrt();
        assert_eq!((stats.slice, stats.pixels), (1, 6));
        assert!(close(stats.mean, mean - 1024.0), "{stats:?}");
        assert!(close(stats.sd, sd), "{stats:?}");
        assert_eq!((stats.min, stats.max), (112.0 - 1024.0, 124.0 - 1024.0));
        assert!(close(stats.area_mm2, 2.8 * 0.5 * 1.5 * 0.8), "{stats:?}");
        assert!(close(stats.pixel_area_mm2, 6.0 * 0.4), "{stats:?}");
    }

    #[test]
    fn an_ellipse_counts_the_centres_within_it_rim_included() {
        // Centre on voxel (4, 4), semi-axes of 2 columns and 1 row: centres (2..=6, 4) and
        // (4, 3), (4, 5) — the rim points (2, 4), (6, 4), (4, 3), (4, 5) included.
        let shape = RoiShape::Ellipse {
            centre: at(4.0, 4.0, 0.0),
            a: at(6.0, 4.0, 0.0),
            b: at(4.0, 5.0, 0.0),
        };
        let stats = volume().roi_stats(&shape).unwrap();
        assert_eq!(stats.pixels, 7, "{stats:?}");
        assert!(close(stats.area_mm2, std::f64::consts::PI * 1.0 * 0.8));
        assert_eq!((stats.min, stats.max), (34.0 - 1024.0, 54.0 - 1024.0));
    }

    #[test]
    fn an_roi_across_slices_or_outside_the_series_is_refused() {
        let v = volume();
        let across = vec![at(1.0, 1.0, 0.0), at(3.0, 1.0, 1.0), at(3.0, 3.0, 0.0)];
        let e = v.roi_stats(&RoiShape::Outline(across)).unwrap_err();
        assert!(e.to_string().contains("one slice"), "{e}");
        let beyond = vec![at(1.0, 1.0, 5.0), at(3.0, 1.0, 5.0), at(3.0, 3.0, 5.0)];
        assert!(v.roi_stats(&RoiShape::Outline(beyond)).is_err());
        // Partly outside in-plane: only the pixels inside the image count.
        let wide = vec![
            at(-5.0, -0.2, 2.0),
            at(1.5, -0.2, 2.0),
            at(1.5, 0.2, 2.0),
            at(-5.0, 0.2, 2.0),
        ];
        assert_eq!(v.roi_stats(&RoiShape::Outline(wide)).unwrap().pixels, 2);
    }

    #[test]
    fn a_rectangle_is_measured_along_its_diagonal_and_its_widest_perpendicular() {
        // A 4 × 3 rectangle: the longest diameter is the 5 mm diagonal; the longest chord
        // perpendicular to it runs corner to the far side: 3 / cos(atan(4/3))... = 3·5/4 = 3.75.
        let rect = [
            [0.0, 0.0, 7.0],
            [4.0, 0.0, 7.0],
            [4.0, 3.0, 7.0],
            [0.0, 3.0, 7.0],
        ];
        let d = outline_diameters(&rect).unwrap();
        assert!(close(d.longest_mm, 5.0), "{d:?}");
        assert!(close(d.perpendicular_mm, 3.75), "{d:?}");
        assert!(close(d.product_mm2, 18.75));
        let along = sub(d.longest[1], d.longest[0]);
        let across = sub(d.perpendicular[1], d.perpendicular[0]);
        assert!(dot(along, across).abs() < 1e-9);
        assert!(d.perpendicular.iter().all(|p| close(p[2], 7.0)));
    }

    #[test]
    fn a_concave_outline_is_measured_inside_it() {
        // A U: two 1 mm-wide, 4 mm-tall arms joined by a 1 mm base, 3 mm wide overall. The
        // longest diameter is the diagonal from a base corner to the top of the other arm (5 mm);
        // a perpendicular chord may not bridge the gap between the arms.
        let u = [
            [0.0, 0.0, 0.0],
            [3.0, 0.0, 0.0],
            [3.0, 4.0, 0.0],
            [2.0, 4.0, 0.0],
            [2.0, 1.0, 0.0],
            [1.0, 1.0, 0.0],
            [1.0, 4.0, 0.0],
            [0.0, 4.0, 0.0],
        ];
        let d = outline_diameters(&u).unwrap();
        assert!(close(d.longest_mm, 5.0), "{d:?}");
        let hull_chord = 3.0 * 5.0 / 4.0;
        assert!(d.perpendicular_mm < hull_chord - 0.1, "{d:?}");
    }

    #[test]
    fn an_ellipse_gives_its_axes() {
        let d = ellipse_diameters([1.0, 1.0, 0.0], [1.0, 4.0, 0.0], [3.0, 1.0, 0.0]).unwrap();
        assert!(
            close(d.longest_mm, 6.0) && close(d.perpendicular_mm, 4.0),
            "{d:?}"
        );
        assert!(ellipse_diameters([0.0; 3], [1.0, 0.0, 0.0], [2.0, 0.0, 0.0]).is_none());
    }

    #[test]
    fn the_affine_inverse_round_trips() {
        // Rotated 90° in-plane (columns run along patient y), so the inverse is not diagonal.
        let m = [
            [0.0, -1.0, 0.0, 4.0],
            [1.0, 0.0, 0.0, -5.0],
            [0.0, 0.0, 2.0, -5.0],
            [0.0, 0.0, 0.0, 1.0],
        ];
        let inv = patient_to_voxel(&m).unwrap();
        let p = [3.0, 7.0, 2.0];
        let back = apply(&inv, apply(&m, p));
        assert!((0..3).all(|i| close(back[i], p[i])));
    }
}
