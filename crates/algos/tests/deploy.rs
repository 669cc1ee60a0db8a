//! The process a member runs is built only for the algorithms a member can run.

use elect_algos::member::{DeployTiming, Deployed, MemberDriver, deployable, dispatch_member};
use elect_algos::monitor::MonitorNetwork;
use elect_algos::{Algorithm, Facts, Params, RegistryError};
use elect_core::{Duration, InT};

#[test]
fn a_member_is_refused_an_algorithm_no_member_runs_before_it_is_built() {
    struct Built;
    impl MemberDriver for Built {
        type Output = &'static str;
        fn drive_member<A: Algorithm>(self, member: Deployed<A>) -> &'static str {
            member.info().name
        }
    }
    let network = MonitorNetwork {
        facts: Facts::new(3, 3, 3),
        hops: 1,
        logical_ring: false,
        delay_bound: Duration::from_ticks(1000),
    };
    let timing = DeployTiming::new(InT(2), Duration::from_ticks(10_000));
    for info in elect_algos::registry::all() {
        let built = dispatch_member(info.name, &Params::new(), timing.clone(), network, Built);
        match deployable(info) {
            Ok(()) => assert_eq!(built.unwrap(), info.name),
            Err(why) => assert_eq!(built.unwrap_err(), RegistryError::NotDeployable(why)),
        }
    }
}
