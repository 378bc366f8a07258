//! What a trial's footprint says against its baseline's: a library call's algorithm.

use super::*;

#[test]
fn a_library_call_whose_algorithm_changed_says_so_and_not_its_kernels() {
    use crate::measure::Resources;
    let kernel = |entry: &str, registers| Resources {
        entry: entry.into(),
        registers,
        static_shared: 0,
        dynamic_shared: 0,
        local_bytes: 0,
        max_threads: 0,
        block_threads: 128,
        blocks_per_sm: 0,
    };
    let call = |algorithm: &str, launches| Footprint {
        launches,
        library: Some(algorithm.into()),
        ..Default::default()
    };
    let old = call("algo 55 · tile 11", vec![kernel("gemm_64x64", 121)]);
    let new = call(
        "algo 55 · tile 12",
        vec![kernel("gemm_64x32", 90), kernel("splitk_reduce", 16)],
    );
    let changes = resource_changes(&new, Some(&old));
    assert_eq!(changes.len(), 1, "{changes:?}");
    assert_eq!(
        changes[0].algorithm,
        Some([
            "algo 55 · tile 11".to_string(),
            "algo 55 · tile 12".to_string()
        ])
    );
    assert!(resource_changes(&old, Some(&old)).is_empty());
    let same_algorithm = call("algo 55 · tile 11", vec![kernel("gemm_64x64", 96)]);
    assert!(
        resource_changes(&same_algorithm, Some(&old)).is_empty(),
        "the library's kernels follow from its algorithm"
    );
}
