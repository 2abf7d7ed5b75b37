//! The per-run events cap and the abort hook: both end a run early with an error,
//! and neither changes a run that stays below them.
use ccbench_sim::config::*;
use ccbench_sim::world::{ABORTED, POLL_EVENTS};

fn cfg(secs: u64) -> SimConfig {
    let b = BottleneckConfig::droptail(100_000_000, 20_000_000, 1.0);
    let mut c = SimConfig::new("limits", secs * 1_000_000_000, b, vec![FlowConfig::bulk(0, "cubic", 32 << 20)]);
    c.seed = 3;
    c
}

#[test]
fn events_cap_ends_the_run_with_an_error_naming_the_cap() {
    let full = ccbench_sim::run(&cfg(5)).unwrap();
    let events = full.run.events;
    assert!(events > 1000);
    let mut capped = cfg(5);
    capped.max_events = events / 2;
    let err = ccbench_sim::run(&capped).unwrap_err();
    assert!(err.contains(&format!("run exceeded {} events", events / 2)), "{err}");
    // a cap of exactly the events the run needs is not exceeded, and changes nothing
    let mut exact = cfg(5);
    exact.max_events = events;
    let same = ccbench_sim::run(&exact).unwrap();
    assert_eq!(serde_json::to_string(&same).unwrap(), serde_json::to_string(&full).unwrap());
}

#[test]
fn abort_hook_is_polled_and_stops_the_run() {
    let c = cfg(60);
    let mut polls = 0u64;
    let err = ccbench_sim::run_with(&c, &mut || {
        polls += 1;
        polls == 2
    })
    .unwrap_err();
    assert_eq!(err, ABORTED);
    assert_eq!(polls, 2);
    // a hook that never aborts is polled once per POLL_EVENTS events and changes nothing
    let mut n = 0u64;
    let rep = ccbench_sim::run_with(&c, &mut || {
        n += 1;
        false
    })
    .unwrap();
    assert_eq!(n, rep.run.events / POLL_EVENTS - u64::from(rep.run.events.is_multiple_of(POLL_EVENTS)));
    let plain = ccbench_sim::run(&c).unwrap();
    assert_eq!(serde_json::to_string(&rep).unwrap(), serde_json::to_string(&plain).unwrap());
}

#[test]
fn max_events_defaults_when_the_json_omits_it() {
    let mut v = serde_json::to_value(cfg(1)).unwrap();
    v.as_object_mut().unwrap().remove("max_events");
    let c: SimConfig = serde_json::from_value(v).unwrap();
    assert_eq!(c.max_events, DEFAULT_MAX_EVENTS);
}
