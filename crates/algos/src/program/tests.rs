//! The process that stands for a program: what it sends the program, and how it checks what comes back.

use elect_core::{Duration, Effect, Event, Instant, Message, NodeId, Port, Process, Span};
use serde_json::{Value, json};

use super::*;

/// A program whose every answer `answer` gives (from the request, as JSON).
struct Scripted<F>(F);

impl<F: Fn(&Value) -> Result<String, String> + Send + Sync> Stepper for Scripted<F> {
    fn call(&self, request: &str) -> Result<String, String> {
        let r: Value = serde_json::from_str(request).expect("elect sends JSON");
        if r["type"] == "init" {
            return Ok(json!({
                "type": "init_ok", "in_reply_to": 0, "protocol": 1, "name": "scripted", "messages": ["ping", "pong"],
                "timers": ["wake"], "rules": ["answer a ping"],
            })
            .to_string());
        }
        // Answers repeat the request's seq unless the script says otherwise.
        let answer = (self.0)(&r)?;
        match serde_json::from_str::<Value>(&answer) {
            Ok(Value::Object(mut a)) if !a.contains_key("in_reply_to") => {
                a.insert("in_reply_to".to_owned(), r["seq"].clone());
                Ok(Value::Object(a).to_string())
            }
            _ => Ok(answer),
        }
    }
}

/// A name no other test's program has: programs are kept by name for the life of the process.
fn unique() -> String {
    static N: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
    format!("test-{}", N.fetch_add(1, std::sync::atomic::Ordering::Relaxed))
}

fn load(answer: impl Fn(&Value) -> Result<String, String> + Send + Sync + 'static) -> Program {
    Program::load(&unique(), Box::new(Scripted(answer)), &Params::parse(["k=v"]).unwrap()).unwrap()
}

/// Process 2 of 1 to 3, with `T` of 10 ticks.
fn process(program: &Program) -> ProgramProcess {
    let members = [1, 2, 3].map(NodeId);
    crate::testing::on_complete_graph(NodeId(2), &members, Duration::from_ticks(10), |s| program.build(s))
}

fn step(
    p: &mut ProgramProcess,
    event: elect_core::EventOf<ProgramProcess>,
) -> Vec<elect_core::EffectOf<ProgramProcess>> {
    let mut effects = Vec::new();
    elect_core::driver::handle(p, Instant::ZERO, event, &mut effects);
    effects
}

fn ok(extra: Value) -> Result<String, String> {
    let mut answer = json!({ "type": "step_ok", "state": { "n": 1 }, "status": { "state": "normal", "leader": null } });
    answer.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
    Ok(answer.to_string())
}

#[test]
fn a_step_carries_the_setup_the_state_and_the_event_and_its_answer_becomes_effects() {
    let program = load(|r| {
        assert_eq!(r["setup"]["id"], 2);
        assert_eq!(r["setup"]["ports"], json!([{ "port": 0, "id": 1 }, { "port": 1, "id": 3 }]));
        assert_eq!(r["setup"]["params"], json!({ "k": "v" }));
        match r["event"]["type"].as_str().unwrap() {
            "start" => {
                assert_eq!((&r["state"], &r["event"]["durable"]), (&Value::Null, &Value::Null));
                ok(json!({ "set_timers": [{ "timer": "wake", "after": 2.5 }], "persist": { "saved": true } }))
            }
            "message" => {
                assert_eq!(r["state"], json!({ "n": 1 }), "the state it chose comes back");
                assert_eq!((&r["event"]["src"], &r["event"]["body"]), (&json!(1), &json!({ "type": "ping", "x": 7 })));
                ok(json!({
                    "state": { "n": 2 }, "send": [{ "dest": 1, "body": { "type": "pong" } }], "rule": "answer a ping",
                    "status": { "state": "normal", "leader": 2, "epoch": 4 }, "elected": true,
                    "cancel_timers": ["wake"], "view": { "role": "leader", "values": [["pings", 1]] },
                }))
            }
            other => Err(format!("unexpected {other}")),
        }
    });
    let mut p = process(&program);
    let effects = step(&mut p, Event::Start { restored: None });
    let wake = ProgramTimer(names::timer_index("wake").unwrap());
    assert_eq!(
        effects,
        [
            Effect::Persist(r#"{"saved":true}"#.to_owned()),
            Effect::SetTimer { timer: wake, after: Span::exactly(Duration::from_ticks(25)) },
        ]
    );
    let ping = ProgramMsg::from_body(json!({ "type": "ping", "x": 7 }).as_object().unwrap().clone()).unwrap();
    let effects = step(&mut p, Event::Message { from: Port(1), msg: ping });
    let pong = ProgramMsg::from_body(json!({ "type": "pong" }).as_object().unwrap().clone()).unwrap();
    assert_eq!(
        effects,
        [
            Effect::CancelTimer { timer: wake },
            Effect::Send { to: Port(1), msg: pong.clone() },
            Effect::Notify(elect_core::Notice::Elected { epoch: elect_core::Epoch::from_bits(4) }),
        ]
    );
    assert_eq!(pong.kind(), "pong");
    assert_eq!(p.state(), r#"{"n":2}"#);
    assert_eq!(p.status().leader, Some(NodeId(2)));
    assert_eq!(p.view(&elect_core::Peers(&[])).to_string(), "leader: pings 1");
    assert_eq!(program.failure(), None);
}

#[test]
fn a_wrong_answer_has_no_effect_and_is_kept_with_the_process_and_the_event() {
    let cases = [
        ("not json", "its answer is not step_ok"),
        (r#"{"type":"oops"}"#, "its answer is not step_ok"),
        (
            r#"{"type":"step_ok","state":1,"status":{"state":"normal","leader":null},"send":[{"dest":2,"body":{"type":"ping"}}]}"#,
            "it sends to port 2; its ports are 0 to 1",
        ),
        (
            r#"{"type":"step_ok","state":1,"status":{"state":"normal","leader":null},"send":[{"dest":0,"body":{"type":"pang"}}]}"#,
            "message type \"pang\" was not declared",
        ),
        (
            r#"{"type":"step_ok","state":1,"status":{"state":"normal","leader":null},"send":[{"dest":0,"body":{"x":1}}]}"#,
            "a message body needs a \"type\"",
        ),
        (
            r#"{"type":"step_ok","state":1,"status":{"state":"normal","leader":null},"set_timers":[{"timer":"sleep","after":1}]}"#,
            "timer \"sleep\" was not declared",
        ),
        (
            r#"{"type":"step_ok","state":1,"status":{"state":"normal","leader":null},"set_timers":[{"timer":"wake","after":-1}]}"#,
            "after -1 T",
        ),
        (
            r#"{"type":"step_ok","state":1,"status":{"state":"normal","leader":null},"rule":"made up"}"#,
            "rule \"made up\" was not declared",
        ),
        (r#"{"type":"step_ok","state":1,"status":{"state":"leading","leader":null}}"#, "status \"leading\""),
        (
            r#"{"type":"step_ok","in_reply_to":99,"state":1,"status":{"state":"normal","leader":null}}"#,
            "it answered step 99 when asked step 1",
        ),
    ];
    for (answer, problem) in cases {
        let program = load(move |_| Ok(answer.to_owned()));
        let mut p = process(&program);
        assert_eq!(step(&mut p, Event::Start { restored: None }), [], "{answer}");
        let failure = program.failure().expect(answer);
        assert_eq!((failure.node, failure.event.as_str()), (NodeId(2), r#"{"durable":null,"type":"start"}"#));
        assert!(failure.problem.contains(problem), "{answer}: {}", failure.problem);
        assert_eq!(p.state(), "null", "{answer}: the state did not change");
    }
    // A program that cannot answer: the stepper's words; and nothing is asked after a failure.
    let program = load(|_| Err("it exited with status 3".to_owned()));
    let mut p = process(&program);
    step(&mut p, Event::Start { restored: None });
    let failure = program.failure().unwrap();
    assert_eq!(
        failure.to_string(),
        format!(
            r#"{} failed at step 1: process 2, given {{"durable":null,"type":"start"}}: it exited with status 3"#,
            failure.program
        )
    );
}

#[test]
fn a_step_is_asked_twice_and_two_answers_that_differ_stop_the_run_naming_the_steps_before() {
    let asked = std::sync::atomic::AtomicU64::new(0);
    let program = load(move |r| {
        let n = asked.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        // Deterministic for the start, then a counter in the state.
        let state = if r["event"]["type"] == "start" { json!(0) } else { json!(n) };
        ok(json!({ "state": state }))
    });
    let mut p = process(&program);
    step(&mut p, Event::Start { restored: None });
    assert_eq!(program.failure(), None);
    step(&mut p, Event::Timer(ProgramTimer(names::timer_index("wake").unwrap())));
    let failure = program.failure().unwrap();
    assert_eq!(failure.step, 2);
    assert!(
        failure.problem.contains("not deterministic: asked this step twice, it answered the state 2 and then 3"),
        "{}",
        failure.problem
    );
    assert_eq!(failure.recent, [r#"step 1: process 2, given {"durable":null,"type":"start"}"#]);
    assert!(failure.to_string().contains("the steps before it:\n  step 1: process 2"), "{failure}");
}

#[test]
fn what_it_declares_is_checked_when_it_is_loaded() {
    let init = |answer: Value| {
        struct Init(String);
        impl Stepper for Init {
            fn call(&self, _: &str) -> Result<String, String> {
                Ok(self.0.clone())
            }
        }
        let error =
            Program::load(&unique(), Box::new(Init(answer.to_string())), &Params::new()).map(|_| ()).unwrap_err();
        assert!(matches!(error, super::ProgramError::Described { .. }), "{error:?}");
        error.to_string()
    };
    let base = || json!({ "type": "init_ok", "in_reply_to": 0, "protocol": 1, "name": "x", "messages": ["a"] });
    let with = |key: &str, value: Value| {
        let mut v = base();
        v[key] = value;
        v
    };
    assert!(init(with("protocol", json!(2))).contains("it speaks protocol 2; elect speaks 1"));
    assert!(init(with("messages", json!([]))).contains("no message kind"));
    assert!(init(with("messages", json!(["a", "a"]))).contains("\"a\" is declared twice"));
    assert!(init(with("rules", json!([""]))).contains("1 to 80 bytes"));
    assert!(init(with("type", json!("step_ok"))).contains("not init_ok"));
    assert!(init(with("extra", json!(1))).contains("unknown field"));
    assert!(init(with("in_reply_to", json!(3))).contains("with in_reply_to 3"));
    assert!(init(with("needs", json!("torus"))).contains("ring, complete or connected"));
}

#[test]
fn a_message_from_the_wire_must_be_an_object_of_a_declared_type() {
    load(|_| Err(String::new()));
    let body = |text: &str| serde_json::from_value::<ProgramMsg>(json!(text));
    assert_eq!(body(r#"{"type":"ping"}"#).unwrap().kind(), "ping");
    assert!(body(r#"{"type":"nobody-declared-this"}"#).is_err());
    assert!(body("[1, 2]").is_err());
    assert!(body(&format!(r#"{{"type":"ping","pad":"{}"}}"#, "x".repeat(MAX_BODY_BYTES))).is_err());
}
