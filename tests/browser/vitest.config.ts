import { chromiumSuite } from './suite-config.js';

// The browser tests: the demo built (tests/browser/global-setup.ts), served by
// demo/serve.mjs and driven in Debian's Chromium through playwright-core.
export default chromiumSuite('tests/browser', 'browser', { testTimeout: 90_000, hookTimeout: 120_000 });
