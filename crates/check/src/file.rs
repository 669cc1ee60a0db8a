//! Counterexample files: what `elect check --save` writes and `elect sim --replay` reads back, as JSON. Reading
//! one checks every field that can be checked without the scenario: the format and version, that it has steps, and
//! that its cycle starts at one of them. Whether its property is the algorithm's, and whether its steps can be
//! taken, is for [`crate::replay`] to find out.

use serde::{Deserialize, Serialize};

use crate::{Action, Counterexample};

/// The `format` of every counterexample file.
pub const FORMAT: &str = "elect-counterexample";

/// A counterexample file: the command that found it and the path, step by step.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CounterexampleFile {
    /// [`FORMAT`].
    pub format: String,
    /// 1.
    pub version: u32,
    /// The arguments of `elect check` that found it (what the replay rebuilds the scenario from).
    pub check: Vec<String>,
    /// The property violated.
    pub property: String,
    /// What is wrong at the end of the path.
    pub detail: String,
    /// For a run that never settles: the step its cycle starts at.
    pub loop_start: Option<usize>,
    /// The steps, readable.
    pub path: Vec<String>,
    /// The steps, as the replay takes them.
    pub actions: Vec<Action>,
}

/// Why a text is not a counterexample file.
#[derive(Debug, PartialEq, Eq, thiserror::Error)]
pub enum FileError {
    /// Not JSON of the file's shape.
    #[error("not a counterexample file: {0}")]
    Json(String),
    /// Another format or version.
    #[error("format {format} version {version} is not {FORMAT} version 1")]
    Format {
        /// The file's format.
        format: String,
        /// The file's version.
        version: u32,
    },
    /// No step.
    #[error("its actions: no step to replay")]
    NoActions,
    /// A cycle that starts past the last step.
    #[error("its loop_start: step {at} is past the last of its {steps} steps")]
    LoopStart {
        /// Where the file says the cycle starts.
        at: usize,
        /// The steps.
        steps: usize,
    },
}

impl CounterexampleFile {
    /// The file of `found`, found by `elect check ARGS`.
    pub fn new(check: Vec<String>, found: &Counterexample) -> Self {
        Self {
            format: FORMAT.into(),
            version: 1,
            check,
            property: found.property.into(),
            detail: found.detail.clone(),
            loop_start: found.loop_start,
            path: found.path.iter().map(ToString::to_string).collect(),
            actions: found.actions.clone(),
        }
    }

    /// Reads a file's text, checking its fields.
    pub fn parse(text: &str) -> Result<Self, FileError> {
        let file: Self = serde_json::from_str(text).map_err(|e| FileError::Json(e.to_string()))?;
        if file.format != FORMAT || file.version != 1 {
            return Err(FileError::Format { format: file.format, version: file.version });
        }
        if file.actions.is_empty() {
            return Err(FileError::NoActions);
        }
        if let Some(at) = file.loop_start.filter(|&at| at >= file.actions.len()) {
            return Err(FileError::LoopStart { at, steps: file.actions.len() });
        }
        Ok(file)
    }

    /// The file's text.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).expect("a counterexample file is JSON") + "\n"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_is_read_back_and_its_fields_are_checked() {
        let file = CounterexampleFile {
            format: FORMAT.into(),
            version: 1,
            check: vec!["-a".into(), "bully".into()],
            property: "safety".into(),
            detail: "two leaders".into(),
            loop_start: Some(0),
            path: vec!["a step".into()],
            actions: vec![Action::Wait],
        };
        assert_eq!(CounterexampleFile::parse(&file.to_json()), Ok(file.clone()));
        let bad = |f: CounterexampleFile| CounterexampleFile::parse(&f.to_json()).unwrap_err();
        assert_eq!(
            bad(CounterexampleFile { loop_start: Some(1), ..file.clone() }),
            FileError::LoopStart { at: 1, steps: 1 }
        );
        assert_eq!(
            bad(CounterexampleFile { actions: Vec::new(), loop_start: None, ..file.clone() }),
            FileError::NoActions
        );
        assert!(matches!(bad(CounterexampleFile { version: 2, ..file.clone() }), FileError::Format { .. }));
        let surplus = file.to_json().replacen('{', "{\"surplus\": 1,", 1);
        assert!(CounterexampleFile::parse(&surplus).unwrap_err().to_string().contains("unknown field `surplus`"));
        assert!(CounterexampleFile::parse("").is_err());
    }
}
