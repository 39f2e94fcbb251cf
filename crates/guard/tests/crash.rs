//! Group commit answers a claim or a finish only once it is durable: a
//! process killed at any instant loses nothing it answered. A child process
//! (this test binary again, running `child` below) claims and finishes keys
//! from many tasks at once and prints each answer; the parent kills it with
//! SIGKILL mid-stream, reopens the store and finds every answered claim and
//! finish in it.

mod common;

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::sync::Arc;

use idem_guard::{ClaimOutcome, ClaimTerms, HandlerOutcome, RunKey, RunState, open_store};
use idem_testkit::TestDatabase;

const STORE_VAR: &str = "IDEM_GUARD_CRASH_STORE";
const WORKERS: usize = 16;
/// Answers read before the kill.
const ANSWERS: usize = 600;

fn key(name: &str) -> RunKey {
    RunKey::from_parts(["crash", name])
}

/// The child: runs only when the parent starts it with `STORE_VAR` set.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
#[ignore = "started by answered_operations_survive_a_kill"]
async fn child() {
    let url = std::env::var(STORE_VAR).expect("started by the parent");
    let store = open_store(&url).await.expect("open store");
    let workers: Vec<_> = (0..WORKERS)
        .map(|w| {
            let store = Arc::clone(&store);
            tokio::spawn(async move {
                for i in 0.. {
                    let name = format!("{w}-{i}");
                    let outcome = store.claim(&key(&name), ClaimTerms::default()).await;
                    let Ok(ClaimOutcome::Claimed(claim)) = outcome else {
                        panic!("{name}: {outcome:?}");
                    };
                    println!("claimed {name} {}", claim.attempt_id);
                    // Every third run fails, which deletes its record.
                    let (outcome, word) = if i % 3 == 2 {
                        (HandlerOutcome::Failure, "failed")
                    } else {
                        (HandlerOutcome::Success, "completed")
                    };
                    store.finish(&claim, outcome).await.expect("finish");
                    println!("{word} {name} {}", claim.attempt_id);
                }
            })
        })
        .collect();
    for w in workers {
        w.await.expect("worker");
    }
}

/// Starts the child on `url`, kills it after `ANSWERS` answers, and returns
/// the answers it printed.
fn run_and_kill(url: &str) -> Vec<(String, String, String)> {
    let mut child = Command::new(std::env::current_exe().expect("test binary"))
        .args(["--ignored", "--exact", "child", "--nocapture"])
        .env(STORE_VAR, url)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("start the child");
    let stdout = child.stdout.take().expect("child stdout");
    let mut answers = Vec::new();
    for line in BufReader::new(stdout).lines() {
        let line = line.expect("child output");
        let mut words = line.split(' ');
        if let (Some(what), Some(name), Some(attempt), None) =
            (words.next(), words.next(), words.next(), words.next())
            && ["claimed", "completed", "failed"].contains(&what)
        {
            answers.push((what.to_owned(), name.to_owned(), attempt.to_owned()));
            if answers.len() == ANSWERS {
                break;
            }
        }
    }
    child.kill().expect("kill the child");
    child.wait().expect("reap the child");
    assert_eq!(answers.len(), ANSWERS, "the child stopped early");
    answers
}

/// Whether the child fails run `name` (every third run of a worker).
fn fails(name: &str) -> bool {
    let i: u64 = name.rsplit('-').next().unwrap().parse().unwrap();
    i % 3 == 2
}

async fn answered_operations_survive_a_kill(url: String) {
    let answers = tokio::task::spawn_blocking({
        let url = url.clone();
        move || run_and_kill(&url)
    })
    .await
    .unwrap();
    let store = open_store(&url).await.expect("reopen the store");
    // The last answer about each key is the one to find.
    let mut last = std::collections::HashMap::new();
    for (what, name, attempt) in answers {
        last.insert(name, (what, attempt));
    }
    let (mut completed, mut failed) = (0, 0);
    for (name, (what, attempt)) in last {
        let record = store.inspect(&key(&name)).await.unwrap();
        match what.as_str() {
            "claimed" => match record {
                Some(record) => assert_eq!(record.attempt_id.to_string(), attempt),
                // Its finish may have committed unanswered, and a failure
                // deletes the record.
                None => assert!(fails(&name), "claim of {name} lost"),
            },
            "completed" => {
                let record = record.unwrap_or_else(|| panic!("completion of {name} lost"));
                assert_eq!(record.state, RunState::Completed, "{name}");
                assert_eq!(record.attempt_id.to_string(), attempt);
                completed += 1;
            }
            _ => {
                assert_eq!(record, None, "failure of {name} not recorded");
                failed += 1;
            }
        }
    }
    assert!(completed > 0 && failed > 0, "{completed} {failed}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_answered_operations_survive_a_kill() {
    let path = common::sqlite_path();
    answered_operations_survive_a_kill(format!("sqlite://{}", path.display())).await;
    common::remove_sqlite(&path);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_answered_operations_survive_a_kill() {
    let db = TestDatabase::create().await;
    answered_operations_survive_a_kill(db.url.clone()).await;
}
