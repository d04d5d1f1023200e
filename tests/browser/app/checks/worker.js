// checks/index.js's workers: attach, do `task`, post 'done' (or the error).
onmessage = async ({ data: { entry, handle, task, lock, counter, rounds, word, cond, queue, items } }) => {
  try {
    const { Runtime } = await import(entry);
    const rt = await Runtime.attach(handle);
    if (task === 'count') {
      const l = rt.lockAt(lock);
      const c = rt.float64(counter);
      for (let i = 0; i < rounds; i++) {
        l.lock();
        c[0] += 1;
        l.unlock();
      }
    } else if (task === 'notify') {
      const w = rt.int32(word);
      await new Promise((resolve) => setTimeout(resolve, 50));
      Atomics.store(w, 0, 1);
      rt.atomics.notify(w, 0, 1);
    } else {
      const l = rt.lockAt(lock);
      const c = rt.conditionAt(cond);
      const q = rt.int32(queue, 2);
      for (let i = 0; i < items; i++) {
        l.lock();
        q[0] += 1;
        c.notifyOne();
        l.unlock();
      }
    }
    rt.close();
    postMessage('done');
  } catch (e) {
    postMessage(`error: ${e.name}: ${e.message}`);
  }
};
