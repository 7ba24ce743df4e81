// Declaring the app's commands makes Tauri generate one `allow-<command>` permission per command
// and deny every command a capability file does not grant: the IPC surface is the capability list.
const COMMANDS: &[&str] = &[
    "startup_status",
    "list_studies",
    "list_cases",
    "open_case",
    "list_responses",
    "series_volume",
];

fn main() {
    tauri_build::try_build(
        tauri_build::Attributes::new()
            .app_manifest(tauri_build::AppManifest::new().commands(COMMANDS)),
    )
    .expect("tauri-build failed: check tauri.conf.json and capabilities/*.json");
}
