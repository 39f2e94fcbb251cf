//! A handler that panics is a bug, but its client still gets a problem
//! document: 500 `INTERNAL`, carrying the request's ID, through the same
//! layers as every route ([`idem_server::edge`]).

use axum::Router;
use axum::body::Body;
use axum::routing::get;
use http::{Request, StatusCode};
use http_body_util::BodyExt;
use idem_server::Options;
use tower::ServiceExt;

#[tokio::test]
async fn a_panicking_handler_answers_a_problem_document_with_the_request_id() {
    let routes = Router::new().route(
        "/boom",
        get(|| async {
            if std::hint::black_box(true) {
                panic!("an injected bug");
            }
            "unreachable"
        }),
    );
    let service = idem_server::edge(routes, &Options::default());
    let response = service
        .oneshot(Request::get("/boom").body(Body::empty()).unwrap())
        .await
        .unwrap();
    assert_eq!(response.status(), StatusCode::INTERNAL_SERVER_ERROR);
    assert_eq!(
        response.headers()["content-type"],
        "application/problem+json"
    );
    let id = response.headers()["idem-request-id"]
        .to_str()
        .unwrap()
        .to_string();
    let body = response.into_body().collect().await.unwrap().to_bytes();
    let doc: serde_json::Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(doc["type"], "INTERNAL", "{doc}");
    assert_eq!(doc["status"], 500);
    assert_eq!(doc["request_id"], id.as_str(), "{doc}");
    assert_eq!(doc["instance"], "/boom");
    assert!(
        !doc.to_string().contains("injected"),
        "the panic's words stay in the log: {doc}"
    );
}
