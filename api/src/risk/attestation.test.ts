import { publicVerif } from '@cloudflare/privacypass-ts';
import { beforeAll, describe, expect, it } from 'vitest';
import { AttestationVerifier } from './attestation.ts';

const { BlindRSAMode, Client, Issuer, getPublicKeyBytes } = publicVerif;

async function makeIssuer(name: string) {
  const keys = await Issuer.generateKey(BlindRSAMode.PSS, {
    modulusLength: 2048,
    publicExponent: Uint8Array.from([1, 0, 1]),
  });
  const issuer = new Issuer(BlindRSAMode.PSS, name, keys.privateKey, keys.publicKey);
  const spki = Buffer.from(await crypto.subtle.exportKey('spki', keys.publicKey)).toString('base64');
  return { issuer, spki, publicKeyBytes: await getPublicKeyBytes(keys.publicKey) };
}

/** Runs the real issuance protocol: the client blinds, the issuer signs, the client finalizes. */
async function obtainToken(
  verifier: AttestationVerifier,
  who: Awaited<ReturnType<typeof makeIssuer>>,
  issuerName = who.issuer.name,
) {
  const client = new Client(BlindRSAMode.PSS);
  const request = await client.createTokenRequest(verifier.challengeFor(issuerName), who.publicKeyBytes);
  const token = await client.finalize(await who.issuer.issue(request));
  return Buffer.from(token.serialize()).toString('base64url');
}

describe('AttestationVerifier (Privacy Pass, publicly verifiable)', () => {
  let trusted: Awaited<ReturnType<typeof makeIssuer>>;
  let stranger: Awaited<ReturnType<typeof makeIssuer>>;
  let verifier: AttestationVerifier;

  beforeAll(async () => {
    trusted = await makeIssuer('issuer.example');
    stranger = await makeIssuer('issuer.example');
    verifier = await AttestationVerifier.create(
      [{ name: 'issuer.example', public_key: trusted.spki }],
      ['api.gatehouse.test'],
    );
  }, 60_000);

  it('accepts a token from a trusted issuer once, then refuses its replay', async () => {
    const token = await obtainToken(verifier, trusted);
    expect(await verifier.verify(token)).toBe(true);
    expect(await verifier.verify(token)).toBe(false);
  });
  it('refuses a token signed by an untrusted key under the same issuer name', async () => {
    expect(await verifier.verify(await obtainToken(verifier, stranger))).toBe(false);
  });
  it('refuses a token obtained for another origin', async () => {
    const elsewhere = await AttestationVerifier.create(
      [{ name: 'issuer.example', public_key: trusted.spki }],
      ['evil.test'],
    );
    expect(await verifier.verify(await obtainToken(elsewhere, trusted))).toBe(false);
  });
  it('refuses altered and malformed tokens', async () => {
    const token = Buffer.from(await obtainToken(verifier, trusted), 'base64url');
    token[token.length - 5]! ^= 1;
    expect(await verifier.verify(token.toString('base64url'))).toBe(false);
    expect(await verifier.verify('not-a-token')).toBe(false);
    expect(await verifier.verify('')).toBe(false);
  });
  it('names a bad issuer key at start-up', async () => {
    await expect(AttestationVerifier.create([{ name: 'x', public_key: 'AAAA' }], [])).rejects.toThrow(
      /Privacy Pass issuer "x"/,
    );
  });
});
