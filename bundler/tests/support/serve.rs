//! A server process a test started (stopped when dropped), free ports on 127.0.0.1 for it,
//! and plain HTTP/1.1 GETs to it over a raw socket (what a client sends, nothing more).

#![allow(dead_code)]

use std::io::{Read, Write};
use std::process::Child;

/// A child process stopped (SIGTERM, then SIGKILL) and reaped when the test lets go of it,
/// pass or panic.
pub struct Server(pub Child);

impl Drop for Server {
    fn drop(&mut self) {
        // SIGTERM first, so the server removes its temporary cache as users' servers do;
        // SIGKILL only when it has not stopped after a few seconds.
        if let Ok(pid) = i32::try_from(self.0.id()) {
            unsafe { libc::kill(pid, libc::SIGTERM) };
            let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
            while std::time::Instant::now() < deadline {
                if matches!(self.0.try_wait(), Ok(Some(_))) {
                    return;
                }
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
        }
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A port on 127.0.0.1 free a moment ago.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// `GET path` on 127.0.0.1:`port`, the connection closed after: the status and the body
/// (lossy UTF-8).
pub fn http_get(port: u16, path: &str) -> (u16, String) {
    let mut s = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut raw = Vec::new();
    s.read_to_end(&mut raw).unwrap();
    let text = String::from_utf8_lossy(&raw).into_owned();
    let status = text
        .get(9..12)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("GET {path}: not an HTTP answer: {text}"));
    let body = text
        .split_once("\r\n\r\n")
        .map(|(_, b)| b)
        .unwrap_or_default();
    (status, body.to_string())
}
