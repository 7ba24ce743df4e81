//! The pseudonymous code a blinded reader sees in place of a case's id.
//!
//! A case id may name the diagnosis (the demo's `ms-01`, a site's `glioma-017`): whatever a
//! blinded reader is handed — the reading item, the case list, a rater package's member names
//! and contents, the team server's item — names each case by its code instead. The code is a
//! keyed hash of the id under a secret the study keeps (a local study's `study_secrets` row, a
//! team server study's `case_code_secret`), so it is stable for the study and every reader of it,
//! and says nothing without the secret. Only the study lead's and a curator's views, which are
//! not blinded, show ids.

use sha2::{Digest, Sha256};

/// Hex digits of a case code: 40 bits, far from colliding among a study's few hundred cases.
const CODE_HEX_DIGITS: usize = 10;

/// A study's case codes: the secret they are keyed with, or none where the study's cases are
/// known here by their codes already (a rater's copy from a rater package: coding them again
/// would show the rater another name than the lead's item and package give the case).
#[derive(Clone)]
pub struct CaseCodes {
    secret: Option<Vec<u8>>,
}

impl std::fmt::Debug for CaseCodes {
    /// The secret is never printed: with it, a code could be traced back to its case.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("CaseCodes(..)")
    }
}

impl CaseCodes {
    pub fn new(secret: Vec<u8>) -> CaseCodes {
        CaseCodes {
            secret: Some(secret),
        }
    }

    /// The codes of a study whose cases are stored under their codes already.
    pub fn already_coded() -> CaseCodes {
        CaseCodes { secret: None }
    }

    /// The code a blinded reader sees for `case_id`.
    pub fn code(&self, case_id: &str) -> String {
        let Some(secret) = &self.secret else {
            return case_id.to_owned();
        };
        let digest = Sha256::new()
            .chain_update(secret)
            .chain_update(case_id.as_bytes())
            .finalize();
        let hex = crate::digest::hex(&digest);
        format!("case-{}", &hex[..CODE_HEX_DIGITS])
    }

    /// Whether `case` names `case_id`, by its id or by its code.
    pub fn names(&self, case: &str, case_id: &str) -> bool {
        case == case_id || self.code(case_id) == case
    }
}

#[cfg(test)]
mod tests {
    use super::CaseCodes;

    #[test]
    fn a_code_is_stable_keyed_and_says_nothing_of_the_id() {
        let codes = CaseCodes::new(b"one study's secret".to_vec());
        let code = codes.code("ms-01");
        assert_eq!(code, codes.code("ms-01"));
        assert!(code.starts_with("case-") && code.len() == 15, "{code}");
        assert!(!code.contains("ms"), "{code}");
        assert_ne!(code, codes.code("ms-02"));
        assert_ne!(
            code,
            CaseCodes::new(b"another study".to_vec()).code("ms-01")
        );
        assert!(codes.names(&code, "ms-01") && codes.names("ms-01", "ms-01"));
        assert!(!codes.names(&code, "ms-02"));
        assert_eq!(format!("{codes:?}"), "CaseCodes(..)");
        assert_eq!(CaseCodes::already_coded().code(&code), code);
    }
}
