import { defineConfig } from 'vitest/config';
import { fileURLToPath } from 'node:url';

// The browser tests: the demo built (tests/browser/global-setup.ts), served by
// demo/serve.mjs and driven in Debian's Chromium through playwright-core.
export default defineConfig({
  root: fileURLToPath(new URL('../..', import.meta.url)),
  test: {
    include: ['tests/browser/**/*.test.ts'],
    globalSetup: ['tests/browser/global-setup.ts'],
    reporters: ['default', ['./tests/js/summary-reporter.ts', { label: 'browser' }]],
    pool: 'forks',
    // One Chromium with busy workers at a time: the machine has 2 cores.
    fileParallelism: false,
    testTimeout: 90_000,
    hookTimeout: 120_000,
  },
});
