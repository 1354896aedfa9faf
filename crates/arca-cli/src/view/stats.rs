//! `/api/stats`: minimum, maximum, mean and standard deviation of a
//! selection, with h5grove's fields (finite values only; integers
//! reported as integers, their mean and deviation truncated as h5grove's
//! `int()` truncates them).

use serde_json::{json, Map, Value};

use super::array::{Array, Numbers};
use super::error::ApiError;

/// The statistics of `a`'s values.
pub fn stats(a: &Array) -> Result<Value, ApiError> {
    let nums = a.numbers().ok_or_else(|| {
        ApiError::query("statistics need real numbers (integers, floats or bools)")
    })?;
    let mut m = Map::new();
    let mut put = |k: &str, v: Value| {
        m.insert(k.to_string(), v);
    };
    match nums {
        Numbers::Ints(v) => {
            if v.is_empty() {
                return Ok(nulls());
            }
            let min_where = |f: &dyn Fn(i128) -> bool| v.iter().copied().filter(|&x| f(x)).min();
            put("strict_positive_min", opt(min_where(&|x| x > 0)));
            put("positive_min", opt(min_where(&|x| x >= 0)));
            put("min", opt(v.iter().copied().min()));
            put("max", opt(v.iter().copied().max()));
            let f: Vec<f64> = v.iter().map(|&x| x as f64).collect();
            let (mean, std) = mean_std(&f);
            put("mean", opt(Some(mean.trunc() as i128)));
            put("std", opt(Some(std.trunc() as i128)));
        }
        Numbers::Floats(size, v) => {
            let v: Vec<f64> = v.into_iter().filter(|x| x.is_finite()).collect();
            if v.is_empty() {
                return Ok(nulls());
            }
            let fmin = |it: &mut dyn Iterator<Item = f64>| it.reduce(f64::min);
            put(
                "strict_positive_min",
                optf(fmin(&mut v.iter().copied().filter(|&x| x > 0.0))),
            );
            put(
                "positive_min",
                optf(fmin(&mut v.iter().copied().filter(|&x| x >= 0.0))),
            );
            put("min", optf(fmin(&mut v.iter().copied())));
            put("max", optf(v.iter().copied().reduce(f64::max)));
            // numpy's mean and deviation of float16/32 values are of that type.
            let round = |x: f64| match size {
                2 => f64::from(half::f16::from_f64(x).to_f32()),
                4 => f64::from(x as f32),
                _ => x,
            };
            let (mean, std) = mean_std(&v);
            put("mean", optf(Some(round(mean))));
            put("std", optf(Some(round(std))));
        }
    }
    Ok(Value::Object(m))
}

fn nulls() -> Value {
    json!({"strict_positive_min": null, "positive_min": null, "min": null,
           "max": null, "mean": null, "std": null})
}

fn opt(v: Option<i128>) -> Value {
    match v {
        Some(x) => match i64::try_from(x) {
            Ok(i) => json!(i),
            Err(_) => json!(x as u64),
        },
        None => Value::Null,
    }
}

fn optf(v: Option<f64>) -> Value {
    match v {
        Some(x) if x.is_finite() => json!(x),
        _ => Value::Null,
    }
}

/// Mean and population standard deviation (numpy's `std`, ddof 0), summed
/// pairwise as numpy sums.
fn mean_std(v: &[f64]) -> (f64, f64) {
    let n = v.len() as f64;
    let mean = pairwise(v) / n;
    let dev: Vec<f64> = v.iter().map(|x| (x - mean) * (x - mean)).collect();
    (mean, (pairwise(&dev) / n).sqrt())
}

fn pairwise(v: &[f64]) -> f64 {
    if v.len() <= 128 {
        v.iter().sum()
    } else {
        let h = v.len() / 2;
        pairwise(&v[..h]) + pairwise(&v[h..])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::values::Elements;
    use arca::Datatype;

    #[test]
    fn ints_truncate_and_floats_skip_nan() {
        let data: Vec<u8> = [-1i32, 0, 4].iter().flat_map(|v| v.to_ne_bytes()).collect();
        let a = Array::Values {
            elems: Elements::Fixed {
                dt: Datatype::int(4),
                data,
            },
            shape: vec![3],
            scalar: false,
        };
        assert_eq!(
            stats(&a).unwrap(),
            json!({"strict_positive_min": 4, "positive_min": 0, "min": -1, "max": 4, "mean": 1, "std": 2})
        );
        let data: Vec<u8> = [f64::NAN, 2.0, -1.0]
            .iter()
            .flat_map(|v| v.to_ne_bytes())
            .collect();
        let a = Array::Values {
            elems: Elements::Fixed {
                dt: Datatype::float(8),
                data,
            },
            shape: vec![3],
            scalar: false,
        };
        let s = stats(&a).unwrap();
        assert_eq!(s["mean"], json!(0.5));
        assert_eq!(s["strict_positive_min"], json!(2.0));
    }
}
