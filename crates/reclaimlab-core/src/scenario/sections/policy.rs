//! `[policy]`: one key per switch of the policy registry (`crate::policy`), its variants the
//! registry's, defaults and presets from `Choices::resolve`. Nothing here names a switch, so a
//! switch added to the registry is a scenario key, printed and documented, with no change here.

use std::fmt::Write as _;

use crate::policy::{switches, Choices};
use crate::scenario::error::Res;
use crate::scenario::schema::Child;
use crate::scenario::source::{Ctx, Table};
use crate::scenario::writer::{string, Writer};
use crate::scenario::{PolicyConfig, Scenario};

/// The `[policy]` table of a machine: the scenario's host, or a `[[guest]]`.
pub struct PolicyTable<P: 'static> {
    pub get: fn(&P) -> &PolicyConfig,
    pub get_mut: fn(&mut P) -> &mut PolicyConfig,
}

impl<P> Child<P> for PolicyTable<P> {
    fn name(&self) -> &'static str {
        "policy"
    }

    fn parse(&self, cx: &Ctx, parent: &Table, out: &mut P) -> Res<()> {
        let header = format!(
            "[{}]",
            crate::scenario::source::join(&crate::scenario::tables::plain(&parent.path), "policy")
        );
        let Some(t) = parent.sub(cx, "policy", &header)? else {
            return Ok(());
        };
        let keys: Vec<&str> = switches().iter().map(|s| s.name()).collect();
        t.check_keys(cx, &keys)?;
        let mut explicit = Vec::new();
        for s in switches() {
            if let Some(f) = t.field(s.name()) {
                let names: Vec<&'static str> = s.variants().iter().map(|v| v.name).collect();
                let name = f
                    .choice(cx, &names, &format!("{} policy", s.name()))
                    .map_err(|e| match e.help {
                        Some(_) => e,
                        None => e.with_help(format!(
                            "`reclaimlab policies` lists them; the default is {} = \"{}\"",
                            s.name(),
                            s.default()
                        )),
                    })?;
                explicit.push((s.name(), name));
            }
        }
        (self.get_mut)(out).choices = Choices::resolve(&explicit);
        Ok(())
    }

    fn show(&self, w: &mut Writer, parent: &P, _root: &Scenario, prefix: &str) {
        w.table(&crate::scenario::source::join(prefix, "policy"));
        for (sw, (name, variant, _)) in switches()
            .into_iter()
            .zip(&(self.get)(parent).choices.entries)
        {
            // The same comment whether the value was given or preset, so the output round-trips.
            let doc = match sw.preset() {
                Some(p) => format!("{}; default follows {}", sw.summary(), p.follows),
                None => sw.summary().to_string(),
            };
            w.kv(name, string(variant), &doc);
        }
    }

    fn doc(&self, out: &mut String, prefix: &str) {
        if !prefix.is_empty() {
            // A machine's table below the top level lists the same switches as `[policy]`.
            let _ = writeln!(
                out,
                "## `[{}]`\n\nThe guest kernel's policy variants: the same switches and \
                 variants as the top-level `[policy]` table.\n",
                crate::scenario::source::join(prefix, "policy")
            );
            return;
        }
        let _ = writeln!(
            out,
            "## `[policy]`\n\nThe variant of each policy switch of the registry (`crate::policy`, \
             `reclaimlab policies`). A switch whose default follows another switch takes its \
             preset unless named here.\n"
        );
        for s in switches() {
            let default = match s.preset() {
                Some(p) => format!("follows `{}`: {}", p.follows, p.doc),
                None => format!("`\"{}\"`", s.default()),
            };
            let _ = writeln!(
                out,
                "### `{}`\n\n{} ({}). Default: {}.\n\n| Variant | Kernel | Behaviour |\n|---|---|---|",
                s.name(),
                s.summary(),
                s.spec(),
                default
            );
            for v in s.variants() {
                let _ = writeln!(
                    out,
                    "| `\"{}\"` | {} | {} |",
                    v.name,
                    v.kernel,
                    v.summary.replace('|', "\\|")
                );
            }
            out.push('\n');
        }
    }
}
