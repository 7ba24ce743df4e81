//! Modality values to display grey levels: the VOI LUT functions of DICOM PS3.3 C.11.2.1.2
//! with an 8-bit output range (0..=255).

use serde::Serialize;

/// VOILUTFunction (0028,1056).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum VoiFunction {
    /// C.11.2.1.2.1, the default.
    Linear,
    /// C.11.2.1.3.2.
    LinearExact,
    /// C.11.2.1.3.1.
    Sigmoid,
}

impl VoiFunction {
    /// The function a file names; unknown or absent names mean LINEAR, as the standard says.
    pub fn from_dicom(name: Option<&str>) -> VoiFunction {
        match name.map(str::trim) {
            Some("LINEAR_EXACT") => VoiFunction::LinearExact,
            Some("SIGMOID") => VoiFunction::Sigmoid,
            _ => VoiFunction::Linear,
        }
    }
}

/// A window (center, width) with the function applying it and where it came from.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Window {
    pub center: f64,
    pub width: f64,
    pub function: VoiFunction,
    /// WindowCenterWidthExplanation, or how we chose the window ("full range of the image").
    pub explanation: String,
}

impl Window {
    /// The linear window taking `lo` to 0 and `hi` to 255 (C.11.2.1.2.1 solved for c and w).
    pub fn spanning(lo: f64, hi: f64, explanation: impl Into<String>) -> Window {
        Window {
            center: (lo + hi) / 2.0 + 0.5,
            width: hi - lo + 1.0,
            function: VoiFunction::Linear,
            explanation: explanation.into(),
        }
    }

    /// Whether the standard allows this width for this function (LINEAR needs width ≥ 1,
    /// the others width > 0).
    pub fn is_valid(&self) -> bool {
        let width_ok = match self.function {
            VoiFunction::Linear => self.width >= 1.0,
            VoiFunction::LinearExact | VoiFunction::Sigmoid => self.width > 0.0,
        };
        width_ok && self.center.is_finite() && self.width.is_finite()
    }

    /// The grey level of modality value `x`: y8 = floor(y + 0.5).
    #[inline]
    pub fn apply(&self, x: f64) -> u8 {
        let (c, w) = (self.center, self.width);
        let y = match self.function {
            VoiFunction::Linear => {
                if x <= c - 0.5 - (w - 1.0) / 2.0 {
                    0.0
                } else if x > c - 0.5 + (w - 1.0) / 2.0 {
                    255.0
                } else {
                    ((x - (c - 0.5)) / (w - 1.0) + 0.5) * 255.0
                }
            }
            VoiFunction::LinearExact => {
                if x <= c - w / 2.0 {
                    0.0
                } else if x > c + w / 2.0 {
                    255.0
                } else {
                    ((x - c) / w + 0.5) * 255.0
                }
            }
            VoiFunction::Sigmoid => 255.0 / (1.0 + (-4.0 * (x - c) / w).exp()),
        };
        // NaN (from a NaN voxel) becomes 0: black, like background.
        (y + 0.5).floor().clamp(0.0, 255.0) as u8
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// PS3.3 C.11.2.1.2.1 worked by hand: c = 40, w = 400 (a CT brain-ish window) maps
    /// x ≤ -160 to 0, x > 239 to 255, and the center 40 to ((40 - 39.5)/399 + 0.5)·255 = 127.82 → 128.
    #[test]
    fn linear_window_matches_the_standard_formula_at_its_edges_and_center() {
        let w = Window {
            center: 40.0,
            width: 400.0,
            function: VoiFunction::Linear,
            explanation: String::new(),
        };
        assert_eq!(w.apply(-160.0), 0);
        assert_eq!(w.apply(240.0), 255);
        assert_eq!(w.apply(40.0), 128);
        assert_eq!(w.apply(-159.0), 1); // ((−159 − 39.5)/399 + 0.5)·255 = 0.639 → 1
    }

    #[test]
    fn spanning_window_takes_min_to_black_and_max_to_white() {
        let w = Window::spanning(-1000.0, 3000.0, "");
        assert_eq!(w.apply(-1000.0), 0);
        assert_eq!(w.apply(3000.0), 255);
        assert_eq!(w.apply(1000.0), 128); // exactly half: 127.5 rounds up
    }

    #[test]
    fn sigmoid_is_half_grey_at_the_center() {
        let w = Window {
            center: 100.0,
            width: 50.0,
            function: VoiFunction::Sigmoid,
            explanation: String::new(),
        };
        assert_eq!(w.apply(100.0), 128);
        assert!(w.apply(0.0) < 2 && w.apply(200.0) > 253);
    }
}
