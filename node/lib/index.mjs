// parklot/node for `import`: the same module as `require('parklot/node')`.
import { createRequire } from 'node:module';

const atomics = createRequire(import.meta.url)('./index.cjs');

export const { wait, notify, waitAsync, waiterCount, install } = atomics;
export default atomics;
