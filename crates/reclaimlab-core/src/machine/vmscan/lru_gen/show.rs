//! What the multi-generational LRU shows of itself: `/sys/kernel/debug/lru_gen` and
//! `lru_gen_full`, and the checks of its state the invariant check makes.

use super::*;

impl Machine {
    /// The debugfs file `/sys/kernel/debug/lru_gen` of this node: the root's block, then each
    /// memcg's, with the cgroups' paths.
    pub fn lru_gen_debugfs(&self) -> String {
        self.lru_gen_debugfs_text(false)
    }

    /// `/sys/kernel/debug/lru_gen_full`: the same blocks with the last four generations, the
    /// tiers' refault statistics and the walk's.
    pub fn lru_gen_debugfs_full(&self) -> String {
        self.lru_gen_debugfs_text(true)
    }

    fn lru_gen_debugfs_text(&self, full: bool) -> String {
        use crate::machine::lru_gen::debugfs::{memcg_line, node_block};
        let node = self.lru_gen.as_deref().expect("lru_gen is on");
        let now = jiffies(self.now);
        let mut out = String::new();
        match &self.memcg {
            None => {
                memcg_line(&mut out, 1, "/");
                node_block(&mut out, &node.lruvecs[0].gen, self.nid, now, full);
            }
            Some(mc) => {
                for m in mc.memory.preorder(0) {
                    let i = m as usize;
                    let path = format!("/{}", mc.names[i].trim_start_matches('/'));
                    // The kernel's memcg ids start at 1 for the root.
                    memcg_line(&mut out, m + 1, &path);
                    let st = node
                        .lruvecs
                        .get(i)
                        .map_or_else(|| LruGen::new(now), |l| l.gen.clone());
                    node_block(&mut out, &st, self.nid, now, full);
                }
            }
        }
        out
    }

    /// Checks of the generation state (the invariant check calls it): every folio linked on a
    /// list says so (`FolioGen::list_gen`) and has a generation, each generation counts the
    /// folios whose field names it, the sequence numbers are valid, and the active/inactive
    /// gauges are what the counts imply.
    pub fn lru_gen_check(&self) -> Result<(), String> {
        let Some(node) = self.lru_gen.as_deref() else {
            return Ok(());
        };
        for (id, st) in node.lruvecs.iter().enumerate() {
            if !st.gen.seq_is_valid() {
                return Err(format!(
                    "lru_gen lruvec {id}: max_seq {} min_seq {:?} is not a valid state",
                    st.gen.max_seq, st.gen.min_seq
                ));
            }
            // Each folio is linked on the list its list generation names; the counters count
            // the folios by their generation field (a promoted folio's is younger than its list's).
            let mut members = [[0i64; ANON_AND_FILE]; NR_GENS];
            for (gi, per_type) in st.lists.iter().enumerate() {
                for (t, list) in per_type.iter().enumerate() {
                    for pfn in list.iter_from_tail(&self.frames) {
                        let g = node.folios.get(pfn);
                        let Some(field) = g.gen().filter(|_| g.list_gen() == Some(gi)) else {
                            return Err(format!(
                                "lru_gen lruvec {id}: frame {pfn} on generation {gi}'s list says {:?} (linked on {:?})",
                                g.gen(),
                                g.list_gen()
                            ));
                        };
                        members[field][t] += 1;
                    }
                }
            }
            for (gi, per_type) in members.iter().enumerate() {
                for (t, &n) in per_type.iter().enumerate() {
                    let count: i64 = st.gen.nr_pages[gi][t].iter().sum();
                    if count != n {
                        return Err(format!(
                            "lru_gen lruvec {id}: generation {gi} type {t} counts {count} pages, {n} folios are of it"
                        ));
                    }
                }
            }
            let gauge = st.gen.recount_gauge();
            let lv = match &self.memcg {
                None => &self.lruvec,
                Some(mc) => mc.lruvec(id as u16, &self.lruvec),
            };
            if lv.zone_size != gauge {
                return Err(format!(
                    "lru_gen lruvec {id}: active/inactive gauges {:?} but the generations imply {:?}",
                    lv.zone_size, gauge
                ));
            }
        }
        Ok(())
    }
}
