#![no_main]

use std::sync::Once;

static KEEP_CAUGHT_PANICS_ALIVE: Once = Once::new();

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    // libfuzzer-sys aborts in its panic hook, before any unwinding, so even the codec panics the
    // product catches (`decode_object`'s catch_unwind, findings 3 and 4) stopped every run. With
    // the standard hook (taking libfuzzer-sys's hook leaves it) a caught panic is printed and
    // becomes a decode error, as in the product; a panic nobody catches still unwinds into
    // libfuzzer-sys, which aborts on it.
    KEEP_CAUGHT_PANICS_ALIVE.call_once(|| drop(std::panic::take_hook()));
    neurorater_tests::fuzz_entry::dicom(data);
});
