//! `attendance org import|generate`: the roster.

use anyhow::Result;

use crate::cli::Ctx;
use crate::cli::OrgCommand;
use crate::domain::people::roster_plan::{Listed, LISTED_IDS};
use crate::domain::text::plural;
use crate::domain::{people::roster, people::roster_list};
use crate::error::Error;
use crate::ops;
use crate::ops::people::org::{ImportOptions, Imported, Who};

pub(crate) fn run(ctx: &Ctx, cmd: OrgCommand) -> Result<()> {
    match cmd {
        OrgCommand::Import {
            file,
            errors,
            full,
            end_date,
            dry_run,
            output,
        } => {
            // Validate the whole file before touching any store.
            let rows = roster::read(crate::cli::input(&file)?)?
                .map_err(|bad| crate::cli::refused_file(errors.as_deref(), &bad, roster::rejection(&bad)))?;
            let opts = ImportOptions {
                full,
                end_date,
                dry_run,
            };
            let imported = ops::people::org::import(&ctx.cfg, &rows, opts)?;
            for line in said(&imported) {
                ctx.say(line);
            }
            if !dry_run {
                // After the commit: a broker away costs a warning, never the import.
                let declared = ops::relay::queues::declare_ahead(&ctx.cfg, &imported.new_departments);
                crate::cli::queues::report_declared(ctx, "org import", &declared);
            }
            if output.json {
                crate::output::json(&imported)?;
            }
            Ok(())
        }
        OrgCommand::List { dept, inactive, output } => {
            if let Some(d) = &dept {
                roster::check_id("department id", d)?;
            }
            let who = if inactive { Who::Left } else { Who::Current };
            let (today, entries) = ops::people::org::list(&ctx.cfg, dept.as_deref(), who)?;
            if output.json {
                return crate::output::json(&entries);
            }
            let day = |d: Option<chrono::NaiveDate>| d.map(|d| d.to_string()).unwrap_or_default();
            let rows = entries
                .iter()
                .map(|e| {
                    vec![
                        e.employee_id.clone(),
                        e.name.clone(),
                        e.department_id.clone(),
                        e.department_name.clone(),
                        e.role.to_string(),
                        e.login.clone().unwrap_or_default(),
                        day(e.start_date),
                        if e.removed {
                            "off the roster".into()
                        } else {
                            day(e.end_date)
                        },
                    ]
                })
                .collect();
            crate::cli::table(
                &[
                    "employee",
                    "name",
                    "department",
                    "department name",
                    "role",
                    "login",
                    "start",
                    "end",
                ],
                rows,
            )?;
            let what = if inactive { "who left" } else { "employed or starting" };
            ctx.say(format!("{} employee(s) {what} as of {today}", entries.len()));
            Ok(())
        }
        OrgCommand::Export { output } => {
            let entries = ops::people::org::export(&ctx.cfg)?;
            let written = entries.iter().filter(|e| !e.removed).count();
            match output {
                Some(path) => {
                    crate::files::write_with(&path, |w| roster_list::write_csv(w, &entries))?;
                    ctx.say(format!("wrote {written} employees to {}", path.display()));
                }
                None => roster_list::write_csv(std::io::stdout().lock(), &entries)?,
            }
            Ok(())
        }
        OrgCommand::Generate {
            employees,
            departments,
            seed,
            output,
        } => {
            if employees == 0 || departments == 0 || departments > employees {
                return Err(Error::input(
                    "--employees and --departments must be at least 1, with no more departments than employees",
                )
                .into());
            }
            match output {
                Some(path) => {
                    crate::files::write_with(&path, |w| roster::generate(w, employees, departments, seed))?;
                    ctx.say(format!(
                        "wrote {employees} employees in {departments} departments to {}",
                        path.display()
                    ));
                }
                None => roster::generate(std::io::stdout().lock(), employees, departments, seed)?,
            }
            Ok(())
        }
    }
}

/// What an import did, for people: one line of counts, then the small lists by name.
fn said(i: &Imported) -> Vec<String> {
    let (r, s) = (&i.report, &i.summary);
    let verb = if i.dry_run {
        "dry run, nothing written: would import"
    } else {
        "imported"
    };
    let mut lines = vec![format!(
        "{verb} {} in {} ({}): {} new, {} changed, {} moved, {} reactivated, {} deactivated, {} unchanged",
        plural(r.employees, "employee"),
        plural(r.departments, "department"),
        plural(r.supervisors, "supervisor"),
        s.new.count,
        s.changed.count,
        s.moved.count,
        s.reactivated.count,
        s.deactivated.count,
        s.unchanged
    )];
    let listed = |what: &str, l: &Listed| {
        let more = l.count.saturating_sub(l.ids.len() as u64);
        let tail = if more > 0 {
            format!(" (and {more} more)")
        } else {
            String::new()
        };
        format!("{what}: {}{tail}", l.ids.join(", "))
    };
    for (what, l) in [("new", &s.new), ("moved", &s.moved), ("reactivated", &s.reactivated)] {
        if l.count > 0 && l.count <= LISTED_IDS as u64 {
            lines.push(listed(what, l));
        }
    }
    if s.changed.count + s.reactivated.count > 0 {
        let fields: Vec<String> = s.changed.fields.iter().map(|(f, n)| format!("{f} {n}")).collect();
        let who = Listed {
            count: s.changed.count,
            ids: s.changed.ids.clone(),
        };
        if s.changed.count > 0 {
            lines.push(format!("{} (fields: {})", listed("changed", &who), fields.join(", ")));
        } else {
            lines.push(format!("fields changed: {}", fields.join(", ")));
        }
    }
    if s.deactivated.count > 0 {
        let end = i.end_date.map(|d| d.to_string()).unwrap_or_default();
        lines.push(format!("{} (end date {end})", listed("deactivated", &s.deactivated)));
    }
    if !s.departments_new.is_empty() {
        lines.push(format!("new departments: {}", s.departments_new.join(", ")));
    }
    if !s.departments_renamed.is_empty() {
        lines.push(format!("renamed departments: {}", s.departments_renamed.join(", ")));
    }
    if !r.departments_without_supervisor.is_empty() {
        lines.push(format!(
            "warning: {} department(s) have no supervisor: {}",
            r.departments_without_supervisor.len(),
            r.departments_without_supervisor.join(", ")
        ));
    }
    let m = &i.moves;
    if m.employees > 0 {
        lines.push(format!(
            "moved {} employee(s) to their new department with {} day(s) of theirs ({} with punches)",
            m.employees, m.days, m.days_with_punches
        ));
    }
    lines
}
