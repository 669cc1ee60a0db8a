//! Fencing tokens with elect: a store that refuses a write fenced with an epoch lower than the highest it has
//! accepted, and the one-line protocol its clients speak.
//!
//! Leadership is never certain at the moment a write arrives: a leader can pause (a garbage collection, a swapped
//! page, SIGSTOP) between deciding to write and the write reaching the store, and meanwhile the others elect a new
//! leader. Every leadership grant of `elect_net` carries an epoch higher than every earlier one, so the store,
//! which sees every write, can refuse the late ones: once it has accepted a write under epoch `e`, it refuses
//! every write under an epoch below `e`.
//!
//! The protocol, one request and one reply per line over TCP:
//!
//! ```text
//! WRITE <epoch> <writer> <seq>      ->  OK  |  REJECTED <highest epoch accepted>  |  ERROR <why>
//! ```

use std::io::{self, BufRead, BufReader, Write as _};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::{Arc, Mutex};

/// A write: who sends it, its sequence number, and the epoch of the leadership it was decided under.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Write {
    /// The fencing epoch (the writer's leadership grant).
    pub epoch: u64,
    /// The writer's member id.
    pub writer: u32,
    /// The writer's sequence number.
    pub seq: u64,
}

/// What the store did with a write.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Accepted: its epoch is at least the highest accepted before.
    Accepted,
    /// Refused: a write under a higher epoch was accepted before.
    Rejected {
        /// The highest epoch accepted so far.
        highest: u64,
    },
}

/// The fencing store: it keeps the highest epoch it has accepted and the writes it accepted.
#[derive(Debug, Default)]
pub struct Store {
    highest: u64,
    accepted: Vec<Write>,
}

impl Store {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    /// Accepts `w` if its epoch is at least the highest accepted so far (a leader writes many times under one
    /// epoch), and refuses it otherwise.
    pub fn write(&mut self, w: Write) -> Verdict {
        if w.epoch < self.highest {
            return Verdict::Rejected { highest: self.highest };
        }
        self.highest = w.epoch;
        self.accepted.push(w);
        Verdict::Accepted
    }

    /// The highest epoch accepted so far (0 before the first write).
    pub fn highest(&self) -> u64 {
        self.highest
    }

    /// The accepted writes, in order.
    pub fn accepted(&self) -> &[Write] {
        &self.accepted
    }
}

/// `WRITE <epoch> <writer> <seq>`.
pub fn request(w: &Write) -> String {
    format!("WRITE {} {} {}", w.epoch, w.writer, w.seq)
}

/// Parses a request line.
pub fn parse_request(line: &str) -> Result<Write, String> {
    let mut words = line.split_whitespace();
    let bad = || format!("expected WRITE <epoch> <writer> <seq>, got '{line}'");
    if words.next() != Some("WRITE") {
        return Err(bad());
    }
    let mut number = || words.next().and_then(|w| w.parse::<u64>().ok()).ok_or_else(bad);
    let (epoch, writer, seq) = (number()?, number()?, number()?);
    let writer = u32::try_from(writer).map_err(|_| bad())?;
    if words.next().is_some() {
        return Err(bad());
    }
    Ok(Write { epoch, writer, seq })
}

/// `OK` or `REJECTED <highest>`.
pub fn reply(v: Verdict) -> String {
    match v {
        Verdict::Accepted => "OK".to_owned(),
        Verdict::Rejected { highest } => format!("REJECTED {highest}"),
    }
}

/// Parses a reply line.
pub fn parse_reply(line: &str) -> Result<Verdict, String> {
    let line = line.trim();
    if line == "OK" {
        return Ok(Verdict::Accepted);
    }
    line.strip_prefix("REJECTED ")
        .and_then(|h| h.parse().ok())
        .map(|highest| Verdict::Rejected { highest })
        .ok_or_else(|| format!("the store said '{line}'"))
}

/// Serves the store on `listener` until the process ends, one thread per connection; `observe` sees every write
/// and its verdict, in the order the store decided them.
pub fn serve(listener: TcpListener, observe: impl Fn(Write, Verdict) + Send + Sync + 'static) -> io::Result<()> {
    let store = Arc::new(Mutex::new(Store::new()));
    let observe = Arc::new(observe);
    for stream in listener.incoming() {
        let stream = stream?;
        let (store, observe) = (store.clone(), observe.clone());
        std::thread::spawn(move || {
            let _ = connection(stream, &store, &*observe);
        });
    }
    Ok(())
}

fn connection(stream: TcpStream, store: &Mutex<Store>, observe: &(impl Fn(Write, Verdict) + ?Sized)) -> io::Result<()> {
    let mut out = stream.try_clone()?;
    for line in BufReader::new(stream).lines() {
        let line = line?;
        let answer = match parse_request(&line) {
            Ok(w) => {
                // The verdict and the observation happen under the lock, so observers see the store's own order.
                let mut store = store.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
                let v = store.write(w);
                observe(w, v);
                reply(v)
            }
            Err(e) => format!("ERROR {e}"),
        };
        writeln!(out, "{answer}")?;
    }
    Ok(())
}

/// Sends one write to the store at `addr` and returns its verdict.
pub async fn send(addr: SocketAddr, w: &Write) -> io::Result<Verdict> {
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
    let stream = tokio::net::TcpStream::connect(addr).await?;
    let (read, mut write) = stream.into_split();
    write.write_all(format!("{}\n", request(w)).as_bytes()).await?;
    let mut line = String::new();
    tokio::io::BufReader::new(read).read_line(&mut line).await?;
    parse_reply(&line).map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_store_refuses_writes_under_an_epoch_below_the_highest_accepted() {
        let mut store = Store::new();
        let w = |epoch, writer, seq| Write { epoch, writer, seq };
        assert_eq!(store.write(w(5, 1, 1)), Verdict::Accepted);
        assert_eq!(store.write(w(5, 1, 2)), Verdict::Accepted, "a leader writes many times under its epoch");
        assert_eq!(store.write(w(9, 2, 1)), Verdict::Accepted, "a newer leader");
        assert_eq!(store.write(w(5, 1, 3)), Verdict::Rejected { highest: 9 }, "the old leader's late write");
        assert_eq!(store.highest(), 9);
        assert_eq!(store.accepted(), [w(5, 1, 1), w(5, 1, 2), w(9, 2, 1)]);
    }

    #[test]
    fn requests_and_replies_round_trip() {
        let w = Write { epoch: 4_294_967_299, writer: 3, seq: 7 };
        assert_eq!(parse_request(&request(&w)), Ok(w));
        for v in [Verdict::Accepted, Verdict::Rejected { highest: 12 }] {
            assert_eq!(parse_reply(&reply(v)), Ok(v));
        }
        for bad in ["", "WRITE", "WRITE 1 2", "WRITE 1 2 x", "WRITE 1 2 3 4", "READ 1 2 3", "WRITE 1 99999999999 3"] {
            assert!(parse_request(bad).is_err(), "{bad}");
        }
        assert!(parse_reply("ERROR nope").is_err());
    }
}
