//! Resigning and leaving. A leader that resigns ends its grant, tells everybody it is leaving (a member whose
//! leader leaves elects again at once, without waiting to suspect it) and sits out for the resign hold; then it
//! takes part again with a fresh instance of its algorithm, restarted from its durable state as after a crash. A
//! member that leaves does the same for good. A member that does not lead has nothing to give up. While it sits
//! out, its algorithm hears nothing; the member still corrects a stale grant, answers questions, and shows the
//! newest live claim. A member that must never lead (`--no-lead`) sits out in the same way for its whole life, from
//! its start, without telling anyone: to the others it is a member that never answers in an election. A member with a
//! takeover delay sits out the same way for that long after each start, then takes part as after a resign hold.

use elect_core::{Command, Cx, Duration, Event, Span};

use super::packet::{Body, MemberTimer};
use super::process::Member;
use crate::algorithm::Algorithm;

/// Whether the member takes part in elections.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(super) enum Away {
    /// It does.
    Present,
    /// It resigned, and sits out until the resign hold is over.
    Resigned,
    /// It left for good.
    Left,
    /// It must never lead: it takes no part, from its start (its algorithm does not even start).
    Never,
    /// It started, and sits out until its takeover delay is over (its algorithm starts then).
    Waiting,
}

impl<A: Algorithm> Member<A> {
    /// Asked to resign: a leader that takes part tells its algorithm, and sits out for the resign hold.
    pub(super) fn resign(&mut self, cx: &mut Cx<'_, Self>) {
        if self.grant.is_some() && self.away == Away::Present {
            self.run(cx, Event::Command(Command::Resign));
            self.sit_out(cx, Some(self.fixed.resign_hold));
        }
    }

    /// Asked to leave: a leader tells its algorithm to resign, and the member sits out for good.
    pub(super) fn leave(&mut self, cx: &mut Cx<'_, Self>) {
        if self.away != Away::Left {
            if self.grant.is_some() {
                self.run(cx, Event::Command(Command::Resign));
            }
            self.sit_out(cx, None);
        }
    }

    /// Stops taking part in elections: until the resign hold is over (`hold`), or for good.
    fn sit_out(&mut self, cx: &mut Cx<'_, Self>, hold: Option<Duration>) {
        match hold {
            Some(hold) => {
                self.away = Away::Resigned;
                cx.set_timer(MemberTimer::Wake, Span::exactly(hold));
            }
            None => {
                self.away = Away::Left;
                cx.cancel_timer(MemberTimer::Wake);
            }
        }
        self.give_up_lease(cx);
        self.decide(cx);
        self.broadcast(cx, Body::Leaving);
    }

    /// Back from sitting out: a fresh instance of the algorithm, restarted from its durable state as after a
    /// crash, which initiates.
    pub(super) fn rejoin(&mut self, cx: &mut Cx<'_, Self>) {
        self.away = Away::Present;
        self.life += 1;
        self.inner.rebuild(&self.fixed.setup.setup());
        self.run(cx, Event::Start { restored: self.durable.clone() });
        self.run(cx, Event::Command(Command::Initiate));
        self.decide(cx);
    }
}
