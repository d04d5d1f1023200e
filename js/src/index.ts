/**
 * parklot: one-byte locks and condition variables, reader-writer locks,
 * semaphores, barriers and onces, and `Atomics`-style wait/notify, in a
 * WebAssembly shared memory that Web Workers, Node
 * `worker_threads` and a page's main thread share. Served by a WebKit-style
 * ParkingLot compiled to wasm; threads that may not block wait asynchronously
 * in the same queues.
 *
 * @example
 * import { Runtime } from 'parklot';
 * const rt = await Runtime.create();
 * const lock = rt.lock();
 * await lock.lockAsync();
 * lock.unlock();
 *
 * @packageDocumentation
 */
export { Runtime } from './runtime.js';
export type { AttachOptions, PlaceKind, RuntimeHandle, RuntimeOptions, WatchableWorker, NodeWorkerExit, BunWorkerClose } from './runtime.js';
export { Lock } from './lock.js';
export { BrokenBarrierError, DeadlockError, OncePoisonedError, OwnerDiedError } from './errors.js';
export type { DeadlockCycle, DeadlockLock, DeadlockStep, DeadlockThread } from './errors.js';
export type { DiagnosticsSnapshot, HoldInfo, LockOrderViolation, MadeAs, OnAddress, PrimitiveName, QueueInfo, ThreadInfo, WaiterInfo } from './diagnostics.js';
export { Condition } from './condition.js';
export { RwLock } from './rwlock.js';
export type { RwLockOptions, RwLockPolicy, RwLockState } from './rwlock.js';
export { Once } from './once.js';
export type { OnceState } from './once.js';
export { Semaphore } from './semaphore.js';
export { Barrier } from './barrier.js';
export { RuntimeAtomics } from './atomics.js';
export { attachWorker, spawnWorker } from './spawn.js';
export type { SpawnOptions, WorkerLike } from './spawn.js';
export type { Kinds, Revived, SentPrimitive } from './revive.js';
export type { WaitAsyncResult, WaitResult } from './atomics.js';
export type { AbortSignalLike, AsyncOptions } from './validate.js';
