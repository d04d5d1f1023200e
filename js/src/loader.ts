/**
 * Loading parklot's wasm module and its wasm-bindgen glue, on Node and in
 * browsers, and deciding whether a thread may block.
 *
 * The glue (`--target web`) keeps its instance in module-level variables:
 * one glue module is one wasm instance. Each runtime instance therefore gets
 * its own copy of the glue: the first one in a realm is the static import
 * (which bundlers can follow), later ones are imported again under a
 * distinct query string, which makes a fresh module in Node and browsers.
 * A module is never collected, so a closed instance's copy is released
 * (`releaseGlue`) and serves the next instance.
 */
import * as firstGlue from '../wasm-pkg/parklot_wasm.js';
import { setupError } from './errors.js';

/** The wasm-bindgen glue module: the exported functions and `initSync`. */
export type Glue = typeof firstGlue;
/** The raw exports `initSync` returns (they include `__wbindgen_thread_destroy`). */
export type RawExports = ReturnType<Glue['initSync']>;

/** The module's `--max-memory` in 64 KiB pages (1 GiB): a memory must declare exactly this maximum. */
export const MAX_PAGES = 16384;
/** The fewest pages the module's memory import accepts. */
export const MIN_PAGES = 18;

const WASM_URL = new URL('../wasm-pkg/parklot_wasm_bg.wasm', import.meta.url);
const GLUE_URL = new URL('../wasm-pkg/parklot_wasm.js', import.meta.url);

/** Glue modules no runtime instance uses: released by `releaseGlue`, or never used. */
const idleGlues: Glue[] = [firstGlue];
let glueCopies = 0;

/**
 * A glue module no runtime instance of this realm uses: a released one if
 * any (so that the number of copies is the most runtimes open at once, not
 * how many were ever made), else a new copy.
 */
export async function freshGlue(): Promise<Glue> {
  const idle = idleGlues.pop();
  if (idle !== undefined) return idle;
  const url = new URL(GLUE_URL);
  url.searchParams.set('parklot-instance', String(++glueCopies));
  return (await import(/* @vite-ignore */ url.href)) as Glue;
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

function isNode(): boolean {
  return typeof (globalThis as { process?: NodeProcess }).process?.versions?.node === 'string';
}

/** What a relative `module` URL is resolved against: the page (or worker script), else the working directory in Node. */
function baseUrl(): string {
  const g = globalThis as { location?: { href?: string }; process?: NodeProcess & { cwd?(): string } };
  if (typeof g.location?.href === 'string') return g.location.href;
  if (isNode() && typeof g.process?.cwd === 'function') return `file://${g.process.cwd()}/`;
  return GLUE_URL.href;
}

let defaultModule: Promise<WebAssembly.Module> | undefined;

/**
 * Compiles parklot's wasm module: `source` if given (a compiled module, or
 * a URL to load, relative to the page or, in Node, to the working
 * directory), else the `.wasm` shipped next to the glue (compiled once per realm).
 */
export function loadModule(source?: WebAssembly.Module | URL | string): Promise<WebAssembly.Module> {
  if (source instanceof WebAssembly.Module) return Promise.resolve(source);
  if (source !== undefined) return compileFrom(new URL(source, baseUrl()));
  defaultModule ??= compileFrom(WASM_URL).catch((e: unknown) => {
    defaultModule = undefined; // let a later call try again
    throw e;
  });
  return defaultModule;
}

async function compileFrom(url: URL): Promise<WebAssembly.Module> {
  try {
    if (url.protocol === 'file:' && isNode()) {
      const fsModule = 'node:fs/promises'; // a variable, so that bundlers for browsers leave it alone
      const fs = (await import(/* @vite-ignore */ fsModule)) as { readFile(path: URL): Promise<Uint8Array<ArrayBuffer>> };
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
