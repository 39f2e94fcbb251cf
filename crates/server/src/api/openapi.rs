//! The OpenAPI 3.1 document, built from the operation table and the
//! request and response types' derived schemas.
//!
//! The operations are written out as JSON from the table's properties and
//! their handlers' signatures (`signature`), which name the request and
//! response schemas; the schemas are derived by utoipa and then given the
//! input rules the server enforces ([`input_rules`]), from the same
//! constants its checks use.

use super::Operation;
use super::signature::{Also, BodySchema};
use http::StatusCode;
use idem_api::*;
use idem_core::{names, queue, task};
use idem_store::MAX_BATCH_TASKS;
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;
use utoipa::openapi::schema::ComponentsBuilder;
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityScheme};

/// `[A-Za-z0-9_-]`, the alphabet of every name users choose.
const NAME_PATTERN: &str = "^[A-Za-z0-9_-]+$";

fn name_schema(max: usize) -> Value {
    json!({"type": "string", "minLength": 1, "maxLength": max, "pattern": NAME_PATTERN})
}

/// `Idempotency-Key`: printable ASCII, bare (no comma, which would make
/// it a list, and no surrounding spaces, which HTTP trims) or a quoted
/// Structured-Fields string.
fn idempotency_key_schema() -> Value {
    json!({
        "type": "string",
        "minLength": 1,
        "maxLength": 255,
        "pattern": r#"^(?:[\x21\x23-\x2B\x2D-\x7E](?:[\x20-\x2B\x2D-\x7E]*[\x21-\x2B\x2D-\x7E])?|"(?:[\x20\x21\x23-\x5B\x5D-\x7E]|\\[\\"])+")$"#,
    })
}

/// The schema of a path parameter, by its name in the route.
fn path_param_schema(name: &str) -> Value {
    match name {
        "queue" => name_schema(names::QUEUE_NAME_MAX),
        "task_id" => name_schema(names::TASK_ID_MAX),
        "job" => name_schema(names::JOB_NAME_MAX),
        "name" => name_schema(names::PRINCIPAL_NAME_MAX),
        "key" => idempotency_key_schema(),
        // The store holds no control characters (`refuse_path_params`).
        _ => json!({"type": "string", "minLength": 1, "pattern": "^[^\\x00-\\x1F\\x7F-\\x9F]+$"}),
    }
}

fn path_param_names(path: &str) -> impl Iterator<Item = &str> {
    path.split('/')
        .filter_map(|s| s.strip_prefix('{')?.split('}').next())
}

fn parameter(name: &str, place: &str, required: bool, description: &str, schema: Value) -> Value {
    json!({"name": name, "in": place, "required": required, "description": description, "schema": schema})
}

fn schema_ref(name: &str) -> Value {
    json!({"$ref": format!("#/components/schemas/{name}")})
}

fn header_ref(name: &str) -> Value {
    json!({"$ref": format!("#/components/headers/{name}")})
}

/// Every problem an operation may answer, derived from its properties:
/// what any request with a key, a path, a query, a body or an
/// `Idempotency-Key` can meet, plus the operation's own
/// ([`Operation::problems`]). 500 is never promised.
pub fn problems(op: &Operation) -> Vec<ProblemCode> {
    use ProblemCode::*;
    let mut codes = Vec::new();
    let has_path_params = path_param_names(op.path).next().is_some();
    let answer = &op.io.response;
    let has_query = answer.paged || !op.query.is_empty() || answer.waits;
    if op.io.request.is_some()
        || has_path_params
        || has_query
        || op.idempotent
        || op.task_id_headers
    {
        codes.push(InvalidArgument);
    }
    if op.idempotent {
        codes.extend([
            IdempotencyKeyInvalid,
            IdempotencyKeyMissing,
            IdempotencyKeyInProgress,
            IdempotentResourceGone,
            IdempotencyKeyMismatch,
        ]);
    }
    if op.authenticated {
        codes.extend([Unauthenticated, PermissionDenied]);
    }
    if op.person_only {
        codes.push(UserIdentityRequired);
    }
    if has_path_params {
        codes.push(NotFound);
    }
    if op.io.request.is_some() || op.idempotent {
        // The key layer reads any body to fingerprint it.
        codes.push(PayloadTooLarge);
    }
    if op.io.request.is_some() {
        codes.push(UnsupportedMediaType);
    }
    codes.extend(op.problems.iter().copied());
    if op.authenticated {
        codes.push(Unavailable);
    }
    let mut seen = Vec::new();
    codes.retain(|c| {
        let new = !seen.contains(c);
        seen.push(*c);
        new
    });
    codes
}

fn problem_response(status: StatusCode, codes: &[ProblemCode]) -> Value {
    let names: Vec<&str> = codes.iter().map(|c| c.as_str()).collect();
    let mut headers = json!({"Idem-Request-Id": header_ref("Idem-Request-Id")});
    if codes.iter().any(|c| {
        matches!(
            c,
            ProblemCode::IdempotencyKeyInProgress | ProblemCode::Unavailable
        )
    }) {
        headers["Retry-After"] = header_ref("Retry-After");
    }
    if status == StatusCode::UNAUTHORIZED {
        headers["WWW-Authenticate"] = header_ref("WWW-Authenticate");
    }
    json!({
        "description": format!("{}: {}", status.canonical_reason().unwrap_or(""), names.join(", ")),
        "headers": headers,
        "content": {"application/problem+json": {"schema": {
            "allOf": [schema_ref("Problem")],
            "properties": {"type": {"enum": names}, "status": {"const": status.as_u16()}},
        }}},
    })
}

fn operation(op: &Operation, request_id_header: &str) -> Value {
    let mut params: Vec<Value> = path_param_names(op.path)
        .map(|name| parameter(name, "path", true, "", path_param_schema(name)))
        .collect();
    let answer = &op.io.response;
    if answer.paged {
        params.push(parameter(
            "limit",
            "query",
            false,
            "Items per page (default 50)",
            json!({"type": "integer", "minimum": 1, "maximum": super::extract::MAX_LIMIT}),
        ));
        use super::extract::{
            ATTEMPTS_PAGE_TOKEN_PATTERN, PAGE_TOKEN_PATTERN, RUNS_PAGE_TOKEN_PATTERN,
        };
        let pattern = match op.id {
            "listTaskAttempts" | "listJobRunAttempts" => ATTEMPTS_PAGE_TOKEN_PATTERN,
            "listJobRuns" => RUNS_PAGE_TOKEN_PATTERN,
            _ => PAGE_TOKEN_PATTERN,
        };
        params.push(parameter(
            "page_token",
            "query",
            false,
            "The previous page's `next_page_token` (empty: the first page): the position the page starts after",
            json!({"type": "string", "pattern": pattern}),
        ));
    }
    for q in op.query {
        let schema: Value = serde_json::from_str(q.schema).expect("a query parameter's schema");
        params.push(parameter(q.name, "query", false, q.description, schema));
    }
    if answer.waits {
        params.push(parameter(
            "wait_ms",
            "query",
            false,
            "Wait up to this long for a final state: 200 if the task got there, 202 if not",
            json!({"type": "integer", "minimum": 1, "maximum": 30000}),
        ));
    }
    if op.idempotent {
        params.push(parameter(
            "Idempotency-Key",
            "header",
            false,
            "A retry with the same key and request replays the first answer instead of running again (24 h)",
            idempotency_key_schema(),
        ));
    }
    if op.task_id_headers {
        let task_id = name_schema(names::TASK_ID_MAX);
        params.push(parameter(
            "Idem-Task-Id",
            "header",
            false,
            "The task ID, when the body names none",
            task_id.clone(),
        ));
        params.push(parameter(
            "X-Fc-Stateful-Async-Invocation-Id",
            "header",
            false,
            "The task ID, when neither the body nor Idem-Task-Id names one (compatibility)",
            task_id,
        ));
        params.push(parameter(
            request_id_header,
            "header",
            false,
            "The request ID; the task ID when nothing else names one and it is a valid task ID (otherwise ignored)",
            json!({"type": "string"}),
        ));
    }

    let mut responses = Map::new();
    let status = answer.status;
    let mut headers = json!({"Idem-Request-Id": header_ref("Idem-Request-Id")});
    if answer.located {
        headers["Location"] = header_ref("Location");
    }
    if op.idempotent || answer.replays {
        headers["Idempotent-Replayed"] = header_ref("Idempotent-Replayed");
    }
    let success = |description: &str| {
        let mut r = json!({"description": description, "headers": headers.clone()});
        if let Some(name) = &answer.schema {
            r["content"] = json!({"application/json": {"schema": schema_ref(name)}});
        }
        r
    };
    responses.insert(
        status.as_u16().to_string(),
        success(status.canonical_reason().unwrap_or("")),
    );
    if answer.waits {
        responses.insert(
            "200".into(),
            success("With `wait_ms`: the task reached a final state in time"),
        );
        responses.insert(
            "202".into(),
            success("With `wait_ms`: the task as it is when the wait ran out"),
        );
    }
    let mut by_status: BTreeMap<u16, Vec<ProblemCode>> = BTreeMap::new();
    for code in problems(op) {
        by_status
            .entry(code.status().as_u16())
            .or_default()
            .push(code);
    }
    for (status, codes) in by_status {
        let status = StatusCode::from_u16(status).expect("a problem's status");
        responses.insert(
            status.as_u16().to_string(),
            problem_response(status, &codes),
        );
    }

    let mut o = json!({
        "operationId": op.id,
        "summary": op.summary,
        "parameters": params,
        "responses": responses,
    });
    if let Some(req) = &op.io.request {
        let mut json_body = json!({"schema": schema_ref(&req.schema)});
        if let Some(example) = op.example {
            json_body["example"] =
                serde_json::from_str::<Value>(example).expect("an operation's example is JSON");
        }
        let mut content = json!({"application/json": json_body});
        match &req.also {
            Also::Nothing => {}
            Also::Multipart => {
                content["multipart/form-data"] = json!({
                    "schema": {
                        "type": "object",
                        "properties": {
                            "task": schema_ref(&req.schema),
                            "body": {"type": "string", "contentMediaType": "application/octet-stream", "description": "The bytes sent to the target; the part's Content-Type is sent with them"},
                        },
                        "required": ["task"],
                        "additionalProperties": false,
                        "not": {
                            "description": "With a body part, the task gives no body of its own, \
                                and its target's method is not GET or HEAD",
                            "required": ["task", "body"],
                            "properties": {"task": {"anyOf": [
                                {"required": ["target"], "properties": {"target": has_body()}},
                                {"required": ["payload"], "properties": {"payload": has_body()}},
                                {"required": ["target"], "properties": {"target": bodiless_method()}},
                            ]}},
                        },
                    },
                    "encoding": {"task": {"contentType": "application/json"}},
                });
            }
            Also::Ndjson(item) => {
                content[super::batch::NDJSON] = json!({
                    "schema": {
                        "type": "string",
                        "description": format!("One {item} JSON object per line (1 to {MAX_BATCH_TASKS} lines); \
                            `atomic` goes in the query. Problems name an item `line[n]`, counted from 1."),
                    },
                    "x-item-schema": schema_ref(item),
                });
            }
        }
        o["requestBody"] = json!({"required": !req.optional, "content": content});
    }
    if op.authenticated {
        o["security"] = json!([{"bearer": []}]);
    }
    if op.idempotent {
        o["x-idempotent"] = Value::Bool(true);
    }
    if op.person_only {
        o["x-person-only"] = Value::Bool(true);
    } else if op.person_only_on_person_only_queues {
        o["x-person-only"] = Value::from(PERSON_ONLY_ON_PERSON_ONLY_QUEUES);
    }
    o
}

/// The `x-person-only` of an operation only a person may take on a queue
/// created `person_only`.
const PERSON_ONLY_ON_PERSON_ONLY_QUEUES: &str = "when the queue is person_only";

/// The routes outside `/v1`, which need no API key.
fn unversioned_paths() -> Value {
    let request_id = json!({"Idem-Request-Id": header_ref("Idem-Request-Id")});
    let status_body = |value: &str| json!({"type": "object", "properties": {"status": {"const": value}}, "required": ["status"]});
    json!({
        "/healthz": {"get": {
            "operationId": "healthz",
            "summary": "The process is up",
            "responses": {"200": {"description": "OK", "headers": request_id,
                "content": {"application/json": {"schema": status_body("ok")}}}},
        }},
        "/readyz": {"get": {
            "operationId": "readyz",
            "summary": "The store is reachable",
            "responses": {
                "200": {"description": "OK", "headers": request_id,
                    "content": {"application/json": {"schema": status_body("ready")}}},
                "503": problem_response(StatusCode::SERVICE_UNAVAILABLE, &[ProblemCode::Unavailable]),
            },
        }},
        "/metrics": {"get": {
            "operationId": "metrics",
            "summary": "Prometheus metrics (with --metrics-token, send it as a bearer token)",
            "responses": {
                "200": {"description": "OK", "headers": request_id,
                    "content": {"text/plain": {"schema": {"type": "string"}}}},
                "401": problem_response(StatusCode::UNAUTHORIZED, &[ProblemCode::Unauthenticated]),
                "503": problem_response(StatusCode::SERVICE_UNAVAILABLE, &[ProblemCode::Unavailable]),
            },
        }},
        "/openapi.json": {"get": {
            "operationId": "openapi",
            "summary": "This document",
            "responses": {"200": {"description": "OK", "headers": request_id,
                "content": {"application/json": {"schema": {"type": "object"}}}}},
        }},
    })
}

fn headers() -> Value {
    json!({
        "Idem-Request-Id": {"description": "The request's ID, also in the server's logs and in problem documents", "required": true, "schema": {"type": "string"}},
        "Location": {"description": "The path of the resource made or named", "required": true, "schema": {"type": "string"}},
        "Idempotent-Replayed": {"description": "`true` on an answer that replays an earlier request with the same Idempotency-Key, or (pull queues' complete and fail) a holder's repeated end of an attempt that already ended so: nothing changed", "schema": {"type": "string", "enum": ["true"]}},
        "Retry-After": {"description": "Seconds to wait before trying again", "schema": {"type": "integer", "minimum": 0}},
        "WWW-Authenticate": {"description": "The scheme to authenticate with", "required": true, "schema": {"type": "string"}},
    })
}

/// Sets `rules` on a property of a component schema, over what the derived
/// schema said of it.
fn constrain(schemas: &mut Map<String, Value>, schema: &str, property: &str, rules: Value) {
    let slot = schemas
        .get_mut(schema)
        .and_then(|s| s.get_mut("properties"))
        .and_then(|p| p.get_mut(property))
        .unwrap_or_else(|| panic!("{schema}.{property} is in the document"));
    let nullable = slot
        .get("type")
        .and_then(Value::as_array)
        .is_some_and(|t| t.iter().any(|t| t == "null"));
    let Value::Object(rules) = rules else {
        unreachable!("rules are an object")
    };
    let slot = slot.as_object_mut().expect("a property is an object");
    for (k, v) in rules {
        slot.insert(k, v);
    }
    // A nullable property stays nullable whatever type or values the rules
    // set.
    if nullable && let Some(Value::String(t)) = slot.get("type").cloned() {
        slot.insert("type".into(), json!([t, "null"]));
    }
    if nullable
        && let Some(Value::Array(values)) = slot.get_mut("enum")
        && !values.contains(&Value::Null)
    {
        values.push(Value::Null);
    }
}

fn range(min: impl Into<Value>, max: impl Into<Value>) -> Value {
    json!({"minimum": min.into(), "maximum": max.into()})
}

/// The rules the server checks on input, in the schemas: names, ranges,
/// URLs, methods, one body form of three. What JSON Schema cannot say
/// (minimum ≤ maximum backoff, a time zone or cron expression that parses,
/// a reserved header name) stays in the prose and the 400's field errors.
fn input_rules(schemas: &mut Map<String, Value>) {
    let deadline = range(queue::MIN_DEADLINE_S, queue::MAX_DEADLINE_S);
    for name in ["CreateQueue", "QueueConfigPatch"] {
        constrain(schemas, name, "dispatch_deadline_s", deadline.clone());
        let window = range(0, queue::MAX_DEDUP_WINDOW_S);
        constrain(schemas, name, "dedup_window_s", window);
        let retention = range(0, queue::MAX_FAILED_RETENTION_S);
        constrain(schemas, name, "failed_retention_s", retention);
    }
    let queue_name = name_schema(names::QUEUE_NAME_MAX);
    constrain(schemas, "CreateQueue", "name", queue_name);
    let rate = range(queue::MIN_RATE, queue::MAX_RATE);
    constrain(
        schemas,
        "RateLimitsPatch",
        "max_dispatches_per_second",
        rate,
    );
    let burst = range(1, queue::MAX_BURST);
    constrain(schemas, "RateLimitsPatch", "max_burst_size", burst);
    let concurrency = range(1, queue::MAX_CONCURRENCY);
    constrain(
        schemas,
        "RateLimitsPatch",
        "max_concurrent_dispatches",
        concurrency,
    );
    for name in ["RetryConfigPatch", "JobRetryConfigPatch"] {
        let duration = range(0, queue::MAX_RETRY_DURATION_S);
        constrain(schemas, name, "max_retry_duration_s", duration);
        let backoff = range(1, queue::MAX_BACKOFF_MS);
        constrain(schemas, name, "min_backoff_ms", backoff.clone());
        constrain(schemas, name, "max_backoff_ms", backoff);
        let doublings = range(0, queue::MAX_DOUBLINGS);
        constrain(schemas, name, "max_doublings", doublings);
    }
    let attempts = range(0, queue::MAX_ATTEMPTS);
    constrain(schemas, "RetryConfigPatch", "max_attempts", attempts);
    let retries = range(0, queue::MAX_ATTEMPTS - 1);
    constrain(schemas, "JobRetryConfigPatch", "retry_count", retries);
    let task_id = name_schema(names::TASK_ID_MAX);
    constrain(schemas, "CreateTask", "task_id", task_id);
    constrain(
        schemas,
        "CreateTask",
        "dispatch_deadline_s",
        deadline.clone(),
    );
    for name in ["CreateJob", "UpdateJob"] {
        constrain(schemas, name, "attempt_deadline_s", deadline.clone());
    }
    let job_name = name_schema(names::JOB_NAME_MAX);
    constrain(schemas, "CreateJob", "name", job_name);
    let principal = name_schema(names::PRINCIPAL_NAME_MAX);
    constrain(schemas, "CreatePrincipal", "name", principal);
    let organization = name_schema(names::ORGANIZATION_NAME_MAX);
    constrain(schemas, "CreateOrganization", "name", organization);
    let count = range(1, idem_core::schedule::MAX_PREVIEW);
    constrain(schemas, "PreviewRequest", "count", count);
    let url =
        json!({"type": "string", "format": "uri", "pattern": "^[Hh][Tt][Tt][Pp][Ss]?://[^/?#]+"});
    constrain(schemas, "CreateWebhook", "url", url.clone());
    constrain(schemas, "CreateWebhook", "events", json!({"minItems": 1}));
    constrain(schemas, "TargetSpec", "url", url);
    // A method is matched without regard to case.
    let methods: Vec<String> = task::METHODS.iter().map(|m| case_insensitive(m)).collect();
    let method = json!({"type": "string", "pattern": format!("^(?:{})$", methods.join("|"))});
    constrain(schemas, "TargetSpec", "method", method);
    let reserved: Vec<String> = task::RESERVED_HEADERS
        .iter()
        .chain(task::TRANSPORT_HEADERS)
        .map(|h| case_insensitive(h))
        .chain([format!("{}.*", case_insensitive("idem-"))])
        .collect();
    let headers = json!({
        "maxProperties": task::MAX_TARGET_HEADERS,
        "propertyNames": {
            "pattern": "^[!#$%&'*+.^_`|~0-9A-Za-z-]+$",
            "not": {
                "description": "Headers Idem or the HTTP client sets",
                "pattern": format!("^(?:{})$", reserved.join("|")),
            },
        },
        "additionalProperties": {"type": "string", "pattern": "^[\\t\\x20-\\x7E]*$"},
    });
    constrain(schemas, "TargetSpec", "headers", headers);
    let secret_headers = json!({
        "items": {"type": "string", "pattern": "^[!#$%&'*+.^_`|~0-9A-Za-z-]+$"},
    });
    constrain(schemas, "TargetSpec", "secret_headers", secret_headers);
    // Canonical padded base64, as the server decodes it: the last symbol
    // before padding leaves no bits over.
    let base64 = json!({
        "contentEncoding": "base64",
        "pattern": "^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/][AQgw]==|[A-Za-z0-9+/]{2}[AEIMQUYcgkosw048]=)?$",
    });
    constrain(schemas, "TargetSpec", "body_base64", base64.clone());
    constrain(schemas, "PayloadSpec", "body_base64", base64);
    let any_json = json!({"description": "Any JSON value (null included), sent as application/json with its numbers as spelled"});
    for name in ["TargetSpec", "TargetView"] {
        let properties = schemas[name]["properties"]
            .as_object_mut()
            .expect("a target has properties");
        properties.insert("json".into(), any_json.clone());
    }
    // Results and payloads are any JSON value, not only objects: the
    // derived schema knows only that they are raw JSON.
    for (name, property) in [
        ("CompleteTask", "result"),
        ("EndTask", "result"),
        ("TaskView", "result"),
        ("PayloadSpec", "json"),
        ("PayloadView", "json"),
    ] {
        let slot = &mut schemas[name]["properties"][property];
        let description = slot["description"].clone();
        *slot = json!({"description": description});
    }
    schemas["EndedTasks"]["properties"]["results"]["items"]["properties"]["replayed"] = json!({
        "type": "boolean",
        "description": "true when the item repeated the end that finished the task (same attempt, same result or error): nothing changed",
    });
    // What the server reads: a null `result` or `error` is one left out.
    schemas["EndTask"]["not"] = json!({
        "description": "A completion (result) or a failure (error), not both",
        "required": ["result", "error"],
        "properties": {
            "result": {"not": {"type": "null"}},
            "error": {"type": "string"},
        },
    });
    schemas["TargetSpec"]["not"] = target_conflicts(true);
    // Printable, not blank, at most 512 characters.
    let audience = json!({
        "minLength": 1,
        "maxLength": task::MAX_OIDC_AUDIENCE_CHARS,
        "pattern": "^[^\\x00-\\x1F\\x7F-\\x9F]*[^\\s\\x00-\\x1F\\x7F-\\x9F][^\\x00-\\x1F\\x7F-\\x9F]*$",
    });
    constrain(schemas, "OidcSpec", "audience", audience);
    schemas["PayloadSpec"]["not"] = json!({
        "description": "At most one of body, body_base64 and json",
        "anyOf": two_bodies(),
    });
    schemas["CreateTask"]["not"] = json!({
        "description": "A push task (with a target) carries no payload or tag",
        "required": ["target"],
        "properties": {"target": {"not": {"type": "null"}}},
        "anyOf": [
            {"required": ["payload"], "properties": {"payload": {"not": {"type": "null"}}}},
            {"required": ["tag"], "properties": {"tag": {"not": {"type": "null"}}}},
        ],
    });
    constrain(
        schemas,
        "CreateTasks",
        "tasks",
        json!({"minItems": 1, "maxItems": MAX_BATCH_TASKS}),
    );
    schemas["RedriveTasks"]["properties"]["state"] = json!({
        "type": ["string", "null"],
        "enum": ["failed", "cancelled", null],
        "description": "`failed` (the default) or `cancelled`.",
    });
    schemas["CreateQueue"]["not"] = json!({
        "description": "Only a pull queue can be person-only",
        "required": ["person_only"],
        "properties": {"person_only": {"const": true}},
        "not": {"required": ["mode"], "properties": {"mode": {"const": "pull"}}},
    });
    callbacks(schemas);
    header_styles(schemas);
    let webhook_events: Vec<&str> = idem_core::event::EventType::ALL
        .into_iter()
        .filter(|e| e.is_webhook_event())
        .map(|e| e.as_str())
        .collect();
    schemas["CreateWebhook"]["properties"]["events"]["items"] =
        json!({"type": "string", "enum": webhook_events});
    let schedule = json!({"pattern": idem_core::schedule::schedule_pattern()});
    for name in ["CreateJob", "UpdateJob", "PreviewRequest"] {
        constrain(schemas, name, "schedule", schedule.clone());
    }
    let zones = json!({"enum": idem_core::schedule::time_zone_names()});
    constrain(schemas, "CreateJob", "time_zone", zones.clone());
    constrain(schemas, "UpdateJob", "time_zone", zones.clone());
    constrain(schemas, "PreviewRequest", "time_zone", zones);
    constrain(
        schemas,
        "CreateTask",
        "schedule_time",
        json!({"pattern": task::SCHEDULE_TIME_PATTERN}),
    );
}

/// How one answer leads to the next request: a queue to its tasks, a task
/// to its claim, a claim to what its holder does with the lease. Clients
/// and stateful testers follow them from a created queue to the pull
/// routes.
fn links(paths: &mut Value) {
    let task = json!({
        "path.queue": "$response.body#/queue",
        "path.task_id": "$response.body#/task_id",
    });
    let mut link = |path: &str, method: &str, status: &str, name: &str, link: Value| {
        let response = &mut paths[path][method]["responses"][status];
        assert!(response.is_object(), "{method} {path} answers {status}");
        response["links"][name] = link;
    };
    link(
        "/v1/queues",
        "post",
        "201",
        "CreateTask",
        json!({"operationId": "createTask", "parameters": {"path.queue": "$response.body#/name"}}),
    );
    link(
        "/v1/queues",
        "post",
        "201",
        "ClaimTasks",
        json!({"operationId": "claimTasks", "parameters": {"path.queue": "$response.body#/name"}}),
    );
    for (name, operation) in [("GetTask", "getTask"), ("ClaimTask", "claimTask")] {
        link(
            "/v1/queues/{queue}/tasks",
            "post",
            "201",
            name,
            json!({"operationId": operation, "parameters": task}),
        );
    }
    for (name, operation) in [
        ("HeartbeatTask", "heartbeatTask"),
        ("CompleteTask", "completeTask"),
        ("FailTask", "failTask"),
        ("ReleaseTask", "releaseTask"),
    ] {
        link(
            "/v1/queues/{queue}/tasks/{task_id}/claim",
            "post",
            "200",
            name,
            json!({
                "operationId": operation,
                "parameters": task,
                "requestBody": {"attempt_id": "$response.body#/lease/attempt_id"},
            }),
        );
    }
}

/// Points every `$ref` to `from` inside `schema.property` at `to`.
fn retarget(schemas: &mut Map<String, Value>, schema: &str, property: &str, from: &str, to: &str) {
    // Every `$ref` is visited (no short circuit); true when one matched.
    fn walk(v: &mut Value, from: &str, to: &str) -> bool {
        let mut found = false;
        match v {
            Value::Object(o) => {
                if o.get("$ref").and_then(Value::as_str) == Some(from) {
                    o.insert("$ref".into(), to.into());
                    found = true;
                }
                for child in o.values_mut() {
                    found |= walk(child, from, to);
                }
            }
            Value::Array(a) => {
                for child in a {
                    found |= walk(child, from, to);
                }
            }
            _ => {}
        }
        found
    }
    let slot = &mut schemas[schema]["properties"][property];
    let (from, to) = (
        schema_ref(from)["$ref"].clone(),
        schema_ref(to)["$ref"].clone(),
    );
    let found = walk(slot, from.as_str().unwrap(), to.as_str().unwrap());
    assert!(found, "{schema}.{property} refers to {from}");
}

/// A callback is a target whose body is the event: it gives none, and its
/// method carries one (`idem_core::event::resolve_callback`).
fn callbacks(schemas: &mut Map<String, Value>) {
    let mut callback = schemas["TargetSpec"].clone();
    let object = callback.as_object_mut().expect("a schema object");
    object.insert("not".into(), target_conflicts(false));
    object.insert(
        "description".into(),
        "Where a completion event goes: a target without a body (the event is the body), \
         sent with POST (the default), PUT or PATCH."
            .into(),
    );
    let properties = object["properties"]
        .as_object_mut()
        .expect("a target has properties");
    for body in ["body", "body_base64", "json"] {
        properties.remove(body);
    }
    let methods = ["POST", "PUT", "PATCH"].map(case_insensitive).join("|");
    properties["method"] =
        json!({"type": ["string", "null"], "pattern": format!("^(?:{methods})$")});
    schemas.insert("CallbackSpec".into(), callback);
    for schema in ["CreateQueue", "QueueConfigPatch", "CreateTask"] {
        for property in ["on_success", "on_failure"] {
            retarget(schemas, schema, property, "TargetSpec", "CallbackSpec");
        }
    }
}

/// `cloud_scheduler` headers are a job's, `cloud_tasks` a task's: each
/// request names the styles it takes.
fn header_styles(schemas: &mut Map<String, Value>) {
    use idem_core::job::HeaderStyle;
    let style = |other: HeaderStyle, what: &str| {
        json!({
            "type": "string",
            "enum": [HeaderStyle::Idem.as_str(), other.as_str()],
            "description": format!("Which compatibility headers {what} carry besides Idem's own."),
        })
    };
    schemas.insert(
        "TaskHeaderStyle".into(),
        style(HeaderStyle::CloudTasks, "a task's deliveries"),
    );
    schemas.insert(
        "JobHeaderStyle".into(),
        style(HeaderStyle::CloudScheduler, "a job's runs"),
    );
    for schema in ["CreateQueue", "QueueConfigPatch", "CreateTask"] {
        retarget(
            schemas,
            schema,
            "header_style",
            "HeaderStyle",
            "TaskHeaderStyle",
        );
    }
    for schema in ["CreateJob", "UpdateJob"] {
        retarget(
            schemas,
            schema,
            "header_style",
            "HeaderStyle",
            "JobHeaderStyle",
        );
    }
}

/// `[Pp][Oo][Ss][Tt]`: the word in either case, as a pattern (its other
/// characters are letters, digits and `-`, which stand for themselves).
fn case_insensitive(word: &str) -> String {
    word.chars()
        .map(|c| {
            if c.is_ascii_alphabetic() {
                format!("[{}{}]", c.to_ascii_uppercase(), c.to_ascii_lowercase())
            } else {
                c.to_string()
            }
        })
        .collect()
}

/// `name` is given: present and not null.
fn given(name: &str) -> Value {
    json!({"required": [name], "properties": {name: {"not": {"type": "null"}}}})
}

/// An object (a target or a payload) that gives a body: `body` or
/// `body_base64`, or `json`, which is given whenever present (`null` is a
/// JSON body).
fn has_body() -> Value {
    json!({"type": "object", "anyOf": [given("body"), given("body_base64"), {"required": ["json"]}]})
}

/// A target whose method sends no body: GET or HEAD, in any case.
fn bodiless_method() -> Value {
    let no_body = ["GET", "HEAD"].map(case_insensitive).join("|");
    json!({
        "required": ["method"],
        "properties": {"method": {"type": "string", "pattern": format!("^(?:{no_body})$")}},
    })
}

/// At most one of `body`, `body_base64` and `json`, as given.
fn two_bodies() -> Vec<Value> {
    let json_given = json!({"required": ["json"]});
    vec![
        json!({"allOf": [given("body"), given("body_base64")]}),
        json!({"allOf": [given("body"), json_given]}),
        json!({"allOf": [given("body_base64"), json_given]}),
    ]
}

/// The target rules that span two fields (`TargetSpec::resolve`), each a
/// case the schema's `not` refuses: two bodies, a body on GET or HEAD, a
/// `Content-Type` that is not JSON beside `json`, and an `Authorization`
/// header beside `oidc`.
fn target_conflicts(with_bodies: bool) -> Value {
    let header = |name: &str| format!("^{}$", case_insensitive(name));
    let oidc_and_authorization = json!({
        "required": ["oidc", "headers"],
        "properties": {
            "oidc": {"type": "object"},
            "headers": {"not": {"propertyNames": {"not": {"pattern": header("Authorization")}}}},
        },
    });
    if !with_bodies {
        return json!({
            "description": "No Authorization header with oidc, which sends it",
            "anyOf": [oidc_and_authorization],
        });
    }
    let json_media = format!(
        "^[\\t ]*(?:{}/{}|[^;]*\\+{})[\\t ]*(?:;.*)?$",
        case_insensitive("application"),
        case_insensitive("json"),
        case_insensitive("json")
    );
    json!({
        "description": "At most one of body, body_base64 and json; none on GET or HEAD; \
            no Content-Type but JSON with json; no Authorization header with oidc",
        "anyOf": two_bodies().into_iter().chain([
            json!({"allOf": [bodiless_method(), has_body()]}),
            json!({
                "required": ["json", "headers"],
                "properties": {"headers": {"not": {"patternProperties": {
                    header("Content-Type"): {"pattern": json_media},
                }}}},
            }),
            oidc_and_authorization,
        ]).collect::<Vec<_>>(),
    })
}

pub fn document(ops: &[Operation], request_id_header: &str) -> Value {
    let components = ComponentsBuilder::new()
        .schema_from::<Queue>()
        .schema_from::<QueueStats>()
        .schema_from::<TaskCounts>()
        .schema_from::<Group>()
        .schema_from::<Task>()
        .schema_from::<Target>()
        .schema_from::<Principal>()
        .schema_from::<ApiKey>()
        .schema_from::<NewApiKey>()
        .schema_from::<Organization>()
        .schema_from::<SigningSecret>()
        .schema_from::<SigningSecrets>()
        .schema_from::<CreateWebhook>()
        .schema_from::<Webhook>()
        .schema_from::<EventType>()
        .schema_from::<TaskEvent>()
        .schema_from::<JobRunEvent>()
        .schema_from::<Purged>()
        .schema_from::<RedriveTasks>()
        .schema_from::<Redriven>()
        .schema_from::<RateLimits>()
        .schema_from::<RateLimitsPatch>()
        .schema_from::<RetryConfig>()
        .schema_from::<RetryConfigPatch>()
        .schema_from::<QueueConfigPatch>()
        .schema_from::<CreateTask>()
        .schema_from::<CreateTasks>()
        .schema(BatchResults::name(), batch_results_schema())
        .schema(super::work::EndedTasks::name(), ended_tasks_schema())
        .schema_from::<TargetSpec>()
        .schema_from::<Attempt>()
        .schema_from::<AttemptResponse>()
        .schema_from::<QueueState>()
        .schema_from::<TaskState>()
        .schema_from::<Role>()
        .schema_from::<PrincipalKind>()
        .schema_from::<CreateQueue>()
        .schema_from::<CreatePrincipal>()
        .schema_from::<UpdatePrincipal>()
        .schema_from::<CreateOrganization>()
        .schema_from::<IdempotencyKey>()
        .schema_from::<Resource>()
        .schema_from::<Job>()
        .schema_from::<Run>()
        .schema_from::<CreateJob>()
        .schema_from::<UpdateJob>()
        .schema_from::<JobRetryConfig>()
        .schema_from::<JobRetryConfigPatch>()
        .schema_from::<JobState>()
        .schema_from::<RunKind>()
        .schema_from::<HeaderStyle>()
        .schema_from::<CatchUp>()
        .schema_from::<PreviewRequest>()
        .schema_from::<Preview>()
        .schema_from::<Oidc>()
        .schema_from::<OidcSpec>()
        .schema_from::<OpenIdConfiguration>()
        .schema_from::<Jwks>()
        .schema_from::<Jwk>()
        .schema_from::<QueueMode>()
        .schema_from::<GroupOrder>()
        .schema_from::<PayloadSpec>()
        .schema_from::<Payload>()
        .schema_from::<Lease>()
        .schema_from::<ClaimTasks>()
        .schema_from::<ClaimedTasks>()
        .schema_from::<ClaimTask>()
        .schema_from::<Heartbeat>()
        .schema_from::<CompleteTask>()
        .schema_from::<FailTask>()
        .schema_from::<EndTasks>()
        .schema_from::<EndTask>()
        .schema_from::<ReleaseTask>()
        .schema_from::<ReassignTask>()
        .schema_from::<AssignTask>()
        .schema(List::<Job>::name(), list_schema::<Job>())
        .schema(List::<Run>::name(), list_schema::<Run>())
        .schema(List::<Queue>::name(), list_schema::<Queue>())
        .schema(List::<Group>::name(), list_schema::<Group>())
        .schema(List::<Task>::name(), list_schema::<Task>())
        .schema(List::<Attempt>::name(), list_schema::<Attempt>())
        .schema(List::<Principal>::name(), list_schema::<Principal>())
        .schema(List::<ApiKey>::name(), list_schema::<ApiKey>())
        .schema(List::<Webhook>::name(), list_schema::<Webhook>())
        .schema("Problem", problem_schema())
        .security_scheme(
            "bearer",
            SecurityScheme::Http(HttpBuilder::new().scheme(HttpAuthScheme::Bearer).build()),
        )
        .build();
    let mut components = serde_json::to_value(components).expect("the components serialize");
    input_rules(
        components["schemas"]
            .as_object_mut()
            .expect("the components have schemas"),
    );
    components["headers"] = headers();
    let mut paths = unversioned_paths();
    for op in ops {
        let method = op.method.as_str().to_ascii_lowercase();
        paths[op.path][method] = operation(op, request_id_header);
    }
    links(&mut paths);
    json!({
        "openapi": "3.1.0",
        "info": {
            "title": "Idem",
            "version": env!("CARGO_PKG_VERSION"),
            "description": "Task queue and cron scheduler that turns at-least-once delivery into exactly-once effects. Every error is a problem document (RFC 9457) whose `type` is one of the codes of docs/ERRORS.md; each operation lists those it may answer.",
        },
        "paths": paths,
        "components": components,
    })
}

/// `docs/ERRORS.md`: every problem code with its status, its meaning and
/// the operations that may answer it, as the document lists them.
#[cfg(test)]
fn error_catalogue(ops: &[Operation]) -> String {
    let mut out = String::from(
        "# Error codes\n\n\
         <!-- Generated from the code (`ProblemCode` and the operation table); \
         `IDEM_BLESS=1 cargo test -p idem-server error_catalogue` rewrites it. -->\n\n\
         Every error Idem answers is a problem document (RFC 9457,\n\
         `Content-Type: application/problem+json`) whose `type` is one of these codes:\n\n\
         ```json\n\
         {\"type\": \"TASK_ALREADY_EXISTS\", \"title\": \"Conflict\", \"status\": 409,\n \
         \"detail\": \"task 'payment-12345' exists in queue 'payments'\",\n \
         \"request_id\": \"…\", \"instance\": \"/v1/queues/payments/tasks\",\n \
         \"extensions\": {\"task\": {\"id\": \"payment-12345\", \"state\": \"succeeded\"}}}\n\
         ```\n\n\
         The OpenAPI document (`GET /openapi.json`) lists, for each operation, the\n\
         codes it may answer under each status.\n\n\
         | code | status |\n| --- | --- |\n",
    );
    for code in ProblemCode::ALL {
        let status = code.status();
        out.push_str(&format!(
            "| [`{code}`](#{}) | {} {} |\n",
            code.as_str().to_ascii_lowercase(),
            status.as_u16(),
            status.canonical_reason().unwrap_or("")
        ));
    }
    for code in ProblemCode::ALL {
        let status = code.status();
        out.push_str(&format!(
            "\n## {code}\n\n{} {}. {}\n",
            status.as_u16(),
            status.canonical_reason().unwrap_or(""),
            code.meaning()
        ));
        let answered_by: Vec<&str> = ops
            .iter()
            .filter(|op| problems(op).contains(code))
            .map(|op| op.id)
            .collect();
        if answered_by.len() == ops.len() {
            out.push_str("\nAnswered by: every operation.\n");
        } else if !answered_by.is_empty() {
            out.push_str(&format!(
                "\nAnswered by: {}.\n",
                answered_by
                    .iter()
                    .map(|id| format!("`{id}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ));
        }
    }
    out
}

/// `{"results": [...]}`: one result per item, in request order.
fn batch_results_schema() -> utoipa::openapi::schema::Object {
    item_results_schema(
        "201 with the task created; 409 (TASK_ALREADY_EXISTS) with the problem and the \
         task holding the ID, or (FAILED_PRECONDITION) a task of the other kind than the \
         queue's mode; 400 with the problem naming the item's fields as tasks[i].…; \
         on a replay, 410 (IDEMPOTENT_RESOURCE_GONE) for a task gone since",
        &[201, 400, 409, 410],
        1000,
    )
}

fn ended_tasks_schema() -> utoipa::openapi::schema::Object {
    item_results_schema(
        "200 with the task as the end left it; otherwise the problem the task's own \
         complete or fail would answer: 409 (LEASE_LOST) for an attempt that no longer holds \
         its task, 404 for a task that does not exist, 403 (USER_IDENTITY_REQUIRED) if the \
         queue became person-only meanwhile, 503 if the store could not take it",
        &[200, 403, 404, 409, 503],
        100,
    )
}

/// `{"results": [...]}`: one result per item of a request, in its order.
fn item_results_schema(
    description: &str,
    statuses: &[u16],
    max: usize,
) -> utoipa::openapi::schema::Object {
    use utoipa::openapi::Ref;
    use utoipa::openapi::schema::{ArrayBuilder, ObjectBuilder, Type};
    let result = ObjectBuilder::new()
        .description(Some(description))
        .property(
            "status",
            ObjectBuilder::new()
                .schema_type(Type::Integer)
                .enum_values(Some(statuses.iter().copied())),
        )
        .required("status")
        .property("task", Ref::from_schema_name(<Task as BodySchema>::name()))
        .property("problem", Ref::from_schema_name("Problem"));
    ObjectBuilder::new()
        .property(
            "results",
            ArrayBuilder::new()
                .items(result)
                .min_items(Some(1))
                .max_items(Some(max)),
        )
        .required("results")
        .build()
}

fn list_schema<T: BodySchema>() -> utoipa::openapi::schema::Object {
    use utoipa::openapi::schema::{ArrayBuilder, ObjectBuilder, Type};
    ObjectBuilder::new()
        .property(
            "items",
            ArrayBuilder::new().items(utoipa::openapi::Ref::from_schema_name(T::name())),
        )
        .required("items")
        .property(
            "next_page_token",
            ObjectBuilder::new().schema_type(utoipa::openapi::schema::SchemaType::from_iter([
                Type::String,
                Type::Null,
            ])),
        )
        .required("next_page_token")
        .build()
}

fn problem_schema() -> utoipa::openapi::schema::Object {
    use utoipa::openapi::schema::{ObjectBuilder, SchemaType, Type};
    ObjectBuilder::new()
        .property("type", ObjectBuilder::new().schema_type(Type::String))
        .property("title", ObjectBuilder::new().schema_type(Type::String))
        .property("status", ObjectBuilder::new().schema_type(Type::Integer))
        .property("detail", ObjectBuilder::new().schema_type(Type::String))
        // Null in the problems of a batch's items, which are answered
        // inside the batch's own response.
        .property(
            "request_id",
            ObjectBuilder::new().schema_type(SchemaType::from_iter([Type::String, Type::Null])),
        )
        .property(
            "instance",
            ObjectBuilder::new().schema_type(SchemaType::from_iter([Type::String, Type::Null])),
        )
        .property("extensions", ObjectBuilder::new().schema_type(Type::Object))
        .required("type")
        .required("status")
        .build()
}

#[cfg(test)]
mod tests {
    /// `docs/ERRORS.md` is generated; set `IDEM_BLESS=1` to rewrite it.
    #[test]
    fn the_error_catalogue_in_docs_is_current() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/ERRORS.md");
        let want = super::error_catalogue(&super::super::catalog());
        if std::env::var_os("IDEM_BLESS").is_some() {
            std::fs::write(path, &want).unwrap();
        }
        let have = std::fs::read_to_string(path).unwrap_or_default();
        assert!(
            have == want,
            "docs/ERRORS.md is out of date: run IDEM_BLESS=1 cargo test -p idem-server error_catalogue"
        );
    }

    /// Complete, fail and `tasks:end` are a person's only on a queue
    /// created `person_only`, and the document says so, with their 403.
    #[test]
    fn work_ends_are_marked_person_only_when_the_queue_is() {
        let ops = super::super::catalog();
        let doc = super::document(&ops, "x-fc-request-id");
        for (path, method) in [
            ("/v1/queues/{queue}/tasks/{task_id}/complete", "post"),
            ("/v1/queues/{queue}/tasks/{task_id}/fail", "post"),
            ("/v1/queues/{queue}/tasks:end", "post"),
        ] {
            let op = &doc["paths"][path][method];
            assert_eq!(
                op["x-person-only"], "when the queue is person_only",
                "{path}"
            );
            assert!(op["responses"]["403"].is_object(), "{path}");
        }
        let claim = &doc["paths"]["/v1/queues/{queue}/tasks:claim"]["post"];
        assert!(claim.is_object() && claim.get("x-person-only").is_none());
    }

    #[test]
    fn every_schema_an_operation_names_is_in_the_document() {
        let ops = super::super::catalog();
        let doc = super::document(&ops, "x-fc-request-id");
        let schemas = doc["components"]["schemas"].as_object().unwrap();
        for op in &ops {
            let request = op.io.request.as_ref().map(|r| &r.schema);
            for name in [request, op.io.response.schema.as_ref()]
                .into_iter()
                .flatten()
            {
                assert!(schemas.contains_key(name.as_ref()), "{}: {name}", op.id);
            }
        }
    }

    #[test]
    fn the_openid_routes_are_described_without_authentication() {
        let doc = super::document(&super::super::catalog(), "x-fc-request-id");
        for (path, id, schema) in [
            (
                "/.well-known/openid-configuration",
                "getOpenIdConfiguration",
                "OpenIdConfiguration",
            ),
            ("/.well-known/jwks.json", "getJwks", "Jwks"),
        ] {
            let op = &doc["paths"][path]["get"];
            assert_eq!(op["operationId"], id);
            assert!(op.get("security").is_none(), "{path} needs no key");
            assert_eq!(
                op["responses"]["200"]["content"]["application/json"]["schema"]["$ref"],
                format!("#/components/schemas/{schema}")
            );
        }
        let target = &doc["components"]["schemas"]["TargetSpec"]["properties"];
        assert!(target.get("oidc").is_some());
    }

    #[test]
    fn the_batch_create_takes_json_and_ndjson_and_describes_its_results() {
        let doc = super::document(&super::super::catalog(), "x-fc-request-id");
        let batch = &doc["paths"]["/v1/queues/{queue}/tasks:batch"]["post"];
        assert_eq!(batch["x-idempotent"], true);
        let content = &batch["requestBody"]["content"];
        assert_eq!(
            content["application/json"]["schema"]["$ref"],
            "#/components/schemas/CreateTasks"
        );
        assert_eq!(
            content["application/x-ndjson"]["x-item-schema"]["$ref"],
            "#/components/schemas/CreateTask"
        );
        assert_eq!(
            batch["responses"]["200"]["content"]["application/json"]["schema"]["$ref"],
            "#/components/schemas/TaskBatchResults"
        );
        let results = &doc["components"]["schemas"]["TaskBatchResults"]["properties"]["results"];
        assert_eq!(
            results["items"]["properties"]["task"]["$ref"],
            "#/components/schemas/TaskView"
        );
        let query: Vec<&str> = batch["parameters"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|p| p["in"] == "query")
            .map(|p| p["name"].as_str().unwrap())
            .collect();
        assert_eq!(query, ["atomic"]);
    }

    #[test]
    fn the_task_list_s_filters_and_the_redrives_are_described() {
        let doc = super::document(&super::super::catalog(), "x-fc-request-id");
        let list = &doc["paths"]["/v1/queues/{queue}/tasks"]["get"];
        let names: Vec<&str> = list["parameters"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|p| p["in"] == "query")
            .map(|p| p["name"].as_str().unwrap())
            .collect();
        assert_eq!(
            names,
            [
                "limit",
                "page_token",
                "state",
                "id_prefix",
                "created_after",
                "created_before"
            ]
        );
        let bulk = &doc["paths"]["/v1/queues/{queue}/tasks:redrive"]["post"];
        assert_eq!(bulk["x-idempotent"], true);
        assert_eq!(bulk["requestBody"]["required"], false);
        let one = &doc["paths"]["/v1/queues/{queue}/tasks/{task_id}/redrive"]["post"];
        assert_eq!(one["x-idempotent"], true);
        assert_eq!(one["operationId"], "redriveTask");
    }

    fn doc() -> serde_json::Value {
        super::document(&super::super::catalog(), "x-request-id")
    }

    fn param<'a>(op: &'a serde_json::Value, name: &str) -> &'a serde_json::Value {
        op["parameters"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["name"] == name)
            .unwrap_or_else(|| panic!("{} has no parameter {name}", op["operationId"]))
    }

    #[test]
    fn a_create_task_shows_its_headers_its_waits_and_its_multipart_body() {
        let doc = doc();
        let create = &doc["paths"]["/v1/queues/{queue}/tasks"]["post"];
        for header in [
            "Idempotency-Key",
            "Idem-Task-Id",
            "X-Fc-Stateful-Async-Invocation-Id",
            // The server's configured request-ID header.
            "x-request-id",
        ] {
            assert_eq!(param(create, header)["in"], "header", "{header}");
        }
        let wait = &param(create, "wait_ms")["schema"];
        assert_eq!(
            (&wait["minimum"], &wait["maximum"]),
            (&1.into(), &30000.into())
        );
        for status in ["200", "201", "202"] {
            let r = &create["responses"][status];
            assert_eq!(
                r["content"]["application/json"]["schema"]["$ref"],
                "#/components/schemas/TaskView"
            );
            for h in ["Location", "Idem-Request-Id", "Idempotent-Replayed"] {
                assert!(r["headers"][h].is_object(), "{status} {h}");
            }
        }
        let multipart = &create["requestBody"]["content"]["multipart/form-data"]["schema"];
        assert_eq!(multipart["required"], serde_json::json!(["task"]));
        let conflict = &create["responses"]["409"]["content"]["application/problem+json"];
        let codes = &conflict["schema"]["properties"]["type"]["enum"];
        assert_eq!(
            codes,
            &serde_json::json!([
                "IDEMPOTENCY_KEY_IN_PROGRESS",
                "TASK_ALREADY_EXISTS",
                "FAILED_PRECONDITION"
            ])
        );
        assert!(create["responses"]["409"]["headers"]["Retry-After"].is_object());
    }

    #[test]
    fn every_operation_lists_its_problems_and_no_catch_all() {
        let ops = super::super::catalog();
        let doc = doc();
        for op in &ops {
            let o = &doc["paths"][op.path][op.method.as_str().to_ascii_lowercase()];
            let responses = o["responses"].as_object().unwrap();
            assert!(!responses.contains_key("default"), "{}", op.id);
            for code in super::problems(op) {
                let status = code.status().as_u16().to_string();
                let enumerated = &responses[&status]["content"]["application/problem+json"]["schema"]
                    ["properties"]["type"]["enum"];
                assert!(
                    enumerated
                        .as_array()
                        .unwrap()
                        .contains(&code.as_str().into()),
                    "{} {status} {code}",
                    op.id
                );
            }
            if op.authenticated {
                assert!(responses.contains_key("401") && responses.contains_key("503"));
            }
            if op.idempotent {
                assert_eq!(param(o, "Idempotency-Key")["in"], "header");
                assert!(responses.contains_key("422"), "{}", op.id);
            }
            if op.path.contains('{') {
                assert!(responses.contains_key("404"), "{}", op.id);
            }
            if op.io.request.is_some() {
                assert!(responses.contains_key("415") && responses.contains_key("413"));
            }
        }
        for path in ["/healthz", "/readyz", "/metrics", "/openapi.json"] {
            assert!(
                doc["paths"][path]["get"]["responses"]["200"].is_object(),
                "{path}"
            );
        }
    }

    #[test]
    fn the_schemas_carry_the_rules_the_server_checks() {
        let doc = doc();
        let schemas = &doc["components"]["schemas"];
        for (schema, field) in [
            ("CreateQueue", "dispatch_deadline_s"),
            ("QueueConfigPatch", "dispatch_deadline_s"),
            ("CreateTask", "dispatch_deadline_s"),
            ("CreateJob", "attempt_deadline_s"),
        ] {
            let p = &schemas[schema]["properties"][field];
            assert_eq!(
                (&p["minimum"], &p["maximum"]),
                (&1.into(), &1800.into()),
                "{schema}"
            );
        }
        let name = &schemas["CreateQueue"]["properties"]["name"];
        assert_eq!(name["pattern"], "^[A-Za-z0-9_-]+$");
        assert_eq!(name["maxLength"], 100);
        assert_eq!(
            schemas["CreateTask"]["properties"]["task_id"]["maxLength"],
            500
        );
        // Any JSON value, and so no type.
        for target in ["TargetSpec", "TargetView"] {
            assert!(schemas[target]["properties"]["json"].get("type").is_none());
        }
        let spec = &schemas["TargetSpec"];
        // Two bodies (three pairs), a body on GET or HEAD, a Content-Type
        // beside json, Authorization beside oidc.
        assert_eq!(spec["not"]["anyOf"].as_array().unwrap().len(), 6);
        let method = regex_lite_match(spec["properties"]["method"]["pattern"].as_str().unwrap());
        assert!(method("patch") && method("GET") && !method("TRACE"));
    }

    #[test]
    fn requests_name_only_what_the_server_takes_and_answers_lead_to_the_pull_routes() {
        use serde_json::{Value, json};
        let doc = super::document(&super::super::catalog(), "x-fc-request-id");
        let schemas = &doc["components"]["schemas"];
        // A callback's body is the event: it gives none.
        let callback = &schemas["CallbackSpec"]["properties"];
        for body in ["body", "body_base64", "json"] {
            assert!(callback.get(body).is_none(), "{body}");
        }
        let on_success = schemas["CreateTask"]["properties"]["on_success"].to_string();
        assert!(on_success.contains("CallbackSpec") && !on_success.contains("TargetSpec"));
        // Each resource its own header styles; webhooks their own events.
        assert_eq!(
            schemas["TaskHeaderStyle"]["enum"],
            json!(["idem", "cloud_tasks"])
        );
        assert_eq!(
            schemas["JobHeaderStyle"]["enum"],
            json!(["idem", "cloud_scheduler"])
        );
        let events = &schemas["CreateWebhook"]["properties"]["events"]["items"]["enum"];
        assert_eq!(events, &json!(["task.failed", "job.run_failed"]));
        // Time zones the parser takes, null included where the field is.
        let zones = schemas["PreviewRequest"]["properties"]["time_zone"]["enum"]
            .as_array()
            .unwrap();
        assert!(zones.contains(&json!("Europe/Berlin")) && zones.contains(&Value::Null));
        assert!(!zones.contains(&json!("Mars/Olympus")));
        assert!(schemas["CreateJob"]["properties"]["schedule"]["pattern"].is_string());
        // Page tokens by list.
        let token = |path: &str| {
            doc["paths"][path]["get"]["parameters"]
                .as_array()
                .unwrap()
                .iter()
                .find(|p| p["name"] == "page_token")
                .map(|p| p["schema"]["pattern"].clone())
                .unwrap()
        };
        assert_eq!(
            token("/v1/queues/{queue}/tasks/{task_id}/attempts"),
            "^[0-9]{0,9}$"
        );
        assert_eq!(
            token("/v1/queues"),
            super::super::extract::PAGE_TOKEN_PATTERN
        );
        // A created queue leads to its tasks, a task to its claim, a claim
        // to what its holder does with the lease.
        let queue_links = &doc["paths"]["/v1/queues"]["post"]["responses"]["201"]["links"];
        assert_eq!(queue_links["CreateTask"]["operationId"], "createTask");
        let claim_links = &doc["paths"]["/v1/queues/{queue}/tasks/{task_id}/claim"]["post"]["responses"]
            ["200"]["links"];
        for op in ["heartbeatTask", "completeTask", "failTask", "releaseTask"] {
            assert!(
                claim_links
                    .as_object()
                    .unwrap()
                    .values()
                    .any(|l| l["operationId"] == op
                        && l["requestBody"]["attempt_id"] == "$response.body#/lease/attempt_id"),
                "{op}"
            );
        }
    }

    /// The method pattern is alternatives of case-insensitive letters, so
    /// a value matches when it is one of them spelled in any case.
    fn regex_lite_match(pattern: &str) -> impl Fn(&str) -> bool {
        let alternatives: Vec<String> = pattern
            .trim_start_matches("^(?:")
            .trim_end_matches(")$")
            .split('|')
            .map(|a| a.chars().filter(|c| c.is_ascii_uppercase()).collect())
            .collect();
        move |v| alternatives.iter().any(|a| a == &v.to_ascii_uppercase())
    }

    /// The document's request and response schemas are those of the types
    /// the handler takes and answers: `createQueue`'s are `queues::create`'s
    /// `Json<CreateQueue>` and `Created<Queue>`.
    #[test]
    fn an_operation_s_schemas_are_its_handler_s_types() {
        use super::super::signature::{Also, io_of};
        use super::super::{batch, queues, tasks, tenancy, work};
        use http::StatusCode;
        use idem_api::{CreateQueue, CreateTask, Queue};
        use utoipa::ToSchema;
        let schema = |name: &str| format!("#/components/schemas/{name}");

        let io = io_of(&queues::create);
        let request = io.request.expect("queues::create reads a body");
        assert_eq!(request.schema, CreateQueue::name());
        assert!(!request.optional && request.also == Also::Nothing);
        assert_eq!(io.response.status, StatusCode::CREATED);
        assert_eq!(io.response.schema, Some(Queue::name()));
        assert!(io.response.located);
        let doc = doc();
        let create = &doc["paths"]["/v1/queues"]["post"];
        assert_eq!(
            create["requestBody"]["content"]["application/json"]["schema"]["$ref"],
            schema(&CreateQueue::name())
        );
        assert_eq!(
            create["responses"]["201"]["content"]["application/json"]["schema"]["$ref"],
            schema("QueueView")
        );

        let list = io_of(&queues::list).response;
        assert_eq!(list.schema.as_deref(), Some("QueueList"));
        assert!(list.paged);
        let delete = io_of(&queues::delete);
        assert!(delete.request.is_none());
        assert_eq!(delete.response.status, StatusCode::NO_CONTENT);
        assert!(delete.response.schema.is_none());

        let task = io_of(&tasks::create);
        let request = task.request.expect("tasks::create reads a body");
        assert_eq!(request.schema, CreateTask::name());
        assert_eq!(request.also, Also::Multipart);
        assert!(task.response.waits && task.response.located);
        let batch = io_of(&batch::create);
        assert_eq!(
            batch.request.expect("a batch").also,
            Also::Ndjson(CreateTask::name())
        );
        assert_eq!(batch.response.schema.as_deref(), Some("TaskBatchResults"));
        let ended = io_of(&work::end_many).response;
        assert_eq!(ended.schema.as_deref(), Some("EndedTasks"));
        assert!(
            io_of(&tasks::redrive_many)
                .request
                .expect("a body")
                .optional
        );
        let organization = io_of(&tenancy::create_organization).response;
        assert_eq!(organization.status, StatusCode::CREATED);
        assert!(!organization.located);
    }

    /// Schemathesis found it: an organization has no route to read it, so
    /// its 201 has no `Location`, and the document must not promise one.
    #[test]
    fn only_creates_with_a_readable_resource_promise_a_location() {
        let doc = doc();
        let org = &doc["paths"]["/v1/organizations"]["post"]["responses"]["201"];
        assert!(org["headers"].get("Location").is_none());
        let queue = &doc["paths"]["/v1/queues"]["post"]["responses"]["201"];
        assert!(queue["headers"]["Location"].is_object());
    }

    /// Schemathesis found `createWebhook` answering an undocumented 429:
    /// every creation an organization's quota bounds lists it.
    #[test]
    fn every_create_a_quota_bounds_documents_its_429() {
        let doc = doc();
        for (path, quota) in [
            ("/v1/queues", "queues"),
            ("/v1/jobs", "jobs"),
            ("/v1/principals", "principals"),
            ("/v1/principals/{name}/keys", "API keys"),
            ("/v1/signing-secrets/rotate", "signing secrets"),
            ("/v1/webhooks", "event webhooks"),
        ] {
            let r = &doc["paths"][path]["post"]["responses"]["429"];
            let codes = &r["content"]["application/problem+json"]["schema"]["properties"]["type"];
            assert_eq!(
                codes["enum"],
                serde_json::json!(["RESOURCE_EXHAUSTED"]),
                "{quota}"
            );
        }
    }
}
