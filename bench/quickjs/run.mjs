// QuickJS with parklot's Atomics against QuickJS's own, side by side in one
// run: each row runs as its own process on each shell, the two shells
// interleaved (alternating which goes first) for ROUNDS rounds; prints the
// median of each. A benchmark, never asserted.
// Usage: node bench/quickjs/run.mjs [--rounds N] [--quick]
// (after `cargo build --release -p parklot-quickjs`).
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));
const bin = path.resolve(here, '..', '..', 'target', 'release');
const args = process.argv.slice(2);
const quick = args.includes('--quick');
const roundsAt = args.indexOf('--rounds');
const ROUNDS = roundsAt >= 0 ? Number(args[roundsAt + 1]) : quick ? 1 : 7;
const scale = quick ? 0.05 : 1;
const n = (x) => String(Math.max(1, Math.round(x * scale)));

const rows = [
  ['wait, not-equal (ns/call)', ['wait-ne', n(1e6)]],
  ['notify, no waiter (ns/call)', ['notify-none', n(1e6)]],
  ['ping-pong, 2 workers (ns/round trip)', ['pingpong', n(2e4)]],
  ['notify, 1 waiter elsewhere (ns/call)', ['notify-others', '1', n(2e5)]],
  ['notify, 100 waiters elsewhere (ns/call)', ['notify-others', '100', n(1e5)]],
  ['notify, 1,000 waiters elsewhere (ns/call)', ['notify-others', '1000', n(2e4)]],
  ['notify, 1,000 waitAsync elsewhere (ns/call)', ['notify-others-async', '1000', n(2e5)], { ownHasNone: true }],
];
const shells = { own: 'qjs-own', parklot: 'parklot-qjs' };

function once(shell, argv) {
  const out = execFileSync(path.join(bin, shell), [path.join(here, 'atomics.js'), ...argv], {
    encoding: 'utf8',
    timeout: 300000,
  });
  return Number(out.trim().split(/\s+/).pop());
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

const samples = rows.map(() => ({ own: [], parklot: [] }));
for (let round = 0; round < ROUNDS; round++) {
  rows.forEach(([, argv, opts], i) => {
    const order = round % 2 ? ['parklot', 'own'] : ['own', 'parklot'];
    for (const which of order) {
      if (which === 'own' && opts?.ownHasNone) continue;
      samples[i][which].push(once(shells[which], argv));
    }
  });
}

const fmt = (x) => (x >= 100 ? x.toFixed(0) : x.toFixed(1));
console.log(`QuickJS ${quick ? '(quick) ' : ''}Atomics: medians of ${ROUNDS} interleaved rounds, ns (lower is better)`);
console.log('| row | quickjs own | quickjs + parklot | own / parklot |');
console.log('| --- | ---: | ---: | ---: |');
rows.forEach(([label], i) => {
  const own = samples[i].own.length ? median(samples[i].own) : null;
  const mine = median(samples[i].parklot);
  console.log(`| ${label} | ${own === null ? 'no waitAsync' : fmt(own)} | ${fmt(mine)} | ${own === null ? '-' : (own / mine).toFixed(2) + 'x'} |`);
});
