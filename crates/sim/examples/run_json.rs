//! Run a normalised scenario JSON file and print the report JSON (debugging aid).
fn main() {
    let path = std::env::args().nth(1).expect("usage: run_json SCENARIO.json");
    let text = std::fs::read_to_string(path).expect("read scenario");
    let t0 = std::time::Instant::now();
    match ccbench_sim::run_json(&text) {
        Ok(out) => {
            println!("{out}");
            eprintln!("wall {:.3} s", t0.elapsed().as_secs_f64());
        }
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(2);
        }
    }
}
