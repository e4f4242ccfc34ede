// make check-web: the page of web/ with the WebAssembly decoder (make web)
// in headless Chromium, against mmp-dec.
//
//   node tests/web/check-web.js SITE MMP_DEC FILE.mmp...
//
// SITE is the folder make web fills (index.html, view.js, mmp.js,
// mmp.wasm), served over http on the loopback interface. Each FILE is
// chosen in the page's file input as a user chooses it; the canvas's
// pixels (getImageData) must equal mmp-dec's PNG output of the same file
// as a viewer shows it in 8 bits (tests/web/png.js), exactly, as the
// canvas holds them (premultiplied(), below), and the page must name its
// size, bit depth and channels. The first FILE is also
// dropped on the page. Then a truncated file and a file that is not an
// .mmp file each show the error mmp-dec gives for them, and no image.
// Exits 1 on the first failure, naming it.
'use strict';
const {execFileSync, spawnSync} = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');
const {Browser} = require('./browser');
const {readPng} = require('./png');
const {serve} = require('./serve');

const CHANNELS = ['', 'grey', 'grey and alpha', 'RGB', 'RGB and alpha'];

// RGBA with the colour multiplied by alpha, as a 2D canvas holds it: its
// getImageData gives back the colour of a translucent pixel only to the
// precision of that product (and none of a transparent one), so pixels are
// compared as the canvas holds and composites them: the same alpha, and
// the same colour where it is opaque.
function premultiplied(rgba) {
  const out = Buffer.from(rgba);
  for (let i = 0; i < out.length; i += 4) {
    const a = out[i + 3];
    for (let c = 0; c < 3; c++)
      out[i + c] = Math.round((out[i + c] * a) / 255);
  }
  return out;
}

// The canvas as {width, height, rgba (Buffer)}.
async function canvasPixels(page) {
  const v = await page.evaluate(`(() => {
    const c = document.getElementById('image');
    const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
    let s = '';
    for (let i = 0; i < d.length; i += 0x8000)
      s += String.fromCharCode.apply(null, d.subarray(i, i + 0x8000));
    return {width: c.width, height: c.height, hidden: c.hidden, data: btoa(s)};
  })()`);
  return {...v, rgba: Buffer.from(v.data, 'base64')};
}

// Waits for the page to finish with a file: 'shown' or 'error'.
function settled(page) {
  return page.waitFor(`['shown', 'error'].includes(document.body.dataset.state) &&
                       document.body.dataset.state`);
}

// The page's state reset before a file, so that settled() waits for this one.
function unsettle(page) {
  return page.evaluate(`document.body.dataset.state = 'waiting'`);
}

async function checkShown(page, file, want, how) {
  const state = await settled(page);
  const text = await page.evaluate(`document.getElementById('info').textContent`);
  if (state !== 'shown') {
    const err = await page.evaluate(`document.getElementById('error').textContent`);
    throw new Error(`${file} (${how}): the page shows an error: ${err}`);
  }
  const got = await canvasPixels(page);
  if (got.hidden || got.width !== want.width || got.height !== want.height)
    throw new Error(`${file} (${how}): canvas ${got.width} x ${got.height}` +
                    `${got.hidden ? ' (hidden)' : ''}, mmp-dec ${want.width} x ${want.height}`);
  const g = premultiplied(got.rgba), w = premultiplied(want.rgba);
  for (let i = 0; i < w.length; i++) {
    if (g[i] !== w[i]) {
      const p = i >> 2, x = p % want.width, y = Math.floor(p / want.width);
      throw new Error(`${file} (${how}): pixel ${x},${y}: canvas ` +
                      `${got.rgba.subarray(4 * p, 4 * p + 4).join(',')}, mmp-dec ` +
                      `${want.rgba.subarray(4 * p, 4 * p + 4).join(',')} (RGBA)`);
    }
  }
  for (const part of [`${want.width} \u00d7 ${want.height}`, `${want.bits}-bit`,
                      `${CHANNELS[want.channels]};`]) {
    if (!text.includes(part))
      throw new Error(`${file} (${how}): the page says "${text}", not "${part}"`);
  }
}

async function checkError(page, file, mmpDec) {
  await unsettle(page);
  await page.setFiles('#file', [file]);
  const state = await settled(page);
  const r = spawnSync(mmpDec, [file, '-o', path.join(os.tmpdir(), 'mmp-web-none.png')]);
  const reason = r.stderr.toString().trim().split(': ').slice(2).join(': ');
  const err = await page.evaluate(`document.getElementById('error').textContent`);
  const hidden = await page.evaluate(`document.getElementById('image').hidden`);
  if (r.status !== 1 || !reason)
    throw new Error(`${file}: mmp-dec does not refuse it`);
  if (state !== 'error' || !hidden || err !== `${path.basename(file)}: ${reason}`)
    throw new Error(`${file}: the page is ${state}, shows "${err}", image ` +
                    `${hidden ? 'hidden' : 'shown'}; mmp-dec says "${reason}"`);
}

async function main() {
  const [site, mmpDec, ...files] = process.argv.slice(2);
  if (!files.length) {
    console.error('usage: node tests/web/check-web.js SITE MMP_DEC FILE.mmp...');
    process.exit(2);
  }
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'mmp-check-web-'));
  const server = await serve(site);
  let browser, page;
  try {
    browser = await Browser.launch();
    page = await browser.open(server.url);
    await page.waitFor(`document.body.dataset.state !== 'loading'`);
    const state = await page.evaluate('document.body.dataset.state');
    if (state !== 'ready')
      throw new Error(`the page did not load the decoder: ${state}`);
    for (const f of files) {
      const png = path.join(tmp, path.basename(f, '.mmp') + '.png');
      execFileSync(mmpDec, [f, '-o', png]);
      const want = readPng(fs.readFileSync(png));
      await unsettle(page);
      await page.setFiles('#file', [path.resolve(f)]);
      await checkShown(page, f, want, 'opened');
      if (f === files[0]) {
        await unsettle(page);
        const b64 = fs.readFileSync(f).toString('base64');
        await page.evaluate(`(() => {
          const bytes = Uint8Array.from(atob('${b64}'), (c) => c.charCodeAt(0));
          const dt = new DataTransfer();
          dt.items.add(new File([bytes], ${JSON.stringify(path.basename(f))}));
          window.dispatchEvent(new DragEvent('drop', {dataTransfer: dt, cancelable: true}));
        })()`);
        await checkShown(page, f, want, 'dropped');
      }
    }
    const bytes = fs.readFileSync(files[0]);
    const truncated = path.join(tmp, 'truncated.mmp');
    fs.writeFileSync(truncated, bytes.subarray(0, bytes.length >> 1));
    await checkError(page, truncated, mmpDec);
    const notMmp = path.join(tmp, 'not-mmp.mmp');
    fs.writeFileSync(notMmp, fs.readFileSync(path.join(site, 'index.html')));
    await checkError(page, notMmp, mmpDec);
    console.log(`check-web: ${files.length} files opened in the page in headless Chromium ` +
                'show the pixels of mmp-dec\'s PNG output in 8 bits, the first dropped too; ' +
                'a truncated file and a file not .mmp show mmp-dec\'s error');
  } catch (e) {
    console.error(`check-web: ${e.message}`);
    if (page && page.messages.length)
      console.error(`check-web: the page's console:\n  ${page.messages.join('\n  ')}`);
    // Chromium's stderr is noise (D-Bus, GPU) unless it died or hung.
    if (browser && (browser.failed || /timed out/.test(e.message)) && browser.log.trim())
      console.error(`check-web: the end of chromium's stderr:\n${browser.log.slice(-3000)}`);
    process.exitCode = 1;
  } finally {
    if (browser)
      await browser.close();
    await server.close();
    fs.rmSync(tmp, {recursive: true, force: true});
  }
}

main();
