fn main() {
    eprintln!("ccbench-link: not implemented yet");
    std::process::exit(2);
}
