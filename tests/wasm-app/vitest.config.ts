import { chromiumSuite } from '../browser/suite-config.js';

// The wasm-bindgen app (tests/wasm-app, built by scripts/build-wasm-app.sh)
// in Debian's Chromium through playwright-core, served by demo/serve.mjs.
export default chromiumSuite('tests/wasm-app', 'wasm-app', { testTimeout: 120_000, hookTimeout: 60_000 });
