"""Reads NeuroRater's DICOM SR export back with pydicom and highdicom, independently of the
exporter: every mark the test drew (given on stdin, as the store holds it) must come back with
its finding code, severity and coordinates, on a referenced de-identified instance written beside
the report, and no original UID of the source images may appear in a report.

stdin: {"out": DIR, "taxonomy_json": TEXT (the study's taxonomy as stored),
        "original_uids": [UID...],
        "marks": [{"case": ID, "kind": "lesion"|"label", "id": ID, "category": CODE|null,
                   "severity": N|null, "series": ID, "shape": SHAPE, "points": [[x,y,z]...]}]}
stdout: {"groups": N, "scoord": N, "scoord3d": N}; exit 1 naming the first disagreement.
"""

import hashlib
import json
import os
import sys

import highdicom as hd
import numpy as np
import pydicom

SCHEME = "99NEURORATER"
TOL_MM = 1e-3


def fail(message):
    print(message, file=sys.stderr)
    sys.exit(1)


def graphic_points(shape, points):
    points = [np.array(p, dtype=float) for p in points]
    if shape in ("point", "arrow"):
        return points
    if shape == "ellipse":
        centre, a, b = points
        axes = [a - centre, b - centre]
        if np.dot(axes[1], axes[1]) > np.dot(axes[0], axes[0]):
            axes.reverse()
        return [centre + axes[0], centre - axes[0], centre + axes[1], centre - axes[1]]
    if shape == "freehand":
        return points + [points[0]]
    fail(f"unknown shape {shape}")


def main():
    given = json.load(sys.stdin)
    taxonomy = json.loads(given["taxonomy_json"])
    names = {c["code"]: c["name"] for c in taxonomy["categories"]}
    version = hashlib.sha256(given["taxonomy_json"].encode()).hexdigest()[:16]
    out = given["out"]
    originals = set(given["original_uids"])
    by_case = {}
    for mark in given["marks"]:
        by_case.setdefault(mark["case"], []).append(mark)
    counts = {"groups": 0, "scoord": 0, "scoord3d": 0}
    for case, marks in sorted(by_case.items()):
        case_dir = os.path.join(out, case)
        report_path = os.path.join(case_dir, "sr.dcm")
        if not os.path.exists(report_path):
            fail(f"{case}: no sr.dcm")
        raw = open(report_path, "rb").read()
        for uid in originals:
            if uid.encode() in raw:
                fail(f"{case}: the report holds an original UID {uid}")
        ds = pydicom.dcmread(report_path)
        if ds.SOPClassUID != "1.2.840.10008.5.1.4.1.1.88.34":
            fail(f"{case}: SOP class {ds.SOPClassUID}, not Comprehensive 3D SR")
        if str(ds.PatientID) != case or str(ds.PatientName) != "":
            fail(f"{case}: patient {ds.PatientName!r}/{ds.PatientID!r}")
        if ds.get("PatientBirthDate", "") or ds.get("StudyDate", ""):
            fail(f"{case}: a birth or study date")
        hd.sr.Comprehensive3DSR.from_dataset(ds)
        report = hd.sr.MeasurementReport.from_sequence([ds])
        # The de-identified copies beside the report, by SOP Instance UID.
        copies = {}
        for root, _, files in os.walk(case_dir):
            for name in files:
                if name == "sr.dcm":
                    continue
                image = pydicom.dcmread(os.path.join(root, name))
                if image.SOPInstanceUID in originals or image.StudyInstanceUID in originals:
                    fail(f"{case}: a copy keeps its original UID")
                copies[image.SOPInstanceUID] = image
        evidence = {
            sop.ReferencedSOPInstanceUID
            for study in ds.get("CurrentRequestedProcedureEvidenceSequence", [])
            for series in study.ReferencedSeriesSequence
            for sop in series.ReferencedSOPSequence
        }
        groups = {}
        for group in report.get_planar_roi_measurement_groups():
            groups[str(group.tracking_identifier)] = group
        if len(groups) != len(marks):
            fail(f"{case}: {len(groups)} measurement groups for {len(marks)} marks")
        lesion_marks = {}
        for mark in marks:
            if mark["kind"] == "lesion":
                lesion_marks.setdefault(mark["id"], []).append(mark)
        for mark in marks:
            if mark["kind"] == "lesion":
                siblings = lesion_marks[mark["id"]]
                name = f"ground-truth lesion {mark['id']}"
                if len(siblings) > 1:
                    name += f", mark {siblings.index(mark) + 1} of {len(siblings)}"
                group = groups.get(name)
            else:
                prefix = f"error label {mark['id']} ({mark['category']})"
                group = next((g for n, g in groups.items() if n.startswith(prefix)), None)
                name = prefix
            if group is None:
                fail(f"{case}: no measurement group {name!r} among {sorted(groups)}")
            counts["groups"] += 1
            finding = group.finding_type
            if mark["kind"] == "lesion":
                if (finding.value, finding.scheme_designator) != ("52988006", "SCT"):
                    fail(f"{case}: {name}: finding {finding}")
            else:
                wanted = (mark["category"], SCHEME, names[mark["category"]])
                got = (finding.value, finding.scheme_designator, finding.meaning)
                if got != wanted:
                    fail(f"{case}: {name}: finding {got}, not {wanted}")
                if finding.scheme_version != version:
                    fail(f"{case}: {name}: scheme version {finding.scheme_version}")
                severities = [
                    e.value.value
                    for e in group.get_qualitative_evaluations()
                    if e.name.value == "SEVERITY" and e.name.scheme_designator == SCHEME
                ]
                if severities != [f"SEVERITY-{mark['severity']}"]:
                    fail(f"{case}: {name}: severity {severities}")
            expected = graphic_points(mark["shape"], mark["points"])
            roi = group.roi
            if roi is None:
                fail(f"{case}: {name}: no region")
            graphic_type = str(roi.GraphicType)
            wanted_types = {
                "point": {"POINT"},
                "arrow": {"POLYLINE"},
                "ellipse": {"ELLIPSE"},
                "freehand": {"POLYLINE", "POLYGON"},
            }[mark["shape"]]
            if graphic_type not in wanted_types:
                fail(f"{case}: {name}: graphic type {graphic_type}")
            data = np.array(roi.GraphicData, dtype=float)
            if roi.ValueType == "SCOORD":
                counts["scoord"] += 1
                data = data.reshape(-1, 2)
                sop = roi.ContentSequence[0].ReferencedSOPSequence[0]
                uid = sop.ReferencedSOPInstanceUID
                if uid not in copies:
                    fail(f"{case}: {name}: refers to {uid}, not a copy beside the report")
                if uid not in evidence:
                    fail(f"{case}: {name}: {uid} is not in the evidence sequence")
                image = copies[uid]
                if sop.ReferencedSOPClassUID != image.SOPClassUID:
                    fail(f"{case}: {name}: SOP class differs from the image's")
                position = np.array(image.ImagePositionPatient, dtype=float)
                orientation = np.array(image.ImageOrientationPatient, dtype=float)
                row_dir, col_dir = orientation[:3], orientation[3:]
                normal = np.cross(row_dir, col_dir)
                row_spacing, col_spacing = (float(v) for v in image.PixelSpacing)
                # Half the spacing between this series' planes.
                offsets = sorted(
                    float(np.dot(np.array(c.ImagePositionPatient, dtype=float), normal))
                    for c in copies.values()
                    if c.SeriesInstanceUID == image.SeriesInstanceUID
                )
                gaps = [b - a for a, b in zip(offsets, offsets[1:]) if b - a > 1e-6]
                half = (min(gaps) / 2 if gaps else 0.5) + 1e-3
                if len(data) != len(expected):
                    fail(f"{case}: {name}: {len(data)} points, not {len(expected)}")
                for (column, row), point in zip(data, expected):
                    # (0, 0) is the top left corner of the top left pixel: its centre is 0.5.
                    back = (
                        position
                        + (column - 0.5) * col_spacing * row_dir
                        + (row - 0.5) * row_spacing * col_dir
                    )
                    offset = float(np.dot(point - position, normal))
                    if abs(offset) > half:
                        fail(f"{case}: {name}: {offset} mm off the referenced image's plane")
                    in_plane = point - offset * normal
                    if np.max(np.abs(back - in_plane)) > TOL_MM:
                        fail(f"{case}: {name}: pixel ({column}, {row}) is {back}, drawn {point}")
            elif roi.ValueType == "SCOORD3D":
                counts["scoord3d"] += 1
                data = data.reshape(-1, 3)
                frames = {c.FrameOfReferenceUID for c in copies.values()}
                if roi.ReferencedFrameOfReferenceUID not in frames:
                    fail(f"{case}: {name}: frame of reference not the copies'")
                if len(data) != len(expected) or np.max(np.abs(data - np.array(expected))) > TOL_MM:
                    fail(f"{case}: {name}: {data.tolist()}, drawn {[list(p) for p in expected]}")
            else:
                fail(f"{case}: {name}: value type {roi.ValueType}")
    json.dump(counts, sys.stdout)


if __name__ == "__main__":
    main()
