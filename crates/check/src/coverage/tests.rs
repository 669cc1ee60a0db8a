use super::*;

/// SplitMix64: uniform 64-bit numbers, as fingerprints are, from a seed.
struct Mix(u64);

impl Mix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// True with odds `p`.
    fn odds(&mut self, p: f64) -> bool {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64 <= p
    }
}

fn population(n: usize, seed: u64) -> Vec<u64> {
    let mut mix = Mix(seed);
    (0..n).map(|_| mix.next()).collect()
}

fn within(estimate: f64, truth: f64, tolerance: f64) -> bool {
    (estimate - truth).abs() <= tolerance * truth
}

#[test]
fn a_sample_keeps_every_state_under_the_least_threshold_that_keeps_at_most_its_bound() {
    let fps = population(10_000, 1);
    let sample = Sample::of(&fps, 1000);
    let at = |s: u32| fps.iter().filter(|&&fp| fp.leading_zeros() >= s).count();
    assert!(sample.exponent > 0 && sample.fingerprints.len() <= 1000);
    assert!(at(sample.exponent - 1) > 1000, "the least exponent: one less keeps too many");
    assert_eq!(sample.fingerprints.len(), at(sample.exponent), "every state under the threshold");
    assert!(sample.fingerprints.windows(2).all(|w| w[0] < w[1]));
    assert_eq!(sample.root, fps[0]);
    assert_eq!(sample.invalid(), None);
    // About 10,000 / 2^s of them: the rate is 2^-s.
    let expected = 10_000.0 / f64::from(sample.exponent).exp2();
    assert!(within(sample.fingerprints.len() as f64, expected, 0.2), "{} of {expected}", sample.fingerprints.len());

    // Fewer states than the bound: every one, at exponent 0.
    let all = Sample::of(&fps[..500], 1000);
    assert_eq!((all.exponent, all.fingerprints.len()), (0, 500));
    let none = Sample::of(&[], 1000);
    assert_eq!((none.exponent, none.fingerprints.len()), (0, 0));
}

#[test]
fn a_sample_that_no_search_could_have_taken_is_named_as_such() {
    let good = Sample::of(&population(5000, 2), 100);
    let broken = |change: &dyn Fn(&mut Sample)| {
        let mut s = good.clone();
        change(&mut s);
        s.invalid().expect("refused")
    };
    assert!(broken(&|s| s.exponent = 65).contains("past 64"));
    assert!(broken(&|s| s.fingerprints.swap(0, 1)).contains("not in increasing order"));
    assert!(broken(&|s| s.fingerprints.insert(1, s.fingerprints[0])).contains("not in increasing order"));
    assert!(broken(&|s| s.fingerprints.push(u64::MAX)).contains("not sampled at exponent"));
    assert!(broken(&|s| s.fingerprints = (0..=Sample::MOST as u64).collect()).contains("more than 65536"));
    // Exponent 64 keeps only the fingerprint 0, and is a sample still.
    assert_eq!(Sample { exponent: 64, root: 1, fingerprints: vec![0] }.invalid(), None);
}

#[test]
fn incidence_counts_how_many_searches_saw_each_sampled_state() {
    let s = |fps: &[u64]| Sample { exponent: 0, root: 0, fingerprints: fps.to_vec() };
    let (a, b, c) = (s(&[1, 2, 3]), s(&[2, 3, 4]), s(&[3, 5]));
    // 1, 4 and 5 seen once, 2 twice, 3 three times.
    assert_eq!(incidence(&[&a, &b, &c], 0), (5, 3, 1));
    let cov = coverage(&[&a, &b, &c], &[3, 3, 2]);
    assert_eq!((cov.covered, cov.exact()), (5.0, true));
    // Chao2: 5 + 2/3 · 3² / (2 · 1) = 8.
    assert_eq!(cov.space, Some(8.0));
    // At a common exponent: a sample at 0 is thinned to the other's 62.
    let high = Sample { exponent: 62, root: 0, fingerprints: vec![0, 3] };
    let low = s(&[0, 3, 1 << 62]);
    assert_eq!(incidence(&[&high, &low], 62), (2, 0, 2));
    assert_eq!(coverage(&[&high, &low], &[9, 9]).exponent, 62);
}

#[test]
fn searches_that_all_saw_everything_estimate_exactly_what_they_saw() {
    let fps = population(50_000, 3);
    // Unthinned: exact.
    let sample = Sample::of(&fps, Sample::MOST);
    let cov = coverage(&[&sample, &sample, &sample], &[50_000; 3]);
    assert_eq!((cov.exponent, cov.covered, cov.space), (0, 50_000.0, Some(50_000.0)));
    assert_eq!(cov.fraction(), Some(1.0));
    // Thinned: about as many, never fewer than one search saw, and no state unseen (Q1 = Q2 = 0).
    let sample = Sample::of(&fps, 2000);
    let cov = coverage(&[&sample, &sample, &sample, &sample], &[50_000; 4]);
    assert!(cov.exponent > 0 && !cov.exact());
    assert!(cov.covered >= 50_000.0 && within(cov.covered, 50_000.0, 0.1), "{cov:?}");
    assert_eq!((cov.seen_once, cov.seen_twice, cov.fraction()), (0, 0, Some(1.0)));
}

/// `m` searches, each seeing each of `n` states with the odds `odds(state)`: their samples and state counts.
fn searches(n: usize, m: usize, most: usize, odds: &dyn Fn(usize) -> f64) -> (Vec<Sample>, Vec<u64>, usize) {
    let fps = population(n, 4);
    let mut mix = Mix(5);
    let seen: Vec<Vec<u64>> = (0..m)
        .map(|_| fps.iter().enumerate().filter(|&(i, _)| mix.odds(odds(i))).map(|(_, &fp)| fp).collect())
        .collect();
    let mut union: Vec<u64> = seen.concat();
    union.sort_unstable();
    union.dedup();
    let states = seen.iter().map(|s| s.len() as u64).collect();
    (seen.iter().map(|s| Sample::of(s, most)).collect(), states, union.len())
}

#[test]
fn searches_that_see_states_alike_estimate_the_space_within_five_percent() {
    // 8 searches each seeing 30% of 200,000 states, at random: 94% of them covered, and Chao2 unbiased.
    let (samples, states, covered) = searches(200_000, 8, 4096, &|_| 0.3);
    let cov = coverage(&samples.iter().collect::<Vec<_>>(), &states);
    assert!(cov.exponent >= 4, "thinned: {cov:?}");
    assert!(within(cov.covered, covered as f64, 0.05), "{cov:?} against {covered}");
    let space = cov.space.unwrap();
    assert!(within(space, 200_000.0, 0.05), "{cov:?}");
    let fraction = cov.fraction().unwrap();
    assert!(within(fraction, 1.0 - 0.7f64.powi(8), 0.05), "{fraction}");
}

#[test]
fn searches_that_favour_some_states_underestimate_the_space_a_floor() {
    // A third of the states seen by nearly every search (near the start), a third by some, a third by hardly any
    // (deep): Chao2 falls short of the 300,000 (by about 30%), and the fraction covered is a ceiling.
    let odds = [0.9, 0.1, 0.005];
    let (samples, states, covered) = searches(300_000, 8, 4096, &|i| odds[i % 3]);
    let cov = coverage(&samples.iter().collect::<Vec<_>>(), &states);
    let space = cov.space.unwrap();
    assert!(space < 300_000.0 * 0.85 && space >= cov.covered, "{cov:?}");
    assert!(cov.fraction().unwrap() > covered as f64 / 300_000.0 + 0.1, "{cov:?} against {covered}");
    assert!(cov.seen_once > cov.seen_twice, "{cov:?}");
}

#[test]
fn one_search_alone_says_nothing_of_the_space() {
    let sample = Sample::of(&population(1000, 6), Sample::MOST);
    let cov = coverage(&[&sample], &[1000]);
    assert_eq!((cov.covered, cov.space, cov.fraction()), (1000.0, None, None));
}
