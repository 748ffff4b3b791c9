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

use super::screen::{Drawn, Filter, ScreenState};
use crate::domain::report::summary::Summary;
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

/// The live screen drawn on ratatui's `TestBackend`: what the buffer holds, row by row.
#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use chrono::NaiveDate;
    use ratatui::backend::TestBackend;
    use ratatui::Terminal;

    use super::*;
    use crate::cli::watch::screen::{AlertPanel, Entry};

    fn day() -> NaiveDate {
        NaiveDate::from_ymd_opt(2026, 12, 2).unwrap()
    }

    /// 3 late (E001-E003), 40 not yet in (E004-E043), 2 in on time, 2 out (E046 early); names "Nm".
    fn view() -> DepartmentView {
        let ids = |r: std::ops::Range<u32>| r.map(|i| format!("E{i:03}")).collect::<Vec<_>>();
        let summary = Summary {
            late: ids(1..4),
            not_in: ids(4..44),
            on_time: ids(44..46),
            out: ids(46..48),
            early: ids(46..47),
        };
        let names: HashMap<String, String> = (1..48).map(|i| (format!("E{i:03}"), format!("N{i}"))).collect();
        DepartmentView { summary, names }
    }

    fn state() -> ScreenState {
        let mut s = ScreenState::new("D1", day());
        s.clock = "10:15:00".into();
        s.board = Ok(view());
        s
    }

    /// Draw `s` at `w` x `h`; the screen's rows (trailing spaces cut) and the drawing's geometry.
    fn screen(s: &mut ScreenState, w: u16, h: u16) -> Vec<String> {
        let mut t = Terminal::new(TestBackend::new(w, h)).unwrap();
        let mut drawn = Drawn::default();
        t.draw(|f| drawn = draw(f, s)).unwrap();
        s.drawn = drawn;
        let buf = t.backend().buffer();
        (0..h)
            .map(|y| {
                let row: String = (0..w).map(|x| buf[(x, y)].symbol().to_string()).collect();
                row.trim_end().trim_end_matches('\u{2500}').to_string()
            })
            .collect()
    }

    fn find<'a>(rows: &'a [String], needle: &str) -> Option<&'a String> {
        rows.iter().find(|r| r.contains(needle))
    }

    #[test]
    fn the_board_comes_first_with_its_counts_and_the_late_ones() {
        let rows = screen(&mut state(), 80, 24);
        assert_eq!(
            rows[0], "Department D1 | 2026-12-02 | 10:15:00 | filter: all",
            "{rows:#?}"
        );
        assert_eq!(rows[1], "in 5 (late 3) | not yet in 40 | out 2 (early 1)");
        assert_eq!(rows[2], "Board, all", "all fits: no row count");
        assert_eq!(rows[3], "Late (3)");
        assert_eq!(rows[4], "E001 N1  E002 N2  E003 N3");
        assert_eq!(rows[5], "Not yet in (40)");
        assert!(
            rows[23].starts_with("q quit | a all  l late  n not yet in  o out"),
            "{rows:#?}"
        );
    }

    #[test]
    fn ids_are_laid_out_in_columns_that_fit_the_width_never_cut_across_lines() {
        for w in [20u16, 33, 47, 80, 132] {
            let mut s = state();
            s.filter = Filter::NotIn;
            let rows = screen(&mut s, w, 40);
            let list: Vec<&String> = rows.iter().filter(|r| r.starts_with('E')).collect();
            let cells: Vec<&str> = list.iter().flat_map(|r| r.split("  ")).map(str::trim).collect();
            let expected: Vec<String> = (4..44).take(cells.len()).map(|i| format!("E{i:03} N{i}")).collect();
            assert_eq!(cells, expected, "width {w}: {rows:#?}");
            let per_row = (usize::from(w) + 2) / (8 + 2);
            assert_eq!(list[0].split("  ").count(), per_row, "width {w}: {rows:#?}");
        }
    }

    #[test]
    fn the_whole_list_scrolls_to_its_last_row() {
        let mut s = state();
        s.filter = Filter::NotIn;
        let rows = screen(&mut s, 40, 12);
        assert!(find(&rows, "E004 N4").is_some());
        assert!(find(&rows, "E043 N43").is_none(), "not on the first page: {rows:#?}");
        s.scroll = usize::MAX;
        let rows = screen(&mut s, 40, 12);
        assert!(find(&rows, "E043 N43").is_some(), "{rows:#?}");
        assert!(find(&rows, "E004 N4").is_none(), "{rows:#?}");
        // 40 people, 4 a row: a heading and 10 rows; 6 of them fit under the title.
        assert_eq!(s.drawn, Drawn { rows: 11, height: 6 });
        assert!(
            find(&rows, "Board, not yet in | rows 6-11 of 11").is_some(),
            "{rows:#?}"
        );
    }

    #[test]
    fn a_filter_shows_its_list_only_and_says_which() {
        let mut s = state();
        s.filter = Filter::Out;
        let rows = screen(&mut s, 80, 24);
        assert!(rows[0].ends_with("filter: out"), "{rows:#?}");
        assert_eq!(rows[2], "Board, out");
        assert_eq!(rows[3], "Out (2)");
        assert_eq!(rows[4], "E046 N46 (early)  E047 N47");
        assert!(find(&rows, "Late (").is_none() && find(&rows, "Not yet in (").is_none());
        s.filter = Filter::Late;
        let rows = screen(&mut s, 80, 24);
        assert_eq!(rows[3..5], ["Late (3)", "E001 N1  E002 N2  E003 N3"]);
    }

    #[test]
    fn a_resize_lays_the_same_state_out_anew() {
        let mut s = state();
        s.filter = Filter::NotIn;
        let wide = screen(&mut s, 80, 24);
        let narrow = screen(&mut s, 30, 10);
        assert_eq!(wide.len(), 24);
        assert_eq!(narrow.len(), 10);
        assert_eq!(find(&wide, "E004 N4").unwrap().split("  ").count(), 8);
        assert_eq!(find(&narrow, "E004 N4").unwrap().split("  ").count(), 3);
        assert!(narrow.iter().all(|r| r.chars().count() <= 30));
    }

    #[test]
    fn events_of_another_day_carry_their_date() {
        let mut s = state();
        s.push(Entry {
            day: Some(day().pred_opt().unwrap()),
            text: "18:05:00 D1 E046 N46 out".into(),
        });
        s.push(Entry {
            day: None,
            text: "08:55:00 D1 E044 N44 in".into(),
        });
        let rows = screen(&mut s, 80, 24);
        let at = rows.iter().position(|r| r.starts_with("Latest events")).unwrap();
        assert_eq!(rows[at + 1], "(2026-12-01) 18:05:00 D1 E046 N46 out", "{rows:#?}");
        assert_eq!(rows[at + 2], "08:55:00 D1 E044 N44 in");
    }

    #[test]
    fn the_alert_panel_shows_who_is_missing_and_who_arrived_late_cut_to_the_width() {
        let mut s = state();
        s.alert = Some(AlertPanel {
            at: "09:15".into(),
            expected: 12,
            missing: (4..14).map(|i| format!("E{i:03} N{i}")).collect(),
            arrived: vec!["E001 N1".into()],
        });
        let rows = screen(&mut s, 80, 24);
        assert_eq!(
            rows[2], "Absence alert 09:15 (12 expected): still missing 10: E004 N4 and 9 more",
            "whole entries, then how many more: {rows:#?}"
        );
        assert_eq!(rows[3], "Arrived late:  E001 N1");
        assert!(rows[4].starts_with("Board, all"));
    }

    #[test]
    fn redis_lost_is_said_in_place_of_the_counts() {
        let mut s = state();
        s.board = Err("Redis: connection refused".into());
        s.notice = Some("watch-dept: lost the broker, reconnecting".into());
        let rows = screen(&mut s, 80, 24);
        assert_eq!(rows[1], "Redis lost: Redis: connection refused; reconnecting");
        assert_eq!(rows[2], "Board, all");
        assert_eq!(rows[22], "watch-dept: lost the broker, reconnecting");
    }

    #[test]
    fn control_characters_in_a_name_are_drawn_inert() {
        let mut s = state();
        if let Ok(v) = s.board.as_mut() {
            v.names.insert("E001".into(), "Evil\u{1b}[2J".into());
        }
        let rows = screen(&mut s, 80, 24);
        assert!(find(&rows, "E001 Evil\\u{1b}[2J").is_some(), "{rows:#?}");
    }
}
