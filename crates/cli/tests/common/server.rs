//! `elect serve` as a child process on a free port, and a small HTTP/1.1 client to ask it.

// Each test crate that includes this module uses a part of it.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// A running `elect serve`, killed when dropped.
pub(crate) struct Server {
    child: Child,
    /// `127.0.0.1:PORT`.
    pub(crate) addr: String,
}

/// An HTTP response.
#[derive(Debug)]
pub(crate) struct Reply {
    pub(crate) status: u16,
    pub(crate) headers: Vec<(String, String)>,
    pub(crate) body: String,
}

impl Reply {
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }

    pub(crate) fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("not JSON ({e}): {}", self.body))
    }
}

impl Server {
    /// Starts `elect serve --listen 127.0.0.1:0 ARGS` and reads the address it prints on its first line.
    pub(crate) fn start(args: &[&str]) -> Self {
        let mut child = Command::new(env!("CARGO_BIN_EXE_elect"))
            .args(["serve", "--listen", "127.0.0.1:0"])
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let mut first = String::new();
        let mut stdout = BufReader::new(child.stdout.take().unwrap());
        stdout.read_line(&mut first).unwrap();
        // The rest is read as it comes, so that the server never writes to a closed pipe.
        std::thread::spawn(move || std::io::copy(&mut stdout, &mut std::io::sink()));
        let addr = first
            .split("http://")
            .nth(1)
            .and_then(|rest| rest.split_whitespace().next())
            .unwrap_or_else(|| panic!("no address on the first line: {first:?}"))
            .to_owned();
        Self { child, addr }
    }

    /// The URL of `path` on this server.
    pub(crate) fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    pub(crate) fn get(&self, path: &str) -> Reply {
        self.request("GET", path, None)
    }

    pub(crate) fn post(&self, path: &str, body: &str) -> Reply {
        self.request("POST", path, Some(body))
    }

    /// One request on a connection of its own.
    pub(crate) fn request(&self, method: &str, path: &str, body: Option<&str>) -> Reply {
        request(&self.addr, method, path, body)
    }
}

/// One request to `addr` on a connection of its own.
pub(crate) fn request(addr: &str, method: &str, path: &str, body: Option<&str>) -> Reply {
    try_request(addr, method, path, body).unwrap_or_else(|e| panic!("{method} {addr}{path}: {e}"))
}

/// As [`request`], for a server that may not be answering yet (or any more): an error instead of a panic.
pub(crate) fn try_request(addr: &str, method: &str, path: &str, body: Option<&str>) -> std::io::Result<Reply> {
    let mut stream = TcpStream::connect(addr)?;
    stream.set_read_timeout(Some(Duration::from_secs(120)))?;
    let body = body.unwrap_or("");
    write!(
        stream,
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\n\r\n{body}",
        body.len()
    )?;
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw)?;
    let text = String::from_utf8(raw).map_err(std::io::Error::other)?;
    let bad = || std::io::Error::other(format!("not an HTTP response: {text:?}"));
    let (head, body) = text.split_once("\r\n\r\n").ok_or_else(bad)?;
    let mut lines = head.lines();
    let status = lines.next().and_then(|l| l.split_whitespace().nth(1)).and_then(|s| s.parse().ok()).ok_or_else(bad)?;
    let headers =
        lines.filter_map(|l| l.split_once(':')).map(|(k, v)| (k.trim().to_owned(), v.trim().to_owned())).collect();
    Ok(Reply { status, headers, body: body.to_owned() })
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Runs `elect ARGS` to its end: (exit status, stdout, stderr).
pub(crate) fn elect(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_elect")).args(args).output().unwrap();
    (out.status.code().unwrap_or(-1), String::from_utf8(out.stdout).unwrap(), String::from_utf8(out.stderr).unwrap())
}

/// A query's pairs as the command line's flags: `--key=value`, or `--key` for an empty value.
pub(crate) fn flags(query: &str) -> Vec<String> {
    query
        .split('&')
        .map(|p| match p.split_once('=') {
            Some((k, v)) if !v.is_empty() => format!("--{k}={}", v.replace("%7C", "|").replace("%40", "@")),
            Some((k, _)) => format!("--{k}"),
            None => format!("--{p}"),
        })
        .collect()
}
