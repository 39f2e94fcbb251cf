//! A validating JSON parser that writes the canonical encoding of a document
//! straight into a hash, without building a value tree.
//!
//! It exists because general-purpose JSON libraries normalise numbers (and
//! RFC 8785 re-serialises them), while the fingerprint must keep each number's
//! text exactly as sent. The grammar is RFC 8259's, strictly: no comments, no
//! trailing commas, no leading zeros, no byte-order mark, UTF-8 only, and no
//! unpaired surrogate escapes (they have no UTF-8 form to compare keys by).

use std::fmt;

use sha2::{Digest as _, Sha256};

use super::encode::{finish, put_bytes, put_len};

/// How deeply arrays and objects may nest. Deeper documents are rejected, which
/// also bounds the parser's recursion.
pub const MAX_DEPTH: usize = 128;

/// A location in a JSON document.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Position {
    /// Zero-based byte offset.
    pub offset: usize,
    /// One-based line number (lines end at `\n`).
    pub line: usize,
    /// One-based column, counted in characters.
    pub column: usize,
}

impl Position {
    fn locate(input: &[u8], offset: usize) -> Self {
        let before = &input[..offset.min(input.len())];
        let line_start = before
            .iter()
            .rposition(|&b| b == b'\n')
            .map_or(0, |i| i + 1);
        let line = 1 + before.iter().filter(|&&b| b == b'\n').count();
        // Counting bytes that do not continue a UTF-8 sequence counts characters.
        let column = 1 + before[line_start..]
            .iter()
            .filter(|&&b| b & 0xC0 != 0x80)
            .count();
        Self {
            offset,
            line,
            column,
        }
    }
}

impl fmt::Display for Position {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "line {}, column {} (byte {})",
            self.line, self.column, self.offset
        )
    }
}

/// Why a JSON body was rejected. The caller answers 400; the message is
/// written for the client.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum JsonError {
    /// The body is not JSON.
    #[error("invalid JSON at {position}: {reason}")]
    Syntax {
        /// What was expected or found.
        reason: &'static str,
        /// Where.
        position: Position,
    },
    /// An object has the same key twice (compared after unescaping).
    #[error("duplicate key {} in JSON object at {position}", ShortKey(.key))]
    DuplicateKey {
        /// The key, unescaped.
        key: String,
        /// Where its second occurrence starts.
        position: Position,
    },
    /// Arrays and objects nest deeper than [`MAX_DEPTH`].
    #[error("JSON nests arrays and objects deeper than {limit} levels at {position}")]
    TooDeep {
        /// The limit, [`MAX_DEPTH`].
        limit: usize,
        /// Where the first level too deep opens.
        position: Position,
    },
}

impl JsonError {
    /// Where in the body the problem is.
    pub fn position(&self) -> Position {
        match self {
            Self::Syntax { position, .. }
            | Self::DuplicateKey { position, .. }
            | Self::TooDeep { position, .. } => *position,
        }
    }
}

/// Quotes a key for a message, cut short so that a huge key cannot make a
/// huge error response.
struct ShortKey<'a>(&'a str);

impl fmt::Display for ShortKey<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        const SHOWN: usize = 64;
        match self.0.char_indices().nth(SHOWN) {
            None => write!(f, "{:?}", self.0),
            Some((cut, _)) => write!(f, "{:?}… ({} bytes)", &self.0[..cut], self.0.len()),
        }
    }
}

/// Validates `input` as one JSON text and writes its canonical encoding (see
/// the `fingerprint` module documentation) into `out`.
pub(crate) fn canonicalize(input: &[u8], out: &mut Sha256) -> Result<(), JsonError> {
    let mut parser = Parser {
        input,
        pos: 0,
        scratch: Vec::new(),
    };
    parser.skip_ws();
    parser.value(out, 0)?;
    parser.skip_ws();
    if parser.pos < input.len() {
        return Err(parser.syntax("unexpected data after the JSON value"));
    }
    Ok(())
}

struct Parser<'a> {
    input: &'a [u8],
    pos: usize,
    /// Reused buffer for unescaping string values.
    scratch: Vec<u8>,
}

impl Parser<'_> {
    fn peek(&self) -> Option<u8> {
        self.input.get(self.pos).copied()
    }

    fn syntax(&self, reason: &'static str) -> JsonError {
        self.syntax_at(reason, self.pos)
    }

    fn syntax_at(&self, reason: &'static str, offset: usize) -> JsonError {
        JsonError::Syntax {
            reason,
            position: Position::locate(self.input, offset),
        }
    }

    fn skip_ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.peek() {
            self.pos += 1;
        }
    }

    fn value(&mut self, out: &mut Sha256, depth: usize) -> Result<(), JsonError> {
        match self.peek() {
            Some(b'{') => self.object(out, depth + 1),
            Some(b'[') => self.array(out, depth + 1),
            Some(b'"') => {
                let mut scratch = std::mem::take(&mut self.scratch);
                scratch.clear();
                let result = self.string(&mut scratch);
                if result.is_ok() {
                    out.update(b"s");
                    put_bytes(out, &scratch);
                }
                self.scratch = scratch;
                result
            }
            Some(b't') => self.literal(b"true", b"t", out),
            Some(b'f') => self.literal(b"false", b"f", out),
            Some(b'n') => self.literal(b"null", b"n", out),
            Some(b'-' | b'0'..=b'9') => self.number(out),
            Some(_) => Err(self.syntax("expected a JSON value")),
            None => Err(self.syntax("unexpected end of input, expected a JSON value")),
        }
    }

    fn literal(&mut self, word: &[u8], tag: &[u8], out: &mut Sha256) -> Result<(), JsonError> {
        if self.input[self.pos..].starts_with(word) {
            self.pos += word.len();
            out.update(tag);
            Ok(())
        } else {
            Err(self.syntax("expected a JSON value"))
        }
    }

    fn enter(&self, depth: usize) -> Result<(), JsonError> {
        if depth > MAX_DEPTH {
            return Err(JsonError::TooDeep {
                limit: MAX_DEPTH,
                position: Position::locate(self.input, self.pos),
            });
        }
        Ok(())
    }

    fn array(&mut self, out: &mut Sha256, depth: usize) -> Result<(), JsonError> {
        self.enter(depth)?;
        self.pos += 1;
        // Elements are self-delimiting, so a closing tag is enough.
        out.update(b"[");
        self.skip_ws();
        if self.peek() == Some(b']') {
            self.pos += 1;
            out.update(b"]");
            return Ok(());
        }
        loop {
            self.skip_ws();
            self.value(out, depth)?;
            self.skip_ws();
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(b']') => {
                    self.pos += 1;
                    out.update(b"]");
                    return Ok(());
                }
                Some(_) => return Err(self.syntax("expected ',' or ']' in array")),
                None => return Err(self.syntax("unexpected end of input inside an array")),
            }
        }
    }

    fn object(&mut self, out: &mut Sha256, depth: usize) -> Result<(), JsonError> {
        self.enter(depth)?;
        self.pos += 1;
        // Each member value is hashed on its own, so sorting moves 32-byte
        // digests instead of whole re-encoded subtrees.
        let mut members: Vec<Member> = Vec::new();
        self.skip_ws();
        if self.peek() == Some(b'}') {
            self.pos += 1;
        } else {
            loop {
                self.skip_ws();
                let key_offset = self.pos;
                match self.peek() {
                    Some(b'"') => {}
                    Some(_) => return Err(self.syntax("expected a string as object key")),
                    None => return Err(self.syntax("unexpected end of input inside an object")),
                }
                let mut key = Vec::new();
                self.string(&mut key)?;
                self.skip_ws();
                match self.peek() {
                    Some(b':') => self.pos += 1,
                    Some(_) => return Err(self.syntax("expected ':' after object key")),
                    None => return Err(self.syntax("unexpected end of input inside an object")),
                }
                self.skip_ws();
                let mut value = Sha256::new();
                self.value(&mut value, depth)?;
                members.push(Member {
                    key,
                    key_offset,
                    value: finish(value),
                });
                self.skip_ws();
                match self.peek() {
                    Some(b',') => self.pos += 1,
                    Some(b'}') => {
                        self.pos += 1;
                        break;
                    }
                    Some(_) => return Err(self.syntax("expected ',' or '}' in object")),
                    None => return Err(self.syntax("unexpected end of input inside an object")),
                }
            }
        }
        // Stable: equal keys stay in document order, so the second of a
        // duplicate pair is the one reported.
        members.sort_by(|a, b| a.key.cmp(&b.key));
        if let Some(pair) = members.windows(2).find(|w| w[0].key == w[1].key) {
            return Err(JsonError::DuplicateKey {
                key: String::from_utf8_lossy(&pair[1].key).into_owned(),
                position: Position::locate(self.input, pair[1].key_offset),
            });
        }
        out.update(b"{");
        put_len(out, members.len());
        for m in &members {
            put_bytes(out, &m.key);
            out.update(m.value);
        }
        Ok(())
    }

    fn number(&mut self, out: &mut Sha256) -> Result<(), JsonError> {
        let start = self.pos;
        if self.peek() == Some(b'-') {
            self.pos += 1;
        }
        match self.peek() {
            Some(b'0') => {
                self.pos += 1;
                if let Some(b'0'..=b'9') = self.peek() {
                    return Err(self.syntax("leading zeros are not allowed in numbers"));
                }
            }
            Some(b'1'..=b'9') => self.digits(),
            _ => return Err(self.syntax("expected a digit")),
        }
        if self.peek() == Some(b'.') {
            self.pos += 1;
            if !matches!(self.peek(), Some(b'0'..=b'9')) {
                return Err(self.syntax("expected a digit after the decimal point"));
            }
            self.digits();
        }
        if let Some(b'e' | b'E') = self.peek() {
            self.pos += 1;
            if let Some(b'+' | b'-') = self.peek() {
                self.pos += 1;
            }
            if !matches!(self.peek(), Some(b'0'..=b'9')) {
                return Err(self.syntax("expected a digit in the exponent"));
            }
            self.digits();
        }
        out.update(b"#");
        put_bytes(out, &self.input[start..self.pos]);
        Ok(())
    }

    fn digits(&mut self) {
        while let Some(b'0'..=b'9') = self.peek() {
            self.pos += 1;
        }
    }

    /// Parses a string at `"` and appends its unescaped UTF-8 bytes to `buf`.
    fn string(&mut self, buf: &mut Vec<u8>) -> Result<(), JsonError> {
        self.pos += 1;
        loop {
            let run_start = self.pos;
            while let Some(b) = self.peek() {
                if b == b'"' || b == b'\\' || b < 0x20 {
                    break;
                }
                self.pos += 1;
            }
            let run = &self.input[run_start..self.pos];
            if !run.is_ascii()
                && let Err(e) = std::str::from_utf8(run)
            {
                return Err(self.syntax_at("invalid UTF-8", run_start + e.valid_up_to()));
            }
            buf.extend_from_slice(run);
            match self.peek() {
                Some(b'"') => {
                    self.pos += 1;
                    return Ok(());
                }
                Some(b'\\') => self.escape(buf)?,
                Some(_) => {
                    return Err(self.syntax("control characters must be escaped in strings"));
                }
                None => return Err(self.syntax("unexpected end of input inside a string")),
            }
        }
    }

    fn escape(&mut self, buf: &mut Vec<u8>) -> Result<(), JsonError> {
        let start = self.pos;
        let simple = match self.input.get(self.pos + 1) {
            Some(b'"') => b'"',
            Some(b'\\') => b'\\',
            Some(b'/') => b'/',
            Some(b'b') => 0x08,
            Some(b'f') => 0x0C,
            Some(b'n') => b'\n',
            Some(b'r') => b'\r',
            Some(b't') => b'\t',
            Some(b'u') => {
                self.pos += 2;
                let unit = self.hex4()?;
                let code = match unit {
                    0xD800..=0xDBFF => {
                        if !self.input[self.pos..].starts_with(b"\\u") {
                            return Err(self.syntax_at("unpaired surrogate escape", start));
                        }
                        self.pos += 2;
                        let low = self.hex4()?;
                        if !(0xDC00..=0xDFFF).contains(&low) {
                            return Err(self.syntax_at("unpaired surrogate escape", start));
                        }
                        0x10000 + ((u32::from(unit) - 0xD800) << 10) + (u32::from(low) - 0xDC00)
                    }
                    0xDC00..=0xDFFF => {
                        return Err(self.syntax_at("unpaired surrogate escape", start));
                    }
                    _ => u32::from(unit),
                };
                let Some(c) = char::from_u32(code) else {
                    return Err(self.syntax_at("invalid unicode escape", start));
                };
                let mut utf8 = [0u8; 4];
                buf.extend_from_slice(c.encode_utf8(&mut utf8).as_bytes());
                return Ok(());
            }
            Some(_) => return Err(self.syntax("invalid escape sequence")),
            None => return Err(self.syntax("unexpected end of input inside a string")),
        };
        buf.push(simple);
        self.pos += 2;
        Ok(())
    }

    fn hex4(&mut self) -> Result<u16, JsonError> {
        let mut value = 0u16;
        for _ in 0..4 {
            let digit = match self.peek() {
                Some(b @ b'0'..=b'9') => b - b'0',
                Some(b @ b'a'..=b'f') => b - b'a' + 10,
                Some(b @ b'A'..=b'F') => b - b'A' + 10,
                _ => return Err(self.syntax("expected four hex digits after \\u")),
            };
            value = value << 4 | u16::from(digit);
            self.pos += 1;
        }
        Ok(value)
    }
}

struct Member {
    key: Vec<u8>,
    key_offset: usize,
    value: [u8; 32],
}
