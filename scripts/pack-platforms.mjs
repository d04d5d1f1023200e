// Packs parklot/node's platform packages, one per addon build: for each
// node/npm/<platform>/package.json (name, os, cpu, libc, files), a package
// with that manifest, the root's version, license and repository, the
// license texts, and the build its "files" names (from node/lib). The root
// package lists them as optionalDependencies (scripts/package-swap.mjs), so
// npm installs only the matching one.
//
//   node scripts/pack-platforms.mjs [--json] [DIR]   (tarballs to DIR, default target/npm)
//
// Builds the addons first (scripts/build-node.sh --all: incremental). With
// --json, prints npm pack's JSON for all of them as one array; otherwise one
// line per tarball.
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const args = process.argv.slice(2);
const json = args.includes('--json');
const out = resolve(args.find((a) => a !== '--json') ?? `${root}target/npm`);
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';

// Its output to stderr: with --json, stdout carries only the JSON.
execFileSync('bash', [`${root}scripts/build-node.sh`, '--all'], { stdio: ['ignore', 2, 2] });

const rootManifest = JSON.parse(readFileSync(`${root}package.json`, 'utf8'));
const shared = ['version', 'license', 'repository', 'homepage', 'bugs', 'engines'];
// npm packs only LICENSE or LICENCE by itself: the root's two are listed.
const licenses = ['LICENSE-MIT', 'LICENSE-APACHE'];
const packed = [];
for (const platform of readdirSync(`${root}node/npm`)) {
  const template = JSON.parse(readFileSync(`${root}node/npm/${platform}/package.json`, 'utf8'));
  const manifest = { ...template, ...Object.fromEntries(shared.map((k) => [k, rootManifest[k]])) };
  manifest.files = [...template.files, ...licenses];
  const stage = `${out}/${platform}`;
  rmSync(stage, { recursive: true, force: true });
  mkdirSync(stage, { recursive: true });
  writeFileSync(`${stage}/package.json`, `${JSON.stringify(manifest, null, 2)}\n`);
  for (const file of template.files) copyFileSync(`${root}node/lib/${file}`, `${stage}/${file}`);
  for (const file of licenses) copyFileSync(`${root}${file}`, `${stage}/${file}`);
  const [result] = JSON.parse(execFileSync(npm, ['pack', '--json', '--pack-destination', out], { cwd: stage, encoding: 'utf8' }));
  packed.push({ ...result, filename: `${out}/${result.filename}` });
}
if (json) console.log(JSON.stringify(packed, null, 2));
else for (const p of packed) console.log(`${p.filename} (${p.size} bytes packed, ${p.unpackedSize} unpacked)`);
