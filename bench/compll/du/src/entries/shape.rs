//! A tree's shape, so that trees can be compared: how many entries, how
//! deep, how many names per directory, how long the names are and how
//! much information a name byte carries.

use serde::Serialize;

use super::Entry;

/// The shape of a tree given as entries in pre-order.
#[derive(Serialize, Clone, Debug, Default, PartialEq)]
pub(crate) struct Shape {
    pub(crate) entries: usize,
    pub(crate) dirs: usize,
    pub(crate) max_depth: u32,
    pub(crate) mean_depth: f64,
    /// Entries directly in a directory: median, 99th percentile, largest.
    pub(crate) names_per_dir_median: usize,
    pub(crate) names_per_dir_p99: usize,
    pub(crate) names_per_dir_max: usize,
    /// Name length in bytes: mean and 99th percentile.
    pub(crate) name_len_mean: f64,
    pub(crate) name_len_p99: usize,
    /// Order-0 entropy of all name bytes together, in bits per byte.
    pub(crate) name_entropy_bits: f64,
}

/// The value below which `p` of the sorted `xs` lie (nearest rank).
fn percentile(xs: &[usize], p: f64) -> usize {
    if xs.is_empty() {
        return 0;
    }
    let rank = ((p * xs.len() as f64).ceil() as usize).clamp(1, xs.len());
    xs[rank - 1]
}

/// Measures the shape of `entries` (pre-order, with depths).
pub(crate) fn shape(entries: &[Entry]) -> Shape {
    let mut children: Vec<usize> = Vec::new();
    // Index into `children` of the directories on the current path.
    let mut open: Vec<usize> = Vec::new();
    let mut lens: Vec<usize> = Vec::with_capacity(entries.len());
    let mut hist = [0u64; 256];
    let mut depth_sum = 0u64;
    let mut max_depth = 0;
    for e in entries {
        open.truncate(e.depth as usize);
        if let Some(&p) = open.last() {
            children[p] += 1;
        }
        if e.dir {
            open.push(children.len());
            children.push(0);
        }
        lens.push(e.name.len());
        for &b in e.name.as_bytes() {
            hist[b as usize] += 1;
        }
        depth_sum += e.depth as u64;
        max_depth = max_depth.max(e.depth);
    }
    children.sort_unstable();
    lens.sort_unstable();
    let total: u64 = hist.iter().sum();
    let entropy = hist
        .iter()
        .filter(|&&c| c > 0)
        .map(|&c| {
            let p = c as f64 / total as f64;
            -p * p.log2()
        })
        .sum();
    let n = entries.len().max(1) as f64;
    Shape {
        entries: entries.len(),
        dirs: children.len(),
        max_depth,
        mean_depth: depth_sum as f64 / n,
        names_per_dir_median: percentile(&children, 0.5),
        names_per_dir_p99: percentile(&children, 0.99),
        names_per_dir_max: children.last().copied().unwrap_or(0),
        name_len_mean: lens.iter().sum::<usize>() as f64 / n,
        name_len_p99: percentile(&lens, 0.99),
        name_entropy_bits: entropy,
    }
}

impl std::fmt::Display for Shape {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} entries ({} directories), depth max {} mean {:.1}, names per directory median {} p99 {} max {}, name length mean {:.1} p99 {}, name entropy {:.2} bits/byte",
            self.entries,
            self.dirs,
            self.max_depth,
            self.mean_depth,
            self.names_per_dir_median,
            self.names_per_dir_p99,
            self.names_per_dir_max,
            self.name_len_mean,
            self.name_len_p99,
            self.name_entropy_bits
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn e(name: &str, depth: u32, dir: bool) -> Entry {
        Entry {
            name: name.into(),
            depth,
            dir,
            size: 0,
            asize: 0,
            ino: 0,
            dev: 0,
            mtime: 0,
            nlink: 1,
        }
    }

    #[test]
    fn a_small_tree_has_the_shape_counted_by_hand() {
        // /r: a, d/(x, y, z), b
        let t = [
            e("r", 0, true),
            e("a", 1, false),
            e("d", 1, true),
            e("x", 2, false),
            e("y", 2, false),
            e("zz", 2, false),
            e("b", 1, false),
        ];
        let s = shape(&t);
        assert_eq!((s.entries, s.dirs, s.max_depth), (7, 2, 2));
        assert!((s.mean_depth - 9.0 / 7.0).abs() < 1e-12);
        assert_eq!(
            (
                s.names_per_dir_median,
                s.names_per_dir_p99,
                s.names_per_dir_max
            ),
            (3, 3, 3)
        );
        assert!((s.name_len_mean - 8.0 / 7.0).abs() < 1e-12);
        assert_eq!(s.name_len_p99, 2);
        // Eight bytes: z twice, six others once: 6 * (1/8 * 3) + 2/8 * 2.
        assert!((s.name_entropy_bits - 2.75).abs() < 1e-12);
    }

    #[test]
    fn names_of_one_repeated_byte_carry_no_information() {
        let t = [e("aaaa", 0, true), e("aa", 1, false)];
        assert_eq!(shape(&t).name_entropy_bits, 0.0);
    }
}
