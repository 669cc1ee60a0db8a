//! `--cpu-load K`: K threads that keep the cores and the caches busy while the cluster is measured, as a parallel
//! build beside it would. Plain busy loops are not enough: they leave the caches to the members. Each thread
//! sweeps a buffer several times the size of the last-level cache, a cache line at a time, writing as it goes.

use std::hint::black_box;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;

/// How many times the last-level cache each thread's buffer is.
const BUFFER_PER_CACHE: usize = 4;
/// Assumed when the cache's size cannot be read.
const DEFAULT_CACHE: usize = 32 << 20;
/// A cache line.
const LINE: usize = 64;

/// The busy threads; dropping it stops and joins them.
pub(super) struct Load {
    stop: Arc<AtomicBool>,
    threads: Vec<JoinHandle<()>>,
}

impl Load {
    /// Starts `threads` busy threads (none for 0).
    pub(super) fn start(threads: usize) -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let size = BUFFER_PER_CACHE * last_level_cache().unwrap_or(DEFAULT_CACHE);
        let threads = (0..threads)
            .map(|_| {
                let stop = Arc::clone(&stop);
                std::thread::spawn(move || sweep(size, &stop))
            })
            .collect();
        Self { stop, threads }
    }
}

impl Drop for Load {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

fn sweep(size: usize, stop: &AtomicBool) {
    let mut buffer = vec![0u8; size];
    let mut pass = 0u8;
    while !stop.load(Ordering::Relaxed) {
        pass = pass.wrapping_add(1);
        for line in buffer.chunks_mut(LINE) {
            line[0] = line[0].wrapping_add(pass);
        }
        black_box(&buffer);
    }
}

/// The size of the largest cache of CPU 0, from sysfs (Linux), in bytes.
fn last_level_cache() -> Option<usize> {
    let dir = std::fs::read_dir("/sys/devices/system/cpu/cpu0/cache").ok()?;
    dir.filter_map(|entry| {
        let size = std::fs::read_to_string(entry.ok()?.path().join("size")).ok()?;
        parse_size(size.trim())
    })
    .max()
}

/// `32768K`, `8M`, `1024` → bytes.
fn parse_size(s: &str) -> Option<usize> {
    let (digits, unit) = match s.as_bytes().last()? {
        b'K' => (&s[..s.len() - 1], 1 << 10),
        b'M' => (&s[..s.len() - 1], 1 << 20),
        b'G' => (&s[..s.len() - 1], 1 << 30),
        _ => (s, 1),
    };
    digits.parse::<usize>().ok().map(|n| n * unit)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cache_sizes_parse() {
        assert_eq!(parse_size("32768K"), Some(32 << 20));
        assert_eq!(parse_size("8M"), Some(8 << 20));
        assert_eq!(parse_size("512"), Some(512));
        assert_eq!(parse_size("x"), None);
    }

    #[test]
    fn the_load_stops_when_dropped() {
        let load = Load::start(2);
        assert_eq!(load.threads.len(), 2);
        drop(load);
        assert!(Load::start(0).threads.is_empty());
    }
}
