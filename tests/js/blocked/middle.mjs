// A worker started by spawnWorker that itself spawns the holder
// (holder.mjs) and then blocks on the holder's lock: the holder's 'exit'
// event would come to this worker, which is blocked, so only the reaper
// (reached through this worker's own life port) can end its wait.
import { attachWorker } from '../../../js/dist/index.js';
import { parentPort } from 'node:worker_threads';
import { blockOnHolder } from './block.mjs';

const { runtime, data } = await attachWorker();
parentPort.postMessage(await blockOnHolder(runtime, data));
