// Shared by the tests of parklot/node (node-addon*.test.ts): the Node-API
// addon, built for this platform before a file's tests and loaded as users
// load it.
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { beforeAll } from 'vitest';

/** What parklot/node exports. */
export type Atomics = typeof import('../../node/lib/index.cjs');

/** The repository's root directory, ending in a slash. */
export const root = fileURLToPath(new URL('../..', import.meta.url));
/** The addon's CommonJS entry, for child processes and workers to require. */
export const addon = `${root}node/lib/index.cjs`;
/** parklot/node, once `useAddon()` loaded it (each test file has its own module instance). */
export let pl: Atomics;

/** Builds the addon for this platform (scripts/build-node.sh: incremental). */
export function buildAddon(): void {
  execFileSync('bash', [`${root}scripts/build-node.sh`], { stdio: 'ignore' });
}

/** Builds the addon before the file's tests, then imports parklot/node as `pl`. */
export function useAddon(): void {
  beforeAll(async () => {
    buildAddon();
    pl = (await import('parklot/node')) as unknown as Atomics;
  });
}
