// What npm packs differs from the repository in two files, swapped in by
// prepack and back by postpack:
//
//   node scripts/package-swap.mjs use      (prepack)
//   node scripts/package-swap.mjs restore  (postpack)
//
// - README.md: the package's is written for users (js/README.md); the
//   repository's is for developers (the two commands).
// - package.json: the package's lists the addon's platform packages
//   (node/npm/<platform>) as optionalDependencies at this version, so npm
//   installs the one for its platform. The repository's cannot: they are
//   not in its lock file (not published when it is written), and `npm ci`
//   refuses a package.json that names them.
//
// `use` keeps the repository's files in target/ (README.repository.md,
// package.repository.json); `restore` puts them back. Both are safe to run
// twice: `use` never keeps the package's files as the repository's.
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const read = (file) => readFileSync(file, 'utf8');
// [the file, the repository's copy kept while packing, the package's text]
const swaps = [
  [`${root}README.md`, `${root}target/README.repository.md`, () => read(`${root}js/README.md`)],
  [`${root}package.json`, `${root}target/package.repository.json`, packageManifest],
];

/** package.json with the platform packages as optionalDependencies, each at the package's version. */
function packageManifest() {
  const manifest = JSON.parse(read(`${root}package.json`));
  const platforms = readdirSync(`${root}node/npm`).map((p) => JSON.parse(read(`${root}node/npm/${p}/package.json`)).name);
  manifest.optionalDependencies = Object.fromEntries(platforms.map((name) => [name, manifest.version]));
  return `${JSON.stringify(manifest, null, 2)}\n`;
}

switch (process.argv[2]) {
  case 'use':
    for (const [file, kept, packaged] of swaps) {
      if (existsSync(kept)) continue; // swapped already
      const text = packaged();
      mkdirSync(`${root}target`, { recursive: true });
      copyFileSync(file, kept);
      writeFileSync(file, text);
    }
    break;
  case 'restore':
    for (const [file, kept] of swaps) {
      if (existsSync(kept)) {
        copyFileSync(kept, file);
        rmSync(kept);
      }
    }
    break;
  default:
    console.error('usage: node scripts/package-swap.mjs use|restore');
    process.exit(2);
}
