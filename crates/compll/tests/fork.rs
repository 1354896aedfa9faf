//! An arena with a background thread used in a child of `fork`: the child
//! has no such thread, so the arena must notice and go on alone (never wait
//! for an answer that cannot come, never touch the thread's channels).
#![cfg(all(target_os = "linux", target_env = "gnu"))]

use std::time::{Duration, Instant};

use compll::{Arena, Config, Handle};

fn pattern(i: usize) -> Vec<u8> {
    (0..300).map(|k| (i * 31 + k) as u8).collect()
}

/// Everything the child does; true if every byte read back was right.
fn child_work(a: &Arena, hs: &[Handle]) -> bool {
    // Walking back would read ahead; writing evicts dirty blocks, which
    // would go to the thread.
    for (i, h) in hs.iter().enumerate().rev() {
        match a.read(*h) {
            Ok(g) if g[..300] == pattern(i)[..] => {}
            _ => return false,
        }
    }
    let more: Vec<Handle> = (0..400)
        .map(|i| {
            let h = a.alloc(300).expect("alloc");
            a.write_at(h, 0, &pattern(i + 7)).expect("write");
            h
        })
        .collect();
    a.settle();
    a.flush().is_ok()
        && more
            .iter()
            .enumerate()
            .all(|(i, h)| a.read(*h).is_ok_and(|g| g[..300] == pattern(i + 7)[..]))
        && a.check_invariants().is_ok()
}

#[test]
fn a_forked_child_goes_on_without_the_background_thread() {
    let a = Arena::new(
        Config::default()
            .block_size(4096)
            .uncompressed_blocks(1)
            .group_fields(8)
            .background_compression(2)
            .readahead(4),
    )
    .unwrap();
    // Left with blocks on their way to the thread at the fork, likely.
    let hs: Vec<Handle> = (0..500)
        .map(|i| {
            let h = a.alloc(300).unwrap();
            a.write_at(h, 0, &pattern(i)).unwrap();
            h
        })
        .collect();
    // SAFETY: the child only uses the arena (malloc is fork-safe in
    // glibc) and leaves with `_exit`, running no destructors or handlers.
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0, "fork failed");
    if pid == 0 {
        let ok = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| child_work(&a, &hs)));
        let code = match ok {
            Ok(true) => 0,
            Ok(false) => 1,
            Err(_) => 2,
        };
        // SAFETY: ends the child at once.
        unsafe { libc::_exit(code) };
    }
    // The parent waits at most a minute: a child stuck waiting for the
    // thread would otherwise hang the test.
    let start = Instant::now();
    let mut status = 0;
    loop {
        // SAFETY: `pid` is our child; `status` is writable.
        let r = unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) };
        if r == pid {
            break;
        }
        if start.elapsed() > Duration::from_secs(60) {
            // SAFETY: as above.
            unsafe {
                libc::kill(pid, libc::SIGKILL);
                libc::waitpid(pid, &mut status, 0);
            }
            panic!("the forked child hung");
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    assert!(libc::WIFEXITED(status), "child ended by a signal: {status}");
    assert_eq!(
        libc::WEXITSTATUS(status),
        0,
        "child found wrong bytes or panicked"
    );
    // The parent's arena and thread are untouched by it all.
    for (i, h) in hs.iter().enumerate() {
        assert_eq!(a.read(*h).unwrap()[..300], pattern(i)[..]);
    }
    a.check_invariants().unwrap();
}
