// Runs the app (src/lib.rs) built with parklot's locks (?lock=parklot, the
// default), std's (?lock=std), or parklot's without its `wasm-bindgen`
// feature (?lock=parklot-undetected): starts Rayon's workers, starts the count,
// then calls tick() between frames until the workers are done. ?lock=parklot-async
// runs the parklot build with tickAsync() in place of tick(): the main thread
// awaits lock_async/read_async instead of spinning. Meanwhile the page counts
// its frames and a heartbeat (a 1 ms timer) with the longest gap between two
// beats: how free its event loop stayed. #result's data-state ends as "done"
// (the results in #details, as JSON), "trapped" (a RuntimeError out of the
// wasm) or "error".
const params = new URLSearchParams(location.search);
const locks = ['std', 'parklot-undetected', 'parklot-async'].includes(params.get('lock')) ? params.get('lock') : 'parklot';
const asyncMode = locks === 'parklot-async';
const limit = BigInt(params.get('limit') ?? '4000000');
const chunks = Number(params.get('chunks') ?? '64');
/** Ledger updates under the Mutex per tick (plus one read under the RwLock). */
const updates = Number(params.get('updates') ?? '8');
const threads = Number(params.get('threads') ?? Math.max(2, Math.min(navigator.hardwareConcurrency || 2, 4)));

const result = document.getElementById('result');
const details = document.getElementById('details');
const bar = document.getElementById('progress');

function end(state, text, extra = '') {
  result.dataset.state = state;
  result.textContent = text;
  details.textContent = extra;
}

try {
  if (!crossOriginIsolated) throw new Error('the page is not cross-origin isolated (COOP/COEP headers): no shared memory');
  const app = await import(`./pkg/${asyncMode ? 'parklot' : locks}/parklot_wasm_app.js`);
  await app.default();
  await app.initThreadPool(threads);
  app.setup(navigator.hardwareConcurrency || 2);
  const started = performance.now();
  app.start(limit, chunks);
  let ticks = 0;
  // The event loop's pulse while the app runs: frames, and beats of a 1 ms
  // timer (clamped to about 4 ms by the browser) with the longest gap.
  const loop = { frames: 0, beats: 0, maxBeatGapMs: 0 };
  let running = true;
  let lastBeat = performance.now();
  const beat = () => {
    const now = performance.now();
    loop.beats++;
    loop.maxBeatGapMs = Math.max(loop.maxBeatGapMs, now - lastBeat);
    lastBeat = now;
    if (running) setTimeout(beat, 1);
  };
  const frame = () => {
    loop.frames++;
    if (running) requestAnimationFrame(frame);
  };
  setTimeout(beat, 1);
  requestAnimationFrame(frame);
  // A MessageChannel runs the next tick as soon as the page is idle
  // (setTimeout would be clamped to 4 ms).
  const channel = new MessageChannel();
  channel.port1.onmessage = async () => {
    let progress;
    try {
      progress = asyncMode ? await app.tickAsync(updates) : app.tick(updates);
      ticks++;
    } catch (e) {
      running = false;
      end('trapped', `${e.name}: ${e.message}`, `locks: ${locks}; after ${ticks} ticks of the main thread\n${e.stack ?? ''}`);
      return;
    }
    if (progress < 2) {
      bar.value = progress;
      channel.port2.postMessage(0);
      return;
    }
    const ms = performance.now() - started;
    running = false;
    loop.maxBeatGapMs = Math.round(loop.maxBeatGapMs * 10) / 10;
    const report = { ...JSON.parse(app.finish()), mode: locks, ticks, updatesPerTick: updates, threads, chunks, ms: Math.round(ms), ...loop };
    bar.value = 1;
    end('done', `done: ${report.primes} primes below ${report.limit} (${locks}, ${report.ms} ms)`, JSON.stringify(report, null, 2));
  };
  channel.port2.postMessage(0);
} catch (e) {
  end(e instanceof WebAssembly.RuntimeError ? 'trapped' : 'error', `${e.name}: ${e.message}`, `locks: ${locks}\n${e.stack ?? ''}`);
}
