//! The console's pages as HTML, from the API's JSON answers.
//!
//! Pages read the answers as JSON values rather than the wire types, so a
//! field the API gains (queue `stats`, `failed_retention_s`, callbacks)
//! shows up without a change here. Every acting form carries the session's
//! CSRF token and an Idempotency-Key of its own (one per rendered form), so
//! a form sent twice acts once.

use super::Viewer;
use super::client::Answer;
use super::session::random_token;
use idem_core::tenancy::Role;
use maud::{DOCTYPE, Markup, html};
use serde_json::Value;
use std::collections::HashMap;

const STATES: [&str; 6] = [
    "queued",
    "scheduled",
    "running",
    "succeeded",
    "failed",
    "cancelled",
];

fn layout(title: &str, viewer: Option<&Viewer>, active: &str, body: Markup) -> Markup {
    html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                title { (title) " · Idem" }
                link rel="stylesheet" href="/ui/assets/console.css";
                script src="/ui/assets/console.js" defer {}
            }
            body {
                header.top {
                    a.brand href="/ui/queues" { "Idem" }
                    @if let Some(v) = viewer {
                        nav {
                            a href="/ui/queues" aria-current=[(active == "queues").then_some("page")] { "Queues" }
                            a href="/ui/jobs" aria-current=[(active == "jobs").then_some("page")] { "Jobs" }
                            @if v.can(Role::Admin) {
                                a href="/ui/access" aria-current=[(active == "access").then_some("page")] { "Access" }
                            }
                        }
                        // Shown by the script, which alone can act on it.
                        div.refresh hidden {
                            label { input #auto-refresh type="checkbox"; " Auto-refresh" }
                            " every "
                            select #refresh-every aria-label="seconds between refreshes" {
                                @for s in [2, 5, 10, 30, 60] {
                                    option value=(s) selected[s == 10] { (s) " s" }
                                }
                            }
                        }
                        form.find method="get" action="/ui/find" role="search" {
                            input type="search" name="task_id" placeholder="Find a task by ID" aria-label="task ID";
                        }
                        div.who {
                            span.principal title="principal and role" {
                                (v.caller.principal) " · " span.role { (v.caller.role.as_str()) }
                            }
                            form method="post" action="/ui/logout" {
                                input type="hidden" name="csrf" value=(v.session.csrf);
                                button.link type="submit" id="logout" { "Log out" }
                            }
                        }
                    }
                }
                main {
                    @if let Some(f) = viewer.and_then(|v| v.flash.as_ref()) {
                        div.flash.ok[f.ok].bad[!f.ok] role="status" {
                            (f.text)
                            @if let Some(secret) = &f.secret {
                                div.secret {
                                    code #new-secret { (secret) }
                                    button.copy type="button" data-copy="new-secret" hidden { "Copy" }
                                }
                            }
                        }
                    }
                    (body)
                }
            }
        }
    }
}

/// A POST form of one button, which acts through the API.
fn action(viewer: &Viewer, url: &str, name: &str, label: &str, confirm: Option<&str>) -> Markup {
    action_with(viewer, url, name, label, confirm, &[])
}

/// [`action`] carrying `fields` with the form (a filter the action obeys).
fn action_with(
    viewer: &Viewer,
    url: &str,
    name: &str,
    label: &str,
    confirm: Option<&str>,
    fields: &[(&str, &str)],
) -> Markup {
    html! {
        form.action method="post" action=(url) data-confirm=[confirm] {
            input type="hidden" name="csrf" value=(viewer.session.csrf);
            input type="hidden" name="idem" value=(random_token());
            @for (field, value) in fields.iter().filter(|(_, v)| !v.is_empty()) {
                input type="hidden" name=(field) value=(value);
            }
            button.act type="submit" data-action=(name) .danger[confirm.is_some()] { (label) }
        }
    }
}

/// "1 task", "3 tasks".
fn tasks_count(n: u64) -> String {
    if n == 1 {
        "1 task".to_string()
    } else {
        format!("{n} tasks")
    }
}

fn state(s: &str) -> Markup {
    html! { span class={ "state state-" (s) } { (s) } }
}

/// A queue's state: `running` is its healthy state, not a task's
/// in-flight one.
fn queue_state(s: &str) -> Markup {
    html! { span class={ "state state-queue-" (s) } { (s) } }
}

/// An instant as `2026-11-30 17:05:03` (UTC), the full value in its title.
/// An instant as the API gives it, shown in UTC and saying so.
fn when(v: &Value) -> Markup {
    match v.as_str() {
        Some(s) => html! { time datetime=(s) title=(s) { (utc(s)) } },
        None => html! { span.none { "—" } },
    }
}

/// `2026-12-05 14:03:07 UTC`, or the text as it came if it is no instant.
fn utc(s: &str) -> String {
    s.parse::<jiff::Timestamp>()
        .map(|t| t.strftime("%Y-%m-%d %H:%M:%S UTC").to_string())
        .unwrap_or_else(|_| s.to_string())
}

/// How long from `from` to `to`, in its largest whole unit: `45 s`,
/// `3 min`, `2 h`, `4 d`.
fn span_between(from: jiff::Timestamp, to: jiff::Timestamp) -> String {
    let s = to.duration_since(from).as_secs().unsigned_abs();
    match s {
        0..60 => format!("{s} s"),
        60..3600 => format!("{} min", s / 60),
        3600..86400 => format!("{} h", s / 3600),
        _ => format!("{} d", s / 86400),
    }
}

/// An instant of a list, relative to now (`3 min ago`, `in 2 h`), the
/// exact time in UTC on hover.
fn ago(v: &Value, now: jiff::Timestamp) -> Markup {
    let Some(s) = v.as_str() else {
        return html! { span.none { "—" } };
    };
    let Ok(t) = s.parse::<jiff::Timestamp>() else {
        return html! { (s) };
    };
    let said = if t <= now {
        format!("{} ago", span_between(t, now))
    } else {
        format!("in {}", span_between(now, t))
    };
    html! { time datetime=(s) title=(utc(s)) { (said) } }
}

/// How long the oldest due task has waited (`4 min`), its due time in UTC
/// on hover.
fn waited(v: &Value, now: jiff::Timestamp) -> Markup {
    let Some(s) = v.as_str() else {
        return html! { span.none { "—" } };
    };
    match s.parse::<jiff::Timestamp>() {
        Ok(t) => html! { time datetime=(s) title=(utc(s)) { (span_between(t.min(now), now)) } },
        Err(_) => html! { (s) },
    }
}

fn text(v: &Value) -> String {
    match v {
        Value::Null => "—".into(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Every field of a resource: scalars as text, objects as compact JSON.
fn fields(obj: &Value, skip: &[&str]) -> Markup {
    html! {
        dl.fields {
            @if let Some(map) = obj.as_object() {
                @for (k, v) in map.iter().filter(|(k, _)| !skip.contains(&k.as_str())) {
                    div {
                        dt { (k) }
                        dd {
                            @if k.ends_with("_at") || k.ends_with("_time") { (when(v)) }
                            @else if v.is_object() || v.is_array() { code { (v.to_string()) } }
                            @else { (text(v)) }
                        }
                    }
                }
            }
        }
    }
}

/// What went wrong in an attempt: the dispatcher's error (no answer: a
/// refused connection, a deadline), or else the target's non-2xx answer.
fn attempt_error(a: &Value) -> Option<String> {
    if let Some(e) = a["error"].as_str() {
        return Some(e.to_string());
    }
    let code = a["status_code"]
        .as_u64()
        .and_then(|c| u16::try_from(c).ok())?;
    let status = http::StatusCode::from_u16(code).ok()?;
    (!status.is_success()).then(|| {
        format!(
            "the target answered HTTP {code} {}",
            status.canonical_reason().unwrap_or("")
        )
        .trim_end()
        .to_string()
    })
}

fn problem(answer: &Answer) -> Markup {
    html! { p.problem role="alert" { (answer.problem_text()) } }
}

/// `1,214`.
fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A list's pages: which rows this one holds ("51–100 of 1,214", the
/// total when it is known), and links to the previous, next and first
/// pages, each keeping the list's filter (`params`).
fn pager(
    base: &str,
    params: &[(&str, &str)],
    answer: &Answer,
    paging: &super::Paging,
    limit: u64,
    total: Option<u64>,
) -> Markup {
    let link = |token: &str, trail: &[String]| {
        let mut q = form_urlencoded::Serializer::new(String::new());
        for (k, v) in params.iter().filter(|(_, v)| !v.is_empty()) {
            q.append_pair(k, v);
        }
        if !token.is_empty() {
            q.append_pair("page_token", token);
            for t in trail {
                q.append_pair("trail", t);
            }
        }
        let q = q.finish();
        if q.is_empty() {
            base.to_string()
        } else {
            format!("{base}?{q}")
        }
    };
    let rows = answer.body["items"].as_array().map_or(0, Vec::len) as u64;
    // A page reached without its trail (an old link) is somewhere past the
    // first; only the way forward and back to the start is known.
    let index =
        (paging.token.is_empty() || !paging.trail.is_empty()).then_some(paging.trail.len() as u64);
    let next = answer.body["next_page_token"].as_str().map(|t| {
        let mut trail = paging.trail.clone();
        trail.push(paging.token.clone());
        link(t, &trail)
    });
    html! {
        nav.pages aria-label="pages" {
            @if let (Some(i), true) = (index, rows > 0) {
                span.range {
                    (thousands(i * limit + 1)) "–" (thousands(i * limit + rows))
                    @if let Some(n) = total { " of " (thousands(n)) }
                }
            }
            @if let Some((back, before)) = paging.trail.split_last() {
                a.prev href=(link(back, before)) { "← Previous" }
            } @else if !paging.token.is_empty() {
                a.prev href=(link("", &[])) { "← Previous" }
            }
            @if let Some(href) = next {
                a.next href=(href) { "Next →" }
            }
            @if !paging.token.is_empty() {
                a.first href=(link("", &[])) { "First page" }
            }
        }
    }
}

/// The console's address of an API resource, each segment escaped as
/// the API's `Location` escapes it.
pub fn ui_path(segments: &[&str]) -> String {
    format!("/ui{}", &crate::api::location(segments)[3..])
}

pub fn login(error: Option<&str>, notice: Option<&str>, token: &str, next: Option<&str>) -> Markup {
    layout(
        "Log in",
        None,
        "",
        html! {
            section.login {
                h1 { "Log in" }
                p { "Paste an API key. The console acts with that key's role: a reader sees, a writer also runs and cancels tasks and jobs, an admin also manages queues and access." }
                @if let Some(n) = notice { p.notice role="status" { (n) } }
                @if let Some(e) = error { p.problem role="alert" { (e) } }
                form method="post" action="/ui/login" {
                    input type="hidden" name="login" value=(token);
                    @if let Some(next) = next { input type="hidden" name="next" value=(next); }
                    label for="key" { "API key" }
                    input #key type="password" name="key" autocomplete="current-password" required autofocus;
                    button.primary type="submit" { "Log in" }
                }
            }
        },
    )
}

/// A number field of a form, with its current value.
fn number_field(name: &str, label: &str, value: &Value, step: &str) -> Markup {
    html! {
        label {
            (label)
            input type="number" name=(name) min="0" step=(step) value=[value.as_f64().map(|n| n.to_string())];
        }
    }
}

/// A queue's limits, in human units: counts, a rate named as the maximum
/// it is, the deadline as a duration.
fn limits_form(viewer: &Viewer, base: &str, q: &Value) -> Markup {
    let deadline = q["dispatch_deadline_s"]
        .as_i64()
        .map(|s| format!("{:#}", jiff::SignedDuration::from_secs(s)));
    html! {
        details.limits {
            summary { "Edit limits" }
            form.edit method="post" action={ (base) "/limits" } {
                input type="hidden" name="csrf" value=(viewer.session.csrf);
                input type="hidden" name="idem" value=(random_token());
                (number_field("max_concurrent_dispatches", "Most tasks running at once", &q["rate_limits"]["max_concurrent_dispatches"], "1"))
                (number_field("max_dispatches_per_second", "Maximum rate (dispatches per second)", &q["rate_limits"]["max_dispatches_per_second"], "any"))
                (number_field("max_burst_size", "Largest burst", &q["rate_limits"]["max_burst_size"], "1"))
                label {
                    "Dispatch deadline (a duration: 90s, 10m, 1h 30m)"
                    input type="text" name="dispatch_deadline" value=[deadline];
                }
                (number_field("max_attempts", "Most attempts of a task", &q["retry_config"]["max_attempts"], "1"))
                (number_field("group_concurrency", "Most running per group", &q["group_concurrency"], "1"))
                button type="submit" data-action="limits" { "Save limits" }
            }
        }
    }
}

/// A new task: its ID (empty: the server picks one), a push task's target
/// URL and body or a pull task's JSON payload, and when it runs.
fn task_form(viewer: &Viewer, base: &str, pull: bool) -> Markup {
    html! {
        details.new-task {
            summary { "Create a task" }
            form.edit method="post" action={ (base) "/create-task" } {
                input type="hidden" name="csrf" value=(viewer.session.csrf);
                input type="hidden" name="idem" value=(random_token());
                label { "Task ID (empty: one is made)" input type="text" name="task_id" placeholder="invoice-2026-11"; }
                @if pull {
                    label.wide { "Payload (JSON)" textarea name="payload" rows="4" placeholder="{\"invoice\": 42}" {} }
                } @else {
                    label { "Target URL" input type="url" name="url" required placeholder="https://billing.internal/run"; }
                    label.wide { "Body" textarea name="body" rows="4" {} }
                }
                label { "Run at (UTC; empty: now)" input type="datetime-local" name="schedule_time" step="1"; }
                button type="submit" data-action="create-task" { "Create task" }
            }
        }
    }
}

/// A task's page in the console.
pub fn task_path(queue: &str, id: &str) -> String {
    ui_path(&["queues", queue, "tasks", id])
}

/// The tasks of one ID found across queues: none, or several (one goes
/// straight to its page).
pub fn found(
    viewer: &Viewer,
    id: &str,
    found: &[(String, Value)],
    invalid: Option<&str>,
) -> Markup {
    layout(
        "Find a task",
        Some(viewer),
        "",
        html! {
            h1 { "Tasks with ID " code { (id) } }
            @if let Some(why) = invalid {
                p.problem role="alert" { "No task can have this ID: " (why) }
            } @else if found.is_empty() {
                p.empty { "No queue you can see holds a task with this ID." }
            } @else {
                p.hint { "Several queues hold a task with this ID." }
                div.scroll {
                    table.list.found {
                        thead { tr { th { "Queue" } th { "State" } th { "Created" } } }
                        tbody {
                            @for (queue, t) in found {
                                tr {
                                    td { a.task-link href=(task_path(queue, id)) { (queue) } }
                                    td { (state(t["state"].as_str().unwrap_or("?"))) }
                                    td { (ago(&t["created_at"], viewer.now)) }
                                }
                            }
                        }
                    }
                }
            }
        },
    )
}

/// A page for admins, to anyone else: one line saying so.
pub fn admins_only(viewer: &Viewer, title: &str) -> Markup {
    layout(
        title,
        Some(viewer),
        "",
        html! {
            section {
                h1 { (title) }
                p.problem role="alert" {
                    "This page is for admins; this session's key is a "
                    (viewer.caller.role.as_str()) "'s."
                }
            }
        },
    )
}

/// A console address that names no page, inside the console's frame.
pub fn not_found(viewer: &Viewer) -> Markup {
    layout(
        "Not found",
        Some(viewer),
        "",
        html! {
            section {
                h1 { "Not found" }
                p.problem role="alert" { "No page of the console has this address." }
                p { a href="/ui/queues" { "Back to the queues" } }
            }
        },
    )
}

pub fn refused(text: &str) -> Markup {
    layout(
        "Refused",
        None,
        "",
        html! {
            section {
                h1 { "Refused" }
                p.problem role="alert" { (text) }
                p { a href="/ui/queues" { "Back to the console" } }
            }
        },
    )
}

pub fn problem_page(viewer: &Viewer, what: &str, answer: &Answer) -> Markup {
    layout(
        what,
        Some(viewer),
        "",
        html! { h1 { (what) } (problem(answer)) },
    )
}

pub fn queues(viewer: &Viewer, answer: &Answer) -> Markup {
    layout(
        "Queues",
        Some(viewer),
        "queues",
        html! {
            h1 { "Queues" }
            @if !answer.ok() { (problem(answer)) }
            @else {
                div.scroll {
                    table.list.queues {
                        colgroup { col.w-name; col.w-state; col.w-num; col.w-num.wide; col.w-num; col.w-num.wide; col.w-time.wide; }
                        thead { tr {
                            th { "Queue" } th { "State" } th.num { "Queued" } th.num.wide { "Running" }
                            th.num { "Failed" } th.num.wide { "Rate/s" } th.wide { "Oldest due" }
                        } }
                        tbody {
                            @for q in answer.body["items"].as_array().into_iter().flatten() {
                                @let name = q["name"].as_str().unwrap_or("");
                                @let stats = &q["stats"];
                                tr {
                                    td { a.queue-link href=(ui_path(&["queues", name])) { (name) } }
                                    td { (queue_state(q["state"].as_str().unwrap_or("?"))) }
                                    td.num { (text(&stats["tasks"]["queued"])) }
                                    td.num.wide { (text(&stats["tasks"]["running"])) }
                                    td.num { (text(&stats["tasks"]["failed"])) }
                                    td.num.wide { (text(&q["rate_limits"]["max_dispatches_per_second"])) }
                                    td.wide { (waited(&stats["oldest_due_time"], viewer.now)) }
                                }
                            }
                        }
                    }
                }
                @if answer.body["items"].as_array().is_some_and(|i| i.is_empty()) {
                    p.empty { "No queues yet. Create one with " code { "idem queue create NAME" } "." }
                }
                (pager("/ui/queues", &[], answer, &viewer.paging, 50, None))
            }
        },
    )
}

pub fn queue(
    viewer: &Viewer,
    name: &str,
    queue: &Answer,
    tasks: &Answer,
    groups: &Answer,
    q: &HashMap<String, String>,
    matching: Option<u64>,
) -> Markup {
    let base = ui_path(&["queues", name]);
    let get = |k: &str| q.get(k).map(String::as_str).unwrap_or("");
    let filter_params: Vec<(&str, &str)> =
        super::TASK_FILTERS.iter().map(|f| (*f, get(f))).collect();
    let tab = |s: &str| {
        let mut params: Vec<(&str, &str)> = filter_params
            .iter()
            .filter(|(k, _)| *k != "state")
            .copied()
            .collect();
        params.push(("state", s));
        let mut ser = form_urlencoded::Serializer::new(String::new());
        for (k, v) in params.iter().filter(|(_, v)| !v.is_empty()) {
            ser.append_pair(k, v);
        }
        let qs = ser.finish();
        if qs.is_empty() {
            base.clone()
        } else {
            format!("{base}?{qs}")
        }
    };
    let body = &queue.body;
    // Purge cancels the tasks that are not running: those waiting.
    let waiting = ["queued", "scheduled"]
        .iter()
        .map(|s| body["stats"]["tasks"][s].as_u64())
        .sum::<Option<u64>>();
    let purge_question = match waiting {
        Some(n) => format!(
            "Cancel the {} of queue {name} that are not running?",
            tasks_count(n)
        ),
        None => format!("Cancel every task of queue {name} that is not running?"),
    };
    // The redrive acts on what the filter shows, and says how much.
    let ended = if get("state") == "cancelled" {
        "cancelled"
    } else {
        "failed"
    };
    let mut scope = String::new();
    if !get("id_prefix").is_empty() {
        scope.push_str(&format!(" whose ID starts with \"{}\"", get("id_prefix")));
    }
    if !get("created_after").is_empty() {
        scope.push_str(&format!(" created at or after {}", get("created_after")));
    }
    if !get("created_before").is_empty() {
        scope.push_str(&format!(" created before {}", get("created_before")));
    }
    let redrive_question = match matching {
        Some(n) => format!(
            "Run again the {} {ended} {} of queue {name}{scope}?",
            n,
            if n == 1 { "task" } else { "tasks" }
        ),
        None => format!("Run again every {ended} task of queue {name}{scope}?"),
    };
    let redrive_label = match matching {
        Some(n) => format!("Redrive {ended} tasks ({n})"),
        None => format!("Redrive {ended} tasks"),
    };
    // The list's total, when the statistics hold it: a state's count, or
    // every state's, and no other filter.
    let counts = &body["stats"]["tasks"];
    let listed_total = if ["id_prefix", "created_after", "created_before"]
        .iter()
        .any(|f| !get(f).is_empty())
    {
        None
    } else if get("state").is_empty() {
        STATES
            .iter()
            .map(|s| counts[s].as_u64())
            .sum::<Option<u64>>()
    } else {
        counts[get("state")].as_u64()
    };
    let redrive_fields: Vec<(&str, &str)> =
        ["state", "id_prefix", "created_after", "created_before"]
            .iter()
            .map(|f| (*f, get(f)))
            .collect();
    layout(
        name,
        Some(viewer),
        "queues",
        html! {
            p.crumbs { a href="/ui/queues" { "Queues" } " / " }
            div.title {
                h1 { (name) }
                @if queue.ok() { (queue_state(body["state"].as_str().unwrap_or("?"))) }
                @if viewer.can(Role::Admin) && queue.ok() {
                    div.actions {
                        @if body["state"] == "paused" {
                            (action(viewer, &format!("{base}/resume"), "resume", "Resume", None))
                        } @else {
                            (action(viewer, &format!("{base}/pause"), "pause", "Pause", None))
                        }
                        (action(viewer, &format!("{base}/purge"), "purge", "Purge",
                            Some(&purge_question)))
                    }
                }
            }
            @if !queue.ok() { (problem(queue)) }
            @else {
                @if let Some(stats) = body.get("stats").filter(|s| s.is_object()) {
                    section.stats aria-label="statistics" {
                        @for s in STATES {
                            div.stat { span.n { (text(&stats["tasks"][s])) } span.l { (state(s)) } }
                        }
                        div.stat { span.n { (text(&stats["in_flight"])) } span.l { "in flight" } }
                        div.stat { span.n { (text(&stats["dispatched_last_minute"])) } span.l { "dispatched last minute" } }
                        div.stat { span.n { (waited(&stats["oldest_due_time"], viewer.now)) } span.l { "oldest due waited" } }
                        div.stat { span.n { (text(&stats["groups_with_due"])) } span.l { "groups with due tasks" } }
                    }
                }
                details.config {
                    summary { "Configuration and limits" }
                    (fields(body, &["name", "state", "stats"]))
                }
                @if viewer.can(Role::Admin) {
                    (limits_form(viewer, &base, body))
                }
                @if viewer.can(Role::Writer) {
                    (task_form(viewer, &base, body["mode"] == "pull"))
                }
                @if let Some(items) = groups.body["items"].as_array().filter(|g| !g.is_empty()) {
                    section.groups aria-label="groups" {
                        h2 { "Groups" }
                        p.hint {
                            "Groups with live tasks, by name"
                            @if groups.body["next_page_token"].is_string() { " (the first " (items.len()) ")" }
                            ". Limit: "
                            @match body["group_concurrency"].as_u64() {
                                Some(n) => { (n) " running per group" },
                                None => { "none" },
                            }
                            @if body["group_order"] == "fifo" { ", one at a time in order (FIFO)" }
                            "."
                        }
                        div.scroll {
                            table.list.groups {
                                thead { tr { th { "Group" } th.num { "Running" } th.num { "Due" } th.num { "Scheduled" } } }
                                tbody {
                                    @for g in items {
                                        tr {
                                            td.id { (text(&g["group"])) }
                                            td.num { (text(&g["running"])) }
                                            td.num { (text(&g["due"])) }
                                            td.num { (text(&g["scheduled"])) }
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }
            div.title {
                h2 { "Tasks" }
                @if viewer.can(Role::Writer) && queue.ok() {
                    div.actions {
                        (action_with(viewer, &format!("{base}/redrive-failed"), "redrive-failed", &redrive_label,
                            Some(&redrive_question), &redrive_fields))
                    }
                }
            }
            nav.tabs aria-label="task state" {
                a href=(tab("")) aria-current=[get("state").is_empty().then_some("page")] { "all" }
                @for s in STATES {
                    a href=(tab(s)) aria-current=[(get("state") == s).then_some("page")] { (s) }
                }
            }
            form.search method="get" action=(base) {
                input type="hidden" name="state" value=(get("state"));
                label { "ID prefix" input type="search" name="id_prefix" value=(get("id_prefix")) placeholder="order-"; }
                label { "Created after (UTC)" input type="text" name="created_after" value=(get("created_after")) placeholder="2026-11-30T00:00:00Z"; }
                label { "Created before (UTC)" input type="text" name="created_before" value=(get("created_before")) placeholder="2026-12-01T00:00:00Z"; }
                button type="submit" { "Search" }
            }
            @if !tasks.ok() { (problem(tasks)) }
            @else {
                div.scroll {
                    table.list.tasks {
                        colgroup { col.w-id; col.w-state; col.w-num; col.w-num; col.w-ago.wide; col.w-ago.wide; }
                        thead { tr {
                            th { "Task ID" } th { "State" } th.num { "Attempts" } th.num { "Last status" }
                            th.wide { "Scheduled" } th.wide { "Created" }
                        } }
                        tbody {
                            @for t in tasks.body["items"].as_array().into_iter().flatten() {
                                @let id = t["task_id"].as_str().unwrap_or("");
                                tr {
                                    td.id { a.task-link href=(ui_path(&["queues", name, "tasks", id])) { (id) } }
                                    td { (state(t["state"].as_str().unwrap_or("?"))) }
                                    td.num { (text(&t["attempt_count"])) }
                                    td.num { (text(&t["last_attempt"]["status_code"])) }
                                    td.wide { (ago(&t["schedule_time"], viewer.now)) }
                                    td.wide { (ago(&t["created_at"], viewer.now)) }
                                }
                            }
                        }
                    }
                }
                @if tasks.body["items"].as_array().is_some_and(|i| i.is_empty()) {
                    p.empty { "No tasks match." }
                }
                (pager(&base, &filter_params, tasks, &viewer.paging, 50, listed_total))
            }
        },
    )
}

pub fn task(viewer: &Viewer, queue: &str, id: &str, t: &Value, attempts: &Answer) -> Markup {
    let base = ui_path(&["queues", queue, "tasks", id]);
    let s = t["state"].as_str().unwrap_or("?");
    let ended = matches!(s, "failed" | "cancelled");
    let pending = matches!(s, "queued" | "scheduled");
    layout(
        id,
        Some(viewer),
        "queues",
        html! {
            p.crumbs { a href="/ui/queues" { "Queues" } " / " a href=(ui_path(&["queues", queue])) { (queue) } " / " }
            div.title {
                h1 { code { (id) } }
                (state(s))
                @if viewer.can(Role::Writer) {
                    div.actions {
                        @if pending { (action(viewer, &format!("{base}/run"), "run", "Run now", None)) }
                        @if ended { (action(viewer, &format!("{base}/redrive"), "redrive", "Redrive", None)) }
                        @if pending || s == "running" {
                            (action(viewer, &format!("{base}/cancel"), "cancel", "Cancel", Some("Cancel this task?")))
                        }
                    }
                }
            }
            // The banner follows the state: a task run again is not failed.
            @if s == "failed" {
                @if let Some(e) = attempt_error(&t["last_attempt"]) {
                    p.last-error { strong { "Last error: " } (e) }
                }
            }
            (attempts_table(attempts))
            @for (field, title) in [("target", "Target"), ("payload", "Payload")] {
                @if let Some(v) = t.get(field).filter(|v| v.is_object()) {
                    @let (rest, body) = split_body(v);
                    @if rest.as_object().is_some_and(|o| !o.is_empty()) {
                        (text_block(field, title, &pretty(&rest)))
                    }
                    @if let Some(body) = body {
                        (text_block(&format!("{field}-body"), &format!("{title} body"), &body))
                    }
                }
            }
            details.config open {
                summary { "Task" }
                (fields(t, &["task_id", "state", "last_attempt", "target", "payload"]))
            }
        },
    )
}

/// A task's or run's attempts, oldest first, each failed one followed by
/// the start of what its target answered.
fn attempts_table(attempts: &Answer) -> Markup {
    html! {
        h2 { "Attempts" }
        @if !attempts.ok() { (problem(attempts)) }
        @else {
            div.scroll {
                table.list.attempts {
                    colgroup { col.w-num; col.w-time.wide; col.w-num; col.w-num; col.w-error; }
                    thead { tr {
                        th.num { "#" } th.wide { "Started" } th.num { "Status" } th.num { "Duration" } th { "Error" }
                    } }
                    tbody {
                        @for a in attempts.body["items"].as_array().into_iter().flatten() {
                            @let code = a["status_code"].as_u64();
                            tr {
                                td.num { (text(&a["attempt"])) }
                                td.wide { (when(&a["started_at"])) }
                                td.num.ok[code.is_some_and(|c| (200..300).contains(&c))].bad[code.is_some_and(|c| c >= 300)] { (text(&a["status_code"])) }
                                td.num { @if let Some(ms) = a["duration_ms"].as_u64() { (ms) " ms" } @else { "—" } }
                                td.error { (attempt_error(a).unwrap_or_default()) }
                            }
                            @if let Some(r) = a["response"].as_object() {
                                tr.response { td colspan="5" { (target_answer(a, r)) } }
                            }
                        }
                    }
                }
            }
            @if attempts.body["items"].as_array().is_some_and(|i| i.is_empty()) {
                p.empty { "No attempt yet." }
            }
        }
    }
}

/// What a target answered to attempt `a`: its content type and the start
/// of its body, indented when it is JSON.
fn target_answer(a: &Value, r: &serde_json::Map<String, Value>) -> Markup {
    let raw = r.get("body").and_then(Value::as_str).unwrap_or("");
    let body = match serde_json::from_str::<Value>(raw) {
        Ok(json) if json.is_object() || json.is_array() => pretty(&json),
        _ => raw.to_string(),
    };
    let truncated = r.get("truncated").and_then(Value::as_bool) == Some(true);
    html! {
        details.answer open {
            summary {
                "Answer to attempt " (text(&a["attempt"]))
                @if let Some(t) = r.get("content_type").and_then(Value::as_str) { " · " code { (t) } }
                @if truncated { span.hint { " (its first 1 KiB)" } }
            }
            @if body.is_empty() { p.empty { "An empty body." } }
            @else { pre.answer-body { (body) } }
        }
    }
}

fn pretty(v: &Value) -> String {
    serde_json::to_string_pretty(v).unwrap_or_default()
}

/// A target or payload without its body, and the body as a person reads
/// it: JSON indented (a `json` value, or a `body` text that parses as
/// JSON), other text as it is.
fn split_body(v: &Value) -> (Value, Option<String>) {
    let mut rest = v.clone();
    let Some(obj) = rest.as_object_mut() else {
        return (rest, None);
    };
    let body = if let Some(json) = obj.remove("json") {
        Some(pretty(&json))
    } else if let Some(Value::String(text)) = obj.remove("body") {
        Some(match serde_json::from_str::<Value>(&text) {
            Ok(json) if json.is_object() || json.is_array() => pretty(&json),
            _ => text,
        })
    } else {
        obj.remove("body_base64").map(|b| text(&b))
    };
    (rest, body)
}

/// A text in full, the page's width, folded when long, with a button (the
/// script's) that copies it.
fn text_block(id: &str, title: &str, content: &str) -> Markup {
    let size = content.len();
    let source = format!("text-{id}");
    html! {
        details.json open[size <= 2048] {
            summary {
                (title)
                @if size > 2048 { span.hint { " (" (size.div_ceil(1024)) " KiB, folded)" } }
                button.copy type="button" data-copy=(source) hidden { "Copy" }
            }
            pre #(source) { (content) }
        }
    }
}

pub fn jobs(viewer: &Viewer, answer: &Answer) -> Markup {
    layout(
        "Jobs",
        Some(viewer),
        "jobs",
        html! {
            h1 { "Cron jobs" }
            @if !answer.ok() { (problem(answer)) }
            @else {
                div.scroll {
                    table.list.jobs {
                        colgroup { col.w-name; col.w-sched; col.w-state; col.w-time; col.w-state; }
                        thead { tr { th { "Job" } th { "Schedule" } th { "State" } th { "Next run" } th { "Last run" } } }
                        tbody {
                            @for j in answer.body["items"].as_array().into_iter().flatten() {
                                @let name = j["name"].as_str().unwrap_or("");
                                tr {
                                    td { a.job-link href=(ui_path(&["jobs", name])) { (name) } }
                                    td { code { (text(&j["schedule"])) } " " span.tz { (text(&j["time_zone"])) } }
                                    td { (state(j["state"].as_str().unwrap_or("?"))) }
                                    td { (next_run(j, viewer.now)) }
                                    td { @if let Some(s) = j["last_run"]["state"].as_str() { (state(s)) } @else { span.none { "—" } } }
                                }
                            }
                        }
                    }
                }
                @if answer.body["items"].as_array().is_some_and(|i| i.is_empty()) {
                    p.empty { "No cron jobs yet." }
                }
                (pager("/ui/jobs", &[], answer, &viewer.paging, 50, None))
            }
        },
    )
}

/// A job's next run in its list: relative, then in the job's zone; a
/// paused job's marked as the run it would make once resumed.
fn next_run(j: &Value, now: jiff::Timestamp) -> Markup {
    let zone = j["time_zone"].as_str().unwrap_or("UTC");
    let paused = j["state"] == "paused";
    if j["next_run_time"].is_null() {
        return match paused {
            true => html! { span.paused { "when resumed" } },
            false => html! { span.none { "—" } },
        };
    }
    html! {
        @if paused { span.paused { "when resumed: " } }
        (ago(&j["next_run_time"], now))
        span.tz { " · " (in_zone_short(&j["next_run_time"], zone)) }
    }
}

/// `02:00 CET`, or with its date when not today in the zone.
fn in_zone_short(v: &Value, zone: &str) -> String {
    let Some(s) = v.as_str() else {
        return "—".into();
    };
    match (s.parse::<jiff::Timestamp>(), jiff::tz::TimeZone::get(zone)) {
        (Ok(t), Ok(tz)) => t.to_zoned(tz).strftime("%Y-%m-%d %H:%M %Z").to_string(),
        _ => s.to_string(),
    }
}

/// An instant in `zone`, as a person there reads it.
fn in_zone(v: &Value, zone: &str) -> String {
    let Some(s) = v.as_str() else {
        return "—".into();
    };
    match (s.parse::<jiff::Timestamp>(), jiff::tz::TimeZone::get(zone)) {
        (Ok(t), Ok(tz)) => t
            .to_zoned(tz)
            .strftime("%a %Y-%m-%d %H:%M:%S %Z")
            .to_string(),
        _ => s.to_string(),
    }
}

pub fn job(viewer: &Viewer, name: &str, j: &Value, runs: &Answer, preview: &Answer) -> Markup {
    let base = ui_path(&["jobs", name]);
    let zone = j["time_zone"].as_str().unwrap_or("UTC");
    let paused = j["state"] == "paused";
    layout(
        name,
        Some(viewer),
        "jobs",
        html! {
            p.crumbs { a href="/ui/jobs" { "Jobs" } " / " }
            div.title {
                h1 { (name) }
                (state(j["state"].as_str().unwrap_or("?")))
                @if viewer.can(Role::Writer) {
                    div.actions {
                        @if j["state"] == "paused" {
                            (action(viewer, &format!("{base}/resume"), "resume", "Resume", None))
                        } @else {
                            (action(viewer, &format!("{base}/pause"), "pause", "Pause", None))
                        }
                        (action(viewer, &format!("{base}/run"), "run", "Run now", None))
                    }
                }
            }
            div.split {
                section {
                    @if paused {
                        h2 { "Next instants, when resumed" }
                        p.hint.paused { "The job is paused: none of these runs until it is resumed." }
                    } @else {
                        h2 { "Next instants" }
                    }
                    p.hint { code { (text(&j["schedule"])) } " in " (zone) ", beside UTC" }
                    @if !preview.ok() { (problem(preview)) }
                    @else {
                        ol.preview.paused[paused] {
                            @for t in preview.body["times"].as_array().into_iter().flatten() {
                                li {
                                    time datetime=(text(t)) title=(utc(&text(t))) { (in_zone(t, zone)) }
                                    span.tz { " · " (utc(&text(t))) }
                                }
                            }
                        }
                    }
                }
                details.config open {
                    summary { "Job" }
                    (fields(j, &["name", "state", "last_run"]))
                }
            }
            h2 { "Runs" }
            @if !runs.ok() { (problem(runs)) }
            @else {
                div.scroll {
                    table.list.runs {
                        colgroup { col.w-time; col.w-state; col.w-state; col.w-num; col.w-num; col.w-error; }
                        thead { tr {
                            th { "Instant" } th { "Kind" } th { "Outcome" } th.num { "Attempts" } th.num { "Status" } th { "Error" }
                        } }
                        tbody {
                            @for r in runs.body["items"].as_array().into_iter().flatten() {
                                tr {
                                    td { a.run-link href=(ui_path(&["jobs", name, "runs", r["run_id"].as_str().unwrap_or("")])) { (when(&r["schedule_time"])) } }
                                    td { (text(&r["kind"])) }
                                    td { (state(r["state"].as_str().unwrap_or("?"))) }
                                    td.num { (text(&r["attempt_count"])) }
                                    td.num { (text(&r["last_attempt"]["status_code"])) }
                                    td.error { (attempt_error(&r["last_attempt"]).unwrap_or_default()) }
                                }
                            }
                        }
                    }
                }
                @if runs.body["items"].as_array().is_some_and(|i| i.is_empty()) {
                    p.empty { "No runs yet." }
                }
                (pager(&base, &[], runs, &viewer.paging, 20, None))
            }
        },
    )
}

pub fn run(viewer: &Viewer, job: &str, run_id: &str, r: &Value, attempts: &Answer) -> Markup {
    layout(
        run_id,
        Some(viewer),
        "jobs",
        html! {
            p.crumbs { a href="/ui/jobs" { "Jobs" } " / " a href=(ui_path(&["jobs", job])) { (job) } " / " }
            div.title {
                h1 { "Run " code { (run_id) } }
                (state(r["state"].as_str().unwrap_or("?")))
            }
            @if r["state"] == "failed" {
                @if let Some(e) = attempt_error(&r["last_attempt"]) {
                    p.last-error { strong { "Last error: " } (e) }
                }
            }
            (attempts_table(attempts))
            details.config open {
                summary { "Run" }
                (fields(r, &["run_id", "state", "last_attempt"]))
            }
        },
    )
}

/// A signing secret shown by its start only: the page is not the place to
/// copy it from, and a screen share should not leak it.
fn masked(secret: &str) -> String {
    let shown: String = secret.chars().take(10).collect();
    format!("{shown}…")
}

pub fn access(
    viewer: &Viewer,
    principals: &Answer,
    keys: &[(String, Answer)],
    secrets: &Answer,
) -> Markup {
    let admin = viewer.can(Role::Admin);
    layout(
        "Access",
        Some(viewer),
        "access",
        html! {
            h1 { "Access" }
            h2 { "Principals and keys" }
            form.create method="post" action="/ui/principals" {
                input type="hidden" name="csrf" value=(viewer.session.csrf);
                input type="hidden" name="idem" value=(random_token());
                label { "Name" input type="text" name="name" required placeholder="billing-worker"; }
                label { "Kind" select name="kind" { option value="service" { "service" } option value="person" { "person" } } }
                label { "Role" select name="role" { option value="reader" { "reader" } option value="writer" selected { "writer" } option value="admin" { "admin" } } }
                button type="submit" data-action="create-principal" { "Create principal" }
            }
            @if !principals.ok() { (problem(principals)) }
            @else {
                @for p in principals.body["items"].as_array().into_iter().flatten() {
                    @let name = p["name"].as_str().unwrap_or("");
                    section.principal {
                        div.title {
                            h3 { (name) " " span.tag { (text(&p["kind"])) } " " span.tag.role { (text(&p["role"])) } }
                            div.actions { (action(viewer, &ui_path(&["principals", name, "keys"]), "new-key", "New key", None)) }
                        }
                        @if let Some((_, k)) = keys.iter().find(|(n, _)| n == name) {
                            @if !k.ok() { (problem(k)) }
                            @else {
                                div.scroll {
                                    table.list.keys {
                                        colgroup { col.w-id; col.w-time; col.w-time; col.w-state; }
                                        thead { tr { th { "Key ID" } th { "Created" } th { "Last used" } th { "" } } }
                                        tbody {
                                            @for key in k.body["items"].as_array().into_iter().flatten() {
                                                @let id = key["id"].as_str().unwrap_or("");
                                                tr.own[id == viewer.caller.key_id] {
                                                    td.id {
                                                        code { (id) }
                                                        @if id == viewer.caller.key_id { " " span.tag.own { "this session's key" } }
                                                    }
                                                    td { (when(&key["created_at"])) }
                                                    td { (when(&key["last_used_at"])) }
                                                    td { @if admin {
                                                        (action(viewer, &format!("{}/revoke", ui_path(&["principals", name, "keys", id])),
                                                            "revoke", "Revoke", Some("Revoke this key? Whoever uses it loses access.")))
                                                    } }
                                                }
                                            }
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }
            div.title {
                h2 { "Signing secrets" }
                @if admin && secrets.ok() {
                    div.actions { (action(viewer, "/ui/signing-secrets/rotate", "rotate", "Rotate", None)) }
                }
            }
            @if !secrets.ok() { (problem(secrets)) }
            @else {
                div.scroll {
                    table.list.secrets {
                        colgroup { col.w-id; col.w-name; col.w-time; col.w-state; }
                        thead { tr { th { "ID" } th { "Secret" } th { "Created" } th { "" } } }
                        tbody {
                            // Newest first: every one but the newest may go,
                            // which is how a rotation is finished.
                            @for (i, s) in secrets.body["secrets"].as_array().into_iter().flatten().enumerate() {
                                @let id = s["id"].as_str().unwrap_or("");
                                tr {
                                    td.id { code { (id) } }
                                    td { code { (masked(s["secret"].as_str().unwrap_or(""))) } }
                                    td { (when(&s["created_at"])) }
                                    td { @if i > 0 {
                                        (action(viewer, &format!("{}/delete", ui_path(&["signing-secrets", id])),
                                            "delete-secret", "Delete",
                                            Some("Delete this signing secret? A receiver that verifies with it alone rejects the next deliveries.")))
                                    } }
                                }
                            }
                        }
                    }
                }
            }
        },
    )
}
