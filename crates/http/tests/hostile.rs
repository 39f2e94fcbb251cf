//! Hostile input: whatever bytes a client sends as a key, a path, a query,
//! a content type or a body, the parsers answer with a value or an error,
//! never a panic. Case counts are bounded so the suite runs in seconds.

use http::HeaderValue;
use idem_http::fingerprint::{BodyKind, body_digest, json_digest, path_digest, query_digest};
use idem_http::{IdempotencyKey, Version};
use proptest::prelude::*;

const V: Version = Version::CURRENT;

/// Bytes biased towards what JSON and keys are made of, so that the
/// parsers get past their first byte often.
fn jsonish() -> impl Strategy<Value = Vec<u8>> {
    let byte = prop_oneof![
        4 => prop::sample::select(b"{}[]\",:0123456789.eE+-tfnrul \\/\n".to_vec()),
        1 => any::<u8>(),
    ];
    prop::collection::vec(byte, 0..256)
}

/// Any JSON document, nested a little.
fn json_value() -> impl Strategy<Value = serde_json::Value> {
    let leaf = prop_oneof![
        Just(serde_json::Value::Null),
        any::<bool>().prop_map(serde_json::Value::from),
        any::<i64>().prop_map(serde_json::Value::from),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(serde_json::Value::from),
        ".{0,12}".prop_map(serde_json::Value::from),
    ];
    leaf.prop_recursive(4, 32, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(serde_json::Value::from),
            prop::collection::btree_map(".{0,8}", inner, 0..6)
                .prop_map(|m| serde_json::Value::Object(m.into_iter().collect())),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn any_key_header_parses_or_is_refused(bytes in prop::collection::vec(any::<u8>(), 0..300)) {
        if let Ok(value) = HeaderValue::from_bytes(&bytes)
            && let Ok(key) = IdempotencyKey::from_header_value(&value)
        {
            let key = key.as_str();
            prop_assert!((1..=255).contains(&key.len()), "{key:?}");
            prop_assert!(key.bytes().all(|b| (0x20..=0x7e).contains(&b)), "{key:?}");
        }
        let _ = IdempotencyKey::new(String::from_utf8_lossy(&bytes).into_owned());
    }

    #[test]
    fn any_bytes_as_json_give_a_digest_or_an_error(bytes in jsonish()) {
        let first = json_digest(V, &bytes).ok();
        prop_assert_eq!(json_digest(V, &bytes).ok(), first, "deterministic");
        // What serde_json refuses as JSON, the canonicalizer refuses too.
        if serde_json::from_slice::<serde_json::Value>(&bytes).is_err() {
            prop_assert!(first.is_none(), "{}", String::from_utf8_lossy(&bytes));
        }
    }

    #[test]
    fn every_json_document_has_a_digest(value in json_value()) {
        let text = serde_json::to_vec(&value).unwrap();
        prop_assert!(json_digest(V, &text).is_ok(), "{}", String::from_utf8_lossy(&text));
    }

    #[test]
    fn any_path_and_query_have_a_digest(path in ".{0,64}", query in prop::option::of(".{0,64}")) {
        let _ = path_digest(V, &path);
        let _ = query_digest(V, query.as_deref());
    }

    #[test]
    fn any_content_type_and_body_give_a_digest_or_an_error(
        content_type in prop::collection::vec(any::<u8>(), 0..80),
        kind in prop::sample::select(vec!["", "application/json", "multipart/form-data; boundary=x", "text/plain"]),
        body in jsonish(),
    ) {
        let mut ct = kind.as_bytes().to_vec();
        ct.extend_from_slice(&content_type);
        let Ok(value) = HeaderValue::from_bytes(&ct) else { return Ok(()) };
        let _ = BodyKind::from_content_type(Some(&value));
        let chunks: Vec<Result<bytes::Bytes, std::convert::Infallible>> =
            body.chunks(7).map(|c| Ok(bytes::Bytes::copy_from_slice(c))).collect();
        let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
        let _ = runtime.block_on(body_digest(V, Some(&value), futures_util::stream::iter(chunks)));
    }
}

#[test]
fn deep_nesting_is_refused_not_a_stack_overflow() {
    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    assert!(json_digest(V, deep.as_bytes()).is_err());
    let deep = "{\"a\":".repeat(100_000);
    assert!(json_digest(V, deep.as_bytes()).is_err());
}
