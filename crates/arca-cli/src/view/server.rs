//! The HTTP server of `arca view`: h5grove's API under `/api/`, the viewer
//! app's files at `/`, a random token every request must carry, and the
//! `Host` header checked, so that neither other pages in the browser nor
//! other users of the machine can read the file.

use std::net::{IpAddr, SocketAddr};
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use serde_json::json;
use tiny_http::{Header, Request, Response};

use super::api::{Api, Query, Reply};
use crate::error::CliError;

/// Threads answering requests.
const WORKERS: usize = 4;

/// How `arca view` serves a file.
#[derive(Debug, Clone)]
pub struct Options {
    /// Address to listen on (default `127.0.0.1`: this machine only).
    pub host: String,
    /// Port (0: any free port).
    pub port: u16,
    /// The viewer app's built files (`index.html` and its assets); without
    /// them `/` shows a page saying so and the API still answers.
    pub assets: Option<PathBuf>,
    /// The token requests must carry (default: 32 random bytes, hex).
    pub token: Option<String>,
    /// `KEY=VALUE` options for a file given as a URL on object storage.
    pub storage: Vec<String>,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            host: "127.0.0.1".into(),
            port: 0,
            assets: None,
            token: None,
            storage: Vec::new(),
        }
    }
}

/// What the worker threads share.
struct Shared {
    http: tiny_http::Server,
    api: Api,
    token: String,
    cookie: String,
    hosts: Option<Vec<String>>,
    assets: Option<PathBuf>,
    stopped: AtomicBool,
}

/// A running `arca view` server; dropping it stops it.
///
/// ```no_run
/// use arca_cli::view::{Options, Server};
/// let server = Server::start("run.arca".as_ref(), &Options::default()).unwrap();
/// println!("open {}", server.url());
/// server.wait(None);
/// ```
pub struct Server {
    /// None once stopped: dropping the last reference closes the listener.
    shared: Option<Arc<Shared>>,
    done: Arc<(Mutex<bool>, Condvar)>,
    token: String,
    workers: Vec<JoinHandle<()>>,
    url: String,
    addr: SocketAddr,
}

/// 32 random bytes as hex.
fn random_token() -> Result<String, CliError> {
    let mut b = [0u8; 32];
    getrandom::fill(&mut b)
        .map_err(|e| CliError::Usage(format!("no random numbers for the access token: {e}")))?;
    Ok(b.iter().map(|c| format!("{c:02x}")).collect())
}

/// Percent-encoding for a query value.
fn encode(s: &str) -> String {
    s.bytes()
        .map(|c| match c {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (c as char).to_string()
            }
            _ => format!("%{c:02X}"),
        })
        .collect()
}

impl Server {
    /// Open `file` (a path, or a URL on object storage with
    /// `opts.storage`) read-only and start serving it.
    ///
    /// # Errors
    /// The file cannot be opened, or the address cannot be bound.
    pub fn start(file: &Path, opts: &Options) -> Result<Server, CliError> {
        let f = crate::target::open_file(file, &opts.storage)?;
        let name = file
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let ip: IpAddr = if opts.host == "localhost" {
            IpAddr::from([127, 0, 0, 1])
        } else {
            opts.host
                .trim_matches(|c| c == '[' || c == ']')
                .parse()
                .map_err(|_| CliError::Usage(format!("--host {}: not an IP address", opts.host)))?
        };
        let http = tiny_http::Server::http(SocketAddr::new(ip, opts.port)).map_err(|e| {
            CliError::Usage(format!("cannot listen on {}:{}: {e}", opts.host, opts.port))
        })?;
        let addr = http
            .server_addr()
            .to_ip()
            .ok_or_else(|| CliError::Usage("the server has no IP address".into()))?;
        let port = addr.port();
        let token = match &opts.token {
            Some(t) => t.clone(),
            None => random_token()?,
        };
        let shown = if ip.is_unspecified() {
            "127.0.0.1".to_string()
        } else if ip.is_ipv6() {
            format!("[{ip}]")
        } else {
            ip.to_string()
        };
        // Names a browser on this machine may use; a server on every
        // address answers to any name (the token still guards it).
        let hosts = (!ip.is_unspecified()).then(|| {
            let mut h = vec![
                format!("127.0.0.1:{port}"),
                format!("localhost:{port}"),
                format!("[::1]:{port}"),
                format!("{shown}:{port}"),
            ];
            h.sort();
            h.dedup();
            h
        });
        let url = format!(
            "http://{shown}:{port}/?token={token}&file={}",
            encode(&name)
        );
        let shared = Arc::new(Shared {
            http,
            api: Api::new(f, name),
            cookie: format!("arca_view_{port}"),
            token: token.clone(),
            hosts,
            assets: opts.assets.clone(),
            stopped: AtomicBool::new(false),
        });
        let workers = (0..WORKERS)
            .map(|_| {
                let s = shared.clone();
                std::thread::spawn(move || worker(&s))
            })
            .collect();
        Ok(Server {
            shared: Some(shared),
            done: Arc::new((Mutex::new(false), Condvar::new())),
            token,
            workers,
            url,
            addr,
        })
    }

    /// The page's address, token included.
    pub fn url(&self) -> &str {
        &self.url
    }

    /// The address the server listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The token requests must carry.
    pub fn token(&self) -> &str {
        &self.token
    }

    /// Block until the server is stopped, or `timeout` passes; true when
    /// it has stopped.
    pub fn wait(&self, timeout: Option<Duration>) -> bool {
        let (lock, cv) = &*self.done;
        let mut done = lock.lock().unwrap_or_else(|e| e.into_inner());
        match timeout {
            None => {
                while !*done {
                    done = cv.wait(done).unwrap_or_else(|e| e.into_inner());
                }
                true
            }
            Some(t) => {
                let (d, _) = cv
                    .wait_timeout_while(done, t, |d| !*d)
                    .unwrap_or_else(|e| e.into_inner());
                *d
            }
        }
    }

    /// Stop answering, finish the requests under way and close the port.
    pub fn stop(&mut self) {
        if let Some(shared) = self.shared.take() {
            shared.stopped.store(true, Ordering::SeqCst);
            for _ in 0..self.workers.len() {
                shared.http.unblock();
            }
            for w in self.workers.drain(..) {
                let _ = w.join();
            }
            // The workers held the other references; this drop closes the listener.
            drop(shared);
        }
        let (lock, cv) = &*self.done;
        *lock.lock().unwrap_or_else(|e| e.into_inner()) = true;
        cv.notify_all();
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop();
    }
}

fn worker(s: &Shared) {
    loop {
        match s.http.recv() {
            Ok(rq) => {
                if s.stopped.load(Ordering::SeqCst) {
                    let _ = rq.respond(Response::empty(503));
                    break;
                }
                answer(s, rq);
            }
            Err(_) if s.stopped.load(Ordering::SeqCst) => break,
            Err(_) => continue,
        }
    }
}

fn header(name: &str, value: &str) -> Option<Header> {
    Header::from_bytes(name.as_bytes(), value.as_bytes()).ok()
}

/// Send `reply` (a closed connection is the client's business).
fn send(rq: Request, reply: Reply, extra: Vec<Header>) {
    let mut resp = Response::from_data(reply.body).with_status_code(reply.status);
    let mut headers = vec![
        header("Content-Type", reply.content_type),
        header("X-Content-Type-Options", "nosniff"),
        header("Cache-Control", "no-store"),
        header("Referrer-Policy", "no-referrer"),
    ];
    if let Some(d) = reply.disposition {
        headers.push(header("Content-Disposition", d));
    }
    for h in headers.into_iter().flatten().chain(extra) {
        resp.add_header(h);
    }
    let _ = rq.respond(resp);
}

fn forbidden(why: &str) -> Reply {
    Reply::json(403, &json!({ "message": why }))
}

/// Compare without stopping at the first difference.
fn same(a: &str, b: &str) -> bool {
    a.len() == b.len()
        && a.bytes()
            .zip(b.bytes())
            .fold(0u8, |acc, (x, y)| acc | (x ^ y))
            == 0
}

fn answer(s: &Shared, rq: Request) {
    let url = rq.url().to_string();
    let (path, query) = url.split_once('?').unwrap_or((&url, ""));
    let q = Query::parse(query);
    let host = rq
        .headers()
        .iter()
        .find(|h| h.field.equiv("Host"))
        .map(|h| h.value.as_str().to_ascii_lowercase());
    if let Some(allowed) = &s.hosts {
        if !host.as_ref().is_some_and(|h| allowed.contains(h)) {
            return send(
                rq,
                forbidden("this server answers only to this machine's own names"),
                vec![],
            );
        }
    }
    let cookie_token = rq
        .headers()
        .iter()
        .filter(|h| h.field.equiv("Cookie"))
        .flat_map(|h| {
            h.value
                .as_str()
                .split(';')
                .map(str::trim)
                .map(str::to_string)
                .collect::<Vec<_>>()
        })
        .find_map(|c| {
            c.strip_prefix(&format!("{}=", s.cookie))
                .map(str::to_string)
        });
    let query_ok = q.get("token").is_some_and(|t| same(t, &s.token));
    if let Some(endpoint) = path.strip_prefix("/api") {
        if !query_ok {
            return send(rq, forbidden("missing or wrong token"), vec![]);
        }
        if !matches!(
            rq.method(),
            tiny_http::Method::Get | tiny_http::Method::Head
        ) {
            return send(
                rq,
                Reply::error(&super::error::ApiError::new(405, "only GET")),
                vec![],
            );
        }
        let endpoint = endpoint.trim_matches('/');
        let reply = s.api.handle(endpoint, &q);
        return send(rq, reply, vec![]);
    }
    // The app's own files: the page itself comes with the token in its
    // address, and hands it to the files it loads in a cookie.
    let cookie_ok = cookie_token.as_deref().is_some_and(|t| same(t, &s.token));
    if !(query_ok || cookie_ok) {
        return send(rq, forbidden("missing or wrong token"), vec![]);
    }
    let mut extra = vec![];
    if query_ok {
        extra.extend(header(
            "Set-Cookie",
            &format!(
                "{}={}; Path=/; HttpOnly; SameSite=Strict",
                s.cookie, s.token
            ),
        ));
    }
    send(rq, asset(s.assets.as_deref(), path), extra);
}

/// A file of the app, or 404.
fn asset(dir: Option<&Path>, path: &str) -> Reply {
    let not_found = || Reply::json(404, &json!({"message": format!("{path} not found")}));
    let Some(dir) = dir else {
        if path == "/" || path == "/index.html" {
            return Reply {
                status: 200,
                content_type: "text/html; charset=utf-8",
                disposition: None,
                body: NO_APP.as_bytes().to_vec(),
            };
        }
        return not_found();
    };
    let rel = if path == "/" {
        "index.html"
    } else {
        path.trim_start_matches('/')
    };
    let rel = Path::new(rel);
    if !rel.components().all(|c| matches!(c, Component::Normal(_))) {
        return not_found();
    }
    let full = dir.join(rel);
    match std::fs::read(&full) {
        Ok(body) => Reply {
            status: 200,
            content_type: mime(&full),
            disposition: None,
            body,
        },
        Err(_) => not_found(),
    }
}

fn mime(p: &Path) -> &'static str {
    match p.extension().and_then(|e| e.to_str()).unwrap_or("") {
        "html" => "text/html; charset=utf-8",
        "js" | "mjs" => "text/javascript; charset=utf-8",
        "css" => "text/css; charset=utf-8",
        "json" | "map" => "application/json",
        "svg" => "image/svg+xml",
        "png" => "image/png",
        "ico" => "image/x-icon",
        "woff2" => "font/woff2",
        "woff" => "font/woff",
        "wasm" => "application/wasm",
        "txt" => "text/plain; charset=utf-8",
        _ => "application/octet-stream",
    }
}

/// The page shown when the viewer app's files were not found.
const NO_APP: &str = "<!doctype html><meta charset=utf-8><title>arca view</title>\
<p>The viewer app's files were not found (they ship in the Python package <code>arca</code>, \
under <code>arca/viewer/</code>; or pass <code>--assets DIR</code>). \
The file is still served through h5grove's API at <code>/api/</code>.";
