//! The MNI ICBM152 2009a template, embedded in the binary and resampled to a clinical grid.

use cases::Error;
use flate2::read::GzDecoder;
use nifti::{InMemNiftiObject, IntoNdArray, NiftiObject};

const T1_GZ: &[u8] =
    include_bytes!("../data/mni152/mni_icbm152_t1_tal_nlin_sym_09a_converted.nii.gz");
const GM_GZ: &[u8] =
    include_bytes!("../data/mni152/mni_icbm152_gm_tal_nlin_sym_09a_converted.nii.gz");
const WM_GZ: &[u8] =
    include_bytes!("../data/mni152/mni_icbm152_wm_tal_nlin_sym_09a_converted.nii.gz");

/// The template's licence, which must travel with every derived file.
pub(crate) const LICENCE: &str = include_str!("../data/mni152/LICENSE-and-README.md");

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

    /// Bilinear in x/y between the four template voxels `x` and `y` bracket on plane `z_index`,
    /// as a fraction of 255.
    fn sample_plane(&self, x: Tap, y: Tap, z_index: usize) -> f32 {
        let width = self.dims[0];
        let base = (z_index * self.dims[1] + y.lower) * width + x.lower;
        let at = |offset: usize| f32::from(self.values[base + offset]);
        let (tx, ty) = (x.upper_weight, y.upper_weight);
        let top = at(0) * (1.0 - tx) + at(1) * tx;
        let bottom = at(width) * (1.0 - tx) + at(width + 1) * tx;
        (top * (1.0 - ty) + bottom * ty) / 255.0
    }

    /// The smallest x and y ranges (template voxels) holding every non-zero voxel of `planes`.
    fn extent(&self, planes: &[usize]) -> Option<[[usize; 2]; 2]> {
        let width = self.dims[0];
        let mut extent: Option<[[usize; 2]; 2]> = None;
        for &plane in planes {
            let values = &self.values[plane * width * self.dims[1]..][..width * self.dims[1]];
            for (y, line) in values.chunks_exact(width).enumerate() {
                let (Some(first), Some(last)) = (
                    line.iter().position(|&v| v > 0),
                    line.iter().rposition(|&v| v > 0),
                ) else {
                    continue;
                };
                let [xs, ys] = extent.get_or_insert([[first, last], [y, y]]);
                *xs = [xs[0].min(first), xs[1].max(last)];
                *ys = [ys[0].min(y), ys[1].max(y)];
            }
        }
        extent
    }
}

/// Where a grid line falls between two template voxels along one axis.
#[derive(Debug, Clone, Copy)]
struct Tap {
    lower: usize,
    /// The upper voxel's share (0–1); the lower one has the rest.
    upper_weight: f32,
}

impl Tap {
    /// The tap at `offset_mm` from the first template voxel along an axis of `length` voxels;
    /// none off the template, where it is empty.
    fn on_axis(offset_mm: f64, length: usize) -> Option<Tap> {
        if offset_mm < 0.0 {
            return None;
        }
        let lower = offset_mm.floor() as usize;
        (lower + 1 < length).then_some(Tap {
            lower,
            upper_weight: (offset_mm - lower as f64) as f32,
        })
    }

    /// Whether either voxel of the tap lies in `range` (inclusive).
    fn touches(self, range: [usize; 2]) -> bool {
        self.lower + 1 >= range[0] && self.lower <= range[1]
    }
}

/// An axial acquisition grid: 5 mm contiguous slices, rows running anterior → posterior and
/// columns patient right → left (radiological display).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Grid {
    pub(crate) columns: usize,
    pub(crate) rows: usize,
    pub(crate) slices: usize,
    pub(crate) pixel_mm: f64,
    pub(crate) slice_mm: f64,
    /// LPS position of the centre of the first pixel of the first (most inferior) slice.
    pub(crate) origin_lps: [f64; 3],
}

/// The MR series' grid: 1.25 mm pixels over a 180 × 220 mm field of view.
pub(crate) const MR_GRID: Grid = Grid::centred_on_the_brain(144, 176, 1.25);

/// The CT series' grid: a clinical head CT's 512 × 512 matrix over a 230 mm field of view
/// (0.449 mm pixels).
pub(crate) const CT_GRID: Grid = Grid::centred_on_the_brain(512, 512, 230.0 / 512.0);

impl Grid {
    /// Every demo grid is centred on the template brain (RAS x 0, y −17) and shares one stack of
    /// 32 slices from the foramen magnum (z −70) to the vertex (z +85), so a slice number means
    /// the same height on every series of a case whatever its matrix.
    const fn centred_on_the_brain(columns: usize, rows: usize, pixel_mm: f64) -> Grid {
        let centre_lps = [0.0, 17.0];
        Grid {
            columns,
            rows,
            slices: 32,
            pixel_mm,
            slice_mm: 5.0,
            origin_lps: [
                centre_lps[0] - (columns - 1) as f64 * pixel_mm / 2.0,
                centre_lps[1] - (rows - 1) as f64 * pixel_mm / 2.0,
                -70.0,
            ],
        }
    }

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

/// Tissue fractions (0–1) on one grid, in its slice-major order.
#[derive(Clone)]
pub(crate) struct Tissue {
    pub(crate) grid: Grid,
    pub(crate) grey: Vec<f32>,
    pub(crate) white: Vec<f32>,
    pub(crate) csf: Vec<f32>,
}

impl Tissue {
    pub(crate) fn brain(&self, index: usize) -> f32 {
        self.grey[index] + self.white[index] + self.csf[index]
    }
}

/// The template's grey-matter, white-matter and intracranial maps, decoded once per demo build
/// and resampled onto each grid a series needs.
pub(crate) struct Template {
    grey: NativeVolume,
    white: NativeVolume,
    intracranial: NativeVolume,
}

impl Template {
    pub(crate) fn decode() -> Result<Template, Error> {
        let t1 = NativeVolume::decode("T1", T1_GZ)?;
        let grey = NativeVolume::decode("GM", GM_GZ)?;
        let white = NativeVolume::decode("WM", WM_GZ)?;
        if t1.dims != grey.dims || t1.dims != white.dims || t1.origin_ras != grey.origin_ras {
            return Err(Error::Demo(
                "embedded template: T1, GM and WM grids differ".to_string(),
            ));
        }
        // The template is skull-stripped: every non-zero T1 voxel is intracranial.
        let intracranial = NativeVolume {
            values: t1
                .values
                .iter()
                .map(|&v| if v > 0 { 255 } else { 0 })
                .collect(),
            ..t1
        };
        Ok(Template {
            grey,
            white,
            intracranial,
        })
    }

    /// The tissue fractions on `grid`, averaged over each 5 mm slab (partial volume as a real
    /// thick-slice acquisition would show it).
    pub(crate) fn tissue_on(&self, grid: Grid) -> Tissue {
        let mask = &self.intracranial;
        let mut tissue = Tissue {
            grid,
            grey: vec![0.0; grid.voxels()],
            white: vec![0.0; grid.voxels()],
            csf: vec![0.0; grid.voxels()],
        };
        // A column's template x (and a row's y) is the same on every row and slice: find it once.
        let column_taps: Vec<Option<Tap>> = (0..grid.columns)
            .map(|column| {
                let x_ras = -grid.lps(column as f64, 0.0, 0.0)[0];
                Tap::on_axis(x_ras - mask.origin_ras[0], mask.dims[0])
            })
            .collect();
        let row_taps: Vec<Option<Tap>> = (0..grid.rows)
            .map(|row| {
                let y_ras = -grid.lps(0.0, row as f64, 0.0)[1];
                Tap::on_axis(y_ras - mask.origin_ras[1], mask.dims[1])
            })
            .collect();
        let slab_half = (grid.slice_mm / 2.0).floor() as i64;
        let slab_count = (2 * slab_half + 1) as f32;
        for slice in 0..grid.slices {
            let z_centre = grid.lps(0.0, 0.0, slice as f64)[2];
            let planes: Vec<usize> = (-slab_half..=slab_half)
                .map(|dz| z_centre + dz as f64 - mask.origin_ras[2])
                .filter(|z| *z >= 0.0)
                .map(|z| z.round() as usize)
                .filter(|z| *z < mask.dims[2])
                .collect();
            // Outside the head every map is empty and the voxel keeps its zeros; on a 512² grid
            // that is most of the slice, so skip it rather than sample it.
            let Some([x_extent, y_extent]) = mask.extent(&planes) else {
                continue;
            };
            for (row, y) in row_taps.iter().enumerate() {
                let Some(y) = y.filter(|y| y.touches(y_extent)) else {
                    continue;
                };
                for (column, x) in column_taps.iter().enumerate() {
                    let Some(x) = x.filter(|x| x.touches(x_extent)) else {
                        continue;
                    };
                    let (mut g, mut w, mut m) = (0.0, 0.0, 0.0);
                    for &z in &planes {
                        m += mask.sample_plane(x, y, z);
                        if m > 0.0 {
                            g += self.grey.sample_plane(x, y, z);
                            w += self.white.sample_plane(x, y, z);
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
        tissue
    }
}

/// Distance (mm) from each voxel to the nearest voxel that is mostly brain, by a two-pass
/// chamfer transform with the grid's true (anisotropic) neighbour distances.
pub(crate) fn distance_from_brain(tissue: &Tissue) -> Vec<f32> {
    let grid = tissue.grid;
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
    let relax_at_a_face = |z: i64, y: i64, x: i64, sign: i64, distance: &mut Vec<f32>| {
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
    // Away from the grid's faces every neighbour exists and sits at a fixed distance in memory
    // behind the voxel (forward pass) or ahead of it (backward pass); on a 512² grid that is
    // nearly every voxel, and skipping the coordinate checks halves the transform's time.
    let behind: Vec<(usize, f32)> = neighbours
        .iter()
        .map(|&(dz, dy, dx, mm)| {
            let offset = (dz * dims[1] + dy) * dims[0] + dx;
            ((-offset) as usize, mm)
        })
        .collect();
    let inside = |z: i64, y: i64, x: i64| {
        (1..dims[2] - 1).contains(&z)
            && (1..dims[1] - 1).contains(&y)
            && (1..dims[0] - 1).contains(&x)
    };
    let relax = |z: i64, y: i64, x: i64, sign: i64, distance: &mut Vec<f32>| {
        let here = grid.index(x as usize, y as usize, z as usize);
        if distance[here] == 0.0 {
            // Brain: nothing is nearer.
            return;
        }
        if !inside(z, y, x) {
            relax_at_a_face(z, y, x, sign, distance);
            return;
        }
        let mut best = distance[here];
        for &(offset, mm) in &behind {
            let neighbour = if sign > 0 {
                here - offset
            } else {
                here + offset
            };
            let candidate = distance[neighbour] + mm;
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
