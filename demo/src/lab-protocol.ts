/** The shared words and messages of the wait/notify lab (page and workers). */

/**
 * Byte offsets in one 256-byte block of parklot's memory, each word on its
 * own 64-byte line. A ping-pong word is 0 (pong's turn to wait), 1 (ball sent)
 * or 2 (stop); a tick word counts ticks, its stamp is the tick's time just
 * before the notify call and its return stamp the time the call returned
 * (performance.timeOrigin + now(), in ms).
 */
export const LAB = {
  BYTES: 320,
  PING_PARKLOT: 0,
  PING_NATIVE: 64,
  TICK_PARKLOT: 128,
  STAMP_PARKLOT: 136,
  RETURN_PARKLOT: 144,
  TICK_NATIVE: 192,
  STAMP_NATIVE: 200,
  RETURN_NATIVE: 208,
  /**
   * The lock + condition ping-pong: its two flags (parklot's, multithreading's;
   * 0, 1 or 2 as a ping-pong word), and parklot's Lock and Condition bytes
   * (declared with rt.place() by the page: unlocked, nobody waiting).
   * multithreading's Mutex and Condvar keep their words in
   * SharedArrayBuffers of their own (LabInit.mt).
   */
  COND_FLAG_PARKLOT: 256,
  COND_FLAG_MULTITHREADING: 260,
  COND_LOCK: 264,
  COND_CONDITION: 265,
} as const;

/** Ping-pong stops at 2 in its word. */
export const STOP_BALL = 2;

/** Round trips per API before switching to the other one: blocks interleave A B A B. */
export const BLOCK = 50;

/**
 * Ping-pong pairs a run may play at once, each two workers with words of
 * its own: more pairs than the machine has cores oversubscribes it, where
 * spinning before sleep must turn itself off.
 */
export const MAX_PAIRS = 8;

/** The two ways of waiting the lab compares. */
export type Api = 'parklot' | 'native';

/** What the lab times; the ping-pong workers send their samples under these names. */
export type Measurement =
  | 'ping-parklot'
  | 'ping-native'
  | 'main-parklot'
  | 'main-native'
  | 'after-parklot'
  | 'after-native'
  | 'cond-parklot'
  | 'cond-multithreading';

export interface LabInit {
  type: 'init';
  /** cond-ping and cond-pong: the ping-pong under a lock and a condition. */
  role: 'ping' | 'pong' | 'ticker' | 'cond-ping' | 'cond-pong';
  handle: unknown;
  /** Address of the LAB block in parklot's memory (the pair's own block for a ping-pong worker). */
  base: number;
  /** The ping-pong pair this worker plays in (0 for the ticker). */
  pair: number;
  /** Int32[0]: stop flag for the ping and the ticker. */
  control: SharedArrayBuffer;
  /** The ticker's period in ms. */
  tickMs: number;
  /** multithreading's Mutex and Condvar words, each in a buffer of its own (cond-ping, cond-pong). */
  mt?: { lock: SharedArrayBuffer; condvar: SharedArrayBuffer };
  /**
   * Ping-pong through this one side only ('parklot', 'native' or
   * 'multithreading'), not in alternating blocks: the benchmark reads the
   * browser's CPU time around such a run, which alternating blocks would mix.
   */
  only?: Side;
}

/** The side a ping-pong measurement times: the last part of its name. */
export type Side = 'parklot' | 'native' | 'multithreading';

/** `waits` (each with its measurement) cut down to `only`'s side, or all of them. */
export function onlySide<T extends { measurement: Measurement }>(waits: T[], only: Side | undefined): T[] {
  return only === undefined ? waits : waits.filter((w) => w.measurement.endsWith(`-${only}`));
}

export type LabReply =
  | { type: 'ready' }
  | { type: 'samples'; measurement: Measurement; pair: number; ms: number[] }
  | { type: 'done' }
  | { type: 'error'; message: string };
