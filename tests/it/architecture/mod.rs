//! The layers of `src/`, checked from the source: the module graph is built from every
//! `use crate::...` line and every `crate::...` path, and each rule below prints the imports
//! that break it (file, line, path), so a failure says what to fix.
//!
//! The layers (docs: `cli/mod.rs`, `ops/mod.rs`, `domain/mod.rs`): the command line calls
//! operations, operations call the domain and the stores, a store reads the domain, the
//! configuration and the errors; the domain and the configuration import no store. Plain file
//! reading and a small lexer (comments and string literals blanked), no parser crate.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

mod lexer;
use lexer::{blank_comments_and_strings, crate_paths, expand_use, is_ident, line_of, use_declarations};

/// The top-level parts of the crate.
const PARTS: &[&str] = &[
    "cli",
    "ops",
    "domain",
    "redis",
    "mysql",
    "amqp",
    "config",
    "error",
    "files",
    "output",
    "interrupt",
];

/// The store folders and the client crate each one alone may name.
const STORES: &[(&str, &str)] = &[("redis", "redis"), ("mysql", "mysql"), ("amqp", "amiquip")];

/// What each part may import besides itself. `error` and `interrupt` are leaves (they import
/// nothing of the project): every layer may report an error, and a store's long wait must
/// stop on Ctrl-C, so both are allowed wherever a layer can fail or wait. `files` (a file
/// written whole or not at all) is a leaf too, for the commands and operations that write files.
fn allowed(part: &str) -> &'static [&'static str] {
    match part {
        "cli" => &["ops", "domain", "config", "error", "files", "output", "interrupt"],
        "ops" => &[
            "domain",
            "redis",
            "mysql",
            "amqp",
            "config",
            "error",
            "files",
            "interrupt",
        ],
        "redis" | "mysql" | "amqp" => &["domain", "config", "error", "interrupt"],
        "domain" => &["error"],
        "config" => &["domain", "error"],
        "error" | "files" | "output" | "interrupt" => &[],
        other => panic!("no rule for part {other}"),
    }
}

/// One reference from a file to a module of the crate.
#[derive(Debug, Clone)]
struct Edge {
    file: String,
    line: usize,
    path: String,
    from: String,
    to: String,
}

impl std::fmt::Display for Edge {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}: {}", self.file, self.line, self.path)
    }
}

/// A source file of `src/`, with its comments and string literals blanked out.
struct Source {
    /// Relative to the package, `src/cli/relay.rs`.
    file: String,
    /// `cli`, `ops`, ... (`lib` and `main` for the crate roots).
    part: String,
    /// The module path of the file inside the crate (`["cli", "relay"]`).
    module: Vec<String>,
    code: String,
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("a directory entry").path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|x| x == "rs") {
            out.push(path);
        }
    }
}

fn sources() -> Vec<Source> {
    let src = root().join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    files
        .into_iter()
        .map(|path| {
            let rel = path.strip_prefix(&src).expect("under src");
            let mut module: Vec<String> = rel
                .with_extension("")
                .components()
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            if module.last().is_some_and(|m| m == "mod" || m == "lib" || m == "main") {
                let last = module.pop().expect("a last component");
                if module.is_empty() {
                    module.push(last);
                }
            }
            let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            Source {
                file: format!("src/{}", rel.to_string_lossy()),
                part: module[0].clone(),
                module: if module[0] == "lib" { Vec::new() } else { module },
                code: blank_comments_and_strings(&text),
            }
        })
        .collect()
}

/// A path of the crate as the whole module path it names, resolved against the file's module
/// for `self` and `super`; `None` for an outside crate or a name local to the file.
fn resolved(src: &Source, path: &str) -> Option<Vec<String>> {
    let segs: Vec<&str> = path.split("::").collect();
    let mut module = src.module.clone();
    let rest: &[&str] = match segs[0] {
        "crate" | "$crate" => {
            module.clear();
            &segs[1..]
        }
        "self" => &segs[1..],
        "super" => {
            let mut k = 0;
            while segs.get(k) == Some(&"super") {
                module.pop();
                k += 1;
            }
            &segs[k..]
        }
        _ => return None,
    };
    module.extend(rest.iter().map(|s| s.to_string()));
    Some(module)
}

/// The part a path of the crate reaches (see [`resolved`]).
fn target(src: &Source, path: &str, macros: &BTreeMap<String, String>) -> Option<Result<String, String>> {
    let module = resolved(src, path)?;
    let first = module.first()?;
    if PARTS.contains(&first.as_str()) {
        Some(Ok(first.clone()))
    } else if let Some(part) = macros.get(first) {
        Some(Ok(part.clone()))
    } else {
        Some(Err(first.clone()))
    }
}

/// Every path a file names, with where: its `use` lines expanded, and its `crate::` paths.
fn references(s: &Source) -> Vec<(usize, String)> {
    let (uses, rest) = use_declarations(&s.code);
    let mut refs: Vec<(usize, String)> = uses
        .into_iter()
        .flat_map(|(at, tree)| expand_use(&tree).into_iter().map(move |p| (at, p)))
        .collect();
    refs.extend(crate_paths(&rest));
    refs
}

/// The project's module graph, as every reference from one part to another (a part's
/// references to itself are left out); paths that reach no known part are returned apart.
fn graph() -> (Vec<Edge>, Vec<String>) {
    let sources = sources();
    // `#[macro_export]` macros live at the crate root: `crate::outln!` is output's.
    let mut macros = BTreeMap::new();
    for s in &sources {
        let mut from = 0;
        while let Some(k) = s.code[from..].find("#[macro_export]") {
            let at = from + k;
            from = at + 1;
            if let Some(m) = s.code[at..].find("macro_rules!") {
                let name: String = s.code[at + m + 12..]
                    .trim_start()
                    .chars()
                    .take_while(|&c| is_ident(c))
                    .collect();
                macros.insert(name, s.part.clone());
            }
        }
    }
    let mut edges = Vec::new();
    let mut unknown = Vec::new();
    for s in sources.iter().filter(|s| PARTS.contains(&s.part.as_str())) {
        for (at, path) in references(s) {
            match target(s, &path, &macros) {
                Some(Ok(to)) if to != s.part => edges.push(Edge {
                    file: s.file.clone(),
                    line: line_of(&s.code, at),
                    path,
                    from: s.part.clone(),
                    to,
                }),
                Some(Err(name)) => unknown.push(format!(
                    "{}:{}: {path} (no part named {name})",
                    s.file,
                    line_of(&s.code, at)
                )),
                _ => {}
            }
        }
    }
    (edges, unknown)
}

fn fail_with(rule: &str, violations: &[String]) {
    assert!(
        violations.is_empty(),
        "{rule}: {} violation(s)\n{}",
        violations.len(),
        violations.join("\n")
    );
}

#[test]
fn every_crate_path_reaches_a_known_part() {
    fail_with(
        "a crate:: path that reaches no part (a new top-level module needs a rule here)",
        &graph().1,
    );
}

#[test]
fn no_circle_between_the_parts() {
    let (edges, _) = graph();
    let mut next: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    for e in &edges {
        next.entry(&e.from).or_default().insert(&e.to);
    }
    // Two parts are on one circle when each reaches the other.
    let reaches = |a: &str, b: &str| {
        let mut seen = BTreeSet::new();
        let mut todo = vec![a];
        while let Some(p) = todo.pop() {
            for &q in next.get(p).into_iter().flatten() {
                if q == b {
                    return true;
                }
                if seen.insert(q) {
                    todo.push(q);
                }
            }
        }
        false
    };
    let violations: Vec<String> = edges
        .iter()
        .filter(|e| reaches(&e.to, &e.from))
        .map(|e| format!("{e}  ({} -> {}, and {} reaches {} back)", e.from, e.to, e.to, e.from))
        .collect();
    fail_with("an import on a circle between the parts", &violations);
}

/// The module a path of the crate reaches, as the longest module of `modules` (a file of
/// `src/`) its resolved path starts with; `None` for an outside crate, a local name, the crate
/// root or a macro.
fn module_reached(src: &Source, path: &str, modules: &BTreeSet<Vec<String>>) -> Option<Vec<String>> {
    let module = resolved(src, path)?;
    (1..=module.len())
        .rev()
        .map(|n| module[..n].to_vec())
        .find(|m| modules.contains(m))
}

/// Every reference from one file of `src/` to another, as (from, to) module paths.
fn file_edges() -> Vec<(Vec<String>, Vec<String>, String)> {
    let sources = sources();
    let modules: BTreeSet<Vec<String>> = sources.iter().map(|s| s.module.clone()).collect();
    let mut edges = Vec::new();
    for s in sources.iter().filter(|s| PARTS.contains(&s.part.as_str())) {
        for (at, path) in references(s) {
            if let Some(to) = module_reached(s, &path, &modules) {
                if to != s.module {
                    let seen = format!("{}:{}: {path}", s.file, line_of(&s.code, at));
                    edges.push((s.module.clone(), to, seen));
                }
            }
        }
    }
    edges
}

#[test]
fn no_circle_between_files_or_folders_at_any_level() {
    // At every folder, its children (files and sub-folders) import each other without a circle:
    // an import from a/b/c.rs to a/d/e.rs is, inside a/, an arrow from b to d. A folder's
    // mod.rs is its face: what it defines, its own children may use (`super::Run`), so an
    // arrow from a module to one that contains it is not counted.
    let mut arrows: BTreeMap<Vec<String>, BTreeMap<String, BTreeMap<String, String>>> = BTreeMap::new();
    for (from, to, seen) in file_edges() {
        let common = from.iter().zip(&to).take_while(|(a, b)| a == b).count();
        if common == from.len() || common == to.len() {
            continue; // one contains the other
        }
        arrows
            .entry(from[..common].to_vec())
            .or_default()
            .entry(from[common].clone())
            .or_default()
            .entry(to[common].clone())
            .or_insert(seen);
    }
    let mut violations = Vec::new();
    for (folder, next) in &arrows {
        let reaches = |a: &str, b: &str| {
            let mut seen = BTreeSet::new();
            let mut todo = vec![a.to_string()];
            while let Some(p) = todo.pop() {
                for q in next.get(&p).into_iter().flat_map(|m| m.keys()) {
                    if q == b {
                        return true;
                    }
                    if seen.insert(q.clone()) {
                        todo.push(q.clone());
                    }
                }
            }
            false
        };
        for (a, tos) in next {
            for (b, seen) in tos {
                if reaches(b, a) {
                    violations.push(format!("in src/{}: {a} -> {b} and back ({seen})", folder.join("/")));
                }
            }
        }
    }
    fail_with("an import on a circle", &violations);
}

#[test]
fn no_folder_holds_more_than_twenty_files_side_by_side() {
    fn walk(dir: &Path, out: &mut Vec<String>) {
        let entries: Vec<PathBuf> = std::fs::read_dir(dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .map(|e| e.expect("a directory entry").path())
            .collect();
        let files = entries.iter().filter(|p| p.is_file()).count();
        if files > 20 {
            out.push(format!("{}: {files} files", dir.display()));
        }
        for sub in entries.iter().filter(|p| p.is_dir()) {
            walk(sub, out);
        }
    }
    let mut violations = Vec::new();
    walk(&root().join("src"), &mut violations);
    fail_with("a folder too full to read (group its files by family)", &violations);
}

#[test]
fn each_part_imports_only_the_layers_below_it() {
    let (edges, _) = graph();
    let violations: Vec<String> = edges
        .iter()
        .filter(|e| !allowed(&e.from).contains(&e.to.as_str()))
        .map(|e| format!("{e}  ({} may not import {})", e.from, e.to))
        .collect();
    fail_with("an import against the layers", &violations);
}

#[test]
fn nothing_imports_the_command_line_and_only_commands_import_operations() {
    let (edges, _) = graph();
    let violations: Vec<String> = edges
        .iter()
        .filter(|e| e.to == "cli" || (e.to == "ops" && e.from != "cli"))
        .map(|e| format!("{e}  ({} imports {})", e.from, e.to))
        .collect();
    fail_with("an upward import", &violations);
}

#[test]
fn each_store_crate_is_named_only_in_its_folder() {
    let mut violations = Vec::new();
    for s in sources() {
        for &(folder, krate) in STORES {
            if s.part == folder {
                continue;
            }
            let needle = format!("{krate}::");
            let bytes = s.code.as_bytes();
            let mut from = 0;
            while let Some(k) = s.code[from..].find(&needle) {
                let at = from + k;
                from = at + needle.len();
                // `crate::redis::x` and `attendance::mysql::x` are the project's own modules.
                let own = at >= 2 && &s.code[at - 2..at] == "::";
                if own || (at > 0 && (is_ident(bytes[at - 1] as char) || bytes[at - 1] == b'$')) {
                    continue;
                }
                let mut path: String = s.code[at..].chars().take_while(|&c| is_ident(c) || c == ':').collect();
                if s.code[at + path.len()..].starts_with('{') {
                    // A group: `mysql::{Pool, TxOpts}`, shown on one line.
                    let group = &s.code[at + path.len()..];
                    let group = &group[..group.find('}').map_or(group.len(), |k| k + 1)];
                    path.push_str(&group.split_whitespace().collect::<Vec<_>>().join(" "));
                }
                violations.push(format!(
                    "{}:{}: {path}  (the {krate} crate outside src/{folder}/)",
                    s.file,
                    line_of(&s.code, at)
                ));
            }
        }
    }
    fail_with("a store's crate named outside its folder", &violations);
}

#[test]
fn no_command_imports_a_store() {
    let (edges, _) = graph();
    let violations: Vec<String> = edges
        .iter()
        .filter(|e| e.from == "cli" && STORES.iter().any(|&(folder, _)| e.to == folder))
        .map(|e| format!("{e}  (a command reaches a store through an operation)"))
        .collect();
    fail_with("a command that imports a store", &violations);
}

#[test]
fn nothing_in_src_writes_to_stderr_but_through_output() {
    // `eprintln!` panics on a closed stderr (`attendance ... 2>&1 | head -c 100`): every line
    // goes through `output::stderr_line`, which ignores that. Tests and benchmarks may print.
    let mut violations = Vec::new();
    for s in sources() {
        for needle in ["eprintln!", "eprint!"] {
            for (at, _) in s.code.match_indices(needle) {
                violations.push(format!(
                    "{}:{}: {needle}  (use output::stderr_line)",
                    s.file,
                    line_of(&s.code, at)
                ));
            }
        }
    }
    fail_with("a direct write to stderr", &violations);
}
