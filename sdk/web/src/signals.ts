/**
 * Client signals for challenge initialization, in the exact (strict) shape of api/src/risk/signals.ts:
 * no other keys. Behaviour is summarised from the moment the loader ran, never recorded raw. Everything
 * is reported as observed: the server can only let it raise the score.
 */

/** A running mean and variance (Welford), enough for a standard deviation without keeping samples. */
class Spread {
  n = 0;
  mean = 0;
  m2 = 0;
  add(value: number): void {
    this.n++;
    const d = value - this.mean;
    this.mean += d / this.n;
    this.m2 += d * (value - this.mean);
  }
  std(): number | undefined {
    return this.n < 2 ? undefined : Math.min(100_000, Math.sqrt(this.m2 / this.n));
  }
}

/** Intervals longer than this are pauses, not rhythm. */
const PAUSE_MS = 1000;

let moves = 0;
let presses = 0;
let touches = 0;
let lastMove = -1;
let lastKey = -1;
let triples = 0;
let collinear = 0;
const moveSpread = new Spread();
const keySpread = new Spread();
const points: Array<[number, number]> = [];
let started = false;

function onMove(e: PointerEvent | MouseEvent): void {
  moves++;
  if (lastMove >= 0 && e.timeStamp - lastMove < PAUSE_MS) moveSpread.add(e.timeStamp - lastMove);
  lastMove = e.timeStamp;
  points.push([e.clientX, e.clientY]);
  if (points.length > 3) points.shift();
  const [a, b, c] = points;
  if (a && b && c) {
    const cross = (b[0] - a[0]) * (c[1] - b[1]) - (b[1] - a[1]) * (c[0] - b[0]);
    triples++;
    if (cross === 0) collinear++;
  }
}

function onKey(e: KeyboardEvent): void {
  presses++;
  if (lastKey >= 0 && e.timeStamp - lastKey < PAUSE_MS) keySpread.add(e.timeStamp - lastKey);
  lastKey = e.timeStamp;
}

/** Starts listening (passively, capture phase) once per page. */
export function startSignals(): void {
  if (started) return;
  started = true;
  const options = { passive: true, capture: true };
  addEventListener('pointermove', onMove, options);
  addEventListener('keydown', onKey, options);
  addEventListener('touchstart', () => touches++, options);
}

const clamp = (n: number): number => Math.max(0, Math.min(20_000, Math.round(n) || 0));

/** Automation hints a real browser never shows; each is at most 32 characters. */
function headlessHints(): string[] {
  const hints: string[] = [];
  const ua = navigator.userAgent;
  if (/Headless/i.test(ua)) hints.push('headless-ua');
  if (navigator.plugins && navigator.plugins.length === 0) hints.push('no-plugins');
  if (outerWidth === 0 && outerHeight === 0) hints.push('zero-outer-size');
  if (/Chrome\//.test(ua) && !('chrome' in window)) hints.push('no-chrome-object');
  return hints;
}

/** The signals object sent with init. */
export function collectSignals(): Record<string, unknown> {
  const signals: Record<string, unknown> = {
    webdriver: navigator.webdriver === true,
    headless: headlessHints(),
    languages: [...(navigator.languages ?? [])].slice(0, 16).map((l) => l.slice(0, 35)),
    screen: { w: clamp(screen.width), h: clamp(screen.height) },
    touch: (navigator.maxTouchPoints ?? 0) > 0,
    pointer: {
      moves: Math.min(moves, 1_000_000),
      ...(moveSpread.std() === undefined ? {} : { intervalStdMs: moveSpread.std() }),
      ...(triples > 0 ? { straightness: collinear / triples } : {}),
    },
    keys: {
      presses: Math.min(presses, 1_000_000),
      ...(keySpread.std() === undefined ? {} : { intervalStdMs: keySpread.std() }),
    },
    touches: Math.min(touches, 1_000_000),
  };
  try {
    const zone = Intl.DateTimeFormat().resolvedOptions().timeZone;
    if (zone) signals.timezone = zone.slice(0, 64);
  } catch {}
  return signals;
}
