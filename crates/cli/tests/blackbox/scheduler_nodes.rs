//! Several nodes on one PostgreSQL database run the scheduler together.

use crate::harness::jobs::*;
use crate::harness::target::*;
use crate::harness::{TwoNodes, install_tls_provider};
use serde_json::json;
use std::collections::BTreeSet;
use std::time::Duration;

/// Two nodes on one PostgreSQL database, a minute of every-second jobs:
/// each instant of each job is delivered exactly once, none skipped.
#[tokio::test]
async fn two_nodes_fire_each_instant_exactly_once() {
    install_tls_provider();
    let target = Target::start().await;
    let nodes = TwoNodes::start().await;
    let apis = &nodes.apis;
    let jobs = ["j0", "j1", "j2", "j3"];
    for (i, job) in jobs.iter().enumerate() {
        create_job(
            &apis[i % 2],
            json!({"name": job, "schedule": "* * * * * *", "target": {"url": target.url("/ok")}}),
        )
        .await;
    }
    tokio::time::sleep(Duration::from_secs(60)).await;
    for job in jobs {
        apis[0]
            .post_empty(&format!("/v1/jobs/{job}/pause"))
            .await
            .ok(200);
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    for job in jobs {
        let got = of_job(&target, job);
        let mut instants = BTreeSet::new();
        for r in &got {
            let at = ts(r.header("idem-schedule-time").unwrap());
            assert!(instants.insert(at), "{job}: instant {at} delivered twice");
        }
        assert!(
            instants.len() >= 55,
            "{job}: {} instants in a minute",
            instants.len()
        );
        assert_consecutive_seconds(&instants);
    }
}
