// No top-level await here: Vite builds workers as classic scripts by default.
import { attachWorker } from 'parklot';

attachWorker().then(({ runtime, data: { lock, counter, rounds } }) => {
  for (let i = 0; i < rounds; i++) lock.withLock(() => { counter[0] += 1; });
  runtime.close();
  postMessage('done');
}).catch((e) => postMessage(`${e.name}: ${e.message}`));
