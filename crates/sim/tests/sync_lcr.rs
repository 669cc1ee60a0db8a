//! LCR in synchronous rounds (Lynch's section 3.3; docs/reference/algorithms/sync-lcr.md): the tokens of Chang–Roberts with every
//! process initiating, exactly `n` announcements, the round each process learns the leader in, and the same run
//! under random delays up to `T`.

mod common;

use common::{config, ids, ids_of, permutations, run_ok, units};
use elect_core::{NodeId, Prefer};
use elect_scenario::{Ids, InitiatorSpec, SimConfig};
use elect_sim::{Report, simulate};

/// Sync-LCR on a ring of `n` with every process initiating, adjusted by `f`.
fn lcr(n: usize, f: impl FnOnce(&mut SimConfig)) -> SimConfig {
    config("sync-lcr", n, |c| {
        c.initiators = InitiatorSpec::All;
        f(c);
    })
}

/// The same run of Chang–Roberts (`--initiators all`).
fn chang_roberts(cfg: &SimConfig) -> SimConfig {
    SimConfig { algorithm: "chang-roberts".into(), ..cfg.clone() }
}

/// Chang–Roberts's per-arrangement count: `n + Σ_{p ≠ max} dist(p)`, `dist(p)` the hops from `p`, clockwise, to the
/// first stronger id (the strongest's token goes all `n` hops).
fn tokens(ids: &[NodeId]) -> u64 {
    let n = ids.len();
    let dist = |p: usize| (1..n).find(|&h| ids[(p + h) % n] > ids[p]).unwrap_or(n) as u64;
    (0..n).map(dist).sum()
}

/// The arrangements of the exact-count tests: ascending, descending and random rings of 1 to 12, and a few
/// larger ones.
fn arrangements() -> Vec<(usize, Ids, u64)> {
    let mut all = Vec::new();
    for n in (1..=12).chain([64, 257]) {
        all.push((n, Ids::Ascending, 1));
        all.push((n, Ids::Descending, 1));
        let seeds = if n <= 12 { 1..=6 } else { 1..=3 };
        all.extend(seeds.map(|seed| (n, Ids::Random, seed)));
    }
    all
}

/// Checks the counts, the leader and the times of a finished unit-delay run on `n` processes.
fn check_unit_delay_run(r: &Report, n: u64, expected_tokens: u64) {
    assert_eq!(r.messages.kind("token"), expected_tokens, "{}", r.reproduce);
    assert_eq!(r.messages.kind("elected"), n, "the announcement goes round once: {}", r.reproduce);
    assert_eq!(r.messages.total, expected_tokens + n, "token and elected are the only kinds");
    assert_eq!(r.leader, Some(NodeId(n as u32)), "{}", r.reproduce);
    assert!(r.agreed && r.terminated);
    // The strongest token comes home in round n + 1, at n·T; the announcement reaches the leader's
    // counter-clockwise neighbour, the last to learn, in round 2n, at (2n − 1)·T; it comes back to the leader, which
    // halts, at 2n·T.
    assert_eq!(r.declared_at.map(|t| t.0), Some(units(n)), "{}", r.reproduce);
    assert_eq!(r.elected_at.map(|t| t.0), Some(units(2 * n - 1)), "{}", r.reproduce);
    assert_eq!(r.end_time.0, units(2 * n), "{}", r.reproduce);
    let bounds: Vec<(u64, u64, bool)> = r.bounds.iter().map(|b| (b.value, b.measured, b.held)).collect();
    assert_eq!(bounds, [(n * (n + 1) / 2, expected_tokens, true), (n, n, true)], "{}", r.reproduce);
}

#[test]
fn tokens_and_announcements_equal_chang_roberts_with_every_process_initiating() {
    for (n, arrangement, seed) in arrangements() {
        let cfg = lcr(n, |c| {
            c.ids = arrangement;
            c.seed = seed;
        });
        let (sync, reference) = (run_ok(&cfg), run_ok(&chang_roberts(&cfg)));
        let expected = tokens(&ids_of(&cfg));
        check_unit_delay_run(&sync, n as u64, expected);
        assert_eq!(sync.messages.by_kind, reference.messages.by_kind, "{} vs {}", sync.reproduce, reference.reproduce);
        assert_eq!(sync.leader, reference.leader);
        // The leader knows when its token comes home, as in Chang-Roberts; the others one round sooner, since
        // Chang-Roberts's leader waits for its announcement to come back.
        assert_eq!(sync.declared_at, reference.declared_at);
        assert_eq!(reference.elected_at.map(|t| t.0), Some(units(2 * n as u64)));
    }
}

#[test]
fn ascending_and_descending_rings_match_the_reference_table() {
    // Reference values: n, CR ascending (2n − 1), CR descending (n(n+1)/2).
    let table =
        [(1, 1, 1), (2, 3, 3), (3, 5, 6), (4, 7, 10), (5, 9, 15), (6, 11, 21), (7, 13, 28), (8, 15, 36), (16, 31, 136)];
    for (n, asc, desc) in table.into_iter().chain([(32, 63, 528), (64, 127, 2080), (257, 513, 33153)]) {
        assert_eq!(run_ok(&lcr(n, |_| {})).messages.kind("token"), asc, "ascending n={n}");
        let d = run_ok(&lcr(n, |c| c.ids = Ids::Descending));
        assert_eq!(d.messages.kind("token"), desc, "descending n={n}");
        assert_eq!((d.bounds[0].value, d.bounds[0].measured), (desc, desc), "the worst case is reached");
    }
}

#[test]
fn every_arrangement_of_rings_up_to_6_follows_the_formula() {
    for n in 1..=6u32 {
        for list in permutations(&(1..=n).collect::<Vec<_>>()) {
            let cfg = lcr(n as usize, |c| c.ids = ids(&list));
            let r = run_ok(&cfg);
            check_unit_delay_run(&r, u64::from(n), tokens(&ids_of(&cfg)));
        }
    }
}

#[test]
fn random_delays_up_to_t_change_nothing_but_the_length_of_a_round() {
    for (n, arrangement, seed) in arrangements() {
        let unit = lcr(n, |c| {
            c.ids = arrangement;
            c.seed = seed;
        });
        let random = SimConfig { delay: "uniform:1..3".parse().unwrap(), ..unit.clone() };
        let (a, b) = (run_ok(&unit), run_ok(&random));
        let n = n as u64;
        assert_eq!(b.messages.by_kind, a.messages.by_kind, "{}", b.reproduce);
        assert_eq!(b.leader, Some(NodeId(n as u32)), "{}", b.reproduce);
        assert!(b.agreed && b.terminated);
        // Rounds of T = 3.
        assert_eq!(b.declared_at.map(|t| t.0), Some(units(3 * n)), "{}", b.reproduce);
        assert_eq!(b.elected_at.map(|t| t.0), Some(units(3 * (2 * n - 1))), "{}", b.reproduce);
        assert_eq!(b.end_time.0, units(3 * 2 * n), "{}", b.reproduce);
    }
}

#[test]
fn unordered_links_need_no_fifo() {
    // At most one message per link per round: reordering has nothing to reorder.
    for seed in 1..=5 {
        let cfg = lcr(16, |c| {
            c.ids = Ids::Random;
            c.seed = seed;
            c.fifo = false;
            c.delay = "uniform:1..3".parse().unwrap();
        });
        let r = run_ok(&cfg);
        assert_eq!(r.messages.kind("token"), tokens(&ids_of(&cfg)), "{}", r.reproduce);
        assert_eq!(r.leader, Some(NodeId(16)));
    }
}

#[test]
fn the_ranking_decides_who_is_strongest() {
    for seed in 1..=4 {
        let cfg = lcr(10, |c| {
            c.ids = Ids::Random;
            c.seed = seed;
            c.prefer = Prefer::Lowest;
        });
        let (r, reference) = (run_ok(&cfg), run_ok(&chang_roberts(&cfg)));
        assert_eq!(r.leader, Some(NodeId(1)), "{}", r.reproduce);
        assert_eq!(r.messages.by_kind, reference.messages.by_kind, "{}", r.reproduce);
        assert_eq!(r.elected_at.map(|t| t.0), Some(units(19)));
    }
}

#[test]
fn one_process_elects_itself_with_one_token_and_one_announcement() {
    let r = run_ok(&lcr(1, |_| {}));
    assert_eq!(r.leader, Some(NodeId(1)));
    assert_eq!((r.messages.kind("token"), r.messages.kind("elected")), (1, 1));
    assert_eq!((r.declared_at.map(|t| t.0), r.elected_at.map(|t| t.0)), (Some(units(1)), Some(units(1))));
}

#[test]
fn some_initiators_only_are_refused() {
    for spec in ["random:3", "4", "weakest"] {
        let cfg = lcr(8, |c| c.initiators = spec.parse().unwrap());
        let err = simulate(&cfg, None).unwrap_err().to_string();
        assert!(err.contains("sync-lcr runs in lock-step rounds") && err.contains("--initiators all"), "{err}");
    }
}
