#!/usr/bin/env python3
"""An HTJ2K fixture for imaging/tests/imaging.rs: MR_small.dcm's pixels encoded losslessly as
High-Throughput JPEG 2000 (ISO 15444-15) and stored under transfer syntax 1.2.840.10008.1.2.4.201.

No wheel on PyPI carries an HTJ2K DICOM file (pydicom's HTJ2K samples live in pydicom-data and
pylibjpeg-data, which are fetched from GitHub, not installed), so the codestream is made here
with OpenJPH, the HTJ2K reference implementation, through jp15 (BSD-2-Clause; its wheel needs
Python >= 3.12):

    pip install jp15==0.2.0 pydicom==3.0.2 numpy pylibjpeg pylibjpeg-openjpeg
    python3.12 make_htj2k.py PYDICOM_TEST_FILES_DIR OUT_DIR

Then run make_expected.py, which computes the expected values with pydicom and
pylibjpeg-openjpeg as for every other file. Lossless: the decoded values must be MR_small's
exactly, which this script checks with both decoders before writing.
"""
import sys
from pathlib import Path

import jp15
import numpy as np
import pydicom
from pydicom.encaps import encapsulate
from pydicom.uid import UID

HTJ2K_LOSSLESS = UID("1.2.840.10008.1.2.4.201")
NAME = "MR_small_htj2k_lossless.dcm"


def main():
    pydicom_dir, out = (Path(a) for a in sys.argv[1:3])
    ds = pydicom.dcmread(pydicom_dir / "MR_small.dcm")
    original = ds.pixel_array
    codestream = jp15.encode(original)  # reversible 5/3 wavelet: lossless
    assert codestream[:4] == b"\xff\x4f\xff\x51", "a raw J2K codestream (SOC, SIZ)"
    assert b"\xff\x50" in codestream, "the CAP marker of an HTJ2K codestream"
    assert np.array_equal(jp15.decode(codestream), original)
    ds.PixelData = encapsulate([codestream])
    ds["PixelData"].VR = "OB"
    ds["PixelData"].is_undefined_length = True
    ds.file_meta.TransferSyntaxUID = HTJ2K_LOSSLESS
    ds.save_as(out / NAME, enforce_file_format=True)
    assert np.array_equal(pydicom.dcmread(out / NAME).pixel_array, original)


if __name__ == "__main__":
    main()
