use reclaimlab_core::scenario::parse_file;
use reclaimlab_core::{run, InvariantMode, RunOptions};
fn main() {
    let args: Vec<String> = std::env::args().collect();
    let scn = parse_file(std::path::Path::new(&args[1])).unwrap_or_else(|e| panic!("{e}"));
    let mut opts = RunOptions::default();
    if args.get(2).map(|s| s.as_str()) == Some("inv") {
        opts.invariants = InvariantMode::Periodic(1000);
    }
    let t = std::time::Instant::now();
    let out = run(&scn, &opts, &mut |_, _| true).unwrap_or_else(|e| panic!("{e}"));
    let v: serde_json::Value = serde_json::from_str(&out.summary_json).unwrap();
    let mut v2 = v.clone();
    v2.as_object_mut().unwrap().remove("scenario");
    v2.as_object_mut().unwrap().remove("zones");
    v2.as_object_mut().unwrap().remove("cpus");
    println!("{}", serde_json::to_string_pretty(&v2).unwrap());
    for (n, t) in &out.extra_files {
        println!("== {n}\n{t}");
    }
    for l in out.vmstat.lines() {
        if l.starts_with("nr_slab")
            || l.starts_with("slabs_")
            || l.contains("inodesteal")
            || l.starts_with("allocstall_")
            || l.starts_with("drop_")
            || l.starts_with("nr_free_pages")
            || l.starts_with("oom")
        {
            println!("{l}");
        }
    }
    eprintln!("wall {:?}, events {}", t.elapsed(), out.events);
}
