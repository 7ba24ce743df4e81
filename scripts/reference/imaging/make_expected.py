#!/usr/bin/env python3
"""Fixtures and independently computed expectations for imaging/tests/imaging.rs.

Usage:
    pip download --no-deps pydicom==3.0.2 nibabel==5.4.2 -d wheels && unzip both wheels
    pip install pydicom==3.0.2 nibabel==5.4.2 numpy pillow pylibjpeg pylibjpeg-libjpeg \
        pylibjpeg-openjpeg pylibjpeg-rle
    python3.12 make_htj2k.py PYDICOM_TEST_FILES_DIR OUT_DIR   # its own venv, see there
    python3 make_expected.py PYDICOM_TEST_FILES_DIR NIBABEL_TEST_DATA_DIR OUT_DIR

OUT_DIR is imaging/tests/data. The script copies the sample files listed below from the
pydicom and nibabel wheels (both MIT), derives two files pydicom lacks (MONOCHROME1 and an
enhanced multi-frame with per-frame rescale and windows, both from MR_small.dcm), and writes
expected.json plus expected/*.png: each file's probe facts and its rendering by the rule of
docs docs/formats.md section 4, computed here with pydicom + numpy (decoders: pylibjpeg-libjpeg,
pylibjpeg-openjpeg, pylibjpeg-rle) and nibabel, never with NeuroRater's code.
"""
import copy
import hashlib
import json
import shutil
import sys
from pathlib import Path

import nibabel
import numpy as np
import pydicom
from PIL import Image
from pydicom.dataset import Dataset
from pydicom.sequence import Sequence
from pydicom.uid import ExplicitVRLittleEndian

# (file, codec is lossless?) — lossless files must match exactly, lossy within a tolerance.
DICOM_FILES = [
    ("MR_small.dcm", True),  # explicit VR LE, signed 16-bit, window
    ("MR_small_implicit.dcm", True),  # implicit VR LE
    ("MR_small_bigendian.dcm", True),  # explicit VR big endian
    ("image_dfl.dcm", True),  # deflated explicit VR LE
    ("MR_small_RLE.dcm", True),  # RLE lossless
    ("JPGExtended.dcm", False),  # JPEG extended (process 2 & 4), 12 of 16 bits
    ("SC_rgb_jpeg_dcmtk.dcm", False),  # JPEG baseline, YBR_FULL colour
    ("SC_rgb_jpeg_gdcm.dcm", True),  # JPEG lossless (process 14 SV1), RGB
    ("MR_small_jpeg_ls_lossless.dcm", True),  # JPEG-LS lossless
    ("JPEGLSNearLossless_16.dcm", True),  # JPEG-LS near-lossless: deterministic decoder output
    ("MR_small_jp2klossless.dcm", True),  # JPEG 2000 lossless
    ("JPEG2000.dcm", False),  # JPEG 2000 (lossy syntax)
    ("693_J2KI.dcm", False),  # JPEG 2000 CT, 14 of 16 bits, window
    ("CT_small.dcm", True),  # CT with rescale intercept
    ("rtdose.dcm", True),  # multi-frame (15), 32-bit unsigned
    ("SC_rgb_rle_2frame.dcm", True),  # multi-frame RGB
    ("SC_rgb_rle_16bit.dcm", True),  # 16-bit RGB
    ("SC_ybr_full_422_uncompressed.dcm", False),  # native YBR_FULL_422 (colour conversion rounding)
    ("examples_overlay.dcm", True),  # BitsStored 12 < BitsAllocated 16, two windows
    ("SC_rgb_small_odd.dcm", True),  # 3x3 RGB, odd length
]
DERIVED = ["MR_small_monochrome1.dcm", "MR_small_enhanced_3frame.dcm"]
# Written into OUT_DIR beforehand by make_htj2k.py (its encoder needs Python >= 3.12): MR_small
# as lossless HTJ2K, decoded here by pylibjpeg-openjpeg.
MADE_BY_MAKE_HTJ2K = [("MR_small_htj2k_lossless.dcm", True)]
# Lossy files whose decoded stored values are checked too, not only their 8-bit rendering: the
# 12-bit JPEG extended file, decoded by NeuroRater with libjpeg-turbo's 12-bit path and here by
# pylibjpeg-libjpeg, two independent implementations of ITU T.81.
STORED_VALUES = ["JPGExtended.dcm"]
# Copied but not decodable by pydicom 3.0.2's plugins: JPEG-lossy.dcm is the original of
# JPGExtended.dcm (NEMA WG04 NM1_JPLY) whose start-of-scan declares spectral selection 0..0, which
# no sequential JPEG may (pylibjpeg-libjpeg and Pillow refuse it, libjpeg-turbo warns). The tests
# check that it is refused with that reason, never shown as a picture.
UNDECODABLE = ["JPEG-lossy.dcm"]
NIFTI_FILES = ["anatomical.nii", "example_nifti2.nii.gz", "standard.nii.gz", "example4d.nii.gz"]
PNG_KEY = "key_image.png"


def derive_monochrome1(src: Path, dst: Path):
    ds = pydicom.dcmread(src)
    ds.PhotometricInterpretation = "MONOCHROME1"
    ds.save_as(dst, enforce_file_format=True)


def derive_enhanced(src: Path, dst: Path):
    """Three frames of MR_small (shifted copies) with per-frame rescale and windows."""
    ds = pydicom.dcmread(src)
    frame = ds.pixel_array.astype(np.int16)
    frames = np.stack([frame, np.roll(frame, 5, axis=0), np.roll(frame, 9, axis=1)])
    ds.NumberOfFrames = 3
    ds.PixelData = frames.tobytes()
    ds.SOPClassUID = "1.2.840.10008.5.1.4.1.1.4.1"  # Enhanced MR Image Storage
    ds.file_meta.MediaStorageSOPClassUID = ds.SOPClassUID
    for keyword in ("WindowCenter", "WindowWidth", "RescaleSlope", "RescaleIntercept",
                    "ImagePositionPatient", "ImageOrientationPatient", "PixelSpacing"):
        if keyword in ds:
            delattr(ds, keyword)
    shared = Dataset()
    orientation = Dataset()
    orientation.ImageOrientationPatient = [1, 0, 0, 0, 1, 0]
    shared.PlaneOrientationSequence = Sequence([orientation])
    measures = Dataset()
    measures.PixelSpacing = [0.5, 0.75]
    measures.SliceThickness = 2
    shared.PixelMeasuresSequence = Sequence([measures])
    ds.SharedFunctionalGroupsSequence = Sequence([shared])
    per_frame = []
    for i, (slope, intercept, center, width) in enumerate(
        [(1, 0, 600, 1600), (2, -100, 1200, 2500), (0.5, 50, 300, 700)]
    ):
        group = Dataset()
        transform = Dataset()
        transform.RescaleSlope = slope
        transform.RescaleIntercept = intercept
        transform.RescaleType = "US"
        group.PixelValueTransformationSequence = Sequence([transform])
        voi = Dataset()
        voi.WindowCenter = center
        voi.WindowWidth = width
        group.FrameVOILUTSequence = Sequence([voi])
        position = Dataset()
        position.ImagePositionPatient = [-10, -20, 30 + 2 * i]
        group.PlanePositionSequence = Sequence([position])
        per_frame.append(group)
    ds.PerFrameFunctionalGroupsSequence = Sequence(per_frame)
    ds.file_meta.TransferSyntaxUID = ExplicitVRLittleEndian
    ds.save_as(dst, enforce_file_format=True)


def make_key_image(dst: Path, mr_small: Path):
    """A colour PNG key image: MR_small's pixels spread over three channels."""
    arr = pydicom.dcmread(mr_small).pixel_array.astype(np.float64)
    grey = np.floor((arr - arr.min()) / (arr.max() - arr.min()) * 255 + 0.5).astype(np.uint8)
    rgb = np.stack([grey, grey[::-1], 255 - grey], axis=-1)
    Image.fromarray(rgb, "RGB").save(dst)


def rescale_and_windows(ds, frames):
    """Per frame: (slope, intercept) and [(center, width, function)] from the top level or the
    enhanced multi-frame functional groups (per-frame overriding shared)."""

    def rescale_in(item):
        if "RescaleSlope" in item or "RescaleIntercept" in item:
            return float(item.get("RescaleSlope", 1)), float(item.get("RescaleIntercept", 0))
        return None

    def windows_in(item):
        if "WindowCenter" not in item or "WindowWidth" not in item:
            return []
        centers = item.WindowCenter
        widths = item.WindowWidth
        centers = list(centers) if isinstance(centers, pydicom.multival.MultiValue) else [centers]
        widths = list(widths) if isinstance(widths, pydicom.multival.MultiValue) else [widths]
        function = str(item.get("VOILUTFunction", "LINEAR")).strip() or "LINEAR"
        return [(float(c), float(w), function) for c, w in zip(centers, widths)]

    shared = ds.SharedFunctionalGroupsSequence[0] if "SharedFunctionalGroupsSequence" in ds else Dataset()
    top_rescale = rescale_in(ds)
    if top_rescale is None and "PixelValueTransformationSequence" in shared:
        top_rescale = rescale_in(shared.PixelValueTransformationSequence[0])
    top_rescale = top_rescale or (1.0, 0.0)
    top_windows = (windows_in(shared.FrameVOILUTSequence[0]) if "FrameVOILUTSequence" in shared
                   else windows_in(ds))
    per_frame = list(ds.get("PerFrameFunctionalGroupsSequence", []))
    if len(per_frame) != frames:
        per_frame = [Dataset()] * frames
    rescales, windows = [], []
    for group in per_frame:
        r = (rescale_in(group.PixelValueTransformationSequence[0])
             if "PixelValueTransformationSequence" in group else None)
        rescales.append(r or top_rescale)
        w = windows_in(group.FrameVOILUTSequence[0]) if "FrameVOILUTSequence" in group else None
        windows.append(w if w is not None else top_windows)
    return rescales, windows


def voi(x, center, width, function):
    """DICOM PS3.3 C.11.2.1.2.1 (LINEAR), C.11.2.1.3.2 (LINEAR_EXACT), C.11.2.1.3.1 (SIGMOID),
    output range 0..255, then y8 = floor(y + 0.5)."""
    c, w = center, width
    if function == "LINEAR_EXACT":
        y = np.where(x <= c - w / 2, 0.0, np.where(x > c + w / 2, 255.0, ((x - c) / w + 0.5) * 255.0))
    elif function == "SIGMOID":
        y = 255.0 / (1.0 + np.exp(-4.0 * (x - c) / w))
    else:
        y = np.where(
            x <= c - 0.5 - (w - 1) / 2,
            0.0,
            np.where(x > c - 0.5 + (w - 1) / 2, 255.0, ((x - (c - 0.5)) / (w - 1) + 0.5) * 255.0),
        )
    return np.clip(np.floor(y + 0.5), 0, 255).astype(np.uint8)


def spanning(lo, hi):
    """The linear window taking lo to 0 and hi to 255."""
    return (lo + hi) / 2 + 0.5, hi - lo + 1, "LINEAR"


def valid(window):
    c, w, f = window
    return w >= 1 if f == "LINEAR" else w > 0


def dicom_expectations(path: Path, lossless: bool, out: Path):
    ds = pydicom.dcmread(path)
    arr = ds.pixel_array  # pydicom 3: colour converted to RGB, unused high bits masked
    frames = int(ds.get("NumberOfFrames", 1) or 1)
    spp = int(ds.SamplesPerPixel)
    if frames == 1:
        arr = arr[np.newaxis]
    rescales, windows = rescale_and_windows(ds, frames)
    renders = []
    if spp == 3:
        bits = int(ds.BitsStored)
        for f in sorted({0, frames - 1}):
            rgb = np.clip(np.floor(arr[f].astype(np.float64) * (255.0 / (2**bits - 1)) + 0.5), 0, 255)
            renders.append((f, rgb.astype(np.uint8)))
    else:
        modality = [arr[f].astype(np.float64) * s + i for f, (s, i) in enumerate(rescales)]
        lo = min(m.min() for m in modality)
        hi = max(m.max() for m in modality)
        for f in sorted({0, frames - 1}):
            file_windows = [w for w in windows[f] if valid(w)]
            window = file_windows[0] if file_windows else spanning(lo, hi)
            grey = voi(modality[f], *window)
            if ds.PhotometricInterpretation == "MONOCHROME1":
                grey = 255 - grey
            renders.append((f, grey))
    first_window = [w for w in windows[0] if valid(w)]
    probe = {
        "format": "dicom",
        "rows": int(ds.Rows),
        "columns": int(ds.Columns),
        "frames": frames,
        "modality": str(ds.Modality) if ds.get("Modality") else None,
        "bits_allocated": int(ds.BitsAllocated),
        "photometric_interpretation": str(ds.PhotometricInterpretation),
        "transfer_syntax": str(ds.file_meta.TransferSyntaxUID),
        "rescale_slope": rescales[0][0],
        "rescale_intercept": rescales[0][1],
        "window_center": first_window[0][0] if first_window else None,
        "window_width": first_window[0][1] if first_window else None,
    }
    if spp == 1:
        probe["stored_min"] = float(arr.min())
        probe["stored_max"] = float(arr.max())
    return probe, write_renders(path.name, renders, out), lossless


def write_stored_values(path: Path, out: Path):
    """Frame 0's stored values as pydicom decodes them (unused high bits masked), as a 16-bit
    grey PNG; unsigned data only, which is what the 12-bit JPEG file holds."""
    ds = pydicom.dcmread(path)
    arr = ds.pixel_array
    frame = arr[0] if int(ds.get("NumberOfFrames", 1) or 1) > 1 else arr
    assert ds.PixelRepresentation == 0 and int(ds.BitsStored) <= 16
    png = f"expected/{path.name}.stored0.png"
    Image.fromarray(frame.astype(np.uint16)).save(out / png)
    return {"frame": 0, "png": png, "sha256": hashlib.sha256(frame.astype("<u2").tobytes()).hexdigest()}


def nifti_expectations(path: Path, out: Path):
    img = nibabel.load(path)
    hdr = img.header
    raw = np.asanyarray(img.dataobj.get_unscaled() if hasattr(img.dataobj, "get_unscaled") else img.dataobj)
    vol0 = raw if raw.ndim == 3 else raw[..., 0] if raw.ndim == 4 else raw.reshape(raw.shape + (1,) * (3 - raw.ndim))
    slope, inter = hdr.get_slope_inter()
    slope = 1.0 if slope is None else float(slope)
    inter = 0.0 if inter is None else float(inter)
    modality = vol0.astype(np.float64) * slope + inter
    cal_min, cal_max = float(hdr["cal_min"]), float(hdr["cal_max"])
    window = spanning(cal_min, cal_max) if cal_max > cal_min else spanning(modality.min(), modality.max())
    slices = vol0.shape[2]
    renders = []
    for k in sorted({0, slices // 2, slices - 1}):
        # frame k: pixel (row j, column i) = voxel (i, j, k)
        renders.append((k, voi(modality[:, :, k].T, *window)))
    dims = [int(d) for d in hdr["dim"][1 : hdr["dim"][0] + 1]]
    probe = {
        "format": "nifti2" if isinstance(img, nibabel.Nifti2Image) else "nifti1",
        "rows": dims[1] if len(dims) > 1 else 1,
        "columns": dims[0],
        "frames": dims[2] if len(dims) > 2 else 1,
        "rescale_slope": slope,
        "rescale_intercept": inter,
        "stored_min": float(vol0.min()),
        "stored_max": float(vol0.max()),
        "dims": dims,
        "datatype": str(np.dtype(hdr.get_data_dtype()).newbyteorder("=").name),
        "pixdim": [float(p) for p in hdr["pixdim"][1 : hdr["dim"][0] + 1]],
        # voxel -> RAS+ mm, as nibabel resolves sform/qform
        "affine_ras": [[float(v) for v in row] for row in img.affine],
    }
    return probe, write_renders(path.name, renders, out), True


def png_expectations(path: Path, out: Path):
    rgb = np.asarray(Image.open(path).convert("RGB"))
    probe = {"format": "png", "rows": rgb.shape[0], "columns": rgb.shape[1], "frames": 1}
    return probe, write_renders(path.name, [(0, rgb)], out), True


def write_renders(name, renders, out: Path):
    listed = []
    for frame, pixels in renders:
        png = f"expected/{name}.frame{frame}.png"
        Image.fromarray(pixels).save(out / png)
        listed.append({"frame": frame, "png": png, "sha256": hashlib.sha256(pixels.tobytes()).hexdigest()})
    return listed


def main():
    pydicom_dir, nibabel_dir, out = (Path(a) for a in sys.argv[1:4])
    (out / "expected").mkdir(parents=True, exist_ok=True)
    for name, _ in DICOM_FILES:
        shutil.copy(pydicom_dir / name, out / name)
    for name in ["MR_truncated.dcm"] + UNDECODABLE:
        shutil.copy(pydicom_dir / name, out / name)
    for name in NIFTI_FILES:
        shutil.copy(nibabel_dir / name, out / name)
    derive_monochrome1(pydicom_dir / "MR_small.dcm", out / DERIVED[0])
    derive_enhanced(pydicom_dir / "MR_small.dcm", out / DERIVED[1])
    make_key_image(out / PNG_KEY, pydicom_dir / "MR_small.dcm")

    entries = []
    for name, lossless in DICOM_FILES + [(d, True) for d in DERIVED] + MADE_BY_MAKE_HTJ2K:
        probe, renders, exact = dicom_expectations(out / name, lossless, out)
        entry = {"file": name, "lossless": exact, "probe": probe, "renders": renders}
        if name in STORED_VALUES:
            entry["stored_values"] = write_stored_values(out / name, out)
        entries.append(entry)
    for name in NIFTI_FILES:
        probe, renders, exact = nifti_expectations(out / name, out)
        entries.append({"file": name, "lossless": exact, "probe": probe, "renders": renders})
    probe, renders, exact = png_expectations(out / PNG_KEY, out)
    entries.append({"file": PNG_KEY, "lossless": exact, "probe": probe, "renders": renders})

    versions = {m.__name__: m.__version__ for m in (pydicom, nibabel, np)}
    versions["Pillow"] = Image.__version__
    for decoder in ("pylibjpeg", "libjpeg", "openjpeg", "rle"):
        try:
            versions[decoder] = __import__(decoder).__version__
        except (ImportError, AttributeError):
            pass
    doc = {"generated_by": "scripts/reference/imaging/make_expected.py", "versions": versions, "files": entries}
    (out / "expected.json").write_text(json.dumps(doc, indent=1) + "\n")


if __name__ == "__main__":
    main()
