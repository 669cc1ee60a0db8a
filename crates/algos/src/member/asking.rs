//! Asking after a lost state. A member that starts knowing no fencing epoch (a first start, or its state was
//! lost) asks every other member for the highest epoch it knows, and grants itself nothing until a round trip is
//! over *and* it has heard from enough members that, with itself, they are a majority: every epoch a majority knew
//! when it answered is then known to one of those it heard, so its grant is above all of them. Every packet counts
//! as an answer, since every packet carries its sender's `seen`. Short of a majority it asks again, every round
//! trip. A question is answered by every member but one that is waiting for the answers to its own: questions of
//! members that start together cross, and each is the other's answer.

use elect_core::{Cx, Span};

use super::packet::{Body, MemberTimer};
use super::process::Member;
use super::rule;
use super::state::{Asking, Away};
use crate::algorithm::Algorithm;

impl<A: Algorithm> Member<A> {
    /// Asks every other member for the highest epoch it knows, and waits a round trip for the answers.
    pub(super) fn ask(&self, cx: &mut Cx<'_, Self>) {
        cx.set_timer(MemberTimer::Asked, Span::exactly(self.fixed.ask));
        self.broadcast(cx, Body::Ask);
    }

    /// Whether this member answers a question now: unless it waits for the answers to its own.
    pub(super) fn answers_questions(&self) -> bool {
        self.asking != Asking::Waiting
    }

    /// The round trip of its question is over: short of answers from a majority, the member asks again (unless it
    /// left).
    pub(super) fn on_asked(&mut self, cx: &mut Cx<'_, Self>) {
        cx.rule(rule::ASKED);
        self.asking = Asking::Short;
        if !self.heard_majority() && self.away != Away::Left {
            // Too few answers: a question or an answer was lost, or a peer was down. It asks again.
            self.ask(cx);
        }
    }

    /// A member whose round trip is over has its answers once it has heard from a majority of the voters (with
    /// itself, if it votes), and holds the newest configuration any of them said it holds (the leader sends it).
    pub(super) fn count_answers(&mut self) {
        if self.asking == Asking::Short && self.heard_majority() && self.membership.current() {
            self.asking = Asking::Answered;
        }
    }
}
