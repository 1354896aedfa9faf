//! `arca view`'s server through its public API: a slice of a large chunked
//! dataset reads only the chunks it touches, every request needs the
//! token and one of this machine's names, errors are h5grove's, the app's
//! files are served beside the API, and a stopped server stops answering.

use std::io::{Read, Write};
use std::net::TcpStream;

use arca::{DatasetOptions, Datatype, File};
use arca_cli::view::{Options, Server};

/// GET `target` with `host` as the Host header: (status, body).
fn get(server: &Server, target: &str, host: Option<&str>) -> (u16, Vec<u8>) {
    let mut s = TcpStream::connect(server.addr()).unwrap();
    let host = host.map_or_else(
        || format!("127.0.0.1:{}", server.addr().port()),
        str::to_string,
    );
    write!(
        s,
        "GET {target} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut raw = vec![];
    s.read_to_end(&mut raw).unwrap();
    let split = raw.windows(4).position(|w| w == b"\r\n\r\n").unwrap();
    let head = String::from_utf8_lossy(&raw[..split]).to_string();
    let status = head.split(' ').nth(1).unwrap().parse().unwrap();
    let body = raw[split + 4..].to_vec();
    // tiny_http answers `Connection: close` requests without chunking.
    assert!(
        !head
            .to_ascii_lowercase()
            .contains("transfer-encoding: chunked"),
        "{head}"
    );
    (status, body)
}

/// The io counters are the process's: tests that read take turns.
static READS: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn json(b: &[u8]) -> serde_json::Value {
    serde_json::from_slice(b).unwrap()
}

#[test]
fn slice_reads_only_its_chunks() {
    let _turn = READS.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("big.arca");
    {
        let f = File::create(&path).unwrap();
        let opts = DatasetOptions::new(Datatype::float(4), &[2048, 2048]).chunks(&[128, 128]);
        let d = f.root().create_dataset("img", &opts).unwrap();
        let vals: Vec<f32> = (0..2048 * 2048).map(|i| i as f32).collect();
        d.write_all(&vals).unwrap();
        f.close().unwrap();
    }
    let server = Server::start(&path, &Options::default()).unwrap();
    let t = server.token().to_string();
    let before = arca::io_stats();
    // Rows 130..140, columns 0..10: one chunk row (128..256), one chunk column.
    let (status, body) = get(
        &server,
        &format!("/api/data/?token={t}&path=/img&selection=130:140,0:10&format=bin&dtype=safe"),
        None,
    );
    let after = arca::io_stats();
    assert_eq!(status, 200);
    assert_eq!(body.len(), 100 * 4);
    let first = f32::from_le_bytes(body[..4].try_into().unwrap());
    assert_eq!(first, (130 * 2048) as f32);
    let chunks = after.chunks_read - before.chunks_read;
    assert!(
        chunks <= 1,
        "{chunks} chunks read for a slice inside one chunk"
    );
    assert!(after.bytes_read - before.bytes_read <= 128 * 128 * 4 + 4096);
    // The server's own counts of its file, at /api/io: the same chunk, and
    // a second slice in another chunk adds one.
    let (status, body) = get(&server, &format!("/api/io?token={t}"), None);
    assert_eq!(status, 200);
    let io = json(&body);
    assert_eq!(io["chunks_read"], serde_json::json!(chunks));
    assert_eq!(io["requests"], serde_json::json!(0));
    let (status, _) = get(
        &server,
        &format!("/api/data/?token={t}&path=/img&selection=1000,1000:1010"),
        None,
    );
    assert_eq!(status, 200);
    let io = json(&get(&server, &format!("/api/io?token={t}"), None).1);
    assert_eq!(io["chunks_read"], serde_json::json!(chunks + 1));
    assert_eq!(get(&server, "/api/io", None).0, 403);
}

#[test]
fn token_host_errors_and_assets() {
    let _turn = READS.lock().unwrap_or_else(|e| e.into_inner());
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("small.arca");
    {
        let f = File::create(&path).unwrap();
        let d = f
            .root()
            .create_dataset("g/x", &DatasetOptions::new(Datatype::int(4), &[3]))
            .unwrap();
        d.write_all(&[1i32, 2, 3]).unwrap();
        f.close().unwrap();
    }
    let assets = dir.path().join("app");
    std::fs::create_dir(&assets).unwrap();
    std::fs::write(assets.join("index.html"), "<p>app</p>").unwrap();
    std::fs::write(assets.join("app.js"), "1").unwrap();
    let opts = Options {
        assets: Some(assets),
        ..Options::default()
    };
    let mut server = Server::start(&path, &opts).unwrap();
    let t = server.token().to_string();
    assert_eq!(t.len(), 64);
    assert!(server.url().contains(&format!("token={t}")));

    let (s, b) = get(&server, &format!("/api/data/?token={t}&path=/g/x"), None);
    assert_eq!((s, json(&b)), (200, serde_json::json!([1, 2, 3])));
    let (s, b) = get(&server, "/api/data/?path=/g/x", None);
    assert_eq!(s, 403);
    assert!(json(&b)["message"].as_str().unwrap().contains("token"));
    assert_eq!(get(&server, "/api/meta/?token=nope&path=/", None).0, 403);
    let evil = get(
        &server,
        &format!("/api/meta/?token={t}"),
        Some("evil.example"),
    );
    assert_eq!(evil.0, 403);
    let (s, b) = get(&server, &format!("/api/meta/?token={t}&path=/nope"), None);
    assert_eq!(s, 404);
    assert_eq!(
        json(&b)["message"],
        "/nope is not a valid path in small.arca"
    );
    let (s, _) = get(
        &server,
        &format!("/api/data/?token={t}&path=/g/x&selection=7"),
        None,
    );
    assert_eq!(s, 422);
    let (s, _) = get(&server, &format!("/api/data/?token={t}&path=/g"), None);
    assert_eq!(s, 422);

    // The page needs the token; the files it loads carry it in a cookie.
    assert_eq!(get(&server, "/", None).0, 403);
    let (s, b) = get(&server, &format!("/?token={t}"), None);
    assert_eq!((s, b.as_slice()), (200, &b"<p>app</p>"[..]));
    assert_eq!(get(&server, "/app.js", None).0, 403);
    assert_eq!(
        get(&server, &format!("/../small.arca?token={t}"), None).0,
        404
    );

    let addr = server.addr();
    server.stop();
    assert!(server.wait(Some(std::time::Duration::from_secs(0))));
    // Once stopped, nothing answers on the port.
    let answered = TcpStream::connect(addr).and_then(|mut s| {
        write!(s, "GET /api/?token={t} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")?;
        let mut b = [0u8; 1];
        s.read(&mut b)
    });
    assert!(matches!(answered, Err(_) | Ok(0)), "{answered:?}");
}
