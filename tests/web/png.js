// A PNG file as a viewer shows it in 8 bits: RGBA, 4 bytes a pixel. Only
// what mmp-dec writes: grey, grey and alpha, RGB, RGBA at 1, 2, 4, 8 or 16
// bits, not interlaced, no palette. Grey of 1, 2 or 4 bits is scaled to 8
// (v * 255 / (2^depth - 1)), 16 bits keep their top byte; the sBIT chunk's
// significant bits are returned too (the bit depth the viewer names).
'use strict';
const zlib = require('zlib');

const CHANNELS = {0: 1, 4: 2, 2: 3, 6: 4};

function readPng(buf) {
  const sig = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  if (!buf.subarray(0, 8).equals(sig))
    throw new Error('not a PNG file');
  let width, height, depth, type, sbit = 0;
  const idat = [];
  for (let at = 8; at < buf.length;) {
    const len = buf.readUInt32BE(at), kind = buf.toString('latin1', at + 4, at + 8);
    const data = buf.subarray(at + 8, at + 8 + len);
    if (kind === 'IHDR') {
      width = data.readUInt32BE(0);
      height = data.readUInt32BE(4);
      depth = data[8];
      type = data[9];
      if (!(type in CHANNELS) || data[12] !== 0)
        throw new Error(`PNG colour type ${type} or interlace ${data[12]}: not read here`);
    } else if (kind === 'sBIT') {
      sbit = data[0];
    } else if (kind === 'IDAT') {
      idat.push(data);
    }
    at += 12 + len;
  }
  const ch = CHANNELS[type];
  const raw = zlib.inflateSync(Buffer.concat(idat));
  const bpp = Math.max(1, (ch * depth) >> 3);          // bytes a pixel, for the filters
  const stride = Math.ceil((width * ch * depth) / 8);
  const rows = Buffer.alloc(stride * height);
  for (let y = 0; y < height; y++) {
    const filter = raw[y * (stride + 1)];
    const src = raw.subarray(y * (stride + 1) + 1, (y + 1) * (stride + 1));
    const row = rows.subarray(y * stride, (y + 1) * stride);
    const up = y ? rows.subarray((y - 1) * stride, y * stride) : Buffer.alloc(stride);
    for (let i = 0; i < stride; i++) {
      const a = i >= bpp ? row[i - bpp] : 0, b = up[i], c = i >= bpp ? up[i - bpp] : 0;
      let p;
      switch (filter) {
      case 0: p = 0; break;
      case 1: p = a; break;
      case 2: p = b; break;
      case 3: p = (a + b) >> 1; break;
      case 4: {
        const pa = Math.abs(b - c), pb = Math.abs(a - c), pc = Math.abs(a + b - 2 * c);
        p = pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
        break;
      }
      default: throw new Error(`PNG filter ${filter}`);
      }
      row[i] = (src[i] + p) & 255;
    }
  }
  // Sample s of row y, in 8 bits.
  const full = (1 << depth) - 1;
  const sample = (y, s) => {
    if (depth === 16)
      return rows[y * stride + 2 * s];
    if (depth === 8)
      return rows[y * stride + s];
    const bit = s * depth, byte = rows[y * stride + (bit >> 3)];
    const v = (byte >> (8 - depth - (bit & 7))) & full;
    return Math.round((v * 255) / full);
  };
  const rgba = Buffer.alloc(width * height * 4);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const o = 4 * (y * width + x), s = x * ch;
      if (ch <= 2) {
        rgba[o] = rgba[o + 1] = rgba[o + 2] = sample(y, s);
      } else {
        for (let c = 0; c < 3; c++)
          rgba[o + c] = sample(y, s + c);
      }
      rgba[o + 3] = ch === 2 || ch === 4 ? sample(y, s + ch - 1) : 255;
    }
  }
  return {width, height, channels: ch, bits: sbit || depth, rgba};
}

module.exports = {readPng};
