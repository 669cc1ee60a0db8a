//! Stable storage: one state file per member, replaced crash-safely.
//!
//! A write goes to `state.tmp`, is flushed to disk (`fsync`), renamed over `state`, and the directory is flushed
//! too, so that after a crash at any point the file holds either the old state or the new one, whole. The file is
//! a postcard-encoded [`Stored`]; the algorithm's durable state is kept as postcard bytes of its own, tagged with
//! the algorithm's layout name, so a member restarted with another algorithm keeps its incarnation and fencing
//! epoch and only drops the algorithm's state.

use std::fs::{self, File};
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// The state file's format version.
const FORMAT: u16 = 1;

/// What a member keeps across restarts.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stored {
    /// The format version (1).
    pub format: u16,
    /// Bumped (and written) on every start, before the member sends anything.
    pub incarnation: u64,
    /// The highest fencing epoch this member has seen or granted.
    pub seen: u64,
    /// The layout of `durable`: the algorithm's name, and whether the leader monitor wraps it.
    pub layout: String,
    /// The algorithm's durable state, postcard-encoded; empty when it has persisted none.
    pub durable: Vec<u8>,
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
    /// The state file does not decode: it was not written by this runtime.
    #[error("{path}: not a state file of this version of elect ({reason})")]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
}

/// A member's data directory.
#[derive(Clone, Debug)]
pub struct Store {
    dir: PathBuf,
}

impl Store {
    /// The store in `dir`, created if missing.
    pub fn open(dir: &Path) -> Result<Self, StoreError> {
        fs::create_dir_all(dir).map_err(|source| StoreError::Io { path: dir.to_owned(), source })?;
        Ok(Self { dir: dir.to_owned() })
    }

    /// The state file's path.
    pub fn path(&self) -> PathBuf {
        self.dir.join("state")
    }

    /// The stored state, or `None` on a first start.
    pub fn load(&self) -> Result<Option<Stored>, StoreError> {
        let path = self.path();
        let bytes = match fs::read(&path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(source) => return Err(StoreError::Io { path, source }),
        };
        let stored: Stored = postcard::from_bytes(&bytes)
            .map_err(|e| StoreError::Corrupt { path: path.clone(), reason: e.to_string() })?;
        if stored.format != FORMAT {
            let reason = format!("format {} (this version reads {FORMAT})", stored.format);
            return Err(StoreError::Corrupt { path, reason });
        }
        Ok(Some(stored))
    }

    /// Replaces the state file with `stored`, crash-safely. Blocking: the runtime calls it from `spawn_blocking`.
    pub fn save(&self, stored: &Stored) -> Result<(), StoreError> {
        let stored = Stored { format: FORMAT, ..stored.clone() };
        let bytes = postcard::to_allocvec(&stored).expect("a state file always encodes");
        let tmp = self.dir.join("state.tmp");
        let io = |path: &Path| {
            let path = path.to_owned();
            move |source| StoreError::Io { path, source }
        };
        let mut file = File::create(&tmp).map_err(io(&tmp))?;
        file.write_all(&bytes).map_err(io(&tmp))?;
        file.sync_all().map_err(io(&tmp))?;
        drop(file);
        let path = self.path();
        fs::rename(&tmp, &path).map_err(io(&path))?;
        // The rename is durable only once the directory entry is.
        File::open(&self.dir).and_then(|d| d.sync_all()).map_err(io(&self.dir))?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_saved_state_loads_back_and_replaces_the_old_one() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("a/b")).unwrap();
        assert_eq!(store.load().unwrap(), None);
        let one = Stored {
            incarnation: 1,
            seen: 5,
            layout: "bully+monitor".into(),
            durable: vec![1, 2],
            ..Default::default()
        };
        store.save(&one).unwrap();
        store.save(&Stored { incarnation: 2, ..one.clone() }).unwrap();
        let back = store.load().unwrap().unwrap();
        assert_eq!((back.incarnation, back.seen, back.durable), (2, 5, vec![1, 2]));
        assert!(!dir.path().join("a/b/state.tmp").exists());
    }

    #[test]
    fn a_foreign_file_is_refused_not_trusted() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(dir.path()).unwrap();
        fs::write(store.path(), b"\xff\xff\xff").unwrap();
        let err = store.load().unwrap_err().to_string();
        assert!(err.contains("not a state file"), "{err}");
    }
}
