// What every wasm-in-Node suite starts from and ends with (run.mjs,
// rwlock.mjs): its command line, the built module instantiated on a new
// shared memory in this thread, the npm package's Runtime class, the machine
// the run measures, and its two result files.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { fail, log } from './pool.mjs';

/**
 * The suite's command line, `[--quick] [--out DIR]` and the suite's own
 * `extra` options (parseArgs' form): {quick, outDir, ...extra's values}
 * (DIR: bench/results).
 */
export function suiteArgs(extra = {}) {
  const { values } = parseArgs({
    options: {
      quick: { type: 'boolean', default: false },
      out: { type: 'string' },
      ...extra,
    },
  });
  return { ...values, outDir: values.out ?? fileURLToPath(new URL('../results/', import.meta.url)) };
}

/**
 * Writes `document` (the results with their summaries and charts) to
 * OUT/<suite>.json and `markdown` to OUT/<suite>.md, and the markdown to stdout.
 */
export function writeResults(outDir, document, markdown) {
  mkdirSync(outDir, { recursive: true });
  const jsonPath = `${outDir.replace(/\/$/, '')}/${document.suite}.json`;
  writeFileSync(jsonPath, `${JSON.stringify(document, null, 1)}\n`);
  writeFileSync(jsonPath.replace(/\.json$/, '.md'), markdown);
  process.stdout.write(markdown);
  log(`${document.suite}: done in ${document.elapsedSeconds.toFixed(1)} s; wrote ${jsonPath} and ${document.suite}.md`);
}

// The benchmarks' build of the module: the package's, plus the peers and loops (the `bench` feature).
const GLUE_URL = new URL('../../js/wasm-pkg-bench/parklot_wasm.js', import.meta.url);
const PACKAGE_URL = new URL('../../js/dist/index.js', import.meta.url);
const WASM_URL = new URL('../../js/wasm-pkg-bench/parklot_wasm_bg.wasm', import.meta.url);

/**
 * The module on a new shared memory, set up on this thread; fails the run
 * if it is not built or lacks one of the `required` exports. Resolves to
 * {module, memory, glue, glueUrl, packageUrl}: what startPool's workerData
 * carries so that the workers instantiate it on the same memory.
 */
export async function loadWasm(required) {
  let bytes;
  try {
    bytes = readFileSync(WASM_URL);
  } catch {
    fail(`no ${fileURLToPath(WASM_URL)}: run bash scripts/build-wasm.sh first`);
  }
  // maximum must equal the module's --max-memory (1 GiB) / 64 KiB.
  const memory = new WebAssembly.Memory({ initial: 64, maximum: 16384, shared: true });
  const module = new WebAssembly.Module(bytes);
  const glue = await import(GLUE_URL.href);
  glue.initSync({ module, memory });
  glue.thread_init(true);
  glue.set_cpu_count(os.availableParallelism());
  for (const f of required) {
    if (typeof glue[f] !== 'function') fail(`the wasm module has no ${f}: rebuild it with bash scripts/build-wasm.sh`);
  }
  return { module, memory, glue, glueUrl: GLUE_URL.href, packageUrl: PACKAGE_URL.href };
}

/** The npm package's Runtime class, from its TypeScript build (`url`: another build's js/dist/index.js). */
export async function packageRuntime(url = PACKAGE_URL.href) {
  const { Runtime } = await import(url).catch(() => fail(`no ${fileURLToPath(url)}: run npm run build:ts first`));
  return Runtime;
}

/**
 * Other builds of the package to measure beside this tree's, from
 * `--pkg NAME=PATH` (PATH: that build's js/dist/index.js): [{name, url}].
 */
export function otherPackages(specs = []) {
  return specs.map((spec) => {
    const eq = spec.indexOf('=');
    if (eq <= 0) fail(`--pkg ${spec}: expected NAME=PATH`);
    const path = resolve(spec.slice(eq + 1));
    if (!existsSync(path)) fail(`--pkg ${spec}: ${path} does not exist (npm run build:ts builds js/dist)`);
    return { name: spec.slice(0, eq), url: pathToFileURL(path).href };
  });
}

/**
 * Starts a suite's run and logs the machine it measures (`emcc` as in
 * machineInfo). Returns `results(fields)`: the suite's results, its header
 * (suite, date, quick, elapsed seconds, machine) and then `fields`.
 */
export function startRun(suite, quick, emcc) {
  const started = new Date();
  const machine = machineInfo(emcc);
  log(`${suite}: ${machine.cores} CPUs, node ${machine.node}, load ${machine.loadavg.map((x) => x.toFixed(2)).join(' ')}${quick ? ', --quick' : ''}`);
  return (fields) => ({ suite, date: started.toISOString(), quick, elapsedSeconds: (Date.now() - started.getTime()) / 1e3, machine, ...fields });
}

/** The machine, as every suite's JSON records it (`emcc`: its version line or null). */
function machineInfo(emcc) {
  return {
    cpu: os.cpus()[0]?.model ?? 'unknown',
    cores: os.cpus().length,
    node: process.version,
    v8: process.versions.v8,
    emcc,
    platform: `${os.platform()} ${os.release()} ${os.arch()}`,
    loadavg: os.loadavg(),
  };
}
