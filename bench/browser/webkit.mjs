// parklot's lock arena in WebKit ("wasm-webkit"): Chromium's arena rounds
// (arena-suite.mjs) in Debian's WebKitGTK (Safari's engine,
// JavaScriptCore), its MiniBrowser driven through WebKitWebDriver (plain W3C
// WebDriver) under xvfb-run, with JSC_useSharedArrayBuffer=1, as the browser
// tests drive it (tests/browser/webdriver.mjs).
//
//   npm run build:demo && node bench/browser/webkit.mjs [--quick] [--out DIR]
//
// Writes DIR/wasm-webkit.json and DIR/wasm-webkit.md (DIR: bench/results).
import { WEBKIT_DRIVER, launchWebKit } from '../../tests/browser/webdriver.mjs';
import { runArenaSuite } from './arena-suite.mjs';

await runArenaSuite({
  suite: 'wasm-webkit',
  engine: 'WebKit',
  path: WEBKIT_DRIVER,
  how: 'scripts/setup.sh bench installs webkit2gtk-driver and xvfb; PARKLOT_WEBKIT_DRIVER names another',
  note: 'Debian\'s WebKitGTK MiniBrowser, driven through WebKitWebDriver (plain W3C WebDriver) under `xvfb-run`, with `JSC_useSharedArrayBuffer=1` (without it WebKitGTK has no `SharedArrayBuffer`); there the npm package takes `Lock`\'s uncontended calls in JS (js/src/engine.ts). Plain WebDriver reports no page errors, so none are checked here.',
  launch: async () => {
    const webkit = await launchWebKit({ sharedArrayBuffer: true });
    // The calls the arena makes of a page (arena.mjs), over WebDriver's scripts.
    const page = {
      goto: (url) => webkit.goto(url),
      waitForSelector: (selector, { timeout }) => webkit.waitFor(`return document.querySelector(${JSON.stringify(selector)}) !== null`, timeout),
      evaluate: (fn, arg) => webkit.execute(`return (${fn})(arguments[0]);`, arg),
      on: () => {},
    };
    return { name: `WebKitGTK ${webkit.version}`, pid: webkit.pid, page, close: webkit.stop };
  },
});
