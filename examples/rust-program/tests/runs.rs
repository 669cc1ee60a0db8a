//! The algorithm of this crate, run by the whole command line: it counts and elects as elect's own Chang-Roberts
//! on twenty arrangements, and the checker explores as many states of it.

use std::process::Command;

use serde_json::Value;

fn my_elect(args: &[&str]) -> Value {
    let o = Command::new(env!("CARGO_BIN_EXE_my-elect")).args(args).output().expect("my-elect runs");
    assert_eq!(o.status.code(), Some(0), "{args:?}: {}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&o.stdout).unwrap()
}

#[test]
fn it_counts_and_elects_as_the_built_in_chang_roberts() {
    for seed in 1..=20 {
        let seed = seed.to_string();
        let run = |a| my_elect(&["sim", "-a", a, "-n", "8", "--ids", "random", "--seed", &seed, "--json"]);
        let (mine, built_in) = (run("my-chang-roberts"), run("chang-roberts"));
        for key in ["leader", "messages", "elected_at", "events"] {
            assert_eq!(mine[key], built_in[key], "seed {seed}: {key}");
        }
        assert_eq!(mine["properties"]["violations"], Value::Array(vec![]), "seed {seed}");
        let held = |v: &Value| v["bounds"].as_array().unwrap().iter().all(|b| b["held"] == true);
        assert!(held(&mine) && mine["bounds"].as_array().unwrap().len() == 2, "seed {seed}: {}", mine["bounds"]);
    }
}

#[test]
fn the_checker_explores_as_many_states_as_of_the_built_in_one() {
    let check = |a| {
        let v = my_elect(&[
            "check",
            "-a",
            a,
            "-n",
            "5",
            "--ids",
            "random",
            "--reduction",
            "none",
            "--network",
            "unordered",
            "--json",
        ]);
        (v["states"].as_u64().unwrap(), v["transitions"].as_u64().unwrap())
    };
    assert_eq!(check("my-chang-roberts"), check("chang-roberts"));
    assert_eq!(check("my-chang-roberts").0, 352);
}
