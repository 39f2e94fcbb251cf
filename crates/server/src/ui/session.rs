//! Console sessions: a random session ID in the cookie, the API key it
//! stands for kept here, in this node's memory.
//!
//! The key never travels in a cookie, so a stolen cookie jar or a log of
//! request headers holds no API key, and logging out (or an idle timeout)
//! ends the session for good. The cost: sessions belong to the node that made
//! them, so nodes behind a load balancer need sticky sessions, and a restart
//! asks everyone to log in again.

use rand::RngCore;
use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::Mutex;
use std::time::{Duration, Instant};
use subtle::ConstantTimeEq;

/// Sessions one API key may hold; a login past it ends that key's least
/// recently used session, never another key's, so no key holder can log
/// anyone else out by logging in again and again.
pub const SESSIONS_PER_KEY: usize = 16;

/// What a page says once, after the action that caused it.
#[derive(Debug, Clone)]
pub struct Flash {
    pub ok: bool,
    pub text: String,
    /// A value shown once with the text, to copy (a new API key).
    pub secret: Option<String>,
}

#[derive(Debug, Clone)]
pub struct Session {
    pub id: String,
    pub key: String,
    /// Every acting form carries it; a POST without it is refused.
    pub csrf: String,
    last_seen: Instant,
    flash: Option<Flash>,
}

impl Session {
    /// Whether `token` is this session's CSRF token, compared in constant
    /// time.
    pub fn csrf_matches(&self, token: &str) -> bool {
        !token.is_empty() && bool::from(self.csrf.as_bytes().ct_eq(token.as_bytes()))
    }
}

pub struct Sessions {
    idle: Duration,
    map: Mutex<HashMap<String, Session>>,
}

/// 32 random bytes, hex: unguessable for a session ID or a CSRF token.
pub fn random_token() -> String {
    let mut bytes = [0u8; 32];
    rand::rng().fill_bytes(&mut bytes);
    hex::encode(bytes)
}

impl Sessions {
    pub fn new(idle: Duration) -> Sessions {
        Sessions {
            idle,
            map: Mutex::new(HashMap::new()),
        }
    }

    /// Opens a session for `key` and returns it.
    pub fn open(&self, key: String) -> Session {
        let now = Instant::now();
        let session = Session {
            id: random_token(),
            key,
            csrf: random_token(),
            last_seen: now,
            flash: None,
        };
        let mut map = self.map.lock().expect("sessions");
        map.retain(|_, s| now.duration_since(s.last_seen) < self.idle);
        let mut own: Vec<(Instant, String)> = map
            .values()
            .filter(|s| bool::from(s.key.as_bytes().ct_eq(session.key.as_bytes())))
            .map(|s| (s.last_seen, s.id.clone()))
            .collect();
        if own.len() >= SESSIONS_PER_KEY {
            own.sort();
            for (_, id) in &own[..=own.len() - SESSIONS_PER_KEY] {
                map.remove(id);
            }
        }
        map.insert(session.id.clone(), session.clone());
        session
    }

    /// The live session with this ID, its idle time restarted, and the
    /// message left for it (taken: it is shown once).
    pub fn touch(&self, id: &str) -> Option<(Session, Option<Flash>)> {
        let now = Instant::now();
        let mut map = self.map.lock().expect("sessions");
        let live = match map.get_mut(id) {
            Some(s) if now.duration_since(s.last_seen) < self.idle => {
                s.last_seen = now;
                let flash = s.flash.take();
                Some((s.clone(), flash))
            }
            Some(_) => None,
            None => return None,
        };
        if live.is_none() {
            map.remove(id);
        }
        live
    }

    /// Leaves a message for the session's next page.
    pub fn flash(&self, id: &str, flash: Flash) {
        if let Some(s) = self.map.lock().expect("sessions").get_mut(id) {
            s.flash = Some(flash);
        }
    }

    pub fn close(&self, id: &str) {
        self.map.lock().expect("sessions").remove(id);
    }
}

/// Login attempts per client address: a bucket of `per_minute` attempts,
/// refilled evenly over a minute. IPv6 clients are counted per /64, the
/// block one host usually holds.
pub struct LoginLimiter {
    burst: f64,
    every: Duration,
    buckets: Mutex<HashMap<IpAddr, (f64, Instant)>>,
}

impl LoginLimiter {
    /// Addresses tracked at most; past it, the full buckets are dropped
    /// (they hold nothing), then the new address waits as if it had none.
    const ADDRESSES: usize = 100_000;

    /// `per_minute` 0 limits nothing.
    pub fn new(per_minute: u32) -> LoginLimiter {
        LoginLimiter {
            burst: f64::from(per_minute),
            every: Duration::from_secs(60) / per_minute.max(1),
            buckets: Mutex::new(HashMap::new()),
        }
    }

    /// Takes one attempt for `ip`, or says how long until it may try.
    pub fn attempt(&self, ip: IpAddr) -> Result<(), Duration> {
        if self.burst == 0.0 {
            return Ok(());
        }
        self.attempt_at(ip, Instant::now())
    }

    fn attempt_at(&self, ip: IpAddr, now: Instant) -> Result<(), Duration> {
        let ip = match ip.to_canonical() {
            IpAddr::V6(v6) => {
                let mut s = v6.segments();
                s[4..].fill(0);
                IpAddr::from(s)
            }
            v4 => v4,
        };
        let refill = |(tokens, at): (f64, Instant)| {
            let grown = now.duration_since(at).as_secs_f64() / self.every.as_secs_f64();
            (self.burst.min(tokens + grown), now)
        };
        let mut buckets = self.buckets.lock().unwrap_or_else(|e| e.into_inner());
        if buckets.len() >= Self::ADDRESSES && !buckets.contains_key(&ip) {
            buckets.retain(|_, b| refill(*b).0 < self.burst);
            if buckets.len() >= Self::ADDRESSES {
                return Err(self.every);
            }
        }
        let bucket = buckets.entry(ip).or_insert((self.burst, now));
        let (tokens, at) = refill(*bucket);
        if tokens >= 1.0 {
            *bucket = (tokens - 1.0, at);
            Ok(())
        } else {
            *bucket = (tokens, at);
            Err(self.every.mul_f64(1.0 - tokens))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_holds_at_most_its_sessions_and_evicts_only_its_own() {
        let sessions = Sessions::new(Duration::from_secs(60));
        let admin = sessions.open("admin-key".into());
        let mut other: Vec<Session> = (0..SESSIONS_PER_KEY + 50)
            .map(|_| sessions.open("reader-key".into()))
            .collect();
        assert!(
            sessions.touch(&admin.id).is_some(),
            "another key's logins evicted the admin"
        );
        let kept = other.split_off(other.len() - SESSIONS_PER_KEY);
        for s in &other {
            assert!(
                sessions.touch(&s.id).is_none(),
                "an old session of the key stays"
            );
        }
        for s in &kept {
            assert!(sessions.touch(&s.id).is_some(), "one of the newest is gone");
        }
    }

    #[test]
    fn login_attempts_are_limited_per_address_and_come_back() {
        let limiter = LoginLimiter::new(10);
        let every = Duration::from_secs(6);
        let t0 = Instant::now();
        let a: IpAddr = "192.0.2.7".parse().unwrap();
        let b: IpAddr = "2001:db8::1".parse().unwrap();
        let b_same_block: IpAddr = "2001:db8::2".parse().unwrap();
        for _ in 0..10 {
            limiter.attempt_at(a, t0).expect("within the burst");
        }
        let wait = limiter.attempt_at(a, t0).expect_err("past the burst");
        assert!(wait > Duration::ZERO && wait <= every, "{wait:?}");
        limiter
            .attempt_at(b, t0)
            .expect("another address has its own");
        for _ in 0..9 {
            limiter
                .attempt_at(b_same_block, t0)
                .expect("the /64's burst");
        }
        assert!(limiter.attempt_at(b, t0).is_err(), "one /64 is one address");
        limiter
            .attempt_at(a, t0 + every)
            .expect("one attempt back after EVERY");
        assert!(limiter.attempt_at(a, t0 + every).is_err());
        let open = LoginLimiter::new(0);
        for _ in 0..100 {
            open.attempt(a).expect("0 limits nothing");
        }
    }

    #[test]
    fn an_idle_session_expires_and_a_closed_one_is_gone() {
        let sessions = Sessions::new(Duration::from_millis(30));
        let s = sessions.open("key".into());
        assert_eq!(sessions.touch(&s.id).expect("live").0.key, "key");
        std::thread::sleep(Duration::from_millis(40));
        assert!(sessions.touch(&s.id).is_none());
        let s = Sessions::new(Duration::from_secs(60));
        let open = s.open("k".into());
        s.close(&open.id);
        assert!(s.touch(&open.id).is_none());
    }

    #[test]
    fn a_flash_is_shown_once_and_the_csrf_token_must_match() {
        let sessions = Sessions::new(Duration::from_secs(60));
        let s = sessions.open("key".into());
        sessions.flash(
            &s.id,
            Flash {
                ok: true,
                text: "done".into(),
                secret: None,
            },
        );
        assert_eq!(sessions.touch(&s.id).unwrap().1.unwrap().text, "done");
        assert!(sessions.touch(&s.id).unwrap().1.is_none());
        assert!(s.csrf_matches(&s.csrf.clone()));
        assert!(!s.csrf_matches(""));
        assert!(!s.csrf_matches(&random_token()));
    }
}
