// Types of `require('parklot/node')`: the same functions as index.d.ts.
import type { wait, notify, waitAsync, install } from './index.js';

declare const atomics: {
  wait: typeof wait;
  notify: typeof notify;
  waitAsync: typeof waitAsync;
  install: typeof install;
};
export = atomics;
