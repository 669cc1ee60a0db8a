//! The fencing store the members write to while they lead (`elect node --fencing-store`): it refuses a write
//! under an epoch lower than the highest it has accepted, as `examples/fencing-store` does, and logs every write
//! with its arrival time for the history checker ([`crate::history::judge`]).
//!
//! It listens on a Unix socket in the run's data directory, which members in network namespaces of their own
//! reach as well: the nemesis cuts members off from one another, never from the store, so a leader cut off from
//! the others goes on writing, which is the case fencing is for.
//!
//! The protocol, one request and one reply per line: `WRITE <epoch> <writer> <seq>` → `OK` | `REJECTED <highest>`.

use std::io::{self, BufRead, BufReader, Write as _};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use elect_core::Epoch;

use crate::history::Write;

#[derive(Default)]
struct Log {
    highest: u64,
    writes: Vec<Write>,
}

/// The store, served by threads of its own until the process ends.
pub(super) struct FencingStore {
    path: PathBuf,
    log: Arc<Mutex<Log>>,
}

impl FencingStore {
    /// Serves a store at `path` (a Unix socket), stamping writes in milliseconds since `origin`.
    pub(super) fn serve(path: &Path, origin: Instant) -> io::Result<Self> {
        let _ = std::fs::remove_file(path);
        let listener = UnixListener::bind(path)?;
        let log = Arc::new(Mutex::new(Log::default()));
        let shared = Arc::clone(&log);
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let log = Arc::clone(&shared);
                std::thread::spawn(move || {
                    let _ = serve_connection(stream, &log, origin);
                });
            }
        });
        Ok(Self { path: path.to_owned(), log })
    }

    /// Where members reach it.
    pub(super) fn path(&self) -> &Path {
        &self.path
    }

    /// Every write so far, in the order the store decided them.
    pub(super) fn writes(&self) -> Vec<Write> {
        self.log.lock().unwrap_or_else(PoisonError::into_inner).writes.clone()
    }
}

fn serve_connection(stream: UnixStream, log: &Mutex<Log>, origin: Instant) -> io::Result<()> {
    let mut out = stream.try_clone()?;
    for line in BufReader::new(stream).lines() {
        let line = line?;
        let reply = match parse_request(&line) {
            Some((epoch, writer)) => {
                let mut log = log.lock().unwrap_or_else(PoisonError::into_inner);
                let accepted = epoch >= log.highest;
                let at_ms = origin.elapsed().as_secs_f64() * 1e3;
                log.writes.push(Write { at_ms, writer, epoch: Epoch::from_bits(epoch), accepted });
                if accepted {
                    log.highest = epoch;
                    "OK".to_owned()
                } else {
                    format!("REJECTED {}", log.highest)
                }
            }
            None => "ERROR expected WRITE <epoch> <writer> <seq>".to_owned(),
        };
        writeln!(out, "{reply}")?;
    }
    Ok(())
}

/// `WRITE <epoch> <writer> <seq>` → (epoch, writer).
fn parse_request(line: &str) -> Option<(u64, u32)> {
    let mut words = line.split_whitespace();
    (words.next()? == "WRITE").then_some(())?;
    let epoch = words.next()?.parse().ok()?;
    let writer = words.next()?.parse().ok()?;
    words.next()?.parse::<u64>().ok()?;
    words.next().is_none().then_some((epoch, writer))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_store_refuses_writes_below_the_highest_it_accepted() {
        let dir = tempfile::tempdir().unwrap();
        let store = FencingStore::serve(&dir.path().join("s.sock"), Instant::now()).unwrap();
        let stream = UnixStream::connect(store.path()).unwrap();
        let mut reader = BufReader::new(stream.try_clone().unwrap());
        let mut ask = |req: &str| {
            writeln!(&stream, "{req}").unwrap();
            let mut line = String::new();
            reader.read_line(&mut line).unwrap();
            line.trim().to_owned()
        };
        assert_eq!(ask("WRITE 10 3 1"), "OK");
        assert_eq!(ask("WRITE 20 2 1"), "OK");
        assert_eq!(ask("WRITE 10 3 2"), "REJECTED 20");
        assert_eq!(ask("WRITE 20 2 2"), "OK");
        assert!(ask("READ").starts_with("ERROR"));
        let verdicts: Vec<(u64, bool)> = store.writes().iter().map(|w| (w.epoch.bits(), w.accepted)).collect();
        assert_eq!(verdicts, vec![(10, true), (20, true), (10, false), (20, true)]);
    }
}
