//! `arca create-example`: a small file that shows what arca stores.

use std::path::Path;

use arca::{
    AttrValue, ByteOrder, DatasetOptions, Datatype, File, Filter, Mode, Selection, VlenOptions,
};

use crate::error::{CliError, Context};

/// Write the example file to `path`; an existing file is replaced only with `force`.
pub fn run(path: &Path, force: bool) -> Result<(), CliError> {
    let mode = if force { Mode::Create } else { Mode::CreateNew };
    let f = File::options().mode(mode).open(path).map_err(|e| match e {
        arca::Error::AlreadyExists(_) => CliError::Usage(format!(
            "{}: file exists (use --force to replace it)",
            path.display()
        )),
        e => CliError::arca(path, e),
    })?;
    fill(&f).in_file(path)?;
    f.close().in_file(path)
}

/// Everything the example holds: nested groups, attributes of several
/// types, contiguous and chunked datasets, every filter, a big-endian type,
/// a resizable dataset, a scalar, variable-length strings and sequences,
/// and an empty group.
fn fill(f: &File) -> arca::Result<()> {
    let root = f.root();
    root.attrs()
        .set("title", &AttrValue::string("arca example file"))?;
    root.attrs()
        .set("format_version", &AttrValue::scalar(1i32))?;
    root.attrs()
        .set("created_by", &AttrValue::string("arca create-example"))?;

    let exp = root.create_group("experiment")?;
    exp.attrs().set("operator", &AttrValue::string("J. Doe"))?;
    exp.attrs()
        .set("temperature_K", &AttrValue::scalar(293.15f64))?;
    exp.attrs()
        .set("gains", &AttrValue::array(&[3], &[1.0f32, 1.5, 2.0])?)?;

    // Contiguous float64: a day of hourly readings.
    let temps: Vec<f64> = (0..24)
        .map(|h| {
            let t = 20.0 + 3.0 * (h as f64 * std::f64::consts::PI / 12.0).sin();
            (t * 100.0).round() / 100.0
        })
        .collect();
    let ds = exp.create_dataset(
        "temperature",
        &DatasetOptions::new(Datatype::float(8), &[24]),
    )?;
    ds.write_all(&temps)?;
    ds.attrs().set("units", &AttrValue::string("degC"))?;

    let run_id = exp.create_dataset("run_id", &DatasetOptions::new(Datatype::uint(8), &[]))?;
    run_id.write_all(&[20240611u64])?;

    // Fixed-length byte strings, zero-padded.
    let names = ["alpha", "beta", "gamma", "delta"];
    let mut raw = vec![0u8; 8 * names.len()];
    for (i, n) in names.iter().enumerate() {
        raw[i * 8..i * 8 + n.len()].copy_from_slice(n.as_bytes());
    }
    let labels = exp.create_dataset("labels", &DatasetOptions::new(Datatype::bytes(8), &[4]))?;
    labels.write_bytes(&Selection::all(&[4]), &raw)?;

    // Chunked uint16 frames with shuffle + zstd: more elements than dump
    // prints by default, so the truncation note shows.
    let frames = exp.create_dataset(
        "raw/frames",
        &DatasetOptions::new(Datatype::uint(2), &[3, 40, 25])
            .chunks(&[1, 40, 25])
            .filters(&[Filter::Shuffle, Filter::Zstd(3)]),
    )?;
    let px: Vec<u16> = (0..3u32 * 40 * 25)
        .map(|i| {
            let (f, y, x) = (i / 1000, (i / 25) % 40, i % 25);
            (100 + f * 10 + (y * 7 + x * 3) % 50) as u16
        })
        .collect();
    frames.write_all(&px)?;
    frames
        .attrs()
        .set("exposure_s", &AttrValue::scalar(0.5f64))?;

    // Resizable int32 with lz4: rows are appended; unwritten rows show the fill value.
    let events = exp.create_dataset(
        "raw/events",
        &DatasetOptions::new(Datatype::int(4), &[4, 4])
            .maxshape(&[None, Some(4)])
            .chunks(&[4, 4])
            .filters(&[Filter::Lz4])
            .fill_value(&(-1i32).to_ne_bytes()),
    )?;
    events.write_all(&(0..16).map(|i| i * 10).collect::<Vec<i32>>())?;
    events.resize(&[6, 4])?;
    events.attrs().set(
        "description",
        &AttrValue::string("rows appended by resize; the last two hold the fill value"),
    )?;

    // Chunked float32 with shuffle + gzip, and a contiguous bool mask.
    let cal = exp.create_group("calibration")?;
    let m = cal.create_dataset(
        "matrix",
        &DatasetOptions::new(Datatype::float(4), &[4, 4])
            .chunks(&[2, 4])
            .filters(&[Filter::Shuffle, Filter::Deflate(6)]),
    )?;
    let ident: Vec<f32> = (0..16)
        .map(|i| {
            if i % 5 == 0 {
                1.0
            } else {
                0.25 * (i % 4) as f32
            }
        })
        .collect();
    m.write_all(&ident)?;
    let mask = cal.create_dataset("mask", &DatasetOptions::new(Datatype::Bool, &[4, 4]))?;
    mask.write_all(&(0..16).map(|i| u8::from(i % 3 == 0)).collect::<Vec<u8>>())?;

    // Big-endian types as other tools write them: one contiguous, one chunked.
    let legacy = exp.create_group("legacy")?;
    let be = legacy.create_dataset(
        "be_counts",
        &DatasetOptions::new(
            Datatype::Int {
                size: 4,
                order: ByteOrder::Big,
            },
            &[6],
        ),
    )?;
    be.write_all(&[1i32, -2, 300, -40000, 5_000_000, i32::MIN])?;
    be.attrs()
        .set("byte_order", &AttrValue::string("big-endian"))?;
    let bef = legacy.create_dataset(
        "be_values",
        &DatasetOptions::new(
            Datatype::Float {
                size: 8,
                order: ByteOrder::Big,
            },
            &[2, 3],
        )
        .chunks(&[1, 3])
        .filters(&[Filter::Zstd(1)]),
    )?;
    bef.write_all(&[0.5f64, -1.25, 3.0e10, 1.0e-5, f64::INFINITY, f64::NAN])?;

    // Variable-length data: UTF-8 strings (their vector compressed) and
    // ragged rows. Small vector chunks: a vector's last chunk is stored whole.
    let log = exp.create_dataset(
        "log",
        &DatasetOptions::new(Datatype::VlenStr, &[4]).vlen(
            VlenOptions::default()
                .chunk_bytes(4096)
                .filters(&[Filter::Zstd(3)]),
        ),
    )?;
    log.write_strings(
        &Selection::all(&[4]),
        &["run started", "beam on", "µ-metal shield closed", ""],
    )?;
    let tracks = exp.create_dataset(
        "raw/tracks",
        &DatasetOptions::new(Datatype::vlen(Datatype::float(4))?, &[4])
            .vlen(VlenOptions::default().chunk_bytes(1024)),
    )?;
    tracks.write_ragged(
        &Selection::all(&[4]),
        &[0.5f32, 1.0, 1.5, 2.25, 3.0, 3.5],
        &[0, 3, 3, 4, 6],
    )?;
    exp.attrs().set(
        "tags",
        &AttrValue::vlen_strings(&[2], &["calibrated", "v2"])?,
    )?;

    // A table as PyTables writes one: rows of mixed members, with an enum,
    // an array member and a complex number.
    let row = Datatype::parse(
        r#"struct(40){"t"@0:<f8,"channel"@8:<u2,"state"@10:enum(|u1){"IDLE":0,"RUN":1,"FAULT":2},"energy"@12:<f4,"pos"@16:[3]<f4,"z"@28:<c8}"#,
    )?;
    let table = exp.create_dataset(
        "table",
        &DatasetOptions::new(row, &[3])
            .chunks(&[2])
            .maxshape(&[None])
            .filters(&[Filter::Shuffle, Filter::Zstd(3)]),
    )?;
    let mut rows = vec![];
    for (i, state) in [1u8, 1, 2].into_iter().enumerate() {
        let f = i as f32;
        rows.extend_from_slice(&(0.25 * i as f64).to_ne_bytes());
        rows.extend_from_slice(&(i as u16 + 7).to_ne_bytes());
        rows.push(state);
        rows.push(0);
        rows.extend_from_slice(&(1.5 + f).to_ne_bytes());
        for p in [f, -f, 0.5] {
            rows.extend_from_slice(&p.to_ne_bytes());
        }
        for p in [f, 1.0] {
            rows.extend_from_slice(&p.to_ne_bytes());
        }
        rows.extend_from_slice(&[0; 4]); // the tail gap
    }
    table.write_bytes(&Selection::all(&[3]), &rows)?;
    // Half precision, as many instruments record it.
    table.attrs().set(
        "gain",
        &AttrValue::new(
            Datatype::float(2),
            &[2],
            [0x3e00u16, 0x4100]
                .iter()
                .flat_map(|h| h.to_ne_bytes())
                .collect(),
        )?,
    )?;

    // An event list: each row a time, a detector name and a ragged list of
    // hit channels, strings and sequences held beside the rows.
    let event =
        Datatype::parse(r#"struct(40){"t"@0:<f8,"detector"@8:vlen:str,"hits"@24:vlen:<u2}"#)?;
    let log = exp.create_dataset("raw/event_log", &DatasetOptions::new(event, &[3]))?;
    let mut rows = vec![];
    let mut items = vec![];
    for (i, (det, hits)) in [
        ("north", &[3u16, 9][..]),
        ("south", &[]),
        ("north", &[1, 2, 40]),
    ]
    .into_iter()
    .enumerate()
    {
        rows.extend_from_slice(&(1.5 * i as f64).to_ne_bytes());
        let hits: Vec<u8> = hits.iter().flat_map(|h| h.to_ne_bytes()).collect();
        for v in [det.as_bytes(), &hits[..]] {
            rows.extend_from_slice(&(items.len() as u64).to_le_bytes());
            rows.extend_from_slice(&(v.len() as u64).to_le_bytes());
            items.extend_from_slice(v);
        }
    }
    rows.extend_from_slice(&items);
    log.write_rows(&Selection::all(&[3]), &rows)?;

    // Links: a soft link to the newest data and a second name for a dataset.
    root.link_soft("latest", "/experiment/raw/frames")?;
    exp.link_hard("calibration/matrix", "gain_matrix")?;

    root.create_group("notes")?;
    Ok(())
}
