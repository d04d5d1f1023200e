// The page payload: what a minimal page that uses parklot (tests/browser/app:
// a Lock, two workers, the page in lockAsync) makes a browser download, built
// the ways a web developer would: Vite, webpack 5, Rollup, esbuild, and no
// bundler (the module graph served as it is). Bytes, not time: raw (as the
// tool writes it), min (esbuild's minifier, for output a tool left unminified)
// and gzip (level 9, per file, as a server compresses it).
//
//   node bench/size/run.mjs [--package DIR] [--label LABEL] [--before 'LABEL=DIR' ...] [--out FILE]
//
// --package: the package to measure (a directory with package.json, js/dist
// and js/wasm-pkg; default this repository as built). --before: other
// packages, measured the same way and shown first under their labels (e.g. a
// copy of js/dist and js/wasm-pkg kept from before a change). Writes FILE
// (default bench/results/size.md) and prints the same tables. The builds reuse the
// steps of tests/browser/setups.test.ts, in target/size/.
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { gzipSync } from 'node:zlib';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const WORK = join(ROOT, 'target', 'size');
const BIN = {
  vite: join(ROOT, 'node_modules/vite/bin/vite.js'),
  webpack: join(ROOT, 'node_modules/webpack-cli/bin/cli.js'),
  rollup: join(ROOT, 'node_modules/rollup/dist/bin/rollup'),
};
const { values: args } = parseArgs({
  options: { package: { type: 'string' }, label: { type: 'string' }, before: { type: 'string', multiple: true }, out: { type: 'string' } },
});
const esbuild = await import(join(ROOT, 'node_modules/esbuild/lib/main.js'));
const say = (msg) => process.stderr.write(`[size] ${msg}\n`);

/** The wasm module's bytes as a base64 string literal in JS (plain, or gzipped). */
const WASM_BASE64 = /(['"`])((?:AGFzbQ|H4sI)[A-Za-z0-9+/]{10000,}={0,2})\1/;
/** A string only parklot's own JS has: counts the copies of the package in a build. */
const PARKLOT_MARK = 'is not cross-origin isolated';

/** Copies the small app and `pkg` (as npm would install it) into `dir`. */
function prepare(pkg, dir) {
  rmSync(dir, { recursive: true, force: true });
  cpSync(join(ROOT, 'tests/browser/app'), dir, { recursive: true });
  const into = join(dir, 'node_modules', 'parklot');
  mkdirSync(join(into, 'js'), { recursive: true });
  cpSync(join(pkg, 'package.json'), join(into, 'package.json'));
  for (const sub of ['dist', 'wasm-pkg']) {
    cpSync(join(pkg, 'js', sub), join(into, 'js', sub), { recursive: true, filter: (f) => !f.endsWith('.map') });
  }
}

const node = (dir, script, ...rest) => execFileSync(process.execPath, [script, ...rest], { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
const walk = (dir) => readdirSync(dir, { recursive: true }).map((f) => join(dir, f)).filter((f) => statSync(f).isFile());
const isPayload = (f) => /\.(m?js|wasm)$/.test(f);

/** Each set-up: builds the app in `dir` and returns the files a browser would load. */
const SETUPS = {
  Vite: (dir) => {
    node(dir, BIN.vite, 'build', '--outDir', 'dist-vite', '--logLevel', 'error');
    return walk(join(dir, 'dist-vite')).filter(isPayload);
  },
  'webpack 5': (dir) => {
    node(dir, BIN.webpack, '--mode', 'production', '--output-path', join(dir, 'dist-webpack'));
    return walk(join(dir, 'dist-webpack')).filter(isPayload);
  },
  'Rollup 4': (dir) => {
    node(dir, BIN.rollup, 'src/index.js', 'src/worker.js', '-d', 'dist-rollup', '-f', 'es', '-p', 'node-resolve', '--silent');
    return walk(join(dir, 'dist-rollup')).filter(isPayload);
  },
  esbuild: async (dir) => {
    const out = join(dir, 'dist-esbuild');
    const entries = ['src/index.js', 'src/worker.js'].map((f) => join(dir, f));
    await esbuild.build({ entryPoints: entries, bundle: true, minify: true, format: 'esm', splitting: true, outdir: out, logLevel: 'error' });
    return walk(out).filter(isPayload);
  },
  // The files the page and its workers import, as they are, followed from the
  // two entries (static and dynamic imports alike).
  'no bundler': async (dir) => {
    const entries = ['src/index.js', 'src/worker.js'].map((f) => join(dir, f));
    const r = await esbuild.build({ entryPoints: entries, bundle: true, format: 'esm', splitting: true, write: false, outdir: join(dir, 'x'), metafile: true, absWorkingDir: dir, logLevel: 'error' });
    return Object.keys(r.metafile.inputs).map((f) => join(dir, f));
  },
};

const gz = (text) => gzipSync(text, { level: 9 }).length;

/**
 * raw, min and gzip bytes of one file; `wasm`: the gzip bytes of the wasm
 * module's base64 literal in it, if any (gzipped alone), `copies`: 1 if it
 * holds parklot's JS.
 */
async function measure(file) {
  const raw = readFileSync(file);
  if (file.endsWith('.wasm')) return { file, raw: raw.length, min: raw.length, gzip: gz(raw), wasm: gz(raw), copies: 0 };
  const text = raw.toString();
  const minified = /\n\s+\S/.test(text) ? (await esbuild.transform(text, { minify: true, format: 'esm', loader: 'js' })).code : text;
  const literal = WASM_BASE64.exec(minified)?.[2];
  return { file, raw: raw.length, min: Buffer.byteLength(minified), gzip: gz(minified), wasm: literal ? gz(literal) : 0, copies: text.includes(PARKLOT_MARK) ? 1 : 0 };
}

/** Issue 31's goal for the minimal page, min+gzip. */
const TARGET = 35_000;
const sum = (files, key) => files.reduce((n, f) => n + f[key], 0);
const kb = (n) => (n / 1000).toFixed(1);

/** Measures every set-up on package `pkg`; returns one row per set-up. */
async function measurePackage(pkg, label) {
  const rows = [];
  for (const [name, build] of Object.entries(SETUPS)) {
    const dir = join(WORK, label.replace(/\W+/g, '-'), name.replace(/\W+/g, '-'));
    prepare(pkg, dir);
    say(`${label}: ${name}`);
    let built;
    try {
      built = await build(dir);
    } catch (e) {
      const why = String(e.stderr ?? e.message).split('\n').find((l) => /error|invalid/i.test(l)) ?? String(e.message).split('\n')[0];
      rows.push({ name, failed: why.trim() });
      continue;
    }
    const files = await Promise.all(built.map(measure));
    rows.push({ name, files, copies: sum(files, 'copies') });
  }
  const wasm = join(pkg, 'js/wasm-pkg/parklot_wasm_bg.wasm');
  return { label, rows, wasm: await measure(wasm) };
}

function table({ label, rows, wasm }) {
  const lines = [
    `### ${label}`,
    '',
    `| set-up | files | copies of parklot's JS | page and workers: raw / min / **gzip** (KB) | of which the wasm module's bytes, gzip | copies of the wasm bytes |`,
    '|---|---:|---:|---:|---:|---:|',
  ];
  for (const r of rows) {
    if (r.failed) {
      lines.push(`| ${r.name} | build fails: ${r.failed.replaceAll('|', '\\|')} | | | | |`);
      continue;
    }
    const f = r.files;
    lines.push(
      `| ${r.name} | ${f.length} | ${r.copies} | ${kb(sum(f, 'raw'))} / ${kb(sum(f, 'min'))} / **${kb(sum(f, 'gzip'))}** | ${kb(sum(f, 'wasm'))} | ${f.filter((x) => x.wasm).length} |`,
    );
  }
  const best = rows.filter((r) => !r.failed).sort((a, b) => sum(a.files, 'gzip') - sum(b.files, 'gzip'))[0];
  if (best) {
    const total = sum(best.files, 'gzip');
    lines.push(
      '',
      `Target (issue 31: at most ${kb(TARGET)} KB gzip for the minimal page): ${total <= TARGET ? 'met' : 'not met'}; the smallest set-up, ` +
        `${best.name}, loads ${kb(total)} KB, ${kb(sum(best.files, 'wasm'))} KB of it the wasm module's bytes.`,
    );
  }
  lines.push('', `The module as a file (\`parklot/wasm\`, js/wasm-pkg/parklot_wasm_bg.wasm): ${kb(wasm.raw)} KB raw, ${kb(wasm.gzip)} KB gzip.`, '');
  const detail = rows.filter((r) => !r.failed).map((r) => `${r.name}: ${r.files.map((f) => `${relative(WORK, f.file).split('/').slice(3).join('/') || f.file} ${kb(f.gzip)}${f.wasm ? ` (wasm bytes ${kb(f.wasm)})` : ''}`).join(', ')}`);
  lines.push('<details><summary>files (gzip KB)</summary>', '', ...detail.map((d) => `- ${d}`), '', '</details>', '');
  return lines.join('\n');
}

const before = [];
for (const spec of args.before ?? []) {
  const [label, dir] = spec.includes('=') ? [spec.slice(0, spec.indexOf('=')), spec.slice(spec.indexOf('=') + 1)] : ['before', spec];
  before.push(await measurePackage(dir, label));
}
const after = await measurePackage(args.package ?? ROOT, args.label ?? (before.length ? 'after' : 'now'));
if (!existsSync(join(ROOT, 'bench/results'))) mkdirSync(join(ROOT, 'bench/results'), { recursive: true });
const report = [
  '# Payload: the minimal page',
  '',
  'Made by `node bench/size/run.mjs` (bytes, not time). The page is tests/browser/app: a Lock, two workers, the page in `lockAsync`; ' +
    'the columns add up every file the page and its workers load. KB are 1000 bytes; gzip is level 9, file by file, as a server ' +
    'compresses them; "min" is the tool\'s own minified output, or esbuild\'s minifier where the tool leaves it unminified (Rollup ' +
    'without plugins, no bundler). "The wasm module\'s bytes" is the base64 string literal that holds the module, gzipped alone: ' +
    'Vite and webpack build each worker as a bundle of its own, so their page and worker each carry parklot and its bytes.',
  '',
  'The bytes are imported statically, so a page that passes `module` loads them too: a dynamic import (a chunk loaded only ' +
    'without `module`) breaks Vite\'s default worker build, which cannot split code (`Invalid value "iife" for option ' +
    '"worker.format" - UMD and IIFE output formats are not supported for code-splitting builds`, vitejs/vite#5402), and ' +
    'tests/browser/setups.test.ts builds the app with Vite unconfigured. Measured with the dynamic import, Rollup and esbuild ' +
    'loaded 17.8 and 18.2 KB gzip of JS for a page passing `module` (plus the module, 37.7 KB gzip as a .wasm file then).',
  '',
  ...before.map(table),
  table(after),
].join('\n');
const out = args.out ?? join(ROOT, 'bench/results/size.md');
mkdirSync(dirname(out), { recursive: true });
writeFileSync(out, report);
process.stdout.write(`${report}\nsize: written to ${relative(ROOT, out)}\n`);
