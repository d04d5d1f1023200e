// The package's modules form no import circle: each idea has one home, and a
// module that needs another's idea imports it, never the other way round as
// well. Type-only imports count too. Reads js/src/*.ts as text: every
// `import ... from`, `export ... from`, bare `import '...'` and `import('...')`
// of a sibling module is an edge.
import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const SRC = new URL('../../js/src/', import.meta.url);

/** The sibling modules `source` imports, by module name (`./lock.js` -> `lock`). */
export function importsOf(source: string): string[] {
  const code = source.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
  const found = new Set<string>();
  const patterns = [
    /^\s*(?:import|export)\b[^;'"]*?\bfrom\s*['"]([^'"]+)['"]/gm, // import x from, import type {..} from, export {..} from
    /^\s*import\s*['"]([^'"]+)['"]/gm, // import './x.js'
    /\bimport\(\s*['"]([^'"]+)['"]\s*\)/g, // import('./x.js')
  ];
  for (const pattern of patterns) {
    for (const m of code.matchAll(pattern)) {
      const spec = m[1]!;
      const sibling = /^\.\/([\w-]+)\.js$/.exec(spec);
      if (sibling !== null) found.add(sibling[1]!);
    }
  }
  return [...found].sort();
}

/** Every elementary circle reachable in `graph`, each as a path that ends where it starts. */
export function circles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  const found = new Map<string, string[]>();
  const onPath: string[] = [];
  const state = new Map<string, 'open' | 'done'>();
  const visit = (node: string): void => {
    state.set(node, 'open');
    onPath.push(node);
    for (const next of graph.get(node) ?? []) {
      if (state.get(next) === 'open') {
        const cycle = onPath.slice(onPath.indexOf(next));
        // One entry per circle, whichever module the walk met it from.
        const key = [...cycle].sort().join(' ');
        if (!found.has(key)) found.set(key, [...cycle, next]);
      } else if (!state.has(next)) {
        visit(next);
      }
    }
    onPath.pop();
    state.set(node, 'done');
  };
  for (const node of [...graph.keys()].sort()) if (!state.has(node)) visit(node);
  return [...found.values()];
}

describe('js/src import graph', () => {
  it('the parser sees every form of import and export', () => {
    const source = [
      "import { a } from './a.js';",
      "import type { B } from './b.js';",
      'import {',
      '  c,',
      '  type C,',
      "} from './c.js';",
      "export { d } from './d.js';",
      "export type { E } from './e.js';",
      "export * from './f.js';",
      "import './g.js';",
      "const h = await import('./h.js');",
      "import wasm from '../wasm-pkg/x.js';",
      "// import { no } from './commented.js';",
      "/* import { no } from './block.js'; */",
      ' * import { Runtime } from "./doc-example.js";',
    ].join('\n');
    expect(importsOf(source)).toEqual(['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h']);
  });

  it('the circle finder names each circle once', () => {
    const graph = new Map([
      ['a', ['b']],
      ['b', ['c', 'a']],
      ['c', ['a']],
      ['d', ['d']],
      ['e', ['a']],
    ]);
    expect(circles(graph)).toEqual([
      ['a', 'b', 'c', 'a'],
      ['a', 'b', 'a'],
      ['d', 'd'],
    ]);
  });

  it('has no circles, type-only imports included', () => {
    const graph = new Map<string, string[]>();
    for (const file of readdirSync(SRC).filter((f) => f.endsWith('.ts')).sort()) {
      graph.set(file.replace(/\.ts$/, ''), importsOf(readFileSync(new URL(file, SRC), 'utf8')));
    }
    expect(graph.size).toBeGreaterThan(10);
    expect(graph.get('index')).toContain('runtime'); // the parser read real files
    const found = circles(graph).map((c) => c.join(' -> '));
    expect(found, `import circles in js/src:\n${found.join('\n')}`).toEqual([]);
  });
});
