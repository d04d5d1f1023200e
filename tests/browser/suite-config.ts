import { defineConfig, type ViteUserConfig } from 'vitest/config';
import { fileURLToPath } from 'node:url';

/**
 * The vitest config of a suite driven in Chromium (tests/browser,
 * tests/wasm-app): its test files and global setup in `dir`, run from the
 * repository's root one file at a time (one Chromium with busy workers at a
 * time: the machine has 2 cores), tallied by the summary reporter as `label`.
 */
export function chromiumSuite(dir: string, label: string, timeouts: { testTimeout: number; hookTimeout: number }): ViteUserConfig {
  return defineConfig({
    root: fileURLToPath(new URL('../..', import.meta.url)),
    test: {
      include: [`${dir}/**/*.test.ts`],
      globalSetup: [`${dir}/global-setup.ts`],
      reporters: ['default', ['./tests/js/summary-reporter.ts', { label }]],
      pool: 'forks',
      fileParallelism: false,
      ...timeouts,
    },
  });
}
