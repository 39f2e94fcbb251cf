//! What the OpenAPI document says of an operation's request body and
//! success answer, read from its handler's signature: the argument that
//! reads the body names the request's schema, and the return type names
//! the status and the answer's schema. A handler that takes or answers a
//! type the document cannot describe does not compile into the table
//! ([`super::route`]), so the document cannot name another type than the
//! handler's.

use super::extract::{Json, OptionalJson};
use super::idempotency::Keyed;
use super::problem::Problem;
use super::{Created, CreatedWithoutLocation, MayWait, NoContent};
use crate::auth::{Auth, MinRole};
use axum::extract::{FromRequest, Path, RawQuery, Request, State};
use http::StatusCode;
use idem_api::*;
use std::borrow::Cow;
use std::convert::Infallible;
use std::marker::PhantomData;

/// A request or response body's schema in the document's components.
pub trait BodySchema {
    /// Its name under `#/components/schemas`.
    fn name() -> Cow<'static, str>;
    /// A page of a list, which takes `?limit` and `?page_token`.
    const PAGED: bool = false;
}

/// The types whose schemas utoipa derives, under the names it gives them
/// (`Queue` is `QueueView`). Listed rather than blanket-implemented for
/// every `ToSchema`, which would forbid the list and batch impls below.
macro_rules! derived {
    ($($t:ty),* $(,)?) => {
        $(impl BodySchema for $t {
            fn name() -> Cow<'static, str> {
                <$t as utoipa::ToSchema>::name()
            }
        })*
    };
}

derived!(
    CreateQueue,
    QueueConfigPatch,
    Queue,
    Group,
    Purged,
    CreateTask,
    CreateTasks,
    Task,
    idem_core::task::Attempt,
    RedriveTasks,
    Redriven,
    ClaimTasks,
    ClaimedTasks,
    ClaimTask,
    Heartbeat,
    CompleteTask,
    FailTask,
    EndTasks,
    ReleaseTask,
    ReassignTask,
    AssignTask,
    CreateJob,
    UpdateJob,
    Job,
    Run,
    PreviewRequest,
    Preview,
    CreatePrincipal,
    UpdatePrincipal,
    Principal,
    NewApiKey,
    ApiKey,
    CreateOrganization,
    Organization,
    SigningSecrets,
    SigningSecret,
    CreateWebhook,
    Webhook,
    IdempotencyKey,
    OpenIdConfiguration,
    Jwks,
);

/// One list schema per item type, named after the item without its `View`
/// (`QueueList` of `QueueView`).
impl<T: BodySchema> BodySchema for List<T> {
    fn name() -> Cow<'static, str> {
        let item = T::name();
        format!("{}List", item.strip_suffix("View").unwrap_or(&item)).into()
    }
    const PAGED: bool = true;
}

/// The answer of a batch create; `tasks:end` answers the same shape with
/// other statuses, as [`super::work::EndedTasks`].
impl BodySchema for BatchResults {
    fn name() -> Cow<'static, str> {
        "TaskBatchResults".into()
    }
}

impl BodySchema for super::work::EndedTasks {
    fn name() -> Cow<'static, str> {
        "EndedTasks".into()
    }
}

/// An operation's request body and success answer.
pub struct Io {
    pub request: Option<RequestBody>,
    pub response: Answer,
}

impl Io {
    /// What an operation holds until [`super::route`] reads its handler.
    pub const UNSET: Io = Io {
        request: None,
        response: Answer {
            status: StatusCode::OK,
            schema: None,
            located: false,
            waits: false,
            paged: false,
            replays: false,
        },
    };
}

pub struct RequestBody {
    /// The schema of its JSON form.
    pub schema: Cow<'static, str>,
    /// Whether it may be left out.
    pub optional: bool,
    /// Its form besides JSON, if any.
    pub also: Also,
}

/// A request body's media type besides `application/json`.
#[derive(Debug, Clone, PartialEq)]
pub enum Also {
    Nothing,
    /// `multipart/form-data`: the JSON body as the `task` part and the
    /// bytes to send as the `body` part.
    Multipart,
    /// `application/x-ndjson`: one item of this schema per line.
    Ndjson(Cow<'static, str>),
}

/// The success answer.
pub struct Answer {
    pub status: StatusCode,
    pub schema: Option<Cow<'static, str>>,
    /// Names what it made or found in `Location`.
    pub located: bool,
    /// Takes `?wait_ms`, and answers 200 (final) or 202 (not yet) after it.
    pub waits: bool,
    /// A page of a list.
    pub paged: bool,
    /// May answer a holder's repeated end with `Idempotent-Replayed: true`
    /// although the operation does not honour `Idempotency-Key`.
    pub replays: bool,
}

impl Answer {
    fn of<T: BodySchema>(status: StatusCode) -> Answer {
        Answer {
            status,
            schema: Some(T::name()),
            located: false,
            waits: false,
            paged: T::PAGED,
            replays: false,
        }
    }
}

/// A handler's argument: the body it reads, if it reads one.
///
/// Deliberately not implemented for `Request`, `Bytes` or `String`: a
/// handler that reads its body untyped says what it reads with
/// [`Unparsed`].
pub trait Input {
    fn body() -> Option<RequestBody> {
        None
    }
}

impl<T> Input for State<T> {}
impl<R: MinRole> Input for Auth<R> {}
impl Input for Keyed {}
impl Input for crate::traces::Traced {}
impl<T> Input for Path<T> {}
impl Input for RawQuery {}

impl<T: BodySchema> Input for Json<T> {
    fn body() -> Option<RequestBody> {
        Some(RequestBody {
            schema: T::name(),
            optional: false,
            also: Also::Nothing,
        })
    }
}

impl<T: BodySchema> Input for OptionalJson<T> {
    fn body() -> Option<RequestBody> {
        Some(RequestBody {
            schema: T::name(),
            optional: true,
            also: Also::Nothing,
        })
    }
}

impl<T: BodySchema, F: Forms> Input for Unparsed<T, F> {
    fn body() -> Option<RequestBody> {
        Some(RequestBody {
            schema: T::name(),
            optional: false,
            also: F::also(),
        })
    }
}

/// The request of a handler that parses its body itself, because it takes
/// more forms than JSON: `T` in JSON, or the form `F` names.
pub struct Unparsed<T, F> {
    pub request: Request,
    of: PhantomData<fn() -> (T, F)>,
}

impl<S: Send + Sync, T, F> FromRequest<S> for Unparsed<T, F> {
    type Rejection = Infallible;

    async fn from_request(request: Request, _: &S) -> Result<Self, Infallible> {
        Ok(Unparsed {
            request,
            of: PhantomData,
        })
    }
}

/// The body's form besides JSON.
pub trait Forms {
    fn also() -> Also;
}

/// Or `multipart/form-data` ([`Also::Multipart`]).
pub struct OrMultipart;

impl Forms for OrMultipart {
    fn also() -> Also {
        Also::Multipart
    }
}

/// Or NDJSON, one `T` per line.
pub struct OrNdjson<T>(PhantomData<T>);

impl<T: BodySchema> Forms for OrNdjson<T> {
    fn also() -> Also {
        Also::Ndjson(T::name())
    }
}

/// A handler's return type: its success status and body.
pub trait Output {
    fn answer() -> Answer;
}

impl<T: Output> Output for Result<T, Problem> {
    fn answer() -> Answer {
        T::answer()
    }
}

impl<T: BodySchema> Output for axum::Json<T> {
    fn answer() -> Answer {
        Answer::of::<T>(StatusCode::OK)
    }
}

impl<T: BodySchema> Output for Created<T> {
    fn answer() -> Answer {
        Answer {
            located: true,
            ..Answer::of::<T>(StatusCode::CREATED)
        }
    }
}

impl<T: BodySchema> Output for CreatedWithoutLocation<T> {
    fn answer() -> Answer {
        Answer::of::<T>(StatusCode::CREATED)
    }
}

impl<T: BodySchema> Output for MayWait<T> {
    fn answer() -> Answer {
        Answer {
            located: true,
            waits: true,
            ..Answer::of::<T>(StatusCode::CREATED)
        }
    }
}

impl<T: BodySchema> Output for super::oidc::Cached<T> {
    fn answer() -> Answer {
        Answer::of::<T>(StatusCode::OK)
    }
}

impl Output for NoContent {
    fn answer() -> Answer {
        Answer {
            status: StatusCode::NO_CONTENT,
            schema: None,
            located: false,
            waits: false,
            paged: false,
            replays: false,
        }
    }
}

impl Output for super::work::Acted {
    fn answer() -> Answer {
        Answer {
            replays: true,
            ..Answer::of::<idem_api::Task>(StatusCode::OK)
        }
    }
}

/// A handler function, by its arguments `A`: what its signature says.
pub trait Signature<A> {
    fn io() -> Io;
}

/// The [`Signature`] of a handler value, for tests that hold one.
#[cfg(test)]
pub fn io_of<H: Signature<A>, A>(_: &H) -> Io {
    H::io()
}

macro_rules! signature {
    ($($arg:ident),*) => {
        impl<H, Fut, $($arg),*> Signature<($($arg,)*)> for H
        where
            H: FnOnce($($arg),*) -> Fut,
            Fut: Future,
            Fut::Output: Output,
            $($arg: Input,)*
        {
            fn io() -> Io {
                Io {
                    // axum lets only the last argument read the body.
                    request: None$(.or_else($arg::body))*,
                    response: <Fut::Output as Output>::answer(),
                }
            }
        }
    };
}

signature!();
signature!(A1);
signature!(A1, A2);
signature!(A1, A2, A3);
signature!(A1, A2, A3, A4);
signature!(A1, A2, A3, A4, A5);
signature!(A1, A2, A3, A4, A5, A6);
signature!(A1, A2, A3, A4, A5, A6, A7);
