//! A label map: a lecture's own names for elect's message kinds and roles, so that a picture speaks the words a
//! class was taught (S004's ARE-U-LEADER for Garcia-Molina's `are-you-coordinator`, say). Colours stay the kind's:
//! a label changes what a picture says, never what it draws.
//!
//! A label file is TOML, with up to two tables:
//!
//! ```toml
//! [messages]          # a message kind (as `elect sim --json` counts them) = its label
//! are-you-coordinator = "ARE-U-LEADER"
//! coordinator = "NEW-LEADER"
//!
//! [roles]             # a role (the first word of a process's description) = its label
//! candidate = "contender"
//! ```
//!
//! The page takes the same map as `KIND=LABEL` words (`role:ROLE=LABEL` for a role).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// The largest label file read, in bytes.
pub const MAX_LABEL_FILE: usize = 64 * 1024;
/// The most labels one map holds.
pub const MAX_LABELS: usize = 256;
/// The longest label, in characters.
pub const MAX_LABEL_CHARS: usize = 40;
/// The longest kind or role a label may be given for, in bytes.
const MAX_KEY: usize = 64;

/// A lecture's names for message kinds and roles.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Labels {
    /// Message kind → its label.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub messages: BTreeMap<String, String>,
    /// Role → its label.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub roles: BTreeMap<String, String>,
}

/// Why a label map was refused.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum LabelsError {
    /// Not TOML of the expected shape.
    #[error("{0}")]
    Syntax(String),
    /// A key or a label that is not one.
    #[error("{0}")]
    Invalid(String),
}

impl Labels {
    /// Reads a label file's `text` (see the module documentation).
    pub fn parse(text: &str) -> Result<Self, LabelsError> {
        if text.len() > MAX_LABEL_FILE {
            return Err(LabelsError::Invalid(format!("a label file has at most {MAX_LABEL_FILE} bytes")));
        }
        let labels: Self = toml::from_str(text).map_err(|e| LabelsError::Syntax(e.message().to_owned()))?;
        labels.validated()
    }

    /// Reads `KIND=LABEL` words (`role:ROLE=LABEL` for a role), as the page sends them.
    pub fn from_words<'a>(words: impl IntoIterator<Item = &'a str>) -> Result<Self, LabelsError> {
        let mut labels = Self::default();
        for word in words {
            let Some((key, label)) = word.split_once('=') else {
                return Err(LabelsError::Syntax(format!("'{word}' is not KIND=LABEL")));
            };
            let (map, key) = match key.strip_prefix("role:") {
                Some(role) => (&mut labels.roles, role),
                None => (&mut labels.messages, key),
            };
            map.insert(key.trim().to_owned(), label.trim().to_owned());
            if labels.messages.len() + labels.roles.len() > MAX_LABELS {
                break;
            }
        }
        labels.validated()
    }

    /// Whether no label is set.
    pub fn is_empty(&self) -> bool {
        self.messages.is_empty() && self.roles.is_empty()
    }

    /// The label of message kind `kind`: its own name when the map gives none.
    pub fn message<'a>(&'a self, kind: &'a str) -> &'a str {
        self.messages.get(kind).map_or(kind, String::as_str)
    }

    /// A message's one-line `text` (which starts with its kind) with the kind's label in its place.
    pub fn message_text(&self, kind: &str, text: &str) -> String {
        match (self.messages.get(kind), text.strip_prefix(kind)) {
            (Some(label), Some(rest)) => format!("{label}{rest}"),
            _ => text.to_owned(),
        }
    }

    /// Keys are kinds or roles (lower-case words joined by `-`), labels are short printable text.
    fn validated(self) -> Result<Self, LabelsError> {
        if self.messages.len() + self.roles.len() > MAX_LABELS {
            return Err(LabelsError::Invalid(format!("at most {MAX_LABELS} labels")));
        }
        for (key, label) in self.messages.iter().chain(&self.roles) {
            let word = |c: char| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-';
            if key.is_empty() || key.len() > MAX_KEY || !key.chars().all(word) {
                return Err(LabelsError::Invalid(format!(
                    "'{key}' is not a message kind or a role (lower-case words joined by -, as `elect sim --json` \
                     names them)"
                )));
            }
            if label.is_empty() || label.chars().count() > MAX_LABEL_CHARS || label.chars().any(char::is_control) {
                return Err(LabelsError::Invalid(format!(
                    "the label of {key} must be 1 to {MAX_LABEL_CHARS} printable characters"
                )));
            }
        }
        Ok(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_and_the_page_s_words_give_the_same_map() {
        let file = Labels::parse(
            "[messages]\nare-you-coordinator = \"ARE-U-LEADER\"\ncoordinator = \"NEW-LEADER\"\n\
             [roles]\ncandidate = \"contender\"\n",
        )
        .unwrap();
        let words = Labels::from_words([
            "are-you-coordinator=ARE-U-LEADER",
            "coordinator=NEW-LEADER",
            "role:candidate=contender",
        ])
        .unwrap();
        assert_eq!(file, words);
        assert_eq!(file.message("coordinator"), "NEW-LEADER");
        assert_eq!(file.message("ok"), "ok");
        assert_eq!(file.message_text("coordinator", "coordinator 5 (epoch 2)"), "NEW-LEADER 5 (epoch 2)");
        assert_eq!(file.message_text("ok", "ok (epoch 2)"), "ok (epoch 2)");
    }

    #[test]
    fn bad_maps_are_refused_with_the_reason() {
        let refused = |text: &str| Labels::parse(text).unwrap_err().to_string();
        assert!(refused("[messages]\nOk = \"x\"").contains("'Ok' is not a message kind"));
        assert!(refused("[messages]\nok = \"\"").contains("1 to 40"));
        assert!(refused(&format!("[messages]\nok = \"{}\"", "x".repeat(41))).contains("1 to 40"));
        assert!(refused("[messages]\nok = \"a\\u0007\"").contains("printable"));
        assert!(refused("[colours]\nok = \"red\"").contains("unknown field"));
        assert!(refused("[messages]\nok = 3").contains("string"));
        assert!(refused(&" ".repeat(MAX_LABEL_FILE + 1)).contains("bytes"));
        let many: String = (0..=MAX_LABELS).map(|k| format!("k{k} = \"x\"\n")).collect();
        assert!(refused(&format!("[messages]\n{many}")).contains("at most"));
        assert!(Labels::from_words(["no-equals"]).unwrap_err().to_string().contains("KIND=LABEL"));
    }
}
