//! One attempt: one delivery of one claimed task, and what it measures.

use super::in_flight::Registration;
use super::{client, headers};
use idem_core::job::HeaderStyle;
use idem_core::target_policy::TargetPolicy;
use idem_store::dispatch::{AttemptResult, ClaimedTask};
use idem_webhooks::SigningSecret;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::watch;

/// How an attempt ended.
pub(super) enum Ended {
    /// With a result to record.
    Reported(AttemptResult),
    /// Aborted by a cancel, which recorded the attempt already.
    Cancelled,
    /// Abandoned when the node stopped (shutdown grace over): its lease is
    /// to be given back without counting the attempt.
    Abandoned,
}

/// One attempt of one claimed task.
pub(super) struct Attempt {
    pub(super) client: reqwest::Client,
    pub(super) policy: Arc<TargetPolicy>,
    pub(super) clock: Arc<dyn idem_core::Clock>,
    pub(super) claimed: ClaimedTask,
    /// The organization's secrets, parsed once per claim.
    pub(super) secrets: Arc<[SigningSecret]>,
    /// Earlier attempts the target answered other than 5xx; counted only
    /// for a retry that sends Cloud Tasks' headers ([`executions`]).
    pub(super) executions: u32,
    /// Signs the ID token of a target that asks for one.
    pub(super) oidc: Arc<crate::oidc::Issuer>,
}

/// Cloud Tasks' execution count: the earlier attempts that got an answer
/// from the target, 5xx answers not counted. Read from the task's attempts
/// only for a retry of a task that sends Cloud Tasks' headers, so no other
/// delivery pays a read; if the read fails the count is 0 rather than the
/// delivery held back.
pub(super) async fn executions(store: &dyn idem_store::Store, claimed: &ClaimedTask) -> u32 {
    if claimed.task.header_style != HeaderStyle::CloudTasks || claimed.attempt <= 1 {
        return 0;
    }
    let task = &claimed.task;
    let mut page = idem_store::PageRequest {
        limit: 1000,
        after: None,
    };
    let mut count = 0;
    loop {
        let listed = match store
            .task_attempts(&claimed.org, &task.queue, &task.task_id, &page)
            .await
        {
            Ok(listed) => listed,
            Err(error) => {
                tracing::warn!(%error, "reading attempts for X-CloudTasks-TaskExecutionCount");
                return 0;
            }
        };
        count += listed
            .items
            .iter()
            .filter(|a| a.attempt < claimed.attempt)
            .filter(|a| a.status_code.is_some_and(|s| s < 500))
            .count() as u32;
        match listed.next {
            Some(next) => page.after = Some(next),
            None => return count,
        }
    }
}

impl Attempt {
    /// The span every line logged during the attempt is in: it names a
    /// task by its queue and ID, a job's run by its job and run ID.
    pub(super) fn span(&self) -> tracing::Span {
        let task = &self.claimed.task;
        let run = task.run.as_ref();
        let (task_id, run_id) = match run {
            Some(_) => (None, Some(task.task_id.as_str())),
            None => (Some(task.task_id.as_str()), None),
        };
        let span = tracing::info_span!(
            "attempt",
            org = self.claimed.org.as_str(),
            queue = run.is_none().then_some(task.queue.as_str()),
            task_id,
            job = run.map(|r| r.job.as_str()),
            run_id,
            attempt = self.claimed.attempt,
            trace_id = tracing::field::Empty,
            span_id = tracing::field::Empty,
            http.response.status_code = tracing::field::Empty,
            otel.kind = "client",
        );
        // A task's attempts join the trace of the request that created
        // it; a job's run has none and starts its own.
        crate::traces::continue_trace(&span, task.target.trace.as_ref());
        span
    }

    /// Delivers the task, unless `abandon` turns true first (shutdown grace
    /// over) or a cancel aborts it; either drops the request, closing its
    /// connection.
    pub(super) async fn run(
        self,
        mut abandon: watch::Receiver<bool>,
        mut registration: Registration,
    ) -> Ended {
        let started = Instant::now();
        let task = &self.claimed.task;
        if task.run.is_some() && self.claimed.attempt == 1 {
            // What a cron user feels: from the instant to the request
            // leaving, run creation and claim included.
            let lag = self.clock.now().duration_since(task.schedule_time);
            metrics::histogram!("idem_scheduler_dispatch_lag_seconds")
                .record(lag.as_secs_f64().max(0.0));
        }
        let answer = tokio::select! {
            answer = self.exchange() => answer,
            _ = abandon.wait_for(|a| *a) => {
                tracing::info!(
                    duration_ms = started.elapsed().as_millis() as u64,
                    "attempt abandoned: the node is stopping"
                );
                return Ended::Abandoned;
            }
            _ = registration.aborted() => {
                tracing::debug!(
                    duration_ms = started.elapsed().as_millis() as u64,
                    "attempt aborted by a cancel"
                );
                return Ended::Cancelled;
            }
        };
        let duration = started.elapsed();
        if let Some(code) = answer.status_code {
            tracing::Span::current().record("http.response.status_code", code);
        }
        tracing::debug!(
            status_code = answer.status_code,
            error = answer.error.as_deref(),
            duration_ms = duration.as_millis() as u64,
            "attempt ended"
        );
        Ended::Reported(AttemptResult {
            task_uid: self.claimed.task.uid.clone(),
            attempt: self.claimed.attempt,
            status_code: answer.status_code,
            error: answer.error,
            duration,
            retry_after: answer.retry_after,
            give_up: answer.give_up,
            response: answer.response,
        })
    }

    async fn exchange(&self) -> client::Answer {
        let task = &self.claimed.task;
        let deadline = Duration::from_secs(u64::from(task.dispatch_deadline_s));
        let token = match &task.target.oidc {
            Some(oidc) => {
                let run_key = headers::run_key(&self.claimed);
                let minted = self
                    .oidc
                    .token(&self.claimed.org, &oidc.audience, &run_key, deadline)
                    .await;
                match minted {
                    Ok(token) => Some(token),
                    Err(error) => return client::Answer::failed(error),
                }
            }
            None => None,
        };
        match self.request(token.as_deref()) {
            // A URL with an IP literal is connected to without resolving,
            // so the policy's resolver never sees it.
            Ok(request) if !self.policy.permits_literal(request.url()) => client::Answer::refused(),
            Ok(request) => client::send(&self.client, request, deadline).await,
            Err(error) => client::Answer::failed(error),
        }
    }

    fn request(&self, token: Option<&str>) -> Result<reqwest::Request, String> {
        let target = &self.claimed.task.target;
        let method = reqwest::Method::from_bytes(target.method.as_bytes())
            .map_err(|_| format!("invalid method {:?}", target.method))?;
        let url = reqwest::Url::parse(&target.url)
            .map_err(|e| format!("invalid target URL {:?}: {e}", target.url))?;
        let timestamp = self.clock.now().as_second();
        let sent = headers::Sent {
            method: &method,
            url: &url,
        };
        let mut headers = headers::delivery_headers(
            &self.claimed,
            &sent,
            &self.secrets,
            timestamp,
            self.executions,
        )?;
        if let Some(token) = token {
            let value = reqwest::header::HeaderValue::try_from(format!("Bearer {token}"))
                .map_err(|_| "the OIDC token is not a header value".to_string())?;
            headers.insert(reqwest::header::AUTHORIZATION, value);
        }
        if let Some(trace) = crate::traces::for_delivery(target.trace.as_ref()) {
            crate::traces::insert(&mut headers, &trace);
        }
        let mut request = reqwest::Request::new(method, url);
        *request.headers_mut() = headers;
        if let Some((_, body)) = &target.body {
            *request.body_mut() = Some(body.clone().into());
        }
        Ok(request)
    }
}
