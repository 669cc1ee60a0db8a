//! The end of a run: the last judgement of the properties promised at the end, whether the run settled, and its
//! report.

use super::*;

impl<A: Algorithm> Sim<A> {
    pub(super) fn end(&mut self) {
        if !self.stopped {
            self.now = self.counters.last_event;
        }
        let settled = (self.terminated || self.stopped).then(|| self.settled());
        let max_events = self.scenario.config.max_events;
        self.judge(|monitor, world, found| match settled {
            Some(settled) => monitor.at_end(world, settled.err(), found),
            None if monitor.checks().iter().any(|c| c.property == Property::Liveness) => {
                let detail = format!("the run did not terminate within {max_events} events");
                found.push(Violation { property: Property::Liveness, node: None, detail });
            }
            None => {}
        });
        let (events, messages) = (self.counters.events, self.counters.sent);
        let record = Record::End { t: self.t(), events, messages, terminated: self.terminated };
        self.record(record);
    }

    /// Whether the run ended settled, so that its "at end" properties can be judged: quiescent, or stopped at
    /// `--until` at least the algorithm's settling time after the last fault, on links that do not lose messages
    /// at random (a link that loses some messages is neither up nor down, so the system never becomes stable).
    pub(super) fn settled(&self) -> Result<(), String> {
        if self.terminated {
            return Ok(());
        }
        let losses = &self.scenario.losses;
        let random = |p: Probability| !p.is_never() && p != Probability::ALWAYS;
        if random(losses.everywhere) || losses.links.values().any(|&p| random(p)) {
            return Err("links lose messages at random (--loss), so the run never becomes stable".to_owned());
        }
        let since = self.last_fault.unwrap_or(0);
        match self.algorithm.settle_time(&self.facts(), self.scenario.delay_bound) {
            None => Err("the run was stopped at --until before it became quiescent".to_owned()),
            Some(tau) if self.now.saturating_sub(since) >= tau.ticks() => Ok(()),
            Some(tau) => Err(format!(
                "the run ended {} after the last fault, less than the settling time {}",
                Time(self.now.saturating_sub(since)),
                Time(tau.ticks())
            )),
        }
    }

    /// The facts about this run that bounds and settling times are functions of.
    pub(super) fn facts(&self) -> Facts {
        Facts { live: self.up.iter().filter(|&&up| up).count() as u64, ..self.scenario.facts() }
    }

    /// What the run measured and checked. Call after [`Sim::run`].
    pub fn report(&self) -> Report {
        Finished {
            algorithm: &self.algorithm,
            scenario: &self.scenario,
            procs: &self.procs,
            up: &self.up,
            learned_at: &self.learned_at,
            counters: &self.counters,
            judge: &self.judge,
            pulses: &self.pulses,
            mobility: self.mobile.as_ref().map(|m| m.report(&self.up, self.now, self.counters.elections)),
            facts: self.facts(),
            end: self.now,
            terminated: self.terminated,
        }
        .report()
    }
}
