//! PNG and JPEG key images through the `image` crate.

use std::path::Path;

use image::DynamicImage;

use super::decoded::{Decoded, Rescale};
use super::error::{ImagingError, ImagingErrorKind};
use super::samples::Samples;
use super::voi::Window;

pub(crate) fn open(path: &Path) -> Result<DynamicImage, ImagingError> {
    let reader = image::ImageReader::open(path)
        .and_then(|r| r.with_guessed_format())
        .map_err(|e| ImagingError::new(path, ImagingErrorKind::Io, format!("cannot read: {e}")))?;
    reader.decode().map_err(|e| {
        ImagingError::new(
            path,
            ImagingErrorKind::Decode,
            format!("cannot decode the PNG/JPEG image: {e}"),
        )
    })
}

/// A key image as it is meant to be seen: 8-bit grey or RGB, full scale, no stretching.
pub(crate) fn decode(image: &DynamicImage) -> Decoded {
    let (columns, rows) = (image.width(), image.height());
    let colour = image.color().has_color();
    let (samples, channels, max) = match image {
        DynamicImage::ImageLuma16(_) | DynamicImage::ImageLumaA16(_) => {
            (Samples::U16(image.to_luma16().into_raw()), 1, 65535.0)
        }
        _ if colour => (Samples::U8(image.to_rgb8().into_raw()), 3, 255.0),
        _ => (Samples::U8(image.to_luma8().into_raw()), 1, 255.0),
    };
    Decoded {
        columns,
        rows,
        frames: 1,
        channels,
        samples,
        rescale: vec![Rescale::IDENTITY],
        windows: vec![vec![Window::spanning(
            0.0,
            max,
            "full scale of the key image",
        )]],
        monochrome1: false,
        colour_max: max,
    }
}
