//! Field-level validation errors, reported to API callers as
//! `extensions.errors: [{"field", "message"}]`.

use serde::{Deserialize, Serialize};

/// One invalid field, named by its dotted path in the request (`target.url`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FieldError {
    pub field: String,
    pub message: String,
}

impl FieldError {
    pub fn new(field: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            field: field.into(),
            message: message.into(),
        }
    }
}

/// Collects every invalid field of one request, so a caller fixes them all
/// in one round trip rather than discovering them one at a time.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FieldErrors(pub Vec<FieldError>);

impl FieldErrors {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn push(&mut self, field: impl Into<String>, message: impl Into<String>) {
        self.0.push(FieldError::new(field, message));
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The same errors, each field named under `parent` (`tasks[3]` makes
    /// `target.url` into `tasks[3].target.url`).
    pub fn under(mut self, parent: &str) -> Self {
        for e in &mut self.0 {
            e.field = if e.field.is_empty() {
                parent.to_string()
            } else {
                format!("{parent}.{}", e.field)
            };
        }
        self
    }

    /// `Ok(())` when nothing was pushed.
    pub fn into_result(self) -> Result<(), FieldErrors> {
        if self.0.is_empty() { Ok(()) } else { Err(self) }
    }

    /// Checks that `value` lies in `min..=max`. The field's name is made
    /// only for an error (`format_args!` for a dotted path), since every
    /// create checks its retry policy this way.
    pub fn range<T: PartialOrd + std::fmt::Display + Copy>(
        &mut self,
        field: impl std::fmt::Display,
        value: T,
        min: T,
        max: T,
    ) {
        if value < min || value > max {
            self.push(
                field.to_string(),
                format!("must be between {min} and {max}, got {value}"),
            );
        }
    }
}

impl std::fmt::Display for FieldErrors {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let parts: Vec<String> = self
            .0
            .iter()
            .map(|e| format!("{}: {}", e.field, e.message))
            .collect();
        f.write_str(&parts.join("; "))
    }
}

impl std::error::Error for FieldErrors {}

impl From<FieldError> for FieldErrors {
    fn from(e: FieldError) -> Self {
        Self(vec![e])
    }
}
