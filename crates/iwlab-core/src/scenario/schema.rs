//! The JSON Schema of the scenario format, derived from the serde structs of [`super::model`]
//! with `schemars`: their doc comments become the descriptions, serde's defaults the defaults,
//! and the quantities ([`super::units`]) give their units as patterns. It is what `iwlab schema`
//! prints, what the Python model (`python/iwlab/scenario_model.py`) is generated from, and what
//! the field tables of docs/scenario-format.md are generated from. Validation stays with serde
//! and `validate`: the schema describes the shape (keys, types, kinds, units), and the ranges
//! and references that need the whole scenario are checked there.

use super::model::Scenario;
use super::policy_file::PolicyFileSpec;
use schemars::generate::SchemaSettings;

fn settings() -> SchemaSettings {
    // The file as read (serde's defaults make fields optional), in draft 2020-12.
    SchemaSettings::draft2020_12().for_deserialize()
}

/// The schema of a scenario file.
pub fn scenario_schema() -> serde_json::Value {
    settings().into_generator().into_root_schema_for::<Scenario>().to_value()
}

/// The schema of a policy file (`iwlab run --policy`, `iwlab deploy`).
pub fn policy_file_schema() -> serde_json::Value {
    settings().into_generator().into_root_schema_for::<PolicyFileSpec>().to_value()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;

    fn def<'a>(s: &'a Value, name: &str) -> &'a Value {
        &s["$defs"][name]
    }

    #[test]
    fn fields_carry_their_doc_comments_and_defaults() {
        let s = scenario_schema();
        assert_eq!(s["title"], "Scenario");
        assert!(s["properties"]["name"]["description"].as_str().unwrap().starts_with("Short identifier"));
        assert_eq!(s["properties"]["seed"]["default"], 1);
        assert_eq!(s["required"], serde_json::json!(["name", "duration", "topology"]));
        assert_eq!(s["additionalProperties"], false);
    }

    #[test]
    fn kinds_are_tagged_tables_and_quantities_name_their_units() {
        let s = scenario_schema();
        let queue = def(&s, "QueueSpec");
        let kinds: Vec<&str> =
            queue["oneOf"].as_array().unwrap().iter().map(|v| v["properties"]["kind"]["const"].as_str().unwrap()).collect();
        assert_eq!(kinds, ["drop-tail", "red", "codel"]);
        let rate = def(&s, "Rate");
        let pattern = rate["anyOf"][0]["pattern"].as_str().unwrap();
        assert!(pattern.contains("[mM][bB][pP][sS]"), "{pattern}");
        let apps = def(&s, "App");
        let kinds: Vec<&str> =
            apps["oneOf"].as_array().unwrap().iter().map(|v| v["properties"]["kind"]["const"].as_str().unwrap()).collect();
        assert_eq!(kinds, super::super::apps::AppParams::KINDS);
    }
}
