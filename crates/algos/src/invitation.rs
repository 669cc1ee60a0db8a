#![doc = include_str!("../../../docs/reference/algorithms/invitation.md")]

mod config;
mod messages;
mod process;

use elect_core::{Check, Duration, InT, Property, Setup};

use crate::algorithm::{Algorithm, Bound, Elects, Facts, Info, Initiators, LinkOrder, Needs, Showcase, Timing};
use crate::params::{ParamError, Params};

pub use config::Invitation;
use config::{CHECK, MERGE, PRE_VOTE, RETRIES, TIMEOUT};
use messages::*;
pub use messages::{Msg, Timer};
pub use process::InvitationProcess;

static INFO: Info = Info {
    name: "invitation",
    aliases: &["gm-invitation"],
    title: "Invitation (Garcia-Molina, with Stoller's correction)",
    model: "complete graph, asynchronous (timeouts of T move it on; its safety needs no bound): lossy links, \
            partitions, non-transitive connectivity; stable storage",
    seed: "S004",
    needs: Needs::Complete,
    timing: Timing::Synchronous,
    links: LinkOrder::Any,
    elects: Elects::PerGroup,
    lockstep: false,
    params: &[CHECK, TIMEOUT, MERGE, RETRIES, PRE_VOTE],
    rules: &[
        RECOVER,
        LOOK,
        SKIP_CHECK,
        ANSWER_COORDINATOR,
        NOTE,
        NOT_ONE,
        ALONE,
        MERGE_DELAY,
        MERGE_NOW,
        SKIP_MERGE,
        FORWARD,
        ACCEPT,
        BUSY,
        ADD,
        SEND_READY,
        JOIN,
        NOTE_ACK,
        ALL_ACKED,
        READY_AGAIN,
        DROP,
        ASK,
        SKIP_TIMEOUT,
        ANSWER_THERE,
        STILL,
        LEFT_OUT,
        ASK_AGAIN,
        NO_ANSWER,
        ASK_OTHERS,
        ANSWER_HEAR,
        KEPT,
        NOT_HEARD,
        NOBODY_HEARS,
        INVITE_LEFT,
        MERGING_SILENT,
        LATE_ACCEPT,
        ACK_AGAIN,
        ACCEPT_AGAIN,
        NO_READY,
        STALE,
        OLD_TIMER,
        NO_HAND_OVER,
    ],
    showcase: Showcase {
        initiators: Initiators::All,
        crash_strongest: false,
        describe: "singletons merge into one group",
    },
};

impl Algorithm for Invitation {
    type Process = InvitationProcess;
    const INFO: &'static Info = &INFO;

    fn from_params(params: &Params) -> Result<Self, ParamError> {
        Self::parse(params)
    }

    fn build(&self, setup: &Setup<'_>) -> InvitationProcess {
        InvitationProcess::new(*self, setup)
    }

    fn checks(&self) -> Vec<Check> {
        vec![Check::always(Property::A3), Check::at_end(Property::A4), Check::at_end(Property::A4Prime)]
    }

    /// From singletons to one group: a check period, its answers, the merge delays, the invitation round.
    fn election_time(&self, facts: &Facts, t: Duration) -> Duration {
        t * (self.check + self.merge * facts.nodes + 8)
    }

    /// `τ = 2·(check + timeout + n·merge + 16 + 6·retries + p)·T`: a member notices a lost coordinator within a
    /// timeout period and its reply time (`3T` more per retry); coordinators find each other within a check period;
    /// the merge delays and an invitation round follow (a member waits `3T` more per retry of its accept); twice that
    /// covers a merge disturbed by another. With the pre-vote, `p = timeout + 6 + 3·retries`: the others may vouch
    /// for a lost coordinator until their own next exchange with it failed, so a member may be kept once, and ask
    /// again a period later, each pre-vote taking a round trip; without it, `p = 0`.
    fn settle_time(&self, facts: &Facts, delay_bound: Option<Duration>) -> Option<Duration> {
        let t = delay_bound?;
        let retries = u64::from(self.retries);
        let pre_vote = if self.pre_vote { self.timeout + 6 + 3 * retries } else { InT::ZERO };
        Some(t * ((self.check + self.timeout + self.merge * facts.nodes + 16 + 6 * retries + pre_vote) * 2))
    }

    /// Periodic checks make totals grow with the length of the run: no closed form applies.
    fn bounds(&self, _: &Facts) -> Vec<Bound> {
        Vec::new()
    }
}
