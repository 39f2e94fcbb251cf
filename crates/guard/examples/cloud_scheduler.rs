//! A Cloud Scheduler target whose effect happens once per scheduled instant,
//! however often Cloud Scheduler (or Idem with `header_style:
//! "cloud_scheduler"`) delivers it.
//!
//! The run key is the job name and schedule time from the
//! `X-CloudScheduler-*` headers, scoped by the project in the path, because
//! job names repeat across projects. Claims live in a SQLite file.
//!
//! ```text
//! cargo run -p idem-guard --example cloud_scheduler              # serve on 127.0.0.1:8080
//! cargo run -p idem-guard --example cloud_scheduler -- demo      # deliver a few times and exit
//!
//! curl -i -X POST localhost:8080/projects/acme/reports/nightly \
//!   -H 'X-CloudScheduler-JobName: nightly-report' \
//!   -H 'X-CloudScheduler-ScheduleTime: 2026-10-16T12:00:00Z'
//! ```

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use axum::extract::{Path, State};
use axum::routing::post;
use axum::{Extension, Router};
use idem_guard::{Claim, Guard, IdentitySource, KeyConfig, Scope, SqliteStore};

/// Reports written so far (stands in for the real, non-idempotent effect).
#[derive(Default)]
struct Reports {
    written: AtomicUsize,
}

async fn nightly_report(
    State(reports): State<Arc<Reports>>,
    Path(project): Path<String>,
    Extension(claim): Extension<Claim>,
) -> String {
    // A real handler would pass `claim.fence` with its writes so that the
    // database can refuse a write from an attempt that lost its lease.
    let n = reports.written.fetch_add(1, Ordering::SeqCst) + 1;
    format!(
        "report #{n} for {project} written (fence {})\n",
        claim.fence
    )
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let demo = std::env::args().nth(1).as_deref() == Some("demo");
    let db = std::env::var("GUARD_EXAMPLE_DB").unwrap_or_else(|_| {
        std::env::temp_dir()
            .join(format!("idem-guard-example-{}.db", std::process::id()))
            .display()
            .to_string()
    });
    let store = SqliteStore::open(&db).await?;
    let guard = Guard::new(Arc::new(store))
        .with_keys(
            KeyConfig::new()
                .with_sources(vec![IdentitySource::CloudScheduler])
                // `/projects/{project}/…`: segment 1 is the project.
                .with_scope(Scope::PathSegment(1)),
        )
        // Cloud Scheduler's default attempt deadline is 3 minutes.
        .with_lease(Duration::from_secs(180));
    tokio::spawn({
        let guard = guard.clone();
        async move { guard.run_sweeper(Duration::from_secs(60), 1000).await }
    });

    let reports = Arc::new(Reports::default());
    let app = Router::new()
        .route("/projects/{project}/reports/nightly", post(nightly_report))
        .route_layer(guard.layer())
        .with_state(Arc::clone(&reports));

    let addr = if demo {
        "127.0.0.1:0"
    } else {
        "127.0.0.1:8080"
    };
    let listener = tokio::net::TcpListener::bind(addr).await?;
    let addr = listener.local_addr()?;
    println!("claims in {db}; listening on http://{addr}");
    let server = tokio::spawn(async move { axum::serve(listener, app).await });
    if !demo {
        server.await??;
        return Ok(());
    }

    let client = reqwest::Client::new();
    let deliver = |project: &str, at: &str| {
        client
            .post(format!("http://{addr}/projects/{project}/reports/nightly"))
            .header("X-CloudScheduler-JobName", "nightly-report")
            .header("X-CloudScheduler-ScheduleTime", at)
            .send()
    };
    for (project, at) in [
        ("acme", "2026-10-16T12:00:00Z"),
        ("acme", "2026-10-16T12:00:00Z"),
        ("globex", "2026-10-16T12:00:00Z"),
        ("acme", "2026-10-17T12:00:00Z"),
    ] {
        let answer = deliver(project, at).await?;
        let replayed = answer.headers().contains_key("idempotent-replayed");
        println!(
            "{project} @ {at}: {} {}{}",
            answer.status(),
            answer.text().await?.trim_end(),
            if replayed { " (replayed)" } else { "" }
        );
    }
    println!(
        "4 deliveries, {} reports written",
        reports.written.load(Ordering::SeqCst)
    );
    if std::env::var("GUARD_EXAMPLE_DB").is_err() {
        for suffix in ["", "-wal", "-shm"] {
            let _ = std::fs::remove_file(format!("{db}{suffix}"));
        }
    }
    Ok(())
}
