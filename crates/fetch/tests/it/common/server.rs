//! A loopback HTTP/1.1 server for download tests and benchmarks, scripted per request:
//! each path has a handler that sees the request (and how many times the path was asked
//! for) and says what to answer: a status, a body, whether to honour `Range`, where to cut
//! the connection, how long to stall, how slowly to trickle, which headers to add or replace.

#![allow(dead_code)]

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

/// One request the server received.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hit {
    pub path: String,
    /// The start of a `Range: bytes=N-` header.
    pub range_start: Option<u64>,
}

/// What to answer.
#[derive(Clone)]
pub struct Reply {
    pub status: u16,
    pub body: Arc<Vec<u8>>,
    /// Answer `Range: bytes=N-` with 206 and the tail (otherwise 200 and everything).
    pub ranges: bool,
    /// Close the connection after this many body bytes (Content-Length still claims all).
    pub cut_after: Option<usize>,
    /// Sleep this long before sending anything.
    pub stall: Duration,
    /// Send the body in pieces of this size with `pause` between them.
    pub piece: usize,
    pub pause: Duration,
    /// Extra headers; one named like a header the server writes itself (`Content-Length`,
    /// `Content-Range`) replaces it, whatever the body really is.
    pub headers: Vec<(String, String)>,
}

impl Reply {
    pub fn ok(body: Arc<Vec<u8>>) -> Reply {
        Reply {
            status: 200,
            body,
            ranges: true,
            cut_after: None,
            stall: Duration::ZERO,
            piece: 1 << 20,
            pause: Duration::ZERO,
            headers: Vec::new(),
        }
    }

    pub fn status(status: u16) -> Reply {
        Reply {
            status,
            ..Reply::ok(Arc::new(format!("HTTP {status}\n").into_bytes()))
        }
    }

    pub fn no_ranges(mut self) -> Reply {
        self.ranges = false;
        self
    }

    pub fn cut_after(mut self, bytes: usize) -> Reply {
        self.cut_after = Some(bytes);
        self
    }

    pub fn stall(mut self, time: Duration) -> Reply {
        self.stall = time;
        self
    }

    pub fn trickle(mut self, piece: usize, pause: Duration) -> Reply {
        self.piece = piece.max(1);
        self.pause = pause;
        self
    }

    /// Adds the header `name: value`, or replaces the server's own of that name.
    pub fn header(mut self, name: &str, value: &str) -> Reply {
        self.headers.push((name.to_string(), value.to_string()));
        self
    }
}

/// `(request, how many earlier requests this path had)` → the answer.
pub type Handler = Arc<dyn Fn(&Hit, usize) -> Reply + Send + Sync>;

pub struct Server {
    pub port: u16,
    routes: Arc<Mutex<HashMap<String, Handler>>>,
    /// What answers a path no route names (404 when none).
    fallback: Arc<Mutex<Option<Handler>>>,
    hits: Arc<Mutex<Vec<Hit>>>,
    stop: Arc<AtomicBool>,
}

impl Server {
    pub fn start() -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind a loopback port");
        let port = listener.local_addr().unwrap().port();
        let routes: Arc<Mutex<HashMap<String, Handler>>> = Arc::default();
        let fallback: Arc<Mutex<Option<Handler>>> = Arc::default();
        let hits: Arc<Mutex<Vec<Hit>>> = Arc::default();
        let stop = Arc::new(AtomicBool::new(false));
        let (r, f, h, s) = (routes.clone(), fallback.clone(), hits.clone(), stop.clone());
        thread::spawn(move || {
            for stream in listener.incoming() {
                if s.load(Ordering::SeqCst) {
                    break;
                }
                let Ok(stream) = stream else { continue };
                let (r, f, h) = (r.clone(), f.clone(), h.clone());
                thread::spawn(move || serve(stream, &r, &f, &h));
            }
        });
        Server {
            port,
            routes,
            fallback,
            hits,
            stop,
        }
    }

    /// `http://127.0.0.1:PORT` (no trailing slash).
    pub fn base(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.base())
    }

    pub fn route(
        &self,
        path: &str,
        handler: impl Fn(&Hit, usize) -> Reply + Send + Sync + 'static,
    ) {
        self.routes
            .lock()
            .unwrap()
            .insert(path.to_string(), Arc::new(handler));
    }

    /// What answers every path no route names.
    pub fn fallback(&self, handler: impl Fn(&Hit, usize) -> Reply + Send + Sync + 'static) {
        *self.fallback.lock().unwrap() = Some(Arc::new(handler));
    }

    /// The same reply to every request for `path`.
    pub fn serve(&self, path: &str, body: Arc<Vec<u8>>) {
        self.route(path, move |_, _| Reply::ok(body.clone()));
    }

    pub fn hits(&self, path: &str) -> Vec<Hit> {
        self.hits
            .lock()
            .unwrap()
            .iter()
            .filter(|h| h.path == path)
            .cloned()
            .collect()
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wake the accept loop so that it sees `stop`.
        let _ = TcpStream::connect(("127.0.0.1", self.port));
    }
}

fn serve(
    stream: TcpStream,
    routes: &Mutex<HashMap<String, Handler>>,
    fallback: &Mutex<Option<Handler>>,
    hits: &Mutex<Vec<Hit>>,
) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut request_line = String::new();
    if reader.read_line(&mut request_line).unwrap_or(0) == 0 {
        return;
    }
    let path = request_line
        .split_whitespace()
        .nth(1)
        .unwrap_or("/")
        .to_string();
    let mut range_start = None;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 || line.trim().is_empty() {
            break;
        }
        let lower = line.to_ascii_lowercase();
        if let Some(value) = lower.strip_prefix("range:") {
            range_start = value
                .trim()
                .strip_prefix("bytes=")
                .and_then(|v| v.trim_end_matches('-').parse().ok());
        }
    }
    let hit = Hit { path, range_start };
    let handler = routes
        .lock()
        .unwrap()
        .get(&hit.path)
        .cloned()
        .or_else(|| fallback.lock().unwrap().clone());
    let nth = {
        let mut hits = hits.lock().unwrap();
        let nth = hits.iter().filter(|h| h.path == hit.path).count();
        hits.push(hit.clone());
        nth
    };
    let reply = match handler {
        Some(handler) => handler(&hit, nth),
        None => Reply::status(404),
    };
    let _ = answer(stream, &hit, &reply);
}

fn answer(mut stream: TcpStream, hit: &Hit, reply: &Reply) -> std::io::Result<()> {
    thread::sleep(reply.stall);
    let total = reply.body.len();
    let (status, start) = match hit.range_start {
        Some(start) if reply.ranges && reply.status == 200 && (start as usize) < total => {
            (206, start as usize)
        }
        Some(start) if reply.ranges && reply.status == 200 => {
            let head = format!(
                "HTTP/1.1 416 Range Not Satisfiable\r\nContent-Range: bytes */{total}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
            );
            let _ = start;
            return stream.write_all(head.as_bytes());
        }
        _ => (reply.status, 0),
    };
    let body = &reply.body[start..];
    let mut headers = vec![
        ("Content-Length".to_string(), body.len().to_string()),
        ("Connection".to_string(), "close".to_string()),
    ];
    if status == 206 {
        headers.push((
            "Content-Range".to_string(),
            format!("bytes {start}-{}/{total}", total - 1),
        ));
    }
    headers.retain(|(own, _)| {
        !reply
            .headers
            .iter()
            .any(|(n, _)| n.eq_ignore_ascii_case(own))
    });
    headers.extend(reply.headers.iter().cloned());
    let mut head = format!("HTTP/1.1 {status} X\r\n");
    for (name, value) in &headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes())?;
    let limit = reply.cut_after.unwrap_or(usize::MAX).min(body.len());
    let mut sent = 0;
    while sent < limit {
        let end = (sent + reply.piece).min(limit);
        stream.write_all(&body[sent..end])?;
        sent = end;
        if !reply.pause.is_zero() {
            thread::sleep(reply.pause);
        }
    }
    stream.flush()?;
    if reply.cut_after.is_some() {
        stream.shutdown(Shutdown::Both)?;
    }
    Ok(())
}
