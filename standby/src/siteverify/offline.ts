import { OFFLINE_PREFIX, offlineTokenPayload } from '@gatehouse/core/tokens';

/**
 * The `cdata` an `offline_` token carries, read from its payload. Only for a token a checker has already
 * found genuine (its MAC under a region key): nothing here is checked again.
 */
export function cdataOfOfflineToken(token: string): string {
  const body = token.slice(OFFLINE_PREFIX.length).split('.')[0] ?? '';
  try {
    const payload = offlineTokenPayload.safeParse(
      JSON.parse(Buffer.from(body, 'base64url').toString('utf8')),
    );
    return payload.success ? (payload.data.cd ?? '') : '';
  } catch {
    return '';
  }
}
