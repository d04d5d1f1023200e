// reap/index.js's workers: attach, then wait on a word or hold a lock until terminated.
onmessage = async ({ data: { entry, handle, task, word, lock } }) => {
  try {
    const { Runtime } = await import(entry);
    const rt = await Runtime.attach(handle);
    if (task === 'wait') {
      postMessage('waiting');
      postMessage(rt.atomics.wait(rt.int32(word), 0, 0));
    } else {
      rt.lockAt(lock).lock();
      postMessage('held');
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0); // until terminated
    }
  } catch (e) {
    postMessage(`error: ${e.name}: ${e.message}`);
  }
};
