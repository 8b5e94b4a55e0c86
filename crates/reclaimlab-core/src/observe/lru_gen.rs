//! The multi-generational LRU in the time series (issue 35): each type's pages by generation,
//! counted from the youngest (`young0` is `max_seq`, `young3` the fourth youngest, 0 when the
//! type has fewer generations), summed over the lruvecs (the node's, or every memcg's, each by
//! its own `max_seq`), and the root lruvec's sequence numbers. No columns without it, so the
//! two-list LRU's time series is unchanged. Also what the writes to
//! `/sys/kernel/debug/lru_gen` did, for summary.json.

use crate::machine::lru_gen::mmzone::{ANON_AND_FILE, NR_GENS};
use crate::machine::Machine;

const TYPES: [&str; ANON_AND_FILE] = ["anon", "file"];

/// The columns, when the machine runs the multi-generational LRU.
pub fn timeseries_names(node: &Machine) -> Vec<String> {
    if node.lru_gen.is_none() {
        return Vec::new();
    }
    let mut names = vec![
        "lru_gen_max_seq".to_string(),
        "lru_gen_min_seq_anon".to_string(),
        "lru_gen_min_seq_file".to_string(),
    ];
    for t in TYPES {
        names.extend((0..NR_GENS).map(|k| format!("lru_gen_{t}_young{k}")));
    }
    names
}

/// Their values now, in [`timeseries_names`]' order.
pub fn timeseries_values(node: &Machine, vals: &mut Vec<u64>) {
    let Some(lg) = node.lru_gen.as_deref() else {
        return;
    };
    let root = &lg.lruvecs[0].gen;
    vals.extend([root.max_seq, root.min_seq[0], root.min_seq[1]]);
    for t in 0..ANON_AND_FILE {
        for k in 0..NR_GENS as u64 {
            let pages: u64 = lg
                .lruvecs
                .iter()
                .map(|l| &l.gen)
                .filter(|g| g.max_seq >= g.min_seq[t] + k)
                .map(|g| g.gen_size(g.max_seq - k, t))
                .sum();
            vals.push(pages);
        }
    }
}

/// summary.json's `lru_gen_writes`: the writes to `/sys/kernel/debug/lru_gen` (a
/// `[workload.lru_gen]` writer's), those that ended in an error, the commands that ran, the
/// generations they made and the pages they reclaimed; `None` when nothing wrote.
pub fn debugfs_writes(node: &Machine) -> Option<serde_json::Value> {
    let w = node.lru_gen.as_deref()?.debugfs;
    (w.writes > 0).then(|| {
        serde_json::json!({
            "writes": w.writes,
            "einval": w.einval,
            "erange": w.erange,
            "commands": w.commands,
            "aged": w.aged,
            "reclaimed": w.reclaimed,
        })
    })
}
