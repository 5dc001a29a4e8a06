// test.cjs: attnviz's browser build in headless Chromium, through the DevTools
// protocol (chrome-remote-interface). tools/web/test.sh sets it up and runs it.
//
// 1. Serves ATTNVIZ_WEB_DIR on 127.0.0.1 (a plain static server: it counts the
//    bytes it sends) and opens the page at 1280 x 720 canvas pixels.
// 2. Waits for the first frame, then sends →, L and C as key presses and checks
//    that the canvas changes after each, and that the address follows
//    (step, lang, view).
// 3. Opens a link ?lesson=ID&lang=zh&step=N and checks that the page shows
//    that step (its address and its canvas); the canvas and the frame S saves
//    are compared with the native `attnviz export` of the same step
//    (ATTNVIZ_NATIVE_PNG) within a small tolerance.
//    A tap on a cell shows its derivation; a tap elsewhere steps. E, a
//    number and Enter edit a cell.
// 4. Stops the server and checks that the page still steps (offline once loaded).
// 5. Prints the budgets: first frame after opening, bytes sent, and the time of
//    each pass that drew a frame while the lesson plays (p50, p99), with the
//    browser's own frame intervals.
// Screenshots go to ATTNVIZ_WEB_SHOTS when it is set.
'use strict';
const CDP = require('chrome-remote-interface');
const http = require('http');
const fs = require('fs');
const path = require('path');
const { spawn } = require('child_process');

const env = (name) => {
  const v = process.env[name];
  if (!v) throw new Error(`test.cjs: ${name} is not set (run tools/web/test.sh)`);
  return v;
};
const webDir = env('ATTNVIZ_WEB_DIR');
const nativePng = env('ATTNVIZ_NATIVE_PNG');
const lesson = env('ATTNVIZ_LESSON');
const step = Number(env('ATTNVIZ_STEP'));
const work = env('ATTNVIZ_WORK');
const shots = process.env.ATTNVIZ_WEB_SHOTS || '';
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
let failures = 0;
let passes = 0;
function check(ok, what) {
  if (ok) passes++;
  else failures++;
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${what}`);
}

// ---- the server ----
const types = { '.html': 'text/html', '.js': 'text/javascript', '.wasm': 'application/wasm', '.svg': 'image/svg+xml',
                '.png': 'image/png', '.txt': 'text/plain; charset=utf-8', '.data': 'application/octet-stream' };
let bytesSent = 0;
const requests = [];
const server = http.createServer((req, res) => {
  const url = new URL(req.url, 'http://127.0.0.1');
  let file = url.pathname === '/' ? '/index.html' : decodeURIComponent(url.pathname);
  const full = file === '/__native.png' ? nativePng : path.join(webDir, path.normalize(file));
  if (file !== '/__native.png' && !full.startsWith(webDir + path.sep)) { res.writeHead(403); res.end(); return; }
  fs.readFile(full, (err, data) => {
    if (err) { res.writeHead(404); res.end(); return; }
    res.writeHead(200, { 'Content-Type': types[path.extname(full)] || 'application/octet-stream',
                         'Content-Length': data.length });
    res.end(data);
    if (file !== '/__native.png') { bytesSent += data.length; requests.push(`${file} ${data.length}`); }
  });
});

// ---- the browser ----
function startChromium() {
  const args = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
                '--disable-background-networking', '--disable-component-update', '--disable-sync',
                '--enable-unsafe-swiftshader', `--user-data-dir=${path.join(work, 'profile')}`,
                '--remote-debugging-port=0', '--window-size=1280,800', 'about:blank'];
  const proc = spawn(process.env.ATTNVIZ_CHROMIUM || 'chromium', args, { stdio: ['ignore', 'ignore', 'pipe'] });
  return new Promise((resolve, reject) => {
    let text = '';
    const timer = setTimeout(() => reject(new Error(`chromium did not start:\n${text}`)), 30000);
    proc.stderr.on('data', (d) => {
      text += d;
      const m = /DevTools listening on ws:\/\/127\.0\.0\.1:(\d+)\//.exec(text);
      if (m) { clearTimeout(timer); resolve({ proc, port: Number(m[1]) }); }
    });
    proc.on('exit', (code) => reject(new Error(`chromium exited (${code}):\n${text}`)));
  });
}

async function main() {
  await new Promise((r) => server.listen(0, '127.0.0.1', r));
  const base = `http://127.0.0.1:${server.address().port}/`;
  const { proc, port } = await startChromium();
  let client;
  try {
    client = await CDP({ port });
    const { Page, Runtime, Input, Emulation, Tracing } = client;
    await Page.enable();
    await Runtime.enable();
    const consoleLines = [];
    Runtime.consoleAPICalled(({ args }) => consoleLines.push(args.map((a) => a.value).join(' ')));

    const evaluate = async (expression) => {
      const r = await Runtime.evaluate({ expression, awaitPromise: true, returnByValue: true });
      if (r.exceptionDetails) throw new Error(`${expression}: ${JSON.stringify(r.exceptionDetails)}`);
      return r.result.value;
    };
    const waitFor = async (expression, what, ms = 20000) => {
      const end = Date.now() + ms;
      for (;;) {
        const v = await evaluate(expression);
        if (v) return v;
        if (Date.now() > end) throw new Error(`timed out waiting for ${what}\n${consoleLines.join('\n')}`);
        await sleep(50);
      }
    };
    const shot = async (name) => {
      if (!shots) return;
      const { data } = await Page.captureScreenshot({ format: 'png' });
      fs.mkdirSync(shots, { recursive: true });
      fs.writeFileSync(path.join(shots, name + '.png'), Buffer.from(data, 'base64'));
    };
    // a digest of the canvas's pixels, to see that it changed
    const digest = () => evaluate(`(() => {
      const c = document.getElementById('canvas');
      const d = new Uint32Array(c.getContext('2d').getImageData(0, 0, c.width, c.height).data.buffer);
      let h = 2166136261 >>> 0;
      for (let i = 0; i < d.length; i++) h = Math.imul(h ^ d[i], 16777619) >>> 0;
      return c.width + 'x' + c.height + ':' + h;
    })()`);
    const keys = {
      ArrowRight: { key: 'ArrowRight', code: 'ArrowRight', windowsVirtualKeyCode: 39 },
      Home: { key: 'Home', code: 'Home', windowsVirtualKeyCode: 36 },
      l: { key: 'l', code: 'KeyL', windowsVirtualKeyCode: 76, text: 'l' },
      c: { key: 'c', code: 'KeyC', windowsVirtualKeyCode: 67, text: 'c' },
      s: { key: 's', code: 'KeyS', windowsVirtualKeyCode: 83, text: 's' },
      f: { key: 'f', code: 'KeyF', windowsVirtualKeyCode: 70, text: 'f' },
      q: { key: 'q', code: 'KeyQ', windowsVirtualKeyCode: 81, text: 'q' },
      p: { key: 'p', code: 'KeyP', windowsVirtualKeyCode: 80, text: 'p' },
      e: { key: 'e', code: 'KeyE', windowsVirtualKeyCode: 69, text: 'e' },
      7: { key: '7', code: 'Digit7', windowsVirtualKeyCode: 55, text: '7' },
      Enter: { key: 'Enter', code: 'Enter', windowsVirtualKeyCode: 13, text: '\r' },
      Escape: { key: 'Escape', code: 'Escape', windowsVirtualKeyCode: 27 },
    };
    // a key; with modifiers 2, with Control held (SDL follows Control's own key events)
    const control = { key: 'Control', code: 'ControlLeft', windowsVirtualKeyCode: 17 };
    const press = async (name, modifiers = 0) => {
      const k = keys[name];
      if (modifiers & 2) await Input.dispatchKeyEvent({ type: 'rawKeyDown', modifiers, ...control });
      await Input.dispatchKeyEvent({ type: modifiers ? 'rawKeyDown' : 'keyDown', modifiers,
                                     ...(modifiers ? { ...k, text: undefined } : k) });
      await Input.dispatchKeyEvent({ type: 'keyUp', modifiers, key: k.key, code: k.code,
                                     windowsVirtualKeyCode: k.windowsVirtualKeyCode });
      if (modifiers & 2) await Input.dispatchKeyEvent({ type: 'keyUp', modifiers: 0, ...control });
    };
    // The frame on screen is final when the program says so after a pass
    // (src/app/web/show_web.c): nothing animates or is being computed, it
    // was drawn at the canvas's size and, given since, it came after that
    // many frames. Its digest.
    const frames = () => evaluate('window.attnvizFrames || 0');
    const settle = async (since = -1, ms = 60000) => {
      await waitFor(`(() => {
        const c = document.getElementById('canvas');
        return window.attnvizIdle && window.attnvizDrawn === c.width + 'x' + c.height && window.attnvizFrames > ${since};
      })()`, 'the frame on screen to be final', ms).catch(async (e) => {
        const seen = await evaluate(`JSON.stringify({ frames: window.attnvizFrames, idle: window.attnvizIdle,
          drawn: window.attnvizDrawn, canvas: canvas.width + 'x' + canvas.height, css: canvas.clientWidth + 'x' +
          canvas.clientHeight, window: innerWidth + 'x' + innerHeight, fullscreen: !!document.fullscreenElement })`);
        throw new Error(`${e.message}\n(since ${since}: ${seen})`);
      });
      return digest();
    };
    // a key, and the frame it leads to
    const pressed = async (name, modifiers = 0) => {
      const since = await frames();
      await press(name, modifiers);
      return settle(since);
    };
    const state = () => evaluate('location.search');
    // canvas 1280 x 720: the page's bar is below it. Resizing clears a
    // canvas: the digest of the frame drawn after the resize.
    const fitCanvas = async () => {
      const since = await frames();
      await Emulation.setDeviceMetricsOverride({ width: 1280, height: 760, deviceScaleFactor: 1, mobile: false });
      const bar = await evaluate(`document.getElementById('bar').getBoundingClientRect().height`);
      await Emulation.setDeviceMetricsOverride({ width: 1280, height: 720 + Math.round(bar), deviceScaleFactor: 1,
                                                 mobile: false });
      await waitFor(`(() => { const c = document.getElementById('canvas'); return c.width === 1280 && c.height === 720; })()`,
                    'the canvas to follow the window to 1280x720');
      return settle(since);
    };

    // 1, 2: open, first frame, keys
    await Emulation.setDeviceMetricsOverride({ width: 1280, height: 760, deviceScaleFactor: 1, mobile: false });
    await Page.navigate({ url: base });
    const firstFrame = await waitFor('window.attnvizFirstFrame', 'the first frame');
    const firstLoad = { bytes: bytesSent, requests: requests.slice() };
    check(true, `first frame ${firstFrame.toFixed(0)} ms after opening ${base}`);
    let before = await fitCanvas();
    await shot('1-opened');
    const s0 = await state();
    check(/lesson=mhsa-wo-xihuan-paobu/.test(s0) && /step=\d+/.test(s0), `the address holds the state: ${s0}`);
    const stepOf = (s) => Number(/step=(\d+)/.exec(s)[1]);

    let after = await pressed('ArrowRight');
    check(after !== before, '→ changes the canvas');
    check(stepOf(await state()) === stepOf(s0) + 1, `→ moves the address one step on: ${await state()}`);
    before = after;
    after = await pressed('l');
    check(after !== before, 'L changes the canvas');
    check(/lang=zh/.test(await state()), `L switches the address to Chinese: ${await state()}`);
    await shot('2-chinese');
    before = after;
    after = await pressed('c');
    check(after !== before, 'C changes the canvas');
    check(/view=compare/.test(await state()), `C shows single and multi-head side by side: ${await state()}`);
    await shot('3-compare');

    // 3: a link to a step, compared with the native export of that step
    // (ATTNVIZ_WEB_FRAME_LOG=FILE: the program's frame log from here on, to FILE)
    const frameLog = process.env.ATTNVIZ_WEB_FRAME_LOG || '';
    if (frameLog) await Page.addScriptToEvaluateOnNewDocument({ source: 'window.attnvizEnv = { ATTNVIZ_FRAME_LOG: "/frames.log" };' });
    await Page.navigate({ url: `${base}?lesson=${lesson}&lang=zh&step=${step}` });
    await waitFor(`window.attnvizFirstFrame && /step=${step}\\b/.test(location.search)`, `the link's step ${step}`);
    await fitCanvas();
    await shot('4-link');
    const s1 = await state();
    check(new RegExp(`lesson=${lesson}&lang=zh&step=${step}&`).test(s1), `the link opens its step: ${s1}`);
    // pixels of the canvas, or of a PNG file in the page's memory, against the native PNG
    const compare = (source) => evaluate(`(async () => {
      const pixels = async (blob) => {
        const bmp = await createImageBitmap(blob);
        const c = new OffscreenCanvas(bmp.width, bmp.height), x = c.getContext('2d');
        x.drawImage(bmp, 0, 0);
        return x.getImageData(0, 0, bmp.width, bmp.height);
      };
      const a = await pixels(await (await fetch('/__native.png')).blob());
      let b;
      if (${JSON.stringify(source)} === 'canvas') {
        const c = document.getElementById('canvas');
        b = c.getContext('2d').getImageData(0, 0, c.width, c.height);
      } else {
        b = await pixels(new Blob([Module.attnvizReadFile(${JSON.stringify(source)})], { type: 'image/png' }));
      }
      if (a.width !== b.width || a.height !== b.height) return { size: b.width + 'x' + b.height };
      let differ = 0, sum = 0;
      for (let i = 0; i < a.data.length; i += 4) {
        let m = 0;
        for (let k = 0; k < 3; k++) { const d = Math.abs(a.data[i + k] - b.data[i + k]); sum += d; if (d > m) m = d; }
        if (m > 48) differ++;
      }
      const n = a.width * a.height;
      return { size: a.width + 'x' + a.height, differ: differ / n, mean: sum / (3 * n) };
    })()`);
    const onCanvas = await compare('canvas');
    check(onCanvas.size === '1280x720' && onCanvas.differ < 0.03 && onCanvas.mean < 4,
          `the canvas at step ${step} against the native export: ${(100 * onCanvas.differ).toFixed(2)}% of pixels ` +
          `differ by more than 48, mean difference ${onCanvas.mean?.toFixed(2)} (the window's status line differs)`);
    // the files the program hands the page to download, kept in the page
    await evaluate(`Module.attnvizDownload = (p) => { (window.attnvizSaved = window.attnvizSaved || []).push(p); }`);
    const savedFile = async (n, what) => {
      const p = await waitFor(`window.attnvizSaved && window.attnvizSaved[${n}]`, what).catch((e) => {
        console.log(e.message);
        return '';
      });
      return { path: p, mode: p ? await evaluate(`FS.stat(${JSON.stringify(p)}).mode & 0o777`) : 0 };
    };
    await press('s');
    const png = await savedFile(0, 'S to save the frame');
    const onSaved = png.path ? await compare(png.path) : {};
    check(onSaved.size === '1280x720' && onSaved.differ < 0.005 && onSaved.mean < 1,
          `S's PNG (${png.path}) against the native export: ${(100 * onSaved.differ).toFixed(3)}% of pixels differ ` +
          `by more than 48, mean difference ${onSaved.mean?.toFixed(3)}`);
    check(png.mode === 0o644, `S's PNG has mode 644 in the page's memory: ${png.mode.toString(8)}`);

    // touch: a tap on a cell shows its derivation and stays on the step; a
    // tap where nothing is goes to the next step. Where the cell is and where
    // nothing is come from the frame's own layout (attnviz_web_cell, _hit).
    before = await settle();
    const cell = (await evaluate(`Module.ccall('attnviz_web_cell', 'string', ['number', 'number'], [1, 0])`))
      .split(' ').map(Number);
    const empty = await evaluate(`(() => {
      const c = document.getElementById('canvas');
      const hit = (x, y) => Module.ccall('attnviz_web_hit', 'number', ['number', 'number'], [x, y]);
      // the middle of a 48-pixel square where nothing is, scanning from the middle of the frame down
      for (let y = c.height / 2; y < c.height - 48; y += 8)
        for (let x = 24; x < c.width - 48; x += 8) {
          let none = true;
          for (let dy = 0; dy <= 48 && none; dy += 8) for (let dx = 0; dx <= 48 && none; dx += 8) none = hit(x + dx, y + dy) === 0;
          if (none) return [x + 24, y + 24];
        }
      return null;
    })()`);
    check(cell.length === 4 && empty !== null, `the layout has cell (1, 0) of step ${step} at ${cell} and nothing at ${empty}`);
    await Emulation.setTouchEmulationEnabled({ enabled: true, maxTouchPoints: 1 });
    // how long the page saw each touch last: attnviz takes a touch of under
    // 500 ms for a tap, and a loaded machine can deliver the end late
    await evaluate(`for (const t of ['touchstart', 'touchend'])
      canvas.addEventListener(t, (e) => { window.attnvizTouch = (window.attnvizTouch || []).concat([e.timeStamp]); }, true)`);
    const tap = async (x, y) => {
      const since = await frames();
      await evaluate('window.attnvizTouch = []');
      await Input.dispatchTouchEvent({ type: 'touchStart', touchPoints: [{ x, y }] });
      await sleep(60);
      await Input.dispatchTouchEvent({ type: 'touchEnd', touchPoints: [] });
      // a touch that was not taken for a tap may change nothing
      const digest = await settle(since, 15000).catch(() => settle());
      const held = await evaluate('window.attnvizTouch.length === 2 ? window.attnvizTouch[1] - window.attnvizTouch[0] : -1');
      return { digest, held };
    };
    after = (await tap(cell[0] + cell[2] / 2, cell[1] + cell[3] / 2)).digest;
    check(after !== before && stepOf(await state()) === step, `a tap on a cell shows its derivation and stays on step ${step}`);
    await shot('4-tapped-cell');
    // a touch the page saw held for 400 ms or more is not the tap meant: again
    for (let i = 0, held = 1e9; empty && held >= 400 && i < 5; i++) held = (await tap(empty[0], empty[1])).held;
    check(stepOf(await state()) === step + 1, `a tap where nothing is goes to the next step: ${await state()}`);
    await Emulation.setTouchEmulationEnabled({ enabled: false });

    // edit mode: E, a number typed, Enter changes the matrix; Ctrl+S saves
    // the lesson as a download; Esc leaves
    before = await pressed('Home');
    const editing = await pressed('e');
    check(editing !== before, 'E shows the edit cursor');
    await press('7');
    after = await pressed('Enter');
    check(after !== editing, 'typing 7 and Enter in edit mode changes the frame');
    await press('s', 2 /* Ctrl */);
    const lessonFile = await savedFile(1, 'Ctrl+S to save the lesson');
    const savedLesson = lessonFile.path && await evaluate(`(() => { try { return JSON.parse(new TextDecoder().decode(FS.readFile(` +
                                       `${JSON.stringify(lessonFile.path)}))); } catch (e) { return null; } })()`);
    check(/\.json$/.test(lessonFile.path) && savedLesson && typeof savedLesson.id === 'string' && lessonFile.mode === 0o644,
          `Ctrl+S downloads the edited lesson: ${lessonFile.path}, mode ${lessonFile.mode.toString(8)}, ` +
          `id ${savedLesson && savedLesson.id}`);
    await pressed('Escape');

    // F: the page fills the screen, without its bar; Q and Esc leave
    // fullscreen and the program goes on (a page is closed with its tab)
    await evaluate(`Module.attnvizEnded = (st) => { window.attnvizEndedWith = st; }`);
    const windowed = await evaluate(`canvas.width + 'x' + canvas.height`);
    await press('f');
    const filled = await waitFor(`(() => { const c = document.getElementById('canvas');
            return document.fullscreenElement && document.getElementById('bar').offsetHeight === 0 &&
                   c.height > ${windowed.split('x')[1]} && c.width + 'x' + c.height; })()`,
                                 'F to put the page in fullscreen, the canvas taking the bar\'s place').catch(() => '');
    await settle();
    check(filled !== '', `F puts the page in fullscreen, the canvas taking the bar's place: ${windowed} to ${filled || 'not so'}`);
    await shot('5-fullscreen');
    for (const k of ['q', 'Escape']) {
      if (k === 'Escape') {
        await press('f');
        await waitFor('!!document.fullscreenElement', 'F to put the page in fullscreen again');
      }
      await press(k);
      await waitFor('!document.fullscreenElement', `${k} to leave fullscreen`);
      before = await settle();
      after = await pressed('ArrowRight');
      check(after !== before && (await evaluate('window.attnvizEndedWith')) === undefined,
            `${k === 'q' ? 'Q' : 'Esc'} leaves fullscreen and attnviz goes on`);
    }
    check(await evaluate('window.attnvizEndedWith === undefined'), 'attnviz is still running');
    before = await fitCanvas();

    // 4: offline once loaded
    await new Promise((r) => { server.close(r); server.closeAllConnections(); });
    after = await pressed('ArrowRight');
    check(after !== before, 'with the server stopped, → still changes the canvas');

    // 5: the budgets: the default lesson played through at 1280 x 720. Each
    // pass that drew a frame leaves a mark in the browser's trace, so that
    // its CPU time (the trace's thread time of the animation frame callback
    // that ran it) can be told apart from the wall time, which includes the
    // time other programs had the processor.
    await evaluate('window.attnvizFrameTimes = []; window.attnvizRaf = [];' +
                   '(function tick(t) { window.attnvizRaf.push(t); if (window.attnvizRaf.length < 100000) requestAnimationFrame(tick); })(performance.now());' +
                   'Module.attnvizFrameMs = ((shown) => (ms) => { performance.mark("attnviz-frame"); shown(ms); })(Module.attnvizFrameMs)');
    const traced = [];
    Tracing.dataCollected(({ value }) => { for (const e of value) traced.push(e); });
    await Tracing.start({ categories: 'devtools.timeline,disabled-by-default-devtools.timeline,blink.user_timing',
                          transferMode: 'ReportEvents' });
    await press('p');
    await sleep(Number(process.env.ATTNVIZ_WEB_PLAY_MS || 15000));
    await press('p');
    const traceDone = new Promise((r) => Tracing.tracingComplete(r));
    await Tracing.end();
    await traceDone;
    const marks = traced.filter((e) => e.name === 'attnviz-frame').map((e) => e.ts).sort((a, b) => a - b);
    const cpu = traced.filter((e) => e.name === 'FireAnimationFrame' && e.ph === 'X' && e.tdur !== undefined &&
                                     marks.some((t) => t >= e.ts && t <= e.ts + e.dur)).map((e) => e.tdur / 1000);
    const times = await evaluate('window.attnvizFrameTimes.slice()');
    if (frameLog) {
      fs.writeFileSync(frameLog, await evaluate('new TextDecoder().decode(FS.readFile("/frames.log"))'));
      fs.writeFileSync(frameLog + '.cpu', cpu.map((ms) => ms.toFixed(2)).join('\n') + '\n');
    }
    const raf = await evaluate('window.attnvizRaf.slice(1).map((t, i) => t - window.attnvizRaf[i])');
    const pct = (a, q) => { const s = [...a].sort((x, y) => x - y); return s.length ? s[Math.min(s.length - 1, Math.ceil(q * s.length) - 1)] : NaN; };
    check(times.length > 0, `frames drawn while playing: ${times.length}`);
    console.log(`budget: first frame ${firstFrame.toFixed(0)} ms after opening the page (budget 3000 ms)`);
    console.log(`budget: ${firstLoad.bytes} bytes sent to open the page, ${(firstLoad.bytes / 1e6).toFixed(2)} MB ` +
                `(budget 20 MB): ${firstLoad.requests.join(', ')}`);
    console.log(`budget: frame work p50 ${pct(times, 0.5).toFixed(2)} ms p99 ${pct(times, 0.99).toFixed(2)} ms ` +
                `max ${Math.max(...times).toFixed(2)} ms over ${times.length} frames (budget p99 16.7 ms)`);
    console.log(`budget: frame CPU time p50 ${pct(cpu, 0.5).toFixed(2)} ms p99 ${pct(cpu, 0.99).toFixed(2)} ms ` +
                `max ${Math.max(...cpu).toFixed(2)} ms over ${cpu.length} frames (the thread time of each animation frame ` +
                `that drew, from the browser's trace)`);
    console.log(`budget: browser frame interval p50 ${pct(raf, 0.5).toFixed(2)} ms p99 ${pct(raf, 0.99).toFixed(2)} ms over ${raf.length} frames`);
    await shot('5-played');
  } finally {
    if (client) await client.close().catch(() => {});
    proc.kill();
    server.close();
  }
  console.log(`${passes} passed, ${failures} failed`);
  process.exit(failures ? 1 : 0);
}

main().catch((e) => { console.error(`FAIL ${e.stack || e}`); process.exit(1); });
