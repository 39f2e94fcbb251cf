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
use std::sync::Mutex;
use std::time::{Duration, Instant};
use subtle::ConstantTimeEq;

/// Sessions kept at most; past it, the least recently used goes.
const MAX_SESSIONS: usize = 10_000;

/// What a page says once, after the action that caused it.
#[derive(Debug, Clone)]
pub struct Flash {
    pub ok: bool,
    pub text: String,
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
        if map.len() >= MAX_SESSIONS
            && let Some(oldest) = map
                .values()
                .min_by_key(|s| s.last_seen)
                .map(|s| s.id.clone())
        {
            map.remove(&oldest);
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

#[cfg(test)]
mod tests {
    use super::*;

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
            },
        );
        assert_eq!(sessions.touch(&s.id).unwrap().1.unwrap().text, "done");
        assert!(sessions.touch(&s.id).unwrap().1.is_none());
        assert!(s.csrf_matches(&s.csrf.clone()));
        assert!(!s.csrf_matches(""));
        assert!(!s.csrf_matches(&random_token()));
    }
}
