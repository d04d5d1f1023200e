// The npm package's README is written for users (js/README.md); the
// repository's README.md is for developers (the two commands). npm packs
// the README.md at the root, so packing swaps them:
//
//   node scripts/package-readme.mjs use      (prepack)
//   node scripts/package-readme.mjs restore  (postpack)
//
// `use` keeps the repository's README in target/README.repository.md and
// puts the users' one in its place; `restore` puts it back. Both are safe to
// run twice: `use` never keeps the users' README as the repository's.
import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const README = `${root}README.md`;
const USERS = `${root}js/README.md`;
const KEPT = `${root}target/README.repository.md`;

const same = (a, b) => readFileSync(a, 'utf8') === readFileSync(b, 'utf8');

switch (process.argv[2]) {
  case 'use':
    if (!same(README, USERS)) {
      mkdirSync(`${root}target`, { recursive: true });
      copyFileSync(README, KEPT);
      copyFileSync(USERS, README);
    }
    break;
  case 'restore':
    if (existsSync(KEPT)) {
      copyFileSync(KEPT, README);
      rmSync(KEPT);
    }
    break;
  default:
    console.error('usage: node scripts/package-readme.mjs use|restore');
    process.exit(2);
}
