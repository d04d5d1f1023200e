/**
 * What the diagnostics page (diagnostics.ts) and its philosopher workers
 * (philosopher-worker.ts) share: the seats' data, the replies, the timings
 * and which fork each philosopher takes first.
 */
import type { Lock } from '../../js/dist/index.js';

/** 'ordered': everyone takes the lower-numbered fork first (no cycle can form); 'deadlocking': the left one first. */
export type Mode = 'ordered' | 'deadlocking';

/** What a philosopher worker gets (spawnWorker's data, revived by attachWorker). */
export interface SeatData {
  seat: number;
  /** Seats at the table (the workers and the page), and as many forks. */
  seats: number;
  forks: Lock[];
  /** An Int32Array block: meals per seat, then DeadlockErrors per seat. */
  stats: number;
  /** An i32 set to 1 when the page stops the run. */
  stop: number;
  mode: Mode;
}

/** A philosopher's DeadlockError, for the page. */
export interface Refusal {
  type: 'refused';
  seat: number;
  message: string;
  /** The cycle's threads, by name, from the refused one around. */
  threads: string[];
  /** The cycle's locks, by address (forks). */
  locks: number[];
}

export type PhilosopherReply = Refusal | { type: 'error'; message: string };

/** Milliseconds, as [min, max): thinking, reaching for the second fork while holding the first, eating, backing off after a refusal. */
export const TIMING = { think: [1, 4], reach: [2, 6], eat: [1, 3], backoff: [5, 15] } as const;

/** A random duration in `range`. */
export function between(range: readonly [number, number]): number {
  return range[0] + Math.random() * (range[1] - range[0]);
}

/** The forks `seat` takes, first and second: its left (its own number) and right (the next), in `mode`'s order. */
export function forkOrder(seat: number, seats: number, mode: Mode): [number, number] {
  const left = seat;
  const right = (seat + 1) % seats;
  return mode === 'deadlocking' ? [left, right] : [Math.min(left, right), Math.max(left, right)];
}
