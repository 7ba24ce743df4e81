#!/usr/bin/env python3
"""Speed of `neurorater render FILES --out-dir DIR` against pydicom + numpy + Pillow doing the
same work (decode, rescale, docs/formats.md section 4 window, PNG encode) on the same batch.

Usage (after `cargo build --release --bin neurorater`):
    python3 compare_render.py [--binary target/release/neurorater] [--copies 20] [--rounds 5]
        [FILES...]

Without FILES it uses the DICOM fixtures in imaging/tests/data that both sides decode.
Each file is copied --copies times (distinct names) into a temporary batch. Rounds alternate
(ours, pydicom, ours, pydicom, ...) so machine load hits both alike. Our time is the whole
process (start-up included, all cores the CLI chooses to use); pydicom's is in-process, after
imports (which favours pydicom). Prints each side's median and the ratio.
"""
import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pydicom
from PIL import Image

REPO = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(Path(__file__).parent))
from make_expected import rescale_and_windows, spanning, valid, voi  # noqa: E402  (same rule)

DEFAULT_FILES = [
    "MR_small.dcm", "MR_small_implicit.dcm", "MR_small_bigendian.dcm", "image_dfl.dcm",
    "MR_small_RLE.dcm", "SC_rgb_jpeg_dcmtk.dcm", "MR_small_jpeg_ls_lossless.dcm",
    "MR_small_jp2klossless.dcm", "JPEG2000.dcm", "693_J2KI.dcm", "CT_small.dcm", "rtdose.dcm",
    "SC_rgb_rle_2frame.dcm", "examples_overlay.dcm", "MR_small_monochrome1.dcm",
]


def render_with_pydicom(path: Path, out: Path):
    ds = pydicom.dcmread(path)
    arr = ds.pixel_array
    frames = int(ds.get("NumberOfFrames", 1) or 1)
    if frames == 1:
        arr = arr[np.newaxis]
    if int(ds.SamplesPerPixel) == 3:
        bits = int(ds.BitsStored)
        pixels = np.clip(np.floor(arr[0] * (255.0 / (2**bits - 1)) + 0.5), 0, 255).astype(np.uint8)
    else:
        rescales, windows = rescale_and_windows(ds, frames)
        modality = [arr[f].astype(np.float64) * s + i for f, (s, i) in enumerate(rescales)]
        usable = [w for w in windows[0] if valid(w)]
        window = usable[0] if usable else spanning(min(m.min() for m in modality), max(m.max() for m in modality))
        pixels = voi(modality[0], *window)
        if ds.PhotometricInterpretation == "MONOCHROME1":
            pixels = 255 - pixels
    Image.fromarray(pixels).save(out / f"{path.name}.png")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--binary", default=str(REPO / "target/release/neurorater"))
    parser.add_argument("--copies", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("files", nargs="*")
    args = parser.parse_args()
    sources = [Path(f) for f in args.files] or [REPO / "imaging/tests/data" / f for f in DEFAULT_FILES]

    with tempfile.TemporaryDirectory() as tmp:
        batch_dir = Path(tmp) / "batch"
        batch_dir.mkdir()
        batch = []
        for copy in range(args.copies):
            for src in sources:
                dst = batch_dir / f"{copy:03d}_{src.name}"
                shutil.copy(src, dst)
                batch.append(dst)
        ours, theirs = [], []
        for round_ in range(args.rounds):
            out = Path(tmp) / f"ours{round_}"
            start = time.perf_counter()
            done = subprocess.run([args.binary, "render", *map(str, batch), "--out-dir", str(out)],
                                  capture_output=True, text=True)
            ours.append(time.perf_counter() - start)
            if done.returncode != 0:
                sys.exit(f"neurorater render failed ({done.returncode}):\n{done.stderr}")
            out = Path(tmp) / f"pydicom{round_}"
            out.mkdir()
            start = time.perf_counter()
            for path in batch:
                render_with_pydicom(path, out)
            theirs.append(time.perf_counter() - start)
        # The same work, checked on the last round's outputs: identical pixels, except where
        # the two sides' lossy JPEG / JPEG 2000 decoders round differently.
        identical, differing = 0, []
        for path in batch:
            a = np.asarray(Image.open(Path(tmp) / f"ours{args.rounds - 1}" / f"{path.name}.png"))
            b = np.asarray(Image.open(Path(tmp) / f"pydicom{args.rounds - 1}" / f"{path.name}.png"))
            if a.shape == b.shape and np.array_equal(a, b):
                identical += 1
            else:
                diff = int(np.abs(a.astype(int) - b.astype(int)).max()) if a.shape == b.shape else "shape"
                differing.append(f"{path.name[4:]} (max |difference| {diff})")
        print(f"pixels identical to pydicom's in {identical} of {len(batch)} files")
        for name in sorted(set(differing)):
            print(f"  differs: {name}")
        ours_median, theirs_median = statistics.median(ours), statistics.median(theirs)
        print(f"{len(batch)} files, {args.rounds} alternating rounds")
        print(f"neurorater render: median {ours_median * 1000:.1f} ms ({ours_median / len(batch) * 1e3:.2f} ms/file)")
        print(f"pydicom + numpy + Pillow: median {theirs_median * 1000:.1f} ms ({theirs_median / len(batch) * 1e3:.2f} ms/file)")
        print(f"ratio (pydicom / neurorater): {theirs_median / ours_median:.1f}x")


if __name__ == "__main__":
    main()
