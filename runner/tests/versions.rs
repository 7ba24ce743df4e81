//! Grader versions in a real SQLite file: a spec added from TOML binds its name, an edited prompt
//! is a new version under a new name, and a used name is refused.

use runner::record::Kind;
use runner::versions::{add_spec, new_grader_version, stored_spec, stored_specs};
use runner::RunError;

const GRADER: &str = r#"name = "judge-v1"
endpoint = "http://127.0.0.1:9/v1"
model = "m"
temperature = 0.0
seed = 7
max_tokens = 300
concurrency = 4
prompt = "Grade {{answer}}"
"#;

#[test]
fn an_edited_prompt_is_a_new_version_under_a_new_name() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = cases::store::Store::open(&dir.path().join("db.sqlite")).unwrap();
    let v1 = add_spec(&mut store, GRADER, "judge-v1.toml", Kind::Grader).unwrap();
    let v2 = new_grader_version(
        &mut store,
        "judge-v1",
        "judge-v2",
        "Be strict. Grade {{answer}}",
    )
    .unwrap();
    assert_eq!(v2.endpoint, v1.endpoint);
    assert_eq!(v2.prompt.as_deref(), Some("Be strict. Grade {{answer}}"));
    assert_ne!(v2.content_hash(), v1.content_hash());
    assert_eq!(stored_spec(&store, "judge-v2", Kind::Grader).unwrap(), v2);
    let names: Vec<String> = stored_specs(&store, Kind::Grader)
        .unwrap()
        .into_iter()
        .map(|s| s.spec.name)
        .collect();
    assert_eq!(names, ["judge-v1", "judge-v2"]);

    // A used name, even with the same prompt, is refused: a version is never rewritten.
    let again = new_grader_version(&mut store, "judge-v1", "judge-v2", "Other").unwrap_err();
    assert!(matches!(again, RunError::NameInUse { .. }), "{again}");
    // A model spec cannot be a grader's base.
    let model = GRADER
        .replace("judge-v1", "vlm-x")
        .replace("prompt = \"Grade {{answer}}\"\n", "");
    add_spec(&mut store, &model, "vlm-x.toml", Kind::Model).unwrap();
    let models = stored_specs(&store, Kind::Model).unwrap();
    assert_eq!(
        models
            .iter()
            .map(|s| (s.spec.name.as_str(), s.stored))
            .collect::<Vec<_>>(),
        [("vlm-x", 0)],
        "models are listed apart from graders, with nothing stored before a run"
    );
    assert_eq!(stored_specs(&store, Kind::Grader).unwrap().len(), 2);
    let wrong = new_grader_version(&mut store, "vlm-x", "judge-v3", "P").unwrap_err();
    assert!(wrong.to_string().contains("names a model"), "{wrong}");
    // The same checks as a spec file: an empty name names its field.
    let empty = new_grader_version(&mut store, "judge-v1", " ", "P").unwrap_err();
    assert!(
        empty.to_string().contains("name: must not be empty"),
        "{empty}"
    );
}

#[test]
fn a_grader_spec_needs_a_prompt() {
    let dir = tempfile::tempdir().unwrap();
    let mut store = cases::store::Store::open(&dir.path().join("db.sqlite")).unwrap();
    let no_prompt = GRADER.replace("prompt = \"Grade {{answer}}\"\n", "");
    let refused = add_spec(&mut store, &no_prompt, "g.toml", Kind::Grader).unwrap_err();
    assert!(
        refused.to_string().contains("needs a prompt template"),
        "{refused}"
    );
    assert!(stored_specs(&store, Kind::Grader).unwrap().is_empty());
}
