/**
 * Chromium through playwright-core, Web Workers in its page, and the CPU time its renderer used. The machine
 * is shared, so rates are counted per CPU-second of the process doing the work, not per wall-clock second.
 */
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { type Browser, chromium, type Page } from 'playwright-core';

const marker = `--gatehouse-pow-bench=${randomBytes(6).toString('hex')}`;
const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  marker,
];

/** Opens the benchmark page; the caller closes the browser. */
export async function openPage(url: string): Promise<{ browser: Browser; page: Page; version: string }> {
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
    args: ARGS,
  });
  const page = await browser.newPage();
  await page.goto(url);
  return { browser, page, version: browser.version() };
}

const read = (path: string) => {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
};

/** CPU milliseconds (user + system, exited threads included) used by this benchmark's Chromium renderers. */
export function rendererCpuMs(): number {
  const procs = readdirSync('/proc').filter((p) => /^\d+$/.test(p));
  const parent = new Map<string, string>();
  const stat = new Map<string, string[]>();
  for (const pid of procs) {
    const fields = read(`/proc/${pid}/stat`)
      .replace(/^.*\) /, '')
      .split(' ');
    parent.set(pid, fields[1] ?? '');
    stat.set(pid, fields);
  }
  const root = procs.find(
    (pid) =>
      read(`/proc/${pid}/cmdline`).includes(marker) && !read(`/proc/${pid}/cmdline`).includes('--type='),
  );
  const ours = (pid: string): boolean => {
    for (let p = pid, hops = 0; p && p !== '0' && hops < 10; p = parent.get(p) ?? '', hops++)
      if (p === root) return true;
    return false;
  };
  let ticks = 0;
  for (const pid of procs) {
    if (!root || !ours(pid) || !read(`/proc/${pid}/cmdline`).includes('--type=renderer')) continue;
    const fields = stat.get(pid)!;
    // After "(comm) ": state is field 0, utime field 11, stime field 12 (proc(5) fields 14 and 15).
    ticks += Number(fields[11]) + Number(fields[12]);
  }
  return ticks * 10; // USER_HZ is 100 on Linux
}

/** Starts a Web Worker in the page and returns its index. */
export async function startWorker(
  page: Page,
  script: string,
  type: 'module' | 'classic' = 'module',
): Promise<number> {
  return page.evaluate(
    ({ script, type }) => {
      const w = globalThis as unknown as { workers?: Worker[] };
      w.workers ??= [];
      return w.workers.push(new Worker(script, { type })) - 1;
    },
    { script, type },
  );
}

/** Posts a message to a started worker and resolves with its first reply that is not a progress report. */
export async function ask<T>(
  page: Page,
  index: number,
  message: unknown,
): Promise<{ data: T; wallMs: number }> {
  return page.evaluate(
    ({ index, message }) =>
      new Promise<{ data: T; wallMs: number }>((resolve, reject) => {
        const worker = (globalThis as unknown as { workers: Worker[] }).workers[index]!;
        const start = performance.now();
        worker.onmessage = (event) => {
          if ((event.data as { type?: string })?.type === 'progress') return;
          resolve({ data: event.data as T, wallMs: performance.now() - start });
        };
        worker.onerror = (event) => reject(new Error(`worker ${index}: ${event.message}`));
        worker.postMessage(message);
      }),
    { index, message },
  );
}

/** Terminates every worker the page started. */
export async function stopWorkers(page: Page): Promise<void> {
  await page.evaluate(() => {
    const w = globalThis as unknown as { workers?: Worker[] };
    for (const worker of w.workers ?? []) worker.terminate();
    w.workers = [];
  });
}

/** Runs one request in a fresh worker; returns its reply, wall time and the renderer CPU time it cost. */
export async function runWorker<T>(
  page: Page,
  script: string,
  message: unknown,
  type: 'module' | 'classic' = 'module',
): Promise<{ data: T; wallMs: number; cpuMs: number }> {
  const cpu0 = rendererCpuMs();
  const index = await startWorker(page, script, type);
  const { data, wallMs } = await ask<T>(page, index, message);
  const cpuMs = rendererCpuMs() - cpu0;
  await stopWorkers(page);
  return { data, wallMs, cpuMs };
}
