//! Synthetic contrasts and lesions on the resampled template.
//!
//! Signal is a mixture of tissue fractions (grey, white, CSF) with per-sequence tissue values,
//! plus a head shell (CSF rim, bone, scalp) outside the brain, lesions blended over it, and a
//! little noise. The values are chosen so the relative contrast matches what a reader expects of
//! each sequence at 3 T, not to reproduce any scanner's absolute numbers.

use super::rng::{fnv1a, voxel_noise};
use super::template::{Grid, Tissue, CT_GRID, MR_GRID};
use imaging::vector::{cross, dot, normalise};

/// What a series shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Sequence {
    T1,
    T2,
    Flair,
    Dwi,
    Adc,
    Ct,
}

/// Signal of each tissue on one sequence (MR: arbitrary units; ADC: 10⁻⁶ mm²/s; CT: HU).
struct TissueSignal {
    grey: f32,
    white: f32,
    csf: f32,
    /// Skull: signal void on MR, dense on CT.
    bone: f32,
    /// Scalp, mostly fat: bright on T1.
    scalp: f32,
    air: f32,
    noise: f32,
}

impl Sequence {
    fn tissue(self) -> TissueSignal {
        let (grey, white, csf, bone, scalp, air, noise) = match self {
            Sequence::T1 => (560.0, 820.0, 180.0, 60.0, 900.0, 0.0, 14.0),
            Sequence::T2 => (820.0, 560.0, 1800.0, 50.0, 700.0, 0.0, 18.0),
            Sequence::Flair => (780.0, 560.0, 110.0, 40.0, 620.0, 0.0, 16.0),
            Sequence::Dwi => (520.0, 440.0, 70.0, 20.0, 90.0, 0.0, 16.0),
            Sequence::Adc => (820.0, 720.0, 3000.0, 0.0, 900.0, 0.0, 40.0),
            Sequence::Ct => (38.0, 26.0, 6.0, 1100.0, 25.0, -1000.0, 3.0),
        };
        TissueSignal {
            grey,
            white,
            csf,
            bone,
            scalp,
            air,
            noise,
        }
    }

    /// The grid the series is acquired on: CT at a head CT's 512² matrix, MR coarser.
    pub(crate) fn grid(self) -> Grid {
        match self {
            Sequence::Ct => CT_GRID,
            Sequence::T1 | Sequence::T2 | Sequence::Flair | Sequence::Dwi | Sequence::Adc => {
                MR_GRID
            }
        }
    }

    /// The DICOM window a reader would open the series with (centre, width).
    pub(crate) fn window(self) -> (f64, f64) {
        match self {
            Sequence::T1 => (500.0, 1000.0),
            Sequence::T2 => (900.0, 1900.0),
            Sequence::Flair => (650.0, 1300.0),
            Sequence::Dwi => (600.0, 1200.0),
            Sequence::Adc => (1300.0, 2600.0),
            Sequence::Ct => (40.0, 80.0),
        }
    }
}

/// How a lesion looks on each sequence, in the units of [`Sequence::tissue`].
#[derive(Debug, Clone, Copy)]
pub(crate) struct Appearance {
    pub(crate) t1: f32,
    pub(crate) t2: f32,
    pub(crate) flair: f32,
    pub(crate) dwi: f32,
    pub(crate) adc: f32,
    pub(crate) ct: f32,
}

impl Appearance {
    fn on(&self, sequence: Sequence) -> f32 {
        match sequence {
            Sequence::T1 => self.t1,
            Sequence::T2 => self.t2,
            Sequence::Flair => self.flair,
            Sequence::Dwi => self.dwi,
            Sequence::Adc => self.adc,
            Sequence::Ct => self.ct,
        }
    }
}

/// Demyelinating plaque: T2/FLAIR bright, T1 iso-to-hypo, no restriction.
pub(crate) const PLAQUE: Appearance = Appearance {
    t1: 430.0,
    t2: 1350.0,
    flair: 1250.0,
    dwi: 520.0,
    adc: 1150.0,
    ct: 20.0,
};
/// Chronic "black hole" plaque: markedly T1 hypointense.
pub(crate) const BLACK_HOLE: Appearance = Appearance {
    t1: 260.0,
    t2: 1550.0,
    flair: 1150.0,
    dwi: 420.0,
    adc: 1400.0,
    ct: 14.0,
};
/// Hyperacute infarct (< 4.5 h): restricted diffusion, FLAIR still normal.
pub(crate) const HYPERACUTE_INFARCT: Appearance = Appearance {
    t1: 540.0,
    t2: 760.0,
    flair: 700.0,
    dwi: 1350.0,
    adc: 380.0,
    ct: 30.0,
};
/// Acute infarct (6–48 h): restricted diffusion and FLAIR/T2 bright, hypodense on CT.
pub(crate) const ACUTE_INFARCT: Appearance = Appearance {
    t1: 480.0,
    t2: 1250.0,
    flair: 1150.0,
    dwi: 1400.0,
    adc: 400.0,
    ct: 19.0,
};
/// Acute intraparenchymal haematoma (hyperdense clot).
pub(crate) const HAEMATOMA: Appearance = Appearance {
    t1: 560.0,
    t2: 300.0,
    flair: 600.0,
    dwi: 300.0,
    adc: 500.0,
    ct: 72.0,
};
/// Vasogenic oedema: follows white matter, T2/FLAIR bright, hypodense on CT, facilitated ADC.
pub(crate) const OEDEMA: Appearance = Appearance {
    t1: 520.0,
    t2: 1350.0,
    flair: 1200.0,
    dwi: 560.0,
    adc: 1350.0,
    ct: 18.0,
};
/// Solid high-grade glioma / metastasis.
pub(crate) const SOLID_TUMOUR: Appearance = Appearance {
    t1: 470.0,
    t2: 1050.0,
    flair: 980.0,
    dwi: 760.0,
    adc: 820.0,
    ct: 36.0,
};
/// Central necrosis: fluid-like.
pub(crate) const NECROSIS: Appearance = Appearance {
    t1: 260.0,
    t2: 1650.0,
    flair: 520.0,
    dwi: 240.0,
    adc: 2200.0,
    ct: 14.0,
};
/// Meningioma: extra-axial, near grey-matter signal on MR, hyperdense on CT.
pub(crate) const MENINGIOMA: Appearance = Appearance {
    t1: 600.0,
    t2: 880.0,
    flair: 860.0,
    dwi: 640.0,
    adc: 780.0,
    ct: 48.0,
};
/// Which tissue a lesion may replace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Compartment {
    /// Grey and white matter (infarct, tumour, plaque, haematoma).
    Parenchyma,
    /// White matter only: vasogenic oedema and periventricular change spare the cortex.
    WhiteMatter,
    /// Anything inside the skull, brain or not (extra-axial masses).
    Intracranial,
}

/// An ellipsoid in RAS millimetres, with a soft 1.5 mm edge so it partial-volumes like anatomy.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Ellipsoid {
    pub(crate) centre_ras: [f64; 3],
    /// Semi-axes (mm) along `axes`.
    pub(crate) semi_axes: [f64; 3],
    /// Orthonormal axes in RAS.
    pub(crate) axes: [[f64; 3]; 3],
}

impl Ellipsoid {
    /// Axis-aligned.
    pub(crate) const fn aligned(centre_ras: [f64; 3], semi_axes: [f64; 3]) -> Self {
        Ellipsoid {
            centre_ras,
            semi_axes,
            axes: [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]],
        }
    }

    /// Long axis along `direction` (normalised here), the two short axes equal.
    pub(crate) fn oriented(
        centre_ras: [f64; 3],
        direction: [f64; 3],
        long: f64,
        short: f64,
    ) -> Self {
        let first = normalise(direction);
        let helper = if first[2].abs() < 0.9 {
            [0.0, 0.0, 1.0]
        } else {
            [1.0, 0.0, 0.0]
        };
        let second = normalise(cross(first, helper));
        let third = cross(first, second);
        Ellipsoid {
            centre_ras,
            semi_axes: [long, short, short],
            axes: [first, second, third],
        }
    }

    /// 1 inside, 0 beyond the soft edge.
    fn fraction(&self, p_ras: [f64; 3]) -> f32 {
        let d = [
            p_ras[0] - self.centre_ras[0],
            p_ras[1] - self.centre_ras[1],
            p_ras[2] - self.centre_ras[2],
        ];
        let mut radius_squared = 0.0;
        for (axis, semi) in self.axes.iter().zip(self.semi_axes) {
            let along = dot(d, *axis) / semi;
            radius_squared += along * along;
        }
        let radius = radius_squared.sqrt();
        // Convert the normalised radius to an approximate distance past the surface (mm).
        let smallest = self.semi_axes.iter().cloned().fold(f64::MAX, f64::min);
        let beyond = (radius - 1.0) * smallest;
        (0.5 - beyond / 3.0).clamp(0.0, 1.0) as f32
    }

    /// Smallest radius that bounds the ellipsoid and its soft edge, for quick rejection.
    fn bound(&self) -> f64 {
        self.semi_axes.iter().cloned().fold(0.0, f64::max) + 2.0
    }

    /// The in-plane extent at height `z`: centre and the ends of the two in-plane semi-axes of
    /// the ellipsoid's cut, as LPS points, for ground-truth ellipse marks.
    pub(crate) fn axial_mark_lps(&self, z: f64) -> Vec<[f64; 3]> {
        // The cut of a general ellipsoid is an ellipse; approximate it by the bounding extents
        // along the patient axes, which is what a reader drawing on an axial slice would do.
        let samples = 180;
        let (mut min_x, mut max_x, mut min_y, mut max_y) = (f64::MAX, f64::MIN, f64::MAX, f64::MIN);
        for i in 0..samples {
            for j in 0..samples {
                let x = self.centre_ras[0] - self.bound()
                    + 2.0 * self.bound() * i as f64 / samples as f64;
                let y = self.centre_ras[1] - self.bound()
                    + 2.0 * self.bound() * j as f64 / samples as f64;
                if self.fraction([x, y, z]) >= 0.5 {
                    min_x = min_x.min(x);
                    max_x = max_x.max(x);
                    min_y = min_y.min(y);
                    max_y = max_y.max(y);
                }
            }
        }
        if min_x > max_x {
            let centre = super::template::lps_from_ras([self.centre_ras[0], self.centre_ras[1], z]);
            return vec![centre];
        }
        let (cx, cy) = ((min_x + max_x) / 2.0, (min_y + max_y) / 2.0);
        let centre = super::template::lps_from_ras([cx, cy, z]);
        let across = super::template::lps_from_ras([max_x, cy, z]);
        let front = super::template::lps_from_ras([cx, max_y, z]);
        vec![centre, across, front]
    }
}

/// One synthesised abnormality.
#[derive(Debug, Clone, Copy)]
pub(crate) struct LesionShape {
    pub(crate) shape: Ellipsoid,
    pub(crate) appearance: Appearance,
    pub(crate) compartment: Compartment,
    /// Keep to one side of the midline: `Some(true)` for patient left (RAS x < 0).
    pub(crate) left_only: Option<bool>,
}

/// A tissue displacement in the axial plane, applied before lesions are drawn.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Deformation {
    /// A mass of `radius` mm at `centre_ras` pushes tissue outward (area-preserving in plane),
    /// fading over `reach` mm: midline shift and effaced ventricles.
    Mass {
        centre_ras: [f64; 3],
        radius: f64,
        reach: f64,
    },
    /// Central enlargement by up to `gain` (e.g. 1.6): ventricles balloon, sulci stay.
    Ventriculomegaly {
        centre_ras: [f64; 3],
        gain: f64,
        reach: f64,
    },
}

impl Deformation {
    /// Where the tissue now at `p` came from (RAS, in-plane only).
    fn source(&self, p: [f64; 3]) -> [f64; 3] {
        match *self {
            Deformation::Mass {
                centre_ras,
                radius,
                reach,
            } => {
                let fade_z = mass_fade_along_z(centre_ras, radius, p[2]);
                let (dx, dy) = (p[0] - centre_ras[0], p[1] - centre_ras[1]);
                let r = (dx * dx + dy * dy).sqrt();
                if r < 1e-6 || fade_z == 0.0 {
                    return p;
                }
                let effective = radius * fade_z.sqrt() * (-(r - radius).max(0.0) / reach).exp();
                let r0 = (r * r - effective * effective).max(0.0).sqrt();
                let scale = r0 / r;
                [centre_ras[0] + dx * scale, centre_ras[1] + dy * scale, p[2]]
            }
            Deformation::Ventriculomegaly {
                centre_ras,
                gain,
                reach,
            } => {
                let d = [
                    p[0] - centre_ras[0],
                    p[1] - centre_ras[1],
                    p[2] - centre_ras[2],
                ];
                let r = (d[0] * d[0] + d[1] * d[1] * 0.35 + d[2] * d[2] * 0.6).sqrt();
                let zoom = 1.0 + (gain - 1.0) * (-(r / reach).powi(2)).exp();
                [
                    centre_ras[0] + d[0] / zoom,
                    centre_ras[1] + d[1] / zoom,
                    p[2],
                ]
            }
        }
    }

    /// Whether the axial plane at RAS height `z` keeps its tissue where it is.
    fn leaves_plane_alone(&self, z: f64) -> bool {
        match *self {
            Deformation::Mass {
                centre_ras, radius, ..
            } => mass_fade_along_z(centre_ras, radius, z) == 0.0,
            // The enlargement fades in a Gaussian, which never quite reaches zero.
            Deformation::Ventriculomegaly { .. } => false,
        }
    }
}

/// How much of a mass's push reaches height `z`: 1 at its centre, 0 from 1.5 radii away.
fn mass_fade_along_z(centre_ras: [f64; 3], radius: f64, z: f64) -> f64 {
    let dz = (z - centre_ras[2]) / (radius * 1.5);
    (1.0 - dz * dz).max(0.0)
}

/// Applies `deformation` to every tissue map (bilinear within each slice, on the maps' own grid).
pub(crate) fn deform(tissue: &Tissue, deformation: &Deformation) -> Tissue {
    let grid = tissue.grid;
    let mut out = tissue.clone();
    for slice in 0..grid.slices {
        // A mass moves only the few slices near it; the others would be resampled for nothing.
        if deformation.leaves_plane_alone(grid.lps(0.0, 0.0, slice as f64)[2]) {
            continue;
        }
        for row in 0..grid.rows {
            for column in 0..grid.columns {
                let p = grid.lps(column as f64, row as f64, slice as f64);
                let source = deformation.source([-p[0], -p[1], p[2]]);
                if (source[0] + p[0]).abs() < 1e-9 && (source[1] + p[1]).abs() < 1e-9 {
                    continue;
                }
                // RAS → LPS → fractional pixel indices on this slice.
                let fc = (-source[0] - grid.origin_lps[0]) / grid.pixel_mm;
                let fr = (-source[1] - grid.origin_lps[1]) / grid.pixel_mm;
                let index = grid.index(column, row, slice);
                out.grey[index] = bilinear(&tissue.grey, &grid, slice, fc, fr);
                out.white[index] = bilinear(&tissue.white, &grid, slice, fc, fr);
                out.csf[index] = bilinear(&tissue.csf, &grid, slice, fc, fr);
            }
        }
    }
    out
}

fn bilinear(values: &[f32], grid: &Grid, slice: usize, fc: f64, fr: f64) -> f32 {
    if fc < 0.0 || fr < 0.0 {
        return 0.0;
    }
    let (c0, r0) = (fc.floor() as usize, fr.floor() as usize);
    if c0 + 1 >= grid.columns || r0 + 1 >= grid.rows {
        return 0.0;
    }
    let (tc, tr) = ((fc - c0 as f64) as f32, (fr - r0 as f64) as f32);
    let at = |c: usize, r: usize| values[grid.index(c, r, slice)];
    let top = at(c0, r0) * (1.0 - tc) + at(c0 + 1, r0) * tc;
    let bottom = at(c0, r0 + 1) * (1.0 - tc) + at(c0 + 1, r0 + 1) * tc;
    top * (1.0 - tr) + bottom * tr
}

/// Everything needed to render any sequence of one case.
pub(crate) struct Scene<'a> {
    pub(crate) tissue: &'a Tissue,
    /// mm from the brain surface, for the head shell, on the tissue's grid.
    pub(crate) shell_distance: &'a [f32],
    /// Drawn in order; later lesions cover earlier ones (tumour over its oedema).
    pub(crate) lesions: &'a [LesionShape],
    /// Seeds the noise so each case and series has its own.
    pub(crate) noise_label: &'a str,
}

/// Shell layers outside the brain (mm from the brain surface).
const CSF_RIM_MM: f32 = 1.5;
const BONE_OUTER_MM: f32 = 8.0;
const SCALP_OUTER_MM: f32 = 13.0;

impl Scene<'_> {
    /// Modality values of the whole volume, in slice-major order of the tissue's grid.
    pub(crate) fn render(&self, sequence: Sequence) -> Vec<f32> {
        let grid = self.tissue.grid;
        let signal = sequence.tissue();
        let seed = fnv1a(format!("{}/{:?}", self.noise_label, sequence).as_bytes());
        // Per-slice bounds of each lesion avoid evaluating every ellipsoid at every voxel.
        let mut out = vec![0.0f32; grid.voxels()];
        for slice in 0..grid.slices {
            let z = grid.lps(0.0, 0.0, slice as f64)[2];
            let active: Vec<&LesionShape> = self
                .lesions
                .iter()
                .filter(|l| (l.shape.centre_ras[2] - z).abs() <= l.shape.bound() + grid.slice_mm)
                .collect();
            for row in 0..grid.rows {
                for column in 0..grid.columns {
                    let index = grid.index(column, row, slice);
                    let (g, w, c) = (
                        self.tissue.grey[index],
                        self.tissue.white[index],
                        self.tissue.csf[index],
                    );
                    let brain = g + w + c;
                    let outside = (1.0 - brain).max(0.0);
                    let d = self.shell_distance[index];
                    let shell = if d <= CSF_RIM_MM {
                        signal.csf
                    } else if d <= BONE_OUTER_MM {
                        signal.bone
                    } else if d <= SCALP_OUTER_MM {
                        signal.scalp
                    } else {
                        signal.air
                    };
                    let mut value =
                        g * signal.grey + w * signal.white + c * signal.csf + outside * shell;
                    if !active.is_empty() {
                        let p = grid.lps(column as f64, row as f64, slice as f64);
                        let ras = [-p[0], -p[1], p[2]];
                        for lesion in &active {
                            let side_ok = match lesion.left_only {
                                Some(left) => (ras[0] < 0.0) == left,
                                None => true,
                            };
                            if !side_ok {
                                continue;
                            }
                            let mut f = lesion.shape.fraction(ras);
                            if f == 0.0 {
                                continue;
                            }
                            f *= match lesion.compartment {
                                Compartment::Parenchyma => (g + w).min(1.0),
                                Compartment::WhiteMatter => (w + 0.25 * g).min(1.0),
                                Compartment::Intracranial => {
                                    if d <= CSF_RIM_MM {
                                        1.0
                                    } else {
                                        0.0
                                    }
                                }
                            };
                            value = (1.0 - f) * value + f * lesion.appearance.on(sequence);
                        }
                    }
                    let noise = if outside > 0.95 && d > SCALP_OUTER_MM && sequence != Sequence::Ct
                    {
                        // Background on MR is Rician: small and positive.
                        (voxel_noise(seed, index as u64).abs()) * signal.noise * 0.6
                    } else {
                        voxel_noise(seed, index as u64) * signal.noise
                    };
                    out[index] = value + noise;
                }
            }
        }
        out
    }
}
