import { defineConfig } from 'vitest/config';

// The JS tests run against the built package (js/dist, compiled from js/src by
// tests/js/global-setup.ts before any test file runs), loaded by Node itself,
// as users load it, and use real worker_threads.
export default defineConfig({
  test: {
    include: ['tests/js/**/*.test.ts'],
    globalSetup: ['tests/js/global-setup.ts'],
    reporters: ['default', './tests/js/summary-reporter.ts'],
    pool: 'forks',
    // --expose-gc: memory.test.ts measures the heap after a full GC.
    poolOptions: { forks: { execArgv: ['--expose-gc'] } },
    // Most files start 2 to 5 busy workers: on a 2-core machine, running the
    // files one after another is faster than fighting over the cores.
    fileParallelism: false,
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // Load the package and its wasm-bindgen glue with Node's own loader, as
    // users' Node does.
    server: { deps: { external: [/\/js\/dist\//, /\/js\/wasm-pkg(-bench)?\//] } },
  },
});
