// Builds the demo pages into demo/dist: five pages, their workers, Chart.js
// and parklot's package (js/dist, with its wasm module) bundled together, so
// the served pages fetch nothing from outside the server.
import { defineConfig, type HtmlTagDescriptor, type Plugin } from 'vite';
import { basename } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = (path: string): string => fileURLToPath(new URL(path, import.meta.url));

/** The pages, in the top bar's order: each one's file, link and name. */
const PAGES = [
  { file: 'index.html', href: './', label: 'About' },
  { file: 'arena.html', href: './arena.html', label: 'Lock arena' },
  { file: 'lab.html', href: './lab.html', label: 'Wait/notify lab' },
  { file: 'diagnostics.html', href: './diagnostics.html', label: 'Diagnostics' },
];

/**
 * What every page has, written once: the head's common tags (public/isolation.js
 * before the page's module script: it explains a page that cannot share
 * memory) and the top bar, whose nav marks the page itself (the About page
 * also links the API reference).
 */
function pageLayout(): Plugin {
  const head = (tag: string, attrs: Record<string, string>): HtmlTagDescriptor => ({ tag, attrs, injectTo: 'head-prepend' });
  return {
    name: 'parklot-page-layout',
    transformIndexHtml: {
      order: 'pre',
      handler(_html, { filename }) {
        const page = basename(filename);
        const links = PAGES.map(({ file, href, label }) => `<a href="${href}"${file === page ? ' aria-current="page"' : ''}>${label}</a>`);
        if (page === 'index.html') links.push('<a href="./api/">API reference</a>');
        return [
          head('meta', { charset: 'utf-8' }),
          head('meta', { name: 'viewport', content: 'width=device-width, initial-scale=1' }),
          head('link', { rel: 'icon', href: 'data:,' }),
          head('script', { src: './isolation.js' }),
          // One line, as written by hand: white space between the links would show.
          { tag: 'header', attrs: { class: 'top' }, children: `<a class="brand" href="./">parklot</a><nav>${links.join('')}</nav>`, injectTo: 'body-prepend' },
        ];
      },
    },
  };
}

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
  plugins: [pageLayout()],
});
