//! The end of a run: what the engine counted as it went ([`Counters`], [`PulseLog`]) and the [`Report`] built from
//! it, the scenario and the judge's verdicts.

use elect_algos::{Algorithm, Facts, Measure};
use elect_core::property::Class;
use elect_core::{Message, Process};

use crate::judge::Judge;
use elect_scenario::{Scenario, Time};

use crate::report::{BoundReport, FinalStatus, Messages, MobilityReport, Properties, Report, SyncReport, Verdict};

/// What a run counts as it goes.
#[derive(Clone, Debug, Default)]
pub(crate) struct Counters {
    /// Messages sent, per kind, in the algorithm's order.
    pub(crate) by_kind: Vec<u64>,
    /// Bits sent.
    pub(crate) bits: u64,
    /// Events processed.
    pub(crate) events: u64,
    /// The time of the last event processed (stale timers and drops are not events).
    pub(crate) last_event: u64,
    /// Messages sent.
    pub(crate) sent: u64,
    /// Messages delivered to a live process.
    pub(crate) delivered: u64,
    /// Messages lost.
    pub(crate) lost: u64,
    /// Messages the network delivered twice.
    pub(crate) duplicated: u64,
    /// Leader declarations ("I am the leader" actions).
    pub(crate) elections: u64,
}

impl Counters {
    /// Zero counts, for an algorithm with `kinds` message kinds.
    pub(crate) fn new(kinds: usize) -> Self {
        Self { by_kind: vec![0; kinds], ..Self::default() }
    }

    /// One more event, at `now`.
    #[inline]
    pub(crate) fn event(&mut self, now: u64) {
        self.events += 1;
        self.last_event = now;
    }
}

/// When the pulses of a synchronous algorithm began, anywhere: the first time any process took each pulse.
#[derive(Default)]
pub(crate) struct PulseLog {
    /// By pulse, from 1.
    first: Vec<u64>,
}

impl PulseLog {
    /// Some process took `pulse` at `now`.
    pub(crate) fn record(&mut self, pulse: u32, now: u64) {
        let i = pulse.saturating_sub(1) as usize;
        if i >= self.first.len() {
            self.first.resize(i + 1, now);
        }
    }

    /// The highest pulse taken.
    fn last(&self) -> u32 {
        self.first.len() as u32
    }

    fn at(&self, pulse: u32) -> u64 {
        pulse.checked_sub(1).and_then(|i| self.first.get(i as usize)).copied().unwrap_or(0)
    }
}

/// A finished run, as the report reads it: the processes' final states and what the simulator measured.
pub(crate) struct Finished<'a, A: Algorithm> {
    pub(crate) algorithm: &'a A,
    pub(crate) scenario: &'a Scenario,
    pub(crate) procs: &'a [A::Process],
    pub(crate) up: &'a [bool],
    /// When each process last learned its leader.
    pub(crate) learned_at: &'a [u64],
    pub(crate) counters: &'a Counters,
    pub(crate) judge: &'a Judge,
    pub(crate) pulses: &'a PulseLog,
    /// On a mobile network, what mobility measured.
    pub(crate) mobility: Option<MobilityReport>,
    /// The facts bounds are functions of.
    pub(crate) facts: Facts,
    /// When the run ended.
    pub(crate) end: u64,
    pub(crate) terminated: bool,
}

impl<A: Algorithm> Finished<'_, A> {
    /// The report of the run.
    pub(crate) fn report(self) -> Report {
        let sc = self.scenario;
        let live: Vec<usize> = (0..sc.len()).filter(|&i| self.up[i]).collect();
        let first = live.first().and_then(|&i| self.procs[i].status().leader);
        let agreed = first.is_some() && live.iter().all(|&i| self.procs[i].status().leader == first);
        let c = self.counters;
        Report {
            algorithm: sc.info.name,
            topology: sc.graph.kind().to_string(),
            nodes: sc.len(),
            edges: sc.graph.edges(),
            diameter: sc.diameter,
            components: sc.components,
            seed: sc.config.seed,
            leader: if agreed { first } else { None },
            agreed,
            elected_at: agreed.then(|| Time(live.iter().map(|&i| self.learned_at[i]).max().unwrap_or(0))),
            declared_at: self.judge.declared.map(Time),
            messages: Messages { total: c.sent, by_kind: self.by_kind() },
            bits: c.bits,
            delivered: c.delivered,
            lost: c.lost,
            duplicated: c.duplicated,
            events: c.events,
            properties: self.properties(),
            bounds: self.bounds(),
            synchronizer: self.synchronizer(),
            initiators: self.facts.initiators as usize,
            live: live.len(),
            delay: sc.config.delay.to_string(),
            links: if sc.config.fifo { "fifo" } else { "unordered" },
            end_time: Time(self.end),
            terminated: self.terminated,
            until: sc.config.until.map(Time),
            expected_leader: self.judge.monitor().expected(),
            reproduce: sc.config.command_line(),
            statuses: self.statuses(),
            mobility: self.mobility,
        }
    }

    /// Each process's last status, and whether it is crashed.
    fn statuses(&self) -> Vec<FinalStatus> {
        let procs = self.procs.iter().zip(self.up).zip(&self.scenario.ids);
        procs.map(|((p, &up), &node)| FinalStatus { node, status: p.status(), crashed: !up }).collect()
    }

    /// Messages sent, per kind, zeros included.
    fn by_kind(&self) -> Vec<(&'static str, u64)> {
        let kinds = <<A::Process as Process>::Msg as Message>::kinds();
        kinds.iter().copied().zip(self.counters.by_kind.iter().copied()).collect()
    }

    /// Messages sent of the kinds `kinds`.
    fn count(&self, kinds: &[&str]) -> u64 {
        let by_kind = self.by_kind();
        kinds.iter().map(|k| by_kind.iter().find(|(n, _)| n == k).map_or(0, |p| p.1)).sum()
    }

    /// The closed-form bounds and what the run measured against each.
    fn bounds(&self) -> Vec<BoundReport> {
        // Closed forms count elections on a fixed network; on a mobile one they do not apply.
        if self.mobility.is_some() {
            return Vec::new();
        }
        let sent = self.counters.sent;
        let all = <<A::Process as Process>::Msg as Message>::kinds();
        self.algorithm
            .bounds(&self.facts)
            .into_iter()
            .map(|b| {
                let (measured, kinds) = match b.measure {
                    Measure::Messages => (sent, all.to_vec()),
                    Measure::Kinds(ks) => (self.count(ks), ks.to_vec()),
                    Measure::AllBut(ks) => {
                        (sent - self.count(ks), all.iter().copied().filter(|k| !ks.contains(k)).collect())
                    }
                };
                BoundReport { name: b.name, value: b.value, measured, held: measured <= b.value, kinds }
            })
            .collect()
    }

    fn properties(&self) -> Properties {
        let violations = &self.judge.violations;
        let verdict = |class| {
            if violations.iter().any(|v| v.property.class() == class) { Verdict::Violated } else { Verdict::Held }
        };
        let monitor = self.judge.monitor();
        Properties {
            safety: verdict(Class::Safety),
            liveness: verdict(Class::Liveness),
            violations: violations.clone(),
            checked: monitor.checks().iter().map(|c| (c.property.name(), c.when)).collect(),
            skipped: monitor.skipped().to_vec(),
        }
    }

    /// On a synchronizer, its costs, set-up apart.
    fn synchronizer(&self) -> Option<SyncReport> {
        let summary = self.algorithm.synchronizer(self.procs)?;
        let (setup_messages, control_messages, acks) =
            (self.count(summary.setup_kinds), self.count(summary.control_kinds), self.count(&["ack"]));
        let pulses = self.pulses;
        Some(SyncReport {
            setup_messages,
            setup_time: Time(pulses.at(1)),
            pulses: pulses.last(),
            algorithm_messages: self.counters.sent - setup_messages - control_messages - acks,
            acks,
            control_messages,
            pulse_time: Time(pulses.at(pulses.last()).saturating_sub(pulses.at(1))),
            last_pulse_time: Time(pulses.at(pulses.last()) - pulses.at(pulses.last().saturating_sub(1))),
            summary,
        })
    }
}
