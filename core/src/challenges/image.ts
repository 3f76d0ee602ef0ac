import type { Canvas } from '@napi-rs/canvas';
import type { EncodedImage, ImageFormat } from './types.ts';

/**
 * JPEG quality for the opaque images (backgrounds, grids, prompt strips). At 80 the files are the size of
 * WebP at 80 (about 10 KB for a slide background) and libjpeg-turbo encodes them about nine times faster
 * than libwebp's lossy encoder, which was three quarters of the cost of a challenge (docs/challenges.md).
 */
export const JPEG_QUALITY = 80;
/** WebP quality for lossy encoding (`format: 'webp'`). */
export const WEBP_QUALITY = 80;

const MIME = { jpeg: 'image/jpeg', webp: 'image/webp', png: 'image/png' } as const;

/**
 * Encodes a canvas off the main thread (napi-rs runs `encode` on the libuv pool). JPEG has no alpha, so an
 * image that needs it (`alpha`: the slide's piece) goes out as lossless WebP instead: for a 64 px piece
 * that is faster than lossy WebP or PNG and smaller than PNG.
 */
export async function encodeCanvas(
  canvas: Canvas,
  format: ImageFormat,
  { alpha = false }: { alpha?: boolean } = {},
): Promise<EncodedImage> {
  const as = format === 'jpeg' && alpha ? 'webp-lossless' : format;
  const data =
    as === 'jpeg'
      ? await canvas.encode('jpeg', JPEG_QUALITY)
      : as === 'webp'
        ? await canvas.encode('webp', WEBP_QUALITY)
        : as === 'webp-lossless'
          ? // napi-rs maps WebP quality 100 to libwebp's lossless mode.
            await canvas.encode('webp', 100)
          : await canvas.encode('png');
  return {
    mime: MIME[as === 'webp-lossless' ? 'webp' : as],
    width: canvas.width,
    height: canvas.height,
    data,
  };
}
