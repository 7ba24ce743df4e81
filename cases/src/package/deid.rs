//! Images leave the lead's site rewritten under the PS3.15 basic profile: the bundle's DICOM files
//! may still carry names, dates and UIDs (import never stores them, but it does not rewrite the
//! files), and a rater package must carry none.
//!
//! Identifying and private attributes are removed at every sequence depth; each UID the profile
//! replaces gets `2.25.<128 bits of SHA-256(package id, original UID)>`, so a series' files keep
//! one series UID (the bundle loader groups by it) while nobody can map it back without the
//! package id, and two packages never share a UID.

use crate::imaging::{is_identifying, uid_tags_to_replace};
use crate::{Error, Result};
use dicom_core::value::Value;
use dicom_core::{DataElement, PrimitiveValue, Tag, VR};
use dicom_object::{open_file, InMemDicomObject};
use sha2::{Digest, Sha256};
use std::path::Path;

/// The file at `path` de-identified, as the bytes of a DICOM Part 10 file.
pub(super) fn deidentified_dicom(path: &Path, package_id: &str) -> Result<Vec<u8>> {
    let unreadable = |message: String| Error::Io {
        path: path.to_path_buf(),
        source: std::io::Error::new(std::io::ErrorKind::InvalidData, message),
    };
    let mut object = open_file(path).map_err(|e| unreadable(format!("reading DICOM: {e}")))?;
    clean(&mut object, package_id);
    let sop = replacement_uid(package_id, object.meta().media_storage_sop_instance_uid());
    let meta = object.meta_mut();
    meta.media_storage_sop_instance_uid = sop;
    // Who wrote the file (implementation class UID and version name) is kept: it names software,
    // not a patient or a site.
    meta.source_application_entity_title = None;
    meta.sending_application_entity_title = None;
    meta.receiving_application_entity_title = None;
    meta.private_information_creator_uid = None;
    meta.private_information = None;
    meta.update_information_group_length();
    let mut bytes = Vec::new();
    object
        .write_all(&mut bytes)
        .map_err(|e| unreadable(format!("writing the de-identified copy: {e}")))?;
    Ok(bytes)
}

fn clean(object: &mut InMemDicomObject, package_id: &str) {
    let tags: Vec<Tag> = object.iter().map(|e| e.header().tag).collect();
    for tag in tags {
        if is_identifying(tag) {
            object.remove_element(tag);
        } else if uid_tags_to_replace().contains(&tag) {
            let original = object
                .element(tag)
                .ok()
                .and_then(|e| e.to_str().ok())
                .map(|s| s.trim_end_matches(['\0', ' ']).to_owned())
                .unwrap_or_default();
            object.put(DataElement::new(
                tag,
                VR::UI,
                PrimitiveValue::from(replacement_uid(package_id, &original)),
            ));
        } else {
            object.update_value(tag, |value| {
                if let Value::Sequence(sequence) = value {
                    for item in sequence.items_mut().iter_mut() {
                        clean(item, package_id);
                    }
                }
            });
        }
    }
}

/// `2.25.` and a 128-bit decimal: the UUID-derived UID form of PS3.5 B.2 (at most 44 characters).
fn replacement_uid(package_id: &str, original: &str) -> String {
    let original = original.trim_end_matches(['\0', ' ']);
    let digest = Sha256::new()
        .chain_update(package_id.as_bytes())
        .chain_update([0u8])
        .chain_update(original.as_bytes())
        .finalize();
    let mut high = [0u8; 16];
    high.copy_from_slice(&digest[..16]);
    format!("2.25.{}", u128::from_be_bytes(high))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replacement_uids_are_valid_stable_and_differ_between_packages() {
        let a = replacement_uid("p1", "1.2.840.113619.2.55.3");
        assert_eq!(a, replacement_uid("p1", "1.2.840.113619.2.55.3\0"));
        assert_ne!(a, replacement_uid("p2", "1.2.840.113619.2.55.3"));
        assert!(a.len() <= 64 && a.starts_with("2.25."));
        assert!(a[5..].chars().all(|c| c.is_ascii_digit()) && !a[5..].starts_with('0'));
    }
}
