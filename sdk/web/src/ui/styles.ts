/** The challenge panel, popup dialog and the three kinds. Theme variables come from THEME_CSS. */
export const UI_CSS = `:host{display:block}
dialog{padding:0;border:0;background:none;color:inherit;max-width:calc(100vw - 16px);max-height:calc(100vh - 16px);overflow:auto}
dialog::backdrop{background:rgb(0 0 0/.5)}
.panel{position:relative;width:min(340px,calc(100vw - 16px));padding:12px;background:var(--bg);color:var(--fg);border:1px solid var(--bd);border-radius:var(--r);box-shadow:0 8px 28px rgb(0 0 0/.25)}
.embedded .panel{box-shadow:none;width:100%;max-width:340px}
.head{display:flex;align-items:flex-start;gap:8px;margin-bottom:8px}
.prompt{flex:1;margin:0;font-weight:600;font-size:15px}
.x{flex:none;display:grid;place-items:center;width:32px;height:32px;padding:0;border:0;border-radius:6px;background:none;color:var(--fg);cursor:pointer}
.x:hover,.ghost:hover{background:var(--sf)}
.stage{position:relative;width:100%;overflow:hidden;border-radius:6px;user-select:none;-webkit-user-select:none;background:var(--sf)}
.stage>img{display:block;width:100%;height:100%;pointer-events:none}
.stage>.piece{height:auto;pointer-events:auto}
.piece{position:absolute;left:0;cursor:grab;touch-action:none;filter:drop-shadow(0 2px 3px rgb(0 0 0/.5))}
.track{position:relative;height:44px;margin-top:10px;border:1px solid var(--bd);border-radius:22px;background:var(--sf)}
.fill{position:absolute;left:0;top:0;bottom:0;border-radius:22px;background:color-mix(in srgb,var(--ac) 25%,transparent)}
.handle{position:absolute;top:-1px;left:0;height:44px;display:grid;place-items:center;border-radius:22px;background:var(--ac);color:var(--on);cursor:grab;touch-action:none}
.handle:active,.piece:active{cursor:grabbing}
.anim .piece,.anim .handle,.anim .fill{transition:left .3s ease,width .3s ease}
.order{display:block;max-width:100%;height:auto;margin:0 0 8px;border-radius:4px}
.pick{cursor:crosshair}
.mark{position:absolute;width:24px;height:24px;margin:-12px 0 0 -12px;display:grid;place-items:center;border:2px solid #fff;border-radius:50%;background:var(--ac);color:var(--on);font-weight:700;font-size:13px;pointer-events:none;box-shadow:0 1px 3px rgb(0 0 0/.6)}
.cross{display:none;position:absolute;width:28px;height:28px;margin:-14px 0 0 -14px;border:2px solid #fff;border-radius:50%;box-shadow:0 0 0 2px #000;pointer-events:none}
.pick:focus-visible .cross{display:block}
.tile{position:absolute;padding:0;border:0;background:none;cursor:pointer}
.tile[aria-pressed=true]{box-shadow:inset 0 0 0 4px var(--ac);background:color-mix(in srgb,var(--ac) 22%,transparent)}
.tile[aria-pressed=true]::after{content:"";position:absolute;top:6px;right:6px;width:22px;height:22px;border-radius:50%;background:var(--ac) url('data:image/svg+xml,%3Csvg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24"%3E%3Cpath d="m6 12 4 4 8-8" fill="none" stroke="white" stroke-width="3"/%3E%3C/svg%3E') center/16px no-repeat;box-shadow:0 0 0 2px #fff}
.tile:focus-visible{outline-offset:-5px}
.foot{display:flex;align-items:center;gap:8px;margin-top:10px}
.msg{flex:1;margin:0;font-size:13px;min-height:1.4em;color:var(--mu)}
.msg.err{color:var(--er)}
.btn{min-height:36px;padding:6px 14px;border:1px solid var(--ac);border-radius:6px;background:var(--ac);color:var(--on);font:inherit;font-weight:600;cursor:pointer}
.btn.ghost{background:none;color:var(--fg);border-color:var(--bd)}
.btn.icon{display:inline-grid;place-items:center;min-width:36px;padding:0}
.btn:disabled,.btn[aria-disabled=true]{opacity:.45;cursor:not-allowed}
.panel[aria-busy=true] .body{opacity:.6;pointer-events:none}
.bar{display:none;position:absolute;left:0;bottom:0;height:3px;width:calc(var(--p,0)*100%);background:var(--ac);border-radius:0 0 0 var(--r);transition:width .2s}
.panel[aria-busy=true] .bar{display:block}
.done{position:absolute;inset:0;display:none;place-items:center;align-content:center;gap:8px;background:var(--bg);border-radius:var(--r);color:var(--ok);font-weight:600}
.panel.ok .done{display:grid}
.done svg{width:48px;height:48px}
.alt{margin-top:6px;text-align:end}
.link{min-height:24px;padding:2px 4px;border:0;background:none;color:var(--fg);font:inherit;font-size:13px;text-decoration:underline;cursor:pointer}
.alt-status{margin:8px 0;font-size:14px}
.alt-status:focus{outline:none}
.meter{height:8px;border-radius:4px;background:var(--sf);border:1px solid var(--bd);overflow:hidden}
.meter::after{content:"";display:block;height:100%;width:calc(var(--p,0)*100%);background:var(--ac);transition:width .2s}
.done path{stroke:var(--bg)}`;
