#!/usr/bin/env python3
"""Reference values for the measurements of cases/tests/curation.rs
(`measurements_on_the_demo_ct_equal_pydicom_and_numpy`): distances, ROI statistics and
bidimensional diameters on the demo study's CT (case stroke-02, series ct), computed here with
pydicom + numpy from the DICOM files, never with NeuroRater's code.

Usage (the demo is deterministic: two writes are byte-identical):
    target/debug/neurorater demo --out /tmp/demo
    ~/.cache/neurorater/test-python-venv/bin/python \
        scripts/reference/imaging/make_measurement_reference.py /tmp/demo \
        > cases/tests/data/measurement_reference.json
(the venv is scripts/setup.sh's: pydicom 3.0.1, numpy 2.2.6).

How each value is made, independently of imaging/src/measure.rs:
- the slices are ordered along the normal of ImageOrientationPatient and the voxel -> patient
  affine is built from ImagePositionPatient, ImageOrientationPatient and PixelSpacing (PS3.3
  C.7.6.2.1.1), then inverted with numpy.linalg.inv;
- modality values are pixel_array * RescaleSlope + RescaleIntercept (HU);
- an ROI's pixels are those of its slice whose centres lie inside: for an outline, PNPOLY's
  crossing test evaluated for every pixel of the slice at once; for an ellipse, the 2x2 solve
  (i, j) - c = s u + t v with s^2 + t^2 <= 1 for every pixel; SD is numpy.std (ddof 0);
- the shape's area is the shoelace sum (an outline) or pi |u x v| (an ellipse), in mm;
- the longest diameter of an outline is the largest distance between two of its points (every
  pair); the perpendicular one is the longest inside stretch over 200,001 lines across that
  diameter, so it is a lower bound within about 0.01 mm of the exact value; an ellipse's
  diameters are twice the singular values of [u v].
"""
import json
import sys
from pathlib import Path

import numpy as np
import pydicom

SLICE_Z = 15.0  # patient z (mm) of the slice the ROIs are drawn on: through the infarct


def load(series_dir):
    datasets = [pydicom.dcmread(p) for p in sorted(Path(series_dir).glob("*.dcm"))]
    iop = np.array(datasets[0].ImageOrientationPatient, dtype=float)
    normal = np.cross(iop[:3], iop[3:])
    datasets.sort(key=lambda ds: float(np.dot(normal, np.array(ds.ImagePositionPatient, dtype=float))))
    first = np.array(datasets[0].ImagePositionPatient, dtype=float)
    last = np.array(datasets[-1].ImagePositionPatient, dtype=float)
    row_spacing, column_spacing = (float(x) for x in datasets[0].PixelSpacing)
    affine = np.eye(4)
    affine[:3, 0] = iop[:3] * column_spacing
    affine[:3, 1] = iop[3:] * row_spacing
    affine[:3, 2] = (last - first) / (len(datasets) - 1)
    affine[:3, 3] = first
    hu = np.stack(
        [ds.pixel_array.astype(np.float64) * float(ds.RescaleSlope) + float(ds.RescaleIntercept) for ds in datasets]
    )  # [slice, row, column]
    pixel_area = row_spacing * column_spacing
    return hu, affine, pixel_area


def to_voxel(affine, points):
    inverse = np.linalg.inv(affine)
    homogeneous = np.c_[np.asarray(points, dtype=float), np.ones(len(points))]
    return (inverse @ homogeneous.T).T[:, :3]


def roi_slice(voxels):
    k = int(round(voxels[:, 2].mean()))
    assert np.all(np.abs(voxels[:, 2] - k) <= 0.5), "the ROI does not lie on one slice"
    return k


def stats(hu, k, inside, area_mm2, pixel_area):
    values = hu[k][inside]
    return {
        "slice": k,
        "pixels": int(values.size),
        "mean": float(values.mean()),
        "sd": float(values.std()),
        "min": float(values.min()),
        "max": float(values.max()),
        "area_mm2": float(area_mm2),
        "pixel_area_mm2": float(values.size * pixel_area),
    }


def grid(hu):
    rows, columns = hu.shape[1:]
    j, i = np.mgrid[0:rows, 0:columns]
    return i.astype(float), j.astype(float)


def pnpoly(i, j, polygon):
    inside = np.zeros(i.shape, dtype=bool)
    n = len(polygon)
    for e in range(n):
        (xi, yi), (xj, yj) = polygon[e], polygon[(e + 1) % n]
        if yi == yj:
            continue
        crosses = ((yi > j) != (yj > j)) & (i < (xj - xi) * (j - yi) / (yj - yi) + xi)
        inside ^= crosses
    return inside


def outline_roi(hu, affine, pixel_area, points):
    voxels = to_voxel(affine, points)
    k = roi_slice(voxels)
    i, j = grid(hu)
    inside = pnpoly(i, j, voxels[:, :2])
    p = np.asarray(points, dtype=float)
    area = np.linalg.norm(sum(np.cross(p[n] - p[0], p[n + 1] - p[0]) for n in range(1, len(p) - 1))) / 2
    return stats(hu, k, inside, area, pixel_area)


def ellipse_roi(hu, affine, pixel_area, centre, a, b):
    voxels = to_voxel(affine, [centre, a, b])
    k = roi_slice(voxels)
    c = voxels[0, :2]
    m = np.column_stack([voxels[1, :2] - c, voxels[2, :2] - c])
    i, j = grid(hu)
    st = np.linalg.solve(m, np.stack([i.ravel() - c[0], j.ravel() - c[1]]))
    inside = ((st**2).sum(axis=0) <= 1.0).reshape(i.shape)
    u, v = np.subtract(a, centre), np.subtract(b, centre)
    return stats(hu, k, inside, np.pi * np.linalg.norm(np.cross(u, v)), pixel_area)


def outline_diameters(points):
    p = np.asarray(points, dtype=float)[:, :2]  # the outlines here are axial: z is constant
    d = np.linalg.norm(p[:, None, :] - p[None, :, :], axis=2)
    a, b = np.unravel_index(np.argmax(d), d.shape)
    longest = d[a, b]
    axis = (p[b] - p[a]) / longest
    across = np.array([-axis[1], axis[0]])
    along, side = p @ axis, p @ across
    widest = 0.0
    for t in np.linspace(along.min(), along.max(), 200_001):
        crossings = []
        for e in range(len(p)):
            ta, tb = along[e], along[(e + 1) % len(p)]
            if (ta > t) != (tb > t):
                f = (t - ta) / (tb - ta)
                crossings.append(side[e] + (side[(e + 1) % len(p)] - side[e]) * f)
        crossings.sort()
        for n in range(0, len(crossings) - 1, 2):
            widest = max(widest, crossings[n + 1] - crossings[n])
    return {"longest_mm": float(longest), "perpendicular_mm": float(widest)}


def ellipse_diameters(centre, a, b):
    m = np.column_stack([np.subtract(a, centre), np.subtract(b, centre)])
    s = np.linalg.svd(m, compute_uv=False)
    return {"longest_mm": float(2 * s[0]), "perpendicular_mm": float(2 * s[1])}


def main():
    bundle = Path(sys.argv[1])
    hu, affine, pixel_area = load(bundle / "cases" / "stroke-02" / "ct")
    z = SLICE_Z
    distances = [
        [[-60.3, 10.7, z], [42.1, -35.2, z]],
        [[0.25, -80.0, -40.0], [12.5, 95.5, 60.0]],  # across slices: a 3-D distance
    ]
    ellipses = [
        # Axis-aligned, over the left MCA territory (patient left is +x in LPS).
        ([40.2, 5.3, z], [58.9, 5.3, z], [40.2, 17.2, z]),
        # Rotated, drawn a little off the slice centre (z + 1.2 mm rounds to the same slice).
        ([-20.0, 30.0, z + 1.2], [-8.0, 39.0, z + 1.2], [-23.0, 34.0, z + 1.2]),
        # A few pixels only.
        ([0.1, 0.2, z], [1.4, 0.2, z], [0.1, 1.1, z]),
    ]
    outlines = [
        # Concave: a star round the infarct.
        [[40.0 + r * np.cos(t), 5.0 + r * np.sin(t), z]
         for n, t in enumerate(np.linspace(0, 2 * np.pi, 16, endpoint=False))
         for r in [20.0 if n % 2 == 0 else 9.0]],
        # Most of the head: a large ROI (hundreds of pixel rows).
        [[-80.0, -70.0, z], [85.0, -75.0, z], [90.0, 95.0, z], [0.0, 120.0, z], [-85.0, 90.0, z]],
    ]
    reference = {
        "made_by": "scripts/reference/imaging/make_measurement_reference.py (pydicom "
        + pydicom.__version__ + ", numpy " + np.__version__ + ") on the demo's stroke-02 CT",
        "case": "stroke-02",
        "series": "ct",
        "distances": [
            {"points": pts, "distance_mm": float(np.linalg.norm(np.subtract(pts[1], pts[0])))}
            for pts in distances
        ],
        "ellipses": [
            {"points": [list(map(float, p)) for p in e], **ellipse_roi(hu, affine, pixel_area, *e),
             **ellipse_diameters(*e)}
            for e in ellipses
        ],
        "outlines": [
            {"points": [list(map(float, p)) for p in o], **outline_roi(hu, affine, pixel_area, o),
             **outline_diameters(o)}
            for o in outlines
        ],
    }
    json.dump(reference, sys.stdout, indent=1)
    print()


if __name__ == "__main__":
    main()
