import { type PageServer, readBody, startTestSite } from './page-server.ts';

/*
 * An integrator's site written against a verification vendor's public documentation, not against
 * Gatehouse: its pages (given by each test) and a backend whose form handler verifies the vendor's response
 * field with the vendor's siteverify call exactly as documented. Only the siteverify URL and the secret
 * differ from the vendor's examples: they point at Gatehouse.
 */

export type Vendor = 'turnstile' | 'recaptcha' | 'hcaptcha';

export interface SiteverifyConfig {
  /** The siteverify URL that replaces the vendor's. */
  url: string;
  secret: string;
  /** hCaptcha's optional `sitekey` check (docs.hcaptcha.com, "Verify the User Response Server Side"). */
  sitekey?: string;
}

/** What a backend tells the page (and the test) after verifying. */
export interface BackendVerdict {
  /** The vendor's siteverify answer, as the backend received it. */
  outcome: Record<string, unknown>;
  status: number;
  /** The names of the posted fields, to see what the page's form carried. */
  posted: string[];
}

/**
 * Cloudflare Turnstile, "Validate the token" (developers.cloudflare.com/turnstile/get-started/
 * server-side-validation/): read `cf-turnstile-response` from the form, POST a FormData with `secret`,
 * `response` and `remoteip` to siteverify, and trust `outcome.success`.
 */
async function turnstileBackend(form: URLSearchParams, ip: string, config: SiteverifyConfig) {
  const token = form.get('cf-turnstile-response') ?? '';
  const formData = new FormData();
  formData.append('secret', config.secret);
  formData.append('response', token);
  formData.append('remoteip', ip);
  const result = await fetch(config.url, { body: formData, method: 'POST' });
  return { status: result.status, outcome: (await result.json()) as Record<string, unknown> };
}

/**
 * Google reCAPTCHA, "Verifying the user's response" (developers.google.com/recaptcha/docs/verify): the
 * token is the `g-recaptcha-response` POST parameter; POST `secret`, `response` and `remoteip` to
 * siteverify; the JSON answer has `success` (and for v3 `score` and `action`).
 */
async function recaptchaBackend(form: URLSearchParams, ip: string, config: SiteverifyConfig) {
  const result = await fetch(config.url, {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({
      secret: config.secret,
      response: form.get('g-recaptcha-response') ?? '',
      remoteip: ip,
    }),
  });
  return { status: result.status, outcome: (await result.json()) as Record<string, unknown> };
}

/**
 * hCaptcha, "Verify the User Response Server Side" (docs.hcaptcha.com/#verify-the-user-response-server-side):
 * the token is the `h-captcha-response` POST parameter; POST `secret`, `response`, optionally `remoteip`
 * and `sitekey`, form-encoded, to siteverify; `success` says whether it passed.
 */
async function hcaptchaBackend(form: URLSearchParams, ip: string, config: SiteverifyConfig) {
  const body = new URLSearchParams({
    secret: config.secret,
    response: form.get('h-captcha-response') ?? '',
    remoteip: ip,
  });
  if (config.sitekey) body.set('sitekey', config.sitekey);
  const result = await fetch(config.url, {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    body,
  });
  return { status: result.status, outcome: (await result.json()) as Record<string, unknown> };
}

const BACKENDS = { turnstile: turnstileBackend, recaptcha: recaptchaBackend, hcaptcha: hcaptchaBackend };

export type VendorSite = PageServer;

/**
 * The site: `GET <path>` serves a page, `POST /submit` (a form post, or `fetch` with a form-encoded body)
 * runs the vendor's backend check and answers `<pre id="verdict">{json}</pre>`.
 */
export async function startVendorSite(vendor: Vendor, config: SiteverifyConfig): Promise<VendorSite> {
  return startTestSite(async (req, res, url) => {
    if (req.method === 'POST' && url.pathname === '/submit') {
      const form = new URLSearchParams((await readBody(req)).toString('utf8'));
      const ip = req.socket.remoteAddress ?? '';
      const { status, outcome } = await BACKENDS[vendor](form, ip, config);
      const verdict: BackendVerdict = { outcome, status, posted: [...form.keys()] };
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end(`<!doctype html><pre id="verdict">${JSON.stringify(verdict).replace(/</g, '\\u003c')}</pre>`);
    } else if (url.pathname === '/favicon.ico') {
      res.writeHead(204).end();
    } else {
      return false;
    }
    return true;
  }, 'text/html; charset=utf-8');
}
