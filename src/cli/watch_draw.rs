//! The drawing of `watch-dept`'s live screen: a pure function of [`ScreenState`] onto a ratatui
//! frame. Top down: the department, day and time; the counts; the absence alert, if one came;
//! the board's lists (the filter's), ids laid out in columns that fit the width, scrollable;
//! the latest events (another day's marked with its date); the keys.

use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Paragraph};
use ratatui::Frame;
use unicode_width::UnicodeWidthStr;

use super::watch_screen::{Drawn, Filter, ScreenState};
use crate::domain::summary::Summary;
use crate::domain::text::inert;
use crate::ops::watch::DepartmentView;

/// Spaces between two columns of ids.
const GAP: usize = 2;
/// Room kept for " and N more" when a line of names is cut short.
const MORE: usize = 14;
/// The keys, on the last line.
const KEYS: &str = "q quit | a all  l late  n not yet in  o out | \u{2191}\u{2193} j k PgUp PgDn scroll";

/// Draw `s` on `frame`; returns the list's geometry, which the key handler pages with.
pub(crate) fn draw(frame: &mut Frame, s: &ScreenState) -> Drawn {
    let area = frame.area();
    let alert_rows = if s.alert.is_some() { 2 } else { 0 };
    let notice_rows = u16::from(s.notice.is_some());
    // The events take what they need, up to a third of the screen, at least one line.
    let events = (s.recent.len().max(1) as u16).min((area.height / 3).max(1));
    let [head, counts, alert, list, recent, notice, keys] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Length(1),
        Constraint::Length(alert_rows),
        Constraint::Min(2),
        Constraint::Length(events + 1),
        Constraint::Length(notice_rows),
        Constraint::Length(1),
    ])
    .areas(area);
    let title = format!(
        "Department {} | {} | {} | filter: {}",
        inert(&s.dept),
        s.date,
        s.clock,
        s.filter.label()
    );
    frame.render_widget(
        Paragraph::new(title).style(Style::new().add_modifier(Modifier::BOLD)),
        head,
    );
    frame.render_widget(Paragraph::new(counts_line(s)), counts);
    if let Some(a) = &s.alert {
        let width = usize::from(alert.width);
        let lines = vec![
            Line::raw(fit(
                &format!(
                    "Absence alert {} ({} expected): still missing {}: ",
                    a.at,
                    a.expected,
                    a.missing.len()
                ),
                &a.missing,
                width,
            )),
            Line::raw(fit("Arrived late:  ", &a.arrived, width)),
        ];
        frame.render_widget(Paragraph::new(lines).style(Style::new().fg(Color::Yellow)), alert);
    }
    let drawn = draw_list(frame, s, list);
    let shown: Vec<Line> = if s.recent.is_empty() {
        vec![Line::raw("none yet")]
    } else {
        let skip = s.recent.len().saturating_sub(usize::from(events));
        s.recent
            .iter()
            .skip(skip)
            .map(|e| match e.day {
                Some(day) => Line::from(vec![
                    Span::styled(format!("({day}) "), Style::new().fg(Color::Yellow)),
                    Span::raw(e.text.as_str()),
                ]),
                None => Line::raw(e.text.as_str()),
            })
            .collect()
    };
    let block = Block::new().borders(Borders::TOP).title("Latest events");
    frame.render_widget(Paragraph::new(shown).block(block), recent);
    if let Some(n) = &s.notice {
        frame.render_widget(Paragraph::new(n.as_str()).style(Style::new().fg(Color::Yellow)), notice);
    }
    frame.render_widget(
        Paragraph::new(KEYS).style(Style::new().add_modifier(Modifier::DIM)),
        keys,
    );
    drawn
}

fn counts_line(s: &ScreenState) -> Line<'_> {
    match &s.board {
        Ok(v) => {
            let m = &v.summary;
            Line::raw(format!(
                "in {} (late {}) | not yet in {} | out {} (early {})",
                m.on_time.len() + m.late.len(),
                m.late.len(),
                m.not_in.len(),
                m.out.len(),
                m.early.len()
            ))
        }
        Err(why) => Line::styled(
            format!("Redis lost: {}; reconnecting", inert(why)),
            Style::new().fg(Color::Red),
        ),
    }
}

/// The filter's lists in `area`, scrolled; a title saying which rows show when not all fit.
fn draw_list(frame: &mut Frame, s: &ScreenState, area: Rect) -> Drawn {
    let rows = match &s.board {
        Ok(v) => list_rows(v, s.filter, usize::from(area.width)),
        Err(_) => Vec::new(),
    };
    let height = usize::from(area.height.saturating_sub(1));
    let first = s.scroll.min(rows.len().saturating_sub(height.max(1)));
    let mut title = format!("Board, {}", s.filter.label());
    if rows.len() > height {
        let last = (first + height).min(rows.len());
        title += &format!(" | rows {}-{last} of {}", first + 1, rows.len());
    }
    let total = rows.len();
    let shown: Vec<Line> = rows.into_iter().skip(first).take(height).collect();
    let block = Block::new().borders(Borders::TOP).title(title);
    frame.render_widget(Paragraph::new(shown).block(block), area);
    Drawn { rows: total, height }
}

/// The filter's sections, each a heading and its people in columns of one width that fit
/// `width`: an id never breaks across lines (a cell too wide for the screen is cut, with "…").
pub(crate) fn list_rows(v: &DepartmentView, filter: Filter, width: usize) -> Vec<Line<'static>> {
    let m: &Summary = &v.summary;
    let entry = |id: &String| match v.names.get(id) {
        Some(n) => inert(&format!("{id} {n}")).into_owned(),
        None => inert(id).into_owned(),
    };
    let early = |id: &String| {
        let e = entry(id);
        if m.early.binary_search(id).is_ok() {
            e + " (early)"
        } else {
            e
        }
    };
    let late = ("Late", m.late.iter().map(entry).collect::<Vec<_>>());
    let not_in = ("Not yet in", m.not_in.iter().map(entry).collect());
    let out = ("Out", m.out.iter().map(early).collect());
    let sections = match filter {
        Filter::All => vec![late, not_in, ("In on time", m.on_time.iter().map(entry).collect()), out],
        Filter::Late => vec![late],
        Filter::NotIn => vec![not_in],
        Filter::Out => vec![out],
    };
    let mut rows = Vec::new();
    for (heading, people) in sections {
        rows.push(Line::styled(
            format!("{heading} ({})", people.len()),
            Style::new().add_modifier(Modifier::BOLD),
        ));
        if people.is_empty() {
            rows.push(Line::raw("  none"));
        }
        rows.extend(columns(&people, width).into_iter().map(Line::raw));
    }
    rows
}

/// `cells` in rows of as many equal columns as fit `width` (at least one).
fn columns(cells: &[String], width: usize) -> Vec<String> {
    let width = width.max(1);
    let cell = cells.iter().map(|c| c.width()).max().unwrap_or(0).min(width);
    let per_row = ((width + GAP) / (cell + GAP)).max(1);
    cells
        .chunks(per_row)
        .map(|row| {
            let cut: Vec<String> = row.iter().map(|c| pad(c, cell)).collect();
            cut.join(&" ".repeat(GAP)).trim_end().to_string()
        })
        .collect()
}

/// `s` padded with spaces to `width` columns, or cut to it with "…".
fn pad(s: &str, width: usize) -> String {
    let w = s.width();
    if w <= width {
        return format!("{s}{}", " ".repeat(width - w));
    }
    let mut out = String::new();
    let mut used = 0;
    for c in s.chars() {
        let cw = unicode_width::UnicodeWidthChar::width(c).unwrap_or(0);
        if used + cw + 1 > width {
            break;
        }
        out.push(c);
        used += cw;
    }
    out.push('…');
    used += 1;
    out + &" ".repeat(width.saturating_sub(used))
}

/// `prefix` and as many of `people` as fit `width` whole, then " and N more".
fn fit(prefix: &str, people: &[String], width: usize) -> String {
    let mut line = prefix.to_string();
    for (i, p) in people.iter().enumerate() {
        let sep = if i == 0 { "" } else { ", " };
        let rest = people.len() - i - 1;
        let room = if rest > 0 { MORE } else { 0 };
        if line.width() + sep.len() + p.width() + room > width {
            return format!("{} and {} more", line.trim_end(), people.len() - i);
        }
        line = format!("{line}{sep}{p}");
    }
    line
}

#[cfg(test)]
#[path = "watch_draw_tests.rs"]
mod tests;
