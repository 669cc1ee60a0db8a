//! Headless Chromium driven through the DevTools protocol: a page's WebSocket, spoken by a client of a hundred
//! lines (text frames, masked as a client must; no extension), enough to evaluate scripts in the page, click,
//! wait, and take screenshots. `ELECT_CDP_DEBUG=1` prints each command sent on standard error.

// Each test crate that includes this module uses a part of it.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::chromium::{HEADLESS, chromium};

/// A headless Chromium with one page, driven over the DevTools protocol; killed when dropped.
pub(crate) struct Browser {
    child: Child,
    _profile: tempfile::TempDir,
    ws: TcpStream,
    next: u64,
}

impl Browser {
    /// Starts Chromium on `url` with every background connection off and no name resolving.
    pub(crate) fn open(url: &str) -> Self {
        let profile = tempfile::tempdir().unwrap();
        let mut child = Command::new(chromium())
            .args(HEADLESS)
            .args([
                "--hide-scrollbars",
                // Every name maps to nothing but the loopback address the server listens on.
                "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
                "--window-size=1400,900",
                "--remote-debugging-port=0",
            ])
            .arg(format!("--user-data-dir={}", profile.path().display()))
            .arg(url)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("chromium starts");
        // "DevTools listening on ws://127.0.0.1:PORT/devtools/browser/ID" on standard error.
        let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
        let port = loop {
            let line = lines.next().expect("chromium says where DevTools listen").unwrap();
            if let Some(rest) = line.split("ws://").nth(1) {
                break rest.split('/').next().unwrap().to_owned();
            }
        };
        // Keep reading its standard error, so that it never blocks on a full pipe.
        std::thread::spawn(move || for _ in lines {});
        let started = Instant::now();
        let page = loop {
            let list = http_get(&port, "/json/list");
            let pages: Value = serde_json::from_str(&list).unwrap_or(Value::Null);
            let found = pages.as_array().and_then(|ps| {
                ps.iter()
                    .find(|p| p["type"] == "page")
                    .and_then(|p| p["webSocketDebuggerUrl"].as_str())
                    .map(str::to_owned)
            });
            if let Some(url) = found {
                break url;
            }
            assert!(started.elapsed() < Duration::from_secs(30), "no page in {list}");
            std::thread::sleep(Duration::from_millis(100));
        };
        let ws = handshake(&page);
        let mut browser = Self { child, _profile: profile, ws, next: 0 };
        browser.call("Runtime.enable", json!({}));
        browser
    }

    /// Sends one command and returns its result (events in between are skipped).
    pub(crate) fn call(&mut self, method: &str, params: Value) -> Value {
        if std::env::var_os("ELECT_CDP_DEBUG").is_some() {
            eprintln!("cdp> {method} {}", params.to_string().chars().take(200).collect::<String>());
        }
        self.next += 1;
        let id = self.next;
        send(&mut self.ws, &json!({ "id": id, "method": method, "params": params }).to_string());
        loop {
            let message: Value = serde_json::from_str(&receive(&mut self.ws)).unwrap();
            if message["id"] == id {
                assert!(message["error"].is_null(), "{method}: {}", message["error"]);
                return message["result"].clone();
            }
        }
    }

    /// The value of `expression` in the page (a promise is awaited); an exception fails the test.
    pub(crate) fn eval(&mut self, expression: &str) -> Value {
        let r = self
            .call("Runtime.evaluate", json!({ "expression": expression, "awaitPromise": true, "returnByValue": true }));
        assert!(r["exceptionDetails"].is_null(), "{expression}: {}", r["exceptionDetails"]);
        r["result"]["value"].clone()
    }

    /// Waits until `expression` is true in the page (at most a minute); until then, an exception counts as false
    /// (the page may still be loading).
    pub(crate) fn wait(&mut self, expression: &str) {
        let started = Instant::now();
        while self.eval(&format!("(() => {{ try {{ return !!({expression}); }} catch (e) {{ return false; }} }})()"))
            != Value::Bool(true)
        {
            assert!(started.elapsed() < Duration::from_secs(60), "still not true after a minute: {expression}");
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Loads `url` in the page.
    pub(crate) fn navigate(&mut self, url: &str) {
        self.call("Page.navigate", json!({ "url": url }));
    }

    /// A PNG of the page as it shows now.
    pub(crate) fn screenshot(&mut self) -> Vec<u8> {
        let r = self.call("Page.captureScreenshot", json!({ "format": "png" }));
        base64(r["data"].as_str().unwrap())
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn http_get(host: &str, path: &str) -> String {
    let Ok(mut s) = TcpStream::connect(host) else { return String::new() };
    let _ = s.set_read_timeout(Some(Duration::from_secs(10)));
    let _ = write!(s, "GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n");
    // The head, then as many bytes as it says (DevTools may keep the connection open).
    let mut reader = BufReader::new(s);
    let mut length = 0;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
            break;
        }
        if let Some((k, v)) = line.split_once(':') {
            if k.eq_ignore_ascii_case("content-length") {
                length = v.trim().parse().unwrap_or(0);
            }
        }
    }
    let mut body = vec![0; length];
    let _ = reader.read_exact(&mut body);
    String::from_utf8_lossy(&body).into_owned()
}

/// Opens the WebSocket at `url` (`ws://HOST/PATH`).
fn handshake(url: &str) -> TcpStream {
    let rest = url.strip_prefix("ws://").expect("a ws:// URL");
    let (host, path) = rest.split_once('/').unwrap();
    let mut s = TcpStream::connect(host).unwrap();
    write!(
        s,
        "GET /{path} HTTP/1.1\r\nHost: {host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
         Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n"
    )
    .unwrap();
    let mut head = Vec::new();
    let mut byte = [0];
    while !head.ends_with(b"\r\n\r\n") {
        s.read_exact(&mut byte).unwrap();
        head.push(byte[0]);
    }
    let head = String::from_utf8_lossy(&head);
    assert!(head.starts_with("HTTP/1.1 101"), "no WebSocket: {head}");
    s.set_read_timeout(Some(Duration::from_secs(120))).unwrap();
    s
}

/// Sends `text` in one masked text frame.
fn send(s: &mut TcpStream, text: &str) {
    let payload = text.as_bytes();
    let mut frame = vec![0x81];
    match payload.len() {
        n if n < 126 => frame.push(0x80 | n as u8),
        n if n < 1 << 16 => {
            frame.push(0x80 | 126);
            frame.extend_from_slice(&(n as u16).to_be_bytes());
        }
        n => {
            frame.push(0x80 | 127);
            frame.extend_from_slice(&(n as u64).to_be_bytes());
        }
    }
    let mask = [0x1f, 0x2e, 0x3d, 0x4c];
    frame.extend_from_slice(&mask);
    frame.extend(payload.iter().enumerate().map(|(i, b)| b ^ mask[i % 4]));
    s.write_all(&frame).unwrap();
}

/// Receives one text message (its frames joined).
fn receive(s: &mut TcpStream) -> String {
    let mut message = Vec::new();
    loop {
        let mut head = [0; 2];
        s.read_exact(&mut head).unwrap();
        let (fin, opcode) = (head[0] & 0x80 != 0, head[0] & 0x0f);
        let len = match head[1] & 0x7f {
            126 => {
                let mut b = [0; 2];
                s.read_exact(&mut b).unwrap();
                u64::from(u16::from_be_bytes(b))
            }
            127 => {
                let mut b = [0; 8];
                s.read_exact(&mut b).unwrap();
                u64::from_be_bytes(b)
            }
            n => u64::from(n),
        };
        let mut payload = vec![0; len as usize];
        s.read_exact(&mut payload).unwrap();
        assert!(opcode != 0x8, "the browser closed the WebSocket");
        if opcode == 0x9 || opcode == 0xa {
            continue;
        }
        message.extend_from_slice(&payload);
        if fin {
            return String::from_utf8(message).unwrap();
        }
    }
}

/// Decodes standard base64.
fn base64(text: &str) -> Vec<u8> {
    let value = |c: u8| match c {
        b'A'..=b'Z' => c - b'A',
        b'a'..=b'z' => c - b'a' + 26,
        b'0'..=b'9' => c - b'0' + 52,
        b'+' => 62,
        _ => 63,
    };
    let digits: Vec<u8> = text.bytes().filter(|&c| c != b'=' && !c.is_ascii_whitespace()).map(value).collect();
    let mut out = Vec::with_capacity(digits.len() * 3 / 4);
    for chunk in digits.chunks(4) {
        let mut n = 0u32;
        for (i, &d) in chunk.iter().enumerate() {
            n |= u32::from(d) << (18 - 6 * i);
        }
        let bytes = n.to_be_bytes();
        out.extend_from_slice(&bytes[1..chunk.len()]);
    }
    out
}
