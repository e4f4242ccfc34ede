// The viewer's script (web/index.html): a dropped or chosen .mmp file is
// decoded by the WebAssembly decoder (mmp.js and mmp.wasm, which make web
// builds from libmmpdec and web/mmp_wasm.c) to 8-bit RGBA and drawn on the
// canvas at its own size, with its size, bit depth, channels and decode
// time; an error is shown as the decoder gives it. document.body's
// data-state says where the page is (loading, ready, decoding, shown,
// error) and data-ms the last decode's time: tests/web/check-web.js reads
// them.
'use strict';

const CHANNELS = ['', 'grey', 'grey and alpha', 'RGB', 'RGB and alpha'];
const page = {
  drop: document.getElementById('drop'),
  file: document.getElementById('file'),
  info: document.getElementById('info'),
  error: document.getElementById('error'),
  canvas: document.getElementById('image'),
};
let decoder = null;

function setState(state) {
  document.body.dataset.state = state;
}

function showError(message) {
  page.canvas.hidden = true;
  page.info.textContent = '';
  page.error.textContent = message;
  setState('error');
}

// The bits of a maxval 2^k - 1, else the maxval itself.
function depthText(maxval) {
  const k = Math.round(Math.log2(maxval + 1));
  return 2 ** k - 1 === maxval ? `${k}-bit` : `maxval ${maxval}`;
}

// Decodes the bytes of a whole file: {width, height, channels, maxval,
// rgba, ms}, or throws an Error with the decoder's reason.
function decode(bytes) {
  const m = decoder;
  const buf = m._malloc(bytes.length || 1);
  if (!buf)
    throw new Error('out of memory for the file');
  m.HEAPU8.set(bytes, buf);
  const t0 = performance.now();
  const err = m._mmp_web_decode(buf, bytes.length);
  const ms = performance.now() - t0;
  m._free(buf);
  if (err) {
    const reason = m.UTF8ToString(m._mmp_web_error());
    m._mmp_web_release();
    throw new Error(reason);
  }
  const width = m._mmp_web_width(), height = m._mmp_web_height();
  const at = m._mmp_web_rgba() >>> 0;
  const rgba = new Uint8ClampedArray(m.HEAPU8.buffer.slice(at, at + width * height * 4));
  const image = {width, height, channels: m._mmp_web_channels(), maxval: m._mmp_web_maxval(),
                 rgba, ms};
  m._mmp_web_release();
  return image;
}

async function show(file) {
  if (!decoder)
    return;
  setState('decoding');
  page.error.textContent = '';
  page.info.textContent = `Decoding ${file.name}\u2026`;
  let image;
  try {
    image = decode(new Uint8Array(await file.arrayBuffer()));
  } catch (e) {
    showError(`${file.name}: ${e.message}`);
    return;
  }
  const c = page.canvas;
  c.width = image.width;
  c.height = image.height;
  c.getContext('2d').putImageData(new ImageData(image.rgba, image.width, image.height), 0, 0);
  c.hidden = false;
  page.info.textContent = `${file.name}: ${image.width} \u00d7 ${image.height}, ` +
      `${depthText(image.maxval)}, ${CHANNELS[image.channels]}; ` +
      `decoded in ${image.ms.toFixed(1)} ms (${file.size} bytes)`;
  document.body.dataset.ms = image.ms;
  setState('shown');
}

page.file.addEventListener('change', () => {
  const file = page.file.files[0];
  if (file)
    show(file).finally(() => { page.file.value = ''; }); // the same file again decodes again
});
// The whole window takes a drop (a file dropped beside the zone would
// otherwise be opened by the browser in place of the page).
window.addEventListener('dragover', (e) => {
  e.preventDefault();
  page.drop.classList.add('over');
});
window.addEventListener('dragleave', () => page.drop.classList.remove('over'));
window.addEventListener('drop', (e) => {
  e.preventDefault();
  page.drop.classList.remove('over');
  const file = e.dataTransfer.files[0];
  if (file)
    show(file);
});

createMmpModule().then((m) => {
  decoder = m;
  page.info.textContent = 'Ready: drop or open an .mmp file.';
  setState('ready');
}, (e) => showError(`The decoder did not load: ${e}`));
