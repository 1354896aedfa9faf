//! h5grove's `selection` query parameter: numpy-style indexing, one member
//! per leading dimension (`5`, `1, 2:5`, `0:10:5, 2, 3:`), resolved against
//! a dataset's shape the way h5py indexes.

use super::error::ApiError;

/// One member of a selection: an index (the dimension is dropped) or a
/// slice.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Member {
    Index(i64),
    Slice(Option<i64>, Option<i64>, Option<i64>),
}

/// A selection resolved against a shape: a box with steps, and which
/// dimensions the result keeps.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolved {
    /// First element along each dimension.
    pub start: Vec<u64>,
    /// Elements along each dimension.
    pub count: Vec<u64>,
    /// Step along each dimension.
    pub step: Vec<u64>,
    /// Whether each dimension stays in the result (a slice) or not (an index).
    pub keep: Vec<bool>,
}

impl Resolved {
    /// The whole of `shape`.
    pub fn all(shape: &[u64]) -> Self {
        Resolved {
            start: vec![0; shape.len()],
            count: shape.to_vec(),
            step: vec![1; shape.len()],
            keep: vec![true; shape.len()],
        }
    }

    /// The result's shape: the kept dimensions' counts.
    pub fn shape(&self) -> Vec<u64> {
        self.count
            .iter()
            .zip(&self.keep)
            .filter(|(_, &k)| k)
            .map(|(&c, _)| c)
            .collect()
    }

    /// Elements selected.
    pub fn len(&self) -> u64 {
        self.count.iter().product()
    }
}

/// Python's `int()` of a string: surrounding whitespace, an optional sign,
/// digits with single underscores between them.
fn py_int(s: &str) -> Result<i64, ApiError> {
    let bad = || ApiError::query(format!("invalid literal for int() with base 10: '{s}'"));
    let t = s.trim();
    let (neg, digits) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    let ok = !digits.is_empty()
        && !digits.starts_with('_')
        && !digits.ends_with('_')
        && !digits.contains("__")
        && digits.bytes().all(|c| c.is_ascii_digit() || c == b'_');
    if !ok {
        return Err(bad());
    }
    let v: i64 = digits
        .replace('_', "")
        .parse()
        .map_err(|_| ApiError::query(format!("index {s} is out of range")))?;
    Ok(if neg { -v } else { v })
}

fn optional(s: &str) -> Result<Option<i64>, ApiError> {
    if s.is_empty() {
        Ok(None)
    } else {
        py_int(s).map(Some)
    }
}

fn member(s: &str) -> Result<Member, ApiError> {
    if !s.contains(':') {
        return py_int(s).map(Member::Index);
    }
    let parts: Vec<&str> = s.split(':').collect();
    match parts[..] {
        // h5grove reads an empty start of `a:b` as 0 and of `a:b:c` as none.
        [a, b] => Ok(Member::Slice(
            Some(optional(a)?.unwrap_or(0)),
            optional(b)?,
            None,
        )),
        [a, b, c] => Ok(Member::Slice(optional(a)?, optional(b)?, optional(c)?)),
        _ => Err(ApiError::query(format!("{s} is not a valid slice"))),
    }
}

/// Python's `slice.indices`: start, stop of a positive-step slice of `len`.
fn clamp(v: Option<i64>, default: i64, len: i64) -> i64 {
    match v {
        None => default,
        Some(x) if x < 0 => (x + len).max(0),
        Some(x) => x.min(len),
    }
}

/// Parse `text` and resolve it against `shape`, with h5grove's errors
/// (every one a 422: h5grove itself lets them escape as 500s).
pub fn resolve(text: &str, shape: &[u64]) -> Result<Resolved, ApiError> {
    let members: Vec<Member> = text.split(',').map(member).collect::<Result<_, _>>()?;
    if members.len() > shape.len() {
        return Err(ApiError::query(format!(
            "{text} has too many members to slice a {}D dataset",
            shape.len()
        )));
    }
    let mut r = Resolved::all(shape);
    for (d, m) in members.into_iter().enumerate() {
        let len = i64::try_from(shape[d]).unwrap_or(i64::MAX);
        match m {
            Member::Index(i) => {
                let at = if i < 0 { i + len } else { i };
                if at < 0 || at >= len {
                    return Err(ApiError::query(format!(
                        "Index ({i}) out of range for (0-{})",
                        len - 1
                    )));
                }
                r.start[d] = at as u64;
                r.count[d] = 1;
                r.keep[d] = false;
            }
            Member::Slice(a, b, c) => {
                let step = c.unwrap_or(1);
                if step == 0 {
                    return Err(ApiError::query("slice step cannot be zero"));
                }
                if step < 0 {
                    return Err(ApiError::query(format!("Step must be >= 1 (got {step})")));
                }
                let start = clamp(a, 0, len);
                let stop = clamp(b, len, len);
                let n = if stop > start {
                    (stop - start + step - 1) / step
                } else {
                    0
                };
                r.start[d] = if n == 0 { 0 } else { start as u64 };
                r.count[d] = n as u64;
                r.step[d] = step as u64;
            }
        }
    }
    Ok(r)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn members() {
        let r = resolve("1, 2:5", &[3, 10, 4]).unwrap();
        assert_eq!(r.start, vec![1, 2, 0]);
        assert_eq!(r.count, vec![1, 3, 4]);
        assert_eq!(r.shape(), vec![3, 4]);
        let r = resolve("0:10:5, -1, 3:", &[20, 4, 5]).unwrap();
        assert_eq!(
            (r.start, r.count, r.step),
            (vec![0, 3, 3], vec![2, 1, 2], vec![5, 1, 1])
        );
        let r = resolve("-3:-1,298:400", &[200, 300]).unwrap();
        assert_eq!((r.start, r.count), (vec![197, 298], vec![2, 2]));
        assert_eq!(resolve("3:1", &[5]).unwrap().count, vec![0]);
        assert_eq!(resolve(" +1_0 ", &[20]).unwrap().start, vec![10]);
    }

    #[test]
    fn errors() {
        for (s, shape) in [
            ("a", &[3][..]),
            ("1,", &[3, 3]),
            ("", &[3]),
            ("5", &[3]),
            ("-4", &[3]),
            ("::-1", &[3]),
            ("0:2:0", &[3]),
            ("1:2:3:4", &[3]),
            ("0", &[]),
            ("1,2", &[3]),
            ("1__0", &[30]),
        ] {
            let e = resolve(s, shape).unwrap_err();
            assert_eq!(e.status, 422, "{s}");
        }
    }
}
