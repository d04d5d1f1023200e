// Types of `require('parklot/node')`: the same object as index.d.ts's default export.
declare const atomics: typeof import('./index.js', { with: { 'resolution-mode': 'import' } }).default;
export = atomics;
