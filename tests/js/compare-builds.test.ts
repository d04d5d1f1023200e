// bench/wasm/compare-builds.mjs, the tool that compares wasm builds one
// process each: it runs, keeps rounds by line state, and refuses bad input.
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const TOOL = fileURLToPath(new URL('../../bench/wasm/compare-builds.mjs', import.meta.url));
const BUILD = fileURLToPath(new URL('../../js/wasm-pkg-bench/parklot_wasm_bg.wasm', import.meta.url));
const run = (...args: string[]) => spawnSync(process.execPath, [TOOL, ...args], { encoding: 'utf8', timeout: 60_000 });

describe('compare-builds', () => {
  it('runs each build in turn and reports both line states with the first peer over the second', () => {
    // The same build under two names: the tool's own A/B check.
    const dir = mkdtempSync(join(tmpdir(), 'parklot-compare-'));
    const [a, b] = ['a.wasm', 'b.wasm'].map((n) => join(dir, n));
    copyFileSync(BUILD, a!);
    copyFileSync(BUILD, b!);
    const r = run('--cycles', '1', '--seconds', '1', a!, b!);
    rmSync(dir, { recursive: true });
    expect(r.status, r.stderr).toBe(0);
    const kept = /^(\d+) of (\d+) rounds kept/m.exec(r.stdout);
    expect(kept).not.toBeNull();
    expect(Number(kept![2])).toBeGreaterThanOrEqual(2); // at least a round per build
    expect(r.stdout).toContain('### fast line');
    expect(r.stdout).toContain('### slow line');
    expect(r.stdout).toContain('parklot::Lock / std::sync::Mutex');
    // Each build has its row in each table, and every kept round is in one of them.
    const rows = r.stdout.split('\n').filter((l) => l.startsWith(`| ${a}`) || l.startsWith(`| ${b}`));
    expect(rows).toHaveLength(4);
    const counted = rows.reduce((n, l) => n + Number(l.split('|')[2]!.trim()), 0);
    expect(counted).toBe(Number(kept![1]));
    expect(r.stderr).toContain('cycle 1/1');
  });

  it('names a peer the build does not have', () => {
    const r = run('--cycles', '1', '--seconds', '1', '--peers', 'parklot::Lock,NoSuchLock', BUILD);
    expect(r.status).not.toBe(0);
    expect(r.stderr).toContain('no peer NoSuchLock');
  });

  it('says how to call it without a build, and refuses a build named twice', () => {
    const r = run();
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('usage: node bench/wasm/compare-builds.mjs');
    const twice = run(BUILD, BUILD);
    expect(twice.status).toBe(2);
    expect(twice.stderr).toContain('copy it to a second name');
  });
});
