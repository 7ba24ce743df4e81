//! A PostgreSQL cluster of the test's own, in a temporary folder on a free loopback port, stopped
//! when its guard drops, a failing test included. Shared by the server's tests (through
//! `postgres.rs`) and the team client's (`teamclient/tests/`).
//!
//! PostgreSQL refuses to run as root: as root (CI containers), initdb and pg_ctl run as the
//! `postgres` user through `su`, on a folder handed to it.

use std::net::TcpListener;
use std::path::PathBuf;
use std::process::Command;

const MISSING: &str = "PostgreSQL's server programs (initdb, pg_ctl, psql) were not found in \
    /usr/lib/postgresql/*/bin: install them with `bash scripts/setup.sh --with-test-tools` \
    (Debian's `postgresql` package), or name their folder in NEURORATER_PG_BIN";

fn bin_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("NEURORATER_PG_BIN") {
        return PathBuf::from(dir);
    }
    let mut found: Vec<PathBuf> = std::fs::read_dir("/usr/lib/postgresql")
        .expect(MISSING)
        .filter_map(|entry| Some(entry.ok()?.path().join("bin")))
        .filter(|bin| bin.join("initdb").exists())
        .collect();
    // The newest major version: folders are named by it.
    found.sort_by_key(|p| {
        p.parent()
            .and_then(|v| v.file_name()?.to_str()?.parse::<u32>().ok())
            .unwrap_or(0)
    });
    found.pop().expect(MISSING)
}

fn is_root() -> bool {
    let out = Command::new("id").arg("-u").output().expect("run id -u");
    String::from_utf8_lossy(&out.stdout).trim() == "0"
}

pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free loopback port")
        .port()
}

pub struct Cluster {
    dir: tempfile::TempDir,
    bin: PathBuf,
    pub port: u16,
    as_postgres: bool,
}

impl Cluster {
    pub fn start() -> Cluster {
        let bin = bin_dir();
        let dir = tempfile::tempdir().expect("a temporary folder");
        let as_postgres = is_root();
        if as_postgres {
            let status = Command::new("chown")
                .args(["postgres:"])
                .arg(dir.path())
                .status()
                .expect("run chown");
            assert!(status.success(), "chown postgres {}", dir.path().display());
        }
        let cluster = Cluster {
            bin,
            port: free_port(),
            as_postgres,
            dir,
        };
        let data = cluster.dir.path().join("data");
        cluster.run(&format!(
            "{} -D {} -A trust -U postgres --no-sync -E UTF8 >/dev/null",
            cluster.bin.join("initdb").display(),
            data.display()
        ));
        cluster.start_again();
        cluster
    }

    /// Stops PostgreSQL as an operator's restart does (fast: connections are cut); `start_again`
    /// brings it back on the same port.
    #[allow(dead_code)] // Used by the server's tests, not by the team client's.
    pub fn stop(&self) {
        self.run(&format!(
            "{} -D {} -m fast -w stop >/dev/null",
            self.bin.join("pg_ctl").display(),
            self.dir.path().join("data").display()
        ));
    }

    pub fn start_again(&self) {
        self.run(&format!(
            "{} -D {} -o '-p {} -k {} -c listen_addresses=127.0.0.1' -l {} -w start >/dev/null",
            self.bin.join("pg_ctl").display(),
            self.dir.path().join("data").display(),
            self.port,
            self.dir.path().display(),
            self.dir.path().join("log").display()
        ));
    }

    fn run(&self, command: &str) {
        let status = if self.as_postgres {
            Command::new("su")
                .args(["postgres", "-c", command])
                .status()
        } else {
            Command::new("sh").args(["-c", command]).status()
        }
        .expect("run a PostgreSQL program");
        assert!(status.success(), "{command}: {status}");
    }

    /// A new, empty database; its URL.
    pub fn database(&self, name: &str) -> String {
        self.psql("postgres", &format!("CREATE DATABASE {name}"));
        self.url(name)
    }

    pub fn url(&self, name: &str) -> String {
        format!("postgres://postgres@127.0.0.1:{}/{name}", self.port)
    }

    /// Runs `sql` in `database`; its rows as unaligned text, fields split by `|`.
    pub fn psql(&self, database: &str, sql: &str) -> String {
        let out = Command::new(self.bin.join("psql"))
            .args(["-h", "127.0.0.1", "-U", "postgres", "-X", "-A", "-t", "-q"])
            .args([
                "-p",
                &self.port.to_string(),
                "-d",
                database,
                "-v",
                "ON_ERROR_STOP=1",
            ])
            .args(["-c", sql])
            .output()
            .expect("run psql");
        assert!(
            out.status.success(),
            "psql {sql}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap().trim().to_owned()
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        // Immediate: the folder is deleted next; nothing in it needs a clean shutdown.
        let data = self.dir.path().join("data");
        let command = format!(
            "{} -D {} -m immediate stop >/dev/null 2>&1",
            self.bin.join("pg_ctl").display(),
            data.display()
        );
        let _ = if self.as_postgres {
            Command::new("su")
                .args(["postgres", "-c", &command])
                .status()
        } else {
            Command::new("sh").args(["-c", &command]).status()
        };
    }
}
