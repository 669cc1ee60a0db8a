//! What the nemesis does in a round: the fault a kind makes of the current leader and the cluster, as rules for
//! [`super::netns`] or a signal, and which members form the side that should go on electing while it holds.

use elect_core::Epoch;
use rand::RngExt;
use rand::seq::SliceRandom;
use rand_chacha::ChaCha8Rng;
use serde::Serialize;

use super::netns::Rules;
use super::plan::Nemesis;

/// What happens to the leader's process.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Signal {
    /// SIGSTOP now, SIGCONT at the heal.
    Pause,
    /// SIGKILL now, a restart on the same data directory at the heal.
    Kill,
}

/// One round's fault.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Injection {
    /// The kind (never `Mixed`: the one drawn).
    pub(super) kind: Nemesis,
    /// nftables rules per member index.
    pub(super) rules: Vec<(usize, Rules)>,
    /// A signal to the leader.
    pub(super) signal: Option<Signal>,
    /// The members (indexes) that can still reach one another while the fault holds: the side expected to have
    /// one live leader of its own.
    pub(super) side: Vec<usize>,
    /// Whether the fault takes the leader from that side, so that the side must elect another.
    pub(super) takes_leader: bool,
    /// In words, with member ids.
    pub(super) detail: String,
}

/// Who the members are: how many, and which of them vote.
pub(super) struct Members {
    /// How many (indexes 0 to n - 1).
    pub(super) n: usize,
    /// The voters' indexes.
    pub(super) voters: Vec<usize>,
    /// The fewest voters the cluster may have while the fault holds: fewer than `voters` when a change that
    /// removes one may take effect meanwhile.
    pub(super) fewest: usize,
}

impl Members {
    /// `n` members, every one a voter.
    #[cfg(test)]
    fn all(n: usize) -> Self {
        Self { n, voters: (0..n).collect(), fewest: n }
    }
}

/// The fault `kind` makes of the cluster `members` led by member index `leader`, in the lease mode if `lease`.
pub(super) fn inject(kind: Nemesis, leader: usize, members: &Members, lease: bool, rng: &mut ChaCha8Rng) -> Injection {
    let n = members.n;
    let kind = match kind {
        Nemesis::Mixed => Nemesis::MIXED[rng.random_range(0..Nemesis::MIXED.len())],
        k => k,
    };
    let everyone: Vec<usize> = (0..n).collect();
    let others: Vec<usize> = everyone.iter().copied().filter(|&i| i != leader).collect();
    let id = |i: usize| i + 1;
    let fault = |rules, signal, side: Vec<usize>, takes_leader, detail| Injection {
        kind,
        rules,
        signal,
        side,
        takes_leader,
        detail,
    };
    match kind {
        Nemesis::PartitionLeader => fault(
            vec![(leader, Rules { deaf_to: others.clone(), mute_to: others.clone(), loss_permille: 0 })],
            None,
            others,
            true,
            format!("leader {} cut off from everyone", id(leader)),
        ),
        Nemesis::Split => split(leader, members, rng),
        Nemesis::OneWay => fault(
            vec![(leader, Rules { deaf_to: Vec::new(), mute_to: others.clone(), loss_permille: 0 })],
            None,
            others,
            true,
            format!("leader {} hears the others but is not heard", id(leader)),
        ),
        Nemesis::DeafLeader => deaf_leader(leader, n, lease),
        Nemesis::Deaf => {
            // A follower drawn from the run's seed hears nothing from the leader; the others, the leader among them,
            // are the side that should keep its leader and epoch throughout.
            // (A cluster of one has no follower: the leader itself is then "deaf", to itself, which changes nothing.)
            let deaf = others.get(rng.random_range(0..others.len().max(1))).copied().unwrap_or(leader);
            let side: Vec<usize> = everyone.iter().copied().filter(|&i| i != deaf).collect();
            fault(
                vec![(deaf, Rules { deaf_to: vec![leader], mute_to: Vec::new(), loss_permille: 0 })],
                None,
                side,
                false,
                format!("member {} deaf to leader {}", id(deaf), id(leader)),
            )
        }
        Nemesis::Loss(permille) => fault(
            everyone.iter().map(|&i| (i, Rules { loss_permille: permille, ..Rules::default() })).collect(),
            None,
            everyone.clone(),
            false,
            format!("{}% of packets between members lost", f64::from(permille) / 10.0),
        ),
        Nemesis::Pause => {
            fault(Vec::new(), Some(Signal::Pause), others, true, format!("leader {} paused (SIGSTOP)", id(leader)))
        }
        Nemesis::Kill => {
            fault(Vec::new(), Some(Signal::Kill), others, true, format!("leader {} killed (SIGKILL)", id(leader)))
        }
        Nemesis::Mixed => unreachable!("drawn above"),
    }
}

/// A minority of ⌊(v - 1) / 2⌋ voters (at least one), the leader among them, cut off from the rest, where v is the
/// fewest voters the cluster may have meanwhile: the rest hold a majority of the voters before and after a change.
/// Learners stay with the rest.
fn split(leader: usize, members: &Members, rng: &mut ChaCha8Rng) -> Injection {
    let mut shuffled: Vec<usize> = members.voters.iter().copied().filter(|&i| i != leader).collect();
    shuffled.shuffle(rng);
    let size = ((members.fewest - 1) / 2).max(1);
    let mut minority: Vec<usize> = std::iter::once(leader).chain(shuffled.into_iter().take(size - 1)).collect();
    minority.sort_unstable();
    let majority: Vec<usize> = (0..members.n).filter(|i| !minority.contains(i)).collect();
    let rules = minority
        .iter()
        .map(|&i| (i, Rules { deaf_to: majority.clone(), mute_to: majority.clone(), loss_permille: 0 }))
        .collect();
    let ids = |s: &[usize]| s.iter().map(|&i| (i + 1).to_string()).collect::<Vec<_>>().join(",");
    Injection {
        kind: Nemesis::Split,
        detail: format!("split {{{}}} | {{{}}}", ids(&minority), ids(&majority)),
        rules,
        signal: None,
        side: majority,
        takes_leader: true,
    }
}

/// The leader hears nobody but is heard. In the classic mode its heartbeats still reach everybody, and it leads on;
/// in the lease mode no backing reaches it, so it must give way to one of the others.
fn deaf_leader(leader: usize, n: usize, lease: bool) -> Injection {
    let others = others_of(leader, n);
    Injection {
        kind: Nemesis::DeafLeader,
        rules: vec![(leader, Rules { deaf_to: others.clone(), mute_to: Vec::new(), loss_permille: 0 })],
        signal: None,
        side: if lease { others } else { (0..n).collect() },
        takes_leader: lease,
        detail: format!("leader {} hears nobody but is heard", leader + 1),
    }
}

/// Every member index of `n` but `i`.
fn others_of(i: usize, n: usize) -> Vec<usize> {
    (0..n).filter(|&j| j != i).collect()
}

/// What one round of the nemesis did and how the cluster answered.
#[derive(Clone, Debug, Serialize)]
pub struct NemesisRound {
    /// The round, from 1.
    pub round: u32,
    /// The kind of fault.
    pub kind: String,
    /// The fault as it was done (who was cut off from whom, and how).
    pub detail: String,
    /// The leader before the fault.
    pub leader: u32,
    /// Its epoch.
    pub epoch: Epoch,
    /// From the fault to the moment the side agreed on another live leader with a higher epoch, when the fault
    /// took the leader from it (`None`: it did not, while the fault held).
    pub failover_ms: Option<f64>,
    /// From the heal to the moment every member followed one live leader and nothing changed for the quiet
    /// period (`None`: not within --round-timeout; the round failed).
    pub recovery_ms: Option<f64>,
    /// The leader and epoch every member agreed on after the heal.
    pub after: Option<(u32, Epoch)>,
    /// How many times a member of the side shown a new leadership (a leader or an epoch) while the fault held.
    pub side_changes: u64,
    /// From the fault to the end of the recovery, how long the side in force (while the fault held, the members
    /// expected to have a leader; after the heal, everybody) did not agree on one live leader of its own.
    pub leaderless_ms: f64,
    /// Epoch rounds used from the fault to the end of the recovery: the highest round any member showed then,
    /// less the round before the fault.
    pub rounds_used: u64,
}

#[cfg(test)]
mod tests {
    use rand::SeedableRng;

    use super::*;

    #[test]
    fn a_deaf_member_hears_everybody_but_the_leader() {
        let f = inject(Nemesis::Deaf, 4, &Members::all(5), false, &mut ChaCha8Rng::seed_from_u64(1));
        let [(deaf, rules)] = f.rules.as_slice() else { panic!("{f:?}") };
        assert!(*deaf != 4 && rules.deaf_to == [4] && rules.mute_to.is_empty(), "{f:?}");
        assert_eq!(f.side, (0..5).filter(|i| i != deaf).collect::<Vec<_>>());
        assert!(!f.takes_leader && f.signal.is_none());
    }

    #[test]
    fn a_deaf_leader_is_heard_and_gives_way_only_in_the_lease_mode() {
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let f = inject(Nemesis::DeafLeader, 2, &Members::all(3), true, &mut rng);
        assert_eq!(f.rules, vec![(2, Rules { deaf_to: vec![0, 1], mute_to: vec![], loss_permille: 0 })]);
        assert!(f.takes_leader && f.side == [0, 1]);
        let f = inject(Nemesis::DeafLeader, 2, &Members::all(3), false, &mut rng);
        assert!(!f.takes_leader && f.side == [0, 1, 2]);
    }

    #[test]
    fn a_split_puts_the_leader_in_a_minority() {
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let f = inject(Nemesis::Split, 4, &Members::all(5), false, &mut rng);
        assert_eq!(f.side.len(), 3);
        assert!(!f.side.contains(&4));
        let minority: Vec<usize> = f.rules.iter().map(|(i, _)| *i).collect();
        assert_eq!(minority.len(), 2);
        assert!(minority.contains(&4));
        for (_, r) in &f.rules {
            assert_eq!(r.deaf_to, f.side);
            assert_eq!(r.mute_to, f.side);
        }
        // Three members: the leader alone against two.
        let f = inject(Nemesis::Split, 0, &Members::all(3), false, &mut rng);
        assert_eq!((f.rules.len(), f.side.clone()), (1, vec![1, 2]));
    }

    #[test]
    fn a_split_leaves_a_majority_of_the_voters_before_and_after_a_change_and_the_learners_with_it() {
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        // Voters 1, 2, 3 of five: the leader alone against the other two voters and the learners.
        let members = Members { n: 5, voters: vec![0, 1, 2], fewest: 3 };
        let f = inject(Nemesis::Split, 2, &members, true, &mut rng);
        assert_eq!((f.rules.len(), f.side.clone()), (1, vec![0, 1, 3, 4]));
        // Five voters, one of whom a change may remove meanwhile: a majority of four must stay together.
        let members = Members { n: 5, voters: (0..5).collect(), fewest: 4 };
        let f = inject(Nemesis::Split, 4, &members, true, &mut rng);
        assert_eq!((f.rules.len(), f.side.clone()), (1, vec![0, 1, 2, 3]));
    }

    #[test]
    fn one_way_mutes_the_leader_only() {
        let f = inject(Nemesis::OneWay, 2, &Members::all(3), false, &mut ChaCha8Rng::seed_from_u64(1));
        assert_eq!(f.rules, vec![(2, Rules { deaf_to: vec![], mute_to: vec![0, 1], loss_permille: 0 })]);
        assert!(f.takes_leader);
    }

    #[test]
    fn loss_applies_everywhere_and_keeps_the_leader() {
        let f = inject(Nemesis::Loss(200), 0, &Members::all(4), false, &mut ChaCha8Rng::seed_from_u64(1));
        assert_eq!(f.rules.len(), 4);
        assert!(f.rules.iter().all(|(_, r)| r.loss_permille == 200));
        assert!(!f.takes_leader);
        assert_eq!(f.side, vec![0, 1, 2, 3]);
    }

    #[test]
    fn mixed_draws_every_kind_from_the_seed_and_repeats_with_it() {
        let draw = |seed| {
            let mut rng = ChaCha8Rng::seed_from_u64(seed);
            (0..60).map(|_| inject(Nemesis::Mixed, 0, &Members::all(5), false, &mut rng).kind).collect::<Vec<_>>()
        };
        let kinds = draw(7);
        assert_eq!(kinds, draw(7));
        for k in Nemesis::MIXED {
            assert!(kinds.contains(&k), "{k:?} never drawn");
        }
        assert!(!kinds.contains(&Nemesis::Mixed));
    }
}
