//! Canonical forms of the request path and query string.

fn hex_value(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        b'A'..=b'F' => Some(b - b'A' + 10),
        _ => None,
    }
}

/// The two hex digits after a `%` at `input[i]`, if they are there.
fn escape_at(input: &[u8], i: usize) -> Option<u8> {
    let hi = hex_value(*input.get(i + 1)?)?;
    let lo = hex_value(*input.get(i + 2)?)?;
    Some(hi << 4 | lo)
}

fn is_unreserved(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~')
}

/// RFC 3986 §6.2.2 normalisation of a path: escapes of unreserved characters
/// are decoded, other escapes get uppercase hex digits, everything else is
/// kept. `%2F` stays an escape, so `/a%2Fb` and `/a/b` remain different, as
/// they are to a router. A `%` not followed by two hex digits is kept as is.
pub(crate) fn canonical_path(path: &str) -> Vec<u8> {
    let input = path.as_bytes();
    let mut out = Vec::with_capacity(input.len());
    let mut i = 0;
    while i < input.len() {
        if input[i] == b'%'
            && let Some(byte) = escape_at(input, i)
        {
            if is_unreserved(byte) {
                out.push(byte);
            } else {
                out.push(b'%');
                out.push(input[i + 1].to_ascii_uppercase());
                out.push(input[i + 2].to_ascii_uppercase());
            }
            i += 3;
        } else {
            out.push(input[i]);
            i += 1;
        }
    }
    out
}

/// Decodes one `application/x-www-form-urlencoded` name or value: `+` is a
/// space and `%XX` is the byte XX. A `%` not followed by two hex digits is a
/// literal `%` (as in the WHATWG URL standard). The result is bytes, not
/// text: invalid UTF-8 is compared as sent rather than replaced.
fn form_decode(input: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(input.len());
    let mut i = 0;
    while i < input.len() {
        match input[i] {
            b'+' => {
                out.push(b' ');
                i += 1;
            }
            b'%' => match escape_at(input, i) {
                Some(byte) => {
                    out.push(byte);
                    i += 3;
                }
                None => {
                    out.push(b'%');
                    i += 1;
                }
            },
            b => {
                out.push(b);
                i += 1;
            }
        }
    }
    out
}

/// The query's parameters, decoded, sorted by name; parameters with the same
/// name keep their relative order (the sort is stable).
///
/// Parameters are separated by `&`; empty ones (`a=1&&b=2`) are skipped. A
/// parameter without `=` has an empty value, so `?a` and `?a=` are the same,
/// as they are to form decoders.
pub(crate) fn canonical_query(query: &str) -> Vec<(Vec<u8>, Vec<u8>)> {
    let mut pairs: Vec<(Vec<u8>, Vec<u8>)> = query
        .as_bytes()
        .split(|&b| b == b'&')
        .filter(|p| !p.is_empty())
        .map(|p| match p.iter().position(|&b| b == b'=') {
            Some(eq) => (form_decode(&p[..eq]), form_decode(&p[eq + 1..])),
            None => (form_decode(p), Vec::new()),
        })
        .collect();
    pairs.sort_by(|a, b| a.0.cmp(&b.0));
    pairs
}

#[cfg(test)]
mod tests {
    use super::*;

    fn path(p: &str) -> String {
        String::from_utf8(canonical_path(p)).unwrap()
    }

    #[test]
    fn path_decodes_only_unreserved() {
        assert_eq!(path("/v1/queues/pay%2Dments"), "/v1/queues/pay-ments");
        assert_eq!(path("/%41%7a%30%2e%5F%7E"), "/Az0._~");
        assert_eq!(path("/a%2fb"), "/a%2Fb");
        assert_eq!(path("/a%2Fb"), "/a%2Fb");
        assert_eq!(path("/caf%c3%a9"), "/caf%C3%A9");
        assert_eq!(path("/%20x"), "/%20x");
    }

    #[test]
    fn path_keeps_everything_else() {
        assert_eq!(path("/A/b/../c;v=1"), "/A/b/../c;v=1");
        assert_eq!(path("/100%"), "/100%");
        assert_eq!(path("/%zz%4"), "/%zz%4");
        assert_eq!(path("/~"), "/~");
        assert_eq!(path(""), "");
    }

    fn query(q: &str) -> Vec<(String, String)> {
        canonical_query(q)
            .into_iter()
            .map(|(n, v)| (String::from_utf8(n).unwrap(), String::from_utf8(v).unwrap()))
            .collect()
    }

    fn owned(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(n, v)| (n.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn query_sorts_names_and_keeps_value_order() {
        assert_eq!(
            query("b=2&a=1&a=0"),
            owned(&[("a", "1"), ("a", "0"), ("b", "2")])
        );
        assert_eq!(query("a=1&b=2"), query("b=2&a=1"));
        assert_ne!(query("a=1&a=2"), query("a=2&a=1"));
    }

    #[test]
    fn query_form_decoding() {
        assert_eq!(query("%61=1"), query("a=1"));
        assert_eq!(query("a=x+y"), owned(&[("a", "x y")]));
        assert_eq!(query("a=x%20y"), query("a=x+y"));
        assert_eq!(query("a=x%2By"), owned(&[("a", "x+y")]));
        assert_eq!(query("a=%3D%26"), owned(&[("a", "=&")]));
        assert_eq!(query("a=b=c"), owned(&[("a", "b=c")]));
        assert_eq!(query("a=100%"), owned(&[("a", "100%")]));
        assert_eq!(canonical_query("a=%e9"), vec![(b"a".to_vec(), vec![0xE9])]);
    }

    #[test]
    fn query_empty_parts() {
        assert_eq!(query(""), owned(&[]));
        assert_eq!(query("&&"), owned(&[]));
        assert_eq!(query("a=1&&b=2&"), query("a=1&b=2"));
        assert_eq!(query("a"), query("a="));
        assert_eq!(query("=1"), owned(&[("", "1")]));
    }
}
