import { describe, expect, it } from 'vitest';
import { encodeCanvas, reusableCanvas } from './image.ts';
import { decode, hasSignature } from './test-images.ts';

describe('reusableCanvas', () => {
  it('hands back the same canvas per use and size, cleared and with its drawing state reset', () => {
    const a = reusableCanvas('test', 20, 10);
    const ctx = a.getContext('2d');
    ctx.fillStyle = 'red';
    ctx.fillRect(0, 0, 20, 10);
    ctx.translate(5, 5);
    ctx.globalAlpha = 0.2;
    ctx.globalCompositeOperation = 'overlay';
    const again = reusableCanvas('test', 20, 10);
    expect(again).toBe(a);
    expect(reusableCanvas('test', 21, 10)).not.toBe(a);
    expect(reusableCanvas('other', 20, 10)).not.toBe(a);
    const c = again.getContext('2d');
    expect(Array.from(c.getImageData(0, 0, 20, 10).data).every((v) => v === 0)).toBe(true);
    expect([c.globalAlpha, c.globalCompositeOperation]).toEqual([1, 'source-over']);
    const m = c.getTransform();
    expect([m.a, m.b, m.c, m.d, m.e, m.f]).toEqual([1, 0, 0, 1, 0, 0]);
  });
});

describe('encodeCanvas', () => {
  it('JPEG for opaque images, lossless WebP where transparency is needed, both decodable', async () => {
    const canvas = reusableCanvas('test-encode', 16, 16);
    const ctx = canvas.getContext('2d');
    ctx.fillStyle = 'rgb(200, 40, 40)';
    ctx.fillRect(4, 4, 8, 8);
    const opaque = encodeCanvas(canvas, 'jpeg');
    const clear = encodeCanvas(canvas, 'jpeg', { alpha: true });
    expect([opaque.mime, clear.mime]).toEqual(['image/jpeg', 'image/webp']);
    expect(hasSignature(opaque) && hasSignature(clear)).toBe(true);
    // Lossless: the transparent corner and the opaque square come back exactly.
    const pixels = await decode(clear);
    expect(Array.from(pixels.data.subarray(0, 4))).toEqual([0, 0, 0, 0]);
    const centre = (8 * 16 + 8) * 4;
    expect(Array.from(pixels.data.subarray(centre, centre + 4))).toEqual([200, 40, 40, 255]);
    expect(encodeCanvas(canvas, 'png').mime).toBe('image/png');
    expect(encodeCanvas(canvas, 'webp').mime).toBe('image/webp');
  });
});
