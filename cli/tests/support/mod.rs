//! What every CLI contract test needs: the real binary, run without the user's database, and a
//! file's digest to show a refused command wrote nothing.

use sha2::{Digest, Sha256};
use std::path::Path;
use std::process::{Command, Output};

pub fn neurorater(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_neurorater"))
        .args(args)
        .env_remove("NEURORATER_DB")
        .output()
        .expect("run neurorater")
}

pub fn digest(path: &Path) -> String {
    format!("{:x}", Sha256::digest(std::fs::read(path).unwrap()))
}
