//! The mapping of result rows to records, over the rows of either backend.

use crate::records::*;
use crate::{Error, Result};
use idem_core::clock::from_micros;
use idem_core::event::Callbacks;
use idem_core::job::HeaderStyle;
use idem_core::queue::{QueueConfig, QueueState};
use idem_core::task::{BodyForm, Target};
use idem_core::tenancy::{PrincipalKind, Role};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Column access common to rusqlite's and tokio-postgres's rows.
pub(crate) trait Row {
    fn i64(&self, i: usize) -> Result<i64>;
    fn opt_i64(&self, i: usize) -> Result<Option<i64>>;
    fn text(&self, i: usize) -> Result<String>;
    fn opt_text(&self, i: usize) -> Result<Option<String>>;
    fn opt_blob(&self, i: usize) -> Result<Option<Vec<u8>>>;
    fn opt_f64(&self, i: usize) -> Result<Option<f64>>;
}

impl Row for rusqlite::Row<'_> {
    fn i64(&self, i: usize) -> Result<i64> {
        Ok(self.get(i)?)
    }
    fn opt_i64(&self, i: usize) -> Result<Option<i64>> {
        Ok(self.get(i)?)
    }
    fn text(&self, i: usize) -> Result<String> {
        Ok(self.get(i)?)
    }
    fn opt_text(&self, i: usize) -> Result<Option<String>> {
        Ok(self.get(i)?)
    }
    fn opt_blob(&self, i: usize) -> Result<Option<Vec<u8>>> {
        Ok(self.get(i)?)
    }
    fn opt_f64(&self, i: usize) -> Result<Option<f64>> {
        Ok(self.get(i)?)
    }
}

impl Row for tokio_postgres::Row {
    fn i64(&self, i: usize) -> Result<i64> {
        // A task's priority is stored in two bytes; every other integer in
        // eight.
        if self.columns()[i].type_() == &tokio_postgres::types::Type::INT2 {
            return Ok(i64::from(self.try_get::<_, i16>(i)?));
        }
        Ok(self.try_get(i)?)
    }
    fn opt_i64(&self, i: usize) -> Result<Option<i64>> {
        Ok(self.try_get(i)?)
    }
    fn text(&self, i: usize) -> Result<String> {
        Ok(self.try_get(i)?)
    }
    fn opt_text(&self, i: usize) -> Result<Option<String>> {
        Ok(self.try_get(i)?)
    }
    fn opt_blob(&self, i: usize) -> Result<Option<Vec<u8>>> {
        Ok(self.try_get(i)?)
    }
    fn opt_f64(&self, i: usize) -> Result<Option<f64>> {
        Ok(self.try_get(i)?)
    }
}

pub(crate) fn corrupt(what: &str, value: &str) -> Error {
    Error::Internal(format!("unreadable {what} in store: {value:?}"))
}

pub(crate) fn json<T: for<'de> Deserialize<'de>>(what: &str, text: &str) -> Result<T> {
    serde_json::from_str(text).map_err(|_| corrupt(what, text))
}

pub(crate) fn to_json<T: Serialize>(value: &T) -> String {
    serde_json::to_string(value).expect("records serialize")
}

pub(crate) const PRINCIPAL_COLUMNS: &str = "name, kind, role, created_at";

pub(crate) fn principal(r: &impl Row) -> Result<Principal> {
    let kind = r.text(1)?;
    let role = r.text(2)?;
    Ok(Principal {
        name: r.text(0)?,
        kind: PrincipalKind::parse(&kind).ok_or_else(|| corrupt("principal kind", &kind))?,
        role: Role::parse(&role).ok_or_else(|| corrupt("role", &role))?,
        created_at: from_micros(r.i64(3)?),
    })
}

pub(crate) const API_KEY_COLUMNS: &str = "id, principal, created_at, last_used_at";

pub(crate) fn api_key(r: &impl Row) -> Result<ApiKey> {
    Ok(ApiKey {
        id: r.text(0)?,
        principal: r.text(1)?,
        created_at: from_micros(r.i64(2)?),
        last_used_at: r.opt_i64(3)?.map(from_micros),
    })
}

pub(crate) fn signing_secret(r: &impl Row) -> Result<SigningSecret> {
    Ok(SigningSecret {
        id: r.text(0)?,
        secret: r.text(1)?,
        created_at: from_micros(r.i64(2)?),
    })
}

pub(crate) const QUEUE_COLUMNS: &str = "name, state, config, created_at, updated_at";

pub(crate) fn queue(r: &impl Row) -> Result<Queue> {
    let state = r.text(1)?;
    Ok(Queue {
        name: r.text(0)?,
        state: QueueState::parse(&state).ok_or_else(|| corrupt("queue state", &state))?,
        config: json::<QueueConfig>("queue config", &r.text(2)?)?,
        created_at: from_micros(r.i64(3)?),
        updated_at: from_micros(r.i64(4)?),
    })
}

/// The stored part of a target; the body lives in its own column so that
/// binary payloads are not inflated by an encoding.
#[derive(Serialize, Deserialize)]
pub(crate) struct StoredTarget {
    pub url: String,
    pub method: String,
    pub headers: BTreeMap<String, String>,
    /// A task's own completion callbacks ride with its target: every create
    /// path writes the target column already, so a task without callbacks
    /// writes nothing more, and a completion reads them with the row.
    #[serde(default, flatten)]
    pub callbacks: Callbacks,
    /// A task's compatibility headers, resolved against its queue when it
    /// was created; absent is `idem`, so other targets store nothing more.
    #[serde(default, skip_serializing_if = "is_idem")]
    pub header_style: HeaderStyle,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub oidc: Option<idem_core::task::Oidc>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub secret_headers: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace: Option<idem_core::trace::TraceContext>,
}

fn is_idem(style: &HeaderStyle) -> bool {
    *style == HeaderStyle::Idem
}

/// Reads a target stored as [`StoredTarget`] JSON plus body form and bytes
/// columns at `at`, `at + 1` and `at + 2`.
pub(crate) fn target(r: &impl Row, at: usize) -> Result<Target> {
    Ok(target_with_callbacks(r, [at, at + 1, at + 2])?.0)
}

/// [`target`] with the completion callbacks and header style a task's
/// stored target carries, from the target, body form and body columns at
/// the indices `at` gives.
pub(crate) fn target_with_callbacks(
    r: &impl Row,
    [target, body_form, body]: [usize; 3],
) -> Result<(Target, Callbacks, HeaderStyle)> {
    let stored: StoredTarget = json("target", &r.text(target)?)?;
    let body = match (r.opt_text(body_form)?, r.opt_blob(body)?) {
        (Some(form), Some(bytes)) => Some((
            BodyForm::parse(&form).ok_or_else(|| corrupt("body form", &form))?,
            bytes,
        )),
        _ => None,
    };
    let target = Target {
        url: stored.url,
        method: stored.method,
        headers: stored.headers,
        body,
        oidc: stored.oidc,
        secret_headers: stored.secret_headers,
        trace: stored.trace,
    };
    Ok((target, stored.callbacks, stored.header_style))
}

/// The three column values [`target`] reads back.
pub(crate) fn target_columns(t: &Target) -> (String, Option<&'static str>, Option<Vec<u8>>) {
    task_target_columns(t, &Callbacks::default(), HeaderStyle::Idem)
}

/// [`target_columns`] of a task with its own completion callbacks.
pub(crate) fn task_target_columns(
    t: &Target,
    callbacks: &Callbacks,
    header_style: HeaderStyle,
) -> (String, Option<&'static str>, Option<Vec<u8>>) {
    let stored = StoredTarget {
        url: t.url.clone(),
        method: t.method.clone(),
        headers: t.headers.clone(),
        callbacks: callbacks.clone(),
        header_style,
        oidc: t.oidc.clone(),
        secret_headers: t.secret_headers.clone(),
        trace: t.trace.clone(),
    };
    (
        to_json(&stored),
        t.body.as_ref().map(|(form, _)| form.as_str()),
        t.body.as_ref().map(|(_, bytes)| bytes.clone()),
    )
}

/// A row read at an offset: lets a reader of one record's columns read them
/// after another record's in a joined row.
pub(crate) struct Offset<'a, R>(pub &'a R, pub usize);

impl<R: Row> Row for Offset<'_, R> {
    fn i64(&self, i: usize) -> Result<i64> {
        self.0.i64(self.1 + i)
    }
    fn opt_i64(&self, i: usize) -> Result<Option<i64>> {
        self.0.opt_i64(self.1 + i)
    }
    fn text(&self, i: usize) -> Result<String> {
        self.0.text(self.1 + i)
    }
    fn opt_text(&self, i: usize) -> Result<Option<String>> {
        self.0.opt_text(self.1 + i)
    }
    fn opt_blob(&self, i: usize) -> Result<Option<Vec<u8>>> {
        self.0.opt_blob(self.1 + i)
    }
    fn opt_f64(&self, i: usize) -> Result<Option<f64>> {
        self.0.opt_f64(self.1 + i)
    }
}

pub(crate) fn attempt(r: &impl Row) -> Result<Attempt> {
    Ok(Attempt {
        attempt: r.i64(0)? as u32,
        started_at: from_micros(r.i64(1)?),
        finished_at: r.opt_i64(2)?.map(from_micros),
        status_code: r.opt_i64(3)?.map(|c| c as u16),
        error: r.opt_text(4)?,
        duration_ms: r.opt_i64(5)?.map(|d| d as u64),
        response: r
            .opt_text(6)?
            .map(|t| json("attempt response", &t))
            .transpose()?,
    })
}
