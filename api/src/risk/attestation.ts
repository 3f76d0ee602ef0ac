import { createHash } from 'node:crypto';
import { publicVerif, TOKEN_TYPES, Token, TokenChallenge } from '@cloudflare/privacypass-ts';
import { constantTimeEqual } from '@gatehouse/core/crypto';
import type { PrivacyPassIssuer } from '../config.ts';

/**
 * Privacy Pass attestation (RFC 9577/9578, publicly verifiable tokens, type 0x0002 Blind RSA): a token
 * from an issuer we trust shows the client passed that issuer's attestation (a device check, a solved
 * challenge elsewhere) without telling us who it is. Verified with Cloudflare's maintained library; each
 * token is accepted once per process (its nonce is remembered for an hour).
 */
interface TrustedIssuer {
  name: string;
  key: CryptoKey;
  /** SHA-256 of the issuer's public key: token_key_id in every token it signs. */
  keyId: Buffer;
}

export class AttestationVerifier {
  readonly #issuers: TrustedIssuer[];
  readonly #originInfo: string[];
  readonly #seen = new Map<string, number>();

  private constructor(issuers: TrustedIssuer[], originInfo: string[]) {
    this.#issuers = issuers;
    this.#originInfo = originInfo;
  }

  /** Imports the configured issuer keys; throws at start-up naming the bad entry. */
  static async create(config: PrivacyPassIssuer[], originInfo: string[]): Promise<AttestationVerifier> {
    const issuers = await Promise.all(
      config.map(async (entry) => {
        const spki = Buffer.from(entry.public_key, 'base64');
        try {
          const key = await crypto.subtle.importKey('spki', spki, TOKEN_TYPES.BLIND_RSA.rsaParams, true, [
            'verify',
          ]);
          // The key id hashes the RSASSA-PSS SPKI encoding of RFC 9578, not WebCrypto's rsaEncryption one.
          const encoded = await publicVerif.getPublicKeyBytes(key);
          return { name: entry.name, key, keyId: createHash('sha256').update(encoded).digest() };
        } catch {
          throw new Error(
            `Privacy Pass issuer "${entry.name}": public_key is not an RSA SPKI key in base64.`,
          );
        }
      }),
    );
    return new AttestationVerifier(issuers, originInfo);
  }

  /**
   * True only when: 1. the token parses as a type 2 token, 2. it was signed for a challenge naming one of
   * our issuers and our origin, 3. its key id is that issuer's, 4. the RSA signature verifies, 5. its
   * nonce was not seen before (no double spending within this process's memory).
   */
  async verify(encoded: string): Promise<boolean> {
    let token: Token;
    try {
      // A fresh Uint8Array: the library reads `.buffer`, and a small Buffer is a view into a shared pool.
      token = Token.deserialize(TOKEN_TYPES.BLIND_RSA, new Uint8Array(Buffer.from(encoded, 'base64url')));
    } catch {
      return false;
    }
    const digest = Buffer.from(token.authInput.challengeDigest);
    const keyId = Buffer.from(token.authInput.tokenKeyId);
    for (const issuer of this.#issuers) {
      const challenge = new TokenChallenge(
        TOKEN_TYPES.BLIND_RSA.value,
        issuer.name,
        new Uint8Array(0),
        this.#originInfo,
      );
      const expected = createHash('sha256').update(challenge.serialize()).digest();
      if (!constantTimeEqual(digest, expected) || !constantTimeEqual(keyId, issuer.keyId)) continue;
      const origin = new publicVerif.Origin(publicVerif.BlindRSAMode.PSS, this.#originInfo);
      if (!(await origin.verify(token, issuer.key))) return false;
      return this.#firstUse(Buffer.from(token.authInput.nonce).toString('hex'));
    }
    return false;
  }

  /** The token challenge clients must obtain tokens for (for the WWW-Authenticate header and tests). */
  challengeFor(issuerName: string): TokenChallenge {
    return new TokenChallenge(TOKEN_TYPES.BLIND_RSA.value, issuerName, new Uint8Array(0), this.#originInfo);
  }

  #firstUse(nonce: string): boolean {
    const now = Date.now();
    if (this.#seen.size > 100_000) {
      for (const [n, at] of this.#seen) if (now - at > 3_600_000) this.#seen.delete(n);
      if (this.#seen.size > 100_000) this.#seen.clear();
    }
    if (this.#seen.has(nonce)) return false;
    this.#seen.set(nonce, now);
    return true;
  }
}
