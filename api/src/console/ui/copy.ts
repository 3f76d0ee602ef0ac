import { html } from 'htm/preact';
import { useState } from 'preact/hooks';

/** Puts `text` on the clipboard; outside a secure context (plain HTTP on another host), through a selection. */
async function copyText(text: string): Promise<void> {
  if (navigator.clipboard && window.isSecureContext) {
    await navigator.clipboard.writeText(text);
    return;
  }
  const area = document.createElement('textarea');
  area.value = text;
  area.setAttribute('readonly', '');
  area.className = 'visually-hidden';
  document.body.append(area);
  area.select();
  const done = document.execCommand('copy');
  area.remove();
  if (!done) throw new Error('The browser refused to copy.');
}

/** A button that copies `text`, named after what it copies; says "Copied" (politely) once it did. */
export function CopyButton(props: { text: string; label: string }) {
  const [state, setState] = useState<'idle' | 'copied' | 'failed'>('idle');
  const copy = () =>
    copyText(props.text).then(
      () => setState('copied'),
      () => setState('failed'),
    );
  return html`<span class="copy">
    <button type="button" class="secondary small" onClick=${copy} aria-label=${`Copy ${props.label}`}>Copy</button>
    <span role="status" class="copy-state">${state === 'copied' ? 'Copied' : state === 'failed' ? 'Copy failed: select and copy by hand' : ''}</span>
  </span>`;
}
