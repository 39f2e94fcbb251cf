use std::convert::Infallible;

use bytes::Bytes;
use futures_util::stream;
use http::{HeaderValue, Method, Uri};
use sha2::{Digest as _, Sha256};

use super::*;

const V: Version = Version::V1;

fn ct(value: &str) -> HeaderValue {
    HeaderValue::from_str(value).unwrap()
}

fn json(text: &str) -> Digest {
    json_digest(V, text.as_bytes()).unwrap_or_else(|e| panic!("{text}: {e}"))
}

fn json_err(text: &str) -> JsonError {
    match json_digest(V, text.as_bytes()) {
        Ok(_) => panic!("accepted invalid JSON {text:?}"),
        Err(e) => e,
    }
}

async fn body(content_type: Option<&str>, data: &[u8]) -> Result<Digest, BodyError> {
    let ct = content_type.map(ct);
    body_digest_bytes(V, ct.as_ref(), Bytes::copy_from_slice(data)).await
}

async fn body_chunked(
    content_type: Option<&str>,
    data: &[u8],
    chunk: usize,
) -> Result<Digest, BodyError> {
    let ct = content_type.map(ct);
    let chunks: Vec<Result<Bytes, Infallible>> = data
        .chunks(chunk)
        .map(|c| Ok(Bytes::copy_from_slice(c)))
        .collect();
    body_digest(V, ct.as_ref(), stream::iter(chunks)).await
}

// ---------------------------------------------------------------------------
// Digest and Fingerprint representation

fn sample() -> Fingerprint {
    Fingerprint {
        version: 1,
        method: Digest::from_bytes([0x01; 32]),
        path: Digest::from_bytes([0xAB; 32]),
        query: Digest::from_bytes([0x00; 32]),
        body: Digest::from_bytes([0xFF; 32]),
    }
}

#[test]
fn digest_hex_round_trip() {
    let d = Digest::of(b"abc");
    let hex = d.to_string();
    assert_eq!(
        hex,
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    );
    assert_eq!(hex.parse::<Digest>().unwrap(), d);
    assert_eq!(hex.to_uppercase().parse::<Digest>().unwrap(), d);
    assert!("abc".parse::<Digest>().is_err());
    assert!(hex[..62].parse::<Digest>().is_err());
    assert!(format!("{hex}00").parse::<Digest>().is_err());
    assert!(hex.replace('b', "g").parse::<Digest>().is_err());
}

#[test]
fn fingerprint_stored_form_round_trips() {
    let fp = sample();
    let s = fp.to_string();
    assert_eq!(
        s,
        format!(
            "v1:{}:{}:{}:{}",
            "01".repeat(32),
            "ab".repeat(32),
            "00".repeat(32),
            "ff".repeat(32)
        )
    );
    assert_eq!(s.len(), 262);
    assert_eq!(s.parse::<Fingerprint>().unwrap(), fp);

    let json = serde_json::to_string(&fp).unwrap();
    assert_eq!(json, format!("\"{s}\""));
    assert_eq!(serde_json::from_str::<Fingerprint>(&json).unwrap(), fp);
    let d = serde_json::to_string(&fp.body).unwrap();
    assert_eq!(d, format!("\"{}\"", "ff".repeat(32)));
    assert_eq!(serde_json::from_str::<Digest>(&d).unwrap(), fp.body);
    assert!(serde_json::from_str::<Fingerprint>("\"v1:00\"").is_err());
    assert!(serde_json::from_str::<Fingerprint>("12").is_err());
}

#[test]
fn fingerprint_parse_rejects_malformed() {
    let good = sample().to_string();
    let rest = good.strip_prefix("v1").unwrap();
    for bad in [
        String::new(),
        "v1".to_owned(),
        format!("1{rest}"),
        format!("v{rest}"),
        format!("v1.0{rest}"),
        format!("v-1{rest}"),
        format!("V1{rest}"),
        format!("v99999999999{rest}"),
        format!("{good}:"),
        format!("{good}:{}", "00".repeat(32)),
        good.rsplit_once(':').unwrap().0.to_owned(),
        good.replacen(':', ";", 1),
    ] {
        assert!(bad.parse::<Fingerprint>().is_err(), "accepted {bad:?}");
    }
}

#[test]
fn unknown_versions_parse_but_cannot_be_computed() {
    let mut fp = sample();
    fp.version = 7;
    let parsed: Fingerprint = fp.to_string().parse().unwrap();
    assert_eq!(parsed.version, 7);
    assert_eq!(Version::try_from(7), Err(UnsupportedVersion(7)));
    assert_eq!(Version::try_from(1), Ok(Version::V1));
    assert_eq!(Version::CURRENT.number(), 1);
    assert_eq!(Version::CURRENT.to_string(), "v1");
    assert!(
        UnsupportedVersion(7)
            .to_string()
            .contains("version 7 is not supported")
    );
}

#[test]
fn differs_names_each_part() {
    let a = sample();
    assert!(a.differs(&a).is_empty());
    assert!(a.matches(&a));
    let other = Digest::from_bytes([0x42; 32]);
    let mut b = a;
    b.method = other;
    assert_eq!(a.differs(&b), ["method"]);
    let mut b = a;
    b.path = other;
    assert_eq!(a.differs(&b), ["path"]);
    let mut b = a;
    b.query = other;
    assert_eq!(a.differs(&b), ["query"]);
    let mut b = a;
    b.body = other;
    b.method = other;
    assert_eq!(a.differs(&b), ["method", "body"]);
    assert!(!a.matches(&b));
}

#[test]
fn differs_across_versions_reports_everything() {
    let a = sample();
    let mut b = a;
    b.version = 2;
    assert_eq!(a.differs(&b), ["method", "path", "query", "body"]);
    assert!(!a.matches(&b));
}

#[test]
fn overall_digest_is_sha256_of_stored_form() {
    let fp = sample();
    assert_eq!(fp.digest(), Digest::of(fp.to_string().as_bytes()));
    let mut other = fp;
    other.query = Digest::from_bytes([0x01; 32]);
    assert_ne!(fp.digest(), other.digest());
}

// ---------------------------------------------------------------------------
// The documented encoding, rebuilt independently

fn domain(name: &str) -> Sha256 {
    let mut h = Sha256::new();
    h.update(name.as_bytes());
    h.update([0]);
    h
}

fn lp(h: &mut Sha256, b: &[u8]) {
    h.update((b.len() as u64).to_be_bytes());
    h.update(b);
}

fn done(h: Sha256) -> Digest {
    Digest::from_bytes(h.finalize().into())
}

#[test]
fn method_path_query_encodings_match_the_documentation() {
    let mut h = domain("idem-fp/v1/method");
    lp(&mut h, b"POST");
    assert_eq!(method_digest(V, &Method::POST), done(h));

    let mut h = domain("idem-fp/v1/path");
    lp(&mut h, b"/v1/queues/a~b/%2F");
    assert_eq!(path_digest(V, "/v1/queues/a%7eb/%2f"), done(h));

    let mut h = domain("idem-fp/v1/query");
    h.update(3u64.to_be_bytes());
    for (n, v) in [("a", "2"), ("a", "1"), ("b c", "")] {
        lp(&mut h, n.as_bytes());
        lp(&mut h, v.as_bytes());
    }
    assert_eq!(query_digest(V, Some("b+c&a=2&a=1")), done(h));
}

#[tokio::test]
async fn body_encodings_match_the_documentation() {
    let mut h = domain("idem-fp/v1/body");
    h.update(b"E");
    assert_eq!(body(Some("application/json"), b"").await.unwrap(), done(h));

    let mut h = domain("idem-fp/v1/body");
    h.update(b"B");
    lp(&mut h, b"text/plain");
    h.update(Sha256::digest(b"hello"));
    assert_eq!(
        body(Some("Text/Plain; charset=utf-8"), b"hello")
            .await
            .unwrap(),
        done(h)
    );

    // {"b":[1,"x",true],"a":null}
    let mut member_a = Sha256::new();
    member_a.update(b"n");
    let mut member_b = Sha256::new();
    member_b.update(b"[#");
    lp(&mut member_b, b"1");
    member_b.update(b"s");
    lp(&mut member_b, b"x");
    member_b.update(b"t]");
    let mut h = domain("idem-fp/v1/body");
    h.update(b"J{");
    h.update(2u64.to_be_bytes());
    lp(&mut h, b"a");
    h.update(member_a.finalize());
    lp(&mut h, b"b");
    h.update(member_b.finalize());
    let expected = done(h);
    assert_eq!(json(r#"{"b":[1,"x",true],"a":null}"#), expected);
    assert_eq!(
        body(Some("application/json"), br#"{"b":[1,"x",true],"a":null}"#)
            .await
            .unwrap(),
        expected
    );

    let mut h = domain("idem-fp/v1/body");
    h.update(b"M");
    h.update(2u64.to_be_bytes());
    for (name, file, ctype, content) in [
        ("a", None, None, &b"1"[..]),
        (
            "f",
            Some("x.bin"),
            Some("application/octet-stream"),
            b"\x00\x01",
        ),
    ] {
        h.update([1]);
        lp(&mut h, name.as_bytes());
        match file {
            None => h.update([0]),
            Some(f) => {
                h.update([1]);
                lp(&mut h, f.as_bytes());
            }
        }
        match ctype {
            None => h.update([0]),
            Some(c) => {
                h.update([1]);
                lp(&mut h, c.as_bytes());
            }
        }
        h.update(Sha256::digest(content));
    }
    let data = multipart_body(
        "XyZ",
        &[
            Part::file("f", "x.bin", "application/octet-stream", b"\x00\x01"),
            Part::field("a", b"1"),
        ],
    );
    assert_eq!(
        body(Some("multipart/form-data; boundary=XyZ"), &data)
            .await
            .unwrap(),
        done(h)
    );
}

/// Pins the whole stored form for one request, so that any change to the
/// version 1 rules is noticed: records written under them must keep matching.
#[tokio::test]
async fn version_1_golden_fingerprint() {
    let fp = Fingerprint::of_request_bytes(
        V,
        &Method::POST,
        &"/v1/queues/payments/tasks?wait_ms=100".parse::<Uri>().unwrap(),
        Some(&ct("application/json")),
        Bytes::from_static(br#"{"task_id": "payment-12345", "target": {"url": "https://pay.internal/charge"}, "n": 1.50}"#),
    )
    .await
    .unwrap();
    assert_eq!(
        fp.to_string(),
        GOLDEN_V1,
        "the version 1 canonicalization changed"
    );
}

const GOLDEN_V1: &str = "v1:8fed0114abcc46f640d3b35c35e052c2ec1070798a994e86eac2bf438c8ca8f0:a82a2ac7fc5e3d9608634ff2727f07d28f934ba1ef868b1dfaa109e67a1a36c1:c530590d0929c1648a160bcd59b0a2e04160b71983fca76a426f8d884720ed9c:c7cbb101d6e464f6b644180d8724a6107b833ac0f8d77e3126e1fc7dfedcb080";

// ---------------------------------------------------------------------------
// Method, path, query

#[test]
fn method_is_compared_as_sent() {
    assert_eq!(
        method_digest(V, &Method::POST),
        method_digest(V, &Method::from_bytes(b"POST").unwrap())
    );
    assert_ne!(
        method_digest(V, &Method::POST),
        method_digest(V, &Method::PUT)
    );
    assert_ne!(
        method_digest(V, &Method::POST),
        method_digest(V, &Method::from_bytes(b"post").unwrap())
    );
}

#[test]
fn parts_are_domain_separated() {
    assert_ne!(
        method_digest(V, &Method::GET).as_bytes(),
        path_digest(V, "GET").as_bytes()
    );
    assert_ne!(query_digest(V, Some("")), path_digest(V, ""));
}

#[test]
fn path_digest_examples() {
    assert_eq!(path_digest(V, "/v1/a%7Eb"), path_digest(V, "/v1/a~b"));
    assert_eq!(path_digest(V, "/v1/%61"), path_digest(V, "/v1/a"));
    assert_eq!(path_digest(V, "/v1/a%2fb"), path_digest(V, "/v1/a%2Fb"));
    assert_ne!(path_digest(V, "/v1/a%2Fb"), path_digest(V, "/v1/a/b"));
    assert_ne!(path_digest(V, "/v1/A"), path_digest(V, "/v1/a"));
    assert_ne!(path_digest(V, "/v1/a/"), path_digest(V, "/v1/a"));
    assert_ne!(path_digest(V, "/v1/%20"), path_digest(V, "/v1/+"));
}

#[test]
fn query_digest_examples() {
    let q = |s: &str| query_digest(V, Some(s));
    assert_eq!(q("a=1&b=2"), q("b=2&a=1"));
    assert_ne!(q("a=1&a=2"), q("a=2&a=1"));
    assert_eq!(q("a=1&b=2&a=3"), q("b=2&a=1&a=3"));
    assert_eq!(q("%61=1"), q("a=1"));
    assert_eq!(q("a=x+y"), q("a=x%20y"));
    assert_ne!(q("a=x+y"), q("a=x%2By"));
    assert_eq!(q(""), query_digest(V, None));
    assert_ne!(q("a=1"), query_digest(V, None));
    assert_ne!(q("a=1"), q("a=1&a=1"));
    assert_ne!(q("ab=c"), q("a=bc"));
    assert_ne!(q("a=1&b=2"), q("a=1%26b%3D2"));
}

#[test]
fn from_parts_uses_uri_path_and_query() {
    let body = Digest::from_bytes([7; 32]);
    let fp =
        |uri: &str| Fingerprint::from_parts(V, &Method::POST, &uri.parse::<Uri>().unwrap(), body);
    let a = fp("/v1/queues?x=1&y=2");
    assert!(a.differs(&fp("/v1/queues?y=2&x=1")).is_empty());
    assert_eq!(a.differs(&fp("/v1/queues?x=2&y=2")), ["query"]);
    assert_eq!(a.differs(&fp("/v1/jobs?x=1&y=2")), ["path"]);
    assert_eq!(
        a.differs(&fp("http://other.example/v1/queues?x=1&y=2")),
        Vec::<&str>::new(),
        "scheme and authority are not part of the fingerprint"
    );
    assert_eq!(a.body, body);
    assert_eq!(a.version, 1);
}

// ---------------------------------------------------------------------------
// JSON canonicalization

#[test]
fn json_ignores_key_order_and_whitespace() {
    let a = json(r#"{"a":1,"b":[true,false,null],"c":{"x":"y","z":{}}}"#);
    let b = json(
        "\r\n {\t\"c\" : { \"z\" : { } , \"x\" : \"y\" } ,\n\"b\":[ true , false , null ] , \"a\" : 1 } \n",
    );
    assert_eq!(a, b);
}

#[test]
fn json_decodes_string_escapes() {
    assert_eq!(json(r#""\u0041""#), json(r#""A""#));
    assert_eq!(json(r#""\u00e9""#), json(r#""é""#));
    assert_eq!(json(r#""\u00E9""#), json(r#""é""#));
    assert_eq!(json(r#""\/""#), json(r#""/""#));
    assert_eq!(
        json(r#""\n\t\r\b\f""#),
        json(r#""\u000a\u0009\u000D\u0008\u000c""#)
    );
    assert_eq!(json(r#""\"\\""#), json(r#""\u0022\u005C""#));
    assert_eq!(json(r#""\ud83d\ude00""#), json("\"😀\""));
    assert_eq!(json(r#""\uD83D\uDE00""#), json("\"😀\""));
    assert_eq!(json(r#"{"\u0061":1}"#), json(r#"{"a":1}"#));
    assert_ne!(json(r#""a""#), json(r#""A""#));
    assert_ne!(
        json(r#""é""#),
        json(r#""e\u0301""#),
        "no Unicode normalization"
    );
}

#[test]
fn json_keeps_number_spelling() {
    let spellings = [
        "1", "1.0", "1.00", "1e0", "1E0", "1e+0", "1e-0", "1E+0", "10e-1", "0.1e1", "-0", "0",
        "0.0", "-0.0", "0e0", "100", "1e2", "1E2", "1e02",
    ];
    let digests: Vec<Digest> = spellings.iter().map(|s| json(s)).collect();
    for i in 0..spellings.len() {
        for j in i + 1..spellings.len() {
            assert_ne!(
                digests[i], digests[j],
                "{} vs {}",
                spellings[i], spellings[j]
            );
        }
    }
    assert_eq!(json("[1.50]"), json("[ 1.50 ]"));
    assert_eq!(
        json("123456789012345678901234567890.123456789e-999"),
        json(" 123456789012345678901234567890.123456789e-999 ")
    );
}

#[test]
fn json_keeps_array_order_and_types() {
    assert_ne!(json("[1,2]"), json("[2,1]"));
    assert_ne!(json("[1,2]"), json("[12]"));
    assert_ne!(json(r#"["a","b"]"#), json(r#"["ab"]"#));
    assert_ne!(json(r#"["a",""]"#), json(r#"["","a"]"#));
    assert_ne!(json("[[],[]]"), json("[[[]]]"));
    assert_ne!(json("[]"), json("{}"));
    assert_ne!(json("[]"), json("[null]"));
    assert_ne!(json("1"), json(r#""1""#));
    assert_ne!(json("null"), json(r#""null""#));
    assert_ne!(json("true"), json("false"));
    assert_ne!(json(r#"{"a":[]}"#), json(r#"{"a":{}}"#));
    assert_ne!(json(r#"{"a":1}"#), json(r#"{"b":1}"#));
    assert_ne!(json(r#"{"a":1}"#), json(r#"{"a":1,"b":1}"#));
    assert_ne!(json(r#"{"ab":"c"}"#), json(r#"{"a":"bc"}"#));
    assert_ne!(json(r#"{"a":{"b":1}}"#), json(r#"{"a":{"b":2}}"#));
    assert_ne!(json(r#"[{"a":1},{"b":2}]"#), json(r#"[{"a":1,"b":2}]"#));
}

#[test]
fn json_duplicate_keys_are_rejected() {
    for (text, key, column) in [
        (r#"{"a":1,"a":2}"#, "a", 8),
        (r#"{"a":1,"\u0061":2}"#, "a", 8),
        (r#"{"\u0061":1,"a":2}"#, "a", 13),
        (r#"{"b":0,"a":1,"c":2,"a":3}"#, "a", 20),
        (r#"[{"x":{"k":1,"k":{}}}]"#, "k", 14),
        (r#"{"é":1,"\u00e9":2}"#, "é", 8),
        (r#"{"":1,"":2}"#, "", 7),
    ] {
        match json_err(text) {
            JsonError::DuplicateKey { key: k, position } => {
                assert_eq!(k, key, "{text}");
                assert_eq!(position.line, 1, "{text}");
                assert_eq!(position.column, column, "{text}");
            }
            other => panic!("{text}: {other:?}"),
        }
    }
    let msg = json_err(r#"{"amount":1, "amount":2}"#).to_string();
    assert_eq!(
        msg,
        r#"duplicate key "amount" in JSON object at line 1, column 14 (byte 13)"#
    );
    // The same key in different objects is fine.
    json(r#"{"a":{"a":1},"b":{"a":2},"c":[{"a":3},{"a":4}]}"#);
}

#[test]
fn json_duplicate_key_message_is_bounded() {
    let key = "k".repeat(10_000);
    let text = format!(r#"{{"{key}":1,"{key}":2}}"#);
    let err = json_err(&text);
    assert!(matches!(&err, JsonError::DuplicateKey { key: k, .. } if k.len() == 10_000));
    let msg = err.to_string();
    assert!(msg.len() < 200, "{msg}");
    assert!(msg.contains("(10000 bytes)"), "{msg}");
}

#[test]
fn json_depth_limit() {
    let nested = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
    json(&nested(MAX_DEPTH));
    match json_err(&nested(MAX_DEPTH + 1)) {
        JsonError::TooDeep { limit, position } => {
            assert_eq!(limit, MAX_DEPTH);
            assert_eq!(position.offset, MAX_DEPTH);
        }
        other => panic!("{other:?}"),
    }
    let objects = |n: usize| format!("{}1{}", r#"{"a":"#.repeat(n), "}".repeat(n));
    json(&objects(MAX_DEPTH));
    assert!(matches!(
        json_err(&objects(MAX_DEPTH + 1)),
        JsonError::TooDeep { .. }
    ));
    let mixed = |n: usize| format!("{}0{}", r#"[{"a":"#.repeat(n), "}]".repeat(n));
    json(&mixed(MAX_DEPTH / 2));
    assert!(matches!(
        json_err(&mixed(MAX_DEPTH / 2 + 1)),
        JsonError::TooDeep { .. }
    ));
    // Far deeper input fails cleanly instead of exhausting the stack.
    assert!(matches!(
        json_err(&"[".repeat(1_000_000)),
        JsonError::TooDeep { .. }
    ));
    let msg = json_err(&nested(200)).to_string();
    assert!(msg.contains("deeper than 128 levels"), "{msg}");
}

#[test]
fn json_syntax_errors_are_positioned() {
    for (text, offset) in [
        ("", 0),
        ("   ", 3),
        ("{", 1),
        ("[", 1),
        ("[1,]", 3),
        ("[1 2]", 3),
        ("[,1]", 1),
        (r#"{"a" 1}"#, 5),
        (r#"{"a":}"#, 5),
        (r#"{"a":1,}"#, 7),
        (r#"{"a":1 "b":2}"#, 7),
        ("{a:1}", 1),
        ("{'a':1}", 1),
        ("01", 1),
        ("-01", 2),
        ("1.", 2),
        ("1.e5", 2),
        (".5", 0),
        ("1e", 2),
        ("1e+", 3),
        ("-", 1),
        ("+1", 0),
        ("- 1", 1),
        ("tru", 0),
        ("nul", 0),
        ("True", 0),
        ("NaN", 0),
        ("Infinity", 0),
        ("-Infinity", 1),
        ("0x10", 1),
        ("1 2", 2),
        ("[1]x", 3),
        ("{}{}", 2),
        ("\"abc", 4),
        ("\"\\x\"", 1),
        ("\"\\u12\"", 5),
        ("\"\\u12g4\"", 5),
        ("\"\\ud800\"", 1),
        ("\"\\udc00\"", 1),
        ("\"\\ud800\\u0041\"", 1),
        ("\"\\ud800\\n\"", 1),
        ("\"a\nb\"", 2),
        ("\"a\tb\"", 2),
        ("\"\u{1}\"", 1),
        ("/* c */ 1", 0),
        ("[1] // c", 4),
        ("\u{feff}1", 0),
        ("[\"a\"\u{a0}]", 4),
    ] {
        match json_err(text) {
            JsonError::Syntax { position, .. } => {
                assert_eq!(position.offset, offset, "{text:?}")
            }
            other => panic!("{text:?}: {other:?}"),
        }
    }
}

#[test]
fn json_rejects_invalid_utf8() {
    for (bytes, offset) in [
        (&b"\"\xff\""[..], 1),
        (b"\"ab\xc3\"", 3),
        (b"\"\xed\xa0\x80\"", 1),
        (b"[\"ok\", \"\xc3\xa9\xc0\xaf\"]", 10),
        (b"\xef\xbb\xbf{}", 0),
    ] {
        match json_digest(V, bytes) {
            Err(JsonError::Syntax { position, .. }) => {
                assert_eq!(position.offset, offset, "{bytes:?}")
            }
            other => panic!("{bytes:?}: {other:?}"),
        }
    }
}

#[test]
fn json_error_positions_count_lines_and_characters() {
    let err = json_err("{\n  \"é\": tru\n}");
    let p = err.position();
    assert_eq!((p.line, p.column, p.offset), (2, 8, 10));
    assert_eq!(
        err.to_string(),
        "invalid JSON at line 2, column 8 (byte 10): expected a JSON value"
    );
}

#[test]
fn json_accepts_any_top_level_value() {
    for text in [
        "null",
        "true",
        "0",
        "-1.5E-3",
        "\"\"",
        "[]",
        "{}",
        " \t\n\r1\r\n",
    ] {
        json(text);
    }
}

// ---------------------------------------------------------------------------
// Bodies

#[tokio::test]
async fn empty_body_has_its_own_digest() {
    let empty = body(None, b"").await.unwrap();
    assert_eq!(body(Some("application/json"), b"").await.unwrap(), empty);
    assert_eq!(body(Some("text/plain"), b"").await.unwrap(), empty);
    assert_eq!(body(Some("multipart/form-data"), b"").await.unwrap(), empty);
    assert_eq!(
        body_digest(
            V,
            None,
            stream::iter([Ok::<_, Infallible>(Bytes::new()), Ok(Bytes::new())])
        )
        .await
        .unwrap(),
        empty
    );
    assert_ne!(
        body(Some("application/json"), b"\"\"").await.unwrap(),
        empty
    );
    assert_ne!(body(Some("application/json"), b"{}").await.unwrap(), empty);
    assert_ne!(body(None, b"\0").await.unwrap(), empty);
    assert_ne!(body(Some("text/plain"), b" ").await.unwrap(), empty);
    // Whitespace alone is not an empty JSON body but an invalid one.
    assert!(matches!(
        body(Some("application/json"), b"  ").await,
        Err(BodyError::Json(_))
    ));
}

#[tokio::test]
async fn json_media_types() {
    let doc = br#"{"a": 1}"#;
    let expected = json(r#"{"a":1}"#);
    for media in [
        "application/json",
        "application/json; charset=utf-8",
        "Application/JSON",
        " application/json ;charset=UTF-8",
        "application/problem+json",
        "application/vnd.api+json; ext=x",
        "application/merge-patch+JSON",
    ] {
        assert_eq!(body(Some(media), doc).await.unwrap(), expected, "{media}");
    }
    for media in [
        "text/json",
        "application/jsonx",
        "application/json-seq",
        "+json",
    ] {
        assert_ne!(body(Some(media), doc).await.unwrap(), expected, "{media}");
    }
    assert!(matches!(
        BodyKind::from_content_type(Some(&ct("application/ld+json"))),
        Ok(BodyKind::Json)
    ));
}

#[tokio::test]
async fn other_bodies_are_media_type_and_bytes() {
    let plain = body(Some("text/plain"), b"hello").await.unwrap();
    assert_eq!(body(Some("TEXT/plain"), b"hello").await.unwrap(), plain);
    assert_eq!(
        body(Some("text/plain; charset=iso-8859-1"), b"hello")
            .await
            .unwrap(),
        plain
    );
    assert_ne!(body(Some("text/html"), b"hello").await.unwrap(), plain);
    assert_ne!(body(None, b"hello").await.unwrap(), plain);
    assert_ne!(body(Some("text/plain"), b"hello ").await.unwrap(), plain);
    // A JSON-looking body without a JSON media type is compared as bytes.
    assert_ne!(
        body(Some("text/plain"), br#"{"a":1}"#).await.unwrap(),
        body(Some("text/plain"), br#"{ "a": 1 }"#).await.unwrap()
    );
    assert_ne!(
        body(Some("text/plain"), br#"{"a":1}"#).await.unwrap(),
        body(Some("application/json"), br#"{"a":1}"#).await.unwrap()
    );
    // Invalid UTF-8 and NUL bytes are fine for opaque bodies.
    body(Some("application/octet-stream"), b"\xff\x00\xfe")
        .await
        .unwrap();
    // A media type that is not text does not break classification.
    let odd = HeaderValue::from_bytes(b"text/\xe9").unwrap();
    assert_eq!(
        BodyKind::from_content_type(Some(&odd)).unwrap(),
        BodyKind::Other {
            media_type: b"text/\xe9".to_vec()
        }
    );
}

#[tokio::test]
async fn chunking_does_not_matter() {
    let doc = br#"{"items": [1, 2.5, "caf\u00e9", {"nested": true}], "x": null}"#;
    let mp = multipart_body(
        "b0und",
        &[
            Part::field("task", br#"{"a":1}"#),
            Part::file("body", "p.bin", "application/octet-stream", &[7u8; 3000]),
        ],
    );
    for (media, data) in [
        (Some("application/json"), &doc[..]),
        (Some("image/png"), &[1u8, 2, 3, 4, 5][..]),
        (None, b"plain"),
        (Some("multipart/form-data; boundary=b0und"), &mp),
    ] {
        let whole = body(media, data).await.unwrap();
        for chunk in [1, 2, 7, 64, 1000] {
            assert_eq!(
                body_chunked(media, data, chunk).await.unwrap(),
                whole,
                "{media:?} in chunks of {chunk}"
            );
        }
    }
}

#[derive(Debug)]
struct Broken;

impl std::fmt::Display for Broken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("connection reset")
    }
}

impl std::error::Error for Broken {}

#[tokio::test]
async fn stream_errors_are_read_errors() {
    for media in [
        None,
        Some("application/json"),
        Some("multipart/form-data; boundary=b"),
    ] {
        let ct = media.map(ct);
        let chunks: Vec<Result<Bytes, Broken>> = vec![
            Ok(Bytes::from_static(
                b"--b\r\nContent-Disposition: form-data; name=\"a\"\r\n\r\n",
            )),
            Err(Broken),
        ];
        let err = body_digest(V, ct.as_ref(), stream::iter(chunks))
            .await
            .unwrap_err();
        assert!(!err.is_invalid_body(), "{media:?}: {err:?}");
        match &err {
            BodyError::Read(source) => assert_eq!(source.to_string(), "connection reset"),
            other => panic!("{media:?}: {other:?}"),
        }
        // An error before any data is a read error too, not an empty body.
        let err = body_digest(V, ct.as_ref(), stream::iter([Err::<Bytes, Broken>(Broken)]))
            .await
            .unwrap_err();
        assert!(matches!(err, BodyError::Read(_)));
    }
}

fn assert_send<T: Send>(_: &T) {}

/// A tower layer needs `Send` futures; this fails to compile otherwise.
#[test]
fn body_futures_are_send() {
    let ct = ct("multipart/form-data; boundary=b");
    let chunks = stream::iter([Ok::<Bytes, Broken>(Bytes::new())]);
    assert_send(&body_digest(V, Some(&ct), chunks));
    let chunks = stream::iter([Ok::<Bytes, Broken>(Bytes::new())]);
    let uri = Uri::from_static("/");
    assert_send(&Fingerprint::of_request(
        V,
        &Method::POST,
        &uri,
        None,
        chunks,
    ));
    assert_send(&body_digest_bytes(V, None, Bytes::new()));
}

#[tokio::test]
async fn invalid_json_body_is_a_client_error() {
    let err = body(Some("application/json"), br#"{"a":1,"a":2}"#)
        .await
        .unwrap_err();
    assert!(err.is_invalid_body());
    assert!(matches!(&err, BodyError::Json(JsonError::DuplicateKey { key, .. }) if key == "a"));
    assert_eq!(
        err.to_string(),
        r#"duplicate key "a" in JSON object at line 1, column 8 (byte 7)"#
    );
}

#[tokio::test]
async fn of_request_combines_everything() {
    let uri: Uri = "/v1/queues/q/tasks?wait_ms=10".parse().unwrap();
    let json_ct = ct("application/json");
    let a = Fingerprint::of_request(
        V,
        &Method::POST,
        &uri,
        Some(&json_ct),
        stream::iter([Ok::<_, Infallible>(Bytes::from_static(br#"{"a":1,"b":2}"#))]),
    )
    .await
    .unwrap();
    let b = Fingerprint::of_request_bytes(
        V,
        &Method::POST,
        &"/v1/queues/%71/tasks?wait_ms=10".parse().unwrap(),
        Some(&json_ct),
        Bytes::from_static(b"{ \"b\": 2, \"a\": 1 }"),
    )
    .await
    .unwrap();
    assert!(a.matches(&b), "{:?}", a.differs(&b));
    let c = Fingerprint::of_request_bytes(
        V,
        &Method::PATCH,
        &"/v1/queues/q/tasks?wait_ms=20".parse().unwrap(),
        Some(&json_ct),
        Bytes::from_static(br#"{"a":1,"b":2.0}"#),
    )
    .await
    .unwrap();
    assert_eq!(a.differs(&c), ["method", "query", "body"]);
    let round: Fingerprint = a.to_string().parse().unwrap();
    assert_eq!(round, a);
}

// ---------------------------------------------------------------------------
// Multipart

struct Part<'a> {
    name: &'a str,
    file_name: Option<&'a str>,
    content_type: Option<&'a str>,
    content: &'a [u8],
}

impl<'a> Part<'a> {
    fn field(name: &'a str, content: &'a [u8]) -> Self {
        Self {
            name,
            file_name: None,
            content_type: None,
            content,
        }
    }

    fn file(name: &'a str, file: &'a str, ctype: &'a str, content: &'a [u8]) -> Self {
        Self {
            name,
            file_name: Some(file),
            content_type: Some(ctype),
            content,
        }
    }
}

fn multipart_body(boundary: &str, parts: &[Part<'_>]) -> Vec<u8> {
    multipart_with(boundary, parts, b"", b"")
}

fn multipart_with(boundary: &str, parts: &[Part<'_>], preamble: &[u8], epilogue: &[u8]) -> Vec<u8> {
    let mut out = preamble.to_vec();
    for p in parts {
        out.extend_from_slice(format!("--{boundary}\r\n").as_bytes());
        let mut disposition = format!("Content-Disposition: form-data; name=\"{}\"", p.name);
        if let Some(f) = p.file_name {
            disposition.push_str(&format!("; filename=\"{f}\""));
        }
        out.extend_from_slice(disposition.as_bytes());
        out.extend_from_slice(b"\r\n");
        if let Some(c) = p.content_type {
            out.extend_from_slice(format!("Content-Type: {c}\r\n").as_bytes());
        }
        out.extend_from_slice(b"\r\n");
        out.extend_from_slice(p.content);
        out.extend_from_slice(b"\r\n");
    }
    out.extend_from_slice(format!("--{boundary}--\r\n").as_bytes());
    out.extend_from_slice(epilogue);
    out
}

async fn mp(boundary: &str, parts: &[Part<'_>]) -> Digest {
    body(
        Some(&format!("multipart/form-data; boundary={boundary}")),
        &multipart_body(boundary, parts),
    )
    .await
    .unwrap()
}

fn upload() -> Vec<Part<'static>> {
    vec![
        Part::field("task", br#"{"task_id":"t1"}"#),
        Part::file("body", "invoice.pdf", "application/pdf", b"%PDF-1.7 ..."),
    ]
}

#[tokio::test]
async fn multipart_boundary_is_not_part_of_it() {
    let a = mp("AaB03x", &upload()).await;
    assert_eq!(
        mp("----WebKitFormBoundary7MA4YWxkTrZu0gW", &upload()).await,
        a
    );
    assert_eq!(mp("x", &upload()).await, a);
    let quoted = body(
        Some("multipart/form-data; boundary=\"q b\""),
        &multipart_body("q b", &upload()),
    )
    .await
    .unwrap();
    assert_eq!(quoted, a);
    let framed = body(
        Some("multipart/form-data; charset=utf-8; boundary=zz"),
        &multipart_with("zz", &upload(), b"preamble text\r\n", b"epilogue"),
    )
    .await
    .unwrap();
    assert_eq!(framed, a);
    assert_eq!(
        body(
            Some("Multipart/Form-Data; boundary=zz"),
            &multipart_body("zz", &upload())
        )
        .await
        .unwrap(),
        a
    );
}

#[tokio::test]
async fn multipart_part_order_rules() {
    let parts = |order: &[usize]| {
        let all = [
            Part::field("a", b"1"),
            Part::field("a", b"2"),
            Part::field("b", b"x"),
            Part::file("c", "f.txt", "text/plain", b"y"),
        ];
        let mut picked: Vec<Option<Part<'static>>> = all.into_iter().map(Some).collect();
        order
            .iter()
            .map(|&i| picked[i].take().unwrap())
            .collect::<Vec<_>>()
    };
    let base = mp("B", &parts(&[0, 1, 2, 3])).await;
    // Different names in any order, same-name parts in their order.
    assert_eq!(mp("B", &parts(&[2, 0, 3, 1])).await, base);
    assert_eq!(mp("B", &parts(&[3, 2, 0, 1])).await, base);
    assert_eq!(mp("B", &parts(&[0, 3, 1, 2])).await, base);
    assert_ne!(mp("B", &parts(&[1, 0, 2, 3])).await, base);
    assert_ne!(mp("B", &parts(&[2, 1, 3, 0])).await, base);
    // A part more or less.
    assert_ne!(mp("B", &parts(&[0, 2, 3])).await, base);
}

#[tokio::test]
async fn multipart_compares_part_metadata_and_content() {
    let base = mp("B", &[Part::file("f", "a.txt", "text/plain", b"data")]).await;
    for changed in [
        Part::file("g", "a.txt", "text/plain", b"data"),
        Part::file("f", "b.txt", "text/plain", b"data"),
        Part::file("f", "a.txt", "text/csv", b"data"),
        Part::file("f", "a.txt", "text/plain; charset=utf-8", b"data"),
        Part::file("f", "a.txt", "text/plain", b"Data"),
        Part::file("f", "a.txt", "text/plain", b""),
        Part {
            name: "f",
            file_name: None,
            content_type: Some("text/plain"),
            content: b"data",
        },
        Part {
            name: "f",
            file_name: Some("a.txt"),
            content_type: None,
            content: b"data",
        },
    ] {
        assert_ne!(mp("B", &[changed]).await, base);
    }
    assert_eq!(
        mp("B", &[Part::file("f", "a.txt", "Text/Plain", b"data")]).await,
        base,
        "media type essence is case-insensitive"
    );
    // Name and content are separate fields: moving bytes between them shows.
    assert_ne!(
        mp("B", &[Part::field("ab", b"c")]).await,
        mp("B", &[Part::field("a", b"bc")]).await
    );
    // Not the same as the bytes sent as an opaque body.
    assert_ne!(base, body(Some("text/plain"), b"data").await.unwrap());
}

#[tokio::test]
async fn multipart_errors() {
    let data = multipart_body("B", &upload());
    for media in [
        "multipart/form-data",
        "multipart/form-data; boundary=",
        "multipart/form-data; charset=utf-8",
    ] {
        let err = body(Some(media), &data).await.unwrap_err();
        assert!(err.is_invalid_body(), "{media}");
        assert!(
            err.to_string().contains("no boundary parameter"),
            "{media}: {err}"
        );
    }
    let truncated = &data[..data.len() - 10];
    let err = body(Some("multipart/form-data; boundary=B"), truncated)
        .await
        .unwrap_err();
    assert!(matches!(err, BodyError::Multipart { .. }), "{err:?}");
    let err = body(Some("multipart/form-data; boundary=other"), &data)
        .await
        .unwrap_err();
    assert!(matches!(err, BodyError::Multipart { .. }), "{err:?}");
    assert!(
        err.to_string()
            .starts_with("invalid multipart/form-data body: ")
    );
}

#[tokio::test]
async fn multipart_streams_large_parts() {
    // Larger than any one chunk: the part is hashed as it streams.
    let big = vec![0x5Au8; 3 * 1024 * 1024 + 17];
    let data = multipart_body(
        "B",
        &[Part::file("f", "big.bin", "application/octet-stream", &big)],
    );
    let ct = "multipart/form-data; boundary=B";
    let whole = body(Some(ct), &data).await.unwrap();
    assert_eq!(
        body_chunked(Some(ct), &data, 64 * 1024).await.unwrap(),
        whole
    );
    let mut changed = big.clone();
    changed[2 * 1024 * 1024] ^= 1;
    let data2 = multipart_body(
        "B",
        &[Part::file(
            "f",
            "big.bin",
            "application/octet-stream",
            &changed,
        )],
    );
    assert_ne!(body(Some(ct), &data2).await.unwrap(), whole);
}

// ---------------------------------------------------------------------------
// Property tests

mod props {
    use proptest::prelude::*;

    use super::*;

    /// SplitMix64: cheap deterministic choices driven by a proptest seed.
    struct Rng(u64);

    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^ (z >> 31)
        }

        fn below(&mut self, n: usize) -> usize {
            (self.next() % n as u64) as usize
        }

        fn shuffle<T>(&mut self, items: &mut [T]) {
            for i in (1..items.len()).rev() {
                items.swap(i, self.below(i + 1));
            }
        }
    }

    #[derive(Debug, Clone, PartialEq)]
    enum Json {
        Null,
        Bool(bool),
        Num(String),
        Str(String),
        Arr(Vec<Json>),
        /// Unique keys; order is the rendering order.
        Obj(Vec<(String, Json)>),
    }

    /// The model of "same document": objects as maps, everything else as is.
    fn normalize(j: &Json) -> Json {
        match j {
            Json::Arr(v) => Json::Arr(v.iter().map(normalize).collect()),
            Json::Obj(m) => {
                let mut m: Vec<(String, Json)> =
                    m.iter().map(|(k, v)| (k.clone(), normalize(v))).collect();
                m.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
                Json::Obj(m)
            }
            other => other.clone(),
        }
    }

    fn same(a: &Json, b: &Json) -> bool {
        normalize(a) == normalize(b)
    }

    fn number_text() -> impl Strategy<Value = String> {
        "-?(0|[1-9][0-9]{0,8})(\\.[0-9]{1,5})?([eE][+-]?[0-9]{1,3})?"
    }

    fn text() -> impl Strategy<Value = String> {
        let ch = prop_oneof![
            4 => proptest::char::range('a', 'e'),
            1 => prop::sample::select(vec![
                '"', '\\', '/', '\u{0}', '\u{8}', '\u{9}', '\u{a}', '\u{c}', '\u{d}', '\u{1f}',
                ' ', '\u{7f}', 'é', '\u{2028}', '\u{ffff}', '😀', '\u{10ffff}', 'A',
            ]),
            1 => any::<char>(),
        ];
        prop::collection::vec(ch, 0..8).prop_map(|v| v.into_iter().collect())
    }

    fn arb_json() -> impl Strategy<Value = Json> {
        let leaf = prop_oneof![
            Just(Json::Null),
            any::<bool>().prop_map(Json::Bool),
            number_text().prop_map(Json::Num),
            text().prop_map(Json::Str),
        ];
        leaf.prop_recursive(4, 48, 6, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..6).prop_map(Json::Arr),
                (
                    prop::collection::btree_map(text(), inner, 0..6),
                    any::<u64>()
                )
                    .prop_map(|(m, seed)| {
                        let mut members: Vec<(String, Json)> = m.into_iter().collect();
                        Rng(seed).shuffle(&mut members);
                        Json::Obj(members)
                    }),
            ]
        })
    }

    fn ws(rng: &mut Rng, out: &mut String) {
        const CHOICES: [&str; 6] = ["", "", "", " ", "\n\t", "\r\n  "];
        out.push_str(CHOICES[rng.below(CHOICES.len())]);
    }

    fn unicode_escape(unit: u32, rng: &mut Rng, out: &mut String) {
        if rng.below(2) == 0 {
            out.push_str(&format!("\\u{unit:04x}"));
        } else {
            out.push_str(&format!("\\u{unit:04X}"));
        }
    }

    fn render_str(s: &str, rng: &mut Rng, out: &mut String) {
        out.push('"');
        for c in s.chars() {
            let short = match c {
                '"' => Some("\\\""),
                '\\' => Some("\\\\"),
                '/' => Some("\\/"),
                '\u{8}' => Some("\\b"),
                '\u{c}' => Some("\\f"),
                '\n' => Some("\\n"),
                '\r' => Some("\\r"),
                '\t' => Some("\\t"),
                _ => None,
            };
            let must_escape = matches!(c, '"' | '\\') || (c as u32) < 0x20;
            match rng.below(3) {
                0 if short.is_some() => out.push_str(short.unwrap_or_default()),
                1 | 2 if must_escape || rng.below(2) == 0 => {
                    let mut units = [0u16; 2];
                    for unit in c.encode_utf16(&mut units) {
                        unicode_escape(u32::from(*unit), rng, out);
                    }
                }
                _ if must_escape => out.push_str(&format!("\\u{:04x}", c as u32)),
                _ => out.push(c),
            }
        }
        out.push('"');
    }

    /// Renders `j` as JSON text, with key order, whitespace and string
    /// escapes chosen by `rng`.
    fn render(j: &Json, rng: &mut Rng, out: &mut String) {
        match j {
            Json::Null => out.push_str("null"),
            Json::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            Json::Num(t) => out.push_str(t),
            Json::Str(s) => render_str(s, rng, out),
            Json::Arr(items) => {
                out.push('[');
                ws(rng, out);
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                        ws(rng, out);
                    }
                    render(item, rng, out);
                    ws(rng, out);
                }
                out.push(']');
            }
            Json::Obj(members) => {
                let mut order: Vec<&(String, Json)> = members.iter().collect();
                rng.shuffle(&mut order);
                out.push('{');
                ws(rng, out);
                for (i, (k, v)) in order.into_iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                        ws(rng, out);
                    }
                    render_str(k, rng, out);
                    ws(rng, out);
                    out.push(':');
                    ws(rng, out);
                    render(v, rng, out);
                    ws(rng, out);
                }
                out.push('}');
            }
        }
    }

    fn text_of(j: &Json, seed: u64) -> String {
        let mut out = String::new();
        let mut rng = Rng(seed);
        ws(&mut rng, &mut out);
        render(j, &mut rng, &mut out);
        ws(&mut rng, &mut out);
        out
    }

    fn digest_of(j: &Json, seed: u64) -> Digest {
        let text = text_of(j, seed);
        json_digest(V, text.as_bytes()).unwrap_or_else(|e| panic!("{text:?}: {e}"))
    }

    /// Every node, as a path of child indices.
    fn paths(j: &Json, prefix: &mut Vec<usize>, out: &mut Vec<Vec<usize>>) {
        out.push(prefix.clone());
        let children: Vec<&Json> = match j {
            Json::Arr(v) => v.iter().collect(),
            Json::Obj(m) => m.iter().map(|(_, v)| v).collect(),
            _ => Vec::new(),
        };
        for (i, child) in children.into_iter().enumerate() {
            prefix.push(i);
            paths(child, prefix, out);
            prefix.pop();
        }
    }

    fn all_paths(j: &Json) -> Vec<Vec<usize>> {
        let mut out = Vec::new();
        paths(j, &mut Vec::new(), &mut out);
        out
    }

    fn node_mut<'a>(j: &'a mut Json, path: &[usize]) -> &'a mut Json {
        match path.split_first() {
            None => j,
            Some((&i, rest)) => match j {
                Json::Arr(v) => node_mut(&mut v[i], rest),
                Json::Obj(m) => node_mut(&mut m[i].1, rest),
                _ => unreachable!("paths only lead through containers"),
            },
        }
    }

    /// A change that always makes a different document.
    fn tweak(j: &mut Json) {
        match j {
            Json::Null => *j = Json::Bool(false),
            Json::Bool(b) => *b = !*b,
            Json::Num(t) => {
                if t.contains(['.', 'e', 'E']) {
                    t.push('0');
                } else {
                    t.push_str(".0");
                }
            }
            Json::Str(s) => s.push('x'),
            Json::Arr(v) => v.push(Json::Null),
            Json::Obj(m) => {
                let mut key = String::from("k");
                while m.iter().any(|(k, _)| *k == key) {
                    key.push('_');
                }
                m.push((key, Json::Null));
            }
        }
    }

    /// Spellings of the same numeric value as `t`, each a different text.
    fn respellings(t: &str) -> Vec<String> {
        let mut out = Vec::new();
        let has_exp = t.contains(['e', 'E']);
        if has_exp {
            out.push(t.replace('e', "#").replace('E', "e").replace('#', "E"));
            if let Some(i) = t.find(['e', 'E'])
                && !t[i + 1..].starts_with(['+', '-'])
            {
                out.push(format!("{}+{}", &t[..=i], &t[i + 1..]));
            }
        } else {
            out.push(format!("{t}e0"));
            out.push(format!("{t}E0"));
            out.push(format!("{t}e+0"));
            out.push(format!("{t}e-0"));
            if t.contains('.') {
                out.push(format!("{t}0"));
            } else {
                out.push(format!("{t}.0"));
            }
        }
        match t.strip_prefix('-') {
            Some(rest) if rest.trim_start_matches(['0', '.']).is_empty() => {
                out.push(rest.to_owned())
            }
            None if t.trim_start_matches(['0', '.']).is_empty() => out.push(format!("-{t}")),
            _ => {}
        }
        out
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        #[test]
        fn rendering_never_changes_the_digest(j in arb_json(), seeds in prop::collection::vec(any::<u64>(), 4)) {
            let expected = digest_of(&j, seeds[0]);
            for &seed in &seeds[1..] {
                prop_assert_eq!(digest_of(&j, seed), expected, "{}", text_of(&j, seed));
            }
        }

        #[test]
        fn digest_equality_is_document_equality(
            j in arb_json(),
            replacement in arb_json(),
            pick in any::<prop::sample::Index>(),
            seeds in (any::<u64>(), any::<u64>()),
        ) {
            let mut changed = j.clone();
            let paths = all_paths(&j);
            let path: &[usize] = pick.get::<Vec<usize>>(&paths);
            *node_mut(&mut changed, path) = replacement;
            let equal = digest_of(&j, seeds.0) == digest_of(&changed, seeds.1);
            prop_assert_eq!(equal, same(&j, &changed));
        }

        #[test]
        fn changing_any_value_changes_the_digest(
            j in arb_json(),
            pick in any::<prop::sample::Index>(),
            seeds in (any::<u64>(), any::<u64>()),
        ) {
            let mut changed = j.clone();
            let paths = all_paths(&j);
            let path: &[usize] = pick.get::<Vec<usize>>(&paths);
            tweak(node_mut(&mut changed, path));
            prop_assert_ne!(digest_of(&j, seeds.0), digest_of(&changed, seeds.1));
        }

        #[test]
        fn respelling_a_number_changes_the_digest(
            j in arb_json(),
            number in number_text(),
            pick in any::<prop::sample::Index>(),
            seed in any::<u64>(),
        ) {
            let mut base = j.clone();
            let paths = all_paths(&j);
            let path: &[usize] = pick.get::<Vec<usize>>(&paths);
            *node_mut(&mut base, path) = Json::Num(number.clone());
            let original = digest_of(&base, seed);
            for spelling in respellings(&number) {
                prop_assert_ne!(&spelling, &number);
                let mut changed = base.clone();
                *node_mut(&mut changed, path) = Json::Num(spelling.clone());
                prop_assert_ne!(digest_of(&changed, seed), original, "{} vs {}", number, spelling);
            }
        }

        #[test]
        fn swapping_distinct_array_elements_changes_the_digest(
            context in arb_json(),
            items in prop::collection::vec(arb_json(), 2..6),
            (i, j) in (any::<prop::sample::Index>(), any::<prop::sample::Index>()),
            pick in any::<prop::sample::Index>(),
            seed in any::<u64>(),
        ) {
            let (i, j) = (i.index(items.len()), j.index(items.len()));
            prop_assume!(!same(&items[i], &items[j]));
            let paths = all_paths(&context);
            let path: &[usize] = pick.get::<Vec<usize>>(&paths);
            let mut original = context.clone();
            *node_mut(&mut original, path) = Json::Arr(items.clone());
            let mut swapped_items = items;
            swapped_items.swap(i, j);
            let mut swapped = context;
            *node_mut(&mut swapped, path) = Json::Arr(swapped_items);
            prop_assert_ne!(digest_of(&original, seed), digest_of(&swapped, seed));
        }

        #[test]
        fn duplicate_keys_are_found_however_escaped(
            members in prop::collection::btree_map(text(), arb_json(), 1..6),
            dup in any::<prop::sample::Index>(),
            value in arb_json(),
            seed in any::<u64>(),
        ) {
            let mut members: Vec<(String, Json)> = members.into_iter().collect();
            let key = members[dup.index(members.len())].0.clone();
            members.push((key.clone(), value));
            let text = text_of(&Json::Obj(members), seed);
            match json_digest(V, text.as_bytes()) {
                Err(JsonError::DuplicateKey { key: found, .. }) => prop_assert_eq!(found, key),
                other => prop_assert!(false, "{:?} for {}", other, text),
            }
        }

        #[test]
        fn truncated_documents_are_rejected(j in arb_json(), cut in any::<prop::sample::Index>(), seed in any::<u64>()) {
            let text = text_of(&j, seed);
            let trimmed = text.trim_end_matches([' ', '\t', '\r', '\n']);
            // Cutting a number short can leave a shorter valid number.
            prop_assume!(!matches!(j, Json::Num(_)));
            let cut = cut.index(trimmed.len());
            prop_assume!(trimmed.is_char_boundary(cut));
            prop_assert!(json_digest(V, &trimmed.as_bytes()[..cut]).is_err());
        }
    }

    // -----------------------------------------------------------------------
    // Query strings

    fn query_name() -> impl Strategy<Value = String> {
        prop_oneof![
            3 => prop::sample::select(vec!["a", "b", "wait_ms", "x y"]).prop_map(str::to_owned),
            1 => text(),
        ]
    }

    fn query_pairs() -> impl Strategy<Value = Vec<(String, String)>> {
        prop::collection::vec((query_name(), text()), 0..8)
    }

    fn encode_component(s: &str, rng: &mut Rng, out: &mut String) {
        for &b in s.as_bytes() {
            let escape = |rng: &mut Rng, out: &mut String| {
                if rng.below(2) == 0 {
                    out.push_str(&format!("%{b:02x}"));
                } else {
                    out.push_str(&format!("%{b:02X}"));
                }
            };
            match b {
                b' ' => match rng.below(3) {
                    0 => out.push('+'),
                    _ => escape(rng, out),
                },
                b if b.is_ascii_alphanumeric() || b"-._~!$'()*,;:@/?".contains(&b) => {
                    if rng.below(3) == 0 {
                        escape(rng, out);
                    } else {
                        out.push(char::from(b));
                    }
                }
                _ => escape(rng, out),
            }
        }
    }

    fn encode_query(pairs: &[(String, String)], rng: &mut Rng) -> String {
        let mut out = String::new();
        for (i, (name, value)) in pairs.iter().enumerate() {
            if i > 0 {
                out.push('&');
            }
            encode_component(name, rng, &mut out);
            // `a` and `a=` are the same parameter, but a bare empty name
            // is an empty segment, which is skipped.
            if name.is_empty() || !value.is_empty() || rng.below(2) == 0 {
                out.push('=');
                encode_component(value, rng, &mut out);
            }
        }
        out
    }

    /// Reorders parameters across names, keeping the order within each name.
    fn interleave(pairs: &[(String, String)], rng: &mut Rng) -> Vec<(String, String)> {
        let mut groups: Vec<std::collections::VecDeque<(String, String)>> = Vec::new();
        for pair in pairs {
            match groups.iter_mut().find(|g| g[0].0 == pair.0) {
                Some(group) => group.push_back(pair.clone()),
                None => groups.push([pair.clone()].into()),
            }
        }
        let mut out = Vec::with_capacity(pairs.len());
        while !groups.is_empty() {
            let g = rng.below(groups.len());
            out.extend(groups[g].pop_front());
            if groups[g].is_empty() {
                groups.remove(g);
            }
        }
        out
    }

    fn model(pairs: &[(String, String)]) -> Vec<(String, String)> {
        let mut sorted = pairs.to_vec();
        sorted.sort_by(|a, b| a.0.as_bytes().cmp(b.0.as_bytes()));
        sorted
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        #[test]
        fn query_name_order_and_encoding_do_not_matter(pairs in query_pairs(), seeds in (any::<u64>(), any::<u64>())) {
            let mut rng = Rng(seeds.0);
            let a = encode_query(&pairs, &mut rng);
            let reordered = interleave(&pairs, &mut Rng(seeds.1));
            let b = encode_query(&reordered, &mut Rng(seeds.1));
            prop_assert_eq!(query_digest(V, Some(&a)), query_digest(V, Some(&b)), "{} vs {}", a, b);
        }

        #[test]
        fn query_value_order_within_a_name_matters(
            others in query_pairs(),
            name in query_name(),
            (v1, v2) in (text(), text()),
            (at1, at2) in (any::<prop::sample::Index>(), any::<prop::sample::Index>()),
            seed in any::<u64>(),
        ) {
            prop_assume!(v1 != v2);
            let mut pairs = others;
            // With other values of the same name around, a swap can leave
            // the sequence unchanged (a=1&a=2&a=1); keep the two alone.
            pairs.retain(|p| p.0 != name);
            let p1 = at1.index(pairs.len() + 1);
            pairs.insert(p1, (name.clone(), v1.clone()));
            let p2 = p1 + 1 + at2.index(pairs.len() - p1);
            pairs.insert(p2, (name.clone(), v2.clone()));
            let mut swapped = pairs.clone();
            swapped[p1].1 = v2;
            swapped[p2].1 = v1;
            let a = encode_query(&pairs, &mut Rng(seed));
            let b = encode_query(&swapped, &mut Rng(seed));
            prop_assert_ne!(query_digest(V, Some(&a)), query_digest(V, Some(&b)), "{} vs {}", a, b);
        }

        #[test]
        fn query_digest_equality_is_model_equality(
            a in query_pairs(),
            b in query_pairs(),
            seeds in (any::<u64>(), any::<u64>()),
        ) {
            let qa = encode_query(&a, &mut Rng(seeds.0));
            let qb = encode_query(&b, &mut Rng(seeds.1));
            prop_assert_eq!(
                query_digest(V, Some(&qa)) == query_digest(V, Some(&qb)),
                model(&a) == model(&b)
            );
        }

        #[test]
        fn path_escapes_of_unreserved_characters_do_not_matter(
            segments in prop::collection::vec("[A-Za-z0-9._~!$&'()*+,;=:@%-]{0,8}", 1..5),
            seed in any::<u64>(),
        ) {
            let path: String = segments.iter().map(|s| format!("/{s}")).collect();
            let mut rng = Rng(seed);
            let mut escaped = String::new();
            let bytes = path.as_bytes();
            let mut i = 0;
            while i < bytes.len() {
                let b = bytes[i];
                let is_escape = b == b'%'
                    && bytes.len() > i + 2
                    && bytes[i + 1].is_ascii_hexdigit()
                    && bytes[i + 2].is_ascii_hexdigit();
                if is_escape {
                    // Flip the case of an existing escape's hex digits.
                    escaped.push('%');
                    escaped.push(char::from(bytes[i + 1]).to_ascii_lowercase());
                    escaped.push(char::from(bytes[i + 2]).to_ascii_uppercase());
                    i += 3;
                    continue;
                }
                if (b.is_ascii_alphanumeric() || b"-._~".contains(&b)) && rng.below(2) == 0 {
                    escaped.push_str(&format!("%{b:02x}"));
                } else {
                    escaped.push(char::from(b));
                }
                i += 1;
            }
            prop_assert_eq!(path_digest(V, &path), path_digest(V, &escaped), "{} vs {}", path, escaped);
        }
    }
}
