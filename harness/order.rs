//! `first_seen`, `grouped`: lists kept in the order their items first appear — the order
//! kernelgate shows suites, trials, devices and variants in, as the suite files and the run
//! gave them.

/// The distinct items of `items`, in the order they first appear.
pub fn first_seen<T: PartialEq>(items: impl IntoIterator<Item = T>) -> Vec<T> {
    let mut out = Vec::new();
    for x in items {
        if !out.contains(&x) {
            out.push(x);
        }
    }
    out
}

/// The items whose flag is set, in order: of `[(a != b, "code"), ...]`, the parts that differ.
pub fn flagged<T>(items: impl IntoIterator<Item = (bool, T)>) -> Vec<T> {
    items
        .into_iter()
        .filter_map(|(on, x)| on.then_some(x))
        .collect()
}

/// `items` gathered by key: each key with its items, in the order the key first appears.
pub fn grouped<K: PartialEq, T>(items: impl IntoIterator<Item = (K, T)>) -> Vec<(K, Vec<T>)> {
    let mut out: Vec<(K, Vec<T>)> = Vec::new();
    for (key, x) in items {
        match out.iter_mut().find(|(k, _)| *k == key) {
            Some((_, xs)) => xs.push(x),
            None => out.push((key, vec![x])),
        }
    }
    out
}
