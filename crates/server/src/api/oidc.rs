//! The OpenID Provider routes, without authentication: a target verifying
//! a delivery's ID token holds no API key.

use super::problem::Problem;
use crate::App;
use axum::Json;
use axum::extract::State;
use axum::response::{IntoResponse, Response};
use http::{HeaderValue, header};
use std::sync::Arc;

/// `GET /.well-known/openid-configuration`
pub async fn configuration(State(app): State<Arc<App>>) -> Response {
    cacheable(Json(app.oidc.configuration()).into_response(), 3600)
}

/// `GET /.well-known/jwks.json`
pub async fn jwks(State(app): State<Arc<App>>) -> Result<Response, Problem> {
    // Short: a verifier that meets a new key's `kid` fetches again, and a
    // key is used from the moment it is made.
    Ok(cacheable(Json(app.oidc.jwks().await?).into_response(), 60))
}

fn cacheable(mut response: Response, seconds: u32) -> Response {
    if let Ok(value) = HeaderValue::from_str(&format!("public, max-age={seconds}")) {
        response.headers_mut().insert(header::CACHE_CONTROL, value);
    }
    response
}
