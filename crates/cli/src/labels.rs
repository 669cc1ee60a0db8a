//! `--labels FILE` and `--label KIND=LABEL`: a lecture's names for message kinds and roles in the pictures of
//! `elect sim` and `elect check` (see `elect_viz::labels`).

use std::path::PathBuf;

use clap::Args;
use elect_viz::Labels;

use crate::limits;
use crate::outcome::BadInput;

/// The label flags, shared by `elect sim` and `elect check`.
#[derive(Args, Clone, Debug, Default, serde::Deserialize)]
pub(crate) struct LabelArgs {
    /// Name message kinds and roles as a lecture does, in the pictures (--svg, --html): a TOML file with a
    /// [messages] table of KIND = "LABEL" (e.g. coordinator = "NEW-LEADER") and a [roles] table of ROLE =
    /// "LABEL". Colours stay the kind's
    #[arg(long, value_name = "FILE")]
    labels: Option<PathBuf>,
    /// One label, KIND=LABEL (role:ROLE=LABEL for a role), over those of --labels (repeatable)
    #[arg(long = "label", value_name = "KIND=LABEL")]
    label: Vec<String>,
}

impl LabelArgs {
    /// The label map the flags give (empty without them).
    pub(crate) fn read(&self) -> Result<Labels, BadInput> {
        let mut labels = match &self.labels {
            Some(path) => {
                let max = elect_viz::labels::MAX_LABEL_FILE as u64;
                let text = limits::read_bounded(path, "label file", max)?;
                Labels::parse(&text).map_err(|e| BadInput(format!("--labels {}: {e}", path.display())))?
            }
            None => Labels::default(),
        };
        let words =
            Labels::from_words(self.label.iter().map(String::as_str)).map_err(|e| BadInput(format!("--label: {e}")))?;
        labels.messages.extend(words.messages);
        labels.roles.extend(words.roles);
        if labels.messages.len() + labels.roles.len() > elect_viz::labels::MAX_LABELS {
            return Err(BadInput(format!("--label: at most {} labels in all", elect_viz::labels::MAX_LABELS)));
        }
        Ok(labels)
    }
}
