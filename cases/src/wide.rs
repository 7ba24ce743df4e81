//! 64-bit integers that can exceed 2^53 (seeds drawn from all 64 bits, or typed by whoever makes a
//! plan) as they cross the desktop app's IPC: a decimal string. A JavaScript number holds an
//! integer exactly only up to 2^53, so such a value sent as a number was shown, and sent back,
//! rounded (a split seed 270356507372703094 shown as 270356507372703100, issue 41 finding 5).
//!
//! A field says so with `#[serde(with = "crate::wide::u64_string")]` (or `option_u64_string`,
//! `i64_string`) and `#[cfg_attr(feature = "specta", specta(type = String))]` (`Option<String>`):
//! serde writes it as a string and reads it only as a string (a number would already have been
//! rounded by whoever sent it, so it is refused rather than trusted), and the generated TypeScript
//! types it `string`. Store keys and counts stay numbers: SQLite's rowids and counts of a study's
//! rows never come near 2^53.

use serde::{de::Error as _, Deserialize, Deserializer, Serializer};

fn parse<'de, D: Deserializer<'de>, T: std::str::FromStr>(deserializer: D) -> Result<T, D::Error>
where
    T::Err: std::fmt::Display,
{
    let text = String::deserialize(deserializer)?;
    text.parse::<T>().map_err(|e| {
        D::Error::custom(format!(
            "{text:?} is not a whole number in range, as a decimal string: {e}"
        ))
    })
}

/// A `u64` as a decimal string.
pub mod u64_string {
    use super::*;

    pub fn serialize<S: Serializer>(value: &u64, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(value)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<u64, D::Error> {
        parse(deserializer)
    }
}

/// An `i64` as a decimal string.
pub mod i64_string {
    use super::*;

    pub fn serialize<S: Serializer>(value: &i64, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(value)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<i64, D::Error> {
        parse(deserializer)
    }
}

/// An optional `u64` as a decimal string or `null`.
pub mod option_u64_string {
    use super::*;

    pub fn serialize<S: Serializer>(value: &Option<u64>, serializer: S) -> Result<S::Ok, S::Error> {
        match value {
            Some(v) => serializer.collect_str(v),
            None => serializer.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Option<u64>, D::Error> {
        Option::<String>::deserialize(deserializer)?
            .map(|text| {
                text.parse::<u64>().map_err(|e| {
                    D::Error::custom(format!(
                        "{text:?} is not a whole number in range, as a decimal string: {e}"
                    ))
                })
            })
            .transpose()
    }
}

#[cfg(test)]
mod tests {
    use serde::{Deserialize, Serialize};

    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    struct Wide {
        #[serde(with = "super::u64_string")]
        unsigned: u64,
        #[serde(with = "super::i64_string")]
        signed: i64,
        #[serde(with = "super::option_u64_string", default)]
        maybe: Option<u64>,
    }

    #[test]
    fn the_largest_values_round_trip_through_json_exactly() {
        let max = (1u64 << 63) - 1;
        let wide = Wide {
            unsigned: max,
            signed: i64::MAX,
            maybe: Some(u64::MAX),
        };
        let json = serde_json::to_string(&wide).unwrap();
        assert_eq!(
            json,
            r#"{"unsigned":"9223372036854775807","signed":"9223372036854775807","maybe":"18446744073709551615"}"#
        );
        assert_eq!(serde_json::from_str::<Wide>(&json).unwrap(), wide);
        let none = r#"{"unsigned":"0","signed":"-9223372036854775808","maybe":null}"#;
        let read: Wide = serde_json::from_str(none).unwrap();
        assert_eq!((read.signed, read.maybe), (i64::MIN, None));
    }

    #[test]
    fn a_number_or_a_string_out_of_range_is_refused_not_rounded() {
        for bad in [
            r#"{"unsigned":9223372036854775807,"signed":"1"}"#,
            r#"{"unsigned":"18446744073709551616","signed":"1"}"#,
            r#"{"unsigned":"-1","signed":"1"}"#,
            r#"{"unsigned":"1","signed":"1.5"}"#,
        ] {
            assert!(serde_json::from_str::<Wide>(bad).is_err(), "{bad}");
        }
    }
}
