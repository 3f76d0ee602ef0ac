import type { Canvas } from '@napi-rs/canvas';
import { canvas as napiCanvas } from './canvas.ts';
import type { EncodedImage, ImageFormat } from './types.ts';

/**
 * JPEG quality for the opaque images (backgrounds, grids, prompt strips). At 80 the files are the size of
 * WebP at 80 (about 10 KB for a slide background) and libjpeg-turbo encodes them several times faster
 * than libwebp's lossy encoder, whose encoding would otherwise be most of a challenge's cost
 * (docs/challenges.md).
 */
export const JPEG_QUALITY = 80;
/** WebP quality for lossy encoding (`format: 'webp'`). */
export const WEBP_QUALITY = 80;

const MIME = { jpeg: 'image/jpeg', webp: 'image/webp', png: 'image/png' } as const;

/**
 * Encodes a canvas. JPEG has no alpha, so an image that needs it (`alpha`: the slide's piece) goes out as
 * lossless WebP instead: for a 64 px piece that is faster than lossy WebP or PNG and smaller than PNG.
 * Encoding is synchronous, on the drawing thread: napi-rs's async `encode` hands the pixels to the libuv
 * pool and back, which cost a sixth more CPU per slide, and the API draws in renderer processes anyway.
 */
export function encodeCanvas(
  canvas: Canvas,
  format: ImageFormat,
  { alpha = false }: { alpha?: boolean } = {},
): EncodedImage {
  const as = format === 'jpeg' && alpha ? 'webp-lossless' : format;
  const data =
    as === 'jpeg'
      ? canvas.encodeSync('jpeg', JPEG_QUALITY)
      : as === 'webp'
        ? canvas.encodeSync('webp', WEBP_QUALITY)
        : as === 'webp-lossless'
          ? // napi-rs maps WebP quality 100 to libwebp's lossless mode.
            canvas.encodeSync('webp', 100)
          : canvas.encodeSync('png');
  return {
    mime: MIME[as === 'webp-lossless' ? 'webp' : as],
    width: canvas.width,
    height: canvas.height,
    data,
  };
}

const canvases = new Map<string, Canvas>();

/**
 * A canvas of this thread for `use` at this size, cleared and with its state reset: drawing a challenge
 * reuses the same few canvases instead of creating new ones (the first encode of a new canvas cost about
 * twice the next one). Safe because a challenge is drawn and encoded without yielding (no `await` between
 * taking a canvas and encoding it), so two challenges never share one at the same time.
 */
export function reusableCanvas(use: string, width: number, height: number): Canvas {
  const key = `${use}:${width}x${height}`;
  let canvas = canvases.get(key);
  if (!canvas) {
    canvas = napiCanvas().createCanvas(width, height);
    canvases.set(key, canvas);
  } else canvas.getContext('2d').reset();
  return canvas;
}
