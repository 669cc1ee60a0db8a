//! The algorithm's parameters, and its configuration: its periods in multiples of the delay bound `T`, how often a
//! failed exchange is tried again, and whether a member holds a pre-vote before it leaves its group.

use elect_core::InT;

use crate::params::{ParamError, ParamInfo, Params};

pub(super) const CHECK: ParamInfo = ParamInfo {
    name: "check",
    values: "a number of T",
    default: "10",
    help: "a coordinator looks for other coordinators every check·T",
};

pub(super) const TIMEOUT: ParamInfo = ParamInfo {
    name: "timeout",
    values: "a number of T",
    default: "10",
    help: "a member checks that its coordinator still has it every timeout·T",
};

pub(super) const MERGE: ParamInfo = ParamInfo {
    name: "merge",
    values: "a number of T",
    default: "6",
    help: "a coordinator waits merge·T per stronger coordinator it found before merging",
};

pub(super) const RETRIES: ParamInfo = ParamInfo {
    name: "retries",
    values: "a number (0 to 8)",
    default: "4",
    help: "on a lossy network, an exchange whose answer does not come within 2T+ε is tried again this many times \
           before it counts as failed: a member's are-you-there, its accept (the coordinator answers a late accept \
           with ready), and the coordinator's ready to members that did not ack; 0 is the algorithm as published",
};

pub(super) const PRE_VOTE: ParamInfo = ParamInfo {
    name: "pre-vote",
    values: "true|false",
    default: "true",
    help: "a member whose coordinator does not answer asks the others whether they still hear it, and keeps its \
           group while one does, instead of forming a group of its own; false is the algorithm as published",
};

/// The algorithm's configuration: its periods, in multiples of the delay bound `T`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Invitation {
    /// Coordinators look for others every `check·T`.
    pub check: InT,
    /// Members check on their coordinator every `timeout·T`.
    pub timeout: InT,
    /// The merge delay per stronger coordinator, in `T`.
    pub merge: InT,
    /// How many times an exchange that got no answer is tried again before it counts as failed.
    pub retries: u32,
    /// A member whose coordinator does not answer asks the others whether they still hear it before it forms a
    /// group of its own.
    pub pre_vote: bool,
}

impl Default for Invitation {
    fn default() -> Self {
        Self { check: InT(10), timeout: InT(10), merge: InT(6), retries: 4, pre_vote: true }
    }
}

impl Invitation {
    /// The configuration `params` give, checked.
    pub(super) fn parse(params: &Params) -> Result<Self, ParamError> {
        // Periods shorter than 4T do not leave an exchange time to finish; none is longer than
        // `params::MAX_MULTIPLE` T.
        let period = |info: &ParamInfo| {
            params.multiple(info, 0).and_then(|k| match k.count() {
                0..4 => Err(ParamError::Invalid {
                    key: info.name,
                    value: k.to_string(),
                    reason: "periods shorter than 4T do not leave an exchange time to finish".to_owned(),
                }),
                _ => Ok(k),
            })
        };
        let retries: u32 = params.value(&RETRIES)?;
        if retries > 8 {
            let reason = "at most 8 (each one adds 2T + ε before a failed exchange counts as failed)".to_owned();
            return Err(ParamError::Invalid { key: RETRIES.name, value: retries.to_string(), reason });
        }
        Ok(Self {
            check: period(&CHECK)?,
            timeout: period(&TIMEOUT)?,
            merge: params.multiple(&MERGE, 0)?,
            retries,
            pre_vote: params.value(&PRE_VOTE)?,
        })
    }
}
