#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    neurorater_tests::fuzz_entry::bundle_jsonl(data);
});
