//! Tenancy on SQLite: the writer runs one bootstrap at a time.

use super::SqliteStore;
use crate::Result;
use crate::records::{Bootstrap, NewApiKey};
use crate::tables::tenancy;

impl SqliteStore {
    pub(super) async fn bootstrap_once(&self, key: NewApiKey) -> Result<Bootstrap> {
        self.write(None, async move |c, now, _| {
            tenancy::bootstrap(c, &key, now).await
        })
        .await
    }
}
