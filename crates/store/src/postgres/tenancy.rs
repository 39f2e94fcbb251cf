//! Tenancy on PostgreSQL: nodes starting together on an empty database
//! serialize their bootstraps on an advisory lock.

use super::{ADVISORY_LOCK, PostgresStore};
use crate::Result;
use crate::driver::{Conn, args};
use crate::records::{Bootstrap, NewApiKey};
use crate::tables::tenancy;

impl PostgresStore {
    pub(super) async fn bootstrap_once(&self, key: NewApiKey) -> Result<Bootstrap> {
        self.write(None, async |c, now, _| {
            c.execute("SELECT pg_advisory_xact_lock($1)", &args![ADVISORY_LOCK])
                .await?;
            tenancy::bootstrap(c, &key, now).await
        })
        .await
    }
}
