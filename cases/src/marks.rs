//! Marks on the images: a point, an arrow, an ellipse or a freehand outline, stored in patient
//! coordinates (DICOM LPS, mm) on a named series, so a mark means the same place at any zoom, in
//! any viewport and after reslicing. Lesion ground truth and image-anchored error labels are both
//! made of these.
//!
//! The viewer works in NIfTI RAS mm (NiiVue's world space); the conversion is a sign flip of x and
//! y, done once in `ui/src/lib/marks.ts`.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "snake_case")]
pub enum MarkKind {
    /// One point.
    Point,
    /// Two points: tail, then head (what the arrow points at).
    Arrow,
    /// Three points: centre, the end of one semi-axis, the end of the other.
    Ellipse,
    /// An outline of 3 or more points, closed from the last back to the first.
    Freehand,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(rename_all = "snake_case")]
pub enum Plane {
    Axial,
    Coronal,
    Sagittal,
}

impl Plane {
    /// The patient axis normal to the plane, numbered as in [`imaging::Volume::slice_axis`].
    pub fn normal_axis(self) -> usize {
        match self {
            Plane::Sagittal => 0,
            Plane::Coronal => 1,
            Plane::Axial => 2,
        }
    }
}

/// One mark. Serialised as stored in `error_labels.mark_json` and in ground-truth lesions.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[cfg_attr(feature = "specta", derive(specta::Type))]
#[serde(deny_unknown_fields)]
pub struct Mark {
    /// The series it was drawn on (`series_id` of the bundle).
    pub series_id: String,
    pub kind: MarkKind,
    /// The plane it was drawn in; the points lie in it.
    pub plane: Plane,
    /// Patient coordinates, DICOM LPS, millimetres.
    #[cfg_attr(feature = "specta", specta(type = Vec<[crate::finite::Finite; 3]>))]
    pub points_lps_mm: Vec<[f64; 3]>,
}

/// How far outside the volume's outer voxel faces a point may lie (rounding of a click on the
/// edge voxel), in mm.
const EDGE_TOLERANCE_MM: f64 = 1.0;

/// The largest outline stored; a freehand stroke is resampled by the viewer well below this.
pub const MAX_POINTS: usize = 2048;

impl Mark {
    /// Checks the shape (point count, finite coordinates). Returns what is wrong, for a message
    /// that names the field.
    pub fn check_shape(&self) -> Result<(), String> {
        let n = self.points_lps_mm.len();
        let expected = match self.kind {
            MarkKind::Point => n == 1,
            MarkKind::Arrow => n == 2,
            MarkKind::Ellipse => n == 3,
            MarkKind::Freehand => (3..=MAX_POINTS).contains(&n),
        };
        if !expected {
            return Err(format!(
                "a {} mark needs {}, not {n} point(s)",
                self.kind.name(),
                self.kind.points_needed()
            ));
        }
        if self.series_id.trim().is_empty() {
            return Err("the mark names no series".into());
        }
        if let Some(bad) = self
            .points_lps_mm
            .iter()
            .find(|p| p.iter().any(|c| !c.is_finite()))
        {
            return Err(format!("a point is not a finite coordinate: {bad:?}"));
        }
        Ok(())
    }

    /// Checks that every point lies inside the volume whose voxel (i, j, k) maps to patient LPS
    /// mm through `voxel_to_patient`, with `dims` = [columns, rows, slices].
    pub fn check_inside(
        &self,
        dims: [usize; 3],
        voxel_to_patient: &[[f64; 4]; 4],
    ) -> Result<(), String> {
        let to_voxel = imaging::patient_to_voxel(voxel_to_patient)
            .ok_or_else(|| "the series' geometry cannot be inverted".to_owned())?;
        for (index, point) in self.points_lps_mm.iter().enumerate() {
            let voxel = imaging::apply_affine(&to_voxel, *point);
            for axis in 0..3 {
                // Voxel centres run 0..dims-1; the faces are half a voxel beyond them.
                let spacing = column_norm(voxel_to_patient, axis).max(f64::MIN_POSITIVE);
                let slack = 0.5 + EDGE_TOLERANCE_MM / spacing;
                let low = -slack;
                let high = dims[axis] as f64 - 1.0 + slack;
                if !(low..=high).contains(&voxel[axis]) {
                    return Err(format!(
                        "point {} at ({:.1}, {:.1}, {:.1}) mm lies outside the series' volume",
                        index + 1,
                        point[0],
                        point[1],
                        point[2]
                    ));
                }
            }
        }
        Ok(())
    }
}

impl MarkKind {
    pub fn name(self) -> &'static str {
        match self {
            MarkKind::Point => "point",
            MarkKind::Arrow => "arrow",
            MarkKind::Ellipse => "ellipse",
            MarkKind::Freehand => "freehand",
        }
    }

    fn points_needed(self) -> &'static str {
        match self {
            MarkKind::Point => "exactly 1 point",
            MarkKind::Arrow => "2 points (tail, head)",
            MarkKind::Ellipse => "3 points (centre and the ends of its two semi-axes)",
            MarkKind::Freehand => "3 to 2048 points",
        }
    }
}

fn column_norm(m: &[[f64; 4]; 4], axis: usize) -> f64 {
    (0..3).map(|r| m[r][axis] * m[r][axis]).sum::<f64>().sqrt()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mark(kind: MarkKind, points: Vec<[f64; 3]>) -> Mark {
        Mark {
            series_id: "flair".into(),
            kind,
            plane: Plane::Axial,
            points_lps_mm: points,
        }
    }

    /// 1 mm isotropic, 10³ voxels, origin at (-5, -5, -5) mm, rotated 90° in-plane (columns run
    /// along patient y) so the inverse is not the identity.
    fn rotated() -> [[f64; 4]; 4] {
        [
            [0.0, -1.0, 0.0, 4.0],
            [1.0, 0.0, 0.0, -5.0],
            [0.0, 0.0, 2.0, -5.0],
            [0.0, 0.0, 0.0, 1.0],
        ]
    }

    #[test]
    fn point_counts_are_checked_per_kind() {
        assert!(mark(MarkKind::Point, vec![[0.0; 3]]).check_shape().is_ok());
        assert!(mark(MarkKind::Arrow, vec![[0.0; 3]]).check_shape().is_err());
        assert!(mark(MarkKind::Ellipse, vec![[0.0; 3]; 3])
            .check_shape()
            .is_ok());
        assert!(mark(MarkKind::Freehand, vec![[0.0; 3]; 2])
            .check_shape()
            .is_err());
        let nan = mark(MarkKind::Point, vec![[f64::NAN, 0.0, 0.0]]);
        assert!(nan.check_shape().unwrap_err().contains("finite"));
    }

    #[test]
    fn points_inside_and_outside_the_volume() {
        let m = rotated();
        // Voxel (0, 0, 0) → (4, -5, -5); voxel (9, 9, 9) → (-5, 4, 13).
        let inside = mark(MarkKind::Arrow, vec![[4.0, -5.0, -5.0], [-5.0, 4.0, 13.0]]);
        assert!(inside.check_inside([10, 10, 10], &m).is_ok());
        let outside = mark(MarkKind::Point, vec![[0.0, 0.0, 30.0]]);
        let message = outside.check_inside([10, 10, 10], &m).unwrap_err();
        assert!(message.contains("point 1"), "{message}");
    }
}
