//! The console at `/ui`, in a real browser: Debian's Chromium, headless,
//! driven through chromedriver (started here on a free port) by WebDriver.
//!
//! Each test saves a screenshot of every page it visits to
//! `$CARGO_TARGET_DIR/ui-screenshots/` (or `target/ui-screenshots/`).

use crate::harness::target::{Target, wait_state};
use crate::harness::{Backend, Server, unique};
use fantoccini::{Client, ClientBuilder, Locator};
use serde_json::{Value, json};
use std::path::PathBuf;
use std::process::Stdio;
use std::time::{Duration, Instant};
use tokio::process::{Child, Command};

const CHROMEDRIVER: &str = "/usr/bin/chromedriver";
const CHROMIUM: &str = "/usr/bin/chromium";

/// A chromedriver process and a headless Chromium session through it; both
/// end when dropped (the driver is killed, which ends its browser).
struct Browser {
    client: Client,
    _driver: Child,
    shots: PathBuf,
    prefix: String,
}

fn tool(env: &str, default: &str) -> String {
    std::env::var(env).unwrap_or_else(|_| default.to_string())
}

impl Browser {
    async fn start(prefix: &str) -> Browser {
        Browser::launch(prefix, true).await
    }

    /// A browser that runs no script: what the console must serve whole.
    async fn without_script(prefix: &str) -> Browser {
        Browser::launch(prefix, false).await
    }

    async fn launch(prefix: &str, script: bool) -> Browser {
        let driver_path = tool("IDEM_TEST_CHROMEDRIVER", CHROMEDRIVER);
        let chromium = tool("IDEM_TEST_CHROMIUM", CHROMIUM);
        for (what, path) in [("chromedriver", &driver_path), ("chromium", &chromium)] {
            assert!(
                std::path::Path::new(path).exists(),
                "{what} not found at {path}: the console's browser tests need Debian's \
                 chromium and chromium-driver (apt-get install -y chromium chromium-driver, \
                 as .ci/run does), or IDEM_TEST_CHROMEDRIVER / IDEM_TEST_CHROMIUM naming them"
            );
        }
        let port = {
            let l = std::net::TcpListener::bind("127.0.0.1:0").expect("a free port");
            l.local_addr().unwrap().port()
        };
        let driver = Command::new(&driver_path)
            .arg(format!("--port={port}"))
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .unwrap_or_else(|e| panic!("starting {driver_path}: {e}"));
        let url = format!("http://127.0.0.1:{port}");
        let mut caps = serde_json::Map::new();
        let mut args = vec![
            "--headless=new",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-dev-shm-usage",
            "--window-size=1280,900",
            "--hide-scrollbars",
        ];
        if !script {
            args.push("--blink-settings=scriptEnabled=false");
        }
        caps.insert(
            "goog:chromeOptions".into(),
            json!({"binary": chromium, "args": args}),
        );
        let deadline = Instant::now() + Duration::from_secs(20);
        let client = loop {
            let connector = hyper_util::client::legacy::connect::HttpConnector::new();
            match ClientBuilder::new(connector)
                .capabilities(caps.clone())
                .connect(&url)
                .await
            {
                Ok(c) => break c,
                Err(e) if Instant::now() < deadline => {
                    let _ = e;
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
                Err(e) => panic!("chromedriver at {url} gave no session: {e}"),
            }
        };
        let target = std::env::var("CARGO_TARGET_DIR")
            .map(PathBuf::from)
            .unwrap_or_else(|_| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../target"));
        let shots = target.join("ui-screenshots");
        std::fs::create_dir_all(&shots).expect("the screenshot directory");
        Browser {
            client,
            _driver: driver,
            shots,
            prefix: prefix.to_string(),
        }
    }

    async fn goto(&self, url: &str) {
        self.client.goto(url).await.expect("navigate");
    }

    async fn path(&self) -> String {
        self.client
            .current_url()
            .await
            .expect("url")
            .path()
            .to_string()
    }

    async fn shot(&self, name: &str) {
        let png = self.client.screenshot().await.expect("screenshot");
        let file = self.shots.join(format!("{}-{name}.png", self.prefix));
        std::fs::write(&file, png).expect("write the screenshot");
    }

    async fn find(&self, css: &str) -> fantoccini::elements::Element {
        match self.client.find(Locator::Css(css)).await {
            Ok(e) => e,
            Err(e) => {
                let page = self.client.source().await.unwrap_or_default();
                panic!("no {css} on {}: {e}\n{page}", self.path().await)
            }
        }
    }

    /// Types `text` into the field `css` finds.
    async fn type_into(&self, css: &str, text: &str) {
        self.find(css)
            .await
            .send_keys(text)
            .await
            .unwrap_or_else(|e| panic!("typing into {css}: {e}"));
    }

    /// The attribute `name` of the element `css` finds, if it has one.
    async fn attr(&self, css: &str, name: &str) -> Option<String> {
        self.find(css)
            .await
            .attr(name)
            .await
            .unwrap_or_else(|e| panic!("{css}[{name}]: {e}"))
    }

    async fn text(&self, css: &str) -> String {
        self.find(css).await.text().await.expect("text")
    }

    async fn click(&self, css: &str) {
        self.find(css).await.click().await.expect("click");
    }

    /// Clicks `css` and waits for the page it leads to.
    async fn click_to(&self, css: &str, path: &str) {
        self.click(css).await;
        self.wait_path(path).await;
    }

    async fn wait_path(&self, path: &str) {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let now = self.path().await;
            if now == path {
                return;
            }
            assert!(Instant::now() < deadline, "on {now}, expected {path}");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    /// Waits for an element that the next page has and this one lacks.
    async fn appears(&self, css: &str) {
        self.client
            .wait()
            .at_most(Duration::from_secs(10))
            .for_element(Locator::Css(css))
            .await
            .unwrap_or_else(|e| panic!("{css} did not appear: {e}"));
    }

    async fn count(&self, css: &str) -> usize {
        self.client
            .find_all(Locator::Css(css))
            .await
            .expect("find")
            .len()
    }

    async fn login(&self, base: &str, key: &str) {
        self.goto(&format!("{base}/ui")).await;
        assert_eq!(
            self.path().await,
            "/ui/login",
            "without a session, /ui asks to log in"
        );
        self.client
            .find(Locator::Css("#key"))
            .await
            .expect("the key field")
            .send_keys(key)
            .await
            .expect("type the key");
        self.click_to("section.login button[type=submit]", "/ui/queues")
            .await;
    }

    /// Reloads until `css`'s text holds `want`.
    async fn reload_until(&self, css: &str, want: &str, within: Duration) -> String {
        let deadline = Instant::now() + within;
        loop {
            let text = self.text(css).await;
            if text.contains(want) {
                return text;
            }
            assert!(
                Instant::now() < deadline,
                "{css} reads {text:?} after {within:?}, expected {want:?}"
            );
            tokio::time::sleep(Duration::from_millis(200)).await;
            self.client.refresh().await.expect("reload");
        }
    }

    /// Waits until `css`'s text is `want` (a page the last click leads to).
    async fn wait_until_text(&self, css: &str, want: &str) {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if let Ok(e) = self.client.find(Locator::Css(css)).await
                && e.text().await.is_ok_and(|t| t == want)
            {
                return;
            }
            assert!(Instant::now() < deadline, "{css} never read {want:?}");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }

    async fn close(self) {
        self.client.close().await.expect("end the browser session");
    }
}

fn backend_name(backend: Backend) -> &'static str {
    match backend {
        Backend::Sqlite => "sqlite",
        Backend::Postgres => "postgres",
    }
}

/// A queue whose tasks get one attempt, and in it one failed task whose
/// target fails its first request only (so a redrive succeeds), plus some
/// succeeded ones and a cron job, so that every page has something to show.
async fn failed_task(server: &Server, target: &Target, queue: &str, task_id: &str) {
    server
        .create_queue_with(json!({"name": queue, "retry_config": {"max_attempts": 1}}))
        .await;
    for i in 0..3 {
        server
            .create_task(
                queue,
                json!({"task_id": format!("ok-{i}"), "target": {"url": target.url("/ok")}}),
            )
            .await;
    }
    server
        .create_task(
            queue,
            json!({"task_id": task_id, "target": {"url": target.url("/fail/1/503")}}),
        )
        .await;
    wait_state(server, queue, task_id, "failed", Duration::from_secs(15)).await;
    crate::harness::jobs::create_job(
        server,
        json!({"name": "nightly-report", "schedule": "30 2 * * *",
               "time_zone": "Europe/Berlin", "target": {"url": target.url("/ok")}}),
    )
    .await;
}

/// An operator logs in with a key, finds the failed task, reads its error,
/// redrives it and sees it succeed; then looks at every other page and logs
/// out.
async fn an_operator_finds_a_failed_task_and_redrives_it(backend: Backend) {
    let server = Server::start(backend).await;
    let target = Target::start().await;
    let queue = "payments";
    failed_task(&server, &target, queue, "charge-42").await;
    let base = server.base().to_string();
    let b = Browser::start(backend_name(backend)).await;

    b.goto(&format!("{base}/ui")).await;
    b.shot("login").await;
    b.login(&base, &server.admin_key).await;
    b.shot("queues").await;

    b.click_to(
        &format!("a.queue-link[href='/ui/queues/{queue}']"),
        &format!("/ui/queues/{queue}"),
    )
    .await;
    b.click("nav.tabs a[href$='state=failed']").await;
    b.appears("nav.tabs a[aria-current][href$='state=failed']")
        .await;
    let rows = b.count("a.task-link").await;
    assert_eq!(rows, 1, "the failed tab lists the one failed task");
    assert_eq!(b.text("a.task-link").await, "charge-42");
    b.shot("queue").await;

    // Search: the ID prefix and the creation range go to the API's filters.
    b.goto(&format!("{base}/ui/queues/{queue}")).await;
    assert_eq!(b.count("a.task-link").await, 4, "all of the queue's tasks");
    b.type_into("form.search input[name=id_prefix]", "charge-")
        .await;
    b.click("form.search button[type=submit]").await;
    b.appears("form.search input[name=id_prefix][value='charge-']")
        .await;
    assert_eq!(
        b.count("a.task-link").await,
        1,
        "only charge-42 has that prefix"
    );
    b.goto(&format!(
        "{base}/ui/queues/{queue}?created_after=2099-01-01T00:00"
    ))
    .await;
    assert_eq!(
        b.count("a.task-link").await,
        0,
        "none was created after 2099"
    );
    assert_eq!(b.text("p.empty").await, "No tasks match.");
    b.goto(&format!("{base}/ui/queues/{queue}?state=failed"))
        .await;

    b.click_to(
        "a.task-link",
        &format!("/ui/queues/{queue}/tasks/charge-42"),
    )
    .await;
    assert_eq!(b.text(".title .state").await, "failed");
    assert_eq!(b.text("table.attempts tbody td:nth-child(3)").await, "503");
    let error = b.text("table.attempts td.error").await;
    assert!(
        error.contains("503"),
        "the attempt's error is shown: {error:?}"
    );
    assert!(b.text(".last-error").await.contains(&error));
    b.shot("task-failed").await;

    b.click("button[data-action=redrive]").await;
    b.appears(".flash").await;
    let flash = b.text(".flash").await;
    assert!(
        flash.contains("redriven"),
        "the redrive is confirmed: {flash:?}"
    );
    b.reload_until(".title .state", "succeeded", Duration::from_secs(15))
        .await;
    assert_eq!(b.count("table.attempts tbody tr:not(.response)").await, 2);
    // The failed attempt is followed by its (empty) answer; the success
    // by nothing.
    assert!(
        b.text("table.attempts tbody tr.response")
            .await
            .contains("empty body")
    );
    assert_eq!(
        b.text("table.attempts tbody tr:last-child td:nth-child(3)")
            .await,
        "200"
    );
    b.shot("task-redriven").await;
    assert_eq!(target.received_for("charge-42").len(), 2);
    assert_eq!(
        server.get_task(queue, "charge-42").await["state"],
        "succeeded"
    );

    // Another failed task, redriven with the queue's others in one action.
    server
        .create_task(
            queue,
            json!({"task_id": "charge-43", "target": {"url": target.url("/fail/1/503")}}),
        )
        .await;
    wait_state(
        &server,
        queue,
        "charge-43",
        "failed",
        Duration::from_secs(15),
    )
    .await;
    b.goto(&format!("{base}/ui/queues/{queue}")).await;
    b.click("button[data-action=redrive-failed]").await;
    b.client
        .accept_alert()
        .await
        .expect("confirm the bulk redrive");
    b.appears(".flash").await;
    let flash = b.text(".flash").await;
    assert!(flash.contains("Tasks redriven: 1."), "{flash}");
    wait_state(
        &server,
        queue,
        "charge-43",
        "succeeded",
        Duration::from_secs(15),
    )
    .await;

    b.click_to("header nav a[href='/ui/jobs']", "/ui/jobs")
        .await;
    assert_eq!(b.text("a.job-link").await, "nightly-report");
    b.shot("jobs").await;
    b.click_to("a.job-link", "/ui/jobs/nightly-report").await;
    let preview = b.text("ol.preview").await;
    assert_eq!(b.count("ol.preview li").await, 5);
    assert!(
        preview.contains("02:30:00 CET") || preview.contains("02:30:00 CEST"),
        "the next instants are shown in the job's zone: {preview}"
    );
    b.shot("job").await;
    b.click("button[data-action=run]").await;
    b.appears(".flash").await;
    assert!(b.text(".flash").await.contains("run started"));
    b.reload_until("table.runs tbody", "succeeded", Duration::from_secs(15))
        .await;
    assert_eq!(b.text("table.runs tbody td:nth-child(2)").await, "manual");
    b.shot("job-run").await;

    b.click_to("header nav a[href='/ui/access']", "/ui/access")
        .await;
    assert!(b.count("table.keys tbody tr").await >= 1);
    assert!(b.count("button[data-action=revoke]").await >= 1);
    b.shot("access").await;

    // A phone-sized window: the same pages, one column.
    b.client.set_window_size(390, 844).await.expect("resize");
    b.goto(&format!("{base}/ui/queues/{queue}")).await;
    b.shot("queue-phone").await;

    b.click_to("#logout", "/ui/login").await;
    b.goto(&format!("{base}/ui/queues")).await;
    assert_eq!(
        b.path().await,
        "/ui/login",
        "after logout the pages ask to log in again"
    );
    b.close().await;
}

/// A reader sees every page and no button that acts; the API would refuse
/// the actions anyway.
async fn a_reader_sees_everything_and_no_acting_button(backend: Backend) {
    let server = Server::start(backend).await;
    let target = Target::start().await;
    let queue = "invoices";
    failed_task(&server, &target, queue, "bill-7").await;
    let reader = server.key_with_role("reader").await;
    let base = server.base().to_string();
    let b = Browser::start(&format!("{}-reader", backend_name(backend))).await;
    b.login(&base, &reader).await;
    assert_eq!(b.text(".who .role").await, "reader");

    let pages = [
        ("queues", "/ui/queues".to_string()),
        ("queue", format!("/ui/queues/{queue}")),
        ("task", format!("/ui/queues/{queue}/tasks/bill-7")),
        ("jobs", "/ui/jobs".to_string()),
        ("job", "/ui/jobs/nightly-report".to_string()),
        ("access", "/ui/access".to_string()),
    ];
    for (name, path) in &pages {
        b.goto(&format!("{base}{path}")).await;
        assert_eq!(&b.path().await, path);
        assert_eq!(
            b.count("form.action, button.act").await,
            0,
            "a reader's {name} page has no acting button"
        );
        b.shot(name).await;
    }
    b.goto(&format!("{base}/ui/queues/{queue}/tasks/bill-7"))
        .await;
    assert!(b.text("table.attempts td.error").await.contains("503"));
    b.goto(&format!("{base}/ui/access")).await;
    assert_eq!(
        b.text(".problem").await,
        "This page is for admins; this session's key is a reader's."
    );
    assert_eq!(b.count(".problem").await, 1, "said once");
    assert_eq!(
        b.count("header nav a[href='/ui/access']").await,
        0,
        "no Access tab for a reader"
    );

    // A queue's groups: its limit, and each group's running, due and
    // scheduled tasks.
    server
        .create_paused_queue_with(json!({"name": "by-account", "group_concurrency": 2}))
        .await;
    for (id, group) in [("t1", "acct:1"), ("t2", "acct:1"), ("t3", "acct:2")] {
        server
            .create_task(
                "by-account",
                json!({"task_id": id, "group": group, "target": {"url": target.url("/ok")}}),
            )
            .await;
    }
    b.goto(&format!("{base}/ui/queues/by-account")).await;
    let hint = b.text("section.groups p.hint").await;
    assert!(hint.contains("2 running per group"), "{hint}");
    assert_eq!(b.count("table.groups tbody tr").await, 2);
    let first = b.text("table.groups tbody tr").await;
    assert!(
        first.starts_with("acct:1") && first.contains('2'),
        "{first}"
    );
    b.shot("queue-groups").await;
    b.close().await;
}

/// Submits a form built in the page: what another page could make a
/// logged-in browser send (the session cookie goes along with it).
async fn forge_post(b: &Browser, action: &str, fields: Value) {
    b.client
        .execute(
            "const f = document.createElement('form');
             f.method = 'post'; f.action = arguments[0];
             for (const [k, v] of Object.entries(arguments[1])) {
               const i = document.createElement('input');
               i.type = 'hidden'; i.name = k; i.value = v; f.appendChild(i);
             }
             document.body.appendChild(f); f.submit();",
            vec![json!(action), fields],
        )
        .await
        .expect("submit the forged form");
    b.appears(".problem").await;
}

/// A POST without the session's CSRF token changes nothing, even with the
/// session cookie; the cookie is HttpOnly, SameSite=Strict and scoped to
/// /ui; logging out ends the session on the server, not just in the
/// browser.
async fn a_post_without_the_csrf_token_is_refused_and_logout_ends_the_session(backend: Backend) {
    let server = Server::start(backend).await;
    let queue = unique("q");
    server.create_queue(&queue).await;
    let base = server.base().to_string();
    let b = Browser::start(&format!("{}-csrf", backend_name(backend))).await;
    // Logging in needs the login form's own token: another site cannot log
    // this browser in with a key of its choosing.
    b.goto(&format!("{base}/ui/queues")).await;
    forge_post(&b, "/ui/login", json!({"key": server.admin_key})).await;
    assert!(b.text(".problem").await.contains("log in again"));
    b.goto(&format!("{base}/ui/queues")).await;
    assert_eq!(
        b.path().await,
        "/ui/login",
        "the forged login opened no session"
    );
    b.login(&base, &server.admin_key).await;

    let cookie = b
        .client
        .get_named_cookie("idem_console")
        .await
        .expect("the session cookie");
    assert_eq!(cookie.http_only(), Some(true));
    assert_eq!(cookie.path(), Some("/ui"));
    assert_eq!(format!("{:?}", cookie.same_site()), "Some(Strict)");
    assert_ne!(
        cookie.value(),
        server.admin_key,
        "the cookie holds a session ID, not the key"
    );
    assert!(!cookie.value().contains(&server.admin_key));

    let pause = format!("/ui/queues/{queue}/pause");
    for fields in [json!({}), json!({"csrf": "0".repeat(64)})] {
        b.goto(&format!("{base}/ui/queues/{queue}")).await;
        forge_post(&b, &pause, fields).await;
        assert_eq!(b.path().await, pause);
        assert!(
            b.text(".problem").await.contains("CSRF"),
            "a forged POST is refused and says why"
        );
        b.shot("forged-post").await;
        assert_eq!(server.get_queue(&queue).await["state"], "running");
    }

    // The same action through the page's own form works.
    b.goto(&format!("{base}/ui/queues/{queue}")).await;
    let csrf = b
        .client
        .find(Locator::Css("form.action input[name=csrf]"))
        .await
        .expect("a csrf field")
        .attr("value")
        .await
        .expect("attr")
        .expect("a token");
    b.click("button[data-action=pause]").await;
    b.appears(".flash").await;
    assert!(b.text(".flash").await.contains("paused"));
    assert_eq!(server.get_queue(&queue).await["state"], "paused");

    b.click_to("#logout", "/ui/login").await;
    b.close().await;

    // The old session ID and token, replayed from outside the browser,
    // act no more.
    let resp = reqwest::Client::new()
        .post(format!("{base}/ui/queues/{queue}/resume"))
        .header("cookie", format!("idem_console={}", cookie.value()))
        .header("content-type", "application/x-www-form-urlencoded")
        .body(format!("csrf={csrf}"))
        .send()
        .await
        .expect("post");
    assert_eq!(resp.status().as_u16(), 403);
    assert_eq!(server.get_queue(&queue).await["state"], "paused");
}

/// Logs in over plain HTTP with `extra` headers; returns the session's
/// `Set-Cookie`.
pub(crate) async fn login_cookie(base: &str, key: &str, extra: &[(&str, &str)]) -> String {
    let http = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .expect("client");
    let page = http
        .get(format!("{base}/ui/login"))
        .send()
        .await
        .expect("login page");
    let login_cookie = page
        .headers()
        .get("set-cookie")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .expect("the login form's cookie")
        .to_string();
    let html = page.text().await.expect("page");
    let token = html
        .split("name=\"login\" value=\"")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .expect("the login form's token");
    let mut req = http
        .post(format!("{base}/ui/login"))
        .header("cookie", login_cookie)
        .header("content-type", "application/x-www-form-urlencoded")
        .body(format!("login={token}&key={key}"));
    for (name, value) in extra {
        req = req.header(*name, *value);
    }
    let resp = req.send().await.expect("log in");
    assert_eq!(resp.status().as_u16(), 303);
    resp.headers()
        .get_all("set-cookie")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .find(|v| v.starts_with("idem_console="))
        .expect("a session cookie")
        .to_string()
}

/// The session cookie is `Secure` when the request came over https (as the
/// TLS proxy says) or the server is told so, and holds no key either way.
async fn the_session_cookie_is_secure_behind_https(backend: Backend) {
    let server = Server::start(backend).await;
    let base = server.base();
    let key = &server.admin_key;
    let plain = login_cookie(base, key, &[]).await;
    assert!(plain.contains("HttpOnly") && plain.contains("SameSite=Strict"));
    assert!(plain.contains("Path=/ui"));
    assert!(!plain.contains("Secure"), "{plain}");
    assert!(!plain.contains(key.as_str()));
    let proxied = login_cookie(base, key, &[("x-forwarded-proto", "https")]).await;
    assert!(proxied.contains("; Secure"), "{proxied}");
    let forwarded = login_cookie(base, key, &[("forwarded", "for=1.2.3.4;proto=https")]).await;
    assert!(forwarded.contains("; Secure"), "{forwarded}");

    let server = Server::start_with(backend, &["--console-secure-cookie"]).await;
    let flagged = login_cookie(server.base(), &server.admin_key, &[]).await;
    assert!(flagged.contains("; Secure"), "{flagged}");
}

/// A page of something that is not there answers 404, and of a name that
/// cannot be one 400, with the problem shown: never a 200 page holding an
/// error.
async fn pages_of_what_cannot_exist_answer_with_the_apis_status(backend: Backend) {
    let server = Server::start(backend).await;
    server.create_queue("q").await;
    let cookie = login_cookie(server.base(), &server.admin_key, &[]).await;
    let session = cookie.split(';').next().unwrap().to_string();
    let http = reqwest::Client::new();
    for (path, status) in [
        ("/ui/queues/q", 200),
        ("/ui/queues/nosuch", 404),
        ("/ui/queues/a%00b", 400),
        ("/ui/queues/q/tasks/nosuch", 404),
        ("/ui/queues/q/tasks/a%00b", 400),
        ("/ui/jobs/nosuch", 404),
        ("/ui/jobs/a%00b", 400),
    ] {
        let resp = http
            .get(format!("{}{path}", server.base()))
            .header("cookie", &session)
            .send()
            .await
            .expect("page");
        assert_eq!(resp.status().as_u16(), status, "{path}");
    }
}

/// Whether the session behind `cookie` still opens a page.
async fn session_lives(base: &str, cookie: &str) -> bool {
    let session = cookie.split(';').next().unwrap().to_string();
    let resp = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap()
        .get(format!("{base}/ui/queues"))
        .header("cookie", session)
        .send()
        .await
        .expect("page");
    match resp.status().as_u16() {
        200 => {
            assert_eq!(
                resp.headers()
                    .get("x-frame-options")
                    .and_then(|v| v.to_str().ok()),
                Some("DENY"),
                "pages are never framed"
            );
            true
        }
        303 => false,
        other => panic!("a console page answered {other}"),
    }
}

/// A key holder logging in again and again ends only its own oldest
/// sessions, never another key's.
async fn logins_of_one_key_never_end_another_keys_session(backend: Backend) {
    let server = Server::start_with(backend, &["--console-logins-per-minute", "0"]).await;
    let base = server.base();
    let admin = login_cookie(base, &server.admin_key, &[]).await;
    let reader = server.key_with_role("reader").await;
    let mut readers = Vec::new();
    for _ in 0..20 {
        readers.push(login_cookie(base, &reader, &[]).await);
    }
    assert!(
        session_lives(base, &admin).await,
        "the admin was logged out"
    );
    for (i, cookie) in readers.iter().enumerate() {
        // The key keeps its 16 newest sessions.
        assert_eq!(session_lives(base, cookie).await, i >= 4, "session {i}");
    }
}

/// Login attempts from one address are limited (429 with `Retry-After`),
/// wrong keys and right ones alike.
async fn login_attempts_from_one_address_are_limited(backend: Backend) {
    let server = Server::start_with(backend, &["--console-logins-per-minute", "3"]).await;
    let base = server.base();
    for _ in 0..3 {
        login_cookie(base, &server.admin_key, &[]).await;
    }
    let http = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let page = http.get(format!("{base}/ui/login")).send().await.unwrap();
    let cookie = page
        .headers()
        .get("set-cookie")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .unwrap()
        .to_string();
    let html = page.text().await.unwrap();
    let token = html
        .split("name=\"login\" value=\"")
        .nth(1)
        .and_then(|rest| rest.split('"').next())
        .unwrap()
        .to_string();
    let resp = http
        .post(format!("{base}/ui/login"))
        .header("cookie", cookie)
        .header("content-type", "application/x-www-form-urlencoded")
        .body(format!("login={token}&key={}", server.admin_key))
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), 429);
    let retry: u64 = resp
        .headers()
        .get("retry-after")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse().ok())
        .expect("Retry-After in seconds");
    assert!((1..=21).contains(&retry), "{retry}");
    assert!(
        resp.headers()
            .get("set-cookie")
            .into_iter()
            .all(|c| !c.to_str().unwrap().starts_with("idem_console="))
    );
    let text = resp.text().await.unwrap();
    assert!(text.contains("Too many login attempts"), "{text}");
}

/// Bulk actions act on exactly what the page's filter shows, say how many
/// tasks and which queue before acting, and keep the filter afterwards
/// (the redrive of a filtered list once ran every failed task of the
/// queue).
async fn bulk_actions_act_on_the_filter_and_name_their_count(backend: Backend) {
    let server = Server::start(backend).await;
    let target = Target::start().await;
    let queue = "reports";
    server
        .create_queue_with(json!({"name": queue, "retry_config": {"max_attempts": 1}}))
        .await;
    let failing = [
        "report-broken-1",
        "report-broken-2",
        "report-broken-3",
        "report-other-1",
    ];
    for id in failing {
        server
            .create_task(
                queue,
                json!({"task_id": id, "target": {"url": target.url("/fail/1/503")}}),
            )
            .await;
    }
    for id in failing {
        wait_state(&server, queue, id, "failed", Duration::from_secs(15)).await;
    }
    // Two tasks wait an hour: what a purge would cancel.
    for id in ["later-1", "later-2"] {
        server
            .create_task(
                queue,
                json!({"task_id": id, "target": {"url": target.url("/ok")},
                       "schedule_time": (jiff::Timestamp::now()
                           + jiff::SignedDuration::from_hours(1)).to_string()}),
            )
            .await;
    }
    let base = server.base().to_string();
    let b = Browser::start(&format!("{}-bulk", backend_name(backend))).await;
    b.login(&base, &server.admin_key).await;

    let filtered = format!("/ui/queues/{queue}?state=failed&id_prefix=report-broken");
    b.goto(&format!("{base}{filtered}")).await;
    assert_eq!(b.count("a.task-link").await, 3, "the filter shows three");
    assert_eq!(
        b.text("button[data-action=redrive-failed]").await,
        "Redrive failed tasks (3)"
    );
    let question = b
        .attr("form:has(button[data-action=purge])", "data-confirm")
        .await
        .unwrap_or_default();
    assert_eq!(
        question,
        "Cancel the 2 tasks of queue reports that are not running?"
    );
    b.shot("bulk-filtered").await;

    b.click("button[data-action=redrive-failed]").await;
    let asked = b.client.get_alert_text().await.expect("a confirmation");
    assert_eq!(
        asked,
        "Run again the 3 failed tasks of queue reports whose ID starts with \"report-broken\"?"
    );
    b.client.accept_alert().await.expect("confirm the redrive");
    b.appears(".flash").await;
    let flash = b.text(".flash").await;
    assert!(flash.contains("Tasks redriven: 3."), "{flash}");
    // The page comes back with its filter.
    let url = b.client.current_url().await.expect("url");
    assert_eq!(url.path(), format!("/ui/queues/{queue}"));
    let query: std::collections::HashMap<String, String> = url.query_pairs().into_owned().collect();
    assert_eq!(
        query.get("id_prefix").map(String::as_str),
        Some("report-broken")
    );
    assert_eq!(query.get("state").map(String::as_str), Some("failed"));
    assert_eq!(
        b.attr("form.search input[name=id_prefix]", "value")
            .await
            .as_deref(),
        Some("report-broken")
    );
    for id in ["report-broken-1", "report-broken-2", "report-broken-3"] {
        wait_state(&server, queue, id, "succeeded", Duration::from_secs(15)).await;
    }
    assert_eq!(
        server.get_task(queue, "report-other-1").await["state"],
        "failed",
        "outside the filter"
    );
    assert_eq!(target.received_for("report-other-1").len(), 1);
    b.shot("bulk-redriven").await;
    b.close().await;
}

/// A deep link survives the login it leads through; an error is told once;
/// an unknown console address is a page of the console, not the API's
/// JSON; and the login page says why a session ended: a logout, or a key
/// revoked meanwhile.
async fn deep_links_unknown_pages_and_ended_sessions_are_told(backend: Backend) {
    let server = Server::start(backend).await;
    server.create_queue("reports").await;
    server
        .post(
            "/v1/principals",
            json!({"name": "ops", "kind": "service", "role": "writer"}),
        )
        .await
        .ok(201);
    let created = server.post_empty("/v1/principals/ops/keys").await;
    let created = created.ok(201).json.clone();
    let key = created["key"].as_str().unwrap().to_string();
    let key_id = created["id"].as_str().unwrap().to_string();
    let base = server.base().to_string();
    let b = Browser::start(&format!("{}-links", backend_name(backend))).await;

    // Not logged in: the deep link goes to the login page, and back after.
    let deep = "/ui/queues/reports?state=failed&id_prefix=report-";
    b.goto(&format!("{base}{deep}")).await;
    b.wait_path("/ui/login").await;
    b.type_into("#key", &key).await;
    b.click("section.login button[type=submit]").await;
    b.wait_path("/ui/queues/reports").await;
    let url = b.client.current_url().await.expect("url");
    assert_eq!(url.query(), Some("state=failed&id_prefix=report-"));
    assert_eq!(
        b.attr("form.search input[name=id_prefix]", "value")
            .await
            .as_deref(),
        Some("report-")
    );

    // A bad filter: its error, once.
    b.goto(&format!("{base}/ui/queues/reports?created_after=yesterday"))
        .await;
    let problem = b.text("p.problem").await;
    assert_eq!(
        problem.matches("created_after: must be").count(),
        1,
        "{problem}"
    );

    // An address of no page: the console's own 404, in its frame.
    let http = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let resp = http
        .get(format!("{base}/ui/nothing/here"))
        .send()
        .await
        .unwrap();
    assert_eq!(
        resp.status().as_u16(),
        303,
        "not logged in: to the login page"
    );
    assert_eq!(
        resp.headers()["location"],
        "/ui/login?next=%2Fui%2Fnothing%2Fhere"
    );
    b.goto(&format!("{base}/ui/nothing/here")).await;
    assert_eq!(b.text("h1").await, "Not found");
    assert_eq!(b.count("header nav a[href='/ui/queues']").await, 1);
    b.shot("not-found").await;

    // A login page never sends anyone to another site.
    b.goto(&format!("{base}/ui/login?next=//example.com/x"))
        .await;
    assert_eq!(
        b.path().await,
        "/ui/queues",
        "logged in already: home, not away"
    );

    // Logout says so.
    b.click("form[action='/ui/logout'] button").await;
    b.wait_path("/ui/login").await;
    assert_eq!(b.text("p.notice").await, "You logged out.");

    // A key revoked while its session lives: the next page says why.
    b.login(&base, &key).await;
    server
        .delete(&format!("/v1/principals/ops/keys/{key_id}"))
        .await
        .ok(204);
    b.goto(&format!("{base}/ui/queues/reports")).await;
    b.wait_path("/ui/login").await;
    let notice = b.text("p.notice").await;
    assert!(notice.contains("no longer valid"), "{notice}");
    b.shot("session-revoked").await;
    b.close().await;
}

/// Every time says its zone: lists count from now (the exact UTC time on
/// hover), the oldest due task shows how long it has waited, a job's
/// instants are in its own zone beside UTC, and a paused job's are marked
/// as the runs it would make once resumed.
async fn times_say_their_zone_and_a_paused_jobs_runs_wait_for_resume(backend: Backend) {
    let server = Server::start(backend).await;
    let target = Target::start().await;
    server.create_paused_queue("held").await;
    server
        .create_task(
            "held",
            json!({"task_id": "t1", "target": {"url": target.url("/ok")}}),
        )
        .await;
    crate::harness::jobs::create_job(
        &server,
        json!({"name": "nightly", "schedule": "0 2 * * *",
               "time_zone": "Europe/Berlin", "target": {"url": target.url("/ok")}}),
    )
    .await;
    let base = server.base().to_string();
    let b = Browser::start(&format!("{}-times", backend_name(backend))).await;
    b.login(&base, &server.admin_key).await;

    b.goto(&format!("{base}/ui/queues/held")).await;
    let waited = b.text("section.stats .stat:has(time) .n").await;
    let unit = waited.split(' ').nth(1).unwrap_or("");
    assert!(
        waited.split(' ').next().unwrap().parse::<u64>().is_ok() && ["s", "min"].contains(&unit),
        "the oldest due task's wait, as an age: {waited:?}"
    );
    let created = b.find("table.tasks tbody td:nth-child(6) time").await;
    assert!(created.text().await.unwrap().ends_with(" ago"));
    let exact = created.attr("title").await.unwrap().unwrap_or_default();
    assert!(exact.ends_with(" UTC"), "{exact}");
    b.click_to("a.task-link", "/ui/queues/held/tasks/t1").await;
    for t in b
        .client
        .find_all(Locator::Css("dl.fields time"))
        .await
        .unwrap()
    {
        let shown = t.text().await.unwrap();
        assert!(
            shown.ends_with(" UTC"),
            "a time without its zone: {shown:?}"
        );
    }

    b.goto(&format!("{base}/ui/jobs")).await;
    let next = b.text("table.jobs tbody td:nth-child(4)").await;
    assert!(next.starts_with("in "), "{next}");
    assert!(
        next.contains("02:00 CET") || next.contains("02:00 CEST"),
        "{next}"
    );
    b.goto(&format!("{base}/ui/jobs/nightly")).await;
    let first = b.text("ol.preview li").await;
    assert!(
        first.contains("02:00:00 CET · ") && first.contains("01:00:00 UTC")
            || first.contains("02:00:00 CEST · ") && first.contains("00:00:00 UTC"),
        "in the job's zone beside UTC: {first}"
    );
    assert_eq!(b.text("div.split h2").await, "Next instants");

    server.post_empty("/v1/jobs/nightly/pause").await.ok(200);
    b.goto(&format!("{base}/ui/jobs")).await;
    let next = b.text("table.jobs tbody td:nth-child(4)").await;
    assert!(next.starts_with("when resumed"), "{next}");
    b.goto(&format!("{base}/ui/jobs/nightly")).await;
    assert_eq!(b.text("div.split h2").await, "Next instants, when resumed");
    assert_eq!(b.count("ol.preview.paused li").await, 5);
    b.shot("job-paused").await;
    b.close().await;
}

/// An admin manages access in the console: creates a principal and a key
/// for it (shown once, with a button to copy it), sees which key is this
/// session's, and finishes a rotation by deleting the older secret.
async fn an_admin_creates_a_principal_and_its_key_and_finishes_a_rotation(backend: Backend) {
    let server = Server::start(backend).await;
    let base = server.base().to_string();
    let b = Browser::start(&format!("{}-access", backend_name(backend))).await;
    b.login(&base, &server.admin_key).await;
    b.click_to("header nav a[href='/ui/access']", "/ui/access")
        .await;
    assert_eq!(
        b.count("table.keys tr.own").await,
        1,
        "this session's key is marked"
    );
    assert!(b.text("tr.own td.id").await.contains("this session's key"));

    b.type_into("form.create input[name=name]", "billing-worker")
        .await;
    b.click("form.create button[type=submit]").await;
    b.appears(".flash").await;
    assert!(b.text(".flash").await.contains("Principal created"));
    let principals = server.get("/v1/principals").await;
    let created = principals.ok(200).json["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == "billing-worker")
        .cloned()
        .expect("the principal");
    assert_eq!(created["role"], "writer");

    b.click("section.principal:has(h3) form[action='/ui/principals/billing-worker/keys'] button")
        .await;
    b.appears("#new-secret").await;
    let key = b.text("#new-secret").await;
    assert!(
        b.find("button[data-copy=new-secret]")
            .await
            .is_displayed()
            .await
            .unwrap()
    );
    let with_key = reqwest::Client::new()
        .get(format!("{base}/v1/queues"))
        .bearer_auth(&key)
        .send()
        .await
        .unwrap();
    assert_eq!(with_key.status().as_u16(), 200, "the new key works");
    b.shot("access-new-key").await;
    b.goto(&format!("{base}/ui/access")).await;
    assert_eq!(b.count("#new-secret").await, 0, "shown once");

    b.click("button[data-action=rotate]").await;
    b.appears(".flash").await;
    assert_eq!(b.count("table.secrets tbody tr").await, 2);
    assert_eq!(
        b.count("table.secrets tbody tr:first-child button[data-action=delete-secret]")
            .await,
        0,
        "the newest secret cannot be deleted here"
    );
    b.click("table.secrets tbody tr:nth-child(2) button[data-action=delete-secret]")
        .await;
    b.client.accept_alert().await.expect("confirm the delete");
    b.appears(".flash").await;
    assert!(b.text(".flash").await.contains("Signing secret deleted"));
    assert_eq!(b.count("table.secrets tbody tr").await, 1);
    let secrets = server.get("/v1/signing-secrets").await;
    assert_eq!(secrets.ok(200).json["secrets"].as_array().unwrap().len(), 1);
    b.close().await;
}

/// A task's page puts its attempts first and its payload in full
/// (indented, folded when long, copyable); its error banner follows its
/// state; and a page left open refreshes itself once asked to.
async fn a_task_page_shows_attempts_and_payload_and_a_page_refreshes_itself(backend: Backend) {
    let server = Server::start(backend).await;
    let target = Target::start().await;
    server
        .create_queue_with(json!({"name": "live", "retry_config": {"max_attempts": 1}}))
        .await;
    let lines: Vec<Value> = (0..400)
        .map(|i| json!({"line": i, "sku": format!("SKU-{i:05}"), "qty": 1}))
        .collect();
    let body = json!({"order": "o-1", "lines": lines}).to_string();
    assert!(body.len() > 15_000);
    server
        .create_task(
            "live",
            json!({"task_id": "big", "target": {"url": target.url("/fail/1/503"), "body": body}}),
        )
        .await;
    wait_state(&server, "live", "big", "failed", Duration::from_secs(15)).await;
    let base = server.base().to_string();
    let b = Browser::start(&format!("{}-task", backend_name(backend))).await;
    b.login(&base, &server.admin_key).await;

    b.goto(&format!("{base}/ui/queues/live/tasks/big")).await;
    assert!(b.text(".last-error").await.contains("503"));
    // Attempts come before the payload, which is indented and folded.
    let order: Vec<String> = {
        let mut names = Vec::new();
        for e in b
            .client
            .find_all(Locator::Css("main h2, main details.json summary"))
            .await
            .unwrap()
        {
            names.push(e.text().await.unwrap());
        }
        names
    };
    assert!(order[0].starts_with("Attempts"), "{order:?}");
    let folded = b.find("details.json:has(#text-target-body)").await;
    assert_eq!(
        folded.attr("open").await.unwrap(),
        None,
        "a long body is folded"
    );
    assert!(
        b.text("details.json:has(#text-target-body) summary")
            .await
            .contains("KiB, folded")
    );
    b.click("details.json:has(#text-target-body) summary").await;
    let shown = b.text("#text-target-body").await;
    assert!(
        shown.contains("\n  \"lines\": [\n"),
        "indented: {}",
        &shown[..80]
    );
    assert!(shown.contains("SKU-00399"), "in full");
    assert!(
        b.find("button[data-copy=text-target-body]")
            .await
            .is_displayed()
            .await
            .unwrap()
    );
    b.shot("task-payload").await;

    // Redriven, it is no longer failed, and the banner goes.
    b.click("button[data-action=redrive]").await;
    b.appears(".flash").await;
    assert_eq!(
        b.count(".last-error").await,
        0,
        "a redriven task is not failed"
    );

    // Auto-refresh: the queue's page shows a task created after it loaded.
    b.goto(&format!("{base}/ui/queues/live")).await;
    assert!(
        b.find("header .refresh")
            .await
            .is_displayed()
            .await
            .unwrap()
    );
    b.find("#refresh-every")
        .await
        .select_by_value("2")
        .await
        .expect("choose 2 s");
    b.click("#auto-refresh").await;
    server
        .create_task(
            "live",
            json!({"task_id": "late", "target": {"url": target.url("/ok")}}),
        )
        .await;
    let deadline = Instant::now() + Duration::from_secs(10);
    while b.count("a.task-link[href$='/late']").await == 0 {
        assert!(Instant::now() < deadline, "the page did not refresh itself");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    // The choice is remembered on the next page, and can be undone.
    b.goto(&format!("{base}/ui/jobs")).await;
    assert!(
        b.find("#auto-refresh")
            .await
            .prop("checked")
            .await
            .unwrap()
            .as_deref()
            == Some("true")
    );
    b.click("#auto-refresh").await;
    b.close().await;
}

/// A failed attempt shows what its target answered (JSON indented), and a
/// job's run opens from the job's page to its attempts and durations.
async fn a_failed_attempt_shows_its_answer_and_a_run_opens_to_its_attempts(backend: Backend) {
    let server = Server::start(backend).await;
    let target = Target::start().await;
    server
        .create_queue_with(json!({"name": "pay", "retry_config": {"max_attempts": 1}}))
        .await;
    server
        .create_task(
            "pay",
            json!({"task_id": "charge-7", "target": {"url": target.url("/declined")}}),
        )
        .await;
    for name in ["ledger", "other"] {
        crate::harness::jobs::create_job(
            &server,
            json!({"name": name, "schedule": "0 0 1 1 *",
                   "target": {"url": target.url("/answer/500/40")}}),
        )
        .await;
    }
    let run_id =
        crate::harness::jobs::run_until(&server, "ledger", "failed", Duration::from_secs(15)).await;
    wait_state(
        &server,
        "pay",
        "charge-7",
        "failed",
        Duration::from_secs(15),
    )
    .await;

    let base = server.base().to_string();
    let b = Browser::start(&format!("{}-answers", backend_name(backend))).await;
    b.login(&base, &server.admin_key).await;
    b.goto(&format!("{base}/ui/queues/pay/tasks/charge-7"))
        .await;
    assert!(
        b.text("details.answer summary")
            .await
            .contains("application/json")
    );
    let answer = b.text("table.attempts pre.answer-body").await;
    assert!(
        answer.contains("\"decline_code\": \"insufficient_funds\""),
        "indented JSON: {answer}"
    );
    b.shot("attempt-answer").await;

    b.goto(&format!("{base}/ui/jobs/ledger")).await;
    b.click_to("a.run-link", &format!("/ui/jobs/ledger/runs/{run_id}"))
        .await;
    assert!(b.text("main h1").await.contains(&run_id));
    assert_eq!(b.count("table.attempts tbody tr:not(.response)").await, 1);
    assert!(b.text("table.attempts td.num.bad").await.contains("500"));
    assert!(
        b.text("table.attempts tbody tr td:nth-child(4)")
            .await
            .ends_with("ms")
    );
    assert!(
        b.text("table.attempts pre.answer-body")
            .await
            .starts_with("refused with 500")
    );
    // A run of another job is not found under this one.
    b.goto(&format!("{base}/ui/jobs/other/runs/{run_id}")).await;
    assert!(b.text(".problem").await.contains("not found"));
    assert_eq!(b.count("table.attempts").await, 0);
    b.close().await;
}

/// With scripts off, an operator still logs in, finds a task by its ID,
/// reads its attempt and the target's answer, redrives it, filters and
/// pages the list, opens a job's run, runs the job and creates a principal
/// with a key; only auto-refresh and the copy buttons are missing.
async fn every_page_works_without_javascript(backend: Backend) {
    let server = Server::start(backend).await;
    let target = Target::start().await;
    failed_task(&server, &target, "billing", "charge-1").await;
    for i in 0..60 {
        server
            .create_task(
                "billing",
                json!({"task_id": format!("later-{i:02}"), "schedule_time": "2999-01-01T00:00:00Z",
                       "target": {"url": target.url("/ok")}}),
            )
            .await;
    }
    let base = server.base().to_string();
    let b = Browser::without_script(&format!("{}-noscript", backend_name(backend))).await;
    b.login(&base, &server.admin_key).await;
    // The script unhides these; without it they stay hidden.
    assert!(
        b.attr("header .refresh", "hidden").await.is_some(),
        "auto-refresh needs the script, so it is not offered"
    );

    b.type_into("header form.find input[name=task_id]", "charge-1")
        .await;
    b.find("header form.find input[name=task_id]")
        .await
        .send_keys("\u{E007}")
        .await
        .expect("press Enter");
    b.wait_path("/ui/queues/billing/tasks/charge-1").await;
    assert!(b.text(".last-error").await.contains("503"));
    assert!(b.text("table.attempts td.num.bad").await.contains("503"));
    assert_eq!(
        b.count("button[data-copy]").await,
        b.count("button[data-copy][hidden]").await,
        "copy buttons need the script"
    );
    b.click("button[data-action=redrive]").await;
    b.appears(".flash").await;
    assert!(b.text(".flash").await.contains("redriven"));
    b.shot("task").await;

    b.goto(&format!("{base}/ui/queues/billing?state=scheduled"))
        .await;
    assert_eq!(b.count("a.task-link").await, 50);
    b.click("nav.pages a.next").await;
    b.wait_until_text("nav.pages .range", "51–60 of 60").await;
    assert_eq!(b.count("a.task-link").await, 10);

    b.goto(&format!("{base}/ui/jobs")).await;
    b.click_to("a.job-link", "/ui/jobs/nightly-report").await;
    b.click("button[data-action=run]").await;
    b.appears(".flash").await;
    b.reload_until("table.runs tbody", "manual", Duration::from_secs(10))
        .await;
    b.click("a.run-link").await;
    b.appears("table.attempts").await;
    assert!(b.path().await.starts_with("/ui/jobs/nightly-report/runs/"));

    b.goto(&format!("{base}/ui/access")).await;
    b.type_into("form.create input[name=name]", "night-ops")
        .await;
    b.click("form.create button[type=submit]").await;
    b.appears(".flash").await;
    assert!(b.text(".flash").await.contains("Principal created"));
    b.close().await;
}

/// A long list pages back and forth and says where it is and how long it
/// is ("51–100 of 120"), keeping its filter.
async fn pages_go_back_and_forth_and_say_their_total(backend: Backend) {
    let server = Server::start(backend).await;
    server.create_paused_queue("bulk").await;
    let tasks: Vec<Value> = (0..120)
        .map(|i| json!({"task_id": format!("t{i:03}"), "target": {"url": "http://127.0.0.1:9/"}}))
        .collect();
    server
        .post("/v1/queues/bulk/tasks:batch", json!({"tasks": tasks}))
        .await
        .ok(200);
    let base = server.base().to_string();
    let b = Browser::start(&format!("{}-pages", backend_name(backend))).await;
    b.login(&base, &server.admin_key).await;
    b.goto(&format!("{base}/ui/queues/bulk?state=queued")).await;
    let at = async |want: &str, first: &str| {
        assert_eq!(b.text("nav.pages .range").await, want);
        assert_eq!(b.text("a.task-link").await, first);
    };
    at("1–50 of 120", "t000").await;
    assert_eq!(b.count("nav.pages a.prev").await, 0);
    b.click("nav.pages a.next").await;
    b.appears("nav.pages a.prev").await;
    at("51–100 of 120", "t050").await;
    b.click("nav.pages a.next").await;
    b.wait_until_text("nav.pages .range", "101–120 of 120")
        .await;
    at("101–120 of 120", "t100").await;
    assert_eq!(b.count("nav.pages a.next").await, 0, "the last page");
    let url = b.client.current_url().await.unwrap();
    assert!(
        url.query().unwrap().contains("state=queued"),
        "the filter is kept"
    );
    b.click("nav.pages a.prev").await;
    b.wait_until_text("nav.pages .range", "51–100 of 120").await;
    at("51–100 of 120", "t050").await;
    b.click("nav.pages a.prev").await;
    b.wait_until_text("nav.pages .range", "1–50 of 120").await;
    assert_eq!(b.count("nav.pages a.prev").await, 0, "back at the start");
    // A filter the statistics cannot count: the rows, without a total.
    b.goto(&format!("{base}/ui/queues/bulk?id_prefix=t1")).await;
    assert_eq!(b.text("nav.pages .range").await, "1–20", "t100 to t119");
    b.close().await;
}

/// A task is found by its ID from any page, whichever queue holds it.
async fn a_task_is_found_by_its_id_from_any_page(backend: Backend) {
    let server = Server::start(backend).await;
    // More queues than one round of reads takes (16), so that "reports"
    // and "q18" are read in a later round than "billing".
    let mut queues: Vec<String> = (0..20).map(|i| format!("q{i:02}")).collect();
    queues.extend(["billing".to_string(), "reports".to_string()]);
    for q in &queues {
        server.create_paused_queue(q).await;
    }
    for (q, id) in [
        ("reports", "inv-9"),
        ("billing", "dup"),
        ("q18", "dup"),
        ("reports", "dup"),
    ] {
        server
            .create_task(
                q,
                json!({"task_id": id, "target": {"url": "http://127.0.0.1:9/"}}),
            )
            .await;
    }
    let base = server.base().to_string();
    let b = Browser::start(&format!("{}-find", backend_name(backend))).await;
    b.login(&base, &server.admin_key).await;
    let find = async |id: &str| {
        let field = b.find("header form.find input[name=task_id]").await;
        field
            .send_keys(&format!("{id}\n"))
            .await
            .expect("type an ID");
    };

    b.goto(&format!("{base}/ui/jobs")).await;
    find("inv-9").await;
    b.wait_path("/ui/queues/reports/tasks/inv-9").await;

    find("dup").await;
    b.wait_path("/ui/find").await;
    assert_eq!(
        b.count("table.found a.task-link").await,
        3,
        "in three queues"
    );
    b.click_to(
        "table.found a.task-link[href='/ui/queues/billing/tasks/dup']",
        "/ui/queues/billing/tasks/dup",
    )
    .await;

    find("nope").await;
    b.wait_path("/ui/find").await;
    assert!(b.text("p.empty").await.contains("No queue you can see"));
    find("bad id!").await;
    b.appears("p.problem").await;
    assert!(b.text("p.problem").await.contains("task_id"));
    b.close().await;
}

/// An operator edits a queue's limits in human units and creates a task
/// from the console; a value the form cannot read is named, and nothing
/// changes.
async fn limits_are_edited_in_human_units_and_tasks_created_from_the_console(backend: Backend) {
    let server = Server::start(backend).await;
    let target = Target::start().await;
    server.create_queue("ops").await;
    let base = server.base().to_string();
    let b = Browser::start(&format!("{}-edit", backend_name(backend))).await;
    b.login(&base, &server.admin_key).await;
    b.goto(&format!("{base}/ui/queues/ops")).await;

    b.click("details.limits summary").await;
    let set = async |name: &str, value: &str| {
        let field = b.find(&format!("form.edit [name={name}]")).await;
        field.clear().await.expect("clear");
        field.send_keys(value).await.expect("type");
    };
    set("max_concurrent_dispatches", "3").await;
    set("max_dispatches_per_second", "2.5").await;
    set("dispatch_deadline", "2m").await;
    b.click("button[data-action=limits]").await;
    b.appears(".flash").await;
    assert_eq!(b.text(".flash").await, "Limits saved.");
    let q = server.get("/v1/queues/ops").await.ok(200).json.clone();
    assert_eq!(q["rate_limits"]["max_concurrent_dispatches"], 3);
    assert_eq!(q["rate_limits"]["max_dispatches_per_second"], 2.5);
    assert_eq!(q["dispatch_deadline_s"], 120);
    // The form shows the deadline as a duration.
    b.click("details.limits summary").await;
    assert_eq!(
        b.find("form.edit [name=dispatch_deadline]")
            .await
            .prop("value")
            .await
            .unwrap()
            .as_deref(),
        Some("2m")
    );
    set("dispatch_deadline", "soon").await;
    b.click("button[data-action=limits]").await;
    b.appears(".flash.bad").await;
    assert!(
        b.text(".flash")
            .await
            .starts_with("dispatch_deadline: \"soon\"")
    );
    assert_eq!(
        server.get("/v1/queues/ops").await.ok(200).json["dispatch_deadline_s"],
        120
    );

    b.click("details.new-task summary").await;
    b.type_into("form.edit [name=task_id]", "manual-1").await;
    b.type_into("form.edit [name=url]", &target.url("/ok"))
        .await;
    b.type_into("form.edit [name=body]", "{\"invoice\": 42}")
        .await;
    b.click("button[data-action=create-task]").await;
    b.wait_path("/ui/queues/ops/tasks/manual-1").await;
    assert_eq!(b.text(".flash").await, "Task created.");
    wait_state(
        &server,
        "ops",
        "manual-1",
        "succeeded",
        Duration::from_secs(15),
    )
    .await;
    assert_eq!(target.received_for("manual-1").len(), 1);
    b.shot("task-created").await;

    // A pull queue's task carries a JSON payload.
    server
        .create_queue_with(json!({"name": "work", "mode": "pull"}))
        .await;
    b.goto(&format!("{base}/ui/queues/work")).await;
    b.click("details.new-task summary").await;
    b.type_into("form.edit [name=task_id]", "job-7").await;
    b.type_into("form.edit [name=payload]", "{\"n\": 7}").await;
    b.click("button[data-action=create-task]").await;
    b.wait_path("/ui/queues/work/tasks/job-7").await;
    let task = server.get_task("work", "job-7").await;
    assert_eq!(task["payload"]["json"], json!({"n": 7}), "{task}");
    b.close().await;
}

idem_testkit::store_tests!(
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    logins_of_one_key_never_end_another_keys_session,
    login_attempts_from_one_address_are_limited,
    an_operator_finds_a_failed_task_and_redrives_it,
    a_reader_sees_everything_and_no_acting_button,
    a_post_without_the_csrf_token_is_refused_and_logout_ends_the_session,
    the_session_cookie_is_secure_behind_https,
    pages_of_what_cannot_exist_answer_with_the_apis_status,
    bulk_actions_act_on_the_filter_and_name_their_count,
    deep_links_unknown_pages_and_ended_sessions_are_told,
    times_say_their_zone_and_a_paused_jobs_runs_wait_for_resume,
    an_admin_creates_a_principal_and_its_key_and_finishes_a_rotation,
    a_task_page_shows_attempts_and_payload_and_a_page_refreshes_itself,
    pages_go_back_and_forth_and_say_their_total,
    a_task_is_found_by_its_id_from_any_page,
    limits_are_edited_in_human_units_and_tasks_created_from_the_console,
    a_failed_attempt_shows_its_answer_and_a_run_opens_to_its_attempts,
    every_page_works_without_javascript,
);
