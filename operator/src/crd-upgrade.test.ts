import { describe, expect, it } from 'vitest';
import { compareVersions } from './crd-upgrade.ts';

describe('compareVersions (which CRD is newer)', () => {
  it('orders dotted numeric versions by number, not as text', () => {
    expect(compareVersions('0.10.0', '0.9.9')).toBe(1);
    expect(compareVersions('0.1.0', '0.1.0')).toBe(0);
    expect(compareVersions('0.1', '0.1.0')).toBe(0);
    expect(compareVersions('1.0.0', '99.0.0')).toBe(-1);
    expect(compareVersions('1.2.3-rc.1', '1.2.3')).toBe(0);
  });
});
