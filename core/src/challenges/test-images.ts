/** Test helpers: decode an encoded challenge image to RGBA pixels, as a browser would. */
import { createCanvas, loadImage } from '@napi-rs/canvas';
import type { EncodedImage } from './types.ts';

export interface Pixels {
  width: number;
  height: number;
  data: Uint8ClampedArray;
}

export async function decode(image: EncodedImage): Promise<Pixels> {
  const img = await loadImage(image.data);
  const canvas = createCanvas(img.width, img.height);
  const ctx = canvas.getContext('2d');
  ctx.drawImage(img, 0, 0);
  return { width: img.width, height: img.height, data: ctx.getImageData(0, 0, img.width, img.height).data };
}

/** Rec. 601 luma of the pixel at (x, y). */
export function luma(p: Pixels, x: number, y: number): number {
  const i = (y * p.width + x) * 4;
  return (
    0.299 * (p.data[i] as number) + 0.587 * (p.data[i + 1] as number) + 0.114 * (p.data[i + 2] as number)
  );
}

/** True when the bytes start with the JPEG, PNG or WebP (RIFF....WEBP) signature matching the declared type. */
export function hasSignature(image: EncodedImage): boolean {
  const d = image.data;
  if (image.mime === 'image/jpeg') return d.subarray(0, 3).equals(Buffer.from([0xff, 0xd8, 0xff]));
  if (image.mime === 'image/png')
    return d.subarray(0, 8).equals(Buffer.from([137, 80, 78, 71, 13, 10, 26, 10]));
  return d.subarray(0, 4).toString('latin1') === 'RIFF' && d.subarray(8, 12).toString('latin1') === 'WEBP';
}

/** The view with every image replaced by its size, for leak checks on the JSON part. */
export function jsonPart(view: object): unknown {
  return JSON.parse(
    JSON.stringify(view, (_k, v) =>
      v && typeof v === 'object' && 'data' in v && 'mime' in v
        ? { mime: v.mime, width: v.width, height: v.height }
        : v,
    ),
  );
}
