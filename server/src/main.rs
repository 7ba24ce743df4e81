//! `neurorater-server`: the team server alone, for a host that runs nothing else (it links no
//! GUI or model runtime). Two commands (docs/team-server.md), the same as the CLI's
//! `neurorater serve` (docs/formats.md §8) and `neurorater server-import`:
//!
//!     neurorater-server serve --database URL [--listen ADDR] [--trusted-proxy IP]
//!     neurorater-server import --database URL --db STUDY.sqlite --study ID [--lead NAME [--lead-site SITE]]
//!
//! Exit codes as the CLI's: 0 done, 2 invalid input, 1 internal failure.

use server::{ServeOptions, ServerError};
use std::collections::HashMap;
use std::path::Path;
use std::process::ExitCode;

const USAGE: &str =
    "usage: neurorater-server serve --database URL [--listen ADDR] [--trusted-proxy IP]\n       \
    neurorater-server import --database URL --db FILE --study ID [--lead NAME] [--lead-site SITE]";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some((command, options)) = args.split_first() else {
        eprintln!("{USAGE}");
        return ExitCode::from(2);
    };
    let options = match parse(options) {
        Ok(options) => options,
        Err(message) => {
            eprintln!("{message}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    let outcome = match command.as_str() {
        "serve" => serve(&options),
        "import" => import(&options),
        other => Err(Failure::Input(format!("unknown command {other:?}"))),
    };
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(Failure::Input(message)) => {
            eprintln!("{message}");
            ExitCode::from(2)
        }
        Err(Failure::Internal(message)) => {
            eprintln!("neurorater-server: {message}");
            ExitCode::from(1)
        }
    }
}

enum Failure {
    Input(String),
    Internal(String),
}

impl From<ServerError> for Failure {
    fn from(error: ServerError) -> Self {
        if error.is_invalid_input() {
            Failure::Input(error.to_string())
        } else {
            Failure::Internal(error.to_string())
        }
    }
}

/// `--name value` pairs; every option takes a value.
fn parse(options: &[String]) -> Result<HashMap<String, String>, String> {
    let mut parsed = HashMap::new();
    let mut rest = options.iter();
    while let Some(name) = rest.next() {
        let key = name
            .strip_prefix("--")
            .ok_or_else(|| format!("{name:?} is not an option"))?;
        let value = rest.next().ok_or_else(|| format!("{name} needs a value"))?;
        parsed.insert(key.to_owned(), value.clone());
    }
    Ok(parsed)
}

fn required<'a>(options: &'a HashMap<String, String>, name: &str) -> Result<&'a str, Failure> {
    options
        .get(name)
        .map(String::as_str)
        .ok_or_else(|| Failure::Input(format!("--{name} is required")))
}

fn runtime() -> Result<tokio::runtime::Runtime, Failure> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| Failure::Internal(format!("cannot start the async runtime: {e}")))
}

fn serve(options: &HashMap<String, String>) -> Result<(), Failure> {
    let listen = options
        .get("listen")
        .map_or("127.0.0.1:8080", String::as_str)
        .parse()
        .map_err(|e| Failure::Input(format!("--listen: {e}")))?;
    let database = required(options, "database")?.to_owned();
    let trusted_proxy = options
        .get("trusted-proxy")
        .map(|ip| ip.parse())
        .transpose()
        .map_err(|e| Failure::Input(format!("--trusted-proxy: {e}")))?;
    runtime()?.block_on(server::serve(ServeOptions {
        database,
        listen,
        trusted_proxy,
    }))?;
    Ok(())
}

fn import(options: &HashMap<String, String>) -> Result<(), Failure> {
    let site = options.get("lead-site").map_or("", String::as_str);
    let lead = options.get("lead").map(|name| (name.as_str(), site));
    let report = server::import_local_study(
        required(options, "database")?,
        Path::new(required(options, "db")?),
        required(options, "study")?,
        lead,
    )?;
    println!(
        "{}",
        serde_json::to_string_pretty(&report).expect("the report serialises")
    );
    Ok(())
}
