// A static http server of one folder on the loopback interface, on a free
// port: the page's WebAssembly must come over http, not from a file: URL.
'use strict';
const fs = require('fs');
const http = require('http');
const path = require('path');

const TYPES = {'.html': 'text/html; charset=utf-8', '.js': 'text/javascript',
               '.wasm': 'application/wasm'};

// Resolves to {url, close()}: url ends in '/'.
function serve(dir) {
  const root = path.resolve(dir);
  const server = http.createServer((req, res) => {
    const name = decodeURIComponent(new URL(req.url, 'http://x').pathname);
    const file = path.join(root, name.endsWith('/') ? `${name}index.html` : name);
    if (!file.startsWith(root + path.sep) || !fs.existsSync(file) || !fs.statSync(file).isFile()) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, {'Content-Type': TYPES[path.extname(file)] || 'application/octet-stream',
                        'Cache-Control': 'no-store'});
    fs.createReadStream(file).pipe(res);
  });
  return new Promise((resolve, reject) => {
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => resolve({
      url: `http://127.0.0.1:${server.address().port}/`,
      close: () => new Promise((r) => server.close(r)),
    }));
  });
}

module.exports = {serve};
