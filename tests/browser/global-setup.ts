// Builds what the browser tests load: the package (js/src -> js/dist), the
// demo pages (demo/ -> demo/dist) and the API reference (demo/dist/api). The wasm module must have been built
// (npm run build).
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export default function setup(): void {
  const root = fileURLToPath(new URL('../..', import.meta.url));
  if (!existsSync(`${root}/js/wasm-pkg/parklot_wasm_bg.wasm`)) {
    throw new Error('js/wasm-pkg is missing: run `npm run build` (or bash scripts/build-wasm.sh) first');
  }
  const run = (script: string, ...args: string[]): void => {
    execFileSync(process.execPath, [`${root}/node_modules/${script}`, ...args], { cwd: root, stdio: 'inherit' });
  };
  run('typescript/bin/tsc', '-p', 'js/tsconfig.json');
  run('vite/bin/vite.js', 'build', '--config', 'demo/vite.config.ts');
  run('typedoc/bin/typedoc'); // the API reference, into demo/dist/api (typedoc.json)
}
