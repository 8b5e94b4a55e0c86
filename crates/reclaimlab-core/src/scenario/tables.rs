//! The kinds of nested table ([`Child`]): how each is found in the file, stored in its parent,
//! printed and documented. The sections themselves know nothing of where they are used, which
//! is what lets a later table kind (`[[guest]]`) embed the machine sections again.

use toml_edit::{Item, Value};

use super::docs::doc_section;
use super::parse::{parse_section, Ctx, Res, Table};
use super::schema::{Array, Child, Embedded, Optional};
use super::show::{show_section, Writer};
use super::source::join;
use super::Scenario;

/// "workload[1].anon" -> "workload.anon": a path as a header names it.
pub(super) fn plain(path: &str) -> String {
    path.split('.')
        .map(|p| p.split('[').next().unwrap_or(p))
        .collect::<Vec<_>>()
        .join(".")
}

fn sub<'a>(cx: &Ctx, parent: &Table<'a>, name: &str) -> Res<Option<Table<'a>>> {
    let header = format!("[{}]", join(&plain(&parent.path), name));
    parent.sub(cx, name, &header)
}

impl<P, C: Default> Child<P> for Embedded<P, C> {
    fn name(&self) -> &'static str {
        self.section.name
    }
    fn parse(&self, cx: &Ctx, parent: &Table, out: &mut P) -> Res<()> {
        match sub(cx, parent, self.section.name)? {
            Some(t) => parse_section(cx, &t, self.section, (self.get_mut)(out)),
            None => Ok(()),
        }
    }
    fn show(&self, w: &mut Writer, parent: &P, root: &Scenario, prefix: &str) {
        let path = join(prefix, self.section.name);
        w.table(&path);
        show_section(w, self.section, (self.get)(parent), root, &path);
    }
    fn doc(&self, out: &mut String, prefix: &str) {
        let path = join(prefix, self.section.name);
        doc_section(out, self.section, &format!("[{path}]"), "", &path);
    }
}

impl<P, C: Default> Child<P> for Optional<P, C> {
    fn name(&self) -> &'static str {
        self.section.name
    }
    fn parse(&self, cx: &Ctx, parent: &Table, out: &mut P) -> Res<()> {
        if let Some(t) = sub(cx, parent, self.section.name)? {
            let mut c = C::default();
            parse_section(cx, &t, self.section, &mut c)?;
            (self.put)(out, c);
        }
        Ok(())
    }
    fn show(&self, w: &mut Writer, parent: &P, root: &Scenario, prefix: &str) {
        if let Some(c) = (self.get)(parent) {
            let path = join(prefix, self.section.name);
            w.table(&path);
            show_section(w, self.section, c, root, &path);
        }
    }
    fn doc(&self, out: &mut String, prefix: &str) {
        let path = join(prefix, self.section.name);
        doc_section(out, self.section, &format!("[{path}]"), "Optional.", &path);
    }
}

impl<P, C: Default> Child<P> for Array<P, C> {
    fn name(&self) -> &'static str {
        self.section.name
    }
    fn parse(&self, cx: &Ctx, parent: &Table, out: &mut P) -> Res<()> {
        let name = self.section.name;
        let header = format!("[[{}]]", join(&plain(&parent.path), name));
        let (missing, add) = self.missing;
        let Some(f) = parent.field(name) else {
            if (self.optional_if)(out) {
                return Ok(());
            }
            let path = join(&parent.path, name);
            return Err(cx.error(parent.at, &path, missing).with_help(add));
        };
        // Both `[[workload]]` headers and `workload = [{ .. }, ..]` are arrays of tables.
        let mut tables: Vec<Table> = Vec::new();
        match f.item {
            Item::ArrayOfTables(a) => {
                for (i, t) in a.iter().enumerate() {
                    tables.push(Table {
                        t,
                        path: format!("{}[{i}]", f.path),
                        header: header.clone(),
                        at: t.span().map_or(f.key_at, |r| r.start),
                    });
                }
            }
            Item::Value(Value::Array(arr)) => {
                for (i, v) in arr.iter().enumerate() {
                    let at = v.span().map_or(f.val_at, |r| r.start);
                    let path = format!("{}[{i}]", f.path);
                    let Value::InlineTable(t) = v else {
                        return Err(cx
                            .error(
                                at,
                                &path,
                                format!("expected a {name} table, found {}", v.type_name()),
                            )
                            .with_help(format!("write each {name} as {{ key = value, .. }}")));
                    };
                    tables.push(Table {
                        t,
                        path,
                        header: header.clone(),
                        at,
                    });
                }
            }
            Item::Table(_) => {
                return Err(cx
                    .error(
                        f.val_at,
                        &f.path,
                        format!("`{name}` must be an array of tables"),
                    )
                    .with_help(format!(
                        "write {header} (double brackets) above each {name}"
                    )));
            }
            _ => {
                return Err(f
                    .type_err(cx, &format!("{header} tables"))
                    .with_help(format!(
                        "write {header} (double brackets) above each {name}"
                    )))
            }
        }
        if tables.is_empty() && !(self.optional_if)(out) {
            return Err(f.err(cx, missing).with_help(add));
        }
        let items = (self.get_mut)(out);
        for t in &tables {
            let mut c = C::default();
            parse_section(cx, t, self.section, &mut c)?;
            if let Some(u) = &self.unique {
                let v = (u.value)(&c);
                if items.iter().any(|o| (u.value)(o) == v) {
                    let kf = t.field(u.key).expect("a unique key is required");
                    return Err(kf
                        .err(cx, format!("duplicate {name} {} \"{v}\"", u.key))
                        .with_help(u.help));
                }
            }
            items.push(c);
        }
        Ok(())
    }
    fn show(&self, w: &mut Writer, parent: &P, root: &Scenario, prefix: &str) {
        let path = join(prefix, self.section.name);
        for c in (self.get)(parent) {
            w.array_table(&path);
            show_section(w, self.section, c, root, &path);
        }
    }
    fn doc(&self, out: &mut String, prefix: &str) {
        let path = join(prefix, self.section.name);
        let note = format!("An array of tables, each under its own `[[{path}]]`.");
        doc_section(out, self.section, &format!("[[{path}]]"), &note, &path);
    }
}
