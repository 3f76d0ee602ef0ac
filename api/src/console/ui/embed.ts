import { html } from 'htm/preact';
import type { Json } from './api.ts';
import { CopyButton } from './copy.ts';

/**
 * How to put one app in a site: the widget tag for the page, the server SDK's check of the pass token,
 * and the siteverify URLs for a site that already speaks Turnstile, reCAPTCHA or hCaptcha. Every URL is
 * this server's own origin, as the browser reached it.
 */
export function snippets(app: Json, origin: string) {
  return [
    {
      id: 'widget',
      title: 'Widget tag (in the page, inside the form)',
      text: `<div data-gatehouse-app-key="${app.app_key}" data-gatehouse-action="login"></div>
<script src="${origin}/widget/gatehouse.js" async defer></script>`,
    },
    {
      id: 'server',
      title: 'Server check (Node SDK, @gatehouse/node)',
      text: `import { Gatehouse } from '@gatehouse/node';

const gatehouse = new Gatehouse({
  appKey: '${app.app_key}',
  appSecret: process.env.GATEHOUSE_APP_SECRET,
  baseUrl: '${origin}',
});

// The widget put the pass token in the form's "gatehouse-token" field.
const verdict = await gatehouse.validate(form['gatehouse-token'], {
  expectedAction: 'login',
  clientIp: request.ip,
});
if (!verdict.accepted) throw new Error('captcha not passed');`,
    },
    {
      id: 'siteverify',
      title: 'Siteverify URLs (drop-in for an existing integration; secret = the app secret)',
      text: `${origin}/turnstile/v0/siteverify
${origin}/recaptcha/api/siteverify
${origin}/siteverify`,
    },
  ];
}

export function EmbedSnippets(props: { app: Json }) {
  return html`<section aria-labelledby="embed-title">
    <h3 id="embed-title">Embed</h3>
    <p class="hint">Go, PHP and the other options: docs/sdk-*.md and docs/migrating.md. The action (<code>login</code>)
      is yours to name; the server checks the same one.</p>
    ${snippets(props.app, location.origin).map(
      (s) => html`<div class="snippet">
        <div class="snippet-head"><h4 id=${`snippet-${s.id}`}>${s.title}</h4><${CopyButton} text=${s.text} label=${s.title} /></div>
        <pre aria-labelledby=${`snippet-${s.id}`} tabindex="0"><code>${s.text}</code></pre>
      </div>`,
    )}
  </section>`;
}
