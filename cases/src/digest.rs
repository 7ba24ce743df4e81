//! Content digests as the store, bundles and packages write them: lower-case hex SHA-256. A leaf
//! module, so that `bundle` (which needs no database) and `store` share it without one reaching
//! into the other.

use sha2::{Digest, Sha256};

/// Lower-case hex of `bytes`.
pub(crate) fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Lower-case hex SHA-256 of `bytes`.
pub(crate) fn sha256_hex(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}
