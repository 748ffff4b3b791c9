//! The JSON contract's schemas (docs/schema/, docs/commands.md "The JSON contract"), for the
//! tests that read a command's `--json`: `json_contract` and any test whose scenario is the only
//! one that makes an output (an absence alert, `relay::alerts`).

use std::path::PathBuf;

use serde_json::Value;

pub fn schema_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("docs/schema")
}

/// The schema file of a command: its words joined by `-` (`report day` -> `report-day.json`).
pub fn schema_file(command: &str) -> PathBuf {
    schema_dir().join(format!("{}.json", command.replace(' ', "-")))
}

pub fn load(path: &PathBuf) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: not JSON: {e}", path.display()))
}

/// The validator of a command's output (formats `date` and `date-time` checked too).
pub fn validator(command: &str) -> jsonschema::Validator {
    let schema = load(&schema_file(command));
    jsonschema::draft202012::options()
        .should_validate_formats(true)
        .build(&schema)
        .unwrap_or_else(|e| panic!("{command}: {e}"))
}

/// Panic, naming every breach, unless `doc` keeps `command`'s schema.
pub fn check(v: &jsonschema::Validator, command: &str, doc: &Value) {
    let errors: Vec<String> = v
        .iter_errors(doc)
        .map(|e| format!("{e} at {}", e.instance_path))
        .collect();
    assert!(
        errors.is_empty(),
        "`{command} --json` breaks its schema: {errors:#?}\n{doc:#}"
    );
}
