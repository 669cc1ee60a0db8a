//! Algorithm parameters (`--param KEY=VALUE`), validated by each algorithm against its declared list.

use std::collections::BTreeMap;
use std::fmt;
use std::str::FromStr;

use elect_core::{InT, NodeId};

/// The longest period a parameter may set, in multiples of the delay bound `T`: periods, timeouts and heartbeats
/// (`check=K`, `timeout=K`, `merge=K`, `heartbeat=K`, and `--heartbeat K`) are at most a million `T`. Longer ones
/// mean nothing to an election (a run would see no period end) and `K·T` must fit in virtual time, which a value
/// near 2^64 does not.
pub const MAX_MULTIPLE: u64 = 1_000_000;

/// The most characters of a user's input an error message repeats: [`shorten`] cuts anything longer.
pub const ECHO_CHARS: usize = 100;

/// A user's input as an error message repeats it: whole if it has at most [`ECHO_CHARS`] characters, otherwise
/// its start and its end around a count of what was left out, so that a megabyte-long value gives a line of a
/// hundred-odd characters. Every error that echoes input shows it through this.
pub fn shorten(input: &str) -> std::borrow::Cow<'_, str> {
    shorten_to(input, ECHO_CHARS)
}

/// `input` cut as [`shorten`] cuts it, to about `most` characters.
pub fn shorten_to(input: &str, most: usize) -> std::borrow::Cow<'_, str> {
    let chars = input.chars().count();
    if chars <= most {
        return input.into();
    }
    let (head, tail) = (most * 3 / 5, most / 5);
    let left: String = input.chars().take(head).collect();
    let right: String = input.chars().skip(chars - tail).collect();
    format!("{left}[… {} more characters …]{right}", chars - head - tail).into()
}

/// A parameter an algorithm accepts.
#[derive(Clone, Copy, Debug)]
pub struct ParamInfo {
    /// The key.
    pub name: &'static str,
    /// The accepted values, as shown in `--help` and `elect list`.
    pub values: &'static str,
    /// The value used when the key is absent.
    pub default: &'static str,
    /// What it changes.
    pub help: &'static str,
}

/// A bad `--param`.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ParamError {
    /// Not of the form `KEY=VALUE`.
    #[error("malformed parameter '{}': expected KEY=VALUE", shorten(.0))]
    Malformed(String),
    /// The same key twice.
    #[error("parameter '{}' is given twice", shorten(.0))]
    Duplicate(String),
    /// A key the algorithm does not take.
    #[error("{algorithm} has no parameter '{}' ({known})", shorten(key))]
    Unknown {
        /// The algorithm's name.
        algorithm: &'static str,
        /// The key given.
        key: String,
        /// What it does take.
        known: String,
    },
    /// A value the algorithm cannot use.
    #[error("parameter {key}={} is invalid: {reason}", shorten(value))]
    Invalid {
        /// The key.
        key: &'static str,
        /// The value given.
        value: String,
        /// Why it is wrong.
        reason: String,
    },
}

/// Parameters by key.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Params(BTreeMap<String, String>);

impl Params {
    /// No parameters: every algorithm's defaults.
    pub fn new() -> Self {
        Self::default()
    }

    /// Parses `KEY=VALUE` strings.
    pub fn parse<'a>(pairs: impl IntoIterator<Item = &'a str>) -> Result<Self, ParamError> {
        let mut params = Self::new();
        for pair in pairs {
            let (key, value) = pair
                .split_once('=')
                .filter(|(k, _)| !k.trim().is_empty())
                .ok_or_else(|| ParamError::Malformed(pair.to_owned()))?;
            params.insert(key.trim(), value.trim())?;
        }
        Ok(params)
    }

    /// Adds one parameter.
    pub fn insert(&mut self, key: &str, value: &str) -> Result<(), ParamError> {
        match self.0.insert(key.to_owned(), value.to_owned()) {
            Some(_) => Err(ParamError::Duplicate(key.to_owned())),
            None => Ok(()),
        }
    }

    /// The value of `key`, if given.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key).map(String::as_str)
    }

    /// The value of `key`, and every other parameter: for a parameter of a wrapper (the deployed member's), taken
    /// out before the wrapped algorithm checks its own.
    pub fn without(&self, key: &str) -> (Option<String>, Self) {
        let mut rest = self.clone();
        let value = rest.0.remove(key);
        (value, rest)
    }

    /// Every parameter, in key order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.0.iter().map(|(k, v)| (k.as_str(), v.as_str()))
    }

    /// Rejects keys that `algorithm` does not declare.
    pub fn check_known(&self, algorithm: &'static str, known: &[ParamInfo]) -> Result<(), ParamError> {
        let Some(key) = self.0.keys().find(|k| !known.iter().any(|p| p.name == k.as_str())) else {
            return Ok(());
        };
        let known = match known {
            [] => "it takes none".to_owned(),
            _ => format!("it takes: {}", known.iter().map(|p| p.name).collect::<Vec<_>>().join(", ")),
        };
        Err(ParamError::Unknown { algorithm, key: key.clone(), known })
    }

    /// The value of `info`'s key parsed as `T`, or its default.
    pub fn value<T: FromStr>(&self, info: &ParamInfo) -> Result<T, ParamError>
    where
        T::Err: fmt::Display,
    {
        let raw = self.get(info.name).unwrap_or(info.default);
        raw.parse().map_err(|e: T::Err| ParamError::Invalid {
            key: info.name,
            value: raw.to_owned(),
            reason: format!("{e} (expected {})", info.values),
        })
    }

    /// The value of `info`'s key as a whole number of delay bounds `T`, from `min` to [`MAX_MULTIPLE`].
    pub fn multiple(&self, info: &ParamInfo, min: u64) -> Result<InT, ParamError> {
        let raw = self.get(info.name).unwrap_or(info.default);
        let invalid = |reason: String| ParamError::Invalid { key: info.name, value: raw.to_owned(), reason };
        let k: u64 = raw.parse().map_err(|_| invalid(format!("not a whole number of T (expected {})", info.values)))?;
        if k < min {
            let min = if min == 1 { "one".to_owned() } else { min.to_string() };
            return Err(invalid(format!("a period must be at least {min} T")));
        }
        check_multiple(k).map_err(|e| invalid(e.to_string()))
    }

    /// The value of `info`'s key as a comma-separated list of ids (empty by default).
    pub fn ids(&self, info: &ParamInfo) -> Result<Vec<NodeId>, ParamError> {
        let raw = self.get(info.name).unwrap_or(info.default);
        raw.split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(|s| {
                s.parse().map(NodeId).map_err(|_| ParamError::Invalid {
                    key: info.name,
                    value: raw.to_owned(),
                    reason: format!("'{}' is not a node id", shorten(s)),
                })
            })
            .collect()
    }
}

/// A multiple of `T` above [`MAX_MULTIPLE`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("at most {MAX_MULTIPLE} (a million times the delay bound T)")]
pub struct TooLong;

/// Refuses a multiple of `T` above [`MAX_MULTIPLE`], saying why.
pub fn check_multiple(k: u64) -> Result<InT, TooLong> {
    if k > MAX_MULTIPLE {
        return Err(TooLong);
    }
    Ok(InT(k))
}

impl fmt::Display for Params {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let pairs: Vec<String> = self.iter().map(|(k, v)| format!("{k}={v}")).collect();
        f.write_str(&pairs.join(" "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LEVEL: ParamInfo = ParamInfo { name: "level", values: "a number", default: "3", help: "" };
    const DEAD: ParamInfo = ParamInfo { name: "dead", values: "ids", default: "", help: "" };

    #[test]
    fn pairs_parse_and_defaults_apply() {
        let p = Params::parse(["level = 5", "dead=1, 2"]).unwrap();
        assert_eq!(p.value::<u32>(&LEVEL).unwrap(), 5);
        assert_eq!(p.ids(&DEAD).unwrap(), [NodeId(1), NodeId(2)]);
        assert_eq!(Params::new().value::<u32>(&LEVEL).unwrap(), 3);
        assert_eq!(Params::new().ids(&DEAD).unwrap(), []);
    }

    #[test]
    fn long_input_is_shortened_in_messages() {
        assert_eq!(shorten("short"), "short");
        let long = "x".repeat(131_000);
        let cut = shorten(&long);
        assert!(cut.len() < 150 && cut.contains("130920 more characters"), "{cut}");
        let bad = Params::parse([format!("level={long}").as_str()]).unwrap().value::<u32>(&LEVEL).unwrap_err();
        assert!(bad.to_string().len() < 300, "{bad}");
        assert_eq!(shorten(&"é".repeat(101)).chars().filter(|&c| c == 'é').count(), 80, "cut at characters");
    }

    #[test]
    fn bad_input_is_named() {
        assert_eq!(Params::parse(["level"]).unwrap_err(), ParamError::Malformed("level".into()));
        assert_eq!(Params::parse(["a=1", "a=2"]).unwrap_err(), ParamError::Duplicate("a".into()));
        let unknown = Params::parse(["speed=9"]).unwrap().check_known("bully", &[LEVEL]).unwrap_err();
        assert_eq!(unknown.to_string(), "bully has no parameter 'speed' (it takes: level)");
        let bad = Params::parse(["level=x"]).unwrap().value::<u32>(&LEVEL).unwrap_err();
        assert!(bad.to_string().starts_with("parameter level=x is invalid"), "{bad}");
        let huge = Params::parse(["level=18446744073709551615"]).unwrap().multiple(&LEVEL, 1).unwrap_err();
        assert!(huge.to_string().contains("at most 1000000"), "{huge}");
        assert_eq!(Params::parse(["level=1000000"]).unwrap().multiple(&LEVEL, 1), Ok(InT(MAX_MULTIPLE)));
        assert!(
            Params::parse(["level=0"]).unwrap().multiple(&LEVEL, 1).unwrap_err().to_string().contains("at least one T")
        );
        let bad_id = Params::parse(["dead=1,x"]).unwrap().ids(&DEAD).unwrap_err();
        assert!(bad_id.to_string().contains("'x' is not a node id"), "{bad_id}");
    }
}
