//! The punch-file parser on any bytes, with a window wide enough that times reach the checks.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let policy = attendance::Policy {
        max_backdate_days: 3660,
        ..Default::default()
    };
    let now = chrono::DateTime::from_timestamp(1_796_000_000, 0).expect("a fixed instant");
    let window = attendance::PunchWindow::new(&policy, chrono_tz::Europe::Paris, now);
    let _ = attendance::parse_punch_file(data, &window);
});
