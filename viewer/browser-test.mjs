// Browser test of `arca view`: Debian's chromium, driven by playwright-core,
// opens the page the server prints and checks what a person would see:
// the tree lists the file's groups, a 1-D dataset draws a line plot, a 2-D
// one a heatmap (a canvas that is not blank), slicing a 3-D dataset's first
// axis changes the picture, a 10 GiB dataset's view reads only the chunks
// of the slices shown (the server's /api/io counts), and the console stays
// free of errors.
//
//   node browser-test.mjs ARCA_BIN FILE.arca ASSETS_DIR SCREENSHOT_DIR
//
// FILE.arca must hold /data/line (1-D), /data/image (2-D), /data/stack
// (3-D) and /data/big (2560 x 1024 x 1024 float32, chunks 1 x 256 x 256),
// as `make view-browser-test` writes it.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { chromium } from 'playwright-core';

const [arca, file, assets, shots] = process.argv.slice(2);
if (!shots) {
  console.error('usage: node browser-test.mjs ARCA_BIN FILE ASSETS_DIR SCREENSHOT_DIR');
  process.exit(2);
}

let failures = 0;
let passes = 0;
function check(ok, what) {
  if (ok) {
    passes += 1;
    console.log(`ok - ${what}`);
  } else {
    failures += 1;
    console.log(`not ok - ${what}`);
  }
}

// Start the server and wait for the line with its address.
const server = spawn(arca, ['view', '--no-browser', '--port', '0', '--assets', assets, file], {
  stdio: ['ignore', 'pipe', 'inherit'],
});
// However this script ends, the server goes with it.
process.on('exit', () => server.kill());
const url = await new Promise((resolve, reject) => {
  const lines = createInterface({ input: server.stdout });
  lines.on('line', (l) => l.startsWith('http://') && resolve(l.trim()));
  server.on('exit', (code) => reject(new Error(`arca view exited with ${code}`)));
});

const profile = mkdtempSync(path.join(tmpdir(), 'arca-view-chromium-'));
const context = await chromium.launchPersistentContext(profile, {
  executablePath: '/usr/bin/chromium',
  viewport: { width: 1280, height: 800 },
  args: [
    '--headless',
    '--no-sandbox',
    '--disable-gpu',
    '--disable-quic',
    '--no-first-run',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
    '--enable-unsafe-swiftshader',
  ],
});

/** How many distinct colours the element `locator` shows on screen. */
async function colours(page, locator) {
  const png = (await locator.screenshot()).toString('base64');
  return page.evaluate(async (b64) => {
    const img = new Image();
    img.src = `data:image/png;base64,${b64}`;
    await img.decode();
    const c = document.createElement('canvas');
    c.width = img.width;
    c.height = img.height;
    const ctx = c.getContext('2d');
    ctx.drawImage(img, 0, 0);
    const px = ctx.getImageData(0, 0, c.width, c.height).data;
    const seen = new Set();
    for (let i = 0; i < px.length; i += 4) {
      seen.add((px[i] << 16) | (px[i + 1] << 8) | px[i + 2]);
    }
    return seen.size;
  }, png);
}

/** What the server has read from the file so far (arca's `/api/io`). */
async function io() {
  const u = new URL(url);
  u.pathname = '/api/io';
  u.search = `?token=${u.searchParams.get('token')}`;
  const r = await fetch(u);
  if (!r.ok) throw new Error(`/api/io answered ${r.status}`);
  return r.json();
}

/**
 * Move the last slider (the first axis) from 0 to 1 with the keyboard and
 * wait until `canvas` shows another picture; whether it did. `pressed`, if
 * given, is awaited after the key press (a response the move asks for).
 */
async function nextSlice(page, canvas, pressed = () => null) {
  const before = await canvas.screenshot();
  const slider = page.getByRole('slider').last();
  await slider.focus();
  const waited = pressed();
  await page.keyboard.press('ArrowUp');
  await waited;
  await page.waitForFunction((s) => s.getAttribute('aria-valuenow') === '1', await slider.elementHandle());
  for (let i = 0; i < 100; i += 1) {
    await page.waitForTimeout(100);
    if (!(await canvas.screenshot()).equals(before)) return true;
  }
  return false;
}

/** The visualization's canvas once drawn (h5web draws plots with WebGL). */
async function plot(page) {
  const canvas = page.locator('canvas').first();
  await canvas.waitFor();
  // Wait until the picture holds more than the background.
  for (let i = 0; i < 100 && (await colours(page, canvas)) < 3; i += 1) {
    await page.waitForTimeout(100);
  }
  return canvas;
}

try {
  const page = await context.newPage();
  const errors = [];
  page.on('console', (m) => m.type() === 'error' && errors.push(m.text()));
  page.on('pageerror', (e) => errors.push(String(e)));
  await page.goto(url);

  // The tree: h5web's explorer is an ARIA tree of treeitems.
  const tree = page.getByRole('tree');
  await tree.waitFor();
  const data = page.getByRole('treeitem', { name: 'data' });
  await data.waitFor();
  check(await data.isVisible(), 'the tree lists the group /data');
  check(await page.getByRole('treeitem', { name: 'notes' }).isVisible(), 'the tree lists the group /notes');
  await data.click();

  // 1-D: a line plot, h5web's Line tab selected.
  await page.getByRole('treeitem', { name: 'line' }).click();
  await page.getByRole('tab', { name: 'Line', selected: true }).waitFor();
  check(true, '1-D dataset: the Line visualization is selected');
  const lineColours = await colours(page, await plot(page));
  check(lineColours > 2, `1-D dataset: the line plot is drawn (${lineColours} colours)`);
  await page.screenshot({ path: path.join(shots, 'line.png') });

  // 2-D: a heatmap.
  await page.getByRole('treeitem', { name: 'image' }).click();
  await page.getByRole('tab', { name: 'Heatmap', selected: true }).waitFor();
  check(true, '2-D dataset: the Heatmap visualization is selected');
  const heatColours = await colours(page, await plot(page));
  check(heatColours > 50, `2-D dataset: the heatmap shows a picture (${heatColours} colours)`);
  await page.screenshot({ path: path.join(shots, 'heatmap.png') });

  // 3-D: the slider of the first axis picks the slice shown.
  await page.getByRole('treeitem', { name: 'stack' }).click();
  await page.getByRole('tab', { name: 'Heatmap', selected: true }).waitFor();
  const canvas = await plot(page);
  const slider = page.getByRole('slider').last();
  check((await slider.getAttribute('aria-valuenow')) === '0', '3-D dataset: a slider for the first axis, at 0');
  check(await nextSlice(page, canvas), '3-D dataset: slicing the first axis changes the picture');
  await page.screenshot({ path: path.join(shots, 'stack.png') });

  // 10 GiB: the picture of slice 0, then of slice 1, each 16 chunks of
  // 256 KiB; everything else stays on disk.
  const bigData = () => page.waitForResponse((r) => {
    const u = new URL(r.url());
    return u.pathname === '/api/data' && u.searchParams.get('path') === '/data/big';
  });
  const start = await io();
  const shown0 = bigData();
  await page.getByRole('treeitem', { name: 'big' }).click();
  await shown0;
  await page.getByRole('tab', { name: 'Heatmap', selected: true }).waitFor();
  const bigCanvas = await plot(page);
  const first = await io();
  const read0 = first.chunks_read - start.chunks_read;
  check(read0 === 16, `10 GiB dataset: showing slice 0 read its 16 chunks (${read0} chunks, ${first.bytes_read - start.bytes_read} bytes)`);
  check(await nextSlice(page, bigCanvas, bigData), '10 GiB dataset: slice 1 is drawn');
  const second = await io();
  const read1 = second.chunks_read - start.chunks_read;
  check(read1 === 32, `10 GiB dataset: slices 0 and 1 read 32 chunks in all (${read1}, ${second.bytes_read - start.bytes_read} bytes of a 10 GiB dataset)`);
  await page.screenshot({ path: path.join(shots, 'big.png') });

  check(errors.length === 0, `no console errors${errors.length ? `: ${errors.join(' | ')}` : ''}`);
} catch (e) {
  failures += 1;
  console.log(`not ok - ${e.stack ?? e}`);
} finally {
  await context.close();
  server.kill();
  rmSync(profile, { recursive: true, force: true });
}

console.log(`screenshots in ${shots}`);
console.log(`${passes} passed, ${failures} failed`);
process.exit(failures ? 1 : 0);
