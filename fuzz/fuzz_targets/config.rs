//! The config file's parser on any text: every key through its bounds, never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|text: &str| {
    let _ = attendance::Config::from_toml(text);
});
