#![doc = include_str!("../../../docs/reference/algorithms/sync-lcr.md")]

use elect_core::{Check, Duration, Epoch, Notice, Peers, Port, Rank, Setup, Status, View, When};

use crate::algorithm::{Algorithm, Bound, Elects, Facts, Info, Initiators, LinkOrder, Needs, Showcase, Timing};
use crate::params::{ParamError, Params};
use crate::rounds::{self, RoundAlgorithm, RoundCx, Rounds, Synchronous};
use crate::{election_checks, ring_ports};

/// The algorithm's configuration: it has no parameters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SyncLcr;

/// LCR's messages are Chang and Roberts's: the same tokens and announcement, counted under the same kinds.
pub use crate::chang_roberts::Msg;

// The rules a round names, in the words of the chapter ("Rules, step by step"); Chang–Roberts names the same
// rules alike.
const SEND_OWN: &str = "send own token";
const FORWARD: &str = "forward a stronger token";
const SWALLOW: &str = "swallow a weaker token";
const ELECTED: &str = "own token returned, elected";
const PASS_ON: &str = "pass the announcement on, halt";
const CAME_HOME: &str = "announcement came home, halt";
const NOTHING: &str = "nothing arrived, wait";

/// One process of LCR, taking rounds.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Lcr {
    me: Rank,
    /// The leader, once known.
    leader: Option<Rank>,
    /// The clockwise neighbour's port.
    next: Port,
    /// Has taken its first round (and sent its own token).
    started: bool,
    /// Done: a follower relayed the announcement, or the leader's came back.
    halted: bool,
}

impl Lcr {
    /// A process of rank `me` whose clockwise neighbour is at `next`, before its first round.
    fn new(me: Rank, next: Port) -> Self {
        Self { me, leader: None, next, started: false, halted: false }
    }
}

impl Rounds for Lcr {
    type Msg = Msg;

    fn round(&mut self, cx: &mut RoundCx<'_, Msg>, inbox: &[(Port, Msg)]) {
        if !self.started {
            cx.rule(SEND_OWN);
            self.started = true;
            cx.send(self.next, Msg::Token { id: self.me });
        } else if inbox.is_empty() {
            cx.rule(NOTHING);
        }
        for (_, msg) in inbox {
            match *msg {
                Msg::Token { id } if id > self.me => {
                    cx.rule(FORWARD);
                    cx.send(self.next, Msg::Token { id });
                }
                Msg::Token { id } if id == self.me => {
                    cx.rule(ELECTED);
                    self.leader = Some(self.me);
                    cx.notify(Notice::Elected { epoch: Epoch::ZERO });
                    cx.send(self.next, Msg::Elected { leader: self.me });
                }
                // A weaker token dies here.
                Msg::Token { .. } => cx.rule(SWALLOW),
                Msg::Elected { leader } => {
                    if leader != self.me {
                        cx.rule(PASS_ON);
                        self.leader = Some(leader);
                        cx.send(self.next, Msg::Elected { leader });
                    } else {
                        cx.rule(CAME_HOME);
                    }
                    self.halted = true;
                }
            }
        }
    }

    fn status(&self) -> Status {
        match (self.leader, self.started) {
            (Some(leader), _) => Status::normal(Some(leader.id()), Epoch::ZERO),
            (None, false) => Status::normal(None, Epoch::ZERO),
            (None, true) => Status::election(Epoch::ZERO),
        }
    }

    fn halted(&self) -> bool {
        self.halted
    }

    /// `candidate: id 5` until the announcement, then `leader: id 9` or `lost: id 5, leader 9`.
    fn view(&self, _: &Peers<'_>) -> View {
        match (self.started, self.leader) {
            (false, _) => View::new("asleep").with("id", self.me),
            (true, None) => View::new("candidate").with("id", self.me),
            (true, Some(leader)) if leader == self.me => View::new("leader").with("id", self.me),
            (true, Some(leader)) => View::new("lost").with("id", self.me).with("leader", leader),
        }
    }
}

/// One process of LCR in synchronous rounds.
pub type SyncLcrProcess = Synchronous<Lcr>;

static INFO: Info = Info {
    name: "sync-lcr",
    aliases: &[],
    title: "LCR in synchronous rounds",
    model: "unidirectional ring, synchronous rounds (delay bound T), every process starts in round 1",
    seed: "S003 (Lynch ch. 3)",
    needs: Needs::Ring,
    timing: Timing::Synchronous,
    links: LinkOrder::Any,
    elects: Elects::OneLeader,
    lockstep: true,
    params: &[],
    rules: &[
        rounds::rule::INITIATE,
        SEND_OWN,
        rounds::rule::KEEP,
        NOTHING,
        FORWARD,
        SWALLOW,
        ELECTED,
        PASS_ON,
        CAME_HOME,
        rounds::rule::JOIN,
        rounds::rule::HALTED,
        rounds::rule::AGAIN,
    ],
    showcase: Showcase {
        initiators: Initiators::All,
        crash_strongest: false,
        describe: "random ids, all start in round 1, one hop per round",
    },
};

impl Algorithm for SyncLcr {
    type Process = SyncLcrProcess;
    const INFO: &'static Info = &INFO;

    fn from_params(_: &Params) -> Result<Self, ParamError> {
        Ok(Self)
    }

    fn build(&self, setup: &Setup<'_>) -> SyncLcrProcess {
        Synchronous::new(self.build_rounds(setup), setup)
    }

    fn checks(&self) -> Vec<Check> {
        election_checks(When::Always, true)
    }

    fn election_time(&self, facts: &Facts, t: Duration) -> Duration {
        // Up to T until the first multiple of T, then 2n rounds: the strongest token's n hops and the
        // announcement's n.
        t * (2 * facts.nodes + 1)
    }

    fn bounds(&self, f: &Facts) -> Vec<Bound> {
        crate::chang_roberts::token_bounds(f.nodes)
    }
}

impl RoundAlgorithm for SyncLcr {
    type Rounds = Lcr;

    fn build_rounds(&self, setup: &Setup<'_>) -> Lcr {
        Lcr::new(setup.rank, ring_ports(setup).next)
    }
}

#[cfg(test)]
mod tests {
    use elect_core::{
        Command, Cx, Effect, Event, Instant, Message, Neighbor, NodeId, Prefer, Process, RingPorts, Shape, Span, driver,
    };

    use super::*;
    use crate::rounds::{RoundEffect, RoundMsg, RoundTimer};

    fn rank(id: u32) -> Rank {
        Rank::new(Prefer::Highest, 0, NodeId(id))
    }

    /// What a lock-step run on a ring did.
    #[derive(Debug, Default)]
    struct Run {
        tokens: u64,
        elected: u64,
        /// Per position: the round in which it learned the leader, and that leader.
        learned: Vec<Option<(u32, NodeId)>>,
        /// Per position: the round after which it halted.
        halted: Vec<Option<u32>>,
        /// The positions that declared themselves leader, with the round.
        declared: Vec<(usize, u32)>,
    }

    /// Runs LCR on a ring with `ranks` clockwise, every process in round 1, with no clock and no driver: every
    /// message sent in round `r` is in its receiver's inbox in round `r + 1`; a halted process takes no rounds.
    fn lockstep(ranks: &[Rank]) -> Run {
        let n = ranks.len();
        let mut nodes: Vec<Lcr> = ranks.iter().map(|&r| Lcr::new(r, Port(0))).collect();
        let mut inboxes: Vec<Vec<(Port, Msg)>> = vec![Vec::new(); n];
        let mut run = Run { learned: vec![None; n], halted: vec![None; n], ..Run::default() };
        let mut round = 0;
        while !nodes.iter().all(Rounds::halted) {
            round += 1;
            assert!(round <= 3 * n as u32 + 3, "no end after {round} rounds: {ranks:?}");
            let mut next_inboxes: Vec<Vec<(Port, Msg)>> = vec![Vec::new(); n];
            for (i, node) in nodes.iter_mut().enumerate().filter(|(_, node)| !node.halted()) {
                let mut effects = Vec::new();
                node.round(&mut RoundCx::new(round, Instant::ZERO, &mut effects), &inboxes[i]);
                for effect in effects {
                    match effect {
                        RoundEffect::Send { to, msg } => {
                            assert_eq!(to, Port(0), "only to the clockwise neighbour");
                            match msg {
                                Msg::Token { .. } => run.tokens += 1,
                                Msg::Elected { .. } => run.elected += 1,
                            }
                            next_inboxes[(i + 1) % n].push((Port(1), msg));
                        }
                        RoundEffect::Notify(notice) => {
                            assert_eq!(notice, Notice::Elected { epoch: Epoch::ZERO });
                            run.declared.push((i, round));
                        }
                    }
                }
                if let (None, Some(leader)) = (run.learned[i], node.status().leader) {
                    run.learned[i] = Some((round, leader));
                }
                if node.halted() {
                    run.halted[i] = Some(round);
                }
            }
            inboxes = next_inboxes;
        }
        run
    }

    fn ranks(ids: &[u32]) -> Vec<Rank> {
        ids.iter().copied().map(rank).collect()
    }

    /// §3.2's per-arrangement count: the strongest token goes all the way round, every other dies at the first
    /// stronger rank clockwise.
    fn chang_roberts_tokens(ranks: &[Rank]) -> u64 {
        let n = ranks.len();
        let dist = |p: usize| (1..n).find(|&h| ranks[(p + h) % n] > ranks[p]).unwrap_or(n) as u64;
        (0..n).map(dist).sum()
    }

    fn permutations(items: &[u32]) -> Vec<Vec<u32>> {
        if items.len() <= 1 {
            return vec![items.to_vec()];
        }
        let mut all = Vec::new();
        for i in 0..items.len() {
            let mut rest = items.to_vec();
            let first = rest.remove(i);
            for mut tail in permutations(&rest) {
                tail.insert(0, first);
                all.push(tail);
            }
        }
        all
    }

    #[test]
    fn every_arrangement_of_small_rings_costs_what_chang_roberts_does_and_ends_on_time() {
        for n in 1..=7u32 {
            for ids in permutations(&(1..=n).collect::<Vec<_>>()) {
                let run = lockstep(&ranks(&ids));
                let top = ids.iter().position(|&id| id == n).unwrap();
                let size = n as usize;
                assert_eq!(run.tokens, chang_roberts_tokens(&ranks(&ids)), "{ids:?}");
                assert_eq!(run.elected, u64::from(n), "{ids:?}");
                assert_eq!(run.declared, [(top, n + 1)], "{ids:?}");
                for k in 0..n {
                    // The process k hops clockwise from the leader learns in round n + 1 + k and halts then; the
                    // leader halts in round 2n + 1, when its announcement comes back.
                    let p = (top + k as usize) % size;
                    assert_eq!(run.learned[p], Some((n + 1 + k, NodeId(n))), "{ids:?} position {p}");
                    let halt = if k == 0 { 2 * n + 1 } else { n + 1 + k };
                    assert_eq!(run.halted[p], Some(halt), "{ids:?} position {p}");
                }
            }
        }
    }

    #[test]
    fn ascending_and_descending_rings_cost_2n_minus_1_and_n_n_plus_1_over_2_tokens() {
        for n in [1, 2, 3, 8, 16, 32, 100] {
            let asc: Vec<u32> = (1..=n).collect();
            let desc: Vec<u32> = (1..=n).rev().collect();
            let n = u64::from(n);
            assert_eq!(lockstep(&ranks(&asc)).tokens, 2 * n - 1);
            assert_eq!(lockstep(&ranks(&desc)).tokens, n * (n + 1) / 2);
        }
    }

    #[test]
    fn the_ranking_decides_who_wins() {
        let ids = [4, 1, 3, 6, 2, 5];
        let lowest: Vec<Rank> = ids.iter().map(|&id| Rank::new(Prefer::Lowest, 0, NodeId(id))).collect();
        let run = lockstep(&lowest);
        assert_eq!(run.declared, [(1, 7)]);
        assert!(run.learned.iter().all(|l| l.is_some_and(|(_, leader)| leader == NodeId(1))));
        assert_eq!(run.tokens, chang_roberts_tokens(&lowest));
        // Under "smaller wins" this arrangement costs what its mirror image does under "larger wins".
        assert_eq!(run.tokens, chang_roberts_tokens(&ranks(&ids.map(|id| 7 - id))));
    }

    #[test]
    fn the_status_goes_from_idle_to_election_to_normal_under_the_leader() {
        let mut p = Lcr::new(rank(5), Port(0));
        let mut effects = Vec::new();
        let mut round = |p: &mut Lcr, r, inbox: &[(Port, Msg)]| {
            effects.clear();
            p.round(&mut RoundCx::new(r, Instant::ZERO, &mut effects), inbox);
            effects.clone()
        };
        assert_eq!(p.status(), Status::normal(None, Epoch::ZERO));
        let send = |msg| RoundEffect::Send { to: Port(0), msg };
        assert_eq!(round(&mut p, 1, &[]), [send(Msg::Token { id: rank(5) })]);
        assert_eq!(p.status(), Status::election(Epoch::ZERO));
        let tokens = [(Port(1), Msg::Token { id: rank(3) }), (Port(1), Msg::Token { id: rank(9) })];
        assert_eq!(round(&mut p, 2, &tokens), [send(Msg::Token { id: rank(9) })], "the weaker token dies");
        assert_eq!(p.status(), Status::election(Epoch::ZERO));
        assert_eq!(round(&mut p, 3, &[]), []);
        let announcement = [(Port(1), Msg::Elected { leader: rank(9) })];
        assert_eq!(round(&mut p, 4, &announcement), [send(Msg::Elected { leader: rank(9) })]);
        assert_eq!(p.status(), Status::normal(Some(NodeId(9)), Epoch::ZERO));
        assert!(p.halted());
    }

    #[test]
    fn the_leader_announces_when_its_token_comes_home_and_halts_when_the_announcement_does() {
        let mut p = Lcr::new(rank(9), Port(0));
        let mut effects = Vec::new();
        p.round(&mut RoundCx::new(1, Instant::ZERO, &mut effects), &[]);
        effects.clear();
        p.round(&mut RoundCx::new(4, Instant::ZERO, &mut effects), &[(Port(1), Msg::Token { id: rank(9) })]);
        let announce = RoundEffect::Send { to: Port(0), msg: Msg::Elected { leader: rank(9) } };
        assert_eq!(effects, [RoundEffect::Notify(Notice::Elected { epoch: Epoch::ZERO }), announce]);
        assert_eq!((p.status(), p.halted()), (Status::normal(Some(NodeId(9)), Epoch::ZERO), false));
        effects.clear();
        p.round(&mut RoundCx::new(7, Instant::ZERO, &mut effects), &[(Port(1), Msg::Elected { leader: rank(9) })]);
        assert_eq!((effects.len(), p.halted()), (0, true), "the announcement stops at the leader");
    }

    #[test]
    fn on_a_clock_it_starts_at_the_first_multiple_of_t_and_sends_its_token_clockwise_in_round_1() {
        let neighbors = [
            Neighbor { port: Port(0), id: NodeId(2), rank: rank(2) },
            Neighbor { port: Port(1), id: NodeId(3), rank: rank(3) },
        ];
        let setup = Setup {
            id: NodeId(1),
            rank: rank(1),
            neighbors: &neighbors,
            ring: Some(RingPorts { next: Port(1), prev: Port(0) }),
            ring_order: &[],
            shape: Shape::Ring,
            delay_bound: Some(Duration::from_ticks(1000)),
            diameter: None,
            suspected: &[],
        };
        let mut p = SyncLcr.build(&setup);
        let mut effects = Vec::new();
        p.on_command(&mut Cx::new(Instant::from_ticks(400), &mut effects), Command::Initiate);
        let wait = Span::exactly(Duration::from_ticks(600));
        assert_eq!(effects, [Effect::SetTimer { timer: RoundTimer::NextRound, after: wait }]);
        effects.clear();
        p.on_timer(&mut Cx::new(Instant::from_ticks(1000), &mut effects), RoundTimer::NextRound);
        let token = RoundMsg { round: 1, msg: Msg::Token { id: rank(1) } };
        assert_eq!(effects[0], Effect::Send { to: Port(1), msg: token });
        assert_eq!(&*RoundMsg::<Msg>::kinds(), ["token", "elected"]);
    }

    #[test]
    fn it_describes_itself_in_its_own_words() {
        let neighbors = [
            Neighbor { port: Port(0), id: NodeId(2), rank: rank(2) },
            Neighbor { port: Port(1), id: NodeId(3), rank: rank(3) },
        ];
        let setup = Setup {
            id: NodeId(1),
            rank: rank(1),
            neighbors: &neighbors,
            ring: Some(RingPorts { next: Port(1), prev: Port(0) }),
            ring_order: &[],
            shape: Shape::Ring,
            delay_bound: Some(Duration::from_ticks(1000)),
            diameter: None,
            suspected: &[],
        };
        let peers = Peers(&neighbors);
        let mut p = SyncLcr.build(&setup);
        let mut effects = Vec::new();
        let mut step = |p: &mut SyncLcrProcess, at: u64, event| {
            effects.clear();
            driver::handle(p, Instant::from_ticks(at), event, &mut effects)
        };
        let tick = || Event::Timer(RoundTimer::NextRound);
        let from_prev = |round, msg| Event::Message { from: Port(0), msg: RoundMsg { round, msg } };
        assert_eq!(p.view(&peers).to_string(), "asleep: id 1");
        assert_eq!(step(&mut p, 400, Event::Command(Command::Initiate)), Some("initiate, wait for the round to begin"));
        assert_eq!(step(&mut p, 1000, tick()), Some("send own token"));
        assert_eq!(p.view(&peers).to_string(), "candidate: id 1, round 1");
        assert_eq!(RoundMsg { round: 1, msg: Msg::Token { id: rank(3) } }.describe(), "round 1: token 3");
        assert_eq!(
            step(&mut p, 1500, from_prev(1, Msg::Token { id: rank(3) })),
            Some("keep the message for the next round")
        );
        assert_eq!(step(&mut p, 2000, tick()), Some("forward a stronger token"));
        assert_eq!(step(&mut p, 3000, tick()), Some("nothing arrived, wait"));
        step(&mut p, 3500, from_prev(3, Msg::Elected { leader: rank(3) }));
        assert_eq!(step(&mut p, 4000, tick()), Some("pass the announcement on, halt"));
        assert_eq!(p.view(&peers).to_string(), "lost: id 1, leader 3, round 4");
        assert_eq!(step(&mut p, 4500, from_prev(4, Msg::Token { id: rank(2) })), Some("halted, ignore the message"));
        // A weaker token dies; the own token home elects.
        let mut q = Lcr::new(rank(9), Port(0));
        let mut effects = Vec::new();
        let mut round = |q: &mut Lcr, r, inbox: &[(Port, Msg)]| {
            effects.clear();
            let mut cx = RoundCx::new(r, Instant::ZERO, &mut effects);
            q.round(&mut cx, inbox);
            cx.applied()
        };
        assert_eq!(round(&mut q, 1, &[]), Some("send own token"));
        assert_eq!(round(&mut q, 2, &[(Port(1), Msg::Token { id: rank(4) })]), Some("swallow a weaker token"));
        assert_eq!(round(&mut q, 3, &[(Port(1), Msg::Token { id: rank(9) })]), Some("own token returned, elected"));
        assert_eq!(q.view(&peers).to_string(), "leader: id 9");
        assert_eq!(
            round(&mut q, 4, &[(Port(1), Msg::Elected { leader: rank(9) })]),
            Some("announcement came home, halt")
        );
    }

    #[test]
    fn bounds_are_chang_roberts_worst_case_and_the_announcement() {
        let facts = Facts::new(8, 8, 8);
        let bounds: Vec<(String, u64)> = SyncLcr.bounds(&facts).into_iter().map(|b| (b.name, b.value)).collect();
        assert_eq!(bounds, [("worst case n(n+1)/2 tokens".into(), 36), ("announcement n elected".into(), 8)]);
        let t = Duration::from_ticks(1000);
        assert_eq!(SyncLcr.election_time(&facts, t), t * 17);
    }
}
