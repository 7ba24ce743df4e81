"""Reference values for cases/src/package/date_shift.rs: DICOM dates (DA, YYYYMMDD) moved by a
number of days, as Python's proleptic Gregorian `datetime.date` computes them.

Run: python3 scripts/reference/dates/date_shift.py  (prints the Rust table the test holds)
"""
from datetime import date, timedelta

CASES = [
    ("20000301", -1),  # into a leap day (divisible by 400)
    ("19000301", -1),  # 1900 is no leap year
    ("20241231", 1),  # across a year end
    ("19350304", -400),
    ("19710610", -3652),
    ("20000229", 365),
    ("19991231", -36524),
    ("16000101", 0),
]

for text, days in CASES:
    moved = date(int(text[:4]), int(text[4:6]), int(text[6:])) + timedelta(days=days)
    print(f'("{text}", {days}, "{moved.strftime("%Y%m%d")}"),')
