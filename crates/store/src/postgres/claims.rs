//! Claims of pull tasks, gathered per queue on this node.
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

use super::PostgresStore;
use crate::Result;
use crate::records::{Task, WorkClaim};
use std::collections::HashMap;
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

/// A claim waiting in its line.
struct Waiting {
    max_tasks: u32,
    reply: oneshot::Sender<Share>,
}

enum Share {
    Tasks(Vec<Task>),
    /// The gathered claim failed: claim alone.
    Alone,
}

#[derive(Default)]
struct LineState {
    waiting: Vec<Waiting>,
    /// A claim of this line is in the store.
    claiming: bool,
}

/// The lines of this node's claims.
#[derive(Default)]
pub(super) struct Claims {
    lines: Mutex<HashMap<Line, LineState>>,
}

impl Claims {
    /// Claims as `claim` asks, gathered with the claims of its line.
    pub(super) async fn claim(
        self: &Arc<Self>,
        store: &PostgresStore,
        claim: WorkClaim,
    ) -> Result<Vec<Task>> {
        let line = Line::of(&claim);
        let answer = {
            let mut lines = self.lines.lock().expect("claim lines");
            let state = lines.entry(line.clone()).or_default();
            if state.claiming {
                let (reply, answer) = oneshot::channel();
                state.waiting.push(Waiting {
                    max_tasks: claim.max_tasks,
                    reply,
                });
                Some(answer)
            } else {
                state.claiming = true;
                None
            }
        };
        let Some(answer) = answer else {
            // First in line: claim for itself, then hand the line on.
            let leading = Leading {
                claims: self,
                line: Some(line),
            };
            let mine = store.claim_alone(claim.clone()).await;
            leading.hand_on(store, claim);
            return mine;
        };
        match answer.await {
            Ok(Share::Tasks(tasks)) => Ok(tasks),
            // The gathered claim failed, or the first in line went away
            // (its request dropped) before its claim returned.
            Ok(Share::Alone) | Err(_) => store.claim_alone(claim).await,
        }
    }

    /// Claims for the claims that wait in `line`, round after round, until
    /// none is left; then the line closes.
    async fn serve(self: Arc<Self>, store: PostgresStore, line: Line, template: WorkClaim) {
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
            match store.claim_alone(claim).await {
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
struct Leading<'a> {
    claims: &'a Arc<Claims>,
    line: Option<Line>,
}

impl Leading<'_> {
    /// Closes the line if nobody waits; otherwise a task of its own serves
    /// the waiting claims, so that this claim answers now.
    fn hand_on(mut self, store: &PostgresStore, template: WorkClaim) {
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
        tokio::spawn(self.claims.clone().serve(store.clone(), line, template));
    }
}

impl Drop for Leading<'_> {
    fn drop(&mut self) {
        if let Some(line) = self.line.take() {
            self.claims.lines.lock().expect("claim lines").remove(&line);
        }
    }
}

/// The waiting claims of one round, oldest first, up to
/// [`MAX_GATHERED`] tasks (at least one claim).
fn take_round(waiting: &mut Vec<Waiting>) -> Vec<Waiting> {
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
fn deal(round: Vec<Waiting>, tasks: Vec<Task>) {
    let mut tasks = tasks.into_iter();
    for w in round {
        let share: Vec<Task> = tasks.by_ref().take(w.max_tasks as usize).collect();
        let _ = w.reply.send(Share::Tasks(share));
    }
}
