import { Runtime } from 'parklot';

onmessage = async ({ data }) => {
  try {
    const rt = await Runtime.attach(data.handle);
    const lock = rt.lockAt(data.lock);
    const counter = rt.float64(data.counter);
    for (let i = 0; i < data.rounds; i++) lock.withLock(() => { counter[0] += 1; });
    postMessage('done');
  } catch (e) {
    postMessage(`${e.name}: ${e.message}`);
  }
};
