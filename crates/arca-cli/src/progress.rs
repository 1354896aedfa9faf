//! Progress bars for long commands: bytes done of a total, with rate and
//! time left, drawn on stderr only when it is a terminal and not asked to
//! be quiet.

use indicatif::{ProgressBar, ProgressStyle};

/// A bar labelled `what` (hidden when `quiet`; indicatif hides it too
/// when stderr is not a terminal).
pub fn bytes_bar(what: &str, quiet: bool) -> ProgressBar {
    if quiet {
        return ProgressBar::hidden();
    }
    let b = ProgressBar::new(0);
    let template = format!(
        "{{spinner}} {what} [{{bar:40}}] {{bytes}}/{{total_bytes}} {{bytes_per_sec}} eta {{eta}}"
    );
    b.set_style(
        ProgressStyle::with_template(&template)
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> "),
    );
    b
}

/// A callback for the library's `Progress` that moves `bar`.
pub fn follow(bar: &ProgressBar) -> impl FnMut(u64, u64) + '_ {
    move |done, total| {
        bar.set_length(total);
        bar.set_position(done.min(total));
    }
}
