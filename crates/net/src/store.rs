//! Stable storage: one state file per member, with a checksum, rewritten in place.
//!
//! The file is a postcard-encoded [`Stored`], the CRC-32 of every byte before it (little-endian), and zeros up to a
//! whole number of 4 KiB pages. A write of a state whose file keeps its length (every write but the first, as long
//! as the algorithm's durable state fits the same pages) overwrites the file in place and flushes its data
//! (`fdatasync`): one write and one flush, with no file created, renamed or synced in the directory, and so no
//! wait for the file system's journal, which a busy disk (a parallel build beside the member) holds up for tens
//! of milliseconds. Any other write (the first, a state that needs more or fewer pages, a file of an earlier
//! format, a file that cannot be opened for writing) goes to a temporary file (`state.tmp.PID.N`, a name of its own, so that a write still running for a
//! member that was just stopped cannot take the file of the next one's), is flushed (`fsync`), renamed over
//! `state`, and the directory is flushed too.
//!
//! A write in place that a power loss interrupts can leave the file torn: its checksum then fails, and the member
//! restarts as one that lost its state (below), which is safe. Falling back to an older copy of the state would
//! not be: the member may have acted on the newer one (granted an epoch), and forgetting it could let an epoch go
//! backwards.
//!
//! The algorithm's durable state is kept as postcard bytes of its own, tagged with the algorithm's layout name, so
//! a member restarted with another algorithm keeps its incarnation and fencing epoch and only drops the
//! algorithm's state.
//!
//! ```text
//! format       u16 (varint)   4 (3 has no voters, 2 no padding and 1 no checksum; all are read)
//! incarnation  u64 (varint)
//! seen         u64 (varint)   the highest fencing epoch seen or granted
//! layout       string
//! durable      bytes
//! voters       option         0, or 1 then the voting configuration once it changed: the id's epoch (u64
//!                             varint) and count (u32 varint), and the voters (a length, then u32 varints)
//! crc          u32 LE         CRC-32 (IEEE) of everything before it
//! padding      zeros          up to a multiple of 4096 bytes
//! ```
//!
//! A file that is missing, does not decode, or fails its checksum or its padding (truncated, torn by a power loss
//! or a disk that lied about its flush, or edited by hand) is not trusted: [`Store::load`] says which, and the
//! runtime starts the member as one that lost its state (see `elect_algos::member`: a new incarnation its peers
//! accept, and no grant until it has heard the highest epoch they know, from a majority of the members with
//! itself). A damaged file is kept beside the new one as `state.damaged`, for a post-mortem.

use std::fs::{self, File, OpenOptions};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use elect_algos::member::Voters;
use serde::{Deserialize, Serialize};

/// The state file's format version: 2 adds the checksum, 3 the padding to whole pages, 4 the voting configuration.
const FORMAT: u16 = 4;

/// The format of padded files without the voting configuration, still read.
const FORMAT_UNVOTED: u16 = 3;

/// The format of files with a checksum but no padding, still read.
const FORMAT_UNPADDED: u16 = 2;

/// The state file's length is a multiple of this.
const PAGE: usize = 4096;

/// The longest state file read, in bytes (256 pages): a member's state is its incarnation, its epoch and its
/// algorithm's durable state, a few dozen bytes; a longer file is damaged, or not a state file, and is not read
/// further. A state that would not fit is refused when it is saved.
pub const MAX_STATE_FILE: u64 = 1 << 20;

/// The format of files without a checksum, still read.
const FORMAT_UNCHECKED: u16 = 1;

/// The checksum's length in bytes.
const CRC_LEN: usize = 4;

/// What a member keeps across restarts.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stored {
    /// The format version (4; 3, 2 or 1 for files of earlier versions).
    pub format: u16,
    /// Bumped (and written) on every start, before the member sends anything.
    pub incarnation: u64,
    /// The highest fencing epoch this member has seen or granted.
    pub seen: u64,
    /// The layout of `durable`: the algorithm's name, and whether the leader monitor wraps it.
    pub layout: String,
    /// The algorithm's durable state, postcard-encoded; empty when it has persisted none.
    pub durable: Vec<u8>,
    /// The voting configuration, once it is not the one the member is started with (its encoding is
    /// `elect_algos::member::Voters`'s, part of this format).
    pub voters: Option<Voters>,
}

/// The fields of formats 1 to 3, which have no voting configuration.
#[derive(Deserialize)]
#[cfg_attr(test, derive(Serialize))]
struct Unvoted {
    format: u16,
    incarnation: u64,
    seen: u64,
    layout: String,
    durable: Vec<u8>,
}

impl From<Unvoted> for Stored {
    fn from(old: Unvoted) -> Self {
        let Unvoted { format, incarnation, seen, layout, durable } = old;
        Self { format, incarnation, seen, layout, durable, voters: None }
    }
}

/// A problem with the data directory or the state file.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// Reading, writing or syncing failed.
    #[error("{path}: {source}")]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// The state file does not decode, or fails its checksum: it is damaged, or was not written by this runtime.
    #[error("{path}: not a state file of this version of elect ({reason})")]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
}

/// What [`Store::load`] found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Loaded {
    /// A state file that decodes and passes its checksum and padding (or one of format 1, which has neither).
    Trusted(Stored),
    /// No state file: a first start, or a file deleted.
    Missing,
    /// A state file that must not be trusted, and why.
    Damaged(String),
}

/// A member's data directory.
#[derive(Clone, Debug)]
pub struct Store {
    dir: PathBuf,
}

impl Store {
    /// The store in `dir`, created if missing.
    pub fn open(dir: &Path) -> Result<Self, StoreError> {
        fs::create_dir_all(dir).map_err(io(dir))?;
        Ok(Self { dir: dir.to_owned() })
    }

    /// The state file's path.
    pub fn path(&self) -> PathBuf {
        self.dir.join("state")
    }

    /// The stored state, or `None` on a first start; a damaged file is an error.
    pub fn load(&self) -> Result<Option<Stored>, StoreError> {
        match self.inspect()? {
            Loaded::Trusted(stored) => Ok(Some(stored)),
            Loaded::Missing => Ok(None),
            Loaded::Damaged(reason) => Err(StoreError::Corrupt { path: self.path(), reason }),
        }
    }

    /// What the state file holds, and whether it can be trusted. Only reading it can fail.
    pub fn inspect(&self) -> Result<Loaded, StoreError> {
        let path = self.path();
        // Only a regular file is read (a named pipe would wait for a writer for ever, a device would never end),
        // and only up to the longest a state file can be.
        let meta = match fs::metadata(&path) {
            Ok(meta) => meta,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Loaded::Missing),
            Err(source) => return Err(io(&path)(source)),
        };
        if !meta.is_file() {
            return Ok(Loaded::Damaged("not a regular file".to_owned()));
        }
        let too_long = || Loaded::Damaged(format!("longer than a state file can be ({MAX_STATE_FILE} bytes)"));
        if meta.len() > MAX_STATE_FILE {
            return Ok(too_long());
        }
        let mut bytes = Vec::new();
        match File::open(&path).and_then(|f| f.take(MAX_STATE_FILE + 1).read_to_end(&mut bytes)) {
            Ok(_) if bytes.len() as u64 > MAX_STATE_FILE => Ok(too_long()),
            Ok(_) => Ok(decode(&bytes).map_or_else(Loaded::Damaged, Loaded::Trusted)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Loaded::Missing),
            Err(source) => Err(io(&path)(source)),
        }
    }

    /// Moves a damaged state file aside, to `state.damaged` (replacing an older one), so that it can be looked at.
    pub fn set_aside(&self) -> Result<PathBuf, StoreError> {
        let aside = self.dir.join("state.damaged");
        fs::rename(self.path(), &aside).map_err(io(&aside))?;
        Ok(aside)
    }

    /// Writes `stored` to the state file, durably: in place when the file keeps its length, by a temporary file
    /// renamed over it otherwise (see the module's documentation). Blocking: the runtime calls it from
    /// `spawn_blocking`.
    pub fn save(&self, stored: &Stored) -> Result<(), StoreError> {
        let bytes = encode(stored);
        let path = self.path();
        if bytes.len() as u64 > MAX_STATE_FILE {
            let too_long =
                format!("a state of {} bytes is longer than a state file can be ({MAX_STATE_FILE})", bytes.len());
            return Err(io(&path)(std::io::Error::new(std::io::ErrorKind::InvalidData, too_long)));
        }
        match OpenOptions::new().write(true).open(&path) {
            Ok(mut file) => {
                if file.metadata().map_err(io(&path))?.len() != bytes.len() as u64 {
                    return self.replace(&bytes);
                }
                // A file opened for writing, without truncation, starts at offset 0.
                file.write_all(&bytes).map_err(io(&path))?;
                file.sync_data().map_err(io(&path))
            }
            // Missing, or not writable in place (made read-only by hand): a new file replaces it, as before.
            Err(e) if matches!(e.kind(), std::io::ErrorKind::NotFound | std::io::ErrorKind::PermissionDenied) => {
                self.replace(&bytes)
            }
            Err(source) => Err(io(&path)(source)),
        }
    }

    /// Replaces the state file with `bytes`, crash-safely: a temporary file, flushed, renamed over it, and the
    /// directory flushed.
    fn replace(&self, bytes: &[u8]) -> Result<(), StoreError> {
        static WRITES: AtomicU64 = AtomicU64::new(0);
        let n = WRITES.fetch_add(1, Ordering::Relaxed);
        let tmp = self.dir.join(format!("state.tmp.{}.{n}", std::process::id()));
        let mut file = File::create(&tmp).map_err(io(&tmp))?;
        file.write_all(bytes).map_err(io(&tmp))?;
        file.sync_all().map_err(io(&tmp))?;
        drop(file);
        let path = self.path();
        fs::rename(&tmp, &path).map_err(io(&path))?;
        // The rename is durable only once the directory entry is.
        File::open(&self.dir).and_then(|d| d.sync_all()).map_err(io(&self.dir))?;
        Ok(())
    }
}

/// The error of an I/O operation on `path`.
fn io(path: &Path) -> impl FnOnce(std::io::Error) -> StoreError {
    let path = path.to_owned();
    move |source| StoreError::Io { path, source }
}

/// The bytes of a state file holding `stored`, in the current format.
fn encode(stored: &Stored) -> Vec<u8> {
    let stored = Stored { format: FORMAT, ..stored.clone() };
    let mut bytes = postcard::to_allocvec(&stored).expect("a state file always encodes");
    let crc = crc32fast::hash(&bytes);
    bytes.extend_from_slice(&crc.to_le_bytes());
    bytes.resize(bytes.len().next_multiple_of(PAGE), 0);
    bytes
}

/// A state file's contents, or why they cannot be trusted.
fn decode(bytes: &[u8]) -> Result<Stored, String> {
    let (format, _) = postcard::take_from_bytes::<u16>(bytes).map_err(|e| e.to_string())?;
    let body = match format {
        FORMAT_UNCHECKED => bytes,
        FORMAT_UNPADDED => {
            let split = bytes.len().checked_sub(CRC_LEN).ok_or("shorter than its checksum")?;
            checked(bytes, split)?
        }
        FORMAT => return padded::<Stored>(bytes),
        FORMAT_UNVOTED => return padded::<Unvoted>(bytes).map(Stored::from),
        other => {
            return Err(format!(
                "format {other} (this version reads {FORMAT_UNCHECKED}, {FORMAT_UNPADDED}, {FORMAT_UNVOTED} and \
                 {FORMAT})"
            ));
        }
    };
    let (stored, rest) = postcard::take_from_bytes::<Unvoted>(body).map_err(|e| e.to_string())?;
    if !rest.is_empty() {
        return Err(format!("{} bytes after the state", rest.len()));
    }
    Ok(stored.into())
}

/// The state of a file with a checksum and padding to whole pages, if both hold.
fn padded<T: serde::de::DeserializeOwned>(bytes: &[u8]) -> Result<T, String> {
    if bytes.len() % PAGE != 0 {
        return Err(format!("{} bytes, not a whole number of pages: truncated or edited", bytes.len()));
    }
    // The state ends where its encoding does; the checksum and the padding follow it.
    let (stored, rest) = postcard::take_from_bytes::<T>(bytes).map_err(|e| e.to_string())?;
    let padding = rest.get(CRC_LEN..).ok_or("shorter than its checksum")?;
    checked(bytes, bytes.len() - rest.len())?;
    if padding.iter().any(|&b| b != 0) {
        return Err("bytes after its checksum are not zero: edited".to_owned());
    }
    Ok(stored)
}

/// The `split` bytes of `bytes` that the CRC-32 right after them covers, if it matches.
fn checked(bytes: &[u8], split: usize) -> Result<&[u8], String> {
    let (body, crc) = bytes.split_at(split);
    let crc = crc.get(..CRC_LEN).ok_or("shorter than its checksum")?;
    if crc32fast::hash(body) != u32::from_le_bytes(crc.try_into().expect("four bytes")) {
        return Err("its checksum does not match: truncated, damaged or edited".to_owned());
    }
    Ok(body)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one() -> Stored {
        Stored { incarnation: 1, seen: 5, layout: "bully+monitor".into(), durable: vec![1, 2], ..Default::default() }
    }

    #[test]
    fn a_saved_state_loads_back_and_replaces_the_old_one() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("a/b")).unwrap();
        assert_eq!(store.load().unwrap(), None);
        assert_eq!(store.inspect().unwrap(), Loaded::Missing);
        store.save(&one()).unwrap();
        store.save(&Stored { incarnation: 2, ..one() }).unwrap();
        let back = store.load().unwrap().unwrap();
        assert_eq!((back.format, back.incarnation, back.seen, back.durable), (FORMAT, 2, 5, vec![1, 2]));
        let left: Vec<_> = fs::read_dir(dir.path().join("a/b")).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert_eq!(left, ["state"], "no temporary file is left");
    }

    #[test]
    fn a_foreign_file_is_refused_not_trusted() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        fs::write(store.path(), b"\xff\xff\xff").unwrap();
        let err = store.load().unwrap_err().to_string();
        assert!(err.contains("not a state file"), "{err}");
    }

    #[test]
    fn a_file_of_the_format_without_a_checksum_is_still_read() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let old = Stored { format: FORMAT_UNCHECKED, ..one() };
        fs::write(store.path(), postcard::to_allocvec(&unvoted(&old)).unwrap()).unwrap();
        assert_eq!(store.inspect().unwrap(), Loaded::Trusted(old));
    }

    #[test]
    fn a_file_of_the_format_without_padding_is_still_read_and_then_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let old = Stored { format: FORMAT_UNPADDED, ..one() };
        let mut bytes = postcard::to_allocvec(&unvoted(&old)).unwrap();
        bytes.extend_from_slice(&crc32fast::hash(&bytes).to_le_bytes());
        fs::write(store.path(), &bytes).unwrap();
        assert_eq!(store.inspect().unwrap(), Loaded::Trusted(old));
        bytes[1] ^= 1;
        fs::write(store.path(), &bytes).unwrap();
        assert!(matches!(store.inspect().unwrap(), Loaded::Damaged(reason) if reason.contains("checksum")));
        store.save(&one()).unwrap();
        assert_eq!(store.load().unwrap().unwrap().format, FORMAT);
    }

    /// `stored` as formats 1 to 3 encode it (they have no voters).
    fn unvoted(stored: &Stored) -> Unvoted {
        let Stored { format, incarnation, seen, layout, durable, .. } = stored.clone();
        Unvoted { format, incarnation, seen, layout, durable }
    }

    #[test]
    fn a_padded_file_without_voters_is_still_read_and_the_voters_are_kept_once_saved() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let old = Stored { format: FORMAT_UNVOTED, ..one() };
        let mut bytes = postcard::to_allocvec(&unvoted(&old)).unwrap();
        bytes.extend_from_slice(&crc32fast::hash(&bytes).to_le_bytes());
        bytes.resize(PAGE, 0);
        fs::write(store.path(), &bytes).unwrap();
        assert_eq!(store.inspect().unwrap(), Loaded::Trusted(old));
        let id = elect_algos::member::ConfigId { epoch: elect_core::Epoch::from_bits(5), seq: 2 };
        let voters = Voters { id, members: vec![elect_core::NodeId(1), elect_core::NodeId(3)] };
        store.save(&Stored { voters: Some(voters.clone()), ..one() }).unwrap();
        let back = store.load().unwrap().unwrap();
        assert_eq!((back.format, back.voters), (FORMAT, Some(voters)));
    }

    #[test]
    fn a_state_of_the_same_length_is_written_in_place_and_one_that_needs_more_pages_replaces_the_file() {
        use std::os::unix::fs::MetadataExt;
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        let inode = || fs::metadata(store.path()).unwrap().ino();
        store.save(&one()).unwrap();
        let first = inode();
        store.save(&Stored { seen: 6 << 32, ..one() }).unwrap();
        assert_eq!(inode(), first, "written in place");
        assert_eq!(store.load().unwrap().unwrap().seen, 6 << 32);
        let big = Stored { durable: vec![7; 2 * PAGE], ..one() };
        store.save(&big).unwrap();
        assert_ne!(inode(), first, "replaced");
        assert_eq!(fs::metadata(store.path()).unwrap().len(), 3 * PAGE as u64);
        assert_eq!(store.load().unwrap().unwrap().durable, big.durable);
        // Back to one page: replaced again, nothing of the longer state left behind.
        store.save(&one()).unwrap();
        assert_eq!(fs::metadata(store.path()).unwrap().len(), PAGE as u64);
        assert_eq!(store.load().unwrap().unwrap(), Stored { format: FORMAT, ..one() });
    }

    #[test]
    fn every_truncation_and_every_flipped_byte_is_caught() {
        let bytes = encode(&Stored { seen: 6 << 32 | 3, ..one() });
        assert_eq!(bytes.len(), PAGE);
        assert_eq!(decode(&bytes).unwrap().seen, 6 << 32 | 3);
        for len in 0..bytes.len() {
            assert!(decode(&bytes[..len]).is_err(), "truncated to {len} bytes");
        }
        for i in 0..bytes.len() {
            for bit in 0..8 {
                let mut edited = bytes.clone();
                edited[i] ^= 1 << bit;
                // (No single flipped bit turns format 3 into format 1, which has no checksum.)
                assert!(decode(&edited).is_err(), "byte {i} bit {bit} flipped");
            }
        }
    }

    #[test]
    fn only_a_regular_file_of_at_most_the_longest_state_is_read() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        std::os::unix::fs::symlink("/dev/zero", store.path()).unwrap();
        assert_eq!(store.inspect().unwrap(), Loaded::Damaged("not a regular file".into()));
        store.set_aside().unwrap();
        let long = File::create(store.path()).unwrap();
        long.set_len(MAX_STATE_FILE + 1).unwrap();
        assert!(matches!(store.inspect().unwrap(), Loaded::Damaged(reason) if reason.contains("longer than")));
        let huge = Stored { durable: vec![1; MAX_STATE_FILE as usize], ..one() };
        assert!(store.save(&huge).unwrap_err().to_string().contains("longer than a state file can be"));
    }

    #[test]
    fn a_damaged_file_is_set_aside() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        store.save(&one()).unwrap();
        let mut bytes = fs::read(store.path()).unwrap();
        bytes[2] ^= 0x10;
        fs::write(store.path(), &bytes).unwrap();
        assert!(matches!(store.inspect().unwrap(), Loaded::Damaged(reason) if reason.contains("checksum")));
        let aside = store.set_aside().unwrap();
        assert_eq!(fs::read(aside).unwrap(), bytes);
        assert_eq!(store.inspect().unwrap(), Loaded::Missing);
    }
}
