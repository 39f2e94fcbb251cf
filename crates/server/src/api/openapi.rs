//! The OpenAPI 3.1 document, built from the operation table and the
//! request and response types' derived schemas.

use super::Operation;
use idem_api::*;
use utoipa::openapi::extensions::ExtensionsBuilder;
use utoipa::openapi::path::{HttpMethod, OperationBuilder, ParameterBuilder, ParameterIn};
use utoipa::openapi::request_body::RequestBodyBuilder;
use utoipa::openapi::schema::ComponentsBuilder;
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityRequirement, SecurityScheme};
use utoipa::openapi::{
    ContentBuilder, InfoBuilder, OpenApi, OpenApiBuilder, PathItem, PathsBuilder, Ref, Required,
    ResponseBuilder,
};

fn method(m: &http::Method) -> HttpMethod {
    match *m {
        http::Method::GET => HttpMethod::Get,
        http::Method::POST => HttpMethod::Post,
        http::Method::PATCH => HttpMethod::Patch,
        http::Method::DELETE => HttpMethod::Delete,
        http::Method::PUT => HttpMethod::Put,
        _ => HttpMethod::Options,
    }
}

fn json_ref(name: &str) -> utoipa::openapi::Content {
    ContentBuilder::new()
        .schema(Some(Ref::from_schema_name(name)))
        .build()
}

fn path_params(path: &str) -> Vec<utoipa::openapi::path::Parameter> {
    path.split('/')
        .filter_map(|s| s.strip_prefix('{')?.strip_suffix('}'))
        .map(|name| {
            ParameterBuilder::new()
                .name(name)
                .parameter_in(ParameterIn::Path)
                .required(Required::True)
                .schema(Some(utoipa::openapi::schema::Object::with_type(
                    utoipa::openapi::schema::Type::String,
                )))
                .build()
        })
        .collect()
}

fn query_params(query: &[(&str, &str)]) -> Vec<utoipa::openapi::path::Parameter> {
    query
        .iter()
        .map(|(name, description)| {
            ParameterBuilder::new()
                .name(*name)
                .parameter_in(ParameterIn::Query)
                .required(Required::False)
                .description(Some(*description))
                .schema(Some(utoipa::openapi::schema::Object::with_type(
                    utoipa::openapi::schema::Type::String,
                )))
                .build()
        })
        .collect()
}

pub fn document(ops: &[Operation]) -> serde_json::Value {
    let mut paths = PathsBuilder::new();
    for op in ops {
        let mut b = OperationBuilder::new()
            .operation_id(Some(op.id))
            .summary(Some(op.summary))
            .parameters(Some(
                path_params(op.path)
                    .into_iter()
                    .chain(query_params(op.query)),
            ));
        if let Some(req) = op.request {
            let required = if op.request_optional {
                Required::False
            } else {
                Required::True
            };
            b = b.request_body(Some(
                RequestBodyBuilder::new()
                    .content("application/json", json_ref(req))
                    .required(Some(required))
                    .build(),
            ));
        }
        let (status, body) = op.response;
        let mut resp = ResponseBuilder::new().description(status.canonical_reason().unwrap_or(""));
        if let Some(name) = body {
            resp = resp.content("application/json", json_ref(name));
        }
        b = b.response(status.as_u16().to_string(), resp.build());
        b = b.response(
            "default",
            ResponseBuilder::new()
                .description("A problem document (RFC 9457)")
                .content("application/problem+json", json_ref("Problem"))
                .build(),
        );
        if op.authenticated {
            b = b.security(SecurityRequirement::new("bearer", Vec::<String>::new()));
        }
        if op.idempotent || op.person_only {
            let mut ext = ExtensionsBuilder::new();
            if op.idempotent {
                ext = ext.add("x-idempotent", serde_json::Value::Bool(true));
            }
            if op.person_only {
                ext = ext.add("x-person-only", serde_json::Value::Bool(true));
            }
            b = b.extensions(Some(ext.build()));
        }
        paths = paths.path(op.path, PathItem::new(method(&op.method), b.build()));
    }
    let components = ComponentsBuilder::new()
        .schema_from::<Queue>()
        .schema_from::<QueueStats>()
        .schema_from::<TaskCounts>()
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
        .schema_from::<TargetSpec>()
        .schema_from::<Attempt>()
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
        .schema("JobList", list_schema("JobView"))
        .schema("RunList", list_schema("RunView"))
        .schema("QueueList", list_schema("QueueView"))
        .schema("TaskList", list_schema("TaskView"))
        .schema("AttemptList", list_schema("Attempt"))
        .schema("PrincipalList", list_schema("PrincipalView"))
        .schema("ApiKeyList", list_schema("ApiKeyView"))
        .schema("WebhookList", list_schema("WebhookView"))
        .schema("Problem", problem_schema())
        .security_scheme(
            "bearer",
            SecurityScheme::Http(HttpBuilder::new().scheme(HttpAuthScheme::Bearer).build()),
        )
        .build();
    let doc: OpenApi = OpenApiBuilder::new()
        .info(
            InfoBuilder::new()
                .title("Idem")
                .version(env!("CARGO_PKG_VERSION"))
                .description(Some(
                    "Task queue and cron scheduler that turns at-least-once delivery into exactly-once effects.",
                ))
                .build(),
        )
        .paths(paths.build())
        .components(Some(components))
        .build();
    serde_json::to_value(doc).expect("the OpenAPI document serializes")
}

fn list_schema(item: &str) -> utoipa::openapi::schema::Object {
    use utoipa::openapi::schema::{ArrayBuilder, ObjectBuilder, Type};
    ObjectBuilder::new()
        .property(
            "items",
            ArrayBuilder::new().items(Ref::from_schema_name(item)),
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
    use utoipa::openapi::schema::{ObjectBuilder, Type};
    ObjectBuilder::new()
        .property("type", ObjectBuilder::new().schema_type(Type::String))
        .property("title", ObjectBuilder::new().schema_type(Type::String))
        .property("status", ObjectBuilder::new().schema_type(Type::Integer))
        .property("detail", ObjectBuilder::new().schema_type(Type::String))
        .property("request_id", ObjectBuilder::new().schema_type(Type::String))
        .property("instance", ObjectBuilder::new().schema_type(Type::String))
        .property("extensions", ObjectBuilder::new().schema_type(Type::Object))
        .required("type")
        .required("status")
        .build()
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_schema_an_operation_names_is_in_the_document() {
        let ops = super::super::catalog();
        let doc = super::document(&ops);
        let schemas = doc["components"]["schemas"].as_object().unwrap();
        for op in &ops {
            for name in [op.request, op.response.1].into_iter().flatten() {
                assert!(schemas.contains_key(name), "{}: {name}", op.id);
            }
        }
    }

    #[test]
    fn the_task_list_s_filters_and_the_redrives_are_described() {
        let doc = super::document(&super::super::catalog());
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
            ["state", "id_prefix", "created_after", "created_before"]
        );
        let bulk = &doc["paths"]["/v1/queues/{queue}/tasks:redrive"]["post"];
        assert_eq!(bulk["x-idempotent"], true);
        assert_eq!(bulk["requestBody"]["required"], false);
        let one = &doc["paths"]["/v1/queues/{queue}/tasks/{task_id}/redrive"]["post"];
        assert_eq!(one["x-idempotent"], true);
        assert_eq!(one["operationId"], "redriveTask");
    }
}
