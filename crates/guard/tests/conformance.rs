//! One conformance suite, run against every store: memory and SQLite on an
//! injected clock, PostgreSQL and Redis on their server clocks (with short
//! leases and real waits), and Redis once more over TLS (`rediss://`).

mod common;

use std::sync::Arc;
use std::time::Duration;

use common::Harness;
use idem_guard::{
    Claim, ClaimOutcome, ClaimTerms, FinishResult, GuardStore, HandlerOutcome, RenewResult, RunKey,
    RunState,
};

/// Short enough that stores on a real clock wait little.
const LEASE: Duration = Duration::from_millis(300);
const PAST_LEASE: Duration = Duration::from_millis(450);
const RETENTION: Duration = Duration::from_millis(600);
const PAST_RETENTION: Duration = Duration::from_millis(750);

fn short_lease() -> ClaimTerms {
    ClaimTerms {
        lease: LEASE,
        retention: Duration::from_secs(3600),
    }
}

fn long_lease() -> ClaimTerms {
    ClaimTerms {
        lease: Duration::from_secs(3600),
        retention: Duration::from_secs(3600),
    }
}

fn short_retention() -> ClaimTerms {
    ClaimTerms {
        lease: LEASE,
        retention: RETENTION,
    }
}

/// Renewal scenarios step in thirds of a longer lease, so that stores on a
/// real clock keep a wide margin on each side of every lease end.
const RENEWED_LEASE: Duration = Duration::from_millis(1500);
const STEP: Duration = Duration::from_millis(500);

fn renewable() -> ClaimTerms {
    ClaimTerms {
        lease: RENEWED_LEASE,
        retention: Duration::from_secs(3600),
    }
}

fn key(name: &str) -> RunKey {
    RunKey::from_parts(["conformance", name])
}

async fn claimed(store: &dyn GuardStore, key: &RunKey, terms: ClaimTerms) -> Claim {
    match store.claim(key, terms).await.expect("claim") {
        ClaimOutcome::Claimed(claim) => {
            assert_eq!(&claim.key, key);
            claim
        }
        other => panic!("expected to win the claim, got {other:?}"),
    }
}

async fn outcome(store: &dyn GuardStore, key: &RunKey, terms: ClaimTerms) -> ClaimOutcome {
    store.claim(key, terms).await.expect("claim")
}

mod suite {
    use super::*;

    pub async fn concurrent_claims_have_one_winner(h: Harness) {
        let k = key("race");
        let barrier = Arc::new(tokio::sync::Barrier::new(32));
        let tasks: Vec<_> = (0..32)
            .map(|_| {
                let store = Arc::clone(&h.store);
                let barrier = Arc::clone(&barrier);
                let k = k.clone();
                tokio::spawn(async move {
                    barrier.wait().await;
                    store.claim(&k, long_lease()).await.expect("claim")
                })
            })
            .collect();
        let mut winners = Vec::new();
        let mut in_progress = 0;
        for task in tasks {
            match task.await.expect("claim task") {
                ClaimOutcome::Claimed(claim) => winners.push(claim),
                ClaimOutcome::InProgress => in_progress += 1,
                ClaimOutcome::Completed => panic!("nothing completed yet"),
            }
        }
        assert_eq!(winners.len(), 1, "exactly one winner: {winners:?}");
        assert_eq!(in_progress, 31);
        let record = h.store.inspect(&k).await.unwrap().expect("record");
        assert_eq!(record.attempt_id, winners[0].attempt_id);
        assert_eq!(record.state, RunState::InProgress);
    }

    pub async fn stale_attempt_cannot_finish_or_delete_newer_claim(h: Harness) {
        let store = h.store.as_ref();
        let k = key("stale");
        let old = claimed(store, &k, short_lease()).await;
        h.advance(PAST_LEASE).await;
        let new = claimed(store, &k, short_lease()).await;
        assert_ne!(old.attempt_id, new.attempt_id);

        assert_eq!(
            store.finish(&old, HandlerOutcome::Failure).await.unwrap(),
            FinishResult::Stale
        );
        assert_eq!(
            store.finish(&old, HandlerOutcome::Success).await.unwrap(),
            FinishResult::Stale
        );
        let record = store
            .inspect(&k)
            .await
            .unwrap()
            .expect("newer claim survives");
        assert_eq!(record.attempt_id, new.attempt_id);
        assert_eq!(record.state, RunState::InProgress);
        assert_eq!(record.fence, new.fence);

        assert_eq!(
            store.finish(&new, HandlerOutcome::Success).await.unwrap(),
            FinishResult::Applied
        );
        assert_eq!(
            outcome(store, &k, short_lease()).await,
            ClaimOutcome::Completed
        );
        assert_eq!(
            store.finish(&old, HandlerOutcome::Failure).await.unwrap(),
            FinishResult::Stale
        );
        assert_eq!(
            outcome(store, &k, short_lease()).await,
            ClaimOutcome::Completed
        );
    }

    pub async fn live_lease_blocks_and_expired_lease_can_be_reclaimed(h: Harness) {
        let store = h.store.as_ref();
        let k = key("lease");
        let first = claimed(store, &k, short_lease()).await;
        assert_eq!(
            outcome(store, &k, short_lease()).await,
            ClaimOutcome::InProgress
        );
        h.advance(PAST_LEASE).await;
        let second = claimed(store, &k, short_lease()).await;
        assert_ne!(first.attempt_id, second.attempt_id);
        assert_eq!(
            outcome(store, &k, short_lease()).await,
            ClaimOutcome::InProgress
        );
    }

    pub async fn completed_run_answers_replay(h: Harness) {
        let store = h.store.as_ref();
        let k = key("done");
        let claim = claimed(store, &k, short_lease()).await;
        assert_eq!(
            store.finish(&claim, HandlerOutcome::Success).await.unwrap(),
            FinishResult::Applied
        );
        assert_eq!(
            outcome(store, &k, short_lease()).await,
            ClaimOutcome::Completed
        );
        // Completion does not depend on the lease any more.
        h.advance(PAST_LEASE).await;
        assert_eq!(
            outcome(store, &k, short_lease()).await,
            ClaimOutcome::Completed
        );
        // A late failure report of the same attempt cannot undo completion.
        assert_eq!(
            store.finish(&claim, HandlerOutcome::Failure).await.unwrap(),
            FinishResult::Stale
        );
        assert_eq!(
            store.finish(&claim, HandlerOutcome::Success).await.unwrap(),
            FinishResult::Stale
        );
        let record = store.inspect(&k).await.unwrap().expect("record");
        assert_eq!(record.state, RunState::Completed);
        assert_eq!(record.attempt_id, claim.attempt_id);
    }

    pub async fn failure_releases_the_key_immediately(h: Harness) {
        let store = h.store.as_ref();
        let k = key("fail");
        let first = claimed(store, &k, long_lease()).await;
        assert_eq!(
            store.finish(&first, HandlerOutcome::Failure).await.unwrap(),
            FinishResult::Applied
        );
        assert_eq!(store.inspect(&k).await.unwrap(), None);
        // No waiting for the (hour-long) lease.
        let second = claimed(store, &k, long_lease()).await;
        assert_ne!(first.attempt_id, second.attempt_id);
        assert!(second.fence > first.fence);
    }

    pub async fn fencing_strictly_increases_across_reclaims(h: Harness) {
        let store = h.store.as_ref();
        let k = key("fence");
        let mut fences = Vec::new();
        // Release by failure, several times without time passing (on the
        // injected clocks time stands still entirely).
        for _ in 0..5 {
            let claim = claimed(store, &k, short_retention()).await;
            fences.push(claim.fence);
            store.finish(&claim, HandlerOutcome::Failure).await.unwrap();
        }
        // Take over an expired lease.
        let abandoned = claimed(store, &k, short_retention()).await;
        fences.push(abandoned.fence);
        h.advance(PAST_LEASE).await;
        let taken_over = claimed(store, &k, short_retention()).await;
        fences.push(taken_over.fence);
        store
            .finish(&taken_over, HandlerOutcome::Success)
            .await
            .unwrap();
        // A completed record past its retention is a new run.
        h.advance(PAST_RETENTION).await;
        let after_retention = claimed(store, &k, short_retention()).await;
        fences.push(after_retention.fence);
        store
            .finish(&after_retention, HandlerOutcome::Failure)
            .await
            .unwrap();
        // Even once the watermark itself was swept.
        h.advance(PAST_RETENTION).await;
        while store.sweep(100).await.unwrap() != Default::default() {}
        let after_sweep = claimed(store, &k, short_retention()).await;
        fences.push(after_sweep.fence);

        for pair in fences.windows(2) {
            assert!(pair[1] > pair[0], "fences must grow: {fences:?}");
        }
    }

    pub async fn records_past_expire_at_are_ignored(h: Harness) {
        let store = h.store.as_ref();
        let k = key("expired");
        let first = claimed(store, &k, short_retention()).await;
        store.finish(&first, HandlerOutcome::Success).await.unwrap();
        assert_eq!(
            outcome(store, &k, short_retention()).await,
            ClaimOutcome::Completed
        );
        h.advance(PAST_RETENTION).await;
        assert_eq!(store.inspect(&k).await.unwrap(), None);
        let again = claimed(store, &k, short_retention()).await;
        assert_ne!(first.attempt_id, again.attempt_id);
        assert!(again.fence > first.fence);
    }

    pub async fn sweep_deletes_expired_records_in_bounded_batches(h: Harness) {
        let store = h.store.as_ref();
        let expiring: Vec<RunKey> = (0..5).map(|i| key(&format!("sweep-{i}"))).collect();
        let mut first_fences = Vec::new();
        for k in &expiring {
            let claim = claimed(store, k, short_retention()).await;
            first_fences.push(claim.fence);
            store.finish(&claim, HandlerOutcome::Success).await.unwrap();
        }
        // A released key leaves only its fence watermark behind.
        let released = key("sweep-released");
        let claim = claimed(store, &released, short_retention()).await;
        store.finish(&claim, HandlerOutcome::Failure).await.unwrap();
        let kept = key("sweep-kept");
        let claim = claimed(store, &kept, long_lease()).await;
        store.finish(&claim, HandlerOutcome::Success).await.unwrap();

        h.advance(PAST_RETENTION).await;
        let mut batches = Vec::new();
        loop {
            let swept = store.sweep(2).await.unwrap();
            assert!(
                swept.records <= 2 && swept.fences <= 2,
                "bounded: {swept:?}"
            );
            if swept.records == 0 && swept.fences == 0 {
                break;
            }
            batches.push(swept);
            assert!(batches.len() < 10, "sweep does not converge: {batches:?}");
        }
        let records: usize = batches.iter().map(|s| s.records).sum();
        let fences: usize = batches.iter().map(|s| s.fences).sum();
        assert_eq!(records, 5, "{batches:?}");
        assert_eq!(fences, 6, "{batches:?}");
        assert!(
            batches.len() >= 3,
            "limit 2 needs at least 3 batches: {batches:?}"
        );

        assert_eq!(
            outcome(store, &kept, long_lease()).await,
            ClaimOutcome::Completed
        );
        for (k, old) in expiring.iter().zip(first_fences) {
            assert_eq!(store.inspect(k).await.unwrap(), None);
            let claim = claimed(store, k, short_retention()).await;
            assert!(claim.fence > old);
        }
    }

    pub async fn renewal_keeps_a_claim_past_its_first_lease(h: Harness) {
        let store = h.store.as_ref();
        let k = key("renewed");
        let held = claimed(store, &k, renewable()).await;
        // Renewed every third of the lease, as the guard does, for twice
        // the lease: nobody may take it over meanwhile.
        for _ in 0..6 {
            h.advance(STEP).await;
            assert_eq!(
                store.renew(&held, renewable()).await.unwrap(),
                RenewResult::Renewed
            );
            assert_eq!(
                outcome(store, &k, renewable()).await,
                ClaimOutcome::InProgress
            );
        }
        // Once renewals stop, the lease runs out from the last one.
        h.advance(RENEWED_LEASE + STEP).await;
        let next = claimed(store, &k, renewable()).await;
        assert!(next.fence > held.fence);
        assert_eq!(
            store.renew(&held, renewable()).await.unwrap(),
            RenewResult::Lost
        );
        assert_eq!(
            store.finish(&held, HandlerOutcome::Success).await.unwrap(),
            FinishResult::Stale
        );
        let record = store.inspect(&k).await.unwrap().expect("record");
        assert_eq!(record.attempt_id, next.attempt_id);
        assert_eq!(record.state, RunState::InProgress);
    }

    pub async fn renewal_keeps_the_record_past_its_first_retention(h: Harness) {
        let store = h.store.as_ref();
        let k = key("renewed-retention");
        let terms = ClaimTerms {
            lease: RENEWED_LEASE,
            retention: RENEWED_LEASE,
        };
        let held = claimed(store, &k, terms).await;
        for _ in 0..4 {
            h.advance(STEP).await;
            assert_eq!(
                store.renew(&held, terms).await.unwrap(),
                RenewResult::Renewed
            );
        }
        // Past the claim's own retention, the record is still honoured.
        assert!(store.inspect(&k).await.unwrap().is_some());
        assert_eq!(outcome(store, &k, terms).await, ClaimOutcome::InProgress);
        assert_eq!(
            store.finish(&held, HandlerOutcome::Success).await.unwrap(),
            FinishResult::Applied
        );
        assert_eq!(outcome(store, &k, terms).await, ClaimOutcome::Completed);
    }

    pub async fn an_expired_lease_nobody_took_over_is_still_renewed(h: Harness) {
        let store = h.store.as_ref();
        let k = key("late-renewal");
        let held = claimed(store, &k, short_lease()).await;
        h.advance(PAST_LEASE).await;
        assert_eq!(
            store.renew(&held, long_lease()).await.unwrap(),
            RenewResult::Renewed
        );
        assert_eq!(
            outcome(store, &k, short_lease()).await,
            ClaimOutcome::InProgress
        );
        assert_eq!(
            store.finish(&held, HandlerOutcome::Success).await.unwrap(),
            FinishResult::Applied
        );
    }

    pub async fn renewal_after_a_takeover_is_lost_and_changes_nothing(h: Harness) {
        let store = h.store.as_ref();
        let k = key("taken-over");
        let old = claimed(store, &k, short_lease()).await;
        h.advance(PAST_LEASE).await;
        let new = claimed(store, &k, short_lease()).await;
        assert_eq!(
            store.renew(&old, long_lease()).await.unwrap(),
            RenewResult::Lost
        );
        // The stale renewal did not lengthen the new holder's lease.
        h.advance(PAST_LEASE).await;
        let third = claimed(store, &k, short_lease()).await;
        assert_ne!(third.attempt_id, new.attempt_id);
        assert_eq!(
            store.renew(&new, long_lease()).await.unwrap(),
            RenewResult::Lost
        );
        assert_eq!(
            store.renew(&third, long_lease()).await.unwrap(),
            RenewResult::Renewed
        );
        assert_eq!(
            store.inspect(&k).await.unwrap().expect("record").attempt_id,
            third.attempt_id
        );
    }

    pub async fn renewal_of_a_finished_or_expired_claim_is_lost(h: Harness) {
        let store = h.store.as_ref();
        let done = key("renew-done");
        let claim = claimed(store, &done, long_lease()).await;
        store.finish(&claim, HandlerOutcome::Success).await.unwrap();
        assert_eq!(
            store.renew(&claim, long_lease()).await.unwrap(),
            RenewResult::Lost
        );
        let record = store.inspect(&done).await.unwrap().expect("record");
        assert_eq!(record.state, RunState::Completed);

        // A released run stays released: a renewal does not bring it back.
        let failed = key("renew-failed");
        let claim = claimed(store, &failed, long_lease()).await;
        store.finish(&claim, HandlerOutcome::Failure).await.unwrap();
        assert_eq!(
            store.renew(&claim, long_lease()).await.unwrap(),
            RenewResult::Lost
        );
        assert_eq!(store.inspect(&failed).await.unwrap(), None);

        // A record past its retention is gone, swept or not.
        let expired = key("renew-expired");
        let claim = claimed(store, &expired, short_retention()).await;
        h.advance(PAST_RETENTION).await;
        assert_eq!(
            store.renew(&claim, long_lease()).await.unwrap(),
            RenewResult::Lost
        );
        assert_eq!(store.inspect(&expired).await.unwrap(), None);
        let reclaimed = claimed(store, &expired, short_retention()).await;
        assert_eq!(
            store.renew(&claim, long_lease()).await.unwrap(),
            RenewResult::Lost
        );
        assert_eq!(
            store
                .finish(&reclaimed, HandlerOutcome::Success)
                .await
                .unwrap(),
            FinishResult::Applied
        );

        // A key never claimed has nothing to renew.
        let never = Claim {
            key: key("renew-never"),
            ..claim
        };
        assert_eq!(
            store.renew(&never, long_lease()).await.unwrap(),
            RenewResult::Lost
        );
        assert_eq!(store.inspect(&never.key).await.unwrap(), None);
    }

    pub async fn keys_are_independent(h: Harness) {
        let store = h.store.as_ref();
        let a = claimed(store, &key("a"), long_lease()).await;
        let b = claimed(store, &key("b"), long_lease()).await;
        assert_eq!(
            store.finish(&a, HandlerOutcome::Success).await.unwrap(),
            FinishResult::Applied
        );
        assert_eq!(
            outcome(store, &key("b"), long_lease()).await,
            ClaimOutcome::InProgress
        );
        assert_eq!(
            store.finish(&b, HandlerOutcome::Failure).await.unwrap(),
            FinishResult::Applied
        );
        assert_eq!(
            outcome(store, &key("a"), long_lease()).await,
            ClaimOutcome::Completed
        );
        assert_eq!(store.inspect(&key("never")).await.unwrap(), None);
    }

    pub async fn a_token_stays_bound_to_its_first_run_until_it_expires(h: Harness) {
        let store = h.store.as_ref();
        let (first, second) = (key("token-first"), key("token-second"));
        let token = "a".repeat(64);
        assert_eq!(
            store.bind_token(&token, &first, RETENTION).await.unwrap(),
            first
        );
        // The same token naming another run answers the first; naming its
        // own again answers it too, and changes nothing.
        assert_eq!(
            store.bind_token(&token, &second, RETENTION).await.unwrap(),
            first
        );
        assert_eq!(
            store
                .bind_token(&token, &first, Duration::from_secs(3600))
                .await
                .unwrap(),
            first
        );
        // Another token is bound on its own.
        let other = "b".repeat(64);
        assert_eq!(
            store.bind_token(&other, &second, RETENTION).await.unwrap(),
            second
        );
        // Bindings are not runs: the keys are still free to claim.
        assert_eq!(store.inspect(&first).await.unwrap(), None);
        claimed(store, &first, short_lease()).await;
        // Once the token expired, its binding is ignored.
        h.advance(PAST_RETENTION).await;
        assert_eq!(
            store.bind_token(&token, &second, RETENTION).await.unwrap(),
            second
        );
        assert_eq!(
            store.bind_token(&token, &first, RETENTION).await.unwrap(),
            second
        );
    }

    pub async fn concurrent_binds_of_one_token_agree(h: Harness) {
        let token = "c".repeat(64);
        let barrier = Arc::new(tokio::sync::Barrier::new(16));
        let tasks: Vec<_> = (0..16)
            .map(|i| {
                let store = Arc::clone(&h.store);
                let barrier = Arc::clone(&barrier);
                let token = token.clone();
                tokio::spawn(async move {
                    let mine = key(&format!("bind-{i}"));
                    barrier.wait().await;
                    let bound = store
                        .bind_token(&token, &mine, Duration::from_secs(3600))
                        .await
                        .expect("bind");
                    (mine, bound)
                })
            })
            .collect();
        let mut answers = Vec::new();
        for task in tasks {
            answers.push(task.await.expect("bind task"));
        }
        let winner = answers[0].1.clone();
        assert!(
            answers.iter().all(|(_, bound)| *bound == winner),
            "one key for the token: {answers:?}"
        );
        assert_eq!(
            answers.iter().filter(|(mine, _)| *mine == winner).count(),
            1,
            "the key it is bound to is one caller's: {answers:?}"
        );
    }

    pub async fn sweep_deletes_expired_token_bindings(h: Harness) {
        let store = h.store.as_ref();
        let k = key("token-sweep");
        for i in 0..5 {
            let token = format!("{i:064}");
            store.bind_token(&token, &k, RETENTION).await.unwrap();
        }
        let kept = "d".repeat(64);
        store
            .bind_token(&kept, &k, Duration::from_secs(3600))
            .await
            .unwrap();
        h.advance(PAST_RETENTION).await;
        let mut swept = 0;
        loop {
            let batch = store.sweep(2).await.unwrap();
            assert!(batch.tokens <= 2, "bounded: {batch:?}");
            if batch == Default::default() {
                break;
            }
            swept += batch.tokens;
        }
        // Redis expires bindings itself and counts none.
        if h.clock.is_some() {
            assert_eq!(swept, 5);
        } else {
            assert!(swept == 5 || swept == 0, "{swept}");
        }
        let other = key("token-sweep-other");
        for i in 0..5 {
            let token = format!("{i:064}");
            assert_eq!(
                store.bind_token(&token, &other, RETENTION).await.unwrap(),
                other
            );
        }
        assert_eq!(
            store.bind_token(&kept, &other, RETENTION).await.unwrap(),
            k,
            "a live binding survives the sweep"
        );
    }
}

// The generated tests call each scenario as `super::<name>`.
use suite::*;

idem_testkit::backend_tests! {
    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    memory: Harness::memory().await,
    sqlite: Harness::sqlite().await,
    postgres: Harness::postgres().await,
    redis: Harness::redis().await,
    rediss: Harness::rediss().await;
    concurrent_claims_have_one_winner,
    stale_attempt_cannot_finish_or_delete_newer_claim,
    live_lease_blocks_and_expired_lease_can_be_reclaimed,
    completed_run_answers_replay,
    failure_releases_the_key_immediately,
    fencing_strictly_increases_across_reclaims,
    records_past_expire_at_are_ignored,
    sweep_deletes_expired_records_in_bounded_batches,
    keys_are_independent,
    renewal_keeps_a_claim_past_its_first_lease,
    renewal_keeps_the_record_past_its_first_retention,
    an_expired_lease_nobody_took_over_is_still_renewed,
    renewal_after_a_takeover_is_lost_and_changes_nothing,
    renewal_of_a_finished_or_expired_claim_is_lost,
    a_token_stays_bound_to_its_first_run_until_it_expires,
    concurrent_binds_of_one_token_agree,
    sweep_deletes_expired_token_bindings,
}
