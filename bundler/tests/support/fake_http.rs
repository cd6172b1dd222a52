//! A registry that misbehaves on purpose: a tiny HTTP/1.1 server on 127.0.0.1 whose answers a
//! test writes as a function of the request, and which records every request it saw (with
//! its headers) for the test to inspect. One request per connection.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};

/// A request as received.
#[derive(Clone, Debug)]
pub struct Request {
    pub method: String,
    pub path: String,
    /// Header names lower-cased.
    pub headers: Vec<(String, String)>,
}

impl Request {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
}

/// What to answer.
pub enum Reply {
    /// Status, headers, body (Content-Length is added).
    Full(u16, Vec<(String, String)>, Vec<u8>),
    /// Status and headers, then `chunks` chunks of `chunk` bytes each, chunked encoding
    /// (no length announced); the server stops when the client hangs up.
    Chunked(u16, Vec<(String, String)>, Vec<u8>, usize),
}

pub struct Server {
    pub addr: String,
    pub seen: Arc<Mutex<Vec<Request>>>,
}

impl Server {
    pub fn start(handler: impl Fn(&Request) -> Reply + Send + Sync + 'static) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap().to_string();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let handler = Arc::new(handler);
        let log = seen.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { continue };
                let handler = handler.clone();
                let log = log.clone();
                std::thread::spawn(move || serve(stream, &*handler, &log));
            }
        });
        Server { addr, seen }
    }

    pub fn requests(&self) -> Vec<Request> {
        self.seen.lock().unwrap().clone()
    }
}

fn serve(stream: TcpStream, handler: &dyn Fn(&Request) -> Reply, log: &Mutex<Vec<Request>>) {
    // A TLS handshake (a client probing for HTTPS) is hung up on: this server is plain HTTP.
    let mut first = [0u8; 1];
    if stream.peek(&mut first).map_or(true, |n| n == 0) || first[0] == 0x16 {
        return;
    }
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut line = String::new();
    if reader.read_line(&mut line).unwrap_or(0) == 0 {
        return;
    }
    let mut parts = line.split_whitespace();
    let method = parts.next().unwrap_or("").to_string();
    let path = parts.next().unwrap_or("").to_string();
    let mut headers = Vec::new();
    loop {
        let mut h = String::new();
        if reader.read_line(&mut h).unwrap_or(0) == 0 || h.trim().is_empty() {
            break;
        }
        if let Some((k, v)) = h.split_once(':') {
            headers.push((k.trim().to_ascii_lowercase(), v.trim().to_string()));
        }
    }
    let req = Request {
        method,
        path,
        headers,
    };
    log.lock().unwrap().push(req.clone());
    let mut out = stream;
    let head = |status: u16, headers: &[(String, String)]| {
        let mut s = format!("HTTP/1.1 {status} X\r\nConnection: close\r\n");
        for (k, v) in headers {
            s.push_str(&format!("{k}: {v}\r\n"));
        }
        s
    };
    match handler(&req) {
        Reply::Full(status, headers, body) => {
            let mut s = head(status, &headers);
            s.push_str(&format!("Content-Length: {}\r\n\r\n", body.len()));
            let _ = out.write_all(s.as_bytes());
            if req.method != "HEAD" {
                let _ = out.write_all(&body);
            }
        }
        Reply::Chunked(status, headers, chunk, chunks) => {
            let mut s = head(status, &headers);
            s.push_str("Transfer-Encoding: chunked\r\n\r\n");
            if out.write_all(s.as_bytes()).is_err() {
                return;
            }
            for _ in 0..chunks {
                let framed =
                    [format!("{:x}\r\n", chunk.len()).as_bytes(), &chunk, b"\r\n"].concat();
                if out.write_all(&framed).is_err() {
                    return;
                }
            }
            let _ = out.write_all(b"0\r\n\r\n");
        }
    }
}
