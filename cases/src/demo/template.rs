//! The MNI ICBM152 2009a template, embedded in the binary and resampled to a clinical grid.

use crate::Error;
use flate2::read::GzDecoder;
use nifti::{InMemNiftiObject, IntoNdArray, NiftiObject};

const T1_GZ: &[u8] =
    include_bytes!("../../data/mni152/mni_icbm152_t1_tal_nlin_sym_09a_converted.nii.gz");
const GM_GZ: &[u8] =
    include_bytes!("../../data/mni152/mni_icbm152_gm_tal_nlin_sym_09a_converted.nii.gz");
const WM_GZ: &[u8] =
    include_bytes!("../../data/mni152/mni_icbm152_wm_tal_nlin_sym_09a_converted.nii.gz");

/// The template's licence, which must travel with every derived file.
pub(crate) const LICENCE: &str = include_str!("../../data/mni152/LICENSE-and-README.md");

/// One template volume on its native 1 mm grid, in RAS millimetres.
struct NativeVolume {
    dims: [usize; 3],
    /// RAS position of voxel (0, 0, 0); the template's sform is a pure 1 mm translation.
    origin_ras: [f64; 3],
    /// Fortran order (x fastest), values as stored (0–255).
    values: Vec<u8>,
}

impl NativeVolume {
    fn decode(name: &str, gz: &[u8]) -> Result<Self, Error> {
        let fail = |reason: String| Error::Demo(format!("embedded template {name}: {reason}"));
        let object = InMemNiftiObject::from_reader(GzDecoder::new(gz))
            .map_err(|e| fail(format!("cannot decode NIfTI: {e}")))?;
        let header = object.header().clone();
        let dims = header.dim().map_err(|e| fail(format!("dim: {e}")))?;
        if dims.len() != 3 {
            return Err(fail(format!("expected a 3-D volume, dim = {dims:?}")));
        }
        let dims = [dims[0] as usize, dims[1] as usize, dims[2] as usize];
        // Resampling below assumes an axis-aligned 1 mm RAS grid; refuse anything else rather
        // than synthesise a subtly mirrored brain.
        let (sx, sy, sz) = (header.srow_x, header.srow_y, header.srow_z);
        let axis_aligned = [
            (sx[0], sx[1], sx[2]),
            (sy[1], sy[0], sy[2]),
            (sz[2], sz[0], sz[1]),
        ]
        .iter()
        .all(|(diag, a, b)| (diag - 1.0).abs() < 1e-4 && a.abs() < 1e-4 && b.abs() < 1e-4);
        if !axis_aligned {
            return Err(fail(format!(
                "sform is not a 1 mm RAS grid: {sx:?} {sy:?} {sz:?}"
            )));
        }
        let array = object
            .into_volume()
            .into_ndarray::<f32>()
            .map_err(|e| fail(format!("voxel data: {e}")))?;
        // ndarray's logical order is (x, y, z); read it back in Fortran order.
        let values = array
            .t()
            .iter()
            .map(|v| v.round().clamp(0.0, 255.0) as u8)
            .collect();
        Ok(NativeVolume {
            dims,
            origin_ras: [f64::from(sx[3]), f64::from(sy[3]), f64::from(sz[3])],
            values,
        })
    }

    /// Bilinear in x/y at an integer z plane (the grid below puts every sub-slice on one), as a
    /// fraction of 255. Outside the volume the template is empty.
    fn sample_plane(&self, x_ras: f64, y_ras: f64, z_index: usize) -> f32 {
        let fx = x_ras - self.origin_ras[0];
        let fy = y_ras - self.origin_ras[1];
        if fx < 0.0 || fy < 0.0 || z_index >= self.dims[2] {
            return 0.0;
        }
        let (x0, y0) = (fx.floor() as usize, fy.floor() as usize);
        if x0 + 1 >= self.dims[0] || y0 + 1 >= self.dims[1] {
            return 0.0;
        }
        let (tx, ty) = ((fx - x0 as f64) as f32, (fy - y0 as f64) as f32);
        let plane = z_index * self.dims[0] * self.dims[1];
        let at = |x: usize, y: usize| f32::from(self.values[plane + y * self.dims[0] + x]);
        let top = at(x0, y0) * (1.0 - tx) + at(x0 + 1, y0) * tx;
        let bottom = at(x0, y0 + 1) * (1.0 - tx) + at(x0 + 1, y0 + 1) * tx;
        (top * (1.0 - ty) + bottom * ty) / 255.0
    }
}

/// The acquisition grid every demo series uses: axial, 1.25 mm in-plane, 5 mm contiguous slices,
/// rows running anterior → posterior and columns patient right → left (radiological display).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Grid {
    pub(crate) columns: usize,
    pub(crate) rows: usize,
    pub(crate) slices: usize,
    pub(crate) pixel_mm: f64,
    pub(crate) slice_mm: f64,
    /// LPS position of the centre of the first pixel of the first (most inferior) slice.
    pub(crate) origin_lps: [f64; 3],
}

pub(crate) const GRID: Grid = Grid {
    columns: 144,
    rows: 176,
    slices: 32,
    pixel_mm: 1.25,
    slice_mm: 5.0,
    // Centred on the template brain (RAS x 0, y −17): 180 × 220 mm field of view, slices from
    // the foramen magnum (z −70) to the vertex (z +85).
    origin_lps: [-89.375, -92.375, -70.0],
};

impl Grid {
    pub(crate) fn voxels(&self) -> usize {
        self.columns * self.rows * self.slices
    }

    pub(crate) fn index(&self, column: usize, row: usize, slice: usize) -> usize {
        (slice * self.rows + row) * self.columns + column
    }

    pub(crate) fn lps(&self, column: f64, row: f64, slice: f64) -> [f64; 3] {
        [
            self.origin_lps[0] + column * self.pixel_mm,
            self.origin_lps[1] + row * self.pixel_mm,
            self.origin_lps[2] + slice * self.slice_mm,
        ]
    }

    /// The slice whose centre is nearest to LPS height `z`, if the grid covers it.
    pub(crate) fn slice_at(&self, z: f64) -> Option<usize> {
        let index = ((z - self.origin_lps[2]) / self.slice_mm).round();
        (index >= 0.0 && (index as usize) < self.slices).then_some(index as usize)
    }
}

pub(crate) fn lps_from_ras(p: [f64; 3]) -> [f64; 3] {
    [-p[0], -p[1], p[2]]
}

/// Tissue fractions (0–1) on [`GRID`], plus the distance (mm) from the brain for the head shell.
#[derive(Clone)]
pub(crate) struct Tissue {
    pub(crate) grey: Vec<f32>,
    pub(crate) white: Vec<f32>,
    pub(crate) csf: Vec<f32>,
}

impl Tissue {
    pub(crate) fn brain(&self, index: usize) -> f32 {
        self.grey[index] + self.white[index] + self.csf[index]
    }
}

/// Decodes the embedded template and averages it over each 5 mm slab (partial volume as a real
/// thick-slice acquisition would show it).
pub(crate) fn load_tissue() -> Result<Tissue, Error> {
    let t1 = NativeVolume::decode("T1", T1_GZ)?;
    let grey = NativeVolume::decode("GM", GM_GZ)?;
    let white = NativeVolume::decode("WM", WM_GZ)?;
    if t1.dims != grey.dims || t1.dims != white.dims || t1.origin_ras != grey.origin_ras {
        return Err(Error::Demo(
            "embedded template: T1, GM and WM grids differ".to_string(),
        ));
    }
    // The template is skull-stripped: every non-zero T1 voxel is intracranial.
    let mask = NativeVolume {
        values: t1
            .values
            .iter()
            .map(|&v| if v > 0 { 255 } else { 0 })
            .collect(),
        ..t1
    };
    let grid = GRID;
    let mut tissue = Tissue {
        grey: vec![0.0; grid.voxels()],
        white: vec![0.0; grid.voxels()],
        csf: vec![0.0; grid.voxels()],
    };
    let slab_half = (grid.slice_mm / 2.0).floor() as i64;
    let slab_count = (2 * slab_half + 1) as f32;
    for slice in 0..grid.slices {
        let z_centre = grid.lps(0.0, 0.0, slice as f64)[2];
        let planes: Vec<usize> = (-slab_half..=slab_half)
            .map(|dz| z_centre + dz as f64 - mask.origin_ras[2])
            .filter(|z| *z >= 0.0)
            .map(|z| z.round() as usize)
            .collect();
        for row in 0..grid.rows {
            for column in 0..grid.columns {
                let p = grid.lps(column as f64, row as f64, slice as f64);
                let (x_ras, y_ras) = (-p[0], -p[1]);
                let (mut g, mut w, mut m) = (0.0, 0.0, 0.0);
                for &z in &planes {
                    m += mask.sample_plane(x_ras, y_ras, z);
                    if m > 0.0 {
                        g += grey.sample_plane(x_ras, y_ras, z);
                        w += white.sample_plane(x_ras, y_ras, z);
                    }
                }
                let index = grid.index(column, row, slice);
                let (g, w, m) = (g / slab_count, w / slab_count, m / slab_count);
                let parenchyma = (g + w).min(m);
                let scale = if g + w > 0.0 {
                    parenchyma / (g + w)
                } else {
                    0.0
                };
                tissue.grey[index] = g * scale;
                tissue.white[index] = w * scale;
                tissue.csf[index] = m - parenchyma;
            }
        }
    }
    Ok(tissue)
}

/// Distance (mm) from each voxel to the nearest voxel that is mostly brain, by a two-pass
/// chamfer transform with the grid's true (anisotropic) neighbour distances.
pub(crate) fn distance_from_brain(tissue: &Tissue) -> Vec<f32> {
    let grid = GRID;
    let mut distance: Vec<f32> = (0..grid.voxels())
        .map(|i| {
            if tissue.brain(i) >= 0.5 {
                0.0
            } else {
                f32::MAX
            }
        })
        .collect();
    let mut neighbours = Vec::new();
    for dz in -1i64..=1 {
        for dy in -1i64..=1 {
            for dx in -1i64..=1 {
                let forward = (dz, dy, dx) < (0, 0, 0);
                if forward {
                    let mm = ((dx as f64 * grid.pixel_mm).powi(2)
                        + (dy as f64 * grid.pixel_mm).powi(2)
                        + (dz as f64 * grid.slice_mm).powi(2))
                    .sqrt() as f32;
                    neighbours.push((dz, dy, dx, mm));
                }
            }
        }
    }
    let dims = [grid.columns as i64, grid.rows as i64, grid.slices as i64];
    let relax = |z: i64, y: i64, x: i64, sign: i64, distance: &mut Vec<f32>| {
        let here = grid.index(x as usize, y as usize, z as usize);
        let mut best = distance[here];
        for &(dz, dy, dx, mm) in &neighbours {
            let (nz, ny, nx) = (z + sign * dz, y + sign * dy, x + sign * dx);
            if nz < 0 || ny < 0 || nx < 0 || nz >= dims[2] || ny >= dims[1] || nx >= dims[0] {
                continue;
            }
            let candidate = distance[grid.index(nx as usize, ny as usize, nz as usize)] + mm;
            if candidate < best {
                best = candidate;
            }
        }
        distance[here] = best;
    };
    for z in 0..dims[2] {
        for y in 0..dims[1] {
            for x in 0..dims[0] {
                relax(z, y, x, 1, &mut distance);
            }
        }
    }
    for z in (0..dims[2]).rev() {
        for y in (0..dims[1]).rev() {
            for x in (0..dims[0]).rev() {
                relax(z, y, x, -1, &mut distance);
            }
        }
    }
    distance
}
