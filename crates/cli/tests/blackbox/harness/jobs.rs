//! Helpers of the scheduler tests: jobs, their runs, and the requests they
//! made at a [`Target`].

use super::Api;
use super::target::{Received, Target, wait_for_requests};
use jiff::Timestamp;
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::collections::BTreeSet;
use std::time::Duration;

/// The run ID docs/API.md defines, computed here independently of Idem's code.
pub fn expected_run_id(org: &str, job: &str, schedule_time: &str) -> String {
    let digest = Sha256::digest(format!("{org}/{job}/{schedule_time}").as_bytes());
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

pub fn ts(s: &str) -> Timestamp {
    s.parse()
        .unwrap_or_else(|e| panic!("{s:?} is not a timestamp: {e}"))
}

pub async fn create_job(api: &Api, body: Value) -> Value {
    api.post("/v1/jobs", body).await.ok(201).json.clone()
}

/// Starts a manual run of `job` and waits until it is `state`; answers its
/// run ID.
pub async fn run_until(api: &Api, job: &str, state: &str, within: Duration) -> String {
    let run = api
        .post_empty(&format!("/v1/jobs/{job}/run"))
        .await
        .ok(201)
        .json
        .clone();
    let run_id = run["run_id"].as_str().unwrap().to_string();
    let path = format!("/v1/jobs/{job}/runs/{run_id}");
    let deadline = std::time::Instant::now() + within;
    while api.get(&path).await.ok(200).json["state"] != state {
        assert!(
            std::time::Instant::now() < deadline,
            "run {run_id} of {job} was not {state} within {within:?}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    run_id
}

/// The requests of one job, in arrival order.
pub fn of_job(target: &Target, job: &str) -> Vec<Received> {
    target
        .received()
        .into_iter()
        .filter(|r| r.header("idem-job") == Some(job))
        .collect()
}

/// Every run of a job, newest first, across pages.
pub async fn runs(api: &Api, job: &str) -> Vec<Value> {
    api.collect_pages(&format!("/v1/jobs/{job}/runs?limit=50"))
        .await
}

pub async fn wait_runs_of(target: &Target, job: &str, n: usize, within: Duration) -> Vec<Received> {
    let missed =
        |got| format!("job {job} reached the target {got} times within {within:?}, expected {n}");
    wait_for_requests(
        || of_job(target, job),
        n,
        within,
        Duration::from_millis(20),
        missed,
    )
    .await
}

/// Asserts that `times` are whole consecutive seconds.
pub fn assert_consecutive_seconds(times: &BTreeSet<Timestamp>) {
    let v: Vec<&Timestamp> = times.iter().collect();
    for w in v.windows(2) {
        assert_eq!(
            w[1].duration_since(*w[0]).as_secs(),
            1,
            "instants are not consecutive seconds: {times:?}"
        );
    }
}
