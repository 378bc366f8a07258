//! `pretty`: JSON for review. Like serde_json's pretty printer (objects one key per line, keys
//! sorted), except that an array of plain values stays on one line, so a re-recorded trial
//! changes a few lines of a diff, not hundreds.

use serde_json::Value;

/// Renders `value` with two-space indents and a final newline.
pub fn pretty(value: &Value) -> String {
    let mut out = String::new();
    write(value, 0, &mut out);
    out.push('\n');
    out
}

fn scalar(value: &Value) -> String {
    serde_json::to_string(value).expect("JSON values serialize")
}

fn write(value: &Value, indent: usize, out: &mut String) {
    match value {
        Value::Object(map) if !map.is_empty() => {
            let keyed = map
                .iter()
                .map(|(k, v)| (scalar(&Value::String(k.clone())) + ": ", v));
            lines(out, indent, '{', '}', keyed.collect());
        }
        Value::Array(items) if items.iter().any(|v| v.is_object() || v.is_array()) => {
            let plain = items.iter().map(|v| (String::new(), v));
            lines(out, indent, '[', ']', plain.collect());
        }
        Value::Array(items) => {
            let parts: Vec<String> = items.iter().map(scalar).collect();
            out.push_str(&format!("[{}]", parts.join(", ")));
        }
        other => out.push_str(&scalar(other)),
    }
}

/// An object or array (between `open` and `close`) one item a line, each its `prefix` (a key) and value,
/// one indent deeper than `indent`.
fn lines(out: &mut String, indent: usize, open: char, close: char, items: Vec<(String, &Value)>) {
    let pad = |n: usize| "  ".repeat(n);
    out.push(open);
    out.push('\n');
    for (i, (prefix, v)) in items.iter().enumerate() {
        out.push_str(&pad(indent + 1));
        out.push_str(prefix);
        write(v, indent + 1, out);
        if i + 1 < items.len() {
            out.push(',');
        }
        out.push('\n');
    }
    out.push_str(&pad(indent));
    out.push(close);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shape() {
        let v: Value = serde_json::from_str(
            r#"{"b": [1, 2.5], "a": {"x": null, "y": [{"z": "q"}]}, "c": {}}"#,
        )
        .unwrap();
        let text = pretty(&v);
        assert_eq!(
            text,
            "{\n  \"a\": {\n    \"x\": null,\n    \"y\": [\n      {\n        \"z\": \"q\"\n      }\n    ]\n  },\n  \"b\": [1, 2.5],\n  \"c\": {}\n}\n"
        );
        assert_eq!(serde_json::from_str::<Value>(&text).unwrap(), v);
    }
}
