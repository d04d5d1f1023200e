// What the app's test needs before it starts: both builds of the app
// (scripts/build-wasm-app.sh) and the demo, whose server serves it.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

export default function setup(): void {
  const root = fileURLToPath(new URL('../..', import.meta.url));
  for (const locks of ['parklot', 'std']) {
    if (!existsSync(`${root}/tests/wasm-app/www/pkg/${locks}/parklot_wasm_app_bg.wasm`)) {
      throw new Error(`tests/wasm-app/www/pkg/${locks} is missing: run bash scripts/build-wasm-app.sh first`);
    }
  }
  if (!existsSync(`${root}/demo/dist/index.html`)) {
    throw new Error('demo/dist is missing (its server serves the app): run npm run build:demo first');
  }
}
