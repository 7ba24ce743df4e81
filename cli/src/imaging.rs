//! `probe` and `render`: image facts and docs/formats.md §4 renderings, many files in one process.

use crate::data::to_json;
use crate::Failure;
use clap::Args;
use imaging::{self, RenderOptions};
use rayon::prelude::*;
use std::collections::HashSet;
use std::path::{Path, PathBuf};

pub fn probe(file: &Path) -> Result<(), Failure> {
    let facts = imaging::probe(file).map_err(|e| Failure::Input(vec![e.to_string()]))?;
    say!("{}", to_json(&facts)?);
    Ok(())
}

#[derive(Args)]
pub struct RenderArgs {
    /// DICOM or NIfTI files.
    #[arg(required = true)]
    files: Vec<PathBuf>,
    /// Frame (DICOM) or axial slice (NIfTI), from 0.
    #[arg(long)]
    frame: Option<u32>,
    /// Window centre and width, e.g. `40,80`.
    #[arg(long, value_parser = parse_window, allow_hyphen_values = true)]
    window: Option<(f64, f64)>,
    /// The PNG to write (one input file).
    #[arg(long, conflicts_with = "out_dir")]
    out: Option<PathBuf>,
    /// Where to write `<input name>.png` for each input.
    #[arg(long)]
    out_dir: Option<PathBuf>,
}

fn parse_window(text: &str) -> Result<(f64, f64), String> {
    let (center, width) = text
        .split_once(',')
        .ok_or("give the window as CENTER,WIDTH, e.g. 40,80")?;
    let center: f64 = center
        .trim()
        .parse()
        .map_err(|_| format!("{center:?} is not a number"))?;
    let width: f64 = width
        .trim()
        .parse()
        .map_err(|_| format!("{width:?} is not a number"))?;
    if !(center.is_finite() && width.is_finite() && width >= 1.0) {
        return Err("the window needs a finite centre and a width of at least 1".into());
    }
    Ok((center, width))
}

pub fn render(args: &RenderArgs) -> Result<(), Failure> {
    let options = RenderOptions {
        frame: args.frame,
        window: args.window,
    };
    let targets: Vec<(PathBuf, PathBuf)> = match (&args.out, &args.out_dir) {
        (Some(out), None) if args.files.len() == 1 => vec![(args.files[0].clone(), out.clone())],
        (Some(_), None) => {
            return Err(Failure::Input(vec![
                "--out takes one input file; use --out-dir for several".into(),
            ]))
        }
        (None, Some(dir)) => {
            std::fs::create_dir_all(dir)
                .map_err(|e| Failure::Internal(format!("{}: cannot create: {e}", dir.display())))?;
            let mut names = HashSet::new();
            let mut targets = Vec::new();
            for file in &args.files {
                let name = file
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default();
                if !names.insert(name.clone()) {
                    return Err(Failure::Input(vec![format!(
                        "{}: another input has the same file name {name:?}; render them into different --out-dir folders",
                        file.display()
                    )]));
                }
                targets.push((file.clone(), dir.join(format!("{name}.png"))));
            }
            targets
        }
        _ => {
            return Err(Failure::Input(vec![
                "give --out FILE.png or --out-dir DIR".into()
            ]))
        }
    };
    let failures: Vec<String> = targets
        .par_iter()
        .filter_map(|(input, output)| {
            let png = match imaging::render_png(input, &options) {
                Ok(png) => png,
                Err(e) => return Some(e.to_string()),
            };
            std::fs::write(output, png)
                .err()
                .map(|e| format!("{}: cannot write: {e}", output.display()))
        })
        .collect();
    if failures.is_empty() {
        Ok(())
    } else {
        Err(Failure::Input(failures))
    }
}
