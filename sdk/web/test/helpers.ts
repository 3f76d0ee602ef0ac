import type { Locator, Page } from 'playwright-core';
import { seededRandom } from '../../../core/src/challenges/random.ts';
import { humanDrag } from '../../../core/src/challenges/test-trajectories.ts';

/** What the test pages record from the widget's callbacks. */
export type WidgetEvent =
  | { type: 'success'; token: string }
  /** A client-only co_ token: nothing could verify the visitor (onUnverified). */
  | { type: 'unverified'; token: string }
  | { type: 'error'; code: string; message: string }
  | { type: 'close' }
  | { type: 'ready' };

/** Options a test passes to Gatehouse.render (functions are built in the page). */
export interface PageRenderOptions {
  appKey: string;
  action?: string;
  mode?: 'invisible' | 'popup' | 'embedded' | 'button';
  /** Button mode: a CSS selector. */
  button?: string;
  apiServer?: string;
  bypassServers?: string;
  theme?: 'light' | 'dark' | 'auto';
  lang?: string;
  /** Gives the widget a getServerToken that asks the page's backend for one. */
  withGetServerToken?: boolean;
}

/** Waits for the loader, then renders a widget into #captcha recording its callbacks in window.events. */
export async function render(page: Page, options: PageRenderOptions): Promise<void> {
  await page.waitForFunction(() => 'Gatehouse' in window);
  await page.evaluate((o) => {
    // biome-ignore lint/suspicious/noExplicitAny: the page's globals, set and read by this test only.
    const w = window as unknown as Record<string, any>;
    w.events = [];
    const { withGetServerToken, ...rest } = o;
    w.handle = w.Gatehouse.render('#captcha', {
      action: 'login',
      ...rest,
      onSuccess: (token: string) => w.events.push({ type: 'success', token }),
      onUnverified: (token: string) => w.events.push({ type: 'unverified', token }),
      onError: (e: { code: string; message: string }) =>
        w.events.push({ type: 'error', code: e.code, message: e.message }),
      onClose: () => w.events.push({ type: 'close' }),
      onReady: () => w.events.push({ type: 'ready' }),
      ...(withGetServerToken
        ? {
            getServerToken: async () => {
              const res = await fetch(
                `/backend/server-token?app=${encodeURIComponent(o.appKey)}&action=login`,
              );
              return (await res.json()).data.server_token;
            },
          }
        : {}),
    });
  }, options);
}

export function events(page: Page): Promise<WidgetEvent[]> {
  return page.evaluate(() => (window as unknown as { events: WidgetEvent[] }).events);
}

/** Waits for the first success, unverified or error callback and returns it. */
export async function outcome(page: Page, timeout = 60_000): Promise<WidgetEvent> {
  await page.waitForFunction(
    () =>
      (window as unknown as { events?: WidgetEvent[] }).events?.some(
        (e) => e.type === 'success' || e.type === 'unverified' || e.type === 'error',
      ),
    null,
    { timeout, polling: 100 },
  );
  return (await events(page)).find(
    (e) => e.type === 'success' || e.type === 'unverified' || e.type === 'error',
  ) as WidgetEvent;
}

/** Class list of the focused element, looking through open shadow roots. */
export function focusedClass(page: Page): Promise<string> {
  return page.evaluate(() => {
    let active = document.activeElement;
    while (active?.shadowRoot?.activeElement) active = active.shadowRoot.activeElement;
    return active ? `${active.tagName.toLowerCase()}.${active.className}` : '';
  });
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The element's box once it stopped moving (the piece animates back to the start after a wrong answer). */
async function settledBox(handle: Locator) {
  let last = await handle.boundingBox();
  for (let i = 0; i < 50; i++) {
    await sleep(100);
    const now = await handle.boundingBox();
    if (now && last && now.x === last.x && now.y === last.y) return now;
    last = now;
  }
  throw new Error('the element never stopped moving');
}

/** How a drag reaches the page: the mouse, or a finger through CDP touch events. */
export interface Pointer {
  down(x: number, y: number): Promise<void>;
  move(x: number, y: number): Promise<void>;
  up(x: number, y: number): Promise<void>;
}

export const mouse = (page: Page): Pointer => ({
  async down(x, y) {
    await page.mouse.move(x, y);
    await page.mouse.down();
  },
  move: (x, y) => page.mouse.move(x, y),
  up: () => page.mouse.up(),
});

/** A finger on a touch screen (the context needs `hasTouch`): Chromium turns these into touch pointer events. */
export async function finger(page: Page): Promise<Pointer> {
  const cdp = await page.context().newCDPSession(page);
  const send = (type: 'touchStart' | 'touchMove' | 'touchEnd', x: number, y: number) =>
    cdp
      .send('Input.dispatchTouchEvent', { type, touchPoints: type === 'touchEnd' ? [] : [{ x, y }] })
      .then(() => {});
  return {
    down: (x, y) => send('touchStart', x, y),
    move: (x, y) => send('touchMove', x, y),
    up: (x, y) => send('touchEnd', x, y),
  };
}

/** Each drag its own seed unless told: the API refuses a drag that repeats one its app saw (a replay). */
let dragSeed = 7;

/**
 * Drags the slide handle by `dx` background px like a hand: replays a minimum-jerk trajectory with
 * overshoot, correction, tremor and vertical drift (core's test-trajectories), in real time.
 */
export async function dragLikeAHuman(
  page: Page,
  handle: Locator,
  dx: number,
  scale: number,
  seed = ++dragSeed,
  pointer: Pointer = mouse(page),
): Promise<void> {
  const box = await settledBox(handle);
  const x0 = box.x + box.width / 2;
  const y0 = box.y + box.height / 2;
  await pointer.down(x0, y0);
  await sleep(120);
  const points = humanDrag(seededRandom(seed), dx, { durationMs: 1400, overshootPx: 7 });
  let last = { x: x0, y: y0 };
  let previous = { t: 0, sentAt: Date.now() };
  for (const p of points) {
    // Each gap is kept from the move before, not from the start: when this process stalls (a busy CI
    // machine), the drag takes longer, as a slow hand would, instead of catching up in a robotic burst.
    const wait = p.t - previous.t - (Date.now() - previous.sentAt);
    if (wait > 0) await sleep(wait);
    last = { x: x0 + p.x * scale, y: y0 + p.y * scale };
    previous = { t: p.t, sentAt: Date.now() };
    await pointer.move(last.x, last.y);
  }
  await sleep(80);
  await pointer.up(last.x, last.y);
}

/** A robot's drag: straight to the target in one move, no time taken. */
export async function dragInstantly(page: Page, handle: Locator, dx: number, scale: number): Promise<void> {
  const box = await settledBox(handle);
  const x0 = box.x + box.width / 2;
  const y0 = box.y + box.height / 2;
  await page.mouse.move(x0, y0);
  await page.mouse.down();
  await page.mouse.move(x0 + dx * scale, y0, { steps: 1 });
  await page.mouse.up();
}

/** Presses a key after a human-ish pause (irregular, 60–180 ms). */
export async function press(page: Page, key: string): Promise<void> {
  // Enter confirms: a person looks at the result first (the slide refuses a confirmation on the beat).
  await sleep(60 + Math.random() * 120 + (key === 'Enter' ? 250 : 0));
  await page.keyboard.press(key);
}

/** Polls `check` (state kept by the test, such as events recorded from the page) until it holds or `ms` pass. */
export async function waitFor(what: string, check: () => boolean, ms = 10_000): Promise<void> {
  const until = Date.now() + ms;
  while (!check()) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}
