//! The TypeScript side of the IPC contract, `ui/src/bindings.ts`, generated from the commands in
//! `commands/*.rs` (the list `build.rs` derives) and the types they take and return (tauri-specta). It is committed so the
//! UI builds without Rust; `tests::committed_bindings_are_current` fails when it is stale.
//! Regenerate it with
//!
//! ```sh
//! NEURORATER_WRITE_BINDINGS=1 cargo test --workspace --lib bindings
//! ```

use std::path::{Path, PathBuf};

/// The file the UI imports (`ui/src/backend.ts` wraps it).
pub fn committed_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../ui/src/bindings.ts")
}

/// The first lines of the file: what it is and how to remake it, for whoever opens it.
const HEADER: &str = "// Generated from the Rust commands (src-tauri/src/commands/*.rs) by tauri-specta: do not edit.\n\
// Regenerate: NEURORATER_WRITE_BINDINGS=1 cargo test --workspace --lib bindings\n\
/* eslint-disable */";

/// The bindings as the commands describe them now.
pub fn generate() -> Result<String, String> {
    // tauri-specta writes to a path only; a scratch file per process keeps parallel test runs
    // (and other checkouts on the machine) apart.
    let scratch = std::env::temp_dir().join(format!(
        "neurorater-bindings-{}-{:?}.ts",
        std::process::id(),
        std::thread::current().id()
    ));
    let exported = crate::ipc::<tauri::Wry>()
        .export(
            specta_typescript::Typescript::default().header(HEADER),
            &scratch,
        )
        .map_err(|e| format!("generating the TypeScript bindings: {e}"));
    let text = exported.and_then(|()| {
        std::fs::read_to_string(&scratch)
            .map_err(|e| format!("reading the generated bindings {}: {e}", scratch.display()))
    });
    let _ = std::fs::remove_file(&scratch);
    text
}

#[cfg(test)]
mod tests {
    use super::{committed_path, generate};

    #[test]
    fn committed_bindings_are_current() {
        let generated = generate().unwrap_or_else(|e| panic!("{e}"));
        let path = committed_path();
        if std::env::var_os("NEURORATER_WRITE_BINDINGS").is_some() {
            std::fs::write(&path, &generated)
                .unwrap_or_else(|e| panic!("writing {}: {e}", path.display()));
            return;
        }
        let committed = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            committed == generated,
            "{} is not what the commands generate; a command or a type crossing IPC changed. \
             Regenerate it with `NEURORATER_WRITE_BINDINGS=1 cargo test --workspace --lib \
             bindings` and commit it.",
            path.display()
        );
    }
}
