//! The roster parser on any bytes: a refusal is fine, a panic or an abort is a bug.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = attendance::parse_roster(data);
});
