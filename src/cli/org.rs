//! `attendance org import|generate`: the roster.

use anyhow::Result;

use super::Ctx;
use crate::cli::OrgCommand;
use crate::domain::roster;
use crate::domain::text::plural;
use crate::error::Error;
use crate::ops;

pub(crate) fn run(ctx: &Ctx, cmd: OrgCommand) -> Result<()> {
    match cmd {
        OrgCommand::Import { file, errors, output } => {
            // Validate the whole file before touching any store.
            let rows = roster::read(super::input(&file)?)?
                .map_err(|bad| super::refused_file(errors.as_deref(), &bad, roster::rejection(&bad)))?;
            let imported = ops::org::import(&ctx.cfg, &rows)?;
            let report = &imported.report;
            ctx.say(format!(
                "imported {} in {} ({})",
                plural(report.employees, "employee"),
                plural(report.departments, "department"),
                plural(report.supervisors, "supervisor")
            ));
            if !report.departments_without_supervisor.is_empty() {
                ctx.say(format!(
                    "warning: {} department(s) have no supervisor: {}",
                    report.departments_without_supervisor.len(),
                    report.departments_without_supervisor.join(", ")
                ));
            }
            let m = &imported.moves;
            if m.employees > 0 {
                ctx.say(format!(
                    "moved {} employee(s) to their new department with {} day(s) of theirs ({} with punches)",
                    m.employees, m.days, m.days_with_punches
                ));
            }
            // After the commit: a broker away costs a warning, never the import.
            let declared = ops::queues::declare_ahead(&ctx.cfg, &imported.new_departments);
            super::queues::report_declared(ctx, "org import", &declared);
            if output.json {
                crate::output::json(&imported)?;
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
