// Declaring the app's commands makes Tauri generate one `allow-<command>` permission per command
// and deny every command a capability file does not grant: the IPC surface is the capability list.
const COMMANDS: &[&str] = &[
    "startup_status",
    "list_studies",
    "list_cases",
    "open_case",
    "list_responses",
    "curation_history",
    "curation_save_draft",
    "curation_submit",
    "curation_review",
    "curation_diff",
    "curation_compare",
    "curation_merge",
    "curation_save_consensus",
    "baseline_tasks",
    "baseline_blind_task",
    "baseline_submit",
    "reveal_ground_truth",
    "series_volume",
    "series_opening_slice",
    "list_raters",
    "create_rater",
    "current_rater",
    "set_current_rater",
    "leave_reading",
    "create_assignment_plan",
    "ensure_demo_queue",
    "reading_queue",
    "reading_item",
    "save_rating",
    "add_error_label",
    "update_error_label",
    "delete_error_label",
    "submit_rating",
    "reopen_rating",
    "set_position",
    "resume_position",
    "list_graders",
    "calibration_report",
    "export_calibration_report",
    "import_rater_package",
    "export_results_package",
    "merge_results_package",
];

fn main() {
    tauri_build::try_build(
        tauri_build::Attributes::new()
            .app_manifest(tauri_build::AppManifest::new().commands(COMMANDS)),
    )
    .expect("tauri-build failed: check tauri.conf.json and capabilities/*.json");
}
