//! The operator console at `/ui`: server-rendered pages over the `/v1` API.
//!
//! Every page and every action is a call to the API router in this process
//! ([`client`]) with the session's key as bearer, so the console can do
//! exactly what its key may and no more: a reader's pages carry no acting
//! buttons, and the API refuses the actions anyway. Fields the API adds
//! later (queue statistics, say) appear when present; an action whose route
//! this build lacks shows the API's 404 problem.
//!
//! Pages work without JavaScript; the one small script only asks for
//! confirmation before destructive actions. The stylesheet and the script are
//! compiled into the binary.

mod client;
mod pages;
pub mod session;

use crate::App;
use axum::Router;
use axum::body::Bytes;
use axum::extract::{Path, RawQuery, State};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use client::{Answer, ApiClient, path};
use http::{HeaderMap, HeaderValue, Method, StatusCode, header};
use idem_core::tenancy::Role;
use idem_store::Caller;
use session::{Flash, Session, Sessions};
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

const COOKIE: &str = "idem_console";
/// The login form's own token (double-submit: cookie and form field must
/// match), so that another site cannot log a browser in with its key.
const LOGIN_COOKIE: &str = "idem_console_login";
const CSS: &str = include_str!("console.css");
const JS: &str = include_str!("console.js");
/// Items a list page shows at once.
const PAGE_SIZE: &str = "50";
/// Instants a job's schedule preview shows.
const PREVIEW_COUNT: u64 = 5;

/// Settings of the console.
#[derive(Debug, Clone)]
pub struct ConsoleOptions {
    /// Mark the session cookie `Secure` even when the request does not say
    /// it came over https (a TLS proxy that sends no `X-Forwarded-Proto`).
    pub secure_cookie: bool,
    /// How long a session lasts without a request.
    pub session_idle: Duration,
    /// Login attempts one client address may make per minute (0: any).
    pub logins_per_minute: u32,
}

impl Default for ConsoleOptions {
    fn default() -> Self {
        ConsoleOptions {
            secure_cookie: false,
            session_idle: Duration::from_secs(8 * 3600),
            logins_per_minute: 10,
        }
    }
}

struct Console {
    app: Arc<App>,
    api: ApiClient,
    sessions: Sessions,
    logins: session::LoginLimiter,
}

/// The `/ui` routes; `api` is the `/v1` router they call.
pub fn router(app: Arc<App>, api: Router) -> Router {
    let console = Arc::new(Console {
        sessions: Sessions::new(app.options.console.session_idle),
        logins: session::LoginLimiter::new(app.options.console.logins_per_minute),
        api: ApiClient::new(api),
        app,
    });
    Router::new()
        .route("/ui", get(|| async { redirect("/ui/queues") }))
        .route("/ui/", get(|| async { redirect("/ui/queues") }))
        .route("/ui/assets/console.css", get(css))
        .route("/ui/assets/console.js", get(js))
        .route("/ui/login", get(login_page).post(login))
        .route("/ui/logout", post(logout))
        .route("/ui/queues", get(queues_page))
        .route("/ui/queues/{queue}", get(queue_page))
        .route("/ui/queues/{queue}/{action}", post(queue_action))
        .route("/ui/queues/{queue}/tasks/{task_id}", get(task_page))
        .route(
            "/ui/queues/{queue}/tasks/{task_id}/{action}",
            post(task_action),
        )
        .route("/ui/jobs", get(jobs_page))
        .route("/ui/jobs/{job}", get(job_page))
        .route("/ui/jobs/{job}/{action}", post(job_action))
        .route("/ui/jobs/{job}/runs/{run_id}", get(run_page))
        .route("/ui/access", get(access_page))
        .route("/ui/find", get(find_page))
        .route("/ui/principals", post(create_principal))
        .route("/ui/principals/{name}/keys", post(create_key))
        .route("/ui/principals/{name}/keys/{id}/revoke", post(revoke_key))
        .route("/ui/signing-secrets/rotate", post(rotate_secret))
        .route("/ui/signing-secrets/{id}/delete", post(delete_secret))
        // Any other console address is a page that does not exist, told in
        // the console's frame rather than by the API's JSON.
        .route("/ui/{*rest}", get(unknown_page))
        .with_state(console)
}

/// Who is looking at a page: the session, its caller as the API sees it
/// now, and the message left by the last action.
pub struct Viewer {
    pub session: Session,
    pub caller: Caller,
    pub flash: Option<Flash>,
    /// When the page is made: what relative times count from.
    pub now: jiff::Timestamp,
    /// Where in its list the page is, from its address.
    pub paging: Paging,
}

/// Where in a list a page is: its `page_token`, and the tokens of the
/// pages before it (`trail`, one parameter each, the first page's empty),
/// which its Previous link goes back through. The API's tokens only go
/// forward; the address remembers the way back.
#[derive(Debug, Clone, Default)]
pub struct Paging {
    pub token: String,
    pub trail: Vec<String>,
}

impl Paging {
    fn of(query: Option<&str>) -> Paging {
        let mut paging = Paging::default();
        for (k, v) in form_urlencoded::parse(query.unwrap_or("").as_bytes()) {
            match k.as_ref() {
                "page_token" => paging.token = v.into_owned(),
                "trail" => paging.trail.push(v.into_owned()),
                _ => {}
            }
        }
        paging
    }
}

/// Every page is for a signed-in viewer: without one, the answer is the way
/// to the login page.
impl axum::extract::FromRequestParts<Arc<Console>> for Viewer {
    type Rejection = Response;

    async fn from_request_parts(
        parts: &mut http::request::Parts,
        console: &Arc<Console>,
    ) -> Result<Viewer, Response> {
        console.viewer(&parts.headers, Some(&parts.uri)).await
    }
}

impl Viewer {
    pub fn can(&self, role: Role) -> bool {
        self.caller.role >= role
    }
}

fn redirect(to: &str) -> Response {
    (StatusCode::SEE_OTHER, [(header::LOCATION, to.to_string())]).into_response()
}

/// Pages: never cached (they show a session's data), never framed (no
/// clickjacking of the buttons), and loading nothing but the console's own
/// stylesheet and script.
fn html(status: StatusCode, markup: maud::Markup) -> Response {
    (
        status,
        [
            (header::CONTENT_TYPE, "text/html; charset=utf-8"),
            (header::CACHE_CONTROL, "no-store"),
            (
                header::CONTENT_SECURITY_POLICY,
                "default-src 'none'; style-src 'self'; script-src 'self'; img-src 'self'; \
                 form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
            ),
            (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
            // For browsers that predate `frame-ancestors`.
            (header::X_FRAME_OPTIONS, "DENY"),
            (header::REFERRER_POLICY, "same-origin"),
        ],
        markup.into_string(),
    )
        .into_response()
}

async fn css() -> Response {
    asset("text/css; charset=utf-8", CSS)
}

async fn js() -> Response {
    asset("text/javascript; charset=utf-8", JS)
}

fn asset(content_type: &'static str, body: &'static str) -> Response {
    (
        [
            (header::CONTENT_TYPE, content_type),
            (header::CACHE_CONTROL, "public, max-age=3600"),
        ],
        body,
    )
        .into_response()
}

fn session_id(headers: &HeaderMap) -> Option<String> {
    cookie_value(headers, COOKIE)
}

fn cookie_value(headers: &HeaderMap, name: &str) -> Option<String> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|c| c.trim().split_once('='))
        .find(|(n, _)| *n == name)
        .map(|(_, v)| v.to_string())
}

/// Whether the browser reached us over https, as the TLS proxy in front
/// says (`idem serve` itself speaks plain HTTP).
fn over_https(headers: &HeaderMap) -> bool {
    let forwarded_proto = headers
        .get("x-forwarded-proto")
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.trim().eq_ignore_ascii_case("https"));
    let forwarded = headers
        .get(header::FORWARDED)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.to_ascii_lowercase().contains("proto=https"));
    forwarded_proto || forwarded
}

/// A `Set-Cookie` value; `max_age` `None` deletes the cookie.
fn cookie(
    console: &Console,
    headers: &HeaderMap,
    (name, path): (&str, &str),
    value: &str,
    max_age: Option<u64>,
) -> String {
    let mut c = format!("{name}={value}; Path={path}; HttpOnly; SameSite=Strict");
    if console.app.options.console.secure_cookie || over_https(headers) {
        c.push_str("; Secure");
    }
    match max_age {
        Some(s) => c.push_str(&format!("; Max-Age={s}")),
        None => c.push_str("; Max-Age=0"),
    }
    c
}

fn set_cookie(r: &mut Response, value: String) {
    if let Ok(v) = HeaderValue::from_str(&value) {
        r.headers_mut().append(header::SET_COOKIE, v);
    }
}

impl Console {
    /// The viewer of a page, or the login page to go to: it says why a
    /// session it knew of ended, and brings the viewer back to `from`, the
    /// page asked for, once logged in. The key is resolved as the API
    /// resolves it on every call, so a revoked key or a changed role shows
    /// at once.
    async fn viewer(
        &self,
        headers: &HeaderMap,
        from: Option<&http::Uri>,
    ) -> Result<Viewer, Response> {
        let to_login = |ended: Option<&str>| {
            let mut query = form_urlencoded::Serializer::new(String::new());
            if let Some(next) = from
                .and_then(|u| u.path_and_query())
                .and_then(|p| safe_next(p.as_str()))
            {
                query.append_pair("next", next);
            }
            if let Some(ended) = ended {
                query.append_pair("ended", ended);
            }
            let query = query.finish();
            redirect(&if query.is_empty() {
                "/ui/login".to_string()
            } else {
                format!("/ui/login?{query}")
            })
        };
        let Some(id) = session_id(headers) else {
            return Err(to_login(None));
        };
        let Some((session, flash)) = self.sessions.touch(&id) else {
            return Err(to_login(Some("expired")));
        };
        match self.app.auth.authenticate(&self.app, &session.key).await {
            Ok(caller) => Ok(Viewer {
                session,
                caller,
                flash,
                now: self.app.clock.now(),
                paging: Paging::of(from.and_then(|u| u.query())),
            }),
            Err(_) => {
                self.sessions.close(&id);
                Err(to_login(Some("revoked")))
            }
        }
    }

    /// The session an acting form came from, if its CSRF token is the
    /// session's; otherwise why the form is refused, before the API is
    /// called.
    fn acting_session(
        &self,
        headers: &HeaderMap,
        form: &HashMap<String, String>,
    ) -> Result<Session, &'static str> {
        let id = session_id(headers).ok_or("you are not logged in")?;
        let (session, flash) = self
            .sessions
            .touch(&id)
            .ok_or("your session has ended; log in again")?;
        if let Some(f) = flash {
            self.sessions.flash(&id, f);
        }
        let token = form.get("csrf").map(String::as_str).unwrap_or("");
        if !session.csrf_matches(token) {
            return Err("the form's CSRF token is missing or wrong");
        }
        Ok(session)
    }

    /// Runs an action for a form and goes back to `back` with the outcome.
    async fn act(
        &self,
        headers: &HeaderMap,
        body: &Bytes,
        method: Method,
        call: (String, Option<serde_json::Value>),
        back: &str,
        done: &str,
    ) -> Response {
        self.act_with(headers, body, method, call, back, |answer| {
            outcome(answer, done)
        })
        .await
    }

    /// Goes back to `back` saying `why` a form was not acted on, once the
    /// form is known to come from the session.
    fn say(&self, headers: &HeaderMap, body: &Bytes, back: &str, why: String) -> Response {
        let session = match self.acting_session(headers, &parse_form(body)) {
            Ok(s) => s,
            Err(refusal) => return refused(refusal),
        };
        self.sessions.flash(
            &session.id,
            Flash {
                ok: false,
                text: why,
                secret: None,
            },
        );
        redirect(back)
    }

    /// [`Console::act`], the page's message made by `flash` from the
    /// API's answer.
    async fn act_with(
        &self,
        headers: &HeaderMap,
        body: &Bytes,
        method: Method,
        (api_path, api_body): (String, Option<serde_json::Value>),
        back: &str,
        flash: impl FnOnce(&Answer) -> Flash,
    ) -> Response {
        let form = parse_form(body);
        let session = match self.acting_session(headers, &form) {
            Ok(s) => s,
            Err(why) => return refused(why),
        };
        let key = form
            .get("idem")
            .filter(|k| !k.is_empty())
            .map(String::as_str);
        let answer = self
            .api
            .call(&session.key, method, &api_path, api_body, key)
            .await;
        self.sessions.flash(&session.id, flash(&answer));
        redirect(back)
    }
}

fn refused(why: &str) -> Response {
    html(
        StatusCode::FORBIDDEN,
        pages::refused(&format!("This action was refused: {why}.")),
    )
}

fn outcome(answer: &Answer, done: &str) -> Flash {
    if answer.ok() {
        let mut text = done.to_string();
        if let Some(n) = answer.body["redriven"].as_u64() {
            text.push_str(&format!(" Tasks redriven: {n}."));
        }
        Flash {
            ok: true,
            text,
            secret: None,
        }
    } else {
        Flash {
            ok: false,
            text: answer.problem_text(),
            secret: None,
        }
    }
}

fn parse_form(body: &[u8]) -> HashMap<String, String> {
    form_urlencoded::parse(body).into_owned().collect()
}

fn parse_query(query: Option<&str>) -> HashMap<String, String> {
    query
        .map(|q| form_urlencoded::parse(q.as_bytes()).into_owned().collect())
        .unwrap_or_default()
}

/// Where a login may lead: a console page of this server, never another
/// site (`//host`, `/\host`) nor the login page itself.
fn safe_next(next: &str) -> Option<&str> {
    let ok = next.starts_with("/ui/")
        && !next.starts_with("/ui/login")
        && !next.contains("//")
        && !next.contains('\\')
        && next.len() <= 2000
        && !next.chars().any(char::is_control);
    ok.then_some(next)
}

/// Why the login page is shown, from its `ended` parameter.
fn ended_notice(ended: Option<&str>) -> Option<&'static str> {
    match ended? {
        "logout" => Some("You logged out."),
        "expired" => {
            Some("Your session ended: it was idle too long, or the server restarted. Log in again.")
        }
        "revoked" => Some(
            "Your session ended: its API key is no longer valid (revoked, or its principal \
             removed). Log in with another key.",
        ),
        _ => None,
    }
}

async fn login_page(
    State(console): State<Arc<Console>>,
    headers: HeaderMap,
    RawQuery(query): RawQuery,
) -> Response {
    let q = parse_query(query.as_deref());
    let next = q.get("next").and_then(|n| safe_next(n));
    if console.viewer(&headers, None).await.is_ok() {
        return redirect(next.unwrap_or("/ui/queues"));
    }
    let notice = ended_notice(q.get("ended").map(String::as_str));
    login_form(&console, &headers, StatusCode::OK, None, notice, next)
}

/// The login page with a login token in its form and in a cookie, and the
/// page to go to once logged in.
fn login_form(
    console: &Console,
    headers: &HeaderMap,
    status: StatusCode,
    error: Option<&str>,
    notice: Option<&str>,
    next: Option<&str>,
) -> Response {
    let token = cookie_value(headers, LOGIN_COOKIE)
        .filter(|t| t.len() == 64)
        .unwrap_or_else(session::random_token);
    let mut r = html(status, pages::login(error, notice, &token, next));
    set_cookie(
        &mut r,
        cookie(
            console,
            headers,
            (LOGIN_COOKIE, "/ui/login"),
            &token,
            Some(3600),
        ),
    );
    r
}

async fn login(
    State(console): State<Arc<Console>>,
    peer: Option<axum::Extension<axum::extract::ConnectInfo<std::net::SocketAddr>>>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    // Counted before anything is checked: guessing keys costs attempts
    // whether the form is right or not.
    if let Some(axum::Extension(axum::extract::ConnectInfo(peer))) = peer
        && let Err(wait) = console.logins.attempt(peer.ip())
    {
        let secs = wait.as_secs() + 1;
        let mut r = login_form(
            &console,
            &headers,
            StatusCode::TOO_MANY_REQUESTS,
            Some(&format!(
                "Too many login attempts from this address; try again in {secs} s."
            )),
            None,
            None,
        );
        r.headers_mut()
            .insert(header::RETRY_AFTER, header::HeaderValue::from(secs));
        return r;
    }
    let form = parse_form(&body);
    let next = form.get("next").and_then(|n| safe_next(n));
    let expected = cookie_value(&headers, LOGIN_COOKIE).unwrap_or_default();
    let sent = form.get("login").map(String::as_str).unwrap_or("");
    let token_ok = !expected.is_empty()
        && bool::from(subtle::ConstantTimeEq::ct_eq(
            expected.as_bytes(),
            sent.as_bytes(),
        ));
    if !token_ok {
        return login_form(
            &console,
            &headers,
            StatusCode::FORBIDDEN,
            Some("This login form has expired or did not come from this page; log in again."),
            None,
            next,
        );
    }
    let key = form.get("key").map(|k| k.trim()).unwrap_or("");
    if key.is_empty() {
        return login_form(
            &console,
            &headers,
            StatusCode::BAD_REQUEST,
            Some("Enter an API key."),
            None,
            next,
        );
    }
    // Any key may list queues (reader and up): the API itself verifies it.
    let answer = console
        .api
        .get(key, path(&["queues"], &[("limit", "1")]))
        .await;
    if !answer.ok() {
        return login_form(
            &console,
            &headers,
            answer.status,
            Some(&answer.problem_text()),
            None,
            next,
        );
    }
    let session = console.sessions.open(key.to_string());
    let idle = console.app.options.console.session_idle.as_secs();
    let mut r = redirect(next.unwrap_or("/ui/queues"));
    set_cookie(
        &mut r,
        cookie(&console, &headers, (COOKIE, "/ui"), &session.id, Some(idle)),
    );
    set_cookie(
        &mut r,
        cookie(&console, &headers, (LOGIN_COOKIE, "/ui/login"), "", None),
    );
    r
}

async fn logout(State(console): State<Arc<Console>>, headers: HeaderMap, body: Bytes) -> Response {
    let form = parse_form(&body);
    let session = match console.acting_session(&headers, &form) {
        Ok(s) => s,
        Err(why) => return refused(why),
    };
    console.sessions.close(&session.id);
    let mut r = redirect("/ui/login?ended=logout");
    set_cookie(
        &mut r,
        cookie(&console, &headers, (COOKIE, "/ui"), "", None),
    );
    r
}

/// Most queues a look-up by task ID reads, a page of 100 at a time.
const FIND_MAX_QUEUES: usize = 1000;

/// How many of those reads run at once.
const FIND_READS_AT_ONCE: usize = 16;

/// A task found by its ID alone, in whichever queue holds it: one read of
/// the ID in each queue the key may see (the API has no look-up across
/// queues: a task is named by its queue and ID).
async fn find_page(
    State(console): State<Arc<Console>>,
    viewer: Viewer,
    RawQuery(query): RawQuery,
) -> Response {
    let q = parse_query(query.as_deref());
    let id = q.get("task_id").map(|v| v.trim()).unwrap_or("");
    if id.is_empty() {
        return redirect("/ui/queues");
    }
    // An ID no task can have is said at once, as the API would say it.
    if let Err(e) = idem_core::names::check_task_id("task_id", id) {
        return html(
            StatusCode::BAD_REQUEST,
            pages::found(
                &viewer,
                id,
                &[],
                Some(&format!("{}: {}", e.field, e.message)),
            ),
        );
    }
    let key = &viewer.session.key;
    let mut queues: Vec<String> = Vec::new();
    let mut token = String::new();
    loop {
        let page = console
            .api
            .get(
                key,
                path(&["queues"], &[("limit", "100"), ("page_token", &token)]),
            )
            .await;
        if !page.ok() {
            return html(
                page.status,
                pages::problem_page(&viewer, "Find a task", &page),
            );
        }
        queues.extend(
            page.body["items"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|q| q["name"].as_str().map(str::to_string)),
        );
        match page.body["next_page_token"].as_str() {
            Some(next) if queues.len() < FIND_MAX_QUEUES => token = next.to_string(),
            _ => break,
        }
    }
    // A few reads at a time: a key that sees 1,000 queues must not put
    // 1,000 reads before the store at once for one page.
    let api = &console.api;
    let mut answers: Vec<(String, Answer)> = Vec::with_capacity(queues.len());
    for chunk in queues.chunks(FIND_READS_AT_ONCE) {
        let reads = chunk.iter().map(|queue| async move {
            let answer = api
                .get(key, path(&["queues", queue, "tasks", id], &[]))
                .await;
            (queue.clone(), answer)
        });
        answers.extend(futures_util::future::join_all(reads).await);
    }
    let found: Vec<(String, serde_json::Value)> = answers
        .into_iter()
        .filter(|(_, a)| a.ok())
        .map(|(queue, a)| (queue, a.body))
        .collect();
    match found.as_slice() {
        [(queue, _)] => redirect(&pages::task_path(queue, id)),
        _ => html(
            if found.is_empty() {
                StatusCode::NOT_FOUND
            } else {
                StatusCode::OK
            },
            pages::found(&viewer, id, &found, None),
        ),
    }
}

async fn unknown_page(viewer: Viewer) -> Response {
    html(StatusCode::NOT_FOUND, pages::not_found(&viewer))
}

async fn queues_page(
    State(console): State<Arc<Console>>,
    viewer: Viewer,
    RawQuery(query): RawQuery,
) -> Response {
    let answer = list_page(&console, &viewer, "queues", query.as_deref()).await;
    html(StatusCode::OK, pages::queues(&viewer, &answer))
}

/// The page of a `/v1` collection that the query's `page_token` names.
async fn list_page(
    console: &Console,
    viewer: &Viewer,
    collection: &str,
    query: Option<&str>,
) -> Answer {
    let q = parse_query(query);
    let token = q.get("page_token").map(String::as_str).unwrap_or("");
    console
        .api
        .get(
            &viewer.session.key,
            path(
                &[collection],
                &[("limit", PAGE_SIZE), ("page_token", token)],
            ),
        )
        .await
}

/// The task filters a queue's page passes through to `GET …/tasks`.
pub const TASK_FILTERS: [&str; 4] = ["state", "id_prefix", "created_after", "created_before"];

/// How many of a queue's groups its page shows, by name.
const GROUPS_SHOWN: &str = "20";

async fn queue_page(
    State(console): State<Arc<Console>>,
    viewer: Viewer,
    Path(queue): Path<String>,
    RawQuery(query): RawQuery,
) -> Response {
    let mut q = parse_query(query.as_deref());
    // The browser's date-time field has no zone; the console speaks UTC.
    for field in ["created_after", "created_before"] {
        if let Some(v) = q.get_mut(field) {
            *v = as_rfc3339(v);
        }
    }
    let key = &viewer.session.key;
    let redrive = redrive_filter(&q);
    let (queue_answer, tasks, groups, matching) = tokio::join!(
        console.api.get(key, path(&["queues", &queue], &[])),
        {
            let mut params: Vec<(&str, &str)> = vec![("limit", PAGE_SIZE)];
            for f in TASK_FILTERS.iter().chain(&["page_token"]) {
                if let Some(v) = q.get(*f) {
                    params.push((f, v));
                }
            }
            console
                .api
                .get(key, path(&["queues", &queue, "tasks"], &params))
        },
        console.api.get(
            key,
            path(&["queues", &queue, "groups"], &[("limit", GROUPS_SHOWN)])
        ),
        // What "Redrive" would run again, for its confirmation: a dry run
        // of the very request the button makes.
        async {
            if !viewer.can(Role::Writer) {
                return None;
            }
            let mut body = redrive.clone();
            body["dry_run"] = serde_json::Value::Bool(true);
            let answer = console
                .api
                .call(key, Method::POST, redrive_path(&queue), Some(body), None)
                .await;
            answer.body["matching"].as_u64()
        }
    );
    // A queue that is not there, or a name that cannot be one, answers
    // with the API's status, as the task and job pages do.
    if queue_answer.status.is_client_error() {
        return html(
            queue_answer.status,
            pages::problem_page(&viewer, "Queue", &queue_answer),
        );
    }
    html(
        StatusCode::OK,
        pages::queue(
            &viewer,
            &queue,
            &queue_answer,
            &tasks,
            &groups,
            &q,
            matching,
        ),
    )
}

/// `POST …/tasks:redrive`, one segment with a colon, which path() would
/// percent-encode.
fn redrive_path(queue: &str) -> String {
    format!("{}/tasks:redrive", path(&["queues", queue], &[]))
}

/// The bulk redrive of the tasks a queue page's filter shows: its ID
/// prefix and creation range, of the cancelled tasks on that tab and the
/// failed ones on any other. `q` holds the page's (or the form's) filter
/// fields, times already in RFC 3339.
fn redrive_filter(q: &HashMap<String, String>) -> serde_json::Value {
    let mut body = serde_json::Map::new();
    let state = if q.get("state").map(String::as_str) == Some("cancelled") {
        "cancelled"
    } else {
        "failed"
    };
    body.insert("state".into(), state.into());
    for field in ["id_prefix", "created_after", "created_before"] {
        if let Some(v) = q.get(field).filter(|v| !v.trim().is_empty()) {
            body.insert(field.into(), v.trim().into());
        }
    }
    serde_json::Value::Object(body)
}

/// `2026-11-30T17:05` (a date-time field) as `2026-11-30T17:05:00Z`; any
/// other text is passed on for the API to judge.
fn as_rfc3339(v: &str) -> String {
    let v = v.trim();
    if v.is_empty() || v.parse::<jiff::Timestamp>().is_ok() {
        return v.to_string();
    }
    match v.parse::<jiff::civil::DateTime>() {
        Ok(dt) => dt
            .to_zoned(jiff::tz::TimeZone::UTC)
            .map(|z| z.timestamp().to_string())
            .unwrap_or_else(|_| v.to_string()),
        Err(_) => v.to_string(),
    }
}

async fn queue_action(
    State(console): State<Arc<Console>>,
    headers: HeaderMap,
    Path((queue, action)): Path<(String, String)>,
    body: Bytes,
) -> Response {
    let queue_page = pages::ui_path(&["queues", &queue]);
    let mut filter: Vec<(&str, String)> = Vec::new();
    let mut method = Method::POST;
    let (call, done) = match action.as_str() {
        "pause" => (
            (path(&["queues", &queue, "pause"], &[]), None),
            "Queue paused.",
        ),
        "resume" => (
            (path(&["queues", &queue, "resume"], &[]), None),
            "Queue resumed.",
        ),
        "purge" => (
            (path(&["queues", &queue, "purge"], &[]), None),
            "Queue purged: every task not running was cancelled.",
        ),
        // The filter the page showed comes with the form, and the page
        // comes back with it.
        "redrive-failed" => {
            let mut form = parse_form(&body);
            for field in ["created_after", "created_before"] {
                if let Some(v) = form.get_mut(field) {
                    *v = as_rfc3339(v);
                }
            }
            filter = TASK_FILTERS
                .iter()
                .filter_map(|f| Some((*f, form.get(*f)?.clone())))
                .filter(|(_, v)| !v.is_empty())
                .collect();
            (
                (redrive_path(&queue), Some(redrive_filter(&form))),
                "Redrive requested.",
            )
        }
        // The form's fields in human units; a field left empty is left as
        // it is.
        "limits" => match limits_patch(&parse_form(&body)) {
            Ok(patch) => {
                method = Method::PATCH;
                (
                    (path(&["queues", &queue], &[]), Some(patch)),
                    "Limits saved.",
                )
            }
            Err(why) => return console.say(&headers, &body, &queue_page, why),
        },
        "create-task" => {
            let form = parse_form(&body);
            let task = match new_task(&form) {
                Ok(task) => task,
                Err(why) => return console.say(&headers, &body, &queue_page, why),
            };
            let id = task["task_id"].as_str().unwrap_or("").to_string();
            let back = if id.is_empty() {
                queue_page.clone()
            } else {
                pages::task_path(&queue, &id)
            };
            return console
                .act(
                    &headers,
                    &body,
                    Method::POST,
                    (path(&["queues", &queue, "tasks"], &[]), Some(task)),
                    &back,
                    "Task created.",
                )
                .await;
        }
        _ => return html(StatusCode::NOT_FOUND, pages::refused("No such action.")),
    };
    let mut back = queue_page;
    if !filter.is_empty() {
        let mut query = form_urlencoded::Serializer::new(String::new());
        query.extend_pairs(&filter);
        back = format!("{back}?{}", query.finish());
    }
    console
        .act(&headers, &body, method, call, &back, done)
        .await
}

/// A queue's limits from the console's form: counts as numbers, the
/// deadline as a duration (`30s`, `10m`, `1h 30m`); empty fields are not
/// sent. The API judges the values; this only reads them.
fn limits_patch(form: &HashMap<String, String>) -> Result<serde_json::Value, String> {
    let field = |name: &str| form.get(name).map(|v| v.trim()).filter(|v| !v.is_empty());
    let number = |name: &str| -> Result<Option<serde_json::Value>, String> {
        field(name)
            .map(|v| {
                v.parse::<f64>()
                    .ok()
                    .filter(|n| n.is_finite())
                    .and_then(|n| serde_json::Number::from_f64(n).map(serde_json::Value::Number))
                    .ok_or_else(|| format!("{name}: \"{v}\" is not a number"))
            })
            .transpose()
    };
    let whole = |name: &str| -> Result<Option<serde_json::Value>, String> {
        field(name)
            .map(|v| {
                v.parse::<u64>()
                    .map(serde_json::Value::from)
                    .map_err(|_| format!("{name}: \"{v}\" is not a whole number"))
            })
            .transpose()
    };
    let mut patch = serde_json::Map::new();
    let mut rate = serde_json::Map::new();
    if let Some(n) = number("max_dispatches_per_second")? {
        rate.insert("max_dispatches_per_second".into(), n);
    }
    for name in ["max_burst_size", "max_concurrent_dispatches"] {
        if let Some(n) = whole(name)? {
            rate.insert(name.into(), n);
        }
    }
    if !rate.is_empty() {
        patch.insert("rate_limits".into(), rate.into());
    }
    if let Some(n) = whole("max_attempts")? {
        patch.insert(
            "retry_config".into(),
            serde_json::json!({"max_attempts": n}),
        );
    }
    if let Some(n) = whole("group_concurrency")? {
        patch.insert("group_concurrency".into(), n);
    }
    if let Some(v) = field("dispatch_deadline") {
        let d = v.parse::<jiff::SignedDuration>().map_err(|_| {
            format!("dispatch_deadline: \"{v}\" is not a duration such as 90s, 10m or 1h 30m")
        })?;
        if d.subsec_nanos() != 0 || d.is_negative() {
            return Err(format!(
                "dispatch_deadline: \"{v}\" is not a whole number of seconds"
            ));
        }
        patch.insert("dispatch_deadline_s".into(), d.as_secs().into());
    }
    if patch.is_empty() {
        return Err("Nothing to change: every field was empty.".into());
    }
    Ok(serde_json::Value::Object(patch))
}

/// A task from the console's form: its ID (none: the server picks one),
/// a push task's target URL and body or a pull task's JSON payload, and
/// when to run it (UTC without a zone).
fn new_task(form: &HashMap<String, String>) -> Result<serde_json::Value, String> {
    let field = |name: &str| form.get(name).map(|v| v.trim()).filter(|v| !v.is_empty());
    let mut task = serde_json::Map::new();
    if let Some(id) = field("task_id") {
        task.insert("task_id".into(), id.into());
    }
    if let Some(url) = field("url") {
        let mut target = serde_json::json!({"url": url});
        if let Some(body) = form.get("body").filter(|b| !b.trim().is_empty()) {
            target["body"] = body.as_str().into();
        }
        task.insert("target".into(), target);
    } else if let Some(payload) = field("payload") {
        let json: serde_json::Value =
            serde_json::from_str(payload).map_err(|e| format!("payload: not JSON ({e})"))?;
        task.insert("payload".into(), serde_json::json!({"json": json}));
    }
    if let Some(at) = field("schedule_time") {
        task.insert("schedule_time".into(), as_rfc3339(at).into());
    }
    Ok(serde_json::Value::Object(task))
}

/// The latest 100 attempts a task's or a run's page shows.
const ATTEMPTS_SHOWN: &str = "100";

/// A task or a run (`segments`, its API path), then its attempts: an
/// attempt ends in the transaction that ends its task or run, so attempts
/// read after the task show every attempt its state implies (read
/// together, a page could show a task succeeded beside its last attempt
/// still without an answer).
async fn with_attempts(api: &ApiClient, key: &str, segments: &[&str]) -> (Answer, Answer) {
    let item = api.get(key, path(segments, &[])).await;
    let attempts = api
        .get(
            key,
            path(
                &[segments, &["attempts"]].concat(),
                &[("limit", ATTEMPTS_SHOWN)],
            ),
        )
        .await;
    (item, attempts)
}

async fn task_page(
    State(console): State<Arc<Console>>,
    viewer: Viewer,
    Path((queue, task_id)): Path<(String, String)>,
) -> Response {
    let (task, attempts) = with_attempts(
        &console.api,
        &viewer.session.key,
        &["queues", &queue, "tasks", &task_id],
    )
    .await;
    if !task.ok() {
        return html(task.status, pages::problem_page(&viewer, "Task", &task));
    }
    html(
        StatusCode::OK,
        pages::task(&viewer, &queue, &task_id, &task.body, &attempts),
    )
}

async fn task_action(
    State(console): State<Arc<Console>>,
    headers: HeaderMap,
    Path((queue, task_id, action)): Path<(String, String, String)>,
    body: Bytes,
) -> Response {
    let task_path = &["queues", queue.as_str(), "tasks", task_id.as_str()];
    let (method, api_path, done) = match action.as_str() {
        "cancel" => (Method::DELETE, path(task_path, &[]), "Task cancelled."),
        "run" => (
            Method::POST,
            path(&[task_path.as_slice(), &["run"]].concat(), &[]),
            "Task dispatched now.",
        ),
        "redrive" => (
            Method::POST,
            path(&[task_path.as_slice(), &["redrive"]].concat(), &[]),
            "Task redriven: it runs again with a fresh retry budget.",
        ),
        _ => return html(StatusCode::NOT_FOUND, pages::refused("No such action.")),
    };
    let back = pages::ui_path(task_path);
    console
        .act(&headers, &body, method, (api_path, None), &back, done)
        .await
}

async fn jobs_page(
    State(console): State<Arc<Console>>,
    viewer: Viewer,
    RawQuery(query): RawQuery,
) -> Response {
    let answer = list_page(&console, &viewer, "jobs", query.as_deref()).await;
    html(StatusCode::OK, pages::jobs(&viewer, &answer))
}

async fn job_page(
    State(console): State<Arc<Console>>,
    viewer: Viewer,
    Path(job): Path<String>,
    RawQuery(query): RawQuery,
) -> Response {
    let q = parse_query(query.as_deref());
    let token = q.get("page_token").map(String::as_str).unwrap_or("");
    let key = &viewer.session.key;
    let (answer, runs) = tokio::join!(
        console.api.get(key, path(&["jobs", &job], &[])),
        console.api.get(
            key,
            path(
                &["jobs", &job, "runs"],
                &[("limit", "20"), ("page_token", token)]
            )
        ),
    );
    if !answer.ok() {
        return html(answer.status, pages::problem_page(&viewer, "Job", &answer));
    }
    // The API computes the instants (idem-core's schedule module, with
    // its DST rules); the console shows them in the job's zone.
    let preview = console
        .api
        .call(
            key,
            Method::POST,
            "/v1/schedules/preview",
            Some(serde_json::json!({
                "schedule": answer.body["schedule"],
                "time_zone": answer.body["time_zone"],
                "count": PREVIEW_COUNT,
            })),
            None,
        )
        .await;
    html(
        StatusCode::OK,
        pages::job(&viewer, &job, &answer.body, &runs, &preview),
    )
}

async fn run_page(
    State(console): State<Arc<Console>>,
    viewer: Viewer,
    Path((job, run_id)): Path<(String, String)>,
) -> Response {
    let (run, attempts) = with_attempts(
        &console.api,
        &viewer.session.key,
        &["jobs", &job, "runs", &run_id],
    )
    .await;
    if !run.ok() {
        return html(run.status, pages::problem_page(&viewer, "Run", &run));
    }
    html(
        StatusCode::OK,
        pages::run(&viewer, &job, &run_id, &run.body, &attempts),
    )
}

async fn job_action(
    State(console): State<Arc<Console>>,
    headers: HeaderMap,
    Path((job, action)): Path<(String, String)>,
    body: Bytes,
) -> Response {
    let done = match action.as_str() {
        "pause" => "Job paused.",
        "resume" => "Job resumed.",
        "run" => "Job run started.",
        _ => return html(StatusCode::NOT_FOUND, pages::refused("No such action.")),
    };
    let back = pages::ui_path(&["jobs", &job]);
    console
        .act(
            &headers,
            &body,
            Method::POST,
            (path(&["jobs", &job, &action], &[]), None),
            &back,
            done,
        )
        .await
}

async fn access_page(State(console): State<Arc<Console>>, viewer: Viewer) -> Response {
    // What it shows and does is an admin's: anyone else is told once.
    if !viewer.can(Role::Admin) {
        return html(StatusCode::FORBIDDEN, pages::admins_only(&viewer, "Access"));
    }
    let key = &viewer.session.key;
    let (principals, secrets) = tokio::join!(
        console
            .api
            .get(key, path(&["principals"], &[("limit", "100")])),
        console.api.get(key, "/v1/signing-secrets"),
    );
    let mut keys = Vec::new();
    if let Some(items) = principals.body["items"].as_array() {
        let calls = items.iter().filter_map(|p| p["name"].as_str()).map(|name| {
            let api = &console.api;
            async move {
                (
                    name.to_string(),
                    api.get(
                        key,
                        path(&["principals", name, "keys"], &[("limit", "100")]),
                    )
                    .await,
                )
            }
        });
        keys = futures_util::future::join_all(calls).await;
    }
    html(
        StatusCode::OK,
        pages::access(&viewer, &principals, &keys, &secrets),
    )
}

async fn revoke_key(
    State(console): State<Arc<Console>>,
    headers: HeaderMap,
    Path((name, id)): Path<(String, String)>,
    body: Bytes,
) -> Response {
    console
        .act(
            &headers,
            &body,
            Method::DELETE,
            (path(&["principals", &name, "keys", &id], &[]), None),
            "/ui/access",
            "Key revoked.",
        )
        .await
}

async fn create_principal(
    State(console): State<Arc<Console>>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let form = parse_form(&body);
    let field = |f: &str| {
        form.get(f)
            .map(|v| v.trim().to_string())
            .unwrap_or_default()
    };
    let principal = serde_json::json!({
        "name": field("name"),
        "kind": field("kind"),
        "role": field("role"),
    });
    console
        .act(
            &headers,
            &body,
            Method::POST,
            (path(&["principals"], &[]), Some(principal)),
            "/ui/access",
            "Principal created; give it a key.",
        )
        .await
}

/// A new key, shown in the next page's message only: the API never shows
/// it again.
async fn create_key(
    State(console): State<Arc<Console>>,
    headers: HeaderMap,
    Path(name): Path<String>,
    body: Bytes,
) -> Response {
    let for_whom = name.clone();
    console
        .act_with(
            &headers,
            &body,
            Method::POST,
            (path(&["principals", &name, "keys"], &[]), None),
            "/ui/access",
            move |answer| match answer.body["key"].as_str() {
                Some(key) if answer.ok() => Flash {
                    ok: true,
                    text: format!("A key for {for_whom}. Copy it now: it is not shown again."),
                    secret: Some(key.to_string()),
                },
                _ => outcome(answer, ""),
            },
        )
        .await
}

async fn delete_secret(
    State(console): State<Arc<Console>>,
    headers: HeaderMap,
    Path(id): Path<String>,
    body: Bytes,
) -> Response {
    console
        .act(
            &headers,
            &body,
            Method::DELETE,
            (path(&["signing-secrets", &id], &[]), None),
            "/ui/access",
            "Signing secret deleted.",
        )
        .await
}

async fn rotate_secret(
    State(console): State<Arc<Console>>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    console
        .act(
            &headers,
            &body,
            Method::POST,
            ("/v1/signing-secrets/rotate".to_string(), None),
            "/ui/access",
            "A new signing secret was added; the old ones stay valid until deleted.",
        )
        .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_limits_form_says_what_it_cannot_read_and_when_it_changes_nothing() {
        let form = |pairs: &[(&str, &str)]| -> HashMap<String, String> {
            pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect()
        };
        let blank = form(&[("max_burst_size", "  "), ("dispatch_deadline", "")]);
        assert_eq!(
            limits_patch(&blank),
            Err("Nothing to change: every field was empty.".to_string())
        );
        assert_eq!(
            limits_patch(&form(&[
                ("dispatch_deadline", "1h 30m"),
                ("max_attempts", "4")
            ])),
            Ok(
                serde_json::json!({"dispatch_deadline_s": 5400, "retry_config": {"max_attempts": 4}})
            )
        );
        let bad = limits_patch(&form(&[("max_burst_size", "2.5")])).unwrap_err();
        assert!(bad.starts_with("max_burst_size:"), "{bad}");
        let bad = limits_patch(&form(&[("dispatch_deadline", "1.5s")])).unwrap_err();
        assert!(bad.contains("whole number of seconds"), "{bad}");
    }

    /// The attempts are asked for only once the task's answer is in: a
    /// task handler that yields before answering lets a read made beside
    /// it go first, and the log would show the attempts asked first.
    #[tokio::test]
    async fn a_page_reads_its_attempts_after_its_task() {
        let log = Arc::new(std::sync::Mutex::new(Vec::new()));
        let (task_log, attempts_log) = (log.clone(), log.clone());
        let api = Router::new()
            .route(
                "/v1/queues/q/tasks/t",
                get(async move || {
                    for _ in 0..8 {
                        tokio::task::yield_now().await;
                    }
                    task_log.lock().unwrap().push("task answered");
                    axum::Json(serde_json::json!({"task_id": "t"}))
                }),
            )
            .route(
                "/v1/queues/q/tasks/t/attempts",
                get(async move || {
                    attempts_log.lock().unwrap().push("attempts asked");
                    axum::Json(serde_json::json!({"items": []}))
                }),
            );
        let (task, attempts) =
            with_attempts(&ApiClient::new(api), "k", &["queues", "q", "tasks", "t"]).await;
        assert!(task.ok() && attempts.ok(), "{task:?} {attempts:?}");
        assert_eq!(*log.lock().unwrap(), ["task answered", "attempts asked"]);
    }

    #[test]
    fn a_date_time_field_is_read_as_utc() {
        assert_eq!(as_rfc3339("2026-11-30T17:05"), "2026-11-30T17:05:00Z");
        assert_eq!(as_rfc3339("2026-11-30T17:05:00Z"), "2026-11-30T17:05:00Z");
        assert_eq!(as_rfc3339("yesterday"), "yesterday");
    }

    #[test]
    fn the_session_cookie_is_found_among_others() {
        let mut h = HeaderMap::new();
        h.insert(
            header::COOKIE,
            HeaderValue::from_static("a=1; idem_console=abc; b=2"),
        );
        assert_eq!(session_id(&h).as_deref(), Some("abc"));
    }

    #[test]
    fn a_login_leads_only_to_a_console_page() {
        assert_eq!(
            safe_next("/ui/queues/q?state=failed"),
            Some("/ui/queues/q?state=failed")
        );
        for away in [
            "//evil.example/ui/",
            "/ui//evil.example",
            "/ui/\\evil.example",
            "https://evil.example/ui/x",
            "/v1/queues",
            "/ui/login?next=/ui/x",
            "/ui/queues\nx",
        ] {
            assert_eq!(safe_next(away), None, "{away}");
        }
    }
}
