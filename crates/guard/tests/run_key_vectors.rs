//! The run-key vectors every guard shares (`testdata/run-keys.json`): the
//! TypeScript and Python guards check the same file, so a claim made by one
//! is found by the others. `IDEM_BLESS=1` writes the keys this crate derives
//! into the file; a change to them is a change of every stored claim's key.

use std::path::PathBuf;

use http::{HeaderName, Request};
use idem_guard::signature::VerifiedMessage;
use idem_guard::{IdentitySource, KeyConfig, KeyError, Scope};
use serde_json::{Value, json};

fn vectors_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("testdata/run-keys.json")
}

fn source(spec: &Value) -> IdentitySource {
    match spec {
        Value::String(s) if s == "idempotency-key" => IdentitySource::IdempotencyKey,
        Value::String(s) if s == "cloud-scheduler" => IdentitySource::CloudScheduler,
        Value::String(s) if s == "cloud-tasks" => IdentitySource::CloudTasks,
        Value::Object(o) if o.contains_key("header") => IdentitySource::Header(
            HeaderName::try_from(o["header"].as_str().unwrap()).expect("a header name"),
        ),
        other => panic!("unknown source {other}"),
    }
}

fn scope(spec: &Value) -> Scope {
    let o = spec.as_object().expect("a scope is an object");
    if let Some(h) = o.get("header") {
        Scope::Header(HeaderName::try_from(h.as_str().unwrap()).expect("a header name"))
    } else if let Some(n) = o.get("path_segment") {
        Scope::PathSegment(n.as_u64().unwrap() as usize)
    } else if let Some(q) = o.get("query") {
        Scope::QueryParam(q.as_str().unwrap().to_owned())
    } else {
        panic!("unknown scope {spec}")
    }
}

fn error_name(e: &KeyError) -> &'static str {
    match e {
        KeyError::MissingIdentity { .. } => "missing_identity",
        KeyError::RepeatedHeader(_) => "repeated_header",
        KeyError::MissingScope(_) => "missing_scope",
        KeyError::InvalidScheduleTime(_) => "invalid_schedule_time",
        KeyError::RepeatedQueryParameter(_) => "repeated_query_parameter",
    }
}

/// What this crate derives for one vector: `{"run_key": …}` or `{"error": …}`.
fn derive(vector: &Value) -> Value {
    let mut config = KeyConfig::new();
    if let Some(sources) = vector.get("sources") {
        config = config.with_sources(sources.as_array().unwrap().iter().map(source).collect());
    }
    for s in vector
        .get("scopes")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        config = config.with_scope(scope(s));
    }
    let mut request = Request::builder().uri(vector["uri"].as_str().unwrap());
    for pair in vector["headers"].as_array().unwrap() {
        request = request.header(pair[0].as_str().unwrap(), pair[1].as_str().unwrap());
    }
    let mut parts = request.body(()).unwrap().into_parts().0;
    if let Some(id) = vector.get("signed_webhook_id") {
        parts.extensions.insert(VerifiedMessage {
            id: id.as_str().unwrap().to_owned(),
        });
    }
    match config.derive(&parts) {
        Ok(key) => json!({ "run_key": key.as_str() }),
        Err(e) => json!({ "error": error_name(&e) }),
    }
}

#[test]
fn every_vector_derives_the_recorded_key_or_error() {
    let text = std::fs::read_to_string(vectors_path()).expect("the vectors file");
    let mut doc: Value = serde_json::from_str(&text).expect("JSON");
    let bless = std::env::var_os("IDEM_BLESS").is_some();
    let mut wrong = Vec::new();
    for vector in doc["vectors"].as_array_mut().unwrap() {
        let derived = derive(vector);
        let object = vector.as_object_mut().unwrap();
        if bless {
            object.remove("run_key");
            object.remove("error");
            object.extend(derived.as_object().unwrap().clone());
            continue;
        }
        let recorded = json!({
            "run_key": object.get("run_key"),
            "error": object.get("error"),
        });
        let derived_both = json!({
            "run_key": derived.get("run_key"),
            "error": derived.get("error"),
        });
        if recorded != derived_both {
            wrong.push(format!(
                "{}: recorded {recorded}, derived {derived_both}",
                object["name"]
            ));
        }
    }
    if bless {
        let mut out = serde_json::to_string_pretty(&doc).unwrap();
        out.push('\n');
        std::fs::write(vectors_path(), out).unwrap();
        return;
    }
    assert!(
        wrong.is_empty(),
        "vectors that disagree:\n{}",
        wrong.join("\n")
    );
}

#[test]
fn the_vectors_cover_every_error_and_keep_equal_instants_one_run() {
    let doc: Value =
        serde_json::from_str(&std::fs::read_to_string(vectors_path()).unwrap()).unwrap();
    let vectors = doc["vectors"].as_array().unwrap();
    let by_name = |name: &str| {
        vectors
            .iter()
            .find(|v| v["name"] == name)
            .unwrap_or_else(|| panic!("no vector {name:?}"))
    };
    for error in [
        "missing_identity",
        "repeated_header",
        "missing_scope",
        "invalid_schedule_time",
        "repeated_query_parameter",
    ] {
        assert!(
            vectors.iter().any(|v| v["error"] == error),
            "no vector ends in {error}"
        );
    }
    let utc = &by_name("Cloud Scheduler")["run_key"];
    assert!(utc.is_string());
    assert_eq!(
        utc,
        &by_name("Cloud Scheduler, the same instant with an offset")["run_key"]
    );
    assert_eq!(
        utc,
        &by_name("Cloud Scheduler, the same instant with fractional zeros")["run_key"]
    );
    assert_ne!(
        by_name("Cloud Tasks")["run_key"],
        by_name("Cloud Tasks, parts that would concatenate alike")["run_key"]
    );
}
