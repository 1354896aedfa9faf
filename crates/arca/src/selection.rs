//! Hyperslab selections and the strided copies that move them.

use crate::error::{Error, Result};
use crate::pool::lists::DIMS;
use crate::pool::ArrayList;

/// Merged (count, source stride, destination stride) triples of a copy.
static RUN_DIMS: ArrayList<(u64, u64, u64)> = ArrayList::new("selection run scratch");

/// A regular hyperslab: per dimension a start, a count of elements and a step.
///
/// ```
/// use arca::Selection;
/// // rows 1, 3, 5 and columns 0..4 of a 10 × 4 array
/// let s = Selection::from_ranges(&[(1, 7, 2), (0, 4, 1)]).unwrap();
/// assert_eq!(s.shape(), &[3, 4]);
/// assert_eq!(s.len(), 12);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Selection {
    pub(crate) start: Vec<u64>,
    pub(crate) count: Vec<u64>,
    pub(crate) step: Vec<u64>,
}

impl Selection {
    /// Every element of an array of `shape`.
    pub fn all(shape: &[u64]) -> Self {
        Selection {
            start: vec![0; shape.len()],
            count: shape.to_vec(),
            step: vec![1; shape.len()],
        }
    }

    /// A hyperslab from starts, counts and steps (steps must be ≥ 1).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] when the lengths differ or a step is 0.
    pub fn new(start: Vec<u64>, count: Vec<u64>, step: Vec<u64>) -> Result<Self> {
        if start.len() != count.len() || start.len() != step.len() {
            return Err(Error::invalid(
                "start, count and step must have one entry per dimension",
            ));
        }
        if step.contains(&0) {
            return Err(Error::invalid("selection step must be at least 1"));
        }
        Ok(Selection { start, count, step })
    }

    /// A hyperslab from Python-style `(start, stop, step)` triples, stop exclusive.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for a zero step or stop before start.
    pub fn from_ranges(ranges: &[(u64, u64, u64)]) -> Result<Self> {
        let mut s = Selection::all(&[]);
        for &(a, b, st) in ranges {
            if st == 0 {
                return Err(Error::invalid("selection step must be at least 1"));
            }
            s.start.push(a);
            s.count.push(if b > a { (b - a).div_ceil(st) } else { 0 });
            s.step.push(st);
        }
        Ok(s)
    }

    /// The shape of the selected block.
    pub fn shape(&self) -> &[u64] {
        &self.count
    }

    /// Per-dimension first index.
    pub fn start(&self) -> &[u64] {
        &self.start
    }

    /// Per-dimension step.
    pub fn step(&self) -> &[u64] {
        &self.step
    }

    /// Number of selected elements.
    pub fn len(&self) -> u64 {
        self.count.iter().product()
    }

    /// Whether nothing is selected.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Check the selection lies inside `dims`.
    pub(crate) fn check(&self, dims: &[u64]) -> Result<()> {
        if self.start.len() != dims.len() {
            return Err(Error::invalid(format!(
                "selection has rank {}, dataset has rank {}",
                self.start.len(),
                dims.len()
            )));
        }
        for (d, &n) in dims.iter().enumerate() {
            if self.count[d] == 0 {
                continue;
            }
            let last = (self.count[d] - 1)
                .checked_mul(self.step[d])
                .and_then(|x| x.checked_add(self.start[d]));
            if last.is_none_or(|l| l >= n) {
                return Err(Error::invalid(format!(
                    "selection out of bounds in dimension {d} (size {n})"
                )));
            }
        }
        Ok(())
    }

    /// Whether this selects exactly all of `dims`.
    pub(crate) fn is_all(&self, dims: &[u64]) -> bool {
        self.count == dims
            && self.start.iter().all(|&s| s == 0)
            && self.step.iter().all(|&s| s == 1)
    }
}

/// A window: a box of elements inside a row-major buffer of shape `dims`.
pub(crate) struct Window<'a> {
    pub(crate) dims: &'a [u64],
    pub(crate) start: &'a [u64],
    pub(crate) step: &'a [u64],
}

/// Call `f(offset in the dataset, offset in the buffer, bytes)` for each
/// contiguous run of `sel` in a row-major dataset of `dims`, the buffer
/// holding the selection densely (contiguous and external storage).
pub(crate) fn selection_runs(
    elem: usize,
    dims: &[u64],
    sel: &Selection,
    f: &mut dyn FnMut(usize, usize, usize) -> Result<()>,
) -> Result<()> {
    let (zero, ones) = (vec![0u64; sel.count.len()], vec![1u64; sel.count.len()]);
    let src = Window {
        dims,
        start: &sel.start,
        step: &sel.step,
    };
    let dst = Window {
        dims: &sel.count,
        start: &zero,
        step: &ones,
    };
    for_each_run(elem, &sel.count, &src, &dst, f)
}

/// Call `f(src_byte, dst_byte, bytes)` for each contiguous run that moves a
/// `count` box from `src` to `dst`. Adjacent dimensions whose strides line up
/// are merged first, so full rows and full planes become one run.
pub(crate) fn for_each_run(
    elem: usize,
    count: &[u64],
    src: &Window,
    dst: &Window,
    f: &mut dyn FnMut(usize, usize, usize) -> Result<()>,
) -> Result<()> {
    if count.contains(&0) {
        return Ok(());
    }
    // Scratch comes from free lists: this runs once per chunk touched.
    let strides = |dims: &[u64]| {
        let mut s = DIMS.take_filled(dims.len(), 1);
        for i in (0..dims.len().saturating_sub(1)).rev() {
            s[i] = s[i + 1] * dims[i + 1];
        }
        s
    };
    let (ss, ds) = (strides(src.dims), strides(dst.dims));
    let mut sbase = 0u64;
    let mut dbase = 0u64;
    for i in 0..count.len() {
        sbase += src.start[i] * ss[i];
        dbase += dst.start[i] * ds[i];
    }
    // (count, src stride, dst stride) per dimension, in elements, innermost
    // first; dimension i is merged into i+1 where it continues i+1's stride
    // exactly.
    let mut merged = RUN_DIMS.take(count.len().max(1));
    for i in (0..count.len()).rev() {
        let d = (count[i], ss[i] * src.step[i], ds[i] * dst.step[i]);
        if let Some(last) = merged.last_mut() {
            if last.0 * last.1 == d.1 && last.0 * last.2 == d.2 {
                last.0 *= d.0;
                continue;
            }
        }
        merged.push(d);
    }
    merged.reverse();
    if merged.is_empty() {
        merged.push((1, 1, 1));
    }
    let (inner_n, inner_s, inner_d) = merged[merged.len() - 1];
    let contiguous = inner_s == 1 && inner_d == 1;
    let outer = &merged[..merged.len() - 1];
    let mut idx = DIMS.take_filled(outer.len(), 0);
    let e = elem as u64;
    loop {
        let mut so = sbase;
        let mut dof = dbase;
        for (k, &(_, s, d)) in outer.iter().enumerate() {
            so += idx[k] * s;
            dof += idx[k] * d;
        }
        if contiguous {
            f(
                (so * e) as usize,
                (dof * e) as usize,
                (inner_n * e) as usize,
            )?;
        } else {
            for j in 0..inner_n {
                f(
                    ((so + j * inner_s) * e) as usize,
                    ((dof + j * inner_d) * e) as usize,
                    elem,
                )?;
            }
        }
        // Odometer over the outer dimensions.
        let mut k = outer.len();
        loop {
            if k == 0 {
                return Ok(());
            }
            k -= 1;
            idx[k] += 1;
            if idx[k] < outer[k].0 {
                break;
            }
            idx[k] = 0;
        }
    }
}

/// Copy a `count` box between two in-memory buffers.
pub(crate) fn copy_box(
    elem: usize,
    count: &[u64],
    src_buf: &[u8],
    src: &Window,
    dst_buf: &mut [u8],
    dst: &Window,
) -> Result<()> {
    for_each_run(elem, count, src, dst, &mut |s, d, n| {
        let from = src_buf
            .get(s..s + n)
            .ok_or_else(|| Error::invalid("source buffer too small for the selection"))?;
        dst_buf
            .get_mut(d..d + n)
            .ok_or_else(|| Error::invalid("destination buffer too small for the selection"))?
            .copy_from_slice(from);
        Ok(())
    })
}

/// Write the element `fill` over the box of `count` elements at `dst` in
/// `dst_buf`: an unstored chunk's part of a read, with no chunk-sized
/// buffer (a chunk may be gigabytes).
pub(crate) fn fill_box(
    elem: usize,
    count: &[u64],
    fill: &[u8],
    dst_buf: &mut [u8],
    dst: &Window,
) -> Result<()> {
    let zeros = DIMS.take_filled(count.len(), 0);
    let ones = DIMS.take_filled(count.len(), 1);
    let src = Window {
        dims: count,
        start: &zeros,
        step: &ones,
    };
    let zero = fill.iter().all(|&b| b == 0);
    for_each_run(elem, count, &src, dst, &mut |_, d, n| {
        let to = dst_buf
            .get_mut(d..d + n)
            .ok_or_else(|| Error::invalid("destination buffer too small for the selection"))?;
        if zero {
            to.fill(0);
        } else {
            to.chunks_exact_mut(elem)
                .for_each(|e| e.copy_from_slice(fill));
        }
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strided_copy_matches_naive() {
        let dims = [5u64, 6, 7];
        let src: Vec<u8> = (0..210u32).map(|x| x as u8).collect();
        let sel = Selection::from_ranges(&[(1, 5, 2), (0, 6, 1), (2, 7, 3)]).unwrap();
        let mut out = vec![0u8; sel.len() as usize];
        let zero = [0u64; 3];
        let one = [1u64; 3];
        copy_box(
            1,
            sel.shape(),
            &src,
            &Window {
                dims: &dims,
                start: &sel.start,
                step: &sel.step,
            },
            &mut out,
            &Window {
                dims: sel.shape(),
                start: &zero,
                step: &one,
            },
        )
        .unwrap();
        let mut want = vec![];
        for i in (1..5).step_by(2) {
            for j in 0..6 {
                for k in (2..7).step_by(3) {
                    want.push(src[i * 42 + j * 7 + k]);
                }
            }
        }
        assert_eq!(out, want);
    }

    #[test]
    fn full_rows_merge_into_one_run() {
        let dims = [4u64, 8];
        let mut runs = 0;
        for_each_run(
            8,
            &[2, 8],
            &Window {
                dims: &dims,
                start: &[1, 0],
                step: &[1, 1],
            },
            &Window {
                dims: &[2, 8],
                start: &[0, 0],
                step: &[1, 1],
            },
            &mut |_, _, n| {
                runs += 1;
                assert_eq!(n, 128);
                Ok(())
            },
        )
        .unwrap();
        assert_eq!(runs, 1);
    }

    #[test]
    fn bounds_are_checked() {
        let s = Selection::from_ranges(&[(0, 11, 1)]).unwrap();
        assert!(s.check(&[10]).is_err());
        assert!(s.check(&[11]).is_ok());
        assert!(s.check(&[11, 1]).is_err());
    }
}
