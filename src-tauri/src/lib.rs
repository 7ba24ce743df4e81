//! NeuroRater's desktop app: a Tauri shell over the `cases` crate. `run()` is what the binary
//! calls; `build_app` takes any runtime so tests can drive the app with a mock runtime.

pub mod bindings;
pub mod commands;
pub mod curation_versions;
pub mod error;
pub mod ground_truth_reveal;
pub mod long_work;
pub mod startup;
pub mod state;
pub mod validate;

use std::ffi::OsString;
use std::path::PathBuf;

use state::AppState;
use tauri::{App, Builder, Context, Runtime};

/// The app's IPC surface from the one list `build.rs` derives from the `#[tauri::command]` fns of
/// `commands/*.rs`: the invoke handler, and the TypeScript bindings generated from the same
/// commands (`ui/src/bindings.ts`, checked by `bindings::tests`). A failed command throws its `CommandError` in the bindings, as `invoke`
/// does; ids and counts are plain numbers (every integer crossing IPC is a store key or a count,
/// far below 2^53, and a key is a `cases::ids::Key`, refused below 1).
pub fn ipc<R: Runtime>() -> tauri_specta::Builder<R> {
    macro_rules! app_commands {
        ($($module:ident :: $command:ident $(::<$runtime:path>)?),* $(,)?) => {
            tauri_specta::collect_commands![$(commands::$module::$command $(::<$runtime>)?),*]
        };
    }
    tauri_specta::Builder::<R>::new()
        .commands(include!(concat!(env!("OUT_DIR"), "/app_commands.rs")))
        // An event's payload crosses IPC without a command returning it.
        .typ::<commands::team::TeamNews>()
        .error_handling(tauri_specta::ErrorHandlingMode::Throw)
        .dangerously_cast_bigints_to_number()
}

/// Registers state, commands and the first-start work on `builder`. `database` is the file named
/// by `--db`, or `None` for `Store::default_path` (`$NEURORATER_DB`, else the user's data folder);
/// `server` the team server named by `--server`, offered at the login.
pub fn build_app<R: Runtime>(
    builder: Builder<R>,
    context: Context<R>,
    database: Option<PathBuf>,
    server: Option<teamclient::ServerUrl>,
) -> tauri::Result<App<R>> {
    let seed_demo = server.is_none();
    builder
        .manage(AppState::default())
        .manage(commands::team::LaunchServer(server))
        .manage(commands::team::TeamState::default())
        .manage(cases::app::series::VolumeCache::default())
        .manage(commands::calibration::CalibrationState::default())
        .manage(commands::workbench::ActiveRun::default())
        .manage(commands::metrics::ActiveMetrics::default())
        .manage(commands::new_study::NewStudyState::default())
        .manage(commands::package::PackageWork::default())
        .plugin(tauri_plugin_dialog::init())
        .invoke_handler(ipc().invoke_handler())
        .setup(move |app| {
            let handle = app.handle().clone();
            std::thread::Builder::new()
                .name("prepare-library".into())
                .spawn(move || startup::prepare_library(handle, database, seed_demo))?;
            Ok(())
        })
        .build(context)
}

pub fn run() {
    let (database, server) = match launch_arguments(std::env::args_os().skip(1)) {
        Ok(Launch::Open { database, server }) => (database, server),
        Ok(Launch::Version) => {
            // What an installed package is checked by, and what a clinician quotes in a report.
            println!("NeuroRater {}", env!("CARGO_PKG_VERSION"));
            return;
        }
        Err(message) => {
            eprintln!("NeuroRater could not start: {message}");
            std::process::exit(2);
        }
    };
    let app = build_app(
        tauri::Builder::default(),
        tauri::generate_context!(),
        database,
        server,
    )
    .unwrap_or_else(|e| {
        eprintln!("NeuroRater could not start: {e}");
        std::process::exit(1);
    });
    app.run(|_, _| {});
}

/// What the command line asks of the app.
#[derive(Debug, PartialEq)]
enum Launch {
    Open {
        database: Option<PathBuf>,
        server: Option<teamclient::ServerUrl>,
    },
    Version,
}

/// `--db PATH`, as the CLI takes it (a study lead keeps a database per study; the end-to-end tests
/// give each scenario its own), `--server URL` (a team server, docs/team-server.md: the window
/// opens on its login), and `--version`.
fn launch_arguments(mut args: impl Iterator<Item = OsString>) -> Result<Launch, String> {
    let mut database = None;
    let mut server = None;
    while let Some(arg) = args.next() {
        match arg.to_str() {
            Some("--version") => return Ok(Launch::Version),
            Some("--db") => match args.next() {
                Some(path) if !path.is_empty() => database = Some(PathBuf::from(path)),
                _ => return Err("--db needs the path of a database file".into()),
            },
            Some("--server") => match args.next().as_ref().and_then(|a| a.to_str()) {
                Some(url) => {
                    server = Some(teamclient::ServerUrl::parse(url).map_err(|e| e.to_string())?)
                }
                None => return Err("--server needs the team server's URL".into()),
            },
            // Launchers (a desktop file, a WebDriver host) may add arguments of their own.
            _ => eprintln!(
                "ignoring the argument {:?}; the app takes only --db PATH, --server URL and \
                 --version",
                arg.to_string_lossy()
            ),
        }
    }
    Ok(Launch::Open { database, server })
}

#[cfg(test)]
mod tests {
    use super::{launch_arguments, Launch};
    use std::ffi::OsString;
    use std::path::PathBuf;

    fn parse(args: &[&str]) -> Result<Option<PathBuf>, String> {
        match launch_arguments(args.iter().map(OsString::from))? {
            Launch::Open { database, .. } => Ok(database),
            Launch::Version => Err("asked for the version".into()),
        }
    }

    fn server(args: &[&str]) -> Result<Option<String>, String> {
        match launch_arguments(args.iter().map(OsString::from))? {
            Launch::Open { server, .. } => Ok(server.map(|s| s.to_string())),
            Launch::Version => Err("asked for the version".into()),
        }
    }

    #[test]
    fn the_server_argument_is_an_http_url_without_credentials() {
        assert_eq!(server(&[]), Ok(None));
        assert_eq!(
            server(&["--db", "a.sqlite", "--server", "http://127.0.0.1:8080/"]),
            Ok(Some("http://127.0.0.1:8080".into()))
        );
        assert!(server(&["--server"])
            .unwrap_err()
            .contains("needs the team server"));
        assert!(server(&["--server", "ftp://example.org"])
            .unwrap_err()
            .contains("only http"));
        let refused = server(&["--server", "https://lead:secret@example.org"]).unwrap_err();
        assert!(refused.contains("user name or password"), "{refused}");
        assert!(!refused.contains("secret"), "{refused}");
    }

    #[test]
    fn the_database_argument_is_optional_and_needs_a_path() {
        assert_eq!(parse(&[]), Ok(None));
        assert_eq!(
            parse(&["--db", "/data/study.sqlite"]),
            Ok(Some(PathBuf::from("/data/study.sqlite")))
        );
        assert!(parse(&["--db"]).unwrap_err().contains("needs the path"));
        assert!(parse(&["--db", ""]).unwrap_err().contains("needs the path"));
        assert_eq!(
            parse(&["--automation", "--db", "a.sqlite"]),
            Ok(Some(PathBuf::from("a.sqlite")))
        );
        assert_eq!(
            launch_arguments(["--db", "a.sqlite", "--version"].iter().map(OsString::from)),
            Ok(Launch::Version)
        );
    }
}
