/**
 * Loading parklot's wasm module and its wasm-bindgen glue, on Node and in
 * browsers, and deciding whether a thread may block.
 *
 * Nothing here is found by a file URL, so bundlers and dev servers that move
 * modules around (Vite's dependency pre-bundling, Rollup without plugins)
 * cannot lose it: the module's bytes ship gzipped and in base64 in a JS
 * module (`parklot/wasm` is the same module as a `.wasm` file, for bundlers
 * that handle one), and the
 * glue (`--target web`) as a function, `glueInstance()`, whose every call
 * gives a copy with its own module-level state (the glue keeps its wasm
 * instance there: one copy per runtime instance on a thread).
 * scripts/wrap-glue.mjs makes both from wasm-bindgen's output. A closed
 * instance's copy forgets its instance and memory (`releaseGlue`) and serves
 * the next instance.
 */
import { glueInstance } from '../wasm-pkg/parklot_glue.js';
import wasmBase64 from '../wasm-pkg/parklot_wasm_base64.js';
import { setupError } from './errors.js';

/** The wasm-bindgen glue: the exported functions and `initSync`. */
export type Glue = ReturnType<typeof glueInstance>;
/** The raw exports `initSync` returns (they include `__wbindgen_thread_destroy`). */
export type RawExports = ReturnType<Glue['initSync']>;

/** The module's `--max-memory` in 64 KiB pages (1 GiB): a memory must declare exactly this maximum. */
export const MAX_PAGES = 16384;
/** The fewest pages the module's memory import accepts. */
export const MIN_PAGES = 18;

/** Glue copies no runtime instance uses: released by `releaseGlue`. */
const idleGlues: Glue[] = [];

/** A glue copy no runtime instance uses: a released one if any, else a new one. */
export async function freshGlue(): Promise<Glue> {
  return idleGlues.pop() ?? glueInstance();
}

/**
 * Hands back the glue of a closed runtime instance: it forgets its wasm
 * instance, and with it the memory, which the garbage collector can then
 * reclaim, and serves the next runtime.
 */
export function releaseGlue(glue: Glue): void {
  glue.__parklot_release();
  idleGlues.push(glue);
}

interface NodeProcess {
  versions?: { node?: string };
}

/** Whether this is Node (or a runtime that passes for it, with `worker_threads`). */
export function isNode(): boolean {
  return typeof (globalThis as { process?: NodeProcess }).process?.versions?.node === 'string';
}

/** What a relative `module` URL is resolved against: the page (or worker script), else the working directory in Node. */
function baseUrl(): string | undefined {
  const g = globalThis as { location?: { href?: string }; process?: NodeProcess & { cwd?(): string } };
  if (typeof g.location?.href === 'string') return g.location.href;
  if (isNode() && typeof g.process?.cwd === 'function') return `file://${g.process.cwd()}/`;
  return undefined;
}

let defaultModule: Promise<WebAssembly.Module> | undefined;

/**
 * Compiles parklot's wasm module: `source` if given (a compiled module, or
 * a URL to load, relative to the page or, in Node, to the working
 * directory), else the bytes shipped in the package (compiled once per realm).
 */
export function loadModule(source?: WebAssembly.Module | URL | string): Promise<WebAssembly.Module> {
  if (source instanceof WebAssembly.Module) return Promise.resolve(source);
  if (source !== undefined) return compileFrom(new URL(source, baseUrl()));
  defaultModule ??= compileShipped().catch((e: unknown) => {
    defaultModule = undefined; // let a later call try again
    throw e;
  });
  return defaultModule;
}

async function compileShipped(): Promise<WebAssembly.Module> {
  try {
    const text = atob(wasmBase64);
    const packed = new Uint8Array(text.length);
    for (let i = 0; i < text.length; i++) packed[i] = text.charCodeAt(i);
    if (typeof DecompressionStream !== 'function') {
      throw new Error("this runtime has no DecompressionStream: pass `module`, the URL of the package's parklot_wasm_bg.wasm ('parklot/wasm')");
    }
    const gunzipped = new Response(new Blob([packed]).stream().pipeThrough(new DecompressionStream('gzip')));
    return await WebAssembly.compile(await gunzipped.arrayBuffer());
  } catch (e) {
    throw setupError("could not compile parklot's wasm module", e);
  }
}

async function compileFrom(url: URL): Promise<WebAssembly.Module> {
  try {
    if (url.protocol === 'file:' && isNode()) {
      const fsModule = 'node:fs/promises'; // a variable, so that bundlers for browsers leave it alone
      const fs = (await import(/* webpackIgnore: true */ /* @vite-ignore */ fsModule)) as { readFile(path: URL): Promise<Uint8Array<ArrayBuffer>> };
      return await WebAssembly.compile(await fs.readFile(url));
    }
    const response = await fetch(url);
    if (!response.ok) throw new Error(`HTTP ${response.status} ${response.statusText}`);
    if (typeof WebAssembly.compileStreaming === 'function' && response.headers.get('Content-Type') === 'application/wasm') {
      return await WebAssembly.compileStreaming(response);
    }
    return await WebAssembly.compile(await response.arrayBuffer()); // served without the wasm MIME type
  } catch (e) {
    throw setupError(`could not load the wasm module from ${url.href}`, e);
  }
}

/**
 * Whether this thread may block: not on a page's main thread (it has
 * `window` and `document`), nor anywhere `Atomics.wait` refuses to run
 * (it checks that before it compares, so the probe never sleeps).
 */
export function detectMayBlock(): boolean {
  const g = globalThis as { window?: unknown; document?: unknown };
  if (typeof g.window !== 'undefined' && typeof g.document !== 'undefined') return false;
  try {
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 1, 0);
    return true;
  } catch {
    return false;
  }
}
