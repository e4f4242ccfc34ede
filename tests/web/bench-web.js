// Decode time of the page's WebAssembly decoder in headless Chromium
// against mmp-dec on one thread (OMP_NUM_THREADS=1), medians of RUNS
// decodes of each file, taken in turns (browser, native) so that a busy
// machine weighs on both alike.
//
//   node tests/web/bench-web.js SITE MMP_DEC RUNS FILE.mmp...
//
// The browser's time is the page's own (performance.now() around the
// module's decode call, which includes the conversion to RGBA), the
// native one mmp-dec --stats's (the library's decode call). Prints one
// line a file.
'use strict';
const {execFileSync} = require('child_process');
const path = require('path');
const {Browser} = require('./browser');
const {serve} = require('./serve');

const median = (v) => {
  const s = [...v].sort((a, b) => a - b), m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

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
    await page.waitFor(`document.body.dataset.state === 'ready'`);
    console.log('file                      wasm ms (median, min)   native ms (median, min)   ratio');
    for (const f of files) {
      const wasm = [], native = [];
      for (let r = 0; r < runs; r++) {
        await page.evaluate(`document.body.dataset.state = 'waiting'`);
        await page.setFiles('#file', [path.resolve(f)]);
        const state = await page.waitFor(`['shown', 'error'].includes(document.body.dataset.state)
                                          && document.body.dataset.state`);
        if (state !== 'shown')
          throw new Error(`${f}: the page shows an error`);
        wasm.push(Number(await page.evaluate('document.body.dataset.ms')));
        const out = execFileSync(mmpDec, ['--stats', f, '-o', '/dev/null'],
                                 {env: {...process.env, OMP_NUM_THREADS: '1'}}).toString();
        native.push(1000 * Number(/seconds=([0-9.]+)/.exec(out)[1]));
      }
      const w = median(wasm), n = median(native);
      console.log(`${path.basename(f).padEnd(26)}${w.toFixed(1).padStart(8)} ` +
                  `${Math.min(...wasm).toFixed(1).padStart(8)}${n.toFixed(1).padStart(19)} ` +
                  `${Math.min(...native).toFixed(1).padStart(8)}${(w / n).toFixed(2).padStart(14)}`);
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
