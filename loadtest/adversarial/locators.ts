/**
 * The page's locators (page-solvers.js) loaded into Node, and images decoded to the pixels they read: what
 * offline.ts and human.ts run on challenges drawn here, without a browser.
 */
import { readFileSync } from 'node:fs';
import { createCanvas, loadImage } from '@napi-rs/canvas';

type Locate = (input: unknown, options?: unknown) => unknown;
const page: { __adversary?: Record<string, Locate> } = {};
new Function('window', readFileSync(new URL('page-solvers.js', import.meta.url), 'utf8'))(page);
export const adversary = page.__adversary as Record<string, Locate>;

/** An encoded image's RGBA pixels, as the locators take them. */
export async function pixels(image: { data: Buffer }) {
  const img = await loadImage(image.data);
  const c = createCanvas(img.width, img.height);
  const ctx = c.getContext('2d');
  ctx.drawImage(img, 0, 0);
  return { w: img.width, h: img.height, d: ctx.getImageData(0, 0, img.width, img.height).data };
}
