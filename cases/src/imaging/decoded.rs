//! One decoded image file (all frames) and its rendering per FORMATS.md §4.

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

    /// One frame as 8-bit grey (or RGB for colour), per FORMATS.md §4.
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

pub(crate) fn grey_levels<T: Sample>(
    values: &[T],
    rescale: Rescale,
    window: &Window,
    invert: bool,
) -> Vec<u8> {
    let Rescale { slope, intercept } = rescale;
    if window.function == VoiFunction::Linear && window.width > 1.0 {
        // The linear window is one affine map clamped to 0..=255: the same arithmetic as
        // `Window::apply` (so the same grey levels) without its branches or a `floor` call, which
        // lets the loop vectorise. For y ≥ 0, truncation is floor.
        let (low, span) = (window.center - 0.5, window.width - 1.0);
        return values
            .iter()
            .map(|v| {
                let x = v.value() * slope + intercept;
                let y = (((x - low) / span + 0.5) * 255.0).clamp(0.0, 255.0);
                let y8 = (y + 0.5) as u8;
                if invert {
                    255 - y8
                } else {
                    y8
                }
            })
            .collect();
    }
    values
        .iter()
        .map(|v| {
            let y8 = window.apply(v.value() * slope + intercept);
            if invert {
                255 - y8
            } else {
                y8
            }
        })
        .collect()
}
