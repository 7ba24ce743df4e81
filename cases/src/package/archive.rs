//! The package container: one uncompressed POSIX tar file whose last member is `manifest.json`,
//! listing every other member with its size and SHA-256.
//!
//! The manifest comes last so that a package is written in one pass (an image's digest is known
//! only once it is de-identified). A reader therefore hashes every member while it streams it to
//! its caller and compares with the manifest at the end; the caller keeps what it read somewhere
//! it can throw away (a staging directory, memory) until [`read`] returns `Ok`.
//!
//! Only regular files with plain relative names are accepted (`a-z A-Z 0-9 . _ -` and `/`, no
//! `.`/`..` component): a package cannot point outside itself, link anywhere or hide a device.

use super::{Manifest, MANIFEST};
use crate::bundle::Problem;
use crate::{Error, Result};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::fs::File;
use std::io::{self, BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};

/// The manifest is a list of names and digests; more than this is not a manifest.
const MAX_MANIFEST_BYTES: u64 = 64 << 20;
const MAX_MEMBER_NAME: usize = 255;

pub(crate) use crate::digest::sha256_hex;

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Member {
    pub path: String,
    pub bytes: u64,
    pub sha256: String,
}

/// Writes members one by one to `<out>.partial`; [`PackageWriter::finish`] appends the manifest
/// and renames the file into place, so a crash never leaves a file that looks complete.
pub(crate) struct PackageWriter {
    builder: tar::Builder<BufWriter<File>>,
    members: Vec<Member>,
    partial: PathBuf,
    out: PathBuf,
}

fn io_error(path: &Path) -> impl Fn(io::Error) -> Error + '_ {
    move |source| Error::Io {
        path: path.to_path_buf(),
        source,
    }
}

impl PackageWriter {
    pub(crate) fn create(out: &Path) -> Result<PackageWriter> {
        let mut partial = out.as_os_str().to_owned();
        partial.push(".partial");
        let partial = PathBuf::from(partial);
        let file = File::create(&partial).map_err(io_error(&partial))?;
        Ok(PackageWriter {
            builder: tar::Builder::new(BufWriter::new(file)),
            members: Vec::new(),
            partial,
            out: out.to_path_buf(),
        })
    }

    pub(crate) fn add(&mut self, path: &str, bytes: &[u8]) -> Result<()> {
        debug_assert!(check_name(path).is_ok(), "{path}");
        let mut header = tar::Header::new_ustar();
        header.set_size(bytes.len() as u64);
        header.set_mode(0o600);
        header.set_entry_type(tar::EntryType::Regular);
        // No timestamps in members: the manifest's created_at is the package's one date.
        header.set_mtime(0);
        self.builder
            .append_data(&mut header, path, bytes)
            .map_err(io_error(&self.partial))?;
        self.members.push(Member {
            path: path.to_owned(),
            bytes: bytes.len() as u64,
            sha256: sha256_hex(bytes),
        });
        Ok(())
    }

    /// Appends the manifest (its `members` filled in) and moves the file into place.
    pub(crate) fn finish(mut self, mut manifest: Manifest) -> Result<Vec<Member>> {
        manifest.members = std::mem::take(&mut self.members);
        let text = serde_json::to_vec_pretty(&manifest).expect("a manifest serialises");
        let mut header = tar::Header::new_ustar();
        header.set_size(text.len() as u64);
        header.set_mode(0o600);
        header.set_entry_type(tar::EntryType::Regular);
        header.set_mtime(0);
        self.builder
            .append_data(&mut header, MANIFEST, text.as_slice())
            .map_err(io_error(&self.partial))?;
        let mut writer = self.builder.into_inner().map_err(io_error(&self.partial))?;
        writer.flush().map_err(io_error(&self.partial))?;
        writer
            .get_ref()
            .sync_all()
            .map_err(io_error(&self.partial))?;
        drop(writer);
        std::fs::rename(&self.partial, &self.out).map_err(io_error(&self.out))?;
        Ok(manifest.members)
    }

    /// Removes the partial file after a failure.
    pub(crate) fn abandon(self) {
        let partial = self.partial.clone();
        drop(self);
        let _ = std::fs::remove_file(partial);
    }
}

/// A member name the package format admits.
pub(crate) fn check_name(name: &str) -> std::result::Result<(), String> {
    if name.is_empty() || name.len() > MAX_MEMBER_NAME {
        return Err(format!(
            "a member name has 1 to {MAX_MEMBER_NAME} bytes, this one {}",
            name.len()
        ));
    }
    for component in name.split('/') {
        if component.is_empty() || component == "." || component == ".." {
            return Err("a member name may not be absolute, contain `//`, `.` or `..`".into());
        }
        if !component
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
        {
            return Err(format!(
                "{component:?}: member names use only letters, digits, `.`, `_`, `-` and `/`"
            ));
        }
    }
    Ok(())
}

fn problem(member: &str, field: &str, message: impl Into<String>) -> Problem {
    Problem {
        file: member.to_owned(),
        line: None,
        field: field.to_owned(),
        message: message.into(),
    }
}

struct Hashing<R> {
    inner: R,
    hasher: Sha256,
    bytes: u64,
}

impl<R: Read> Read for Hashing<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.hasher.update(&buf[..n]);
        self.bytes += n as u64;
        Ok(n)
    }
}

/// Reads the package at `path`: every member but the manifest goes to `take(name, reader)` (which
/// may stop early; the rest is hashed anyway), then the manifest is parsed and every member
/// checked against it. Any problem refuses the whole package, naming the member.
pub(crate) fn read(
    path: &Path,
    mut take: impl FnMut(&str, &mut dyn Read) -> Result<()>,
) -> Result<Manifest> {
    let refuse = |problems: Vec<Problem>| Error::Package {
        package: path.to_path_buf(),
        problems,
    };
    let file = File::open(path).map_err(io_error(path))?;
    let mut archive = tar::Archive::new(BufReader::new(file));
    let entries = archive.entries().map_err(|e| {
        refuse(vec![problem(
            "-",
            "-",
            format!("not a package (a tar file): {e}"),
        )])
    })?;
    let mut seen: BTreeMap<String, Member> = BTreeMap::new();
    let mut manifest_text: Option<Vec<u8>> = None;
    for entry in entries {
        let mut entry = entry.map_err(|e| {
            refuse(vec![problem(
                "-",
                "-",
                format!("the tar structure is damaged: {e}"),
            )])
        })?;
        let name = String::from_utf8_lossy(&entry.path_bytes()).into_owned();
        if manifest_text.is_some() {
            return Err(refuse(vec![problem(
                &name,
                "-",
                format!("{MANIFEST} must be the last member of a package"),
            )]));
        }
        check_name(&name).map_err(|m| refuse(vec![problem(&name, "-", m)]))?;
        if !entry.header().entry_type().is_file() {
            return Err(refuse(vec![problem(
                &name,
                "-",
                "not a regular file (links, directories and devices are refused)",
            )]));
        }
        if seen.contains_key(&name) {
            return Err(refuse(vec![problem(
                &name,
                "-",
                "appears twice in the package",
            )]));
        }
        if name == MANIFEST {
            if entry.size() > MAX_MANIFEST_BYTES {
                return Err(refuse(vec![problem(
                    &name,
                    "-",
                    format!("larger than {MAX_MANIFEST_BYTES} bytes"),
                )]));
            }
            let mut text = Vec::new();
            entry
                .read_to_end(&mut text)
                .map_err(|e| refuse(vec![problem(&name, "-", format!("unreadable: {e}"))]))?;
            manifest_text = Some(text);
            continue;
        }
        let mut hashing = Hashing {
            inner: &mut entry,
            hasher: Sha256::new(),
            bytes: 0,
        };
        take(&name, &mut hashing)?;
        io::copy(&mut hashing, &mut io::sink())
            .map_err(|e| refuse(vec![problem(&name, "-", format!("unreadable: {e}"))]))?;
        let member = Member {
            path: name.clone(),
            bytes: hashing.bytes,
            sha256: format!("{:x}", hashing.hasher.finalize()),
        };
        seen.insert(name, member);
    }
    let text = manifest_text.ok_or_else(|| {
        refuse(vec![problem(
            MANIFEST,
            "-",
            "missing: this file is not a NeuroRater package, or it was cut short",
        )])
    })?;
    let manifest = parse_manifest(&text).map_err(|p| refuse(vec![p]))?;
    let mut problems = Vec::new();
    let mut listed = BTreeMap::new();
    for (index, member) in manifest.members.iter().enumerate() {
        listed.insert(member.path.as_str(), index);
        match seen.get(&member.path) {
            None => problems.push(problem(
                &member.path,
                "-",
                format!("listed in {MANIFEST} (members[{index}]) but not in the package"),
            )),
            Some(found) if found.sha256 != member.sha256 || found.bytes != member.bytes => problems
                .push(problem(
                    &member.path,
                    "sha256",
                    format!(
                        "the member's content ({} bytes, sha256 {}) differs from {MANIFEST} ({} \
                         bytes, sha256 {}): the package was damaged on the way; ask for it again",
                        found.bytes, found.sha256, member.bytes, member.sha256
                    ),
                )),
            Some(_) => {}
        }
    }
    for name in seen.keys() {
        if !listed.contains_key(name.as_str()) {
            problems.push(problem(
                name,
                "-",
                format!("in the package but not listed in {MANIFEST}"),
            ));
        }
    }
    if problems.is_empty() {
        Ok(manifest)
    } else {
        Err(refuse(problems))
    }
}

fn parse_manifest(text: &[u8]) -> std::result::Result<Manifest, Problem> {
    let mut deserializer = serde_json::Deserializer::from_slice(text);
    serde_path_to_error::deserialize(&mut deserializer).map_err(|e| {
        let field = e.path().to_string();
        let inner = e.into_inner();
        Problem {
            file: MANIFEST.to_owned(),
            line: Some(inner.line()),
            field: if field == "." { "-".into() } else { field },
            message: inner.to_string(),
        }
    })
}
