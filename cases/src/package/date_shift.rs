//! Dates moved instead of removed (PS3.15's Retain Longitudinal Temporal Information with
//! Modified Dates option): every date of one patient moves by the same number of days, so the
//! intervals between scans, and between a scan and its series, stay true while the calendar
//! dates no longer point at a visit. The offset is drawn per run from the run's salt and the
//! patient, and is written nowhere.

use sha2::{Digest, Sha256};

/// Offsets lie between one and eleven years back: far enough that a shifted date names no real
/// visit of the patient's, and the same for every date of one patient.
const MIN_DAYS_BACK: u64 = 366;
const SPAN_DAYS: u64 = 3653;

/// The days (negative: back) every date of `patient` moves by in the run salted with `salt`.
pub(crate) fn patient_offset(salt: &str, patient: &str) -> i64 {
    let digest = Sha256::new()
        .chain_update(salt.as_bytes())
        .chain_update(b"\0date-shift\0")
        .chain_update(patient.as_bytes())
        .finalize();
    let mut first = [0u8; 8];
    first.copy_from_slice(&digest[..8]);
    -((MIN_DAYS_BACK + u64::from_be_bytes(first) % SPAN_DAYS) as i64)
}

/// A DA value (`YYYYMMDD`, several joined by `\`) moved by `days`; `None` when any part is not a
/// full date (the caller removes the attribute rather than keep an unshifted date).
pub(crate) fn shift_da(value: &str, days: i64) -> Option<String> {
    let parts: Option<Vec<String>> = value
        .trim_end_matches(['\0', ' '])
        .split('\\')
        .map(|part| shift_date(part.trim(), days))
        .collect();
    parts.map(|p| p.join("\\"))
}

/// A DT value (`YYYYMMDD` then time and offset) with its date part moved by `days`, the rest
/// kept; `None` when a part has no full date.
pub(crate) fn shift_dt(value: &str, days: i64) -> Option<String> {
    let parts: Option<Vec<String>> = value
        .trim_end_matches(['\0', ' '])
        .split('\\')
        .map(|part| {
            let part = part.trim();
            let date = part.get(..8)?;
            Some(format!("{}{}", shift_date(date, days)?, &part[8..]))
        })
        .collect();
    parts.map(|p| p.join("\\"))
}

fn shift_date(text: &str, days: i64) -> Option<String> {
    if text.len() != 8 || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let year: i64 = text[..4].parse().ok()?;
    let month: u32 = text[4..6].parse().ok()?;
    let day: u32 = text[6..].parse().ok()?;
    if !(1..=12).contains(&month) || day == 0 || day > days_in_month(year, month) {
        return None;
    }
    let (year, month, day) = civil_from_days(days_from_civil(year, month, day) + days);
    (0..=9999)
        .contains(&year)
        .then(|| format!("{year:04}{month:02}{day:02}"))
}

fn is_leap(year: i64) -> bool {
    year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
}

fn days_in_month(year: i64, month: u32) -> u32 {
    match month {
        2 if is_leap(year) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days since 1970-01-01 in the proleptic Gregorian calendar (Howard Hinnant's `days_from_civil`).
fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let year_of_era = year - era * 400;
    let month = i64::from(month);
    let day_of_year =
        (153 * (if month > 2 { month - 3 } else { month + 9 }) + 2) / 5 + i64::from(day) - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

/// The inverse of [`days_from_civil`].
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let day_of_era = z - era * 146_097;
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let mp = (5 * day_of_year + 2) / 153;
    let day = (day_of_year - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// scripts/reference/dates/date_shift.py (Python's `datetime.date` + `timedelta`).
    const REFERENCE: [(&str, i64, &str); 8] = [
        ("20000301", -1, "20000229"),
        ("19000301", -1, "19000228"),
        ("20241231", 1, "20250101"),
        ("19350304", -400, "19340128"),
        ("19710610", -3652, "19610610"),
        ("20000229", 365, "20010228"),
        ("19991231", -36524, "18991231"),
        ("16000101", 0, "16000101"),
    ];

    #[test]
    fn dates_move_as_pythons_calendar_moves_them() {
        for (date, days, expected) in REFERENCE {
            assert_eq!(
                shift_da(date, days).as_deref(),
                Some(expected),
                "{date} {days}"
            );
        }
    }

    #[test]
    fn several_values_and_date_times_keep_their_shape() {
        assert_eq!(
            shift_da("20000301\\20241231 ", -1).as_deref(),
            Some("20000229\\20241230")
        );
        assert_eq!(
            shift_dt("20241231235959.123456+0100", 1).as_deref(),
            Some("20250101235959.123456+0100")
        );
    }

    #[test]
    fn what_is_not_a_full_date_is_not_kept() {
        for bad in ["2024", "202412", "20241332", "20230229", "2024-12-31", ""] {
            assert_eq!(shift_da(bad, 1), None, "{bad:?}");
        }
        assert_eq!(shift_dt("2024", 1), None);
    }

    #[test]
    fn one_patient_has_one_offset_per_run_and_it_is_at_least_a_year_back() {
        let offset = patient_offset("run-1", "ZZPHI-MRN-41");
        assert_eq!(offset, patient_offset("run-1", "ZZPHI-MRN-41"));
        assert!((-(366 + 3652)..=-366).contains(&offset), "{offset}");
        let others: Vec<i64> = (0..20)
            .map(|n| patient_offset(&format!("run-{n}"), "ZZPHI-MRN-41"))
            .collect();
        assert!(others.iter().any(|&o| o != offset), "the salt changes it");
    }
}
