//! The attributes of the DICOM PS3.15 Annex E Basic Application Level Confidentiality Profile
//! (Table E.1-1), split into the attributes import must never store or show and the UIDs the
//! profile requires to be replaced (import keeps them only as one-way hashes).
//!
//! Source: DICOM PS3.15 2024b, Table E.1-1, column "Basic Prof.": every attribute whose action is
//! not K (keep) or C (clean), except the UIDs (action U), which are in [`uid_tags_to_replace`].
//! Private attributes (odd group numbers) are removed by the profile as a class; see
//! [`is_private`].

use dicom_core::Tag;

const fn t(group: u16, element: u16) -> Tag {
    Tag(group, element)
}

/// Sorted by (group, element) so [`is_identifying`] can binary-search.
static IDENTIFYING: &[Tag] = &[
    t(0x0008, 0x0020), // Study Date
    t(0x0008, 0x0021), // Series Date
    t(0x0008, 0x0022), // Acquisition Date
    t(0x0008, 0x0023), // Content Date
    t(0x0008, 0x0024), // Overlay Date
    t(0x0008, 0x0025), // Curve Date
    t(0x0008, 0x002A), // Acquisition DateTime
    t(0x0008, 0x0030), // Study Time
    t(0x0008, 0x0031), // Series Time
    t(0x0008, 0x0032), // Acquisition Time
    t(0x0008, 0x0033), // Content Time
    t(0x0008, 0x0034), // Overlay Time
    t(0x0008, 0x0035), // Curve Time
    t(0x0008, 0x0050), // Accession Number
    t(0x0008, 0x0080), // Institution Name
    t(0x0008, 0x0081), // Institution Address
    t(0x0008, 0x0082), // Institution Code Sequence
    t(0x0008, 0x0090), // Referring Physician's Name
    t(0x0008, 0x0092), // Referring Physician's Address
    t(0x0008, 0x0094), // Referring Physician's Telephone Numbers
    t(0x0008, 0x0096), // Referring Physician Identification Sequence
    t(0x0008, 0x0201), // Timezone Offset From UTC
    t(0x0008, 0x1010), // Station Name
    t(0x0008, 0x1030), // Study Description
    t(0x0008, 0x103E), // Series Description
    t(0x0008, 0x1040), // Institutional Department Name
    t(0x0008, 0x1048), // Physician(s) of Record
    t(0x0008, 0x1049), // Physician(s) of Record Identification Sequence
    t(0x0008, 0x1050), // Performing Physicians' Name
    t(0x0008, 0x1052), // Performing Physician Identification Sequence
    t(0x0008, 0x1060), // Name of Physician(s) Reading Study
    t(0x0008, 0x1062), // Physician(s) Reading Study Identification Sequence
    t(0x0008, 0x1070), // Operators' Name
    t(0x0008, 0x1072), // Operators' Identification Sequence
    t(0x0008, 0x1080), // Admitting Diagnoses Description
    t(0x0008, 0x1084), // Admitting Diagnoses Code Sequence
    t(0x0008, 0x1110), // Referenced Study Sequence
    t(0x0008, 0x1120), // Referenced Patient Sequence
    t(0x0008, 0x2111), // Derivation Description
    t(0x0008, 0x4000), // Identifying Comments
    t(0x0010, 0x0010), // Patient's Name
    t(0x0010, 0x0020), // Patient ID
    t(0x0010, 0x0021), // Issuer of Patient ID
    t(0x0010, 0x0030), // Patient's Birth Date
    t(0x0010, 0x0032), // Patient's Birth Time
    t(0x0010, 0x0040), // Patient's Sex
    t(0x0010, 0x0050), // Patient's Insurance Plan Code Sequence
    t(0x0010, 0x0101), // Patient's Primary Language Code Sequence
    t(0x0010, 0x0102), // Patient's Primary Language Modifier Code Sequence
    t(0x0010, 0x1000), // Other Patient IDs
    t(0x0010, 0x1001), // Other Patient Names
    t(0x0010, 0x1002), // Other Patient IDs Sequence
    t(0x0010, 0x1005), // Patient's Birth Name
    t(0x0010, 0x1010), // Patient's Age
    t(0x0010, 0x1020), // Patient's Size
    t(0x0010, 0x1030), // Patient's Weight
    t(0x0010, 0x1040), // Patient's Address
    t(0x0010, 0x1050), // Insurance Plan Identification
    t(0x0010, 0x1060), // Patient's Mother's Birth Name
    t(0x0010, 0x1080), // Military Rank
    t(0x0010, 0x1081), // Branch of Service
    t(0x0010, 0x1090), // Medical Record Locator
    t(0x0010, 0x2000), // Medical Alerts
    t(0x0010, 0x2110), // Allergies
    t(0x0010, 0x2150), // Country of Residence
    t(0x0010, 0x2152), // Region of Residence
    t(0x0010, 0x2154), // Patient's Telephone Numbers
    t(0x0010, 0x2160), // Ethnic Group
    t(0x0010, 0x2180), // Occupation
    t(0x0010, 0x21A0), // Smoking Status
    t(0x0010, 0x21B0), // Additional Patient History
    t(0x0010, 0x21C0), // Pregnancy Status
    t(0x0010, 0x21D0), // Last Menstrual Date
    t(0x0010, 0x21F0), // Patient's Religious Preference
    t(0x0010, 0x2203), // Patient's Sex Neutered
    t(0x0010, 0x2297), // Responsible Person
    t(0x0010, 0x2299), // Responsible Organization
    t(0x0010, 0x4000), // Patient Comments
    t(0x0018, 0x0010), // Contrast/Bolus Agent
    t(0x0018, 0x1000), // Device Serial Number
    t(0x0018, 0x1005), // Generator ID
    t(0x0018, 0x1007), // Cassette ID
    t(0x0018, 0x1008), // Gantry ID
    t(0x0018, 0x1030), // Protocol Name
    t(0x0018, 0x1400), // Acquisition Device Processing Description
    t(0x0018, 0x4000), // Acquisition Comments
    t(0x0018, 0x700A), // Detector ID
    t(0x0018, 0x9424), // Acquisition Protocol Description
    t(0x0020, 0x0010), // Study ID
    t(0x0020, 0x4000), // Image Comments
    t(0x0020, 0x9158), // Frame Comments
    t(0x0028, 0x4000), // Image Presentation Comments
    t(0x0032, 0x0012), // Study ID Issuer
    t(0x0032, 0x1020), // Scheduled Study Location
    t(0x0032, 0x1021), // Scheduled Study Location AE Title
    t(0x0032, 0x1030), // Reason for Study
    t(0x0032, 0x1032), // Requesting Physician
    t(0x0032, 0x1033), // Requesting Service
    t(0x0032, 0x1060), // Requested Procedure Description
    t(0x0032, 0x1070), // Requested Contrast Agent
    t(0x0032, 0x4000), // Study Comments
    t(0x0038, 0x0004), // Referenced Patient Alias Sequence
    t(0x0038, 0x0010), // Admission ID
    t(0x0038, 0x0011), // Issuer of Admission ID
    t(0x0038, 0x001E), // Scheduled Patient Institution Residence
    t(0x0038, 0x0020), // Admitting Date
    t(0x0038, 0x0021), // Admitting Time
    t(0x0038, 0x0040), // Discharge Diagnosis Description
    t(0x0038, 0x0050), // Special Needs
    t(0x0038, 0x0060), // Service Episode ID
    t(0x0038, 0x0061), // Issuer of Service Episode ID
    t(0x0038, 0x0062), // Service Episode Description
    t(0x0038, 0x0400), // Patient's Institution Residence
    t(0x0038, 0x0500), // Patient State
    t(0x0038, 0x4000), // Visit Comments
    t(0x0040, 0x0001), // Scheduled Station AE Title
    t(0x0040, 0x0002), // Scheduled Procedure Step Start Date
    t(0x0040, 0x0003), // Scheduled Procedure Step Start Time
    t(0x0040, 0x0004), // Scheduled Procedure Step End Date
    t(0x0040, 0x0005), // Scheduled Procedure Step End Time
    t(0x0040, 0x0006), // Scheduled Performing Physician's Name
    t(0x0040, 0x0007), // Scheduled Procedure Step Description
    t(0x0040, 0x000B), // Scheduled Performing Physician Identification Sequence
    t(0x0040, 0x0010), // Scheduled Station Name
    t(0x0040, 0x0011), // Scheduled Procedure Step Location
    t(0x0040, 0x0012), // Pre-Medication
    t(0x0040, 0x0241), // Performed Station AE Title
    t(0x0040, 0x0242), // Performed Station Name
    t(0x0040, 0x0243), // Performed Location
    t(0x0040, 0x0244), // Performed Procedure Step Start Date
    t(0x0040, 0x0245), // Performed Procedure Step Start Time
    t(0x0040, 0x0253), // Performed Procedure Step ID
    t(0x0040, 0x0254), // Performed Procedure Step Description
    t(0x0040, 0x0275), // Request Attributes Sequence
    t(0x0040, 0x0280), // Comments on the Performed Procedure Step
    t(0x0040, 0x0555), // Acquisition Context Sequence
    t(0x0040, 0x1001), // Requested Procedure ID
    t(0x0040, 0x1004), // Patient Transport Arrangements
    t(0x0040, 0x1005), // Requested Procedure Location
    t(0x0040, 0x1010), // Names of Intended Recipients of Results
    t(0x0040, 0x1011), // Intended Recipients of Results Identification Sequence
    t(0x0040, 0x1101), // Person Identification Code Sequence
    t(0x0040, 0x1102), // Person's Address
    t(0x0040, 0x1103), // Person's Telephone Numbers
    t(0x0040, 0x1400), // Requested Procedure Comments
    t(0x0040, 0x2001), // Reason for the Imaging Service Request
    t(0x0040, 0x2008), // Order Entered By
    t(0x0040, 0x2009), // Order Enterer's Location
    t(0x0040, 0x2010), // Order Callback Phone Number
    t(0x0040, 0x2400), // Imaging Service Request Comments
    t(0x0040, 0x3001), // Confidentiality Constraint on Patient Data Description
    t(0x0040, 0x4025), // Scheduled Station Name Code Sequence
    t(0x0040, 0x4027), // Scheduled Station Geographic Location Code Sequence
    t(0x0040, 0x4034), // Scheduled Human Performers Sequence
    t(0x0040, 0x4035), // Actual Human Performers Sequence
    t(0x0040, 0x4036), // Human Performer's Organization
    t(0x0040, 0x4037), // Human Performer's Name
    t(0x0040, 0xA073), // Verifying Observer Sequence
    t(0x0040, 0xA075), // Verifying Observer Name
    t(0x0040, 0xA078), // Author Observer Sequence
    t(0x0040, 0xA07A), // Participant Sequence
    t(0x0040, 0xA07C), // Custodial Organization Sequence
    t(0x0040, 0xA088), // Verifying Observer Identification Code Sequence
    t(0x0040, 0xA123), // Person Name
    t(0x0070, 0x0001), // Graphic Annotation Sequence
    t(0x0070, 0x0084), // Content Creator's Name
    t(0x0070, 0x0086), // Content Creator's Identification Code Sequence
    t(0x0088, 0x0200), // Icon Image Sequence
    t(0x0088, 0x0904), // Topic Title
    t(0x0088, 0x0906), // Topic Subject
    t(0x0088, 0x0910), // Topic Author
    t(0x0088, 0x0912), // Topic Keywords
    t(0x0400, 0x0550), // Modified Attributes Sequence
    t(0x0400, 0x0561), // Original Attributes Sequence
    t(0x2030, 0x0020), // Text String
    t(0x4000, 0x0010), // Arbitrary
    t(0x4000, 0x4000), // Text Comments
    t(0x4008, 0x0042), // Results ID Issuer
    t(0x4008, 0x0102), // Interpretation Recorder
    t(0x4008, 0x010A), // Interpretation Transcriber
    t(0x4008, 0x010B), // Interpretation Text
    t(0x4008, 0x010C), // Interpretation Author
    t(0x4008, 0x0111), // Interpretation Approver Sequence
    t(0x4008, 0x0114), // Physician Approving Interpretation
    t(0x4008, 0x0115), // Interpretation Diagnosis Description
    t(0x4008, 0x0118), // Results Distribution List Sequence
    t(0x4008, 0x0119), // Distribution Name
    t(0x4008, 0x011A), // Distribution Address
    t(0x4008, 0x0202), // Interpretation ID Issuer
    t(0x4008, 0x0300), // Impressions
    t(0x4008, 0x4000), // Results Comments
    t(0x6000, 0x4000), // Overlay Comments
    t(0xFFFA, 0xFFFA), // Digital Signatures Sequence
    t(0xFFFC, 0xFFFC), // Data Set Trailing Padding
];

/// Sorted by (group, element).
static UIDS_TO_REPLACE: &[Tag] = &[
    t(0x0002, 0x0003), // Media Storage SOP Instance UID
    t(0x0008, 0x0014), // Instance Creator UID
    t(0x0008, 0x0018), // SOP Instance UID
    t(0x0008, 0x1155), // Referenced SOP Instance UID
    t(0x0008, 0x1195), // Transaction UID
    t(0x0008, 0x3010), // Irradiation Event UID
    t(0x0018, 0x1002), // Device UID
    t(0x0020, 0x000D), // Study Instance UID
    t(0x0020, 0x000E), // Series Instance UID
    t(0x0020, 0x0052), // Frame of Reference UID
    t(0x0020, 0x0200), // Synchronization Frame of Reference UID
    t(0x0020, 0x9161), // Concatenation UID
    t(0x0020, 0x9164), // Dimension Organization UID
    t(0x0070, 0x031A), // Fiducial UID
    t(0x0088, 0x0140), // Storage Media File-set UID
    t(0x3006, 0x0024), // Referenced Frame of Reference UID
    t(0x3006, 0x00C2), // Related Frame of Reference UID
];

/// The PS3.15 Annex E basic profile attributes that import must never store or show (UIDs
/// excepted: see [`uid_tags_to_replace`]).
pub fn identifying_tags() -> &'static [Tag] {
    IDENTIFYING
}

/// UIDs the basic profile replaces (action U): they link a file back to the hospital's archive,
/// so import may keep them only as one-way hashes (for grouping and ordering).
pub fn uid_tags_to_replace() -> &'static [Tag] {
    UIDS_TO_REPLACE
}

/// Whether `tag` is one of [`identifying_tags`], a private attribute, or an overlay comment in any
/// of the repeating overlay groups 6000–601E.
pub fn is_identifying(tag: Tag) -> bool {
    let overlay_comment =
        (0x6000..=0x601E).contains(&tag.0) && tag.0.is_multiple_of(2) && tag.1 == 0x4000;
    overlay_comment || is_private(tag) || IDENTIFYING.binary_search(&tag).is_ok()
}

/// Private attributes (odd group, other than the reserved groups 1, 3, 5, 7 and FFFF) may hold
/// anything, so the basic profile removes them all.
pub fn is_private(tag: Tag) -> bool {
    !tag.0.is_multiple_of(2) && tag.0 > 0x0008 && tag.0 != 0xFFFF
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_are_sorted_and_unique_so_binary_search_is_sound() {
        for table in [IDENTIFYING, UIDS_TO_REPLACE] {
            assert!(table.windows(2).all(|w| w[0] < w[1]), "{table:?}");
        }
    }

    #[test]
    fn patient_name_private_and_overlay_comments_are_identifying_pixel_spacing_is_not() {
        assert!(is_identifying(Tag(0x0010, 0x0010)));
        assert!(is_identifying(Tag(0x0029, 0x1010)));
        assert!(is_identifying(Tag(0x6002, 0x4000)));
        assert!(!is_identifying(Tag(0x0028, 0x0030)));
        assert!(!is_identifying(Tag(0x0020, 0x000E)));
    }
}
