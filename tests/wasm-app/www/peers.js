// The peer benchmark's page side (src/peers.rs has the module's): loads the
// parklot build, starts `threads` Rayon workers (?threads=, default 8), and
// offers window.peersRun for bench/browser/wasm-peers.mjs to call. #state's
// data-state ends as "ready" or "error".
const params = new URLSearchParams(location.search);
const threads = Number(params.get('threads') ?? '8');
const state = document.getElementById('state');

/** Main-thread acquisitions per turn of the event loop. */
const PER_TURN = 8;

try {
  if (!crossOriginIsolated) throw new Error('the page is not cross-origin isolated (COOP/COEP headers): no shared memory');
  const app = await import('./pkg/parklot/parklot_wasm_app.js');
  await app.default();
  await app.initThreadPool(threads);
  app.setup(navigator.hardwareConcurrency || 2);

  /**
   * One run: `lock` taken by `workers` workers for `ms`; `main` is null (the
   * page waits), "spin" (it takes the lock PER_TURN times per turn of its
   * event loop, turns back to back) or "async" (the same with parklot's
   * lock_async). Resolves to src/peers.rs's report.
   */
  window.peersRun = async (lock, workers, ms, main) => {
    app.peersStart(lock, workers, ms);
    if (!main) {
      while (!app.peersDone()) await new Promise((resolve) => setTimeout(resolve, 5));
    } else {
      await new Promise((resolve, reject) => {
        const channel = new MessageChannel();
        channel.port1.onmessage = async () => {
          try {
            const done = main === 'async' ? await app.peersMainAsync(PER_TURN) : app.peersMain(lock, PER_TURN);
            if (done) resolve();
            else channel.port2.postMessage(0);
          } catch (e) {
            reject(e);
          }
        };
        channel.port2.postMessage(0);
      });
    }
    return { ...JSON.parse(app.peersFinish(lock)), perTurn: PER_TURN };
  };
  state.dataset.state = 'ready';
  state.textContent = `ready: ${threads} Rayon workers`;
} catch (e) {
  state.dataset.state = 'error';
  state.textContent = `${e.name}: ${e.message}`;
}
