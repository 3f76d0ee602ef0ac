import { existsSync } from 'node:fs';
import { type Browser, chromium } from 'playwright-core';

/** Debian's Chromium; CHROMIUM_PATH overrides it. */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/**
 * Whether the browser tests can run here. A missing Chromium skips them with a loud message outside CI
 * and throws under CI=true, so CI can never pass by skipping.
 */
export function chromiumAvailable(): boolean {
  if (existsSync(CHROMIUM_PATH)) return true;
  const message = `Chromium is not installed at ${CHROMIUM_PATH}: the widget's browser tests cannot run (apt-get install chromium).`;
  if (process.env.CI === 'true') throw new Error(message);
  console.warn(`\n!!! SKIPPING: ${message}\n`);
  return false;
}

/** Launches headless Chromium with the flags that keep it quiet and offline. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}
