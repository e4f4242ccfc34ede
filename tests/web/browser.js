// Headless Chromium driven over the DevTools protocol on a pipe
// (--remote-debugging-pipe: JSON messages ended by a NUL byte, written to
// the browser's fd 3 and read from its fd 4), so that the web tests need
// nothing but Debian's chromium and node: no npm package.
'use strict';
const {spawn} = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');

class Page {
  constructor(browser, sessionId) {
    this.browser = browser;
    this.sessionId = sessionId;
  }

  send(method, params) {
    return this.browser.send(method, params, this.sessionId);
  }

  // The value of a JavaScript expression in the page (a promise awaited).
  async evaluate(expression) {
    const r = await this.send('Runtime.evaluate',
                              {expression, returnByValue: true, awaitPromise: true});
    if (r.exceptionDetails) {
      const d = r.exceptionDetails;
      throw new Error(`in the page: ${d.exception ? d.exception.description : d.text}`);
    }
    return r.result.value;
  }

  // Polls an expression until it is truthy; its value, or an error after
  // `seconds`.
  async waitFor(expression, seconds = 30) {
    const end = Date.now() + seconds * 1000;
    for (;;) {
      const v = await this.evaluate(expression);
      if (v)
        return v;
      if (Date.now() > end)
        throw new Error(`timed out waiting for ${expression}`);
      await new Promise((res) => setTimeout(res, 20));
    }
  }

  // Chooses files in the file input `selector`, as a user does.
  async setFiles(selector, files) {
    const {root} = await this.send('DOM.getDocument', {depth: 0});
    const {nodeId} = await this.send('DOM.querySelector', {nodeId: root.nodeId, selector});
    if (!nodeId)
      throw new Error(`no ${selector} in the page`);
    await this.send('DOM.setFileInputFiles', {nodeId, files});
  }
}

class Browser {
  // Starts the browser (CHROMIUM or /usr/bin/chromium). --no-sandbox: CI
  // runs as root, where Chromium's sandbox refuses to start;
  // --disable-dev-shm-usage: a container's /dev/shm is often too small.
  static async launch() {
    const b = new Browser();
    b.profile = fs.mkdtempSync(path.join(os.tmpdir(), 'mmp-web-'));
    const exe = process.env.CHROMIUM || '/usr/bin/chromium';
    const args = ['--headless', '--no-sandbox', '--disable-dev-shm-usage', '--disable-gpu',
                  '--no-first-run', '--no-default-browser-check', '--disable-extensions',
                  '--disable-sync', '--disable-background-networking', '--disable-component-update',
                  '--remote-debugging-pipe', `--user-data-dir=${b.profile}`, 'about:blank'];
    b.proc = spawn(exe, args, {stdio: ['ignore', 'ignore', 'pipe', 'pipe', 'pipe']});
    b.log = ''; // the end of the browser's stderr, for a failure's report
    b.proc.stderr.on('data', (d) => { b.log = (b.log + d).slice(-20000); });
    b.proc.on('exit', (code, sig) => b.fail(new Error(`chromium exited (${code ?? sig})`)));
    b.proc.on('error', (e) => b.fail(e));
    b.proc.stdio[4].on('data', (d) => b.receive(d));
    for (const fd of [3, 4])
      b.proc.stdio[fd].on('error', (e) => b.fail(new Error(`chromium's pipe: ${e.message}`)));
    try {
      await b.send('Target.setDiscoverTargets', {discover: true});
    } catch (e) {
      await b.close();
      throw e;
    }
    return b;
  }

  constructor() {
    this.nextId = 1;
    this.pending = new Map();
    this.listeners = [];
    this.inbox = Buffer.alloc(0);
    this.failed = null;
  }

  fail(e) {
    this.failed = this.failed || e;
    for (const {reject} of this.pending.values())
      reject(this.failed);
    this.pending.clear();
  }

  receive(data) {
    this.inbox = Buffer.concat([this.inbox, data]);
    let end;
    while ((end = this.inbox.indexOf(0)) >= 0) {
      const msg = JSON.parse(this.inbox.subarray(0, end).toString('utf8'));
      this.inbox = this.inbox.subarray(end + 1);
      if (msg.id && this.pending.has(msg.id)) {
        const {resolve, reject, method} = this.pending.get(msg.id);
        this.pending.delete(msg.id);
        if (msg.error)
          reject(new Error(`${method}: ${msg.error.message}`));
        else
          resolve(msg.result);
      } else if (msg.method) {
        for (const fn of this.listeners)
          fn(msg);
      }
    }
  }

  send(method, params = {}, sessionId = undefined) {
    if (this.failed)
      return Promise.reject(this.failed);
    const id = this.nextId++;
    const msg = {id, method, params};
    if (sessionId)
      msg.sessionId = sessionId;
    return new Promise((resolve, reject) => {
      this.pending.set(id, {resolve, reject, method});
      this.proc.stdio[3].write(JSON.stringify(msg) + '\0');
    });
  }

  // A new tab at `url`, once its load event has fired; the page's uncaught
  // errors and console messages are collected in page.messages.
  async open(url) {
    const {targetId} = await this.send('Target.createTarget', {url: 'about:blank'});
    const {sessionId} = await this.send('Target.attachToTarget', {targetId, flatten: true});
    const page = new Page(this, sessionId);
    page.messages = [];
    this.listeners.push((msg) => {
      if (msg.sessionId !== sessionId)
        return;
      if (msg.method === 'Runtime.exceptionThrown')
        page.messages.push(msg.params.exceptionDetails.exception?.description ?? 'exception');
      else if (msg.method === 'Runtime.consoleAPICalled')
        page.messages.push(msg.params.args.map((a) => a.value ?? a.description).join(' '));
    });
    await page.send('Runtime.enable');
    await page.send('Page.enable');
    const loaded = new Promise((resolve) => this.listeners.push((msg) => {
      if (msg.sessionId === sessionId && msg.method === 'Page.loadEventFired')
        resolve();
    }));
    const nav = await page.send('Page.navigate', {url});
    if (nav.errorText)
      throw new Error(`${url}: ${nav.errorText}`);
    await loaded;
    return page;
  }

  // Closes the browser, waits for it to exit (a few seconds at most, then
  // kills it) and removes its profile.
  async close() {
    this.proc.removeAllListeners('exit');
    const gone = () => this.proc.exitCode !== null || this.proc.signalCode !== null;
    const exited = new Promise((resolve) => {
      this.proc.once('exit', resolve);
      this.proc.once('error', resolve); // it never started
    });
    if (!gone()) {
      this.send('Browser.close').catch(() => {}); // it may be gone already
      const timer = setTimeout(() => this.proc.kill('SIGKILL'), 5000);
      await Promise.race([exited, new Promise((r) => setTimeout(r, 6000))]);
      clearTimeout(timer);
    }
    fs.rmSync(this.profile, {recursive: true, force: true, maxRetries: 3});
  }
}

module.exports = {Browser};
