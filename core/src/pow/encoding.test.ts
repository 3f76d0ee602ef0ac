import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fromBase64Url, meetsTarget, nonceBytes, toBase64Url } from './encoding.ts';

describe('encoding', () => {
  it('base64url round-trips any bytes and matches Buffer', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 40 }), (bytes) => {
        const text = toBase64Url(bytes);
        expect(text).toBe(Buffer.from(bytes).toString('base64url'));
        expect(fromBase64Url(text)).toEqual(bytes);
      }),
    );
  });

  it('rejects foreign characters, padding, dangling groups and non-canonical trailing bits', () => {
    for (const bad of ['AAA=', 'AA+A', 'A', 'AAAAA', 'AB', 'AAB']) expect(fromBase64Url(bad)).toBeNull();
  });

  it('encodes nonces as 4 big-endian bytes', () => {
    expect([...nonceBytes(0x01020304)]).toEqual([1, 2, 3, 4]);
    expect([...nonceBytes(0xffff_ffff)]).toEqual([255, 255, 255, 255]);
  });

  it('compares the first 32 bits, big-endian, strictly below the target', () => {
    const hash = new Uint8Array([0x80, 0, 0, 0, 0xff]);
    expect(meetsTarget(hash, 0x8000_0000)).toBe(false);
    expect(meetsTarget(hash, 0x8000_0001)).toBe(true);
    expect(meetsTarget(new Uint8Array([0xff, 0xff, 0xff, 0xff]), 2 ** 32)).toBe(true);
    expect(meetsTarget(new Uint8Array(3), 2 ** 32)).toBe(false);
  });
});
