//! The PHI corpus shared by `tests/phi.rs` and the real-window test (through the `phi_bundle`
//! example): the small bundle's slices rewritten with a marker in every PS3.15 basic-profile
//! attribute that a text, date, time or UID value can fill.

use cases::imaging::{identifying_tags, uid_tags_to_replace};
use dicom_core::dictionary::{DataDictionary, DataDictionaryEntry, VirtualVr};
use dicom_core::{DataElement, PrimitiveValue, Tag, VR};
use dicom_dictionary_std::StandardDataDictionary;
use std::path::Path;

use crate::{slice_file, Slice};

/// A marker for `tag` that its VR can hold, or `None` for VRs this test does not fill.
fn marker(tag: Tag, vr: VR, index: usize) -> Option<String> {
    let hex = format!("{:04X}{:04X}", tag.0, tag.1);
    Some(match vr {
        VR::PN => format!("ZZPHI{hex}^MARK"),
        VR::AE | VR::CS | VR::SH => format!("ZZPHI{hex}"),
        VR::LO | VR::LT | VR::ST | VR::UT | VR::UC => format!("ZZPHI {hex} marker text"),
        // Dates and times in 1901, a year no fixture, clock or demo uses.
        VR::DA => format!("1901{:02}{:02}", 1 + index % 12, 1 + index % 28),
        VR::DT => format!("1901{:02}{:02}123456", 1 + index % 12, 1 + index % 28),
        VR::TM => format!("1234{:02}.9{:05}", index % 60, index),
        VR::AS => "077Y".to_owned(),
        VR::UI => format!("2.25.9{index:06}1901"),
        _ => return None,
    })
}

fn exact_vr(tag: Tag) -> Option<VR> {
    match StandardDataDictionary.by_tag(tag)?.vr() {
        VirtualVr::Exact(vr) => Some(vr),
        _ => None,
    }
}

/// Writes the four slices of the small bundle again with every marker planted; returns the
/// markers (the same in every slice, UIDs excepted, which stay unique per file).
pub fn plant_identifiers(bundle: &Path) -> Vec<String> {
    let flair = bundle.join("cases/ms-01/flair");
    let mut planted = Vec::new();
    for (file_index, (name, z, instance)) in [
        ("a.dcm", 9.0, 4),
        ("b.dcm", 6.0, 3),
        ("c.dcm", 3.0, 2),
        ("d.dcm", 0.0, 1),
    ]
    .into_iter()
    .enumerate()
    {
        let sop_uid = format!("2.25.3000{instance}");
        let mut file = slice_file(&Slice {
            series_uid: "2.25.2000",
            sop_uid: &sop_uid,
            instance_number: instance,
            z,
            rows: 8,
            columns: 8,
            value: 100 * instance as u16,
            identified: false,
        });
        for (index, &tag) in identifying_tags().iter().enumerate() {
            let Some(vr) = exact_vr(tag) else { continue };
            let Some(value) = marker(tag, vr, index) else {
                continue;
            };
            file.put(DataElement::new(
                tag,
                vr,
                PrimitiveValue::from(value.as_str()),
            ));
            if file_index == 0 {
                planted.push(value);
            }
        }
        // Series and SOP instance UIDs must keep grouping the slices: each file gets its own
        // marker for the other replaced UIDs, and the real ones are themselves markers.
        for (index, &tag) in uid_tags_to_replace().iter().enumerate() {
            if [
                dicom_dictionary_std::tags::SERIES_INSTANCE_UID,
                dicom_dictionary_std::tags::SOP_INSTANCE_UID,
            ]
            .contains(&tag)
            {
                continue;
            }
            let value = format!("2.25.8{file_index}{index:05}1901");
            file.put(DataElement::new(
                tag,
                VR::UI,
                PrimitiveValue::from(value.as_str()),
            ));
            planted.push(value);
        }
        planted.push(sop_uid);
        file.write_to_file(flair.join(name)).unwrap();
    }
    planted.push("2.25.2000".to_owned());
    planted
}
