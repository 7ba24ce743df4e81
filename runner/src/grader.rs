//! What a grader is asked and what its reply must be: the prompt filled from the store, the JSON
//! schema of the reply built from the study's rubric and taxonomy, and the reply read and checked
//! against both.

use cases::model::{GraderError, Rubric, Scale, Taxonomy, Turn};
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;

/// Everything a grader prompt may name, read from the store for one response.
#[derive(Debug, Clone)]
pub struct GradingContext {
    pub case_text: String,
    pub task_prompt: String,
    pub answer: String,
    pub rationale: Option<String>,
    pub turns: Option<Vec<Turn>>,
    pub ground_truth: Option<Value>,
}

pub const PLACEHOLDERS: &[&str] = &[
    "{{task}}",
    "{{answer}}",
    "{{rationale}}",
    "{{turns}}",
    "{{rubric}}",
    "{{taxonomy}}",
    "{{ground_truth}}",
    "{{case}}",
];

/// Whether the template asks for the ground truth (only then is it read and sent).
pub fn wants_ground_truth(template: &str) -> bool {
    template.contains("{{ground_truth}}")
}

/// The template with every placeholder replaced, in one pass so that text from the store that
/// happens to contain `{{…}}` is never substituted again.
pub fn fill(
    template: &str,
    context: &GradingContext,
    rubric: &Rubric,
    taxonomy: &Taxonomy,
) -> String {
    fill_some(template, PLACEHOLDERS, context, rubric, taxonomy)
}

/// A model's prompt template: only `{{task}}` and `{{case}}` mean something there; the
/// grader-only placeholders are left as written.
pub fn fill_for_model(template: &str, context: &GradingContext) -> String {
    let nothing = Rubric {
        overall: Scale {
            label: None,
            min: 0.0,
            max: 0.0,
            step: 1.0,
            levels: Vec::new(),
        },
        dimensions: Vec::new(),
    };
    let no_codes = Taxonomy {
        id: String::new(),
        categories: Vec::new(),
    };
    fill_some(
        template,
        &["{{task}}", "{{case}}"],
        context,
        &nothing,
        &no_codes,
    )
}

fn fill_some(
    template: &str,
    placeholders: &[&str],
    context: &GradingContext,
    rubric: &Rubric,
    taxonomy: &Taxonomy,
) -> String {
    let mut out = String::with_capacity(template.len() * 2);
    let mut rest = template;
    while let Some(start) = rest.find("{{") {
        out.push_str(&rest[..start]);
        let tail = &rest[start..];
        let Some(placeholder) = placeholders.iter().find(|p| tail.starts_with(**p)) else {
            out.push_str("{{");
            rest = &tail[2..];
            continue;
        };
        out.push_str(&value_of(placeholder, context, rubric, taxonomy));
        rest = &tail[placeholder.len()..];
    }
    out.push_str(rest);
    out
}

fn value_of(placeholder: &str, c: &GradingContext, rubric: &Rubric, taxonomy: &Taxonomy) -> String {
    match placeholder {
        "{{task}}" => c.task_prompt.clone(),
        "{{answer}}" => c.answer.clone(),
        "{{rationale}}" => c.rationale.clone().unwrap_or_default(),
        "{{turns}}" => c
            .turns
            .iter()
            .flatten()
            .map(|t| {
                // The grader reads text only: a turn that showed images says which.
                let shown: Vec<String> = t
                    .key_images
                    .iter()
                    .map(|k| format!("series {} slice {}", k.series, k.slice + 1))
                    .collect();
                if shown.is_empty() {
                    format!("{}: {}", t.role, t.content)
                } else {
                    format!(
                        "{}: {} [images shown: {}]",
                        t.role,
                        t.content,
                        shown.join(", ")
                    )
                }
            })
            .collect::<Vec<_>>()
            .join("\n"),
        "{{rubric}}" => rubric_text(rubric),
        "{{taxonomy}}" => taxonomy
            .categories
            .iter()
            .map(|c| format!("{} {}: {}", c.code, c.name, c.definition))
            .collect::<Vec<_>>()
            .join("\n"),
        "{{ground_truth}}" => c
            .ground_truth
            .as_ref()
            .map(|g| serde_json::to_string_pretty(g).unwrap_or_default())
            .unwrap_or_default(),
        "{{case}}" => c.case_text.clone(),
        _ => String::new(),
    }
}

fn scale_text(name: &str, scale: &Scale) -> String {
    let mut text = format!(
        "{name}: from {} to {} in steps of {}",
        scale.min, scale.max, scale.step
    );
    for level in &scale.levels {
        text.push_str(&format!("\n  {} = {}", level.value, level.descriptor));
    }
    text
}

fn rubric_text(rubric: &Rubric) -> String {
    let overall = rubric.overall.label.as_deref().unwrap_or("Overall score");
    let mut parts = vec![scale_text(&format!("score ({overall})"), &rubric.overall)];
    for dimension in &rubric.dimensions {
        parts.push(scale_text(
            &format!("dimensions.{} ({})", dimension.id, dimension.label),
            &dimension.scale,
        ));
    }
    parts.join("\n")
}

/// The `response_format` of a grading request: a strict JSON schema of §2's reply object.
pub fn response_format(rubric: &Rubric, taxonomy: &Taxonomy) -> Value {
    let number =
        |scale: &Scale| json!({"type": "number", "minimum": scale.min, "maximum": scale.max});
    let mut properties = Map::new();
    properties.insert("score".into(), number(&rubric.overall));
    let mut required = vec![json!("score")];
    if !rubric.dimensions.is_empty() {
        let dims: Map<String, Value> = rubric
            .dimensions
            .iter()
            .map(|d| (d.id.clone(), number(&d.scale)))
            .collect();
        let ids: Vec<Value> = rubric.dimensions.iter().map(|d| json!(d.id)).collect();
        properties.insert(
            "dimensions".into(),
            json!({"type": "object", "properties": dims, "required": ids,
                   "additionalProperties": false}),
        );
        required.push(json!("dimensions"));
    }
    let codes: Vec<&str> = taxonomy
        .categories
        .iter()
        .map(|c| c.code.as_str())
        .collect();
    properties.insert(
        "errors".into(),
        json!({"type": "array", "items": {
            "type": "object",
            "properties": {"category": {"type": "string", "enum": codes},
                           "quote": {"type": "string"}},
            "required": ["category", "quote"], "additionalProperties": false}}),
    );
    properties.insert("rationale".into(), json!({"type": "string"}));
    required.push(json!("errors"));
    required.push(json!("rationale"));
    json!({
        "type": "json_schema",
        "json_schema": {
            "name": "grade",
            "strict": true,
            "schema": {"type": "object", "properties": properties, "required": required,
                       "additionalProperties": false}
        }
    })
}

/// A grader's reply, read and checked.
#[derive(Debug, Clone, PartialEq)]
pub struct Grade {
    pub score: f64,
    pub dimensions: Option<BTreeMap<String, f64>>,
    pub errors: Option<Vec<GraderError>>,
    pub rationale: Option<String>,
}

/// The JSON object in a reply: the whole text, or the body of a ``` fence.
pub fn json_object(text: &str) -> Option<Map<String, Value>> {
    let trimmed = text.trim();
    if let Ok(Value::Object(map)) = serde_json::from_str(trimmed) {
        return Some(map);
    }
    let after_fence = &trimmed[trimmed.find("```")? + 3..];
    let body_start = after_fence.find('\n')? + 1;
    let body = &after_fence[body_start..];
    let body = &body[..body.find("```")?];
    match serde_json::from_str(body.trim()) {
        Ok(Value::Object(map)) => Some(map),
        _ => None,
    }
}

/// Reads a grader reply; the error says what is wrong, in words to send back to the grader.
pub fn read_grade(text: &str, rubric: &Rubric, taxonomy: &Taxonomy) -> Result<Grade, String> {
    let map = json_object(text)
        .ok_or("the reply is not a JSON object (nor one inside a ``` code fence)")?;
    let score = map
        .get("score")
        .and_then(Value::as_f64)
        .ok_or("`score` is missing or not a number")?;
    if !rubric.overall.admits(score) {
        return Err(format!(
            "`score` {score} is not on the rubric's scale ({} to {} in steps of {})",
            rubric.overall.min, rubric.overall.max, rubric.overall.step
        ));
    }
    let dimensions = match map.get("dimensions") {
        None | Some(Value::Null) => None,
        Some(Value::Object(given)) => {
            let mut dimensions = BTreeMap::new();
            for (id, value) in given {
                let dimension = rubric
                    .dimensions
                    .iter()
                    .find(|d| &d.id == id)
                    .ok_or_else(|| format!("`dimensions.{id}` is not a dimension of the rubric"))?;
                let value = value
                    .as_f64()
                    .ok_or_else(|| format!("`dimensions.{id}` is not a number"))?;
                if !dimension.scale.admits(value) {
                    return Err(format!(
                        "`dimensions.{id}` {value} is not on its scale ({} to {} in steps of {})",
                        dimension.scale.min, dimension.scale.max, dimension.scale.step
                    ));
                }
                dimensions.insert(id.clone(), value);
            }
            Some(dimensions)
        }
        Some(_) => return Err("`dimensions` is not an object".into()),
    };
    let errors = match map.get("errors") {
        None | Some(Value::Null) => None,
        Some(Value::Array(items)) => {
            let mut errors = Vec::new();
            for (i, item) in items.iter().enumerate() {
                let error: GraderError = serde_json::from_value(item.clone())
                    .map_err(|e| format!("`errors[{i}]` is not {{category, quote}}: {e}"))?;
                if !taxonomy.categories.iter().any(|c| c.code == error.category) {
                    return Err(format!(
                        "`errors[{i}].category` {:?} is not a code of the taxonomy",
                        error.category
                    ));
                }
                errors.push(error);
            }
            Some(errors)
        }
        Some(_) => return Err("`errors` is not an array".into()),
    };
    let rationale = match map.get("rationale") {
        None | Some(Value::Null) => None,
        Some(Value::String(text)) => Some(text.clone()),
        Some(_) => return Err("`rationale` is not a string".into()),
    };
    Ok(Grade {
        score,
        dimensions,
        errors,
        rationale,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rubric() -> Rubric {
        serde_json::from_value(json!({
            "overall": {"min": 1, "max": 5, "step": 1,
                        "levels": [{"value": 1, "descriptor": "Wrong"}]},
            "dimensions": [{"id": "reasoning", "label": "Reasoning", "min": 0, "max": 2,
                            "step": 0.5}]
        }))
        .unwrap()
    }

    fn context() -> GradingContext {
        GradingContext {
            case_text: "34 F".into(),
            task_prompt: "Diagnosis?".into(),
            answer: "MS {{rubric}}".into(),
            rationale: None,
            turns: Some(vec![Turn::new("user", "Where?")]),
            ground_truth: None,
        }
    }

    #[test]
    fn a_turn_that_showed_images_says_which_to_the_grader() {
        let mut c = context();
        c.turns = Some(vec![
            Turn::new("assistant", "Two lesions."),
            Turn {
                key_images: vec![cases::model::SliceRef {
                    series: "t2".into(),
                    slice: 11,
                }],
                ..Turn::new("user", "And here?")
            },
        ]);
        let text = fill("{{turns}}", &c, &rubric(), &Taxonomy::neurorater_default());
        assert_eq!(
            text,
            "assistant: Two lesions.\nuser: And here? [images shown: series t2 slice 12]"
        );
    }

    #[test]
    fn placeholders_are_filled_once_and_unknown_braces_kept() {
        let text = fill(
            "T={{task}} A={{answer}} R=[{{rationale}}] {{turns}} {{other}}\n{{rubric}}",
            &context(),
            &rubric(),
            &Taxonomy::neurorater_default(),
        );
        assert_eq!(
            text,
            "T=Diagnosis? A=MS {{rubric}} R=[] user: Where? {{other}}\n\
             score (Overall score): from 1 to 5 in steps of 1\n  1 = Wrong\n\
             dimensions.reasoning (Reasoning): from 0 to 2 in steps of 0.5"
        );
    }

    #[test]
    fn fenced_replies_are_read_and_scales_checked() {
        let taxonomy = Taxonomy::neurorater_default();
        let fenced = "Here:\n```json\n{\"score\": 4, \"dimensions\": {\"reasoning\": 1.5}, \
                      \"errors\": [{\"category\": \"P4\", \"quote\": \"left\"}]}\n```";
        let grade = read_grade(fenced, &rubric(), &taxonomy).unwrap();
        assert_eq!(grade.score, 4.0);
        assert_eq!(grade.errors.unwrap()[0].category, "P4");
        assert_eq!(
            read_grade("{\"score\": 4.5}", &rubric(), &taxonomy).unwrap_err(),
            "`score` 4.5 is not on the rubric's scale (1 to 5 in steps of 1)"
        );
        assert_eq!(
            read_grade(
                "{\"score\": 4, \"errors\": [{\"category\": \"Z9\"}]}",
                &rubric(),
                &taxonomy
            )
            .unwrap_err(),
            "`errors[0].category` \"Z9\" is not a code of the taxonomy"
        );
        assert!(read_grade("Score: 4", &rubric(), &taxonomy).is_err());
    }

    #[test]
    fn the_schema_names_the_taxonomy_codes_and_dimension_ids() {
        let format = response_format(&rubric(), &Taxonomy::neurorater_default());
        let schema = &format["json_schema"]["schema"];
        assert_eq!(schema["properties"]["score"]["maximum"], 5.0);
        assert_eq!(
            schema["properties"]["dimensions"]["required"],
            json!(["reasoning"])
        );
        let codes = &schema["properties"]["errors"]["items"]["properties"]["category"]["enum"];
        assert_eq!(codes.as_array().unwrap().len(), 14);
    }
}
