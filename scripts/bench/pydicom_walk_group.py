"""The pydicom side of the scaffold scale benchmark (scripts/bench/scaffold_scale.sh).

Walks a folder as `neurorater scaffold` does and groups what it finds the way a user's own
script would: every file read with pydicom (header only, stop_before_pixels), grouped by
StudyInstanceUID and SeriesInstanceUID, each series sorted along the slice normal. It writes
nothing, so it is a lower bound for a Python scaffold (no de-identified copies, no bundle).
Prints `studies series files seconds`, the seconds those of the walk and grouping alone
(interpreter start and imports left out, as `neurorater scaffold` reports its scan phase).
"""

import os
import sys
import time
from collections import defaultdict

import numpy as np
import pydicom


def main(root):
    began = time.perf_counter()
    series = defaultdict(list)
    files = 0
    for folder, _, names in os.walk(root):
        for name in names:
            path = os.path.join(folder, name)
            try:
                ds = pydicom.dcmread(path, stop_before_pixels=True)
            except Exception:
                continue
            files += 1
            iop = np.array(ds.ImageOrientationPatient, dtype=float)
            normal = np.cross(iop[:3], iop[3:])
            position = float(np.dot(normal, np.array(ds.ImagePositionPatient, dtype=float)))
            series[(ds.StudyInstanceUID, ds.SeriesInstanceUID)].append((position, path))
    for slices in series.values():
        slices.sort()
    studies = {study for study, _ in series}
    print(len(studies), len(series), files, f"{time.perf_counter() - began:.2f}")


if __name__ == "__main__":
    main(sys.argv[1])
