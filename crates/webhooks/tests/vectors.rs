//! The test vector the Standard Webhooks reference libraries share, in the
//! standard-webhooks/standard-webhooks repository: `test_sign_function` in
//! `libraries/python/tests/test_webhooks.py` and `TestWebhookSign` in
//! `libraries/go/webhook_test.go` sign it; the same files' verification
//! tests supply the wrong signature (`...OLJ1OA=`, one character off) and
//! the multi-signature list with foreign `v1,`/`v2,` entries.

use idem_webhooks::{Signed, SigningSecret, Verifier, VerifyError, signature_list};

const SECRET: &str = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
const MSG_ID: &str = "msg_p5jXN8AQM9LWM0D4loKWxJek";
const TIMESTAMP: i64 = 1_614_265_330;
const PAYLOAD: &[u8] = br#"{"test": 2432232314}"#;
const SIGNATURE: &str = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=";
const WRONG_SIGNATURE: &str = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OA=";
const FOREIGN: &str = "v1,Ceo5qEr07ixe2NLpvHk3FH9bwy/WavXrAFQ/9tdO6mc=";
const FOREIGN_V2: &str = "v2,Ceo5qEr07ixe2NLpvHk3FH9bwy/WavXrAFQ/9tdO6mc=";

fn secret() -> SigningSecret {
    SigningSecret::parse(SECRET).unwrap()
}

fn message(signatures: &str) -> Signed<'_> {
    Signed {
        id: MSG_ID,
        timestamp: "1614265330",
        signatures,
        body: PAYLOAD,
    }
}

#[test]
fn signs_the_reference_message() {
    assert_eq!(secret().sign(MSG_ID, TIMESTAMP, PAYLOAD), SIGNATURE);
    assert_eq!(
        signature_list(&[secret()], MSG_ID, TIMESTAMP, PAYLOAD),
        SIGNATURE
    );
}

#[test]
fn verifies_the_reference_signature_and_refuses_the_altered_one() {
    let secrets = [secret()];
    let verifier = Verifier::new(&secrets);
    assert_eq!(verifier.verify(&message(SIGNATURE), TIMESTAMP + 10), Ok(()));
    assert_eq!(
        verifier.verify(&message(WRONG_SIGNATURE), TIMESTAMP + 10),
        Err(VerifyError::NoMatch)
    );
    assert_eq!(
        verifier.verify(&message(FOREIGN), TIMESTAMP + 10),
        Err(VerifyError::NoMatch)
    );
}

#[test]
fn finds_the_reference_signature_among_foreign_ones() {
    let list = [FOREIGN, FOREIGN_V2, SIGNATURE, FOREIGN].join(" ");
    let secrets = [secret()];
    assert_eq!(
        Verifier::new(&secrets).verify(&message(&list), TIMESTAMP),
        Ok(())
    );
}

#[test]
fn refuses_the_reference_message_past_the_tolerance() {
    let secrets = [secret()];
    let verifier = Verifier::new(&secrets);
    assert_eq!(
        verifier.verify(&message(SIGNATURE), TIMESTAMP + 5 * 60 + 1),
        Err(VerifyError::Stale)
    );
    assert_eq!(
        verifier.verify(&message(SIGNATURE), TIMESTAMP - 5 * 60 - 1),
        Err(VerifyError::Stale)
    );
}
