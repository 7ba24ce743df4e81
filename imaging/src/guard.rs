//! A walk over a DICOM file's element structure before dicom-rs parses it. dicom-rs allocates an
//! element's declared length before reading it (a 4 GiB length in a 1 kB file aborts the process)
//! and parses nested sequences recursively (100 000 levels overflow the stack); this walk reads
//! only tags and lengths, allocates nothing per element, and refuses both.

use std::fs::File;
use std::io::{BufReader, Cursor, Read, Seek, SeekFrom};
use std::path::Path;

use dicom_core::dictionary::{DataDictionary, DataDictionaryEntry, VirtualVr};
use dicom_core::{Tag, VR};
use dicom_dictionary_std::StandardDataDictionary;
use flate2::read::DeflateDecoder;

use super::error::{ImagingError, ImagingErrorKind};
use super::MAX_DECODED_BYTES;

/// Sequences nested deeper than this are refused. Real files, structured reports included, stay
/// far below it; dicom-rs's recursive parser needs about 1 kB of stack per level.
pub(crate) const MAX_SEQUENCE_DEPTH: usize = 64;

const UNDEFINED: u32 = 0xFFFF_FFFF;
const ITEM: Tag = Tag(0xFFFE, 0xE000);
const ITEM_END: Tag = Tag(0xFFFE, 0xE00D);
const SEQUENCE_END: Tag = Tag(0xFFFE, 0xE0DD);
const PIXEL_DATA: Tag = Tag(0x7FE0, 0x0010);

#[derive(Clone, Copy, PartialEq, Eq)]
enum Encoding {
    ImplicitLittle,
    ExplicitLittle,
    ExplicitBig,
}

enum Frame {
    /// A sequence of items; `end` is `None` for an undefined length (closed by a delimiter).
    Sequence {
        end: Option<u64>,
        encoding: Encoding,
    },
    Item {
        end: Option<u64>,
    },
    /// Encapsulated pixel data: items of raw bytes up to a sequence delimiter.
    Fragments,
}

enum Input<'a> {
    /// Plain files: lengths are checked against the bytes left before skipping.
    File(BufReader<File>),
    /// A file's first bytes, already read; lengths are checked against the whole file's.
    Memory(Cursor<&'a [u8]>),
    /// Deflated transfer syntax: the length is unknown, a short stream shows when skipping.
    Stream(Box<dyn Read>),
}

struct Walk<'a> {
    input: Input<'a>,
    pos: u64,
    len: Option<u64>,
}

/// Where the top-level PixelData element starts in a file that is not deflated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PixelDataAt {
    /// The byte its tag starts at.
    pub offset: u64,
    /// The file ends with this element and no top-level element before it has a larger tag:
    /// the file is exactly what dicom-rs reads with `read_until(PixelData)`, then this element.
    /// Known from a whole walk only; a header-only walk says `false`.
    pub closes_file: bool,
}

/// What a header-only walk over a file's first bytes found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HeaderEnd {
    /// The header ends where PixelData starts, at this byte; what follows PixelData (beyond
    /// these bytes) is not known.
    PixelDataAt(u64),
    /// The bytes were the whole file and hold no PixelData.
    NoPixelData,
}

/// Checks the element structure of the DICOM file at `path` (the part before PixelData when
/// `header_only`), and says where PixelData starts when the file is not deflated. Files without
/// the "DICM" magic are left to dicom-rs to refuse.
pub fn check_dicom_structure(
    path: &Path,
    header_only: bool,
) -> Result<Option<PixelDataAt>, ImagingError> {
    let fail = |kind, reason: String| ImagingError::new(path, kind, reason);
    let io = |e: std::io::Error| fail(ImagingErrorKind::Io, format!("cannot read: {e}"));
    let mut file = BufReader::new(File::open(path).map_err(io)?);
    let len = file.get_ref().metadata().map_err(io)?.len();
    let mut head = [0u8; 132];
    let read = read_up_to(&mut file, &mut head).map_err(io)?;
    let start = match read {
        n if n >= 132 && &head[128..132] == b"DICM" => 132,
        n if n >= 4 && &head[0..4] == b"DICM" => 4,
        _ => return Ok(None),
    };
    file.seek_relative(start as i64 - read as i64).map_err(io)?;
    let mut walk = Walk {
        input: Input::File(file),
        pos: start,
        len: Some(len),
    };
    let transfer_syntax = walk
        .file_meta()
        .map_err(|reason| fail(ImagingErrorKind::InvalidHeader, reason))?;
    let encoding = match transfer_syntax.as_str() {
        "1.2.840.10008.1.2" => Encoding::ImplicitLittle,
        "1.2.840.10008.1.2.2" => Encoding::ExplicitBig,
        _ => Encoding::ExplicitLittle,
    };
    let deflated = matches!(
        transfer_syntax.as_str(),
        "1.2.840.10008.1.2.1.99" | "1.2.840.10008.1.2.8.1"
    );
    let mut walk = match walk.input {
        Input::File(file) if deflated => Walk {
            input: Input::Stream(Box::new(DeflateDecoder::new(file))),
            pos: walk.pos,
            len: None,
        },
        input => Walk { input, ..walk },
    };
    let pixel_data = walk
        .dataset(encoding, header_only)
        .map_err(|(kind, reason)| {
            ImagingError::new(path, kind, reason).with_transfer_syntax(&transfer_syntax)
        })?;
    Ok(pixel_data.filter(|_| !deflated))
}

/// [`check_dicom_structure`] of a Part 10 file from `head`, its first bytes (read once for this
/// walk and for dicom-rs), `file_len` long in all: the header walked, and PixelData's declared
/// length checked against the file's. `Ok(None)` when those bytes do not settle it (the header
/// or the pixel data's fragments go on past them, or the data set is deflated): check the file
/// itself then, which also gives the error to show.
pub fn check_dicom_header_bytes(
    path: &Path,
    head: &[u8],
    file_len: u64,
) -> Result<Option<HeaderEnd>, ImagingError> {
    let whole = head.len() as u64 == file_len;
    let start = if head.get(128..132) == Some(b"DICM") {
        132
    } else if head.starts_with(b"DICM") {
        4
    } else {
        return Ok(None);
    };
    let mut walk = Walk {
        input: Input::Memory(Cursor::new(head)),
        pos: 0,
        len: Some(file_len),
    };
    if walk.skip(start, "the preamble").is_err() {
        return Ok(None);
    }
    let transfer_syntax = match walk.file_meta() {
        Ok(ts) => ts,
        Err(reason) if whole => {
            return Err(ImagingError::new(
                path,
                ImagingErrorKind::InvalidHeader,
                reason,
            ))
        }
        Err(_) => return Ok(None),
    };
    let encoding = match transfer_syntax.as_str() {
        "1.2.840.10008.1.2" => Encoding::ImplicitLittle,
        "1.2.840.10008.1.2.2" => Encoding::ExplicitBig,
        "1.2.840.10008.1.2.1.99" | "1.2.840.10008.1.2.8.1" => return Ok(None),
        _ => Encoding::ExplicitLittle,
    };
    match walk.dataset(encoding, false) {
        Ok(Some(pixel_data)) => Ok(Some(HeaderEnd::PixelDataAt(pixel_data.offset))),
        Ok(None) if whole => Ok(Some(HeaderEnd::NoPixelData)),
        Err((kind, reason)) if whole => {
            Err(ImagingError::new(path, kind, reason).with_transfer_syntax(&transfer_syntax))
        }
        Ok(None) | Err(_) => Ok(None),
    }
}

type WalkError = (ImagingErrorKind, String);

fn truncated(what: &str) -> WalkError {
    (
        ImagingErrorKind::Truncated,
        format!("the file ends inside {what}"),
    )
}

/// Reads until `buf` is full or the input ends; returns how many bytes were read.
fn read_up_to(reader: &mut dyn Read, buf: &mut [u8]) -> std::io::Result<usize> {
    let mut filled = 0;
    while filled < buf.len() {
        match reader.read(&mut buf[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(filled)
}

impl Walk<'_> {
    /// Fills `buf`; `Ok(false)` when the input ends before its first byte.
    fn read(&mut self, buf: &mut [u8], what: &str) -> Result<bool, WalkError> {
        let reader: &mut dyn Read = match &mut self.input {
            Input::File(file) => file,
            Input::Memory(bytes) => bytes,
            Input::Stream(stream) => stream,
        };
        let n = read_up_to(reader, buf)
            .map_err(|e| (ImagingErrorKind::Io, format!("cannot read: {e}")))?;
        self.pos += n as u64;
        match n {
            0 => Ok(false),
            n if n == buf.len() => Ok(true),
            _ => Err(truncated(what)),
        }
    }

    /// Fills `buf`; the input ending before it is full is truncation.
    fn read_all(&mut self, buf: &mut [u8], what: &str) -> Result<(), WalkError> {
        if self.read(buf, what)? {
            Ok(())
        } else {
            Err(truncated(what))
        }
    }

    /// Skips `n` bytes of `what` (formatted only for an error: this runs for every element).
    fn skip(&mut self, n: u64, what: impl std::fmt::Display) -> Result<(), WalkError> {
        if n > MAX_DECODED_BYTES {
            return Err((
                ImagingErrorKind::TooLarge,
                format!("{what} declares {n} bytes, more than the {MAX_DECODED_BYTES}-byte limit"),
            ));
        }
        if let Some(len) = self.len {
            if self.pos + n > len {
                return Err((
                    ImagingErrorKind::Truncated,
                    format!(
                        "{what} declares {n} bytes at byte {} but the file is {len} bytes long",
                        self.pos
                    ),
                ));
            }
        }
        let skipped = match &mut self.input {
            Input::File(file) => file
                .seek_relative(n as i64)
                .map(|()| n)
                .map_err(|e| (ImagingErrorKind::Io, format!("cannot read: {e}")))?,
            // Past the end of the bytes read is past what this walk can judge: the next read
            // finds nothing, and the caller checks the file itself.
            Input::Memory(bytes) => bytes
                .seek(SeekFrom::Current(n as i64))
                .map(|_| n)
                .map_err(|e| (ImagingErrorKind::Io, format!("cannot read: {e}")))?,
            Input::Stream(stream) => std::io::copy(&mut stream.take(n), &mut std::io::sink())
                .map_err(|e| (ImagingErrorKind::Decode, format!("cannot inflate: {e}")))?,
        };
        self.pos += skipped;
        if skipped < n {
            return Err(truncated(&what.to_string()));
        }
        Ok(())
    }

    /// Walks the file meta group (explicit VR little endian, group 0002) and returns the
    /// transfer syntax UID. Where the group starts with its length (0002,0000), the group ends
    /// where that length says, whatever the tags inside it: dicom-rs reads elements until it has
    /// read that many bytes, so the data set starts there for both readers.
    fn file_meta(&mut self) -> Result<String, String> {
        let mut transfer_syntax = String::new();
        let mut group_end: Option<u64> = None;
        loop {
            if group_end.is_some_and(|end| self.pos >= end) {
                return Ok(transfer_syntax);
            }
            let mut tag = [0u8; 4];
            if !self
                .read(&mut tag, "the file meta group")
                .map_err(|e| e.1)?
            {
                return Ok(transfer_syntax);
            }
            if group_end.is_none() && u16::from_le_bytes([tag[0], tag[1]]) != 0x0002 {
                // The dataset (or its deflated stream) starts with this tag: step back to it.
                match &mut self.input {
                    Input::File(file) => file
                        .seek_relative(-4)
                        .map_err(|e| format!("cannot read: {e}"))?,
                    Input::Memory(bytes) => {
                        bytes
                            .seek(SeekFrom::Current(-4))
                            .map_err(|e| format!("cannot read: {e}"))?;
                    }
                    Input::Stream(_) => {}
                }
                self.pos -= 4;
                return Ok(transfer_syntax);
            }
            let mut vr = [0u8; 2];
            self.read_all(&mut vr, "the file meta group")
                .map_err(|e| e.1)?;
            // As in the data set: dicom-rs would read an unknown VR as UN with a 4-byte length.
            if VR::from_binary(vr).is_none() {
                return Err(format!(
                    "file meta element ({:02X}{:02X},{:02X}{:02X}) has an invalid value representation {:?}",
                    tag[1],
                    tag[0],
                    tag[3],
                    tag[2],
                    String::from_utf8_lossy(&vr)
                ));
            }
            let len = if has_long_length(&vr) {
                let mut long = [0u8; 6];
                self.read_all(&mut long, "the file meta group")
                    .map_err(|e| e.1)?;
                u32::from_le_bytes([long[2], long[3], long[4], long[5]])
            } else {
                let mut short = [0u8; 2];
                self.read_all(&mut short, "the file meta group")
                    .map_err(|e| e.1)?;
                u32::from(u16::from_le_bytes(short))
            };
            if len == UNDEFINED || len > 1024 * 1024 {
                return Err(format!("a file meta element declares {len} bytes"));
            }
            if tag == [0x02, 0x00, 0x00, 0x00] && len == 4 && group_end.is_none() {
                let mut value = [0u8; 4];
                self.read_all(&mut value, "the file meta group")
                    .map_err(|e| e.1)?;
                group_end = Some(self.pos + u64::from(u32::from_le_bytes(value)));
            } else if tag == [0x02, 0x00, 0x10, 0x00] {
                let mut value = vec![0u8; len as usize];
                self.read_all(&mut value, "the file meta group")
                    .map_err(|e| e.1)?;
                transfer_syntax = String::from_utf8_lossy(&value)
                    .trim_end_matches(['\0', ' '])
                    .to_owned();
            } else {
                self.skip(u64::from(len), "a file meta element")
                    .map_err(|e| e.1)?;
            }
        }
    }
}

fn has_long_length(vr: &[u8; 2]) -> bool {
    matches!(
        vr,
        b"OB"
            | b"OD"
            | b"OF"
            | b"OL"
            | b"OV"
            | b"OW"
            | b"SQ"
            | b"SV"
            | b"UC"
            | b"UN"
            | b"UR"
            | b"UT"
            | b"UV"
    )
}

fn is_sequence_in_dictionary(tag: Tag) -> bool {
    StandardDataDictionary
        .by_tag(tag)
        .is_some_and(|entry| entry.vr() == VirtualVr::Exact(VR::SQ))
}

impl Walk<'_> {
    fn tag_and_length(
        &mut self,
        encoding: Encoding,
    ) -> Result<Option<(Tag, [u8; 2], u32)>, WalkError> {
        let mut raw = [0u8; 4];
        if !self.read(&mut raw, "an element header")? {
            return Ok(None);
        }
        let big = encoding == Encoding::ExplicitBig;
        let u16_at = |b: [u8; 2]| {
            if big {
                u16::from_be_bytes(b)
            } else {
                u16::from_le_bytes(b)
            }
        };
        let u32_at = |b: [u8; 4]| {
            if big {
                u32::from_be_bytes(b)
            } else {
                u32::from_le_bytes(b)
            }
        };
        let tag = Tag(u16_at([raw[0], raw[1]]), u16_at([raw[2], raw[3]]));
        let mut vr = [0u8; 2];
        let len = if tag.group() == 0xFFFE || encoding == Encoding::ImplicitLittle {
            let mut len = [0u8; 4];
            self.read_all(&mut len, "an element header")?;
            u32_at(len)
        } else {
            self.read_all(&mut vr, "an element header")?;
            // dicom-rs reads an unknown VR as UN, whose length field is four bytes further on:
            // the two readers would disagree on where every later element starts, and this walk
            // would no longer vouch for the lengths dicom-rs allocates.
            if VR::from_binary(vr).is_none() {
                return Err((
                    ImagingErrorKind::InvalidHeader,
                    format!(
                        "element {tag} at byte {} has an invalid value representation {:?}",
                        self.pos - 6,
                        String::from_utf8_lossy(&vr)
                    ),
                ));
            }
            if has_long_length(&vr) {
                let mut long = [0u8; 6];
                self.read_all(&mut long, "an element header")?;
                u32_at([long[2], long[3], long[4], long[5]])
            } else {
                let mut short = [0u8; 2];
                self.read_all(&mut short, "an element header")?;
                u32::from(u16_at(short))
            }
        };
        Ok(Some((tag, vr, len)))
    }

    /// Walks the data set; returns where its top-level PixelData starts (the walk stops there
    /// when `header_only`).
    fn dataset(
        &mut self,
        encoding: Encoding,
        header_only: bool,
    ) -> Result<Option<PixelDataAt>, WalkError> {
        let mut stack: Vec<Frame> = Vec::new();
        let mut depth = 0usize;
        let mut pixel_data: Option<PixelDataAt> = None;
        // dicom-rs's read_until(PixelData) stops at the first top-level tag at or past it.
        let mut larger_tag_first = false;
        loop {
            // Close the defined-length items and sequences that end here.
            while let Some(end) = stack.last().and_then(|frame| match frame {
                Frame::Sequence { end, .. } | Frame::Item { end } => *end,
                Frame::Fragments => None,
            }) {
                if self.pos < end {
                    break;
                }
                if self.pos > end {
                    return Err((
                        ImagingErrorKind::InvalidHeader,
                        format!(
                            "an element at byte {} overruns the item or sequence holding it",
                            self.pos
                        ),
                    ));
                }
                if let Some(Frame::Sequence { .. }) = stack.pop() {
                    depth -= 1;
                }
            }
            let current = stack
                .iter()
                .rev()
                .find_map(|frame| match frame {
                    Frame::Sequence { encoding, .. } => Some(*encoding),
                    _ => None,
                })
                .unwrap_or(encoding);
            let element_start = self.pos;
            let Some((tag, vr, len)) = self.tag_and_length(current)? else {
                return if stack.is_empty() {
                    Ok(pixel_data)
                } else {
                    Err(truncated("a sequence"))
                };
            };
            if tag.group() == 0xFFFE {
                match (tag, stack.last()) {
                    (ITEM, Some(Frame::Fragments)) => {
                        self.skip(u64::from(len), "a pixel data fragment")?
                    }
                    (ITEM, Some(Frame::Sequence { .. })) => {
                        let end = (len != UNDEFINED).then(|| self.pos + u64::from(len));
                        self.check_end(end, "an item")?;
                        stack.push(Frame::Item { end });
                    }
                    (ITEM_END, Some(Frame::Item { end: None })) => {
                        stack.pop();
                    }
                    (SEQUENCE_END, Some(Frame::Sequence { end: None, .. })) => {
                        stack.pop();
                        depth -= 1;
                    }
                    (SEQUENCE_END, Some(Frame::Fragments)) => {
                        stack.pop();
                    }
                    _ => {
                        return Err((
                            ImagingErrorKind::InvalidHeader,
                            format!(
                                "a misplaced item or delimiter {tag} at byte {}",
                                self.pos - 8
                            ),
                        ))
                    }
                }
                continue;
            }
            if stack.is_empty() {
                match pixel_data.as_mut() {
                    None if tag == PIXEL_DATA => {
                        let found = PixelDataAt {
                            offset: element_start,
                            closes_file: !header_only && !larger_tag_first,
                        };
                        if header_only {
                            return Ok(Some(found));
                        }
                        pixel_data = Some(found);
                    }
                    None => larger_tag_first |= tag > PIXEL_DATA,
                    Some(found) => found.closes_file = false,
                }
            }
            // As dicom-rs decides (dicom-parser's DataSetReader): PixelData of undefined length
            // holds fragments whatever its VR; any other element of undefined length is a
            // sequence of data set items whatever its VR, not only SQ and UN.
            let fragments = tag == PIXEL_DATA && len == UNDEFINED;
            let sequence = !fragments
                && (len == UNDEFINED
                    || if current == Encoding::ImplicitLittle {
                        is_sequence_in_dictionary(tag)
                    } else {
                        &vr == b"SQ"
                    });
            if sequence {
                depth += 1;
                if depth > MAX_SEQUENCE_DEPTH {
                    return Err((
                        ImagingErrorKind::InvalidHeader,
                        format!(
                            "sequences are nested more than {MAX_SEQUENCE_DEPTH} deep at byte {}",
                            self.pos
                        ),
                    ));
                }
                let end = (len != UNDEFINED).then(|| self.pos + u64::from(len));
                self.check_end(end, "a sequence")?;
                // UN of undefined length holds implicit VR little endian (PS3.5 6.2.2).
                let encoding = if &vr == b"UN" {
                    Encoding::ImplicitLittle
                } else {
                    current
                };
                stack.push(Frame::Sequence { end, encoding });
            } else if fragments {
                stack.push(Frame::Fragments);
            } else {
                self.skip(u64::from(len), format_args!("element {tag}"))?;
            }
        }
    }

    fn check_end(&self, end: Option<u64>, what: &str) -> Result<(), WalkError> {
        match (end, self.len) {
            (Some(end), Some(len)) if end > len => Err((
                ImagingErrorKind::Truncated,
                format!("{what} at byte {} declares an end at byte {end} but the file is {len} bytes long", self.pos),
            )),
            _ => Ok(()),
        }
    }
}
