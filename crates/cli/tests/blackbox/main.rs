//! The black-box suites: the real `idem` binary, started as a child process
//! on a fresh SQLite data directory or PostgreSQL database, driven over HTTP,
//! through its CLI subcommands and through idem-client. One test binary
//! holds every suite, each a module, so that the large binary links once.

mod harness;

mod api_basics;
mod backup;
mod batch;
mod callbacks;
mod cli_jobs;
mod cli_proxy;
mod cli_queue;
mod cli_task;
mod cli_tenancy;
mod client_api;
mod client_jobs;
mod client_retry;
mod cloud_tasks;
mod console;
mod dispatch_cancel;
mod dispatch_crash;
mod dispatch_delivery;
mod dispatch_nodes;
mod dispatch_shutdown;
mod edge;
mod groups;
mod guard_e2e;
mod idempotency;
mod identity;
mod inputs;
mod lockout;
mod logs;
mod metrics;
mod oidc;
mod pull;
mod queue_stats;
mod queues;
mod redrive;
mod scheduler;
mod scheduler_crash;
mod scheduler_nodes;
mod schema;
mod secrets;
mod startup;
mod target_policy;
mod tasks;
mod tenancy;
mod tenants;
mod tls;
mod traces;
mod wait;
