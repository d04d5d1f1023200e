/**
 * What the demo pages share: the isolation check, Chart.js set up once
 * (bundled at build time; the pages fetch nothing from elsewhere), colours
 * and number formatting.
 */
import {
  BarController,
  BarElement,
  CategoryScale,
  Chart,
  Legend,
  LinearScale,
  LineController,
  LineElement,
  LogarithmicScale,
  PointElement,
  Title,
  Tooltip,
} from 'chart.js';
import './style.css';

Chart.register(BarController, BarElement, CategoryScale, Legend, LinearScale, LineController, LineElement, LogarithmicScale, PointElement, Title, Tooltip);
Chart.defaults.animation = false;
Chart.defaults.maintainAspectRatio = false;
Chart.defaults.font.family = getComputedStyle(document.documentElement).fontFamily;

export { Chart };

/** Whether this page may share memory: set by public/isolation.js, which also explains what is missing. */
export function isolated(): boolean {
  return document.documentElement.dataset.isolation === 'ok';
}

/** A colour per series, stable across runs: the same name always gets the same colour. */
const PALETTE = ['#1f6feb', '#d1242f', '#1a7f37', '#9a6700', '#8250df', '#bf3989', '#0a7ea4', '#57606a', '#fb8500', '#6e7781'];
const colours = new Map<string, string>();
export function colourFor(name: string): string {
  let c = colours.get(name);
  if (c === undefined) {
    c = PALETTE[colours.size % PALETTE.length]!;
    colours.set(name, c);
  }
  return c;
}

/** 12345678 -> "12.3M". */
export function si(n: number): string {
  if (!Number.isFinite(n)) return String(n);
  const abs = Math.abs(n);
  if (abs >= 1e9) return `${(n / 1e9).toFixed(2)}G`;
  if (abs >= 1e6) return `${(n / 1e6).toFixed(abs >= 1e8 ? 0 : 1)}M`;
  if (abs >= 1e3) return `${(n / 1e3).toFixed(abs >= 1e5 ? 0 : 1)}k`;
  return n.toFixed(0);
}

/** A duration in milliseconds, shown in µs or ms. */
export function duration(ms: number): string {
  if (ms < 1) return `${(ms * 1000).toFixed(ms < 0.01 ? 2 : 1)} µs`;
  return `${ms.toFixed(ms < 10 ? 2 : 1)} ms`;
}

/** The element with this id, typed; throws if the page lacks it. */
export function byId<T extends HTMLElement>(id: string): T {
  const el = document.getElementById(id);
  if (!el) throw new Error(`demo: the page has no #${id}`);
  return el as T;
}

/** The `q`-quantile (0..1) of sorted numbers. */
export function quantile(sorted: ArrayLike<number>, q: number): number {
  if (sorted.length === 0) return Number.NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.round(q * (sorted.length - 1))));
  return sorted[i]!;
}

/** Shows an error on the page (and in the console), for problems the page cannot recover from. */
export function showError(e: unknown): void {
  console.error(e);
  const box = document.getElementById('error') ?? document.createElement('pre');
  box.id = 'error';
  box.className = 'fail';
  box.textContent = e instanceof Error ? `${e.name}: ${e.message}` : String(e);
  if (!box.isConnected) document.querySelector('main')?.prepend(box);
}
