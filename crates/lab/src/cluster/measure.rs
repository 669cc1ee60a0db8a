//! The measuring loop: the cluster's start, the rounds, when the members agree, and the checks on every line.

use std::collections::BTreeMap;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::Ordering;
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender};
use std::time::{Duration, Instant};

use crate::history::{self, Entry, Side, Silence};
use elect_core::Epoch;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

use super::changes::{Change, Changes};
use super::fleet::{Event, Fleet, INTERRUPTED, Life, Member, View};
use super::load::Load;
use super::nemesis::{self, Injection, Members, NemesisRound, Signal};
use super::netns::Net;
use super::plan::{Fault, Plan};
use super::report::{FailedRound, NemesisReport, Report, Round, StaleClaim, Stopped, Summary, Writes, ms};
use super::store::FencingStore;

/// Tries at starting the cluster when a member could not bind the port chosen for it.
const START_TRIES: u32 = 3;

/// How long a change of the voters is waited for: longer than an `elect voters` process may run
/// ([`super::fleet`]'s limit), so that a change is asked again only once the try before has ended.
const CHANGE_WAIT: Duration = Duration::from_secs(75);

/// The measuring loop's state.
pub(super) struct Bench<'p> {
    plan: &'p Plan,
    pub(super) fleet: Fleet,
    inbox: Receiver<Event>,
    /// When the run began: the history's time 0.
    origin: Instant,
    /// The fencing store the leaders write to.
    store: FencingStore,
    /// Every line of every member process, in the order they arrived.
    history: Vec<Entry>,
    /// When members were killed or paused, for the overlap of leaders ([`history::overlap`]).
    silences: Vec<Silence>,
    /// From the first stable leader on, the members expected to agree on a live leader of their own.
    sides: Vec<Side>,
    /// The nemesis's rounds, and the sequence of its faults.
    nemesis: Vec<NemesisRound>,
    rng: ChaCha8Rng,
    /// The highest epoch any line named a leader in.
    highest: Epoch,
    /// Each epoch a line named a leader in, with the earliest moment a member began to show it (by its stamp).
    first_shown: BTreeMap<Epoch, Instant>,
    stale: Vec<StaleClaim>,
    /// Open stale claims: member index -> (index into `stale`, since).
    open_stale: BTreeMap<usize, (usize, Instant)>,
    last_line: Instant,
    first_election: Option<Duration>,
    rounds: Vec<Round>,
    failed: Vec<FailedRound>,
    progress: ProgressBar,
    /// With `--change-voters`: the voters, and the changes made.
    changes: Option<Changes>,
}

impl<'p> Bench<'p> {
    pub(super) fn new(
        plan: &'p Plan,
        exe: PathBuf,
        data: &Path,
        store_dir: &Path,
        events: Sender<Event>,
        inbox: Receiver<Event>,
        net: Option<Net>,
    ) -> anyhow::Result<Self> {
        let progress = ProgressBar::with_draw_target(Some(u64::from(plan.rounds)), ProgressDrawTarget::hidden());
        progress.set_style(
            ProgressStyle::with_template("{bar:40} {pos}/{len} rounds · {msg} [{elapsed}]").expect("a valid template"),
        );
        let origin = Instant::now();
        let store = FencingStore::serve(&store_dir.join("fencing.sock"), origin)?;
        let fleet = Fleet::new(plan, exe, data, events, net, store.path().to_owned())?;
        Ok(Self {
            plan,
            fleet,
            inbox,
            origin,
            store,
            history: Vec::new(),
            silences: Vec::new(),
            sides: Vec::new(),
            nemesis: Vec::new(),
            rng: ChaCha8Rng::seed_from_u64(plan.seed),
            highest: Epoch::ZERO,
            first_shown: BTreeMap::new(),
            stale: Vec::new(),
            open_stale: BTreeMap::new(),
            last_line: Instant::now(),
            first_election: None,
            rounds: Vec::new(),
            failed: Vec::new(),
            progress,
            changes: plan.change_voters.then(|| Changes::new(plan.voters, plan.nodes)),
        })
    }

    /// Starts the cluster and runs the rounds; `Err` says why it stopped early.
    pub(super) fn run(&mut self) -> Result<(), Stopped> {
        self.start()?;
        if self.plan.rounds > 1 && io::IsTerminal::is_terminal(&io::stderr()) {
            self.progress.set_draw_target(ProgressDrawTarget::stderr());
        }
        let _load = Load::start(self.plan.cpu_load);
        self.side(Instant::now(), (0..self.fleet.members.len()).collect());
        for round in 1..=self.plan.rounds {
            if self.plan.fault == Fault::Nemesis {
                self.nemesis_round(round)?;
            } else {
                self.round(round)?;
            }
            self.progress.inc(1);
        }
        self.progress.finish_and_clear();
        Ok(())
    }

    /// Starts every member and waits for the first stable leader; tries again with other ports when a member
    /// could not bind the one chosen for it.
    fn start(&mut self) -> Result<(), Stopped> {
        let timeout = self.plan.round_timeout + Duration::from_secs(5);
        let mut attempt = 1;
        loop {
            self.fleet.choose_ports().map_err(error)?;
            let started = Instant::now();
            for i in 0..self.fleet.members.len() {
                self.fleet.spawn(i, self.plan).map_err(error)?;
            }
            match self.wait_stable(started + timeout) {
                Ok(Some(at)) => {
                    self.first_election = Some(at.saturating_duration_since(started));
                    return Ok(());
                }
                Ok(None) => return Err(Stopped::NoFirstLeader { after_ms: ms(timeout) }),
                Err(Stopped::MemberExited { detail, .. })
                    if (detail.contains("cannot listen") || detail.contains("cannot serve HTTP"))
                        && attempt < START_TRIES =>
                {
                    self.fleet.stop_all();
                    self.drain();
                    attempt += 1;
                }
                Err(e) => return Err(e),
            }
        }
    }

    /// Forgets the events of processes that were stopped.
    fn drain(&mut self) {
        while self.inbox.try_recv().is_ok() {}
    }

    /// One round: the fault, the failover, the recovery.
    fn round(&mut self, round: u32) -> Result<(), Stopped> {
        let Some((leader, before)) = self.agreement(|_| true) else {
            return Err(error(format!("round {round} found no agreed leader to fail")));
        };
        let li = self.index_of(leader)?;
        let t0 = Instant::now();
        self.bring_down(li)?;
        let survivors: Vec<usize> = (0..self.fleet.members.len()).filter(|&i| i != li).collect();
        self.side(t0, survivors.clone());
        let deadline = t0 + self.plan.round_timeout;
        let agreed =
            self.wait_for(deadline, |b| b.agreement(|m| m.id != leader).filter(|&(l, e)| l != leader && e > before))?;
        let measured = agreed.map(|(at, (new_leader, new_epoch))| Round {
            round,
            leader,
            epoch: before,
            new_leader,
            new_epoch,
            failover_ms: ms(at.saturating_duration_since(t0)),
            rejoin_ms: None,
        });
        if measured.is_none() {
            self.fail_round(round, leader, before);
        }
        // The change of the voters, of the survivors' new leader, while the old one is down.
        if let Some((_, (new_leader, _))) = agreed
            && self.changes.is_some()
        {
            let under = match self.plan.fault {
                Fault::Pause => format!("leader {leader} paused"),
                _ => format!("leader {leader} killed"),
            };
            self.ask_change(round, &under, &survivors, Some(new_leader))?;
            self.wait_for(Instant::now() + CHANGE_WAIT, |b| b.changes.as_ref().and_then(Changes::outcome))?;
        }
        // Back in the cluster.
        let resumed = Instant::now();
        self.bring_back(li, leader, resumed)?;
        self.side(resumed, (0..self.fleet.members.len()).collect());
        let settle = self.plan.round_timeout + Duration::from_secs(5);
        let Some(stable) = self.wait_stable(resumed + settle)? else {
            return Err(Stopped::Unsettled { round, after_ms: ms(settle) });
        };
        if let Some(mut r) = measured {
            r.rejoin_ms = Some(ms(stable.saturating_duration_since(resumed)));
            self.progress.set_message(format!("last failover {:.1} ms", r.failover_ms));
            self.rounds.push(r);
        }
        self.finish_change(round)
    }

    /// The members (indexes) in `side` are expected, from `at` on, to agree on a live leader of their own.
    fn side(&mut self, at: Instant, side: Vec<usize>) {
        let members = side.iter().map(|&i| self.fleet.members[i].id).collect();
        self.sides.push(Side { from_ms: ms(at.saturating_duration_since(self.origin)), members });
    }

    /// One round of the nemesis: a fault held for a while, then healed; the failover while it holds and the
    /// recovery after the heal.
    fn nemesis_round(&mut self, round: u32) -> Result<(), Stopped> {
        let (leader, before) = match self.agreement(|_| true) {
            Some(agreed) => agreed,
            // The last round failed: give the cluster one more chance to settle.
            None => match self.wait_stable(Instant::now() + self.plan.round_timeout)? {
                Some(_) => self.agreement(|_| true).ok_or_else(|| error("no agreed leader after settling"))?,
                None => return Err(Stopped::Unsettled { round: round - 1, after_ms: ms(self.plan.round_timeout) }),
            },
        };
        let li = self.index_of(leader)?;
        let kinds = &self.plan.nemesis;
        let kind = kinds[(round as usize - 1) % kinds.len()];
        let members = self.members();
        let fault = nemesis::inject(kind, li, &members, self.plan.lease_ms.is_some(), &mut self.rng);
        self.inject(&fault, li)?;
        // The fault holds from the moment it is in place (the rules in force, the signal sent), as it is gone once
        // healed: putting rules in place first clears every member's table, which takes tens of milliseconds of
        // `nft` of its own, and the failover does not count them.
        let t0 = Instant::now();
        self.side(t0, fault.side.clone());
        let side: Vec<u32> = fault.side.iter().map(|&i| self.fleet.members[i].id).collect();
        let hold_end = t0 + self.plan.hold;
        let failover = if fault.takes_leader {
            let elected = |b: &Self| {
                b.agreement(|m| side.contains(&m.id)).filter(|&(l, e)| l != leader && e > before && side.contains(&l))
            };
            self.wait_for(hold_end, elected)?.map(|(at, agreed)| (ms(at.saturating_duration_since(t0)), agreed))
        } else {
            None
        };
        // The change of the voters, while the fault holds, of the side's leader: the one it elected, or the one it
        // kept. (A side that elected none is asked after the heal.)
        if let Some(l) = if fault.takes_leader { failover.map(|(_, (l, _))| l) } else { Some(leader) } {
            self.ask_change(round, &fault.detail, &fault.side, Some(l))?;
        }
        self.wait_for(hold_end, |_| None::<()>)?;
        let t1 = Instant::now();
        let (from_ms, to_ms) =
            (ms(t0.saturating_duration_since(self.origin)), ms(t1.saturating_duration_since(self.origin)));
        let side_changes =
            self.history.iter().filter(|e| e.at_ms >= from_ms && e.at_ms <= to_ms && side.contains(&e.member)).count()
                as u64;
        self.heal(&fault, li, leader, t1)?;
        // Recovery counts from the moment the fault is gone (the rules removed, the leader running again), not
        // from when the heal began: removing rules takes tens of milliseconds of `nft` of its own.
        let healed = Instant::now();
        self.side(t1, (0..self.fleet.members.len()).collect());
        let stable = self.wait_stable(healed + self.plan.round_timeout)?;
        let recovery_ms = stable.map(|at| ms(at.saturating_duration_since(healed)));
        let end_ms = ms(stable.unwrap_or_else(Instant::now).saturating_duration_since(self.origin));
        let leaderless_ms = self.leaderless_ms(from_ms, end_ms);
        if recovery_ms.is_none() {
            self.fail_round(round, leader, before);
        }
        if let Some((failover_ms, (new_leader, new_epoch))) = failover {
            let r = Round { round, leader, epoch: before, new_leader, new_epoch, failover_ms, rejoin_ms: recovery_ms };
            self.progress.set_message(format!("{}: failover {failover_ms:.1} ms", fault.kind.name()));
            self.rounds.push(r);
        }
        self.nemesis.push(NemesisRound {
            round,
            kind: fault.kind.name(),
            detail: fault.detail,
            leader,
            epoch: before,
            failover_ms: failover.map(|f| f.0),
            recovery_ms,
            after: stable.and_then(|_| self.agreement(|_| true)),
            side_changes,
            leaderless_ms,
            rounds_used: self
                .history
                .iter()
                .filter(|e| e.at_ms >= from_ms)
                .map(|e| u64::from(e.epoch.round().saturating_sub(before.round())))
                .max()
                .unwrap_or(0),
        });
        self.finish_change(round)
    }

    /// The members as the nemesis sees them: which vote, and the fewest voters there may be while this round's
    /// change runs.
    fn members(&self) -> Members {
        let n = self.fleet.members.len();
        match &self.changes {
            Some(c) => {
                let voters = c.indexes();
                let fewest = match c.next(None) {
                    Change::Remove(_) => voters.len().saturating_sub(1).max(1),
                    Change::Add(_) => voters.len(),
                };
                Members { n, voters, fewest }
            }
            None => {
                let v = self.plan.voters as usize;
                Members { n, voters: (0..v).collect(), fewest: v }
            }
        }
    }

    /// With `--change-voters`: asks for this round's change of the voters of the members (indexes) in `side`,
    /// which agree on `leader`.
    fn ask_change(&mut self, round: u32, under: &str, side: &[usize], leader: Option<u32>) -> Result<(), Stopped> {
        let Some(changes) = &mut self.changes else { return Ok(()) };
        let change = changes.next(leader);
        let attempt = changes.asked(change, round, under, Instant::now());
        self.fleet.ask_change(side, change.args(), attempt).map_err(error)
    }

    /// With `--change-voters`, once the round's fault is healed: sees its change to the end. A change not asked
    /// yet is asked of everybody; one that failed is asked again, of everybody. Then, once the cluster is stable,
    /// the voters are read back from the leader and the change recorded.
    fn finish_change(&mut self, round: u32) -> Result<(), Stopped> {
        let Some(changes) = &self.changes else { return Ok(()) };
        let everyone: Vec<usize> = (0..self.fleet.members.len()).collect();
        if !changes.is_pending() {
            let leader = self.agreement(|_| true).map(|(l, _)| l);
            self.ask_change(round, "none: asked after the heal", &everyone, leader)?;
        }
        let ended = |b: &Self| b.changes.as_ref().and_then(Changes::outcome);
        self.wait_for(Instant::now() + CHANGE_WAIT, ended)?;
        if ended(self) != Some(true) {
            let again = self.changes.as_mut().and_then(Changes::asked_again);
            let (attempt, change) = again.ok_or_else(|| error("no change of the voters to ask again"))?;
            self.fleet.ask_change(&everyone, change.args(), attempt).map_err(error)?;
            self.wait_for(Instant::now() + CHANGE_WAIT, ended)?;
        }
        let settle = self.plan.round_timeout;
        if self.wait_stable(Instant::now() + settle)?.is_none() {
            return Err(Stopped::Unsettled { round, after_ms: ms(settle) });
        }
        let (leader, _) = self.agreement(|_| true).ok_or_else(|| error("no agreed leader after a change"))?;
        let voters = self.fleet.read_voters(self.index_of(leader)?).map_err(|e| {
            // A Ctrl-C reaches the `elect voters` that reads them too.
            if INTERRUPTED.load(Ordering::SeqCst) { Stopped::Interrupted } else { error(e) }
        })?;
        let Some((from, to)) = self.changes.as_ref().and_then(Changes::span) else { return Ok(()) };
        let at = |t: Instant| ms(t.saturating_duration_since(self.origin));
        let leaderless = self.leaderless_ms(at(from), at(to));
        let done = self.changes.as_mut().is_some_and(|c| c.record(voters, leaderless));
        self.progress.set_message(if done { "change done".to_owned() } else { "CHANGE FAILED".to_owned() });
        Ok(())
    }

    /// How long, from `from_ms` to `to_ms`, the side in force had no live leader it agreed on.
    fn leaderless_ms(&self, from_ms: f64, to_ms: f64) -> f64 {
        // Lines are kept as they come, which need not be their stamps' order.
        let mut entries = self.history.clone();
        entries.sort_by(|a, b| a.at_ms.total_cmp(&b.at_ms));
        history::leaderless_ms(&entries, &self.sides, from_ms, to_ms)
    }

    /// The index of the member the others agree on as leader.
    fn index_of(&self, leader: u32) -> Result<usize, Stopped> {
        self.fleet
            .members
            .iter()
            .position(|m| m.id == leader)
            .ok_or_else(|| error(format!("the members agree on {leader}, which is not a member")))
    }

    fn net(&self) -> Result<&Net, Stopped> {
        self.fleet.net.as_ref().ok_or_else(|| error("the nemesis runs without its network"))
    }

    /// Puts a nemesis fault in force; `li` is the leader.
    fn inject(&mut self, fault: &Injection, li: usize) -> Result<(), Stopped> {
        self.net()?.apply(&fault.rules).map_err(error)?;
        match fault.signal {
            None => {}
            Some(Signal::Kill) => self.kill(li),
            #[cfg(unix)]
            Some(Signal::Pause) => self.pause(li)?,
            #[cfg(not(unix))]
            Some(Signal::Pause) => return Err(error("pause needs SIGSTOP")),
        }
        Ok(())
    }

    /// Heals a nemesis fault: the rules removed, a paused leader continued, a killed one restarted.
    fn heal(&mut self, fault: &Injection, li: usize, leader: u32, at: Instant) -> Result<(), Stopped> {
        self.net()?.heal().map_err(error)?;
        match fault.signal {
            None => {}
            Some(Signal::Kill) => self.restart(li)?,
            #[cfg(unix)]
            Some(Signal::Pause) => self.resume(li, leader, at)?,
            #[cfg(not(unix))]
            Some(Signal::Pause) => return Err(error("pause needs SIGSTOP")),
        }
        Ok(())
    }

    /// Continues member `li`, paused while it led `leader`; if it still claims its old epoch, that is a stale claim
    /// (but not in the lease mode once its lease ran out during the pause: it no longer leads, see [`Self::heard`]).
    #[cfg(unix)]
    fn resume(&mut self, li: usize, leader: u32, at: Instant) -> Result<(), Stopped> {
        self.fleet.signal(li, nix::sys::signal::Signal::SIGCONT).map_err(error)?;
        let lapsed = self.heard(li);
        if let Some(View { leader: Some(l), epoch: e }) = self.fleet.members[li].latest
            && l == leader
            && e < self.highest
            && !lapsed
        {
            self.open_stale_claim(li, e, at);
        }
        Ok(())
    }

    /// Kills member `li` with SIGKILL: it says nothing until it is restarted.
    fn kill(&mut self, li: usize) {
        self.fleet.stop(li);
        self.silent(li, true);
    }

    /// Stops member `li` with SIGSTOP: it says nothing until it is continued.
    #[cfg(unix)]
    fn pause(&mut self, li: usize) -> Result<(), Stopped> {
        self.fleet.signal(li, nix::sys::signal::Signal::SIGSTOP).map_err(error)?;
        self.silent(li, false);
        Ok(())
    }

    /// Starts member `li` again, with its data directory.
    fn restart(&mut self, li: usize) -> Result<(), Stopped> {
        self.fleet.spawn(li, self.plan).map_err(error)?;
        self.heard(li);
        Ok(())
    }

    /// Member `li` was just killed or paused: it says nothing from now on.
    fn silent(&mut self, li: usize, killed: bool) {
        let from_ms = ms(self.origin.elapsed());
        let member = self.fleet.members[li].id;
        self.silences.push(Silence { member, from_ms, to_ms: f64::INFINITY, killed });
    }

    /// Member `li` was just started again or continued. In the lease mode, a pause that outlasted the lease ends
    /// the member's claim as a kill does: its lease ran out meanwhile, so its HTTP answers say at once that it does
    /// not lead, and it ends its grant before it reads anything.
    /// Returns whether the lease ran out during the silence.
    fn heard(&mut self, li: usize) -> bool {
        let member = self.fleet.members[li].id;
        let lease_ms = self.plan.lease_ms;
        let Some(s) = self.silences.iter_mut().rev().find(|s| s.member == member && s.to_ms.is_infinite()) else {
            return false;
        };
        s.to_ms = ms(self.origin.elapsed());
        let lapsed = lease_ms.is_some_and(|lease| s.to_ms - s.from_ms > lease);
        s.killed |= lapsed;
        lapsed
    }

    /// Kills or stops member `li`, the leader.
    fn bring_down(&mut self, li: usize) -> Result<(), Stopped> {
        match self.plan.fault {
            Fault::Kill => self.kill(li),
            #[cfg(unix)]
            Fault::Pause => self.pause(li)?,
            #[cfg(not(unix))]
            Fault::Pause => unreachable!("refused by plan()"),
            Fault::Nemesis => unreachable!("nemesis rounds inject their own faults"),
        }
        Ok(())
    }

    /// Records a round whose survivors did not agree in time, with what each of them reported.
    fn fail_round(&mut self, round: u32, leader: u32, before: Epoch) {
        let views = self
            .fleet
            .members
            .iter()
            .filter(|m| m.id != leader)
            .map(|m| {
                let view = m.latest.map_or_else(|| "-".to_owned(), show);
                (m.id, view)
            })
            .collect();
        self.failed.push(FailedRound { round, leader, epoch: before, views });
    }

    /// Restarts member `li`, the former leader, or continues it; a continued leader that still claims `leader`'s
    /// old epoch opens a stale claim.
    fn bring_back(&mut self, li: usize, leader: u32, resumed: Instant) -> Result<(), Stopped> {
        match self.plan.fault {
            Fault::Kill => self.restart(li)?,
            #[cfg(unix)]
            Fault::Pause => self.resume(li, leader, resumed)?,
            #[cfg(not(unix))]
            Fault::Pause => unreachable!("refused by plan()"),
            Fault::Nemesis => unreachable!("nemesis rounds heal their own faults"),
        }
        Ok(())
    }

    /// The leader and epoch every running member that `which` selects reports, if they all report the same one
    /// (and there is at least one).
    fn agreement(&self, which: impl Fn(&Member) -> bool) -> Option<(u32, Epoch)> {
        let mut views = self.fleet.members.iter().filter(|m| m.life == Life::Running && which(m)).map(|m| m.latest);
        let first = views.next()??;
        let leader = first.leader?;
        views.all(|v| v == Some(first)).then_some((leader, first.epoch))
    }

    /// Whether every member runs and all report the same leader and epoch.
    fn all_agree(&self) -> bool {
        self.fleet.members.iter().all(|m| m.life == Life::Running) && self.agreement(|_| true).is_some()
    }

    /// Waits until every member agrees and nothing has changed for the quiet period; returns when the agreement
    /// began, or `None` at the deadline.
    fn wait_stable(&mut self, deadline: Instant) -> Result<Option<Instant>, Stopped> {
        let mut since = self.all_agree().then(Instant::now);
        loop {
            let now = Instant::now();
            if let Some(s) = since
                && now.saturating_duration_since(self.last_line) >= self.plan.quiet
            {
                return Ok(Some(s));
            }
            if now >= deadline {
                return Ok(None);
            }
            let wake = if since.is_some() { deadline.min(self.last_line + self.plan.quiet) } else { deadline };
            match self.inbox.recv_timeout(wake.saturating_duration_since(now)) {
                Ok(event) => {
                    if let Some(at) = self.handle(event)? {
                        since = if self.all_agree() { Some(since.unwrap_or(at)) } else { None };
                    }
                }
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => return Err(error("the members' output was lost")),
            }
        }
    }

    /// Waits until `done` says something; returns it with the arrival time of the line that made it true, or
    /// `None` at the deadline.
    fn wait_for<T>(
        &mut self,
        deadline: Instant,
        done: impl Fn(&Self) -> Option<T>,
    ) -> Result<Option<(Instant, T)>, Stopped> {
        if let Some(t) = done(self) {
            return Ok(Some((Instant::now(), t)));
        }
        loop {
            let now = Instant::now();
            if now >= deadline {
                return Ok(None);
            }
            match self.inbox.recv_timeout(deadline - now) {
                Ok(event) => {
                    // A line of a current process, stamped on arrival, or another event (a change that ended).
                    let at = self.handle(event)?;
                    if let Some(t) = done(self) {
                        return Ok(Some((at.unwrap_or_else(Instant::now), t)));
                    }
                }
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => return Err(error("the members' output was lost")),
            }
        }
    }

    /// Takes an event in; returns the arrival time of a line of a current process.
    fn handle(&mut self, event: Event) -> Result<Option<Instant>, Stopped> {
        match event {
            Event::Interrupted => Err(Stopped::Interrupted),
            Event::Closed { member, generation } => self.closed(member, generation),
            Event::Line { member, generation, at, line } => Ok(self.line(member, generation, at, &line)),
            Event::ChangeEnded { attempt, at, ok } => {
                if let Some(c) = &mut self.changes {
                    c.ended(attempt, at, ok);
                }
                Ok(None)
            }
        }
    }

    /// Member `member`'s stdout closed: unless that process was stopped or replaced, the member ended on its own.
    fn closed(&mut self, member: usize, generation: u32) -> Result<Option<Instant>, Stopped> {
        let m = &self.fleet.members[member];
        if generation != m.generation || m.life == Life::Dead {
            return Ok(None);
        }
        let id = m.id;
        let status = self.fleet.exit_status(member);
        self.fleet.stop(member);
        if INTERRUPTED.load(Ordering::SeqCst) {
            return Err(Stopped::Interrupted);
        }
        let status = status.map_or_else(|| "its output closed".to_owned(), |s| s.to_string());
        let detail = format!("{status}: {}", self.fleet.last_log_line(member));
        Err(Stopped::MemberExited { member: id, detail })
    }

    /// A line of member `member`: checked for double leaders and stale claims whichever process printed it, and
    /// taken as the member's view if the current one did; returns its arrival time then.
    fn line(&mut self, member: usize, generation: u32, at: Instant, line: &str) -> Option<Instant> {
        let view = parse_line(line)?;
        let id = self.fleet.members[member].id;
        // When the member began to show it, by its own stamp, rather than when its line was read: lines of two
        // members can reach the harness out of the order in which their members changed.
        let changed = member_stamp(line).unwrap_or(at);
        let at_ms = ms(changed.saturating_duration_since(self.origin));
        self.history.push(Entry { at_ms, member: id, leader: view.leader, epoch: view.epoch });
        let current = generation == self.fleet.members[member].generation;
        // A new view of the running process ends the stale claim it had open.
        if current
            && self.fleet.members[member].latest != Some(view)
            && let Some((k, since)) = self.open_stale.remove(&member)
        {
            self.stale[k].lasted_ms = Some(ms(at.saturating_duration_since(since)));
        }
        if let Some(leader) = view.leader {
            // Stale if a higher epoch was shown before this member began to show its claim: judged by the members'
            // stamps, since a line can reach the harness after a line of another member that changed later.
            if leader == id && shown_above(&self.first_shown, view.epoch, changed) {
                self.open_stale_claim(member, view.epoch, at);
            }
            let first = self.first_shown.entry(view.epoch).or_insert(changed);
            *first = (*first).min(changed);
            self.highest = self.highest.max(view.epoch);
        }
        if !current {
            return None;
        }
        self.fleet.members[member].latest = Some(view);
        self.last_line = self.last_line.max(at);
        Some(at)
    }

    fn open_stale_claim(&mut self, member: usize, epoch: Epoch, since: Instant) {
        if self.open_stale.contains_key(&member) {
            return;
        }
        let id = self.fleet.members[member].id;
        self.stale.push(StaleClaim { member: id, epoch, highest: self.highest, lasted_ms: None });
        self.open_stale.insert(member, (self.stale.len() - 1, since));
    }

    pub(super) fn report(&mut self, result: Result<(), Stopped>, data: &Path) -> Report {
        self.progress.finish_and_clear();
        let samples: Vec<f64> = self.rounds.iter().map(|r| r.failover_ms).collect();
        let writes = self.store.writes();
        // In the order the members changed (each member's own lines are in order already).
        self.history.sort_by(|a, b| a.at_ms.total_cmp(&b.at_ms));
        let judgement = history::judge(&self.history, &writes);
        let end_ms = ms(Instant::now().saturating_duration_since(self.origin));
        let availability = history::availability(&self.history, &self.sides, end_ms);
        let overlap = history::overlap(&self.history, &self.silences, end_ms);
        let plan = self.plan;
        let nemesis = (plan.fault == Fault::Nemesis).then(|| {
            let recovery: Vec<f64> = self.nemesis.iter().filter_map(|r| r.recovery_ms).collect();
            NemesisReport {
                kinds: plan.nemesis.iter().map(|k| k.name()).collect(),
                hold_ms: ms(plan.hold),
                recovery_ms: Summary::of(&recovery),
                rounds: std::mem::take(&mut self.nemesis),
            }
        });
        Report {
            algorithm: plan.algorithm,
            nodes: plan.nodes,
            fault: plan.fault,
            lease: plan.lease_ms.is_some(),
            heartbeat_ms: plan.heartbeat_ms,
            delay_bound_ms: plan.delay_bound_ms,
            seed: plan.seed,
            rounds: plan.rounds,
            first_election_ms: self.first_election.map(ms),
            failover_ms: Summary::of(&samples),
            samples_ms: samples,
            failed_rounds: std::mem::take(&mut self.failed),
            same_epoch_leaders: judgement.same_epoch_leaders.len(),
            epoch_regressions: judgement.epoch_regressions.len(),
            stale_writes_accepted: judgement.stale_writes_accepted.len(),
            writes: Writes {
                accepted: writes.iter().filter(|w| w.accepted).count(),
                rejected: writes.iter().filter(|w| !w.accepted).count(),
            },
            stale_writes: judgement.stale_writes_accepted,
            availability,
            leaders_overlap: overlap,
            cpu_load: plan.cpu_load,
            nemesis,
            voters: plan.voters,
            changes: self.changes.as_mut().map(|c| std::mem::take(&mut c.rounds)).unwrap_or_default(),
            double_leaders: judgement.same_epoch_leaders,
            regressions: judgement.epoch_regressions,
            stale_claims: std::mem::take(&mut self.stale),
            stopped: result.err(),
            details: std::mem::take(&mut self.rounds),
            pids: self.fleet.pids.clone(),
            data_dir: data.to_owned(),
        }
    }
}

fn error(e: impl std::fmt::Display) -> Stopped {
    Stopped::Error { detail: format!("{e:#}") }
}

/// `{"id":1,"leader":3,"epoch":...}` → the view; `None` for anything else.
fn parse_line(line: &str) -> Option<View> {
    let v: serde_json::Value = serde_json::from_str(line).ok()?;
    let epoch = Epoch::from_bits(v.get("epoch")?.as_u64()?);
    let leader = match v.get("leader")? {
        serde_json::Value::Null => None,
        l => Some(u32::try_from(l.as_u64()?).ok()?),
    };
    Some(View { leader, epoch })
}

/// The instant a member's line says its member began to show what it shows (`since_monotonic_us`, on the
/// system-wide monotonic clock, which this process shares with its members), if it says.
fn member_stamp(line: &str) -> Option<Instant> {
    let v: serde_json::Value = serde_json::from_str(line).ok()?;
    let since = std::time::Duration::from_micros(v.get("since_monotonic_us")?.as_u64()?);
    #[cfg(unix)]
    {
        let now = Instant::now();
        let mono = std::time::Duration::from(nix::time::clock_gettime(nix::time::ClockId::CLOCK_MONOTONIC).ok()?);
        now.checked_sub(mono.checked_sub(since)?)
    }
    #[cfg(not(unix))]
    {
        let _ = since;
        None
    }
}

/// Whether, by `first_shown` (each epoch with the moment a member first showed a leader in it), some member showed
/// a leader in an epoch above `epoch` before `at`.
fn shown_above(first_shown: &BTreeMap<Epoch, Instant>, epoch: Epoch, at: Instant) -> bool {
    use std::ops::Bound::{Excluded, Unbounded};
    first_shown.range((Excluded(epoch), Unbounded)).any(|(_, &first)| first < at)
}

fn show(v: View) -> String {
    match v.leader {
        Some(l) => format!("{l}@{}", v.epoch),
        None => format!("none@{}", v.epoch),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_claim_is_stale_only_if_a_higher_epoch_was_shown_before_it_began() {
        let t0 = Instant::now();
        let t = |ms: u64| t0 + Duration::from_millis(ms);
        let e = |round: u32| Epoch::of(round, elect_core::NodeId(1));
        let first_shown = BTreeMap::from([(e(1), t(0)), (e(3), t(20))]);
        // Epoch 3 was first shown at 20 ms: a claim under epoch 2 that began at 10 ms was not stale then, even if
        // its line is read after the line that showed epoch 3.
        assert!(!shown_above(&first_shown, e(2), t(10)));
        assert!(shown_above(&first_shown, e(2), t(30)));
        assert!(!shown_above(&first_shown, e(3), t(30)), "not above itself");
        assert!(shown_above(&first_shown, e(1), t(30)));
    }

    #[test]
    fn member_lines_parse() {
        let line = r#"{"id":1,"leader":3,"epoch":4294967299,"epoch_round":1,"incarnation":2}"#;
        assert_eq!(parse_line(line), Some(View { leader: Some(3), epoch: Epoch::from_bits(4_294_967_299) }));
        let line = r#"{"id":1,"leader":null,"epoch":0,"epoch_round":0,"incarnation":1}"#;
        assert_eq!(parse_line(line), Some(View { leader: None, epoch: Epoch::ZERO }));
        assert_eq!(parse_line("not json"), None);
    }
}
