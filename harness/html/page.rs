//! `Page`: the frame of a self-contained HTML file (inline CSS, no scripts, no external URL)
//! and the small pieces every section uses: escaping, tables, verdict badges.

/// The style sheet, inlined in every page.
const CSS: &str = r#"
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; margin: 24px auto; max-width: 1340px; color: #1d2330; padding: 0 16px; }
h1 { font-size: 24px; margin: 0 0 4px; } h2 { font-size: 19px; margin: 32px 0 8px; border-bottom: 2px solid #dde3ec; padding-bottom: 4px; }
h3 { font-size: 15px; margin: 20px 0 6px; color: #37415a; }
.meta { color: #5b6478; margin: 0 0 16px; }
table { border-collapse: collapse; margin: 6px 0 12px; font-size: 13px; }
th, td { border: 1px solid #dde3ec; padding: 3px 8px; text-align: left; vertical-align: top; }
th { background: #f2f5f9; font-weight: 600; } td.num { text-align: right; font-variant-numeric: tabular-nums; }
table.trials, table.resources { width: 100%; } table.resources td.num, table.trends td.num { white-space: nowrap; }
code, pre { font: 12px/1.4 ui-monospace, "SFMono-Regular", Menlo, Consolas, monospace; }
pre { background: #f6f8fa; border: 1px solid #e3e7ee; padding: 6px 8px; margin: 4px 0; white-space: pre-wrap; word-break: break-all; }
pre.diff .add { color: #0f6b2f; background: #e6f6ea; } pre.diff .del { color: #a11a1a; background: #fbe9e9; } pre.diff .hunk { color: #6b6b6b; }
.charts { display: grid; grid-template-columns: repeat(auto-fill, minmax(min(640px, 100%), 1fr)); gap: 12px; }
.table-wrap { overflow-x: auto; max-width: 100%; }
.charts svg, figure svg { max-width: 100%; height: auto; border: 1px solid #e3e7ee; }
figure { margin: 0; } figcaption { font-size: 13px; color: #37415a; margin: 2px 0 10px; }
.badge { display: inline-block; padding: 1px 7px; border-radius: 9px; font-size: 12px; font-weight: 600; white-space: nowrap; }
.failed, .regressed { background: #fde2e1; color: #a3160f; } .inconclusive, .on-the-threshold, .unreliable, .machine-slower { background: #fff1cc; color: #7a5200; }
.improved { background: #dcf5e3; color: #0f6b2f; } .unchanged, .within-threshold, .passed, .compiled, .identical-code, .machine-faster { background: #eef1f5; color: #37415a; }
.ignored, .no-baseline, .gone { background: #f4f4f4; color: #6b6b6b; }
.new { background: #e0ecff; color: #1d4f91; } .changed { background: #efe3fb; color: #5b2a86; }
tr.differs td { background: #fff1cc; font-weight: 600; } mark { background: #fff1cc; padding: 0 2px; }
table.evidence { margin-top: 4px; } .mode { margin: 0 0 8px; } .sizes { margin-top: 2px; } .sizes a { margin-right: 6px; }
.change { white-space: nowrap; } .p { color: #5b6478; } .size-change + .size-change { margin-top: 3px; } .counters { color: #37415a; }
.kernel { white-space: nowrap; } .swatch { display: inline-block; width: 10px; height: 10px; border-radius: 2px; margin-right: 6px; vertical-align: baseline; }
.counts span { margin-right: 10px; } .note { color: #5b6478; font-size: 13px; }
.legend { display: inline-flex; flex-wrap: wrap; gap: 4px 16px; font-size: 13px; margin: 4px 0 8px; }
.legend i { display: inline-block; width: 18px; height: 4px; margin: 0 6px 3px 0; vertical-align: middle; }
.trend svg { max-width: 100%; height: auto; border: 1px solid #e3e7ee; }
.attention td:first-child { min-width: 220px; }
details > summary { cursor: pointer; color: #1d4f91; font-size: 13px; margin: 2px 0 6px; }
@media (max-width: 700px) {
  body { margin: 12px auto; padding: 0 10px; }
  h1 { font-size: 21px; } h2 { font-size: 17px; }
  table.attention, table.attention tbody, table.attention tr, table.attention td { display: block; width: auto; }
  table.attention thead { display: none; } table.attention tr { border-bottom: 2px solid #dde3ec; padding: 4px 0; }
  table.attention td { border: none; padding: 2px 0; } .attention td:first-child { min-width: 0; }
  .change { white-space: normal; }
  table.trials, table.resources, table.trends, table.runs { min-width: 880px; }
  /* The note keeps a readable measure, so a regression's row is not a narrow column. */
  table.trials td:last-child { min-width: 260px; }
  /* A full-width trend chart keeps a legible size and scrolls sideways. */
  .trend { overflow-x: auto; } .trend svg { min-width: 760px; }
}
"#;

/// Escapes text for HTML element content and attribute values.
pub fn esc(text: &str) -> String {
    // `&` first, so no escape is escaped again.
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
        .replace('\'', "&#39;")
}

/// An element id for a name (`saxpy::vec4::n=4096` → `t-saxpy--vec4--n-4096`): letters,
/// digits, `-` and `_` only, so it is a valid fragment.
pub fn anchor(prefix: &str, name: &str) -> String {
    let body = name.replace(|c: char| !c.is_ascii_alphanumeric() && c != '_', "-");
    format!("{prefix}-{body}")
}

/// A verdict-like state as a coloured badge; `state` is also the CSS class (spaces → `-`).
pub fn badge(state: &str) -> String {
    format!(
        r#"<span class="badge {}">{}</span>"#,
        state.replace(' ', "-"),
        esc(state)
    )
}

/// A table: a header row, then rows of cells that are already HTML; cells starting with
/// `\u{1}` are numbers (right-aligned; the marker is removed).
pub fn table(class: &str, header: &[&str], rows: &[Vec<String>]) -> String {
    let mut out = format!(r#"<div class="table-wrap"><table class="{class}">"#);
    if header.iter().any(|h| !h.is_empty()) {
        out.push_str("<thead><tr>");
        for h in header {
            out.push_str(&format!("<th>{}</th>", esc(h)));
        }
        out.push_str("</tr></thead>");
    }
    out.push_str("<tbody>\n");
    for row in rows {
        out.push_str("<tr>");
        for cell in row {
            match cell.strip_prefix('\u{1}') {
                Some(n) => out.push_str(&format!(r#"<td class="num">{n}</td>"#)),
                None => out.push_str(&format!("<td>{cell}</td>")),
            }
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</tbody></table></div>\n");
    out
}

/// Marks a cell as a number for [`table`].
pub fn num(text: String) -> String {
    format!("\u{1}{}", esc(&text))
}

/// The whole page around `body`.
pub fn page(title: &str, body: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>{}</title>\n<style>{CSS}</style></head>\n<body>\n{body}</body></html>\n",
        esc(title)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escaping_and_anchors() {
        assert_eq!(esc("a<b & \"c\"'"), "a&lt;b &amp; &quot;c&quot;&#39;");
        assert_eq!(anchor("t", "saxpy::vec4::n=4096"), "t-saxpy--vec4--n-4096");
        assert!(table("x", &["a"], &[vec![num("1".into())]]).contains(r#"<td class="num">1</td>"#));
    }
}
