/**
 * gatehouse-compat.js: the loader (window.Gatehouse) plus the globals of the verification service a page
 * was written for, picked by the path the API serves this file at (api/src/routes/widget.ts):
 *   /turnstile/v0/api.js           window.turnstile   (Cloudflare Turnstile; with ?compat=recaptcha, grecaptcha too)
 *   /recaptcha/api.js, enterprise.js   window.grecaptcha  (Google reCAPTCHA v2, invisible, v3, Enterprise)
 *   /hcaptcha/1/api.js             window.hcaptcha    (and window.grecaptcha unless ?recaptchacompat=off)
 * Script parameters as the vendors document them: `render=explicit` turns implicit render off, `onload=fn`
 * names a global called once the API is ready (after implicit render), `hl` sets the language.
 */
import '../loader.ts';
import { scriptUrl } from '../chunks.ts';
import { installHcaptcha } from './hcaptcha.ts';
import { installRecaptcha } from './recaptcha.ts';
import { installTurnstile } from './turnstile.ts';
import { onloadCallback, whenParsed } from './widget.ts';

export type Vendor = 'turnstile' | 'recaptcha' | 'hcaptcha';

/** Which vendor a script path stands for. */
export function vendorOf(path: string): Vendor | undefined {
  if (/\/turnstile\//.test(path)) return 'turnstile';
  if (/\/recaptcha\//.test(path)) return 'recaptcha';
  if (/\/hcaptcha\//.test(path)) return 'hcaptcha';
  return undefined;
}

const params = scriptUrl.searchParams;
const vendor = vendorOf(scriptUrl.pathname);
const installed =
  vendor === 'turnstile'
    ? installTurnstile()
    : vendor === 'recaptcha'
      ? installRecaptcha(params)
      : vendor === 'hcaptcha'
        ? installHcaptcha(params)
        : undefined;

// Turnstile's `?compat=recaptcha` (developers.cloudflare.com/turnstile/migration/recaptcha/): the page's
// reCAPTCHA code keeps running, on `grecaptcha` and `.g-recaptcha`, next to `turnstile`.
const recaptchaToo =
  vendor === 'turnstile' && params.get('compat') === 'recaptcha' && !('grecaptcha' in window)
    ? installRecaptcha(params, false)
    : undefined;

if (!installed) {
  console.error(
    `Gatehouse: ${scriptUrl.pathname} names no known service; load /turnstile/v0/api.js, /recaptcha/api.js or /hcaptcha/1/api.js.`,
  );
} else {
  whenParsed(() => {
    if (params.get('render') !== 'explicit') {
      installed.implicitRender();
      recaptchaToo?.implicitRender();
    }
    onloadCallback(params);
  });
}
