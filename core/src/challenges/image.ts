import type { Canvas } from '@napi-rs/canvas';
import type { EncodedImage, ImageFormat } from './types.ts';

/**
 * WebP quality for lossy encoding. 80 keeps symbol edges and the slide gap crisp to the eye while the
 * noise layer costs little; see docs/challenges.md for measured sizes.
 */
export const WEBP_QUALITY = 80;

/** Encodes a canvas off the main thread (napi-rs runs `encode` on the libuv pool). */
export async function encodeCanvas(canvas: Canvas, format: ImageFormat): Promise<EncodedImage> {
  const data = format === 'webp' ? await canvas.encode('webp', WEBP_QUALITY) : await canvas.encode('png');
  return {
    mime: format === 'webp' ? 'image/webp' : 'image/png',
    width: canvas.width,
    height: canvas.height,
    data,
  };
}
