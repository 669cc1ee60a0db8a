//! Packet authentication: the cluster key, and the keyed BLAKE3 tag every packet of a keyed cluster carries.
//!
//! **The key file.** A member reads its cluster key from a file (`elect node --key-file FILE`). The file's bytes,
//! less one trailing line ending (`\n` or `\r\n`, so that `echo secret > FILE` and `printf secret > FILE` agree),
//! are a secret shared by every member; it must not be empty, and may be up to 64 KiB. The 32-byte key is
//! `blake3::derive_key("elect-net 2026 cluster key v1", secret)`, so a passphrase and 32 random bytes (`head -c 32
//! /dev/urandom > FILE`) are both fine, and the key is never the secret itself. Keep the file readable by the
//! member only: anyone who has it can speak for any member.
//!
//! **The tag.** With a key, each datagram is the encoded envelope followed by `blake3::keyed_hash(key, envelope)`,
//! 32 bytes ([`crate::wire`]). A packet whose tag is missing or wrong is dropped as `unauthenticated` before its
//! envelope is decoded, and before anything in it (its sequence number included) is remembered.
//!
//! **Without a key** packets carry no tag, and a member believes any packet that decodes: a keyless cluster
//! trusts its network (a loopback test, a private network no one else can send on).
//!
//! The key is never logged: its `Debug` form is redacted.

use std::fmt;
use std::io::Read;
use std::path::{Path, PathBuf};

/// The context string of BLAKE3's key derivation: it ties the key to this use, in this protocol.
const CONTEXT: &str = "elect-net 2026 cluster key v1";

/// The longest key file read, in bytes.
pub const MAX_KEY_FILE: u64 = 64 * 1024;

/// The length of a packet's tag, in bytes.
pub const TAG_LEN: usize = blake3::OUT_LEN;

/// A cluster key: 32 bytes derived from a secret every member shares.
#[derive(Clone)]
pub struct ClusterKey([u8; blake3::KEY_LEN]);

impl fmt::Debug for ClusterKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("ClusterKey(<redacted>)")
    }
}

impl ClusterKey {
    /// The key derived from `secret` (any bytes, not empty).
    pub fn from_secret(secret: &[u8]) -> Result<Self, KeyError> {
        if secret.is_empty() {
            return Err(KeyError::Empty);
        }
        Ok(Self(blake3::derive_key(CONTEXT, secret)))
    }

    /// The key derived from the key file at `path` (see the module docs for the format).
    pub fn from_file(path: &Path) -> Result<Self, KeyError> {
        let secret = read_secret(path, MAX_KEY_FILE).map_err(|e| match e {
            Secret::Read(source) => KeyError::Read { path: path.to_owned(), source },
            Secret::NotAFile => KeyError::NotAFile(path.to_owned()),
            Secret::TooLong => KeyError::TooLong(path.to_owned()),
            Secret::Empty => KeyError::EmptyFile(path.to_owned()),
        })?;
        Self::from_secret(&secret)
    }

    /// The tag of `bytes`: their keyed BLAKE3 hash, which a keyed packet carries after its envelope.
    pub fn tag(&self, bytes: &[u8]) -> [u8; TAG_LEN] {
        *blake3::keyed_hash(&self.0, bytes).as_bytes()
    }

    /// Whether `tag` is the tag of `bytes`, compared in constant time.
    pub fn verify(&self, bytes: &[u8], tag: &[u8]) -> bool {
        // `blake3::Hash`'s equality is constant-time.
        <[u8; TAG_LEN]>::try_from(tag)
            .is_ok_and(|tag| blake3::Hash::from_bytes(self.tag(bytes)) == blake3::Hash::from_bytes(tag))
    }
}

/// Why a secret's file cannot be used.
enum Secret {
    Read(std::io::Error),
    NotAFile,
    TooLong,
    Empty,
}

/// The bytes of the regular file at `path`, less one trailing line ending (`\n` or `\r\n`), if there are any and
/// no more than `max`.
fn read_secret(path: &Path, max: u64) -> Result<Vec<u8>, Secret> {
    // A regular file only: opening a named pipe would wait for a writer for ever, and a device is no secret.
    if !std::fs::metadata(path).map_err(Secret::Read)?.is_file() {
        return Err(Secret::NotAFile);
    }
    let file = std::fs::File::open(path).map_err(Secret::Read)?;
    let mut secret = Vec::new();
    // One byte past the limit tells a long file from one exactly at it; a file that grows stops here.
    file.take(max + 1).read_to_end(&mut secret).map_err(Secret::Read)?;
    if secret.len() as u64 > max {
        return Err(Secret::TooLong);
    }
    if secret.ends_with(b"\r\n") {
        secret.truncate(secret.len() - 2);
    } else if secret.ends_with(b"\n") {
        secret.pop();
    }
    if secret.is_empty() {
        return Err(Secret::Empty);
    }
    Ok(secret)
}

/// The longest HTTP token file read, in bytes.
pub const MAX_TOKEN_FILE: u64 = 4096;

/// The token a member's HTTP endpoint asks of a request that changes something (`POST /resign`), read from
/// `elect node --http-token-file FILE`: the file's bytes less one trailing line ending, visible ASCII characters
/// only (they travel in an `Authorization: Bearer TOKEN` header), at most 4 KiB. Only its BLAKE3 hash is kept,
/// and a presented token is compared with it in constant time; its `Debug` form is redacted.
#[derive(Clone)]
pub struct HttpToken(blake3::Hash);

impl fmt::Debug for HttpToken {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("HttpToken(<redacted>)")
    }
}

impl HttpToken {
    /// The token `token`: not empty, visible ASCII characters only.
    pub fn new(token: &[u8]) -> Result<Self, TokenError> {
        if token.is_empty() {
            return Err(TokenError::Empty);
        }
        if let Some(at) = token.iter().position(|b| !b.is_ascii_graphic()) {
            return Err(TokenError::NotVisible { at });
        }
        Ok(Self(blake3::hash(token)))
    }

    /// The token in the file at `path`.
    pub fn from_file(path: &Path) -> Result<Self, TokenError> {
        Self::read(path).map(|(token, _)| token)
    }

    /// The token in the file at `path`, and its text, for a client to present (`Authorization: Bearer TOKEN`).
    pub fn read(path: &Path) -> Result<(Self, String), TokenError> {
        let token = read_secret(path, MAX_TOKEN_FILE).map_err(|e| match e {
            Secret::Read(source) => TokenError::Read { path: path.to_owned(), source },
            Secret::NotAFile => TokenError::NotAFile(path.to_owned()),
            Secret::TooLong => TokenError::TooLong(path.to_owned()),
            Secret::Empty => TokenError::EmptyFile(path.to_owned()),
        })?;
        let checked = Self::new(&token).map_err(|e| match e {
            TokenError::NotVisible { at } => TokenError::FileNotVisible { path: path.to_owned(), at },
            other => other,
        })?;
        // Visible ASCII only, as `new` checked.
        Ok((checked, String::from_utf8_lossy(&token).into_owned()))
    }

    /// Whether `presented` is the token (compared in constant time: `blake3::Hash`'s equality is).
    pub fn accepts(&self, presented: &[u8]) -> bool {
        blake3::hash(presented) == self.0
    }
}

/// A token, or its file, that cannot be used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TokenError {
    /// The file cannot be read.
    #[error("cannot read the token file {}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// Not a regular file.
    #[error("the token file {} is not a regular file", .0.display())]
    NotAFile(PathBuf),
    /// The file holds nothing (or only a line ending).
    #[error("the token file {} is empty: put a token in it, e.g. `head -c 24 /dev/urandom | base64 > FILE`", .0.display())]
    EmptyFile(PathBuf),
    /// The file is longer than [`MAX_TOKEN_FILE`].
    #[error("the token file {} is longer than 4 KiB: is it the right file?", .0.display())]
    TooLong(PathBuf),
    /// A character that cannot travel in an HTTP header.
    #[error(
        "the token file {} has a character that is not visible ASCII at byte {at} (a space, a control character or \
         a non-ASCII byte): a token travels in an `Authorization: Bearer TOKEN` header",
        path.display()
    )]
    FileNotVisible {
        /// The file.
        path: PathBuf,
        /// Where the character is.
        at: usize,
    },
    /// As [`TokenError::FileNotVisible`], for a token given directly.
    #[error("the token has a character that is not visible ASCII at byte {at}")]
    NotVisible {
        /// Where the character is.
        at: usize,
    },
    /// An empty token.
    #[error("the token is empty")]
    Empty,
}

/// A key file that cannot be used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum KeyError {
    /// The file cannot be read.
    #[error("cannot read the key file {}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// Not a regular file (a named pipe, a device, a directory).
    #[error("the key file {} is not a regular file", .0.display())]
    NotAFile(PathBuf),
    /// The file holds nothing (or only a line ending).
    #[error("the key file {} is empty: put a secret in it, e.g. `head -c 32 /dev/urandom > FILE`", .0.display())]
    EmptyFile(PathBuf),
    /// The file is longer than [`MAX_KEY_FILE`].
    #[error("the key file {} is longer than 64 KiB: is it the right file?", .0.display())]
    TooLong(PathBuf),
    /// An empty secret.
    #[error("the cluster key's secret is empty")]
    Empty,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn key_files_ignore_one_line_ending_and_refuse_empty_long_and_missing_files() {
        let dir = tempfile::tempdir().unwrap();
        let file = |name: &str, bytes: &[u8]| {
            let path = dir.path().join(name);
            std::fs::write(&path, bytes).unwrap();
            path
        };
        let plain = ClusterKey::from_file(&file("plain", b"secret")).unwrap();
        for other in [&b"secret\n"[..], b"secret\r\n"] {
            assert_eq!(ClusterKey::from_file(&file("other", other)).unwrap().0, plain.0);
        }
        assert_ne!(ClusterKey::from_file(&file("two", b"secret\n\n")).unwrap().0, plain.0);
        assert_ne!(ClusterKey::from_secret(b"secret2").unwrap().0, plain.0);
        assert_eq!(ClusterKey::from_secret(b"secret").unwrap().0, plain.0);
        for empty in [&b""[..], b"\n", b"\r\n"] {
            let err = ClusterKey::from_file(&file("empty", empty)).unwrap_err().to_string();
            assert!(err.contains("is empty"), "{err}");
        }
        let long = vec![b'x'; MAX_KEY_FILE as usize + 1];
        assert!(ClusterKey::from_file(&file("long", &long)).unwrap_err().to_string().contains("longer than 64 KiB"));
        assert!(ClusterKey::from_file(&file("max", &long[1..])).is_ok());
        let err = ClusterKey::from_file(&dir.path().join("missing")).unwrap_err().to_string();
        assert!(err.starts_with("cannot read the key file") && err.contains("missing"), "{err}");
        assert!(ClusterKey::from_file(dir.path()).is_err(), "a directory is no key file");
    }

    #[test]
    fn token_files_ignore_one_line_ending_and_refuse_empty_long_invisible_and_missing_files() {
        let dir = tempfile::tempdir().unwrap();
        let file = |name: &str, bytes: &[u8]| {
            let path = dir.path().join(name);
            std::fs::write(&path, bytes).unwrap();
            path
        };
        for bytes in [&b"s3cret"[..], b"s3cret\n", b"s3cret\r\n"] {
            let token = HttpToken::from_file(&file("token", bytes)).unwrap();
            assert!(token.accepts(b"s3cret") && !token.accepts(b"s3cre") && !token.accepts(b"s3cret\n"));
        }
        for empty in [&b""[..], b"\n"] {
            let err = HttpToken::from_file(&file("empty", empty)).unwrap_err().to_string();
            assert!(err.contains("is empty"), "{err}");
        }
        let err = HttpToken::from_file(&file("space", b"two words")).unwrap_err().to_string();
        assert!(err.contains("not visible ASCII at byte 3"), "{err}");
        let long = vec![b'x'; MAX_TOKEN_FILE as usize + 1];
        assert!(HttpToken::from_file(&file("long", &long)).unwrap_err().to_string().contains("longer than 4 KiB"));
        assert!(HttpToken::from_file(&file("max", &long[1..])).is_ok());
        let err = HttpToken::from_file(&dir.path().join("missing")).unwrap_err().to_string();
        assert!(err.starts_with("cannot read the token file"), "{err}");
        assert!(HttpToken::from_file(dir.path()).unwrap_err().to_string().contains("not a regular file"));
        assert_eq!(format!("{:?}", HttpToken::new(b"hunter2").unwrap()), "HttpToken(<redacted>)");
    }

    #[test]
    fn the_key_never_shows_in_debug_output() {
        let key = ClusterKey::from_secret(b"hunter2").unwrap();
        assert_eq!(format!("{key:?}"), "ClusterKey(<redacted>)");
        assert_eq!(format!("{:#?}", Some(&key)), "Some(\n    ClusterKey(<redacted>),\n)");
    }

    #[test]
    fn tags_verify_only_the_bytes_and_key_they_were_made_with() {
        let key = ClusterKey::from_secret(b"k").unwrap();
        let tag = key.tag(b"packet");
        assert!(key.verify(b"packet", &tag));
        assert!(!key.verify(b"packeT", &tag));
        assert!(!ClusterKey::from_secret(b"j").unwrap().verify(b"packet", &tag));
        assert!(!key.verify(b"packet", &tag[1..]));
    }
}
