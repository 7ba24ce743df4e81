//! One decoded image file (all frames) and its rendering per docs/formats.md §4.

use std::path::Path;

use image::{DynamicImage, GrayImage, RgbImage};
use serde::Serialize;

use super::error::{ImagingError, ImagingErrorKind};
use super::samples::{with_samples, Sample, Samples};
use super::voi::{VoiFunction, Window};

/// Modality LUT as a linear rescale: modality value = stored × slope + intercept.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Rescale {
    pub slope: f64,
    pub intercept: f64,
}

impl Rescale {
    pub const IDENTITY: Rescale = Rescale {
        slope: 1.0,
        intercept: 0.0,
    };

    /// Modality values of the stored range `(lo, hi)`, low first even for a negative slope.
    pub fn range(&self, (lo, hi): (f64, f64)) -> (f64, f64) {
        let (a, b) = (
            lo * self.slope + self.intercept,
            hi * self.slope + self.intercept,
        );
        (a.min(b), a.max(b))
    }
}

/// A decoded file: stored samples of every frame plus what is needed to display them.
#[derive(Debug, Clone)]
pub(crate) struct Decoded {
    pub columns: u32,
    pub rows: u32,
    pub frames: u32,
    /// 1 (grey) or 3 (RGB, interleaved).
    pub channels: u8,
    pub samples: Samples,
    /// One for all frames, or one per frame (enhanced multi-frame).
    pub rescale: Vec<Rescale>,
    /// Empty, one list for all frames, or one list per frame (enhanced multi-frame).
    pub windows: Vec<Vec<Window>>,
    pub monochrome1: bool,
    /// The largest value a colour sample can hold (2^BitsStored − 1); colour is scaled by it.
    pub colour_max: f64,
}

impl Decoded {
    pub fn frame_len(&self) -> usize {
        self.columns as usize * self.rows as usize * self.channels as usize
    }

    pub fn frame_rescale(&self, frame: u32) -> Rescale {
        let per_frame = self.rescale.get(frame as usize);
        per_frame
            .or(self.rescale.first())
            .copied()
            .unwrap_or(Rescale::IDENTITY)
    }

    /// The file's valid windows for `frame`, first preferred.
    pub fn frame_windows(&self, frame: u32) -> Vec<Window> {
        let list = self.windows.get(frame as usize).or(self.windows.first());
        list.map(|l| l.iter().filter(|w| w.is_valid()).cloned().collect())
            .unwrap_or_default()
    }

    /// Smallest and largest stored value over all frames.
    pub fn stored_range(&self) -> Option<(f64, f64)> {
        self.samples.min_max(0..self.samples.len())
    }

    /// Smallest and largest modality value over all frames, each frame with its own rescale.
    pub fn modality_range(&self) -> Option<(f64, f64)> {
        let len = self.frame_len();
        (0..self.frames)
            .filter_map(|f| {
                let start = f as usize * len;
                let stored = self.samples.min_max(start..start + len)?;
                Some(self.frame_rescale(f).range(stored))
            })
            .reduce(|a, b| (a.0.min(b.0), a.1.max(b.1)))
    }

    /// The window `render` uses for `frame` when the caller gives none.
    pub fn default_window(&self, frame: u32) -> Window {
        if let Some(w) = self.frame_windows(frame).into_iter().next() {
            return w;
        }
        let (lo, hi) = self.modality_range().unwrap_or((0.0, 0.0));
        Window::spanning(lo, hi, "full range of the image, all frames")
    }

    /// One frame as 8-bit grey (or RGB for colour), per docs/formats.md §4.
    pub fn render(
        &self,
        path: &Path,
        frame: Option<u32>,
        window: Option<(f64, f64)>,
    ) -> Result<DynamicImage, ImagingError> {
        let frame = frame.unwrap_or(0);
        if frame >= self.frames {
            return Err(ImagingError::new(
                path,
                ImagingErrorKind::InvalidRequest,
                format!(
                    "frame {frame} does not exist: the image has {} frame(s), numbered from 0",
                    self.frames
                ),
            ));
        }
        let len = self.frame_len();
        let range = frame as usize * len..(frame as usize + 1) * len;
        let bad_size = || {
            ImagingError::new(
                path,
                ImagingErrorKind::Truncated,
                "decoded pixel data is shorter than the header declares",
            )
        };
        if self.channels == 3 {
            let scale = 255.0 / self.colour_max.max(1.0);
            let rgb: Vec<u8> = with_samples!(&self.samples, v => scale_colour(v.get(range).ok_or_else(bad_size)?, scale));
            let image = RgbImage::from_raw(self.columns, self.rows, rgb).ok_or_else(bad_size)?;
            return Ok(DynamicImage::ImageRgb8(image));
        }
        let window = match window {
            Some((center, width)) => {
                let w = Window {
                    center,
                    width,
                    function: VoiFunction::Linear,
                    explanation: "requested".into(),
                };
                if !w.is_valid() {
                    return Err(ImagingError::new(
                        path,
                        ImagingErrorKind::InvalidRequest,
                        format!("window width {width} is invalid: a linear window needs width ≥ 1"),
                    ));
                }
                w
            }
            None => self.default_window(frame),
        };
        let rescale = self.frame_rescale(frame);
        let grey: Vec<u8> = with_samples!(&self.samples, v => grey_levels(
            v.get(range).ok_or_else(bad_size)?,
            rescale,
            &window,
            self.monochrome1,
        ));
        let image = GrayImage::from_raw(self.columns, self.rows, grey).ok_or_else(bad_size)?;
        Ok(DynamicImage::ImageLuma8(image))
    }
}

fn scale_colour<T: Sample>(values: &[T], scale: f64) -> Vec<u8> {
    values
        .iter()
        .map(|v| (v.value() * scale + 0.5).floor().clamp(0.0, 255.0) as u8)
        .collect()
}

/// Grey levels of one frame. Samples of 16 bits or fewer go through a lookup table over the
/// frame's stored range when that range is smaller than the frame (CT and MR nearly always):
/// each distinct stored value is windowed once, by the same arithmetic, so the grey levels are
/// the same as computing every pixel.
pub(crate) fn grey_levels<T: Sample>(
    values: &[T],
    rescale: Rescale,
    window: &Window,
    invert: bool,
) -> Vec<u8> {
    let level = grey_level_of(rescale, window, invert);
    if let Some((lo, hi)) = small_integer_range(values) {
        if ((hi - lo) as usize) < values.len() {
            let lut: Vec<u8> = (lo..=hi).map(|stored| level(stored as f64)).collect();
            // Every value lies in lo..=hi, so the index is always inside the table.
            let mut grey = vec![0u8; values.len()];
            for (g, v) in grey.iter_mut().zip(values) {
                *g = lut[(v.small_integer() - lo) as usize];
            }
            return grey;
        }
    }
    values.iter().map(|v| level(v.value())).collect()
}

/// The smallest and largest value when every sample is an integer of at most 16 bits (the
/// types whose values fit a table of at most 65,536 entries); `None` otherwise or when empty.
fn small_integer_range<T: Sample>(values: &[T]) -> Option<(i32, i32)> {
    if !T::SMALL_INTEGER || values.is_empty() {
        return None;
    }
    let (mut lo, mut hi) = (i32::MAX, i32::MIN);
    for v in values {
        let x = v.small_integer();
        lo = lo.min(x);
        hi = hi.max(x);
    }
    Some((lo, hi))
}

/// The grey level of one stored value: modality LUT, VOI, MONOCHROME1 inversion.
fn grey_level_of(rescale: Rescale, window: &Window, invert: bool) -> impl Fn(f64) -> u8 + '_ {
    let Rescale { slope, intercept } = rescale;
    // The linear window is one affine map clamped to 0..=255: the same arithmetic as
    // `Window::apply` (so the same grey levels) without its branches or a `floor` call. For
    // y ≥ 0, truncation is floor.
    let linear = window.function == VoiFunction::Linear && window.width > 1.0;
    let (low, span) = (window.center - 0.5, window.width - 1.0);
    move |stored: f64| {
        let x = stored * slope + intercept;
        let y8 = if linear {
            let y = (((x - low) / span + 0.5) * 255.0).clamp(0.0, 255.0);
            (y + 0.5) as u8
        } else {
            window.apply(x)
        };
        if invert {
            255 - y8
        } else {
            y8
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 4,096 pixels over a range of 1,201 values: the lookup-table path.
    fn ct_like() -> Vec<i16> {
        (0..4096).map(|i| ((i * 37) % 1201) as i16 - 1024).collect()
    }

    fn window(center: f64, width: f64, function: VoiFunction) -> Window {
        Window {
            center,
            width,
            function,
            explanation: String::new(),
        }
    }

    #[test]
    fn the_lookup_table_gives_the_grey_levels_of_the_standards_formulas() {
        let values = ct_like();
        let rescale = Rescale {
            slope: 1.5,
            intercept: -20.0,
        };
        for w in [
            window(40.0, 400.0, VoiFunction::Linear),
            window(-300.0, 1.0, VoiFunction::Linear),
            window(0.0, 900.0, VoiFunction::LinearExact),
            window(100.0, 700.0, VoiFunction::Sigmoid),
        ] {
            for invert in [false, true] {
                let expected: Vec<u8> = values
                    .iter()
                    .map(|&v| {
                        let y8 = w.apply(v as f64 * 1.5 - 20.0);
                        if invert {
                            255 - y8
                        } else {
                            y8
                        }
                    })
                    .collect();
                assert_eq!(
                    grey_levels(&values, rescale, &w, invert),
                    expected,
                    "{w:?}, invert {invert}"
                );
            }
        }
    }
}
