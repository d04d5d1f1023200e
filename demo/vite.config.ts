// Builds the demo pages into demo/dist: four pages, their workers, Chart.js
// and parklot's package (js/dist, with its wasm module) bundled together, so
// the served pages fetch nothing from outside the server.
import { defineConfig } from 'vite';
import { fileURLToPath } from 'node:url';

const here = (path: string): string => fileURLToPath(new URL(path, import.meta.url));

export default defineConfig({
  root: here('.'),
  base: './',
  logLevel: 'warn',
  build: {
    outDir: here('dist'),
    emptyOutDir: true,
    target: 'es2022',
    // The wasm module and its glue stay separate files (the glue is loaded
    // again per runtime instance); nothing is inlined as a data: URL.
    assetsInlineLimit: 0,
    chunkSizeWarningLimit: 1024,
    rollupOptions: {
      input: {
        index: here('index.html'),
        arena: here('arena.html'),
        lab: here('lab.html'),
        diagnostics: here('diagnostics.html'),
      },
    },
  },
  worker: { format: 'es' },
});
