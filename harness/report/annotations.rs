//! `annotations`: GitHub Actions `::error` lines for failing trials, pointing at the suite
//! file and the line of the kernel, at most `MAX` (GitHub shows ten per step).

use super::results::{Results, Status};

/// Annotations written, at most.
pub const MAX: usize = 10;

/// Escapes a workflow-command value (`%`, CR and LF; and `,` `:` in properties).
fn escape(text: &str, property: bool) -> String {
    let mut out = text
        .replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A");
    if property {
        out = out.replace(':', "%3A").replace(',', "%2C");
    }
    out
}

/// The annotation lines for `results`.
pub fn render(results: &Results) -> Vec<String> {
    let failing: Vec<_> = results
        .trials
        .iter()
        .filter(|t| t.status == Status::Failed)
        .collect();
    let mut out: Vec<String> = failing
        .iter()
        .take(MAX)
        .map(|t| {
            format!(
                "::error file={},line={},title={}::{}",
                escape(&t.file, true),
                t.line,
                escape(
                    &match &results.base {
                        Some(b) => format!("kernelgate: {} (paired vs {})", t.name, b.rev),
                        None => format!("kernelgate: {}", t.name),
                    },
                    true
                ),
                escape(&super::terminal::failure(t), false)
            )
        })
        .collect();
    if failing.len() > MAX {
        out.push(format!(
            "::notice::kernelgate: {} more failing trial(s) not annotated (see the job log)",
            failing.len() - MAX
        ));
    }
    out
}
