//! Publishing a staged file to S3 by a multipart upload whose completion
//! is conditional: the parts are read from the file a few at a time and
//! sent several at once, so a publish holds at most [`PARTS_IN_FLIGHT`]
//! parts in memory whatever the file's size; any failure aborts the
//! upload, leaving no parts stored.

use std::os::unix::fs::FileExt;
use std::path::Path as FsPath;

use futures::{StreamExt, TryStreamExt};
use object_store::multipart::MultipartStore;
use object_store::path::Path;
use object_store::{PutPayload, PutResult};

use super::s3_signed::{Condition, S3Signed};
use crate::io::stats::Fetches;

/// Parts read and in flight at once: enough to keep a link busy while a
/// part's response is awaited, few enough to bound memory to
/// `PARTS_IN_FLIGHT × part_size`.
pub(crate) const PARTS_IN_FLIGHT: usize = 4;

/// S3's most parts in one upload.
const MAX_PARTS: u64 = 10_000;

fn local(e: std::io::Error) -> object_store::Error {
    object_store::Error::Generic {
        store: "local staging",
        source: Box::new(e),
    }
}

/// The part size used for a file of `size` bytes: `part_size`, or larger
/// (whole MiB) if the file would need more than S3's 10 000 parts.
pub(crate) fn part_size_for(size: u64, part_size: u64) -> u64 {
    let least = size.div_ceil(MAX_PARTS).div_ceil(1 << 20) << 20;
    part_size.max(least)
}

/// Upload `file` as `path` in parts of about `part_size`, completed if
/// the object there meets `condition`; the object carries `metadata`. The
/// counts go to `fetches`. (The file does not change meanwhile: its
/// session holds it through the publish.)
pub(crate) async fn upload(
    s3: &S3Signed,
    path: &Path,
    file: &FsPath,
    part_size: u64,
    condition: &Condition,
    metadata: &[(&str, &str)],
    fetches: &Fetches,
) -> object_store::Result<PutResult> {
    let f = std::fs::File::open(file).map_err(local)?;
    let size = f.metadata().map_err(local)?.len();
    let part = part_size_for(size, part_size);
    let n = size.div_ceil(part).max(1);
    let id = s3.create(path, metadata).await?;
    let sent = async {
        let parts: Vec<_> = futures::stream::iter(0..n)
            .map(|i| {
                let f = &f;
                let id = &id;
                async move {
                    let at = i * part;
                    let len = part.min(size - at) as usize;
                    let mut buf = vec![0u8; len];
                    f.read_exact_at(&mut buf, at).map_err(local)?;
                    let p = s3
                        .store()
                        .put_part(path, id, i as usize, PutPayload::from(buf))
                        .await?;
                    fetches.part(len as u64);
                    Ok::<_, object_store::Error>(p)
                }
            })
            .buffered(PARTS_IN_FLIGHT)
            .try_collect()
            .await?;
        s3.complete(path, &id, &parts, condition, || fetches.complete())
            .await
    }
    .await;
    if sent.is_err() {
        // No parts left stored; an upload a lost answer hid as completed
        // is gone already and the abort finds nothing.
        let _ = s3.store().abort_multipart(path, &id).await;
    }
    sent
}
