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

/// A spinner for work whose progress the library cannot report, such as
/// one PUT of a whole file: what it does, the bytes, the time so far
/// (hidden when `quiet` or stderr is not a terminal). Finish it with
/// [`ProgressBar::finish_and_clear`].
pub fn spinner(what: &str, bytes: u64, quiet: bool) -> ProgressBar {
    if quiet {
        return ProgressBar::hidden();
    }
    let b = ProgressBar::new_spinner();
    let template = format!(
        "{{spinner}} {what} {} {{elapsed}}",
        indicatif::HumanBytes(bytes)
    );
    b.set_style(
        ProgressStyle::with_template(&template)
            .unwrap_or_else(|_| ProgressStyle::default_spinner()),
    );
    b.enable_steady_tick(std::time::Duration::from_millis(120));
    b
}
