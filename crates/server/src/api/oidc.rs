//! The OpenID Provider routes, without authentication: a target verifying
//! a delivery's ID token holds no API key.

use super::problem::Problem;
use crate::App;
use axum::Json;
use axum::extract::State;
use axum::response::{IntoResponse, Response};
use http::{HeaderValue, header};
use idem_api::{Jwks, OpenIdConfiguration};
use serde::Serialize;
use std::sync::Arc;

/// `GET /.well-known/openid-configuration`
pub async fn configuration(State(app): State<Arc<App>>) -> Cached<OpenIdConfiguration> {
    Cached(app.oidc.configuration(), 3600)
}

/// `GET /.well-known/jwks.json`
pub async fn jwks(State(app): State<Arc<App>>) -> Result<Cached<Jwks>, Problem> {
    // Short: a verifier that meets a new key's `kid` fetches again, and a
    // key is used from the moment it is made.
    Ok(Cached(app.oidc.jwks().await?, 60))
}

/// 200 with `T`, which caches may keep this many seconds.
pub struct Cached<T>(pub T, pub u32);

impl<T: Serialize> IntoResponse for Cached<T> {
    fn into_response(self) -> Response {
        let mut response = Json(self.0).into_response();
        if let Ok(value) = HeaderValue::from_str(&format!("public, max-age={}", self.1)) {
            response.headers_mut().insert(header::CACHE_CONTROL, value);
        }
        response
    }
}
