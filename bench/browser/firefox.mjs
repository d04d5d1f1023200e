// parklot's lock arena in Firefox ("wasm-firefox"): Chromium's arena rounds
// (arena-suite.mjs) in Debian's Firefox ESR, headless, driven through
// WebDriver BiDi by puppeteer-core as the browser tests drive it.
//
//   npm run build:demo && node bench/browser/firefox.mjs [--quick] [--out DIR]
//
// Writes DIR/wasm-firefox.json and DIR/wasm-firefox.md (DIR: bench/results).
import { FIREFOX, launchFirefox } from '../../tests/browser/firefox.mjs';
import { runArenaSuite } from './arena-suite.mjs';

await runArenaSuite({
  suite: 'wasm-firefox',
  engine: 'Firefox',
  path: FIREFOX,
  how: 'scripts/setup.sh bench installs firefox-esr; PARKLOT_FIREFOX names another',
  note: 'Debian\'s Firefox ESR, headless, driven through WebDriver BiDi (puppeteer-core).',
  launch: async () => {
    const firefox = await launchFirefox();
    return { name: `Firefox ${firefox.version}`, pid: firefox.pid, page: await firefox.browser.newPage(), close: firefox.close };
  },
});
