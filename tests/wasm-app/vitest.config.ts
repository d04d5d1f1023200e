import { defineConfig } from 'vitest/config';
import { fileURLToPath } from 'node:url';

// The wasm-bindgen app (tests/wasm-app, built by scripts/build-wasm-app.sh)
// in Debian's Chromium through playwright-core, served by demo/serve.mjs.
export default defineConfig({
  root: fileURLToPath(new URL('../..', import.meta.url)),
  test: {
    include: ['tests/wasm-app/**/*.test.ts'],
    globalSetup: ['tests/wasm-app/global-setup.ts'],
    reporters: ['default', ['./tests/js/summary-reporter.ts', { label: 'wasm-app' }]],
    pool: 'forks',
    fileParallelism: false,
    testTimeout: 120_000,
    hookTimeout: 60_000,
  },
});
