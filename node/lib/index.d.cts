// Types of `require('parklot/node')`: the same functions as index.d.ts.
import type { wait, notify, waitAsync, waiterCount, install } from './index.js' with { 'resolution-mode': 'import' };

declare const atomics: {
  wait: typeof wait;
  notify: typeof notify;
  waitAsync: typeof waitAsync;
  waiterCount: typeof waiterCount;
  install: typeof install;
};
export = atomics;
