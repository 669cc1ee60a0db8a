//! A flag's value read from its text, for the requests of `elect serve`: a request gives the flags of a command as
//! an object whose values are the texts a command line would give (`"5"`, `"ring"`, `"8@0"`), or lists of them for
//! a repeatable flag, and the flags' structs read them with these functions (`#[serde(deserialize_with = ...)]`),
//! through the same `FromStr` or parser function clap uses for the command line. A text that does not parse is
//! refused as `'TEXT': why`, which `serve/query.rs` words as the command line does.

use std::fmt::Display;
use std::str::FromStr;

use serde::de::{Deserialize, Deserializer, Error};

/// The rules between a command's flags that clap enforces on a command line but keeps to itself (it lets a
/// program read which flags conflict, not which need others), stated again for the requests; a test holds them
/// to clap's.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct Needs {
    /// Flags (by id) that need another: given without it, the request is refused.
    pub(crate) requires: &'static [(&'static str, &'static str)],
    /// Flags (by id) that must be given unless one of the others is.
    pub(crate) unless: &'static [(&'static str, &'static [&'static str])],
}

/// One text or a list of them, as a request gives a flag.
#[derive(serde::Deserialize)]
#[serde(untagged)]
enum Texts {
    One(String),
    Many(Vec<String>),
}

impl Texts {
    fn into_vec(self) -> Vec<String> {
        match self {
            Self::One(s) => vec![s],
            Self::Many(v) => v,
        }
    }
}

/// A value read from its text by `parse` (a clap value parser's function).
pub(crate) fn one_by<'de, D: Deserializer<'de>, T, E: Display>(
    d: D,
    parse: impl Fn(&str) -> Result<T, E>,
) -> Result<T, D::Error> {
    let text = String::deserialize(d)?;
    parsed(&text, &parse)
}

/// `text` read by `parse`, or the error `'TEXT': why`.
fn parsed<T, E: Display, R: Error>(text: &str, parse: impl Fn(&str) -> Result<T, E>) -> Result<T, R> {
    parse(text).map_err(|e| R::custom(format!("'{text}': {e}")))
}

fn maybe_by<'de, D: Deserializer<'de>, T, E: Display>(
    d: D,
    parse: impl Fn(&str) -> Result<T, E>,
) -> Result<Option<T>, D::Error> {
    match Option::<String>::deserialize(d)? {
        None => Ok(None),
        Some(text) => parsed(&text, parse).map(Some),
    }
}

/// The values of a repeatable flag, each read from its text by `parse`.
pub(crate) fn each_by<'de, D: Deserializer<'de>, T, E: Display>(
    d: D,
    parse: impl Fn(&str) -> Result<T, E>,
) -> Result<Vec<T>, D::Error> {
    let texts = Texts::deserialize(d)?.into_vec();
    texts.iter().map(|text| parsed(text, &parse)).collect()
}

/// A value of a type the command line parses with `FromStr`.
pub(crate) fn text<'de, D: Deserializer<'de>, T: FromStr<Err: Display>>(d: D) -> Result<T, D::Error> {
    one_by(d, T::from_str)
}

/// An optional value of a type the command line parses with `FromStr` (`null` when not given).
pub(crate) fn maybe<'de, D: Deserializer<'de>, T: FromStr<Err: Display>>(d: D) -> Result<Option<T>, D::Error> {
    maybe_by(d, T::from_str)
}

/// The values of a repeatable flag of a type the command line parses with `FromStr`.
pub(crate) fn each<'de, D: Deserializer<'de>, T: FromStr<Err: Display>>(d: D) -> Result<Vec<T>, D::Error> {
    each_by(d, T::from_str)
}

/// An optional time (`--until`).
pub(crate) fn maybe_time<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
    maybe_by(d, elect_scenario::parse_time)
}

/// The times of a repeatable flag (`--crash-leader-at`).
pub(crate) fn times<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<u64>, D::Error> {
    each_by(d, elect_scenario::parse_time)
}

/// A size in bytes (`--max-file-size 64M`).
pub(crate) fn bytes<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
    one_by(d, crate::limits::parse_bytes)
}

/// An optional size in bytes (`--max-memory`).
pub(crate) fn maybe_bytes<'de, D: Deserializer<'de>>(d: D) -> Result<Option<u64>, D::Error> {
    maybe_by(d, crate::limits::parse_bytes)
}

/// One of a clap `ValueEnum`'s names.
pub(crate) fn choice<'de, D: Deserializer<'de>, T: clap::ValueEnum>(d: D) -> Result<T, D::Error> {
    one_by(d, |s| T::from_str(s, false))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(serde::Deserialize, Debug)]
    struct Sample {
        #[serde(deserialize_with = "text")]
        n: usize,
        #[serde(deserialize_with = "maybe")]
        seed: Option<u64>,
        #[serde(deserialize_with = "each")]
        sizes: Vec<u8>,
        #[serde(deserialize_with = "times")]
        at: Vec<u64>,
    }

    #[test]
    fn texts_become_values_and_bad_texts_are_named() {
        let s: Sample = serde_json::from_str(r#"{"n":"5","seed":null,"sizes":["1","2"],"at":"3"}"#).unwrap();
        assert_eq!((s.n, s.seed, s.sizes, s.at), (5, None, vec![1, 2], vec![elect_scenario::parse_time("3").unwrap()]));
        let e = serde_json::from_str::<Sample>(r#"{"n":"five","seed":null,"sizes":[],"at":[]}"#).unwrap_err();
        assert!(e.to_string().contains("'five'"), "{e}");
        let e = serde_json::from_str::<Sample>(r#"{"n":"1","seed":"2","sizes":["300"],"at":[]}"#).unwrap_err();
        assert!(e.to_string().contains("'300'"), "{e}");
    }
}
