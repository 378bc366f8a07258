//! The HTML report as a parser sees it, for the tests that render one: every trial and
//! compared trial present once, nothing fetched from elsewhere, the mode in the header; the
//! attention table's rows; each suite's colours.

use kernelgate::html::page::anchor;
use kernelgate::report::results::Results;
use scraper::{Html, Selector};

/// The elements `css` selects.
pub fn select<'a>(doc: &'a Html, css: &str) -> Vec<scraper::ElementRef<'a>> {
    doc.select(&Selector::parse(css).unwrap()).collect()
}

/// Everything a person needs is there, and nothing is fetched from elsewhere.
pub fn check_structure(results: &Results, html: &str) {
    let doc = Html::parse_document(html);
    assert!(
        doc.errors.is_empty() || doc.errors.iter().all(|e| !e.contains("Unexpected token")),
        "{:?}",
        doc.errors
    );
    for t in &results.trials {
        let id = anchor("t", &t.name);
        assert_eq!(
            select(&doc, &format!("#{id}")).len(),
            1,
            "trial `{}` is not in the report once",
            t.name
        );
        assert!(
            !select(&doc, &format!("#{}", anchor("suite", &t.suite))).is_empty(),
            "no section for suite `{}`",
            t.suite
        );
    }
    // One strip chart per compared trial, named for it.
    for t in results
        .trials
        .iter()
        .filter(|t| t.verdict.is_some() && t.measurement.is_some())
    {
        let figure = select(&doc, &format!("#{} svg", anchor("cmp", &t.name)));
        assert_eq!(figure.len(), 1, "no distributions for `{}`", t.name);
    }
    assert!(select(&doc, "script").is_empty(), "a script");
    assert!(select(&doc, "link").is_empty(), "a linked resource");
    for e in select(&doc, "[src], [href]") {
        for attr in ["src", "href"] {
            if let Some(v) = e.value().attr(attr) {
                assert!(v.starts_with('#'), "`{attr}={v}` leaves the file");
            }
        }
    }
    assert!(
        !html.contains("url(") && !html.contains("@import"),
        "a style that fetches"
    );
    // Every summary's attention row carries the command that reruns it: in a paired run,
    // against the same base.
    for row in select(&doc, "table.attention tbody tr") {
        let text: String = row.text().collect();
        assert!(text.contains("cargo test --test perf -- "), "{text}");
        let repeats = match &results.base {
            Some(b) => text.contains(&format!(
                "rerun: KERNELGATE_BASE={} ",
                kernelgate::shell::shell_word(&b.rev)
            )),
            None => text.contains("rerun: cargo test --test perf -- "),
        };
        assert!(repeats, "{text}");
    }
    // The header says how the run decided.
    let mode = select(&doc, "#mode");
    assert_eq!(mode.len(), 1, "the mode in the header");
    let paired = results.base.is_some();
    assert_eq!(
        mode[0].value().attr("data-mode"),
        Some(if paired { "paired" } else { "stored" })
    );
}

/// The trials of each attention row, by the links to their rows.
pub fn attention_rows(doc: &Html) -> Vec<Vec<String>> {
    select(doc, "table.attention tbody tr")
        .iter()
        .map(|row| {
            row.select(&Selector::parse("td:first-child a").unwrap())
                .map(|a| {
                    let id = a.value().attr("href").unwrap().trim_start_matches('#');
                    // The trial whose anchor it is.
                    trial_of(doc, id)
                })
                .collect()
        })
        .collect()
}

/// The text of the element with id `id`.
pub fn trial_of(doc: &Html, id: &str) -> String {
    select(doc, &format!("#{id}"))[0].text().collect()
}

/// Every chart of a suite draws a kernel in the same colour: the figures list their series
/// with their colour (`data-series="naive:0 vec4:1"`), and each SVG holds those colours.
pub fn check_colours(doc: &Html, suite: &str) {
    let mut seen: std::collections::HashMap<String, String> = Default::default();
    let figures = select(doc, &format!("#{} figure.chart", anchor("suite", suite)));
    assert!(!figures.is_empty(), "{suite} has charts");
    for f in figures {
        let svg: String = f.html();
        for pair in f.value().attr("data-series").unwrap().split(' ') {
            let (kernel, color) = pair.rsplit_once(':').unwrap();
            let previous = seen.entry(kernel.to_string()).or_insert(color.to_string());
            assert_eq!(previous, color, "{suite}: `{kernel}` changes colour");
            let (r, g, b) = kernelgate::html::plots::color(color.parse().unwrap());
            assert!(
                svg.contains(&format!("#{r:02X}{g:02X}{b:02X}")),
                "{suite}: `{kernel}` is not drawn in its colour"
            );
        }
    }
    // The trials table shows each kernel's swatch in that colour too.
    for (kernel, color) in &seen {
        let swatches = select(
            doc,
            &format!(
                "#{} table.trials i.swatch[data-color=\"{color}\"]",
                anchor("suite", suite)
            ),
        );
        assert!(!swatches.is_empty(), "{suite}: no swatch for `{kernel}`");
    }
}
