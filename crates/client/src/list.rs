//! Paged lists (SPEC 1, "Lists").

use serde::Deserialize;

/// One page of a list: `{"items": [...], "next_page_token": …}`.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct List<T> {
    /// This page's items.
    pub items: Vec<T>,
    /// Pass to the next call's [`ListOptions::page_token`]; `None` on the
    /// last page.
    #[serde(default)]
    pub next_page_token: Option<String>,
}

/// Which page of a list to read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ListOptions {
    /// Items per page (the server's default is 50, its maximum 1000).
    pub limit: Option<u32>,
    /// The `next_page_token` of the previous page.
    pub page_token: Option<String>,
}

impl ListOptions {
    /// At most `limit` items per page.
    pub fn limit(limit: u32) -> Self {
        ListOptions {
            limit: Some(limit),
            page_token: None,
        }
    }

    pub(crate) fn apply(&self, call: crate::client::Call) -> crate::client::Call {
        call.query("limit", self.limit)
            .query("page_token", self.page_token.clone())
    }
}
