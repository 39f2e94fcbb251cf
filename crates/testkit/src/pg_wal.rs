//! What a span of work wrote to PostgreSQL's write-ahead log, counted from
//! the log itself (`pg_walinspect`) and kept to one database.
//!
//! Every row a statement writes (inserted, updated, deleted or locked) and
//! every index entry it adds is a WAL record naming the block it changed,
//! so the records between two positions of the log are an exact account of
//! a workload's writes, however the work was sent. Records are kept to the
//! database's own blocks, and to the commits of the transactions that wrote
//! them, so that other databases on the server add nothing. Full-page
//! images are left out of the byte count: whether a change carries one
//! depends on when the last checkpoint happened, not on the change.

use tokio_postgres::Client;

/// A position in the log.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WalMark(String);

/// What the log holds for one database between two marks.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WalFigures {
    /// Bytes of the records, full-page images and B-tree page splits left
    /// out: an index splits a page every few hundred entries, so whether a
    /// short workload meets a split (several kilobytes) depends on what came
    /// before it, not on the work.
    pub bytes: u64,
    /// Heap tuples written: inserts, updates, deletes and row locks.
    pub rows: u64,
    /// B-tree entries added.
    pub index_entries: u64,
    /// Transactions committed.
    pub commits: u64,
}

/// Makes `pg_walinspect` available in the database `client` is connected to
/// (it ships with PostgreSQL 15 and later; creating it takes a superuser).
pub async fn enable(client: &Client) {
    client
        .batch_execute("CREATE EXTENSION IF NOT EXISTS pg_walinspect")
        .await
        .unwrap_or_else(|e| panic!("pg_walinspect (PostgreSQL 15+, superuser): {e}"));
}

/// Where the log is now.
pub async fn mark(client: &Client) -> WalMark {
    let row = client
        .query_one("SELECT pg_current_wal_insert_lsn()::text", &[])
        .await
        .expect("the WAL position");
    WalMark(row.get(0))
}

/// What the log holds for `client`'s database from `start` to the last
/// record flushed. Call it once the work is committed: a durable commit has
/// flushed its records and every one before them.
pub async fn since(client: &Client, start: &WalMark) -> WalFigures {
    // Commits carry no block reference: a commit counts when its
    // transaction wrote a block of this database.
    let sql = "
        WITH records AS (
            SELECT xid, resource_manager, record_type, record_length, fpi_length, block_ref
            FROM pg_get_wal_records_info($1::text::pg_lsn, pg_current_wal_flush_lsn())
        ), mine AS (
            SELECT * FROM records
            WHERE block_ref ~ ('rel [0-9]+/' || (SELECT oid FROM pg_database
                WHERE datname = current_database())::text || '/')
        ), commits AS (
            SELECT * FROM records
            WHERE resource_manager = 'Transaction' AND record_type LIKE 'COMMIT%'
              AND xid IN (SELECT xid FROM mine WHERE xid::text <> '0')
        ), counted AS (
            SELECT * FROM mine UNION ALL SELECT * FROM commits
        )
        SELECT
            COALESCE(sum(record_length - fpi_length) FILTER (WHERE NOT (
                resource_manager = 'Btree' AND record_type IN
                    ('SPLIT_L', 'SPLIT_R', 'INSERT_UPPER', 'NEWROOT')
            )), 0)::bigint,
            count(*) FILTER (WHERE resource_manager = 'Heap'
                AND record_type IN ('INSERT', 'INSERT+INIT', 'UPDATE', 'UPDATE+INIT',
                    'HOT_UPDATE', 'HOT_UPDATE+INIT', 'DELETE', 'LOCK')),
            count(*) FILTER (WHERE resource_manager = 'Btree'
                AND record_type IN ('INSERT_LEAF', 'INSERT_POST')),
            count(*) FILTER (WHERE resource_manager = 'Transaction')
        FROM counted";
    let row = client
        .query_one(sql, &[&start.0])
        .await
        .unwrap_or_else(|e| panic!("reading the WAL: {e}"));
    let n = |i: usize| -> u64 { row.get::<_, i64>(i).try_into().unwrap_or(0) };
    WalFigures {
        bytes: n(0),
        rows: n(1),
        index_entries: n(2),
        commits: n(3),
    }
}

/// The records [`since`] counts, grouped by kind and by the relation of
/// their first block: `(kind, relation, records, bytes)`, most bytes first.
/// For finding where a workload's writes go.
pub async fn breakdown(client: &Client, start: &WalMark) -> Vec<(String, String, i64, i64)> {
    let sql = "
        WITH records AS (
            SELECT resource_manager || '/' || record_type AS kind,
                   record_length - fpi_length AS bytes,
                   substring(block_ref FROM 'rel [0-9]+/' || (SELECT oid FROM pg_database
                       WHERE datname = current_database())::text || '/([0-9]+)') AS node
            FROM pg_get_wal_records_info($1::text::pg_lsn, pg_current_wal_flush_lsn())
        )
        SELECT kind, COALESCE(pg_filenode_relation(0, node::oid)::text, node, ''),
               count(*), sum(bytes)::bigint
        FROM records WHERE node IS NOT NULL OR kind LIKE 'Transaction/COMMIT%'
        GROUP BY 1, 2 ORDER BY 4 DESC";
    client
        .query(sql, &[&start.0])
        .await
        .unwrap_or_else(|e| panic!("reading the WAL: {e}"))
        .iter()
        .map(|r| (r.get(0), r.get(1), r.get(2), r.get(3)))
        .collect()
}
