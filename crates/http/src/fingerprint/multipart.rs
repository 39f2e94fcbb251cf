//! Streaming digest of a `multipart/form-data` body.

use bytes::Bytes;
use futures_util::Stream;
use http::header::CONTENT_TYPE;
use sha2::{Digest as _, Sha256};

use super::encode::{finish, put_len, put_opt};
use super::{BodyError, BoxError};

/// What the fingerprint keeps of one part.
struct Part {
    name: Option<String>,
    file_name: Option<String>,
    content_type: Option<Vec<u8>>,
    content: [u8; 32],
}

/// Reads every part of the body, hashing each part's content as it streams
/// by, and writes the canonical encoding of the parts into `out`.
pub(crate) async fn canonicalize<S>(
    stream: S,
    boundary: String,
    out: &mut Sha256,
) -> Result<(), BodyError>
where
    S: Stream<Item = Result<Bytes, BoxError>> + Send,
{
    let mut multipart = multer::Multipart::new(stream, boundary);
    let mut parts = Vec::new();
    while let Some(mut field) = multipart.next_field().await.map_err(multer_error)? {
        let mut content = Sha256::new();
        while let Some(chunk) = field.chunk().await.map_err(multer_error)? {
            content.update(&chunk);
        }
        parts.push(Part {
            name: field.name().map(str::to_owned),
            file_name: field.file_name().map(str::to_owned),
            content_type: field
                .headers()
                .get(CONTENT_TYPE)
                .map(|v| normalize_part_content_type(v.as_bytes())),
            content: finish(content),
        });
    }
    // Grouped like query parameters: stable, so parts sharing a name keep
    // their order.
    parts.sort_by(|a, b| a.name.cmp(&b.name));
    put_len(out, parts.len());
    for part in &parts {
        put_opt(out, part.name.as_deref().map(str::as_bytes));
        put_opt(out, part.file_name.as_deref().map(str::as_bytes));
        put_opt(out, part.content_type.as_deref());
        out.update(part.content);
    }
    Ok(())
}

fn multer_error(error: multer::Error) -> BodyError {
    match error {
        multer::Error::StreamReadFailed(source) => BodyError::Read(source),
        other => BodyError::Multipart {
            reason: other.to_string(),
        },
    }
}

/// The essence (`type/subtype`) lowercased and trimmed, parameters kept as
/// sent: a part's content type is passed on (for example as the
/// `Content-Type` of a task's request), so its parameters matter.
fn normalize_part_content_type(raw: &[u8]) -> Vec<u8> {
    let (essence, params) = match raw.iter().position(|&b| b == b';') {
        Some(i) => raw.split_at(i),
        None => (raw, &[][..]),
    };
    let mut out = crate::trim_ows(essence).to_ascii_lowercase();
    out.extend_from_slice(crate::trim_ows(params));
    out
}

#[cfg(test)]
mod tests {
    use super::normalize_part_content_type as norm;

    #[test]
    fn part_content_type_normalisation() {
        assert_eq!(norm(b" Image/PNG "), b"image/png");
        assert_eq!(
            norm(b"Text/Plain ; charset=UTF-8"),
            b"text/plain; charset=UTF-8"
        );
        assert_ne!(norm(b"text/plain; charset=utf-8"), norm(b"text/plain"));
    }
}
