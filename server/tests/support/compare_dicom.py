"""Independent check of the team server's images (server/tests/team_server.rs): pydicom reads
each DICOM file of a server-built rater package and the bundle file it came from, and checks
that the pixels are the same, that no identifying attribute is left, that the UIDs were replaced,
and that the original's identifying values appear nowhere in the package file's bytes.

Input (stdin): JSON [[package_file, original_file], ...]. Output: JSON {"compared": N}; any
difference exits 1 naming the file and what differs.
"""

import json
import sys

import numpy
import pydicom

IDENTIFYING = [
    "PatientName",
    "PatientID",
    "PatientBirthDate",
    "PatientAddress",
    "OtherPatientIDs",
    "InstitutionName",
    "InstitutionAddress",
    "ReferringPhysicianName",
    "PerformingPhysicianName",
    "OperatorsName",
    "AccessionNumber",
    "StationName",
]
REPLACED_UIDS = ["StudyInstanceUID", "SeriesInstanceUID", "SOPInstanceUID", "FrameOfReferenceUID"]


def main():
    pairs = json.load(sys.stdin)
    problems = []
    for package_file, original_file in pairs:
        sent = pydicom.dcmread(package_file)
        original = pydicom.dcmread(original_file)
        if not numpy.array_equal(sent.pixel_array, original.pixel_array):
            problems.append(f"{package_file}: pixels differ from {original_file}")
        for keyword in IDENTIFYING:
            if keyword in sent and str(sent.data_element(keyword).value).strip():
                problems.append(f"{package_file}: {keyword} is still there")
        for keyword in REPLACED_UIDS:
            if keyword in original and keyword in sent and sent[keyword].value == original[keyword].value:
                problems.append(f"{package_file}: {keyword} was not replaced")
        raw = open(package_file, "rb").read()
        for keyword in ["PatientName", "PatientID", "SOPInstanceUID", "StudyInstanceUID"]:
            value = str(original.get(keyword, "")).strip()
            if len(value) >= 4 and value.encode() in raw:
                problems.append(f"{package_file}: the original {keyword} {value!r} is in its bytes")
    if problems:
        print("\n".join(problems), file=sys.stderr)
        sys.exit(1)
    print(json.dumps({"compared": len(pairs)}))


main()
