//! The team server as the client meets it: a PostgreSQL cluster of the test's own
//! (`server/tests/support/cluster.rs`), the demo study copied onto it with the server's own
//! import, and the real server (`server::serve`) on a free loopback port in a thread of this
//! process. A lead and raters enrolled through the real invitation flow, each rater topped up.
//! A [`Relay`] between a client and the server can cut it off as a network would.

#[path = "../../../server/tests/support/cluster.rs"]
mod cluster;
#[path = "../../../cases/tests/support/demo_study.rs"]
mod demo_study;

use cases::rating::DEMO_STUDY_ID;
pub use cluster::Cluster;
use serde_json::{json, Value};
use std::net::SocketAddr;
use std::path::Path;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::net::{TcpListener, TcpStream};

pub const STUDY: &str = DEMO_STUDY_ID;

pub struct TeamServer {
    pub cluster: Cluster,
    /// The database's name in the cluster.
    pub database: &'static str,
    pub address: SocketAddr,
    pub base: String,
    pub lead_token: String,
}

/// Runs `server::serve` on `listen` in a thread of its own until the test process ends.
fn serve_in_thread(database: String, listen: SocketAddr) {
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        runtime
            .block_on(server::serve(server::ServeOptions {
                database,
                listen,
                trusted_proxy: None,
            }))
            .expect("the server runs");
    });
    for _ in 0..600 {
        if std::net::TcpStream::connect(listen).is_ok() {
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!("the server did not listen on {listen}");
}

impl TeamServer {
    /// The demo study on a fresh cluster, its lead logged in.
    pub async fn start(work: &Path) -> TeamServer {
        let local = work.join("local.sqlite");
        let cluster = tokio::task::block_in_place(|| {
            demo_study::demo_database_at(&local);
            Cluster::start()
        });
        let database = "team";
        let url = cluster.database(database);
        let imported = tokio::task::block_in_place(|| {
            server::import_local_study(&url, &local, STUDY, Some(("lead", "Hospital A")))
                .expect("the demo study imports")
        });
        let lead_code = imported.lead_invitation.expect("the lead is invited").code;
        let listen: SocketAddr = format!("127.0.0.1:{}", cluster::free_port())
            .parse()
            .unwrap();
        serve_in_thread(url, listen);
        let base = format!("http://{listen}");
        let lead_token = accept_and_login(&base, "lead", &lead_code).await;
        TeamServer {
            cluster,
            database,
            address: listen,
            base,
            lead_token,
        }
    }

    /// Invites `username` as a rater at `site`, who accepts with [`password`]; gives them
    /// `assignments` items.
    pub async fn enrol_rater(&self, username: &str, site: &str, assignments: u32) {
        let invitation = post(
            &self.base,
            &format!("/api/studies/{STUDY}/invitations"),
            Some(&self.lead_token),
            json!({
                "username": username, "role": "rater", "site": site,
                "clinical_role": "neuroradiologist",
            }),
        )
        .await;
        accept_and_login(&self.base, username, invitation["code"].as_str().unwrap()).await;
        let topped = post(
            &self.base,
            &format!("/api/studies/{STUDY}/top-up"),
            Some(&self.lead_token),
            json!({ "raters": [username], "per_rater": assignments }),
        )
        .await;
        assert_eq!(topped["raters"][0]["added"], assignments, "{topped}");
    }

    /// Invites `username` as a curator at `site`, who accepts with [`password`].
    pub async fn enrol_curator(&self, username: &str, site: &str) {
        let invitation = post(
            &self.base,
            &format!("/api/studies/{STUDY}/invitations"),
            Some(&self.lead_token),
            json!({ "username": username, "role": "curator", "site": site }),
        )
        .await;
        accept_and_login(&self.base, username, invitation["code"].as_str().unwrap()).await;
    }

    pub fn psql(&self, sql: &str) -> String {
        self.cluster.psql(self.database, sql)
    }
}

pub fn password(username: &str) -> String {
    format!("{username} long password 42")
}

async fn accept_and_login(base: &str, username: &str, code: &str) -> String {
    let password = password(username);
    post(
        base,
        "/api/invitations/accept",
        None,
        json!({ "code": code, "password": password }),
    )
    .await;
    let login = post(
        base,
        "/api/login",
        None,
        json!({ "username": username, "password": password }),
    )
    .await;
    login["token"].as_str().unwrap().to_owned()
}

/// A setup call that must succeed; its JSON.
pub async fn post(base: &str, path: &str, token: Option<&str>, body: Value) -> Value {
    let mut request = reqwest::Client::new()
        .post(format!("{base}{path}"))
        .json(&body);
    if let Some(token) = token {
        request = request.bearer_auth(token);
    }
    let response = request.send().await.expect("the server answers");
    let status = response.status();
    let text = response.text().await.unwrap();
    assert!(status.is_success(), "POST {path}: {status} {text}");
    serde_json::from_str(&text).unwrap_or(Value::Null)
}

/// A TCP relay on a loopback port of its own to `target`; while blocked it refuses new
/// connections (accepts and closes them at once) and cuts the open ones, as a lost network does.
pub struct Relay {
    pub port: u16,
    blocked: tokio::sync::watch::Sender<bool>,
    open: Arc<AtomicUsize>,
}

impl Relay {
    pub async fn start(target: SocketAddr) -> Relay {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let (blocked, watch) = tokio::sync::watch::channel(false);
        let open = Arc::new(AtomicUsize::new(0));
        let counted = Arc::clone(&open);
        tokio::spawn(async move {
            while let Ok((mut inbound, _)) = listener.accept().await {
                if *watch.borrow() {
                    drop(inbound);
                    continue;
                }
                let mut watch = watch.clone();
                let open = Arc::clone(&counted);
                open.fetch_add(1, Ordering::SeqCst);
                tokio::spawn(async move {
                    if let Ok(mut outbound) = TcpStream::connect(target).await {
                        if !*watch.borrow_and_update() {
                            tokio::select! {
                                _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound) => {}
                                _ = watch.wait_for(|blocked| *blocked) => {}
                            }
                        }
                    }
                    open.fetch_sub(1, Ordering::SeqCst);
                });
            }
        });
        Relay {
            port,
            blocked,
            open,
        }
    }

    pub fn base(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Cuts the network (returning once every open connection is closed) or opens it again.
    pub async fn block(&self, blocked: bool) {
        self.blocked.send_replace(blocked);
        while blocked && self.open.load(Ordering::SeqCst) > 0 {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }
}
