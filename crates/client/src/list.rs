//! Paged lists (API.md §1, "Lists").

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
