//! NIfTI-1 (header through the `nifti` crate) and NIfTI-2 (header read here: the crate reads
//! NIfTI-1 only), plain or gzip-compressed. Only volume 0 of a 4-D file is decoded.

use std::fs::File;
use std::io::{BufReader, Read};
use std::path::Path;

use flate2::read::MultiGzDecoder;

use super::decoded::{Decoded, Rescale};
use super::error::{ImagingError, ImagingErrorKind};
use super::samples::Samples;
use super::voi::Window;
use super::MAX_DECODED_BYTES;

/// The header fields NeuroRater uses, whichever NIfTI version they came from.
#[derive(Debug, Clone)]
pub(crate) struct NiftiHeader {
    pub version: u8,
    pub dim: [i64; 8],
    pub datatype: i16,
    pub bitpix: i16,
    pub pixdim: [f64; 8],
    pub vox_offset: u64,
    pub scl_slope: f64,
    pub scl_inter: f64,
    pub cal_min: f64,
    pub cal_max: f64,
    pub qform_code: i32,
    pub sform_code: i32,
    pub quatern: [f64; 3],
    pub qoffset: [f64; 3],
    pub srow: [[f64; 4]; 3],
    pub little_endian: bool,
}

pub(crate) struct NiftiImage {
    pub header: NiftiHeader,
    pub decoded: Decoded,
}

/// Whether the first bytes (already gunzipped) look like a NIfTI-1 or NIfTI-2 header.
pub(crate) fn looks_like_nifti(first: &[u8]) -> bool {
    if first.len() < 4 {
        return false;
    }
    let size = [first[0], first[1], first[2], first[3]];
    [348, 540].contains(&i32::from_le_bytes(size)) || [348, 540].contains(&i32::from_be_bytes(size))
}

pub(crate) fn open_stream(path: &Path) -> Result<Box<dyn Read>, ImagingError> {
    let io = |e: std::io::Error| {
        ImagingError::new(path, ImagingErrorKind::Io, format!("cannot read: {e}"))
    };
    let mut file = BufReader::new(File::open(path).map_err(io)?);
    let mut magic = [0u8; 2];
    let gz = {
        use std::io::BufRead;
        let buf = file.fill_buf().map_err(io)?;
        magic.copy_from_slice(buf.get(..2).unwrap_or(&[0, 0]));
        magic == [0x1f, 0x8b]
    };
    Ok(if gz {
        Box::new(MultiGzDecoder::new(file))
    } else {
        Box::new(file)
    })
}

pub(crate) fn read_header(path: &Path, stream: &mut dyn Read) -> Result<NiftiHeader, ImagingError> {
    let truncated = |what: &str| {
        ImagingError::new(
            path,
            ImagingErrorKind::Truncated,
            format!("the file ends inside the {what}"),
        )
    };
    let mut bytes = vec![0u8; 348];
    stream
        .read_exact(&mut bytes)
        .map_err(|_| truncated("NIfTI header"))?;
    let size = [bytes[0], bytes[1], bytes[2], bytes[3]];
    let header = if i32::from_le_bytes(size) == 540 || i32::from_be_bytes(size) == 540 {
        bytes.resize(540, 0);
        stream
            .read_exact(&mut bytes[348..])
            .map_err(|_| truncated("NIfTI-2 header"))?;
        parse_nifti2(&bytes)
    } else {
        let h = nifti::NiftiHeader::from_reader(&bytes[..]).map_err(|e| {
            ImagingError::new(
                path,
                ImagingErrorKind::InvalidHeader,
                format!("invalid NIfTI-1 header: {e}"),
            )
        })?;
        from_nifti1(&h)
    };
    let dims = header.dim[0];
    if !(1..=7).contains(&dims) || header.dim[1..=dims as usize].iter().any(|&d| d < 1) {
        return Err(ImagingError::new(
            path,
            ImagingErrorKind::InvalidHeader,
            format!(
                "dim {:?} is invalid: dim[0] must be 1–7 and each used dimension ≥ 1",
                header.dim
            ),
        ));
    }
    Ok(header)
}

fn from_nifti1(h: &nifti::NiftiHeader) -> NiftiHeader {
    let f = |v: f32| v as f64;
    NiftiHeader {
        version: 1,
        dim: h.dim.map(|d| d as i16 as i64),
        datatype: h.datatype,
        bitpix: h.bitpix,
        pixdim: h.pixdim.map(f),
        vox_offset: h.vox_offset.max(0.0) as u64,
        scl_slope: f(h.scl_slope),
        scl_inter: f(h.scl_inter),
        cal_min: f(h.cal_min),
        cal_max: f(h.cal_max),
        qform_code: h.qform_code as i32,
        sform_code: h.sform_code as i32,
        quatern: [f(h.quatern_b), f(h.quatern_c), f(h.quatern_d)],
        qoffset: [f(h.quatern_x), f(h.quatern_y), f(h.quatern_z)],
        srow: [h.srow_x.map(f), h.srow_y.map(f), h.srow_z.map(f)],
        little_endian: h.endianness == nifti::Endianness::Little,
    }
}

/// The NIfTI-2 header layout (nifti2.h, 540 bytes).
fn parse_nifti2(b: &[u8]) -> NiftiHeader {
    let little_endian = i32::from_le_bytes([b[0], b[1], b[2], b[3]]) == 540;
    let arr = |at: usize| -> [u8; 8] { b[at..at + 8].try_into().unwrap_or([0; 8]) };
    let i64_at = |at| {
        if little_endian {
            i64::from_le_bytes(arr(at))
        } else {
            i64::from_be_bytes(arr(at))
        }
    };
    let f64_at = |at| {
        if little_endian {
            f64::from_le_bytes(arr(at))
        } else {
            f64::from_be_bytes(arr(at))
        }
    };
    let i16_at = |at: usize| {
        let v = [b[at], b[at + 1]];
        if little_endian {
            i16::from_le_bytes(v)
        } else {
            i16::from_be_bytes(v)
        }
    };
    let i32_at = |at: usize| {
        let v = [b[at], b[at + 1], b[at + 2], b[at + 3]];
        if little_endian {
            i32::from_le_bytes(v)
        } else {
            i32::from_be_bytes(v)
        }
    };
    let row = |at: usize| [f64_at(at), f64_at(at + 8), f64_at(at + 16), f64_at(at + 24)];
    NiftiHeader {
        version: 2,
        dim: std::array::from_fn(|i| i64_at(16 + 8 * i)),
        datatype: i16_at(12),
        bitpix: i16_at(14),
        pixdim: std::array::from_fn(|i| f64_at(104 + 8 * i)),
        vox_offset: i64_at(168).max(0) as u64,
        scl_slope: f64_at(176),
        scl_inter: f64_at(184),
        cal_max: f64_at(192),
        cal_min: f64_at(200),
        qform_code: i32_at(344),
        sform_code: i32_at(348),
        quatern: [f64_at(352), f64_at(360), f64_at(368)],
        qoffset: [f64_at(376), f64_at(384), f64_at(392)],
        srow: [row(400), row(432), row(464)],
        little_endian,
    }
}

impl NiftiHeader {
    /// Voxel (i, j, k) to RAS+ mm: sform when set, else qform, else pixdim scaling
    /// (the three methods of nifti1.h, in nibabel's order of preference).
    pub fn affine_ras(&self) -> [[f64; 4]; 4] {
        if self.sform_code > 0 {
            let s = self.srow;
            return [s[0], s[1], s[2], [0.0, 0.0, 0.0, 1.0]];
        }
        let p = &self.pixdim;
        if self.qform_code > 0 {
            let [b, c, d] = self.quatern;
            let a = (1.0 - (b * b + c * c + d * d)).max(0.0).sqrt();
            let r = [
                [
                    a * a + b * b - c * c - d * d,
                    2.0 * (b * c - a * d),
                    2.0 * (b * d + a * c),
                ],
                [
                    2.0 * (b * c + a * d),
                    a * a + c * c - b * b - d * d,
                    2.0 * (c * d - a * b),
                ],
                [
                    2.0 * (b * d - a * c),
                    2.0 * (c * d + a * b),
                    a * a + d * d - b * b - c * c,
                ],
            ];
            let qfac = if p[0] < 0.0 { -1.0 } else { 1.0 };
            let scale = [p[1], p[2], p[3] * qfac];
            let mut m = [[0.0; 4]; 4];
            for (i, row) in r.iter().enumerate() {
                for j in 0..3 {
                    m[i][j] = row[j] * scale[j];
                }
                m[i][3] = self.qoffset[i];
            }
            m[3][3] = 1.0;
            return m;
        }
        [
            [p[1], 0.0, 0.0, 0.0],
            [0.0, p[2], 0.0, 0.0],
            [0.0, 0.0, p[3], 0.0],
            [0.0, 0.0, 0.0, 1.0],
        ]
    }

    /// scl_slope 0 (or not finite) means "no scaling" in nifti1.h.
    pub fn rescale(&self) -> Rescale {
        if self.scl_slope == 0.0 || !self.scl_slope.is_finite() {
            Rescale::IDENTITY
        } else {
            Rescale {
                slope: self.scl_slope,
                intercept: if self.scl_inter.is_finite() {
                    self.scl_inter
                } else {
                    0.0
                },
            }
        }
    }

    pub fn datatype_name(&self) -> &'static str {
        match self.datatype {
            2 => "uint8",
            4 => "int16",
            8 => "int32",
            16 => "float32",
            64 => "float64",
            128 => "rgb24",
            256 => "int8",
            512 => "uint16",
            768 => "uint32",
            1024 => "int64",
            1280 => "uint64",
            _ => "unsupported",
        }
    }

    /// Columns, rows and slices of volume 0; an empty extent is refused.
    pub(crate) fn grid(&self, path: &Path) -> Result<[i64; 3], ImagingError> {
        let grid = [self.extent(1), self.extent(2), self.extent(3)];
        if grid.iter().any(|&n| n < 1) {
            return Err(ImagingError::new(
                path,
                ImagingErrorKind::InvalidHeader,
                format!(
                    "dim {:?} declares an empty volume: dim[1..=3] must be at least 1",
                    self.dim
                ),
            ));
        }
        Ok(grid)
    }

    /// Extent along dimension `i` (1-based, as in `dim`), 1 past `dim[0]`.
    fn extent(&self, i: usize) -> i64 {
        if (i as i64) <= self.dim[0] {
            self.dim[i]
        } else {
            1
        }
    }
}

pub(crate) fn decode_file(path: &Path) -> Result<NiftiImage, ImagingError> {
    let mut stream = open_stream(path)?;
    let header = read_header(path, stream.as_mut())?;
    let err = |kind, reason: String| ImagingError::new(path, kind, reason);
    let [columns, rows, slices] = header.grid(path)?;
    let (channels, bytes_per_sample): (u8, u64) = match header.datatype {
        2 | 256 => (1, 1),
        4 | 512 => (1, 2),
        8 | 16 | 768 => (1, 4),
        64 => (1, 8),
        128 => (3, 1),
        other => {
            return Err(err(
                ImagingErrorKind::Unsupported,
                format!(
                    "NIfTI datatype {other} ({}) is not supported",
                    header.datatype_name()
                ),
            ))
        }
    };
    // NIfTI-2 dims are 64-bit: their product can overflow even u128, so it saturates.
    let volume_bytes = [columns as u128, rows as u128, slices as u128]
        .into_iter()
        .fold(
            channels as u128 * bytes_per_sample as u128,
            u128::saturating_mul,
        );
    if volume_bytes > MAX_DECODED_BYTES as u128 {
        return Err(err(
            ImagingErrorKind::TooLarge,
            format!("dim {:?} declares {volume_bytes} bytes for volume 0, more than the {MAX_DECODED_BYTES}-byte limit", header.dim),
        ));
    }
    let header_len = if header.version == 2 { 540 } else { 348 };
    let skip = header.vox_offset.saturating_sub(header_len);
    std::io::copy(&mut stream.as_mut().take(skip), &mut std::io::sink())
        .map_err(|e| err(ImagingErrorKind::Io, format!("cannot read: {e}")))?;
    let mut raw = Vec::new();
    let read = stream
        .as_mut()
        .take(volume_bytes as u64)
        .read_to_end(&mut raw)
        .map_err(|e| {
            err(
                ImagingErrorKind::Decode,
                format!("cannot read the voxel data: {e}"),
            )
        })?;
    if (read as u128) < volume_bytes {
        return Err(err(
            ImagingErrorKind::Truncated,
            format!("voxel data is truncated: {read} bytes where dim {:?} × {} bits declares {volume_bytes}", header.dim, header.bitpix),
        ));
    }
    let samples = samples_from_raw(&raw, header.datatype, header.little_endian);
    let rescale = header.rescale();
    let windows = if header.cal_max > header.cal_min
        && header.cal_min.is_finite()
        && header.cal_max.is_finite()
    {
        vec![vec![Window::spanning(
            header.cal_min,
            header.cal_max,
            "cal_min..cal_max of the NIfTI header",
        )]]
    } else {
        Vec::new()
    };
    let decoded = Decoded {
        columns: columns as u32,
        rows: rows as u32,
        frames: slices as u32,
        channels,
        samples,
        rescale: vec![rescale],
        windows,
        monochrome1: false,
        colour_max: 255.0,
    };
    Ok(NiftiImage { header, decoded })
}

fn samples_from_raw(raw: &[u8], datatype: i16, little_endian: bool) -> Samples {
    macro_rules! convert {
        ($t:ty, $n:expr) => {
            raw.chunks_exact($n)
                .map(|c| {
                    let bytes: [u8; $n] = c.try_into().unwrap_or([0; $n]);
                    if little_endian {
                        <$t>::from_le_bytes(bytes)
                    } else {
                        <$t>::from_be_bytes(bytes)
                    }
                })
                .collect()
        };
    }
    match datatype {
        256 => Samples::I8(raw.iter().map(|&b| b as i8).collect()),
        4 => Samples::I16(convert!(i16, 2)),
        512 => Samples::U16(convert!(u16, 2)),
        8 => Samples::I32(convert!(i32, 4)),
        768 => Samples::U32(convert!(u32, 4)),
        16 => Samples::F32(convert!(f32, 4)),
        64 => Samples::F64(convert!(f64, 8)),
        _ => Samples::U8(raw.to_vec()),
    }
}
