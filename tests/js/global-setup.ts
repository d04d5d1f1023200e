// Compiles js/src to js/dist before the tests, so they always test the
// current sources. The wasm module must have been built (npm run build).
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export default function setup(): void {
  const root = fileURLToPath(new URL('../..', import.meta.url));
  if (!existsSync(`${root}/js/wasm-pkg/parklot_wasm_bg.wasm`)) {
    throw new Error('js/wasm-pkg is missing: run `npm run build` (or bash scripts/build-wasm.sh) first');
  }
  execFileSync(process.execPath, [`${root}/node_modules/typescript/bin/tsc`, '-p', `${root}/js/tsconfig.json`], {
    stdio: 'inherit',
  });
}
