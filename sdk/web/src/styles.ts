/**
 * Theme variables shared by the box and the challenge UI: light by default, dark for `data-theme="dark"`,
 * and the system's choice for `auto`. Pages override any of them with `--gatehouse-*` custom properties,
 * which inherit into the shadow roots. Contrast: text and controls meet WCAG AA on their backgrounds.
 */
const DARK =
  '--bg:var(--gatehouse-bg,#1c2128);--fg:var(--gatehouse-fg,#e6edf3);--mu:var(--gatehouse-muted,#a3adb8);--bd:var(--gatehouse-border,#7d8590);--ac:var(--gatehouse-accent,#6cb6ff);--on:var(--gatehouse-on-accent,#0d1117);--er:var(--gatehouse-error,#ff8e88);--ok:var(--gatehouse-success,#56d364);--sf:var(--gatehouse-surface,#262c36);color-scheme:dark';
export const THEME_CSS = `:host{--bg:var(--gatehouse-bg,#ffffff);--fg:var(--gatehouse-fg,#1f2328);--mu:var(--gatehouse-muted,#57606a);--bd:var(--gatehouse-border,#6e7781);--ac:var(--gatehouse-accent,#0a58ca);--on:var(--gatehouse-on-accent,#ffffff);--er:var(--gatehouse-error,#b42318);--ok:var(--gatehouse-success,#1a7f37);--sf:var(--gatehouse-surface,#f6f8fa);--r:var(--gatehouse-radius,8px);color-scheme:light;font:14px/1.4 var(--gatehouse-font,system-ui,-apple-system,"Segoe UI",Roboto,sans-serif);color:var(--fg)}
:host([data-theme=dark]){${DARK}}
@media (prefers-color-scheme:dark){:host([data-theme=auto]){${DARK}}}
*{box-sizing:border-box}
:focus-visible{outline:3px solid var(--ac);outline-offset:2px}
.sr{position:absolute;width:1px;height:1px;margin:-1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap;border:0}
@keyframes gh-spin{to{transform:rotate(360deg)}}
@media (prefers-reduced-motion:reduce){*{animation-duration:0s!important;animation-iteration-count:1!important;transition:none!important}}`;

/** The box of the embedded and popup modes: a checkbox-like button, its status, a progress bar. */
export const BOX_CSS = `:host{display:block;max-width:320px}
.box{position:relative;display:flex;align-items:center;gap:10px;min-height:64px;padding:10px 12px;background:var(--bg);border:1px solid var(--bd);border-radius:var(--r);overflow:hidden}
.check{display:flex;align-items:center;gap:10px;flex:1;min-height:44px;padding:0;border:0;background:none;color:inherit;font:inherit;text-align:start;cursor:pointer}
.check[aria-disabled=true]{cursor:default}
.icon{flex:none;width:26px;height:26px;border:2px solid var(--bd);border-radius:4px;background:var(--bg)}
[data-state=running] .icon{border-radius:50%;border-color:var(--sf);border-top-color:var(--ac);animation:gh-spin .8s linear infinite}
[data-state=done] .icon{border-color:var(--ok);background:var(--ok);clip-path:polygon(14% 52%,0 66%,38% 100%,100% 26%,86% 12%,38% 72%)}
[data-state=error] .icon{border-color:var(--er)}
.txt{display:flex;flex-direction:column}
.status{color:var(--mu);font-size:12px}
[data-state=error] .status{color:var(--er)}
[data-state=done] .status{color:var(--ok)}
.brand{font-size:11px;color:var(--mu);align-self:flex-end}
.bar{position:absolute;left:0;bottom:0;height:3px;width:calc(var(--p,0)*100%);background:var(--ac);transition:width .2s}
:not([data-state=running])>.bar{display:none}
.slot:not(:empty){margin-top:8px}
:host([data-size=compact]){max-width:160px}
:host([data-size=compact]) .box{flex-direction:column;align-items:stretch}
:host([data-size=flexible]){max-width:none;width:100%}
[data-state=expired] .status{color:var(--er)}
[data-state=unverified] .icon{border-style:dashed;border-color:var(--er)}
[data-state=unverified] .status{color:var(--fg)}`;

/** Applies CSS to a shadow root: a constructed stylesheet where supported (no inline-style CSP issue). */
export function adopt(root: ShadowRoot, css: string): void {
  try {
    const sheet = new CSSStyleSheet();
    sheet.replaceSync(css);
    root.adoptedStyleSheets = [...root.adoptedStyleSheets, sheet];
  } catch {
    const style = document.createElement('style');
    style.textContent = css;
    root.appendChild(style);
  }
}
