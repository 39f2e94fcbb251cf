//! Running `idem` subcommands to their end and checking what they printed.

use std::process::Stdio;

use serde_json::Value;
use tokio::process::Command;

/// `idem` with no inherited `IDEM_*` variable: one in the developer's
/// environment would silently change what is tested.
pub fn command() -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_idem"));
    for (name, _) in std::env::vars() {
        if name.starts_with("IDEM_") {
            cmd.env_remove(name);
        }
    }
    cmd.stdin(Stdio::null());
    cmd
}

/// What a finished `idem` run printed and returned.
#[derive(Debug)]
pub struct Out {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
    what: String,
}

impl Out {
    /// Runs `cmd` (made by [`command`]) to its end.
    pub async fn of(mut cmd: Command) -> Out {
        let what = format!("{:?}", cmd.as_std().get_args().collect::<Vec<_>>());
        let out = cmd.output().await.expect("run idem");
        Out {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
            what,
        }
    }

    /// Asserts exit code 0.
    pub fn ok(self) -> Out {
        assert_eq!(
            self.code, 0,
            "idem {} failed\nstdout:\n{}\nstderr:\n{}",
            self.what, self.stdout, self.stderr
        );
        self
    }

    /// Asserts success and parses stdout as JSON.
    pub fn json(self) -> Value {
        let out = self.ok();
        serde_json::from_str(&out.stdout).unwrap_or_else(|e| {
            panic!(
                "idem {}: stdout is not JSON ({e}):\n{}",
                out.what, out.stdout
            )
        })
    }

    /// Asserts the exit code and that stderr holds exactly one line starting
    /// with `error: <code>` (a problem type, or any text for local errors).
    pub fn fails(self, code: i32, error_start: &str) -> Out {
        assert_eq!(
            self.code, code,
            "idem {}: expected exit code {code}\nstdout:\n{}\nstderr:\n{}",
            self.what, self.stdout, self.stderr
        );
        let line = self
            .stderr
            .lines()
            .find(|l| l.starts_with("error: "))
            .unwrap_or_else(|| panic!("idem {}: no error line in {:?}", self.what, self.stderr));
        assert!(
            line.starts_with(&format!("error: {error_start}")),
            "idem {}: error line {line:?} does not start with {error_start:?}",
            self.what
        );
        self
    }

    /// The value of a `name:` line of a table-mode resource display.
    pub fn field(&self, name: &str) -> String {
        self.stdout
            .lines()
            .find_map(|l| l.strip_prefix(&format!("{name}:")))
            .unwrap_or_else(|| panic!("idem {}: no {name:?} line in\n{}", self.what, self.stdout))
            .trim()
            .to_string()
    }
}
