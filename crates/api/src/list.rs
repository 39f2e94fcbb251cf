//! Paged lists.

use serde::{Deserialize, Serialize};

/// One page of a list: `{"items": [...], "next_page_token": …}`.
///
/// No derived schema: the OpenAPI document names one list schema per item
/// type (`QueueList`, …).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct List<T> {
    /// This page's items.
    pub items: Vec<T>,
    /// Pass as `page_token` to read the next page; null on the last page.
    pub next_page_token: Option<String>,
}
