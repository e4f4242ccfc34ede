// Decode time of the page's WebAssembly decoder in headless Chromium
// against mmp-dec on one thread (OMP_NUM_THREADS=1): medians and minima of
// RUNS decodes of each file (after one unmeasured), taken in turns
// (browser, native) so that a busy machine weighs on both alike.
//
//   node tests/web/bench-web.js SITE MMP_DEC RUNS FILE.mmp...
//
// Browser: the page's decode() (web/view.js: the module's decode call and
// the copy of its RGBA) called on the file's bytes; wall time as the page
// shows it (performance.now()), and CPU time of the page's main thread
// over the call (DevTools' ThreadTime). Native: mmp-dec --stats's seconds
// (the file read and mmp_decode), and the CPU time (user and system) of
// the whole mmp-dec process, its start and its output to /dev/null
// included. Prints one line a file, in milliseconds.
'use strict';
const {spawnSync} = require('child_process');
const fs = require('fs');
const path = require('path');
const {Browser} = require('./browser');
const {serve} = require('./serve');

const median = (v) => {
  const s = [...v].sort((a, b) => a - b), m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

async function threadTime(page) {
  const {metrics} = await page.send('Performance.getMetrics');
  return metrics.find((m) => m.name === 'ThreadTime').value * 1000;
}

// One native decode: [wall ms by --stats, CPU ms of the process].
function native(mmpDec, file) {
  const r = spawnSync('bash', ['-c', 'TIMEFORMAT="cpu=%3U+%3S"; time "$0" --stats "$1" -o /dev/null',
                               mmpDec, file], {env: {...process.env, OMP_NUM_THREADS: '1'}});
  const out = r.stdout.toString(), err = r.stderr.toString();
  const wall = /seconds=([0-9.]+)/.exec(out), cpu = /cpu=([0-9.]+)\+([0-9.]+)/.exec(err);
  if (r.status !== 0 || !wall || !cpu)
    throw new Error(`${mmpDec} ${file}: ${err.trim()}`);
  return [1000 * Number(wall[1]), 1000 * (Number(cpu[1]) + Number(cpu[2]))];
}

const fmt = (v) => `${median(v).toFixed(1).padStart(7)} ${Math.min(...v).toFixed(1).padStart(6)}`;

async function main() {
  const [site, mmpDec, runsArg, ...files] = process.argv.slice(2);
  const runs = Number(runsArg);
  if (!files.length || !(runs > 0)) {
    console.error('usage: node tests/web/bench-web.js SITE MMP_DEC RUNS FILE.mmp...');
    process.exit(2);
  }
  const server = await serve(site);
  const browser = await Browser.launch();
  try {
    const page = await browser.open(server.url);
    await page.send('Performance.enable', {timeDomain: 'threadTicks'});
    await page.waitFor(`document.body.dataset.state === 'ready'`);
    console.log(`${runs} runs; median and minimum, ms:`);
    console.log('file                  wasm wall      wasm CPU    native wall    native CPU');
    for (const f of files) {
      const b64 = fs.readFileSync(f).toString('base64');
      await page.evaluate(`window.benchBytes = Uint8Array.from(atob('${b64}'),
                                                               (c) => c.charCodeAt(0)), 0`);
      const t = {ww: [], wc: [], nw: [], nc: []};
      for (let r = -1; r < runs; r++) {
        const c0 = await threadTime(page);
        const ms = await page.evaluate('decode(benchBytes).ms');
        const c1 = await threadTime(page);
        const [nw, nc] = native(mmpDec, f);
        if (r < 0)
          continue; // the first: the module's code is compiled by tiers as it runs
        t.ww.push(ms);
        t.wc.push(c1 - c0);
        t.nw.push(nw);
        t.nc.push(nc);
      }
      console.log(`${path.basename(f).padEnd(20)}${fmt(t.ww)}${fmt(t.wc)}${fmt(t.nw)}${fmt(t.nc)}`);
    }
  } finally {
    await browser.close();
    await server.close();
  }
}

main().catch((e) => {
  console.error(`bench-web: ${e.message}`);
  process.exit(1);
});
