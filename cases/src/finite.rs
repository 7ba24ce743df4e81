//! How a float that is finite by construction crosses the desktop app's IPC: as a TypeScript
//! `number`. specta types every `f64` `number | null`, because serde_json writes NaN and ±∞ as
//! `null`. A value parsed from JSON (which has neither), read from SQLite (which stores NaN as
//! NULL) or admitted by the rating rules is finite and never arrives as `null`, so its field
//! says so: `#[cfg_attr(feature = "specta", specta(type = Finite))]` (or `Option<Finite>`,
//! `Vec<[Finite; 3]>`, …, the field's own shape). A float computed at run time (a statistic, a
//! rate, a time left) can be NaN or ∞ and keeps `f64`'s `number | null`.

/// A finite `f64` in the generated TypeScript: `number`.
pub struct Finite;

impl specta::Type for Finite {
    fn definition(types: &mut specta::Types) -> specta::datatype::DataType {
        // A JSON number and nothing else: specta renders its 32-bit integer as `number` alone.
        <i32 as specta::Type>::definition(types)
    }
}
