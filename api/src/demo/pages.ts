import { DEMO_USER, LOGIN_ACTION, type LoginResult, TOKEN_FIELD } from './login.ts';

/** The demo site's two pages. Every interpolated value goes through `html`. */

const ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

/** Escapes text for HTML element content and double- or single-quoted attributes. */
export function html(value: unknown): string {
  return String(value).replace(/[&<>"']/g, (c) => ESCAPES[c]!);
}

const STYLE = `
  :root { color-scheme: light dark; font-family: system-ui, sans-serif; }
  body { margin: 0; min-height: 100vh; display: grid; place-items: center; background: Canvas; }
  main { width: min(26rem, 92vw); padding: 2rem; border: 1px solid #8884; border-radius: 12px; }
  h1 { margin-top: 0; font-size: 1.4rem; }
  label { display: block; margin: 0 0 1rem; font-weight: 600; }
  input { display: block; width: 100%; box-sizing: border-box; margin-top: .3rem; padding: .55rem; font: inherit; }
  button { width: 100%; padding: .7rem; font: inherit; font-weight: 600; cursor: pointer; }
  .hint { color: GrayText; font-size: .9rem; }
  .widget { margin: 0 0 1rem; min-height: 4rem; }
  .outcome { padding: .8rem 1rem; border-radius: 8px; }
  .ok { background: #1a7f3726; } .no { background: #cf222e26; } .skip { background: #bf870026; }
  table { border-collapse: collapse; width: 100%; margin: 1rem 0; font-size: .9rem; }
  th, td { text-align: left; padding: .25rem .4rem; border-bottom: 1px solid #8883; }
  td { word-break: break-all; }
`;

function layout(title: string, body: string, head = ''): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${html(title)} · Gatehouse demo</title>
<style>${STYLE}</style>
${head}
</head>
<body>
${body}
</body>
</html>
`;
}

/**
 * What a site should do with an unverified (co_) result: say so before the form is sent, and offer a
 * new verification (Gatehouse.reverify); a real token hides the note again.
 */
const UNVERIFIED_SCRIPT = `
function demoUnverified() { document.getElementById('unverified').hidden = false; }
function demoVerified() { document.getElementById('unverified').hidden = true; }
document.getElementById('reverify').addEventListener('click', function () {
  window.Gatehouse && window.Gatehouse.reverify('#gatehouse').catch(function () {});
});
// The form goes by fetch: when the backend answers that Gatehouse could not check the token (the main
// API is down), the widget verifies again through the standby and the form is sent once more.
var form = document.querySelector('form');
form.addEventListener('submit', function (event) {
  if (!window.fetch || !window.Gatehouse) return;
  event.preventDefault();
  fetch(form.action, { method: 'POST', body: new URLSearchParams(new FormData(form)), credentials: 'same-origin' })
    .then(function (res) { return res.text(); })
    .then(function (page) {
      if (page.indexOf('data-outcome="reverify"') >= 0) {
        document.getElementById('unverified').hidden = true;
        return window.Gatehouse.reverify('#gatehouse').then(function () { form.submit(); });
      }
      document.open();
      document.write(page);
      document.close();
    })
    .catch(function () { form.submit(); });
});`;

/**
 * The embed that survives its first host being down (docs/widget-failover.md, "An embed that survives
 * an outage"): gatehouse.js from the main API, else from each standby host in turn, moving on after an
 * error or 4 s; the loader ignores a second copy of itself. The same bytes are served everywhere.
 */
export function fallbackEmbed(hosts: string[]): string {
  const list = JSON.stringify(hosts.map((h) => `${h.replace(/\/+$/, '')}/widget/gatehouse.js`)).replace(
    /</g,
    '\\u003c',
  );
  return `<script>(function(u,i){function n(){if(window.Gatehouse||i>=u.length)return;var s=document.createElement('script'),t=setTimeout(n,4000);s.src=u[i++];s.async=true;s.onload=function(){clearTimeout(t)};s.onerror=function(){clearTimeout(t);n()};document.head.appendChild(s)}n()})(${list},0)</script>`;
}

/** GET /login: the form, protected by the widget loaded from the API, else from a standby host. */
/**
 * The browser's preferred language from Accept-Language (highest q first), for the widget: the page's own
 * text is English (`<html lang="en">`), which the widget would otherwise follow. Unsupported: English.
 */
export function preferredLanguage(acceptLanguage: string | undefined): string | undefined {
  const ranked = (acceptLanguage ?? '')
    .split(',')
    .map((part, i) => {
      const [tag = '', ...params] = part.trim().split(';');
      const q = Number(
        params
          .find((p) => p.trim().startsWith('q='))
          ?.trim()
          .slice(2) ?? 1,
      );
      return { tag: tag.trim(), q: Number.isFinite(q) ? q : 0, i };
    })
    .filter((l) => /^[A-Za-z]{2,3}(-[A-Za-z0-9]{1,8})*$/.test(l.tag) && l.q > 0)
    .sort((a, b) => b.q - a.q || a.i - b.i);
  return ranked[0]?.tag;
}

export function loginPage(options: {
  apiUrl: string;
  appKey: string;
  standbyUrls?: string[];
  /** The widget's language (the visitor's, from Accept-Language); absent: the page's, English. */
  lang?: string | undefined;
}): string {
  const script = fallbackEmbed([options.apiUrl, ...(options.standbyUrls ?? [])]);
  return layout(
    'Sign in',
    `<main>
<h1>Sign in</h1>
<p class="hint">Demo account: <code>${html(DEMO_USER.username)}</code> / <code>${html(DEMO_USER.password)}</code>.
The Gatehouse widget verifies you; this site's backend validates its token with <code>@gatehouse/node</code>.</p>
<form method="post" action="/login">
<label>Username <input name="username" autocomplete="username" required></label>
<label>Password <input name="password" type="password" autocomplete="current-password" required></label>
<div class="widget" id="gatehouse" data-gatehouse-app-key="${html(options.appKey)}" data-gatehouse-action="${LOGIN_ACTION}" data-gatehouse-field-name="${TOKEN_FIELD}" data-gatehouse-api-server="${html(options.apiUrl)}" data-gatehouse-callback="demoVerified" data-gatehouse-unverified-callback="demoUnverified"${options.lang ? ` data-gatehouse-lang="${html(options.lang)}"` : ''}></div>
<p class="outcome skip" id="unverified" hidden>We couldn't check that you're human right now (the verification service is unreachable).
This site refuses unverified sign-ins: <button type="button" id="reverify">Try the verification again</button></p>
<button type="submit">Sign in</button>
</form>
</main>
<script>${UNVERIFIED_SCRIPT}</script>`,
    script,
  );
}

const TONE: Record<LoginResult['outcome'], string> = {
  'signed-in': 'ok',
  'wrong-password': 'no',
  rejected: 'no',
  degraded: 'skip',
  'client-only': 'skip',
  unavailable: 'no',
  reverify: 'skip',
};

/** POST /login: what happened, and the verdict the server SDK returned. */
export function resultPage(result: LoginResult): string {
  const v = result.verdict;
  const rows: [string, unknown][] = v
    ? [
        ['valid', v.valid],
        ['accepted (valid and action = login)', v.accepted],
        ['action', v.action ?? '—'],
        ['challenge id', v.challengeId ?? '—'],
        ['error code', v.errorCode ?? '—'],
        ['degraded', v.degraded],
        ['offline', v.offline],
        ['reason', v.reason ?? '—'],
        ['risk score', v.captchaArgs?.riskScore ?? '—'],
        ['client IP check', v.clientIpCheck ?? '—'],
      ]
    : [];
  const table = rows.length
    ? `<table>${rows.map(([k, val]) => `<tr><th>${html(k)}</th><td>${html(val)}</td></tr>`).join('')}</table>`
    : '';
  return layout(
    result.title,
    `<main data-outcome="${html(result.outcome)}">
<h1>${html(result.title)}</h1>
<p class="outcome ${TONE[result.outcome]}">${html(result.message)}</p>
${table}
<p><a href="/login">Back to the sign-in page</a></p>
</main>`,
  );
}
