//! A static file server on a loopback port, for checking a release the way users reach it:
//! its `whl/<variant>/` index and its wheels over HTTP, as GitHub Pages and release assets
//! serve them. GET and HEAD only, files below one folder only (no `..`, no links out), a
//! folder served as its index.html; one thread per connection, stopped when dropped. Every
//! Python a check runs gets [`loopback_direct`], so that no proxy answers for this server.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Component, Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use anyhow::{Context, Result};

/// The hosts a check serves on, which no proxy may answer for.
const LOOPBACK_HOSTS: [&str; 3] = ["127.0.0.1", "localhost", "::1"];

/// `no_proxy` and `NO_PROXY` as this process has them, with the loopback hosts added: pip
/// sends a request for the release served on 127.0.0.1 to the proxy `http_proxy` names
/// unless `no_proxy` covers the host, `--isolated` or not (tried with pip 23.2.1; requests
/// reads both spellings, psf/requests `src/requests/utils.py`, `should_bypass_proxies`),
/// and that proxy would then answer for the release: slowly, with a redirect, or with
/// other wheels.
pub(crate) fn loopback_direct() -> BTreeMap<String, String> {
    let mut hosts: Vec<String> = ["no_proxy", "NO_PROXY"]
        .iter()
        .filter_map(|name| std::env::var(name).ok())
        .flat_map(|value| {
            value
                .split(',')
                .map(|h| h.trim().to_string())
                .collect::<Vec<_>>()
        })
        .filter(|h| !h.is_empty())
        .collect();
    for host in LOOPBACK_HOSTS {
        if !hosts.iter().any(|h| h == host) {
            hosts.push(host.to_string());
        }
    }
    let value = hosts.join(",");
    ["no_proxy", "NO_PROXY"]
        .map(|name| (name.to_string(), value.clone()))
        .into()
}

pub struct Server {
    pub port: u16,
    stop: Arc<AtomicBool>,
}

impl Server {
    /// Serves `root` on 127.0.0.1 at a free port.
    pub fn start(root: &Path) -> Result<Server> {
        let listener = TcpListener::bind("127.0.0.1:0").context("cannot listen on loopback")?;
        let port = listener.local_addr()?.port();
        let stop = Arc::new(AtomicBool::new(false));
        let (root, flag) = (root.to_path_buf(), stop.clone());
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                if flag.load(Ordering::SeqCst) {
                    break;
                }
                let Ok(stream) = stream else { continue };
                let root = root.clone();
                std::thread::spawn(move || {
                    let _ = serve_one(stream, &root);
                });
            }
        });
        Ok(Server { port, stop })
    }

    /// `http://127.0.0.1:PORT` + `path`
    pub fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wake the accept loop so that it sees the flag.
        let _ = TcpStream::connect(("127.0.0.1", self.port));
    }
}

fn serve_one(mut stream: TcpStream, root: &Path) -> std::io::Result<()> {
    stream.set_read_timeout(Some(Duration::from_secs(30)))?;
    let mut reader = BufReader::new(stream.try_clone()?);
    let mut request = String::new();
    reader.read_line(&mut request)?;
    // The headers are read and ignored.
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line)? == 0 || line.trim().is_empty() {
            break;
        }
    }
    let mut parts = request.split_whitespace();
    let (method, target) = (parts.next().unwrap_or(""), parts.next().unwrap_or(""));
    if method != "GET" && method != "HEAD" {
        return respond(
            &mut stream,
            "405 Method Not Allowed",
            "text/plain",
            b"",
            true,
        );
    }
    let Some(path) = resolve(root, target) else {
        return respond(
            &mut stream,
            "404 Not Found",
            "text/plain",
            b"not found\n",
            method == "GET",
        );
    };
    let mut body = Vec::new();
    std::fs::File::open(&path)?.read_to_end(&mut body)?;
    let kind = if path.extension().is_some_and(|e| e == "html") {
        "text/html"
    } else {
        "application/octet-stream"
    };
    respond(&mut stream, "200 OK", kind, &body, method == "GET")
}

fn respond(
    stream: &mut TcpStream,
    status: &str,
    kind: &str,
    body: &[u8],
    with_body: bool,
) -> std::io::Result<()> {
    write!(
        stream,
        "HTTP/1.1 {status}\r\nContent-Type: {kind}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    )?;
    if with_body {
        stream.write_all(body)?;
    }
    stream.flush()
}

/// The file `target` (a request path, percent-decoded, query dropped) names below `root`,
/// a folder meaning its index.html; `None` for anything else or outside.
fn resolve(root: &Path, target: &str) -> Option<PathBuf> {
    let path = target.split(['?', '#']).next()?;
    let decoded = percent_decode(path)?;
    let mut out = root.to_path_buf();
    for component in Path::new(decoded.trim_start_matches('/')).components() {
        match component {
            Component::Normal(part) => out.push(part),
            Component::CurDir => {}
            _ => return None,
        }
    }
    let meta = std::fs::symlink_metadata(&out).ok()?;
    if meta.is_dir() {
        out.push("index.html");
    }
    let meta = std::fs::symlink_metadata(&out).ok()?;
    meta.is_file().then_some(out)
}

fn percent_decode(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = text.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn get(url: &str) -> (String, Vec<u8>) {
        let rest = url.strip_prefix("http://").unwrap();
        let (host, path) = rest.split_once('/').unwrap();
        let mut stream = TcpStream::connect(host).unwrap();
        write!(stream, "GET /{path} HTTP/1.1\r\nHost: {host}\r\n\r\n").unwrap();
        let mut all = Vec::new();
        stream.read_to_end(&mut all).unwrap();
        let at = all.windows(4).position(|w| w == b"\r\n\r\n").unwrap();
        let head = String::from_utf8_lossy(&all[..at]).into_owned();
        (
            head.lines().next().unwrap().to_string(),
            all[at + 4..].to_vec(),
        )
    }

    #[test]
    fn files_and_index_pages_are_served_and_nothing_outside() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("site");
        std::fs::create_dir_all(root.join("whl/cpu")).unwrap();
        std::fs::write(root.join("whl/cpu/index.html"), "<a>x</a>").unwrap();
        std::fs::write(root.join("a+b.whl"), "wheel").unwrap();
        std::fs::write(dir.path().join("secret"), "no").unwrap();
        let server = Server::start(&root).unwrap();
        assert_eq!(get(&server.url("/whl/cpu/")).1, b"<a>x</a>");
        let (status, body) = get(&server.url("/a%2Bb.whl"));
        assert!(status.contains("200"), "{status}");
        assert_eq!(body, b"wheel");
        for bad in ["/../secret", "/%2E%2E/secret", "/nope", "/whl/%ZZ"] {
            assert!(get(&server.url(bad)).0.contains("404"), "{bad}");
        }
    }
}
