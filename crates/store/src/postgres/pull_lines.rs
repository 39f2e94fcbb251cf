//! Workers' claims of a pull queue, gathered into lines on this node. The
//! statement each line runs is the shared claim (`tables::due`, through
//! `tables::work::claim`); this is only who runs it for whom.
//!
//! Concurrent claims of one queue contend in the database: each walks the
//! head of the queue's due index, trying and skipping the rows the others
//! hold (`SKIP LOCKED`), and commits on its own. Claims that ask for the
//! same thing (the same
//! queue, claimant, lease, tag) instead form a line: the first runs, those
//! that arrive meanwhile wait, and when it returns the next one claims for
//! every claim that waited, with one statement for all of them, and deals
//! the tasks out in schedule order, each its own share. A lone claim runs
//! at once, as before; nothing waits on a timer.
//!
//! A gathered claim that fails (a missing queue, a push queue, the
//! database unavailable) is not answered for the others: each then claims
//! alone, and hears its own error.
//!
//! SQLite needs none of this: its one writer runs claims one after another
//! and shares a commit among those that queued up; a line there only added
//! a commit's wait to the claims behind the first (measured: 0.9× the
//! drain rate with claims of 32).

use crate::Result;
use crate::records::WorkClaim;
use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex};
use tokio::sync::oneshot;

/// Most tasks one gathered claim takes: ten claims of a claim's most.
const MAX_GATHERED: u32 = 1000;

/// What claims must share to be made together: all but `max_tasks`.
#[derive(Clone, PartialEq, Eq, Hash)]
struct Line {
    org: String,
    queue: String,
    claimant: String,
    lease_s: u32,
    tag: Option<String>,
    attempts_kept: u32,
}

impl Line {
    fn of(claim: &WorkClaim) -> Line {
        Line {
            org: claim.org.clone(),
            queue: claim.queue.clone(),
            claimant: claim.claimant.clone(),
            lease_s: claim.lease_s,
            tag: claim.tag.clone(),
            attempts_kept: claim.attempts_kept,
        }
    }
}

/// A claim waiting in its line, for tasks of type `T`.
struct Waiting<T> {
    max_tasks: u32,
    reply: oneshot::Sender<Share<T>>,
}

enum Share<T> {
    Tasks(Vec<T>),
    /// The gathered claim failed: claim alone.
    Alone,
}

struct LineState<T> {
    waiting: Vec<Waiting<T>>,
}

/// The lines of this node's claims. A line exists while one of its claims
/// is being made.
pub(super) struct PullLines<T> {
    lines: Mutex<HashMap<Line, LineState<T>>>,
}

impl<T> Default for PullLines<T> {
    fn default() -> Self {
        PullLines {
            lines: Mutex::default(),
        }
    }
}

impl<T: Send + 'static> PullLines<T> {
    /// Claims as `claim` asks, gathered with the claims of its line; `run`
    /// makes one claim in the database (the first's, or a gathered one).
    pub(super) async fn claim<R, Fut>(self: &Arc<Self>, claim: WorkClaim, run: R) -> Result<Vec<T>>
    where
        R: Fn(WorkClaim) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Vec<T>>> + Send + 'static,
    {
        let line = Line::of(&claim);
        let answer = {
            let mut lines = self.lines.lock().expect("claim lines");
            match lines.get_mut(&line) {
                Some(state) => {
                    let (reply, answer) = oneshot::channel();
                    state.waiting.push(Waiting {
                        max_tasks: claim.max_tasks,
                        reply,
                    });
                    Some(answer)
                }
                None => {
                    lines.insert(
                        line.clone(),
                        LineState {
                            waiting: Vec::new(),
                        },
                    );
                    None
                }
            }
        };
        let Some(answer) = answer else {
            // First in line: claim for itself, then hand the line on.
            let leading = Leading {
                claims: self,
                line: Some(line),
            };
            let mine = run(claim.clone()).await;
            leading.hand_on(run, claim);
            return mine;
        };
        match answer.await {
            Ok(Share::Tasks(tasks)) => Ok(tasks),
            // The gathered claim failed, or the first in line went away
            // (its request dropped) before its claim returned.
            Ok(Share::Alone) | Err(_) => run(claim).await,
        }
    }

    /// Claims for the claims that wait in `line`, round after round, until
    /// none is left; then the line closes.
    async fn serve<R, Fut>(self: Arc<Self>, run: R, line: Line, template: WorkClaim)
    where
        R: Fn(WorkClaim) -> Fut,
        Fut: Future<Output = Result<Vec<T>>>,
    {
        loop {
            let round = {
                let mut lines = self.lines.lock().expect("claim lines");
                let state = lines.get_mut(&line).expect("an open line");
                if state.waiting.is_empty() {
                    lines.remove(&line);
                    return;
                }
                take_round(&mut state.waiting)
            };
            let wanted: u32 = round.iter().map(|w| w.max_tasks).sum();
            let claim = WorkClaim {
                max_tasks: wanted,
                ..template.clone()
            };
            match run(claim).await {
                Ok(tasks) => deal(round, tasks),
                Err(_) => {
                    for w in round {
                        let _ = w.reply.send(Share::Alone);
                    }
                }
            }
        }
    }
}

/// The first claim of a line, while its own claim runs. Dropped before
/// that returns (the request went away), it closes the line: the claims
/// that waited then claim alone.
struct Leading<'a, T> {
    claims: &'a Arc<PullLines<T>>,
    line: Option<Line>,
}

impl<T: Send + 'static> Leading<'_, T> {
    /// Closes the line if nobody waits; otherwise a task of its own serves
    /// the waiting claims, so that this claim answers now.
    fn hand_on<R, Fut>(mut self, run: R, template: WorkClaim)
    where
        R: Fn(WorkClaim) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Vec<T>>> + Send + 'static,
    {
        let line = self.line.take().expect("handed on once");
        let mut lines = self.claims.lines.lock().expect("claim lines");
        if lines
            .get(&line)
            .is_none_or(|state| state.waiting.is_empty())
        {
            lines.remove(&line);
            return;
        }
        drop(lines);
        tokio::spawn(self.claims.clone().serve(run, line, template));
    }
}

impl<T> Drop for Leading<'_, T> {
    fn drop(&mut self) {
        if let Some(line) = self.line.take() {
            self.claims.lines.lock().expect("claim lines").remove(&line);
        }
    }
}

/// The waiting claims of one round, oldest first, up to
/// [`MAX_GATHERED`] tasks (at least one claim).
fn take_round<T>(waiting: &mut Vec<Waiting<T>>) -> Vec<Waiting<T>> {
    let mut total = 0;
    let n = waiting
        .iter()
        .take_while(|w| {
            total += w.max_tasks;
            total <= MAX_GATHERED
        })
        .count()
        .max(1);
    waiting.drain(..n).collect()
}

/// Deals `tasks` (in schedule order) out to `round`, oldest claim first,
/// each up to what it asked for.
fn deal<T>(round: Vec<Waiting<T>>, tasks: Vec<T>) {
    let mut tasks = tasks.into_iter();
    for w in round {
        let share: Vec<T> = tasks.by_ref().take(w.max_tasks as usize).collect();
        let _ = w.reply.send(Share::Tasks(share));
    }
}

#[cfg(test)]
mod tests {
    //! The line on its own, with a claim that hands out numbers in order
    //! and waits for the test's word before it returns: what a claim in
    //! the database does is the blackbox tests' (both stores).

    use super::*;
    use crate::Error;
    use std::sync::atomic::{AtomicU32, Ordering};
    use std::time::Duration;
    use tokio::sync::Semaphore;

    /// The claims `run` made (their `max_tasks`), a gate each waits at,
    /// and the next number to hand out.
    #[derive(Clone)]
    struct Db {
        calls: Arc<Mutex<Vec<u32>>>,
        gate: Arc<Semaphore>,
        next: Arc<AtomicU32>,
        /// Gathered claims larger than this fail.
        fail_over: Option<u32>,
    }

    impl Default for Db {
        fn default() -> Self {
            Db {
                calls: Arc::default(),
                gate: Arc::new(Semaphore::new(0)),
                next: Arc::default(),
                fail_over: None,
            }
        }
    }

    impl Db {
        fn run(
            &self,
        ) -> impl Fn(WorkClaim) -> futures_util::future::BoxFuture<'static, Result<Vec<u32>>>
        + Send
        + Sync
        + 'static {
            let db = self.clone();
            move |claim: WorkClaim| {
                let db = db.clone();
                db.calls.lock().unwrap().push(claim.max_tasks);
                Box::pin(async move {
                    db.gate.acquire().await.unwrap().forget();
                    if db.fail_over.is_some_and(|most| claim.max_tasks > most) {
                        return Err(Error::Unavailable("too many".into()));
                    }
                    let first = db.next.fetch_add(claim.max_tasks, Ordering::SeqCst);
                    Ok((first..first + claim.max_tasks).collect())
                })
            }
        }

        fn calls(&self) -> Vec<u32> {
            self.calls.lock().unwrap().clone()
        }
    }

    fn asking(max_tasks: u32) -> WorkClaim {
        WorkClaim {
            org: "o".into(),
            queue: "q".into(),
            claimant: "w".into(),
            max_tasks,
            lease_s: 60,
            tag: None,
            attempts_kept: 10,
        }
    }

    async fn until(what: &str, done: impl Fn() -> bool) {
        for _ in 0..2500 {
            if done() {
                return;
            }
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
        panic!("timed out waiting until {what}");
    }

    fn waiting(claims: &PullLines<u32>) -> usize {
        let lines = claims.lines.lock().unwrap();
        lines.values().map(|l| l.waiting.len()).sum()
    }

    /// Starts the first claim and `then` claims behind it, in this order,
    /// each waiting in the line before the next starts.
    async fn line_up(
        claims: &Arc<PullLines<u32>>,
        db: &Db,
        first: u32,
        then: &[u32],
    ) -> Vec<tokio::task::JoinHandle<Result<Vec<u32>>>> {
        let mut started = Vec::new();
        let (c, run) = (claims.clone(), db.run());
        started.push(tokio::spawn(
            async move { c.claim(asking(first), run).await },
        ));
        until("the first claim runs", || db.calls().len() == 1).await;
        for (i, &max) in then.iter().enumerate() {
            let (c, run) = (claims.clone(), db.run());
            started.push(tokio::spawn(async move { c.claim(asking(max), run).await }));
            until("a claim waits in line", || waiting(claims) == i + 1).await;
        }
        started
    }

    #[tokio::test]
    async fn the_claims_that_wait_are_made_together_and_dealt_in_order() {
        let (claims, db) = (Arc::new(PullLines::default()), Db::default());
        let started = line_up(&claims, &db, 2, &[3, 1, 2]).await;
        db.gate.add_permits(2);
        let mut got = Vec::new();
        for s in started {
            got.push(s.await.unwrap().unwrap());
        }
        assert_eq!(
            db.calls(),
            [2, 6],
            "the first alone, then one for the three"
        );
        assert_eq!(got, [vec![0, 1], vec![2, 3, 4], vec![5], vec![6, 7]]);
        until("the line closes", || {
            claims.lines.lock().unwrap().is_empty()
        })
        .await;
    }

    #[tokio::test]
    async fn when_the_first_claim_goes_away_the_others_claim_alone() {
        let (claims, db) = (Arc::new(PullLines::default()), Db::default());
        let mut started = line_up(&claims, &db, 2, &[3, 1]).await;
        started.remove(0).abort();
        until("the line closes", || {
            claims.lines.lock().unwrap().is_empty()
        })
        .await;
        db.gate.add_permits(2);
        let mut got = Vec::new();
        for s in started {
            got.push(s.await.unwrap().unwrap().len());
        }
        assert_eq!(got, [3, 1]);
        let mut calls = db.calls();
        calls.sort();
        assert_eq!(calls, [1, 2, 3], "the first's, then one each");
    }

    #[tokio::test]
    async fn a_gathered_claim_that_fails_lets_each_claim_alone() {
        let claims = Arc::new(PullLines::default());
        let db = Db {
            fail_over: Some(3),
            ..Db::default()
        };
        let started = line_up(&claims, &db, 1, &[2, 2]).await;
        db.gate.add_permits(4);
        let mut got = Vec::new();
        for s in started {
            got.push(s.await.unwrap().unwrap().len());
        }
        assert_eq!(got, [1, 2, 2]);
        let calls = db.calls();
        assert_eq!(&calls[..2], [1, 4], "the first's, then the gathered one");
        assert_eq!(&calls[2..], [2, 2], "then each alone");
    }
}
