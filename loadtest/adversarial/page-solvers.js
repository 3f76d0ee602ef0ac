// In-page solvers of the adversarial harness: what a script injected into the integrator's page can do
// with the pixels the widget shows (pixel arithmetic only, no model). Plain JavaScript, injected as text
// with page.addInitScript, so nothing is lost to a bundler. Every function returns its best guess; none
// knows the answer. Coordinates are in image px.
(() => {
  /** The widget's shadow roots are open: walk them to find its elements. */
  function deepQueryAll(selector, root = document) {
    const out = [...root.querySelectorAll(selector)];
    for (const el of root.querySelectorAll('*'))
      if (el.shadowRoot) out.push(...deepQueryAll(selector, el.shadowRoot));
    return out;
  }
  function pixels(img) {
    const c = document.createElement('canvas');
    c.width = img.naturalWidth;
    c.height = img.naturalHeight;
    const ctx = c.getContext('2d');
    ctx.drawImage(img, 0, 0);
    return { w: c.width, h: c.height, d: ctx.getImageData(0, 0, c.width, c.height).data };
  }
  const grey = (d, i) => 0.299 * d[i] + 0.587 * d[i + 1] + 0.114 * d[i + 2];
  function greyPlane(p) {
    const g = new Float32Array(p.w * p.h);
    for (let i = 0; i < g.length; i++) g[i] = grey(p.d, i * 4);
    return g;
  }
  /** Sobel gradient magnitude of a grey plane. */
  function sobel(g, w, h) {
    const m = new Float32Array(w * h);
    for (let y = 1; y < h - 1; y++)
      for (let x = 1; x < w - 1; x++) {
        const i = y * w + x;
        const gx = g[i - w + 1] + 2 * g[i + 1] + g[i + w + 1] - g[i - w - 1] - 2 * g[i - 1] - g[i + w - 1];
        const gy = g[i + w - 1] + 2 * g[i + w] + g[i + w + 1] - g[i - w - 1] - 2 * g[i - w] - g[i - w + 1];
        m[i] = Math.hypot(gx, gy);
      }
    return m;
  }

  function slideImages() {
    const piece = deepQueryAll('img.piece')[0];
    const background = deepQueryAll('.slide .stage > img:not(.piece)')[0];
    if (!piece || !background) throw new Error('no slide on the page');
    const bg = pixels(background);
    const pc = pixels(piece);
    const pieceY = Math.round((Number.parseFloat(piece.style.top) / 100) * bg.h);
    return { bg, pc, pieceY };
  }
  /** The piece's opaque interior (away from its rim) and its outline ring, as offsets. */
  function pieceMasks(pc) {
    const a = (x, y) => (x < 0 || y < 0 || x >= pc.w || y >= pc.h ? 0 : pc.d[(y * pc.w + x) * 4 + 3]);
    const inner = [];
    const ring = [];
    for (let y = 0; y < pc.h; y++)
      for (let x = 0; x < pc.w; x++) {
        const opaque = a(x, y) > 128;
        let deep = opaque;
        let edge = false;
        for (let dy = -4; dy <= 4 && (deep || !edge); dy++)
          for (let dx = -4; dx <= 4; dx++) {
            const o = a(x + dx, y + dy) > 128;
            if (!o) deep = false;
            if (Math.abs(dx) <= 1 && Math.abs(dy) <= 1 && o !== opaque) edge = true;
          }
        if (deep) inner.push([x, y]);
        if (edge && opaque) ring.push([x, y]);
      }
    return { inner, ring };
  }

  /**
   * The best positions, best first, each at least 30 px from a better one: the first try, then the next
   * for the second attempt the API allows.
   */
  function candidates(scores) {
    const out = [];
    // The gap never overlaps the resting piece (public: the track and piece sizes are in the view).
    for (const c of [...scores].filter((c) => c.x >= 64).sort((a, b) => b.score - a.score)) {
      if (out.every((x) => Math.abs(x - c.x) >= 30)) out.push(c.x);
      if (out.length === 3) break;
    }
    return out;
  }

  /** The template-match solver: normalised cross-correlation of the piece's pixels along its row. */
  function slideContent(input = slideImages()) {
    const { bg, pc, pieceY } = input;
    const { inner } = pieceMasks(pc);
    const B = greyPlane(bg);
    const P = inner.map(([x, y]) => grey(pc.d, (y * pc.w + x) * 4));
    const pm = P.reduce((s, v) => s + v, 0) / P.length;
    const pv = P.map((v) => v - pm);
    const pn = Math.sqrt(pv.reduce((s, v) => s + v * v, 0)) || 1;
    const scores = [];
    for (let x = 0; x <= bg.w - pc.w; x++) {
      const vals = inner.map(([ix, iy]) => B[(pieceY + iy) * bg.w + x + ix]);
      const m = vals.reduce((s, v) => s + v, 0) / vals.length;
      let num = 0;
      let den = 0;
      for (let k = 0; k < vals.length; k++) {
        num += pv[k] * (vals[k] - m);
        den += (vals[k] - m) ** 2;
      }
      const score = num / (pn * (Math.sqrt(den) || 1));
      scores.push({ x, score });
    }
    return candidates(scores);
  }

  /** A shape matcher: the piece's outline laid over the background's edges, along its row. */
  function slideOutline(input = slideImages()) {
    const { bg, pc, pieceY } = input;
    const { ring } = pieceMasks(pc);
    const E = sobel(greyPlane(bg), bg.w, bg.h);
    const scores = [];
    for (let x = 0; x <= bg.w - pc.w; x++) {
      let s = 0;
      for (const [rx, ry] of ring) s += E[(pieceY + ry) * bg.w + x + rx];
      scores.push({ x, score: s });
    }
    return candidates(scores);
  }

  /**
   * The piece's alpha mask turned back by `angle` (radians) about its centre: the gap's orientation if
   * the piece was turned by `angle`.
   */
  function turnedMask(pc, angle) {
    const c = (pc.w - 1) / 2;
    const cos = Math.cos(angle);
    const sin = Math.sin(angle);
    const m = new Uint8Array(pc.w * pc.h);
    for (let y = 0; y < pc.h; y++)
      for (let x = 0; x < pc.w; x++) {
        // The pixel of the shown (turned) piece that lands here once it is turned back.
        const sx = Math.round(c + cos * (x - c) - sin * (y - c));
        const sy = Math.round(c + sin * (x - c) + cos * (y - c));
        if (sx >= 0 && sy >= 0 && sx < pc.w && sy < pc.h && pc.d[(sy * pc.w + sx) * 4 + 3] > 128)
          m[y * pc.w + x] = 1;
      }
    return m;
  }
  /** Offsets of the bands `from`..`to` px inside and outside a mask's edge (chessboard distance). */
  function bands(m, w, h, from, to) {
    const inner = [];
    const outer = [];
    for (let y = 0; y < h; y++)
      for (let x = 0; x < w; x++) {
        const v = m[y * w + x];
        let d = 99;
        for (let r = 1; r <= to && d === 99; r++)
          for (let dy = -r; dy <= r && d === 99; dy++)
            for (let dx = -r; dx <= r; dx++) {
              const xx = x + dx;
              const yy = y + dy;
              const o = xx >= 0 && yy >= 0 && xx < w && yy < h ? m[yy * w + xx] : 0;
              if (o !== v) {
                d = r;
                break;
              }
            }
        if (d >= from && d <= to) (v ? inner : outer).push([x, y]);
      }
    return { inner, outer };
  }

  /**
   * A competent hole finder (the outline matcher made as strong as an attacker would make it): the
   * piece's outline turned back through every angle the piece may have been turned by (±36°, 3° steps),
   * scored along its row by how much darker the picture is just inside the outline than just outside
   * (a hole is darker than its rim's surroundings, whatever the clutter's edges do).
   */
  function slideHole(input = slideImages(), { maxDeg = 36, stepDeg = 3 } = {}) {
    const { bg, pc, pieceY } = input;
    const B = greyPlane(bg);
    const scores = [];
    for (let x = 0; x <= bg.w - pc.w; x++) scores.push({ x, score: Number.NEGATIVE_INFINITY });
    for (let deg = -maxDeg; deg <= maxDeg; deg += stepDeg) {
      const { inner, outer } = bands(turnedMask(pc, (deg * Math.PI) / 180), pc.w, pc.h, 1, 3);
      for (let x = 0; x <= bg.w - pc.w; x++) {
        let si = 0;
        let so = 0;
        let no = 0;
        for (const [ix, iy] of inner) si += B[(pieceY + iy) * bg.w + x + ix];
        for (const [ox, oy] of outer) {
          const yy = pieceY + oy;
          if (yy < 0 || yy >= bg.h) continue;
          so += B[yy * bg.w + x + ox];
          no++;
        }
        const s = so / (no || 1) - si / inner.length;
        if (s > scores[x].score) scores[x].score = s;
      }
    }
    return candidates(scores);
  }

  /**
   * Where a binary template (offsets from its centre) sits best in an RGB image: a uniform fill inside
   * that differs from a ring just outside it. Tries rotations and scales; returns the best placements.
   */
  function matchTemplate(p, template, { rotations = 12, scales = [0.6, 0.8, 1], step = 3, box } = {}) {
    const { w, h, d } = p;
    const x0 = box?.x ?? 0;
    const y0 = box?.y ?? 0;
    const x1 = box ? box.x + box.w : w;
    const y1 = box ? box.y + box.h : h;
    const results = [];
    for (let r = 0; r < rotations; r++) {
      const a = (r / rotations) * Math.PI * 2;
      for (const s of scales) {
        const inside = [];
        const outside = [];
        const set = new Set();
        for (const [tx, ty] of template.points) {
          const x = Math.round((Math.cos(a) * tx - Math.sin(a) * ty) * s);
          const y = Math.round((Math.sin(a) * tx + Math.cos(a) * ty) * s);
          const k = `${x},${y}`;
          if (!set.has(k)) {
            set.add(k);
            inside.push([x, y]);
          }
        }
        // At most ~250 points inside: a sample of the template scores as well and keeps a page responsive.
        const stride = Math.max(1, Math.floor(inside.length / 250));
        const full = inside.splice(0, inside.length);
        for (let k = 0; k < full.length; k += stride) inside.push(full[k]);
        for (const [x, y] of inside)
          for (const [dx, dy] of [
            [4, 0],
            [-4, 0],
            [0, 4],
            [0, -4],
          ]) {
            const k = `${x + dx},${y + dy}`;
            if (!set.has(k)) {
              set.add(k);
              outside.push([x + dx, y + dy]);
            }
          }
        const rad = template.radius * s;
        // Offsets into the RGBA buffer, computed once per rotation and scale (same sums, in the same order,
        // as indexing each point afresh: only faster, so a page, or offline.ts, runs it in seconds).
        const nIn = inside.length;
        const inOff = new Int32Array(nIn);
        for (let k = 0; k < nIn; k++) inOff[k] = (inside[k][1] * w + inside[k][0]) * 4;
        const nOut = outside.length;
        const outX = new Int32Array(nOut);
        const outY = new Int32Array(nOut);
        const outOff = new Int32Array(nOut);
        for (let k = 0; k < nOut; k++) {
          outX[k] = outside[k][0];
          outY[k] = outside[k][1];
          outOff[k] = (outside[k][1] * w + outside[k][0]) * 4;
        }
        for (let cy = y0 + rad; cy < y1 - rad; cy += step)
          for (let cx = x0 + rad; cx < x1 - rad; cx += step) {
            const rx = Math.round(cx);
            const ry = Math.round(cy);
            const base = (ry * w + rx) * 4;
            let m0 = 0;
            let m1 = 0;
            let m2 = 0;
            let q0 = 0;
            let q1 = 0;
            let q2 = 0;
            for (let k = 0; k < nIn; k++) {
              const i = base + inOff[k];
              const a = d[i];
              const b = d[i + 1];
              const c = d[i + 2];
              m0 += a;
              q0 += a * a;
              m1 += b;
              q1 += b * b;
              m2 += c;
              q2 += c * c;
            }
            let o0 = 0;
            let o1 = 0;
            let o2 = 0;
            let n = 0;
            for (let k = 0; k < nOut; k++) {
              const px = rx + outX[k];
              const py = ry + outY[k];
              if (px < 0 || py < 0 || px >= w || py >= h) continue;
              const i = base + outOff[k];
              o0 += d[i];
              o1 += d[i + 1];
              o2 += d[i + 2];
              n++;
            }
            const nn = n || 1;
            const a0 = m0 / nIn;
            const a1 = m1 / nIn;
            const a2 = m2 / nIn;
            let variance = q0 / nIn - a0 * a0;
            variance += q1 / nIn - a1 * a1;
            variance += q2 / nIn - a2 * a2;
            let contrast = (a0 - o0 / nn) ** 2;
            contrast += (a1 - o1 / nn) ** 2;
            contrast += (a2 - o2 / nn) ** 2;
            results.push({ x: cx, y: cy, score: Math.sqrt(contrast) / Math.sqrt(variance + 100) });
          }
      }
    }
    results.sort((a, b) => b.score - a.score);
    return results;
  }

  /** A dark silhouette in the click prompt strip, as points around its centre. */
  function silhouette(p, left, size) {
    const points = [];
    for (let y = 0; y < size; y++)
      for (let x = left; x < left + size && x < p.w; x++)
        if (grey(p.d, (y * p.w + x) * 4) < 110) points.push([x, y]);
    const cx = points.reduce((s, q) => s + q[0], 0) / (points.length || 1);
    const cy = points.reduce((s, q) => s + q[1], 0) / (points.length || 1);
    const centred = points.map(([x, y]) => [x - cx, y - cy]);
    const radius = Math.max(1, ...centred.map(([x, y]) => Math.hypot(x, y)));
    // Normalise to radius 20 (the scene's largest symbols are about that size).
    const k = 20 / radius;
    return { radius: 20, points: centred.map(([x, y]) => [x * k, y * k]) };
  }

  /** Click: each prompt silhouette matched against the scene (rotations, scales), in prompt order. */
  function click(
    input = {
      scene: pixels(deepQueryAll('.click .stage > img')[0]),
      strip: pixels(deepQueryAll('img.order')[0]),
    },
  ) {
    const { scene, strip } = input;
    const count = Math.round((strip.w + 16) / 56);
    const clicks = [];
    for (let i = 0; i < count; i++) {
      const best = matchTemplate(scene, silhouette(strip, i * 56, 40))[0];
      clicks.push({ x: best.x, y: best.y });
    }
    return clicks;
  }

  /** Each pixel's grey-level spread over a 5×5 window, ×4, as an RGBA image (grey). */
  function textureMap(scene) {
    const { w, h } = scene;
    const g = greyPlane(scene);
    const t = new Uint8ClampedArray(w * h * 4);
    for (let y = 0; y < h; y++)
      for (let x = 0; x < w; x++) {
        let s = 0;
        let q = 0;
        let n = 0;
        for (let dy = -2; dy <= 2; dy++)
          for (let dx = -2; dx <= 2; dx++) {
            const xx = x + dx;
            const yy = y + dy;
            if (xx < 0 || yy < 0 || xx >= w || yy >= h) continue;
            const v = g[yy * w + xx];
            s += v;
            q += v * v;
            n++;
          }
        const sd = Math.sqrt(Math.max(0, q / n - (s / n) ** 2));
        const i = (y * w + x) * 4;
        t[i] = t[i + 1] = t[i + 2] = Math.min(255, sd * 4);
      }
    return t;
  }

  /**
   * Click, a shape-aware solver (offline only, not a harness row): the textured regions segmented (texture
   * map above a threshold, opened by 2 px to cut the lines off), and each prompt silhouette compared with
   * each region at 36 rotations, scaled to the region's area, by overlap (intersection over union); each
   * prompt takes the best region not taken yet.
   */
  function clickShapesV1(
    input = {
      scene: pixels(deepQueryAll('.click .stage > img')[0]),
      strip: pixels(deepQueryAll('img.order')[0]),
    },
    { threshold = 60 } = {},
  ) {
    const { scene, strip } = input;
    const { w, h } = scene;
    const t = textureMap(scene);
    let m = new Uint8Array(w * h);
    for (let i = 0; i < w * h; i++) m[i] = t[i * 4] > threshold ? 1 : 0;
    const morph = (src, keep) => {
      const out = new Uint8Array(w * h);
      for (let y = 0; y < h; y++)
        for (let x = 0; x < w; x++) {
          let v = keep;
          for (let dy = -2; dy <= 2 && v === keep; dy++)
            for (let dx = -2; dx <= 2; dx++) {
              const xx = x + dx;
              const yy = y + dy;
              const o = xx < 0 || yy < 0 || xx >= w || yy >= h ? 0 : src[yy * w + xx];
              if (o !== keep) {
                v = o;
                break;
              }
            }
          out[y * w + x] = v;
        }
      return out;
    };
    m = morph(morph(m, 1), 0); // erode (a 0 nearby clears), then dilate (a 1 nearby sets)
    const label = new Int32Array(w * h).fill(-1);
    const regions = [];
    for (let i = 0; i < w * h; i++) {
      if (!m[i] || label[i] >= 0) continue;
      const pts = [];
      const stack = [i];
      label[i] = regions.length;
      while (stack.length) {
        const j = stack.pop();
        pts.push(j);
        const x = j % w;
        const y = (j - x) / w;
        for (const [nx, ny] of [
          [x + 1, y],
          [x - 1, y],
          [x, y + 1],
          [x, y - 1],
        ]) {
          if (nx < 0 || ny < 0 || nx >= w || ny >= h) continue;
          const k = ny * w + nx;
          if (m[k] && label[k] < 0) {
            label[k] = regions.length;
            stack.push(k);
          }
        }
      }
      if (pts.length < 120) continue;
      const cx = pts.reduce((a, j) => a + (j % w), 0) / pts.length;
      const cy = pts.reduce((a, j) => a + Math.floor(j / w), 0) / pts.length;
      const set = new Set(
        pts.map((j) => `${Math.round((j % w) - cx)},${Math.round(Math.floor(j / w) - cy)}`),
      );
      regions.push({ x: cx, y: cy, area: pts.length, set });
    }
    const count = Math.round((strip.w + 16) / 56);
    const scores = [];
    for (let i = 0; i < count; i++) {
      const sil = silhouette(strip, i * 56, 40);
      regions.forEach((r, k) => {
        const scale = Math.sqrt(r.area / sil.points.length);
        let best = 0;
        for (let a = 0; a < 36; a++) {
          const ang = (a / 36) * Math.PI * 2;
          const cos = Math.cos(ang);
          const sin = Math.sin(ang);
          const mine = new Set();
          for (const [px, py] of sil.points)
            mine.add(
              `${Math.round((cos * px - sin * py) * scale)},${Math.round((sin * px + cos * py) * scale)}`,
            );
          let inter = 0;
          for (const q of mine) if (r.set.has(q)) inter++;
          const iou = inter / (mine.size + r.set.size - inter);
          if (iou > best) best = iou;
        }
        scores.push({ i, k, score: best });
      });
    }
    scores.sort((a, b) => b.score - a.score);
    const clicks = Array.from({ length: count }, () => ({ x: w / 2, y: h / 2 }));
    const doneP = new Set();
    const doneR = new Set();
    for (const s of scores) {
      if (doneP.has(s.i) || doneR.has(s.k)) continue;
      doneP.add(s.i);
      doneR.add(s.k);
      clicks[s.i] = { x: regions[s.k].x, y: regions[s.k].y };
    }
    return clicks;
  }

  /** Square dilation (op = max) or erosion (op = min) of a 0/1 mask by radius r, separably. */
  function morph2(m, w, h, r, dilate) {
    if (r <= 0) return m;
    const tmp = new Uint8Array(w * h);
    const out = new Uint8Array(w * h);
    const pick = dilate ? 1 : 0;
    for (let y = 0; y < h; y++)
      for (let x = 0; x < w; x++) {
        let v = 1 - pick;
        for (let d = -r; d <= r; d++) {
          const xx = x + d;
          // Outside the image counts as background for both (so shapes at the edge erode there).
          const o = xx < 0 || xx >= w ? 0 : m[y * w + xx];
          if (o === pick) {
            v = pick;
            break;
          }
        }
        tmp[y * w + x] = v;
      }
    for (let y = 0; y < h; y++)
      for (let x = 0; x < w; x++) {
        let v = 1 - pick;
        for (let d = -r; d <= r; d++) {
          const yy = y + d;
          const o = yy < 0 || yy >= h ? 0 : tmp[yy * w + x];
          if (o === pick) {
            v = pick;
            break;
          }
        }
        out[y * w + x] = v;
      }
    return out;
  }
  /** Holes of a mask (background not reachable from the border) set to 1. */
  function fillHoles(m, w, h) {
    const seen = new Uint8Array(w * h);
    const stack = [];
    for (let x = 0; x < w; x++) stack.push(x, (h - 1) * w + x);
    for (let y = 0; y < h; y++) stack.push(y * w, y * w + w - 1);
    while (stack.length) {
      const j = stack.pop();
      if (seen[j] || m[j]) continue;
      seen[j] = 1;
      const x = j % w;
      if (x > 0) stack.push(j - 1);
      if (x < w - 1) stack.push(j + 1);
      if (j >= w) stack.push(j - w);
      if (j < w * (h - 1)) stack.push(j + w);
    }
    const out = new Uint8Array(w * h);
    for (let i = 0; i < w * h; i++) out[i] = seen[i] ? 0 : 1;
    return out;
  }
  /** Each pixel's largest colour-channel spread (standard deviation) over a (2r+1)² window, by integral images. */
  function spreadMap(scene, r) {
    const { w, h, d } = scene;
    const W = w + 1;
    const out = new Float32Array(w * h);
    for (let c = 0; c < 3; c++) {
      const S = new Float64Array(W * (h + 1));
      const Q = new Float64Array(W * (h + 1));
      for (let y = 0; y < h; y++) {
        let rs = 0;
        let rq = 0;
        for (let x = 0; x < w; x++) {
          const v = d[(y * w + x) * 4 + c];
          rs += v;
          rq += v * v;
          S[(y + 1) * W + x + 1] = S[y * W + x + 1] + rs;
          Q[(y + 1) * W + x + 1] = Q[y * W + x + 1] + rq;
        }
      }
      for (let y = 0; y < h; y++)
        for (let x = 0; x < w; x++) {
          const x0 = Math.max(0, x - r);
          const y0 = Math.max(0, y - r);
          const x1 = Math.min(w, x + r + 1);
          const y1 = Math.min(h, y + r + 1);
          const n = (x1 - x0) * (y1 - y0);
          const s = S[y1 * W + x1] - S[y0 * W + x1] - S[y1 * W + x0] + S[y0 * W + x0];
          const q = Q[y1 * W + x1] - Q[y0 * W + x1] - Q[y1 * W + x0] + Q[y0 * W + x0];
          const sd = Math.sqrt(Math.max(0, q / n - (s / n) ** 2));
          if (sd > out[y * w + x]) out[y * w + x] = sd;
        }
    }
    return out;
  }
  /**
   * The striped symbols as regions: colour spread over 5×5 above a threshold, closed (the gaps between
   * stripes and dashes bridged), holes filled, opened (lines and grain cut off); components of symbol size.
   */
  function segmentSymbols(
    scene,
    { threshold = 30, close = 1, open = 2, shrink = 1, minArea = 120, maxArea = 4000 } = {},
  ) {
    const { w, h } = scene;
    const s = spreadMap(scene, 2);
    let m = new Uint8Array(w * h);
    for (let i = 0; i < w * h; i++) m[i] = s[i] > threshold ? 1 : 0;
    m = morph2(morph2(m, w, h, close, true), w, h, close, false);
    m = fillHoles(m, w, h);
    m = morph2(morph2(m, w, h, open, false), w, h, open, true);
    m = morph2(m, w, h, shrink, false);
    return { regions: regionsOf(m, w, h, minArea, maxArea), mask: m };
  }
  /** The 4-connected components of a 0/1 mask with `minArea`–`maxArea` px, as centroids and centred points. */
  function regionsOf(m, w, h, minArea, maxArea) {
    const label = new Int32Array(w * h).fill(-1);
    const regions = [];
    for (let i = 0; i < w * h; i++) {
      if (!m[i] || label[i] >= 0) continue;
      const pts = [];
      const stack = [i];
      label[i] = 0;
      while (stack.length) {
        const j = stack.pop();
        pts.push(j);
        const x = j % w;
        for (const k of [x > 0 ? j - 1 : -1, x < w - 1 ? j + 1 : -1, j - w, j + w]) {
          if (k < 0 || k >= w * h || !m[k] || label[k] >= 0) continue;
          label[k] = 0;
          stack.push(k);
        }
      }
      if (pts.length < minArea || pts.length > maxArea) continue;
      let cx = 0;
      let cy = 0;
      for (const j of pts) {
        cx += j % w;
        cy += Math.floor(j / w);
      }
      cx /= pts.length;
      cy /= pts.length;
      regions.push({
        x: cx,
        y: cy,
        area: pts.length,
        points: pts.map((j) => [(j % w) - cx, Math.floor(j / w) - cy]),
      });
    }
    return regions;
  }
  /** A point set centred on its centroid, as a bitmap of half-size `R` around it (for overlap counts). */
  function centred(points) {
    let cx = 0;
    let cy = 0;
    for (const [x, y] of points) {
      cx += x;
      cy += y;
    }
    cx /= points.length || 1;
    cy /= points.length || 1;
    return points.map(([x, y]) => [x - cx, y - cy]);
  }
  const R = 40;
  function bitmap(points) {
    const b = new Uint8Array((2 * R + 1) ** 2);
    let n = 0;
    for (const [x, y] of points) {
      const xx = Math.round(x) + R;
      const yy = Math.round(y) + R;
      if (xx < 0 || yy < 0 || xx > 2 * R || yy > 2 * R) continue;
      const k = yy * (2 * R + 1) + xx;
      if (!b[k]) {
        b[k] = 1;
        n++;
      }
    }
    return { b, n };
  }
  /**
   * The best intersection over union of shape `a` (points, centred) against bitmap `B` (centred), over
   * rotations of `a` and scales around the one that equalises their areas. Each pixel of the grid is
   * mapped back into `a`'s bitmap (so a scaled-up shape has no gaps).
   */
  function bestIoU(a, B, options) {
    return bestPose(a, B, options).iou;
  }
  /** The silhouettes of the prompt strip (slots of 40 px every 56 px), as centred point sets at radius 20. */
  function promptShapes(strip) {
    const count = Math.round((strip.w + 16) / 56);
    return Array.from({ length: count }, (_, i) => {
      const s = silhouette(strip, i * 56, 40);
      return centred(s.points.map(([x, y]) => [x * 0.8, y * 0.8]));
    });
  }
  /**
   * Best one-to-one labelling of rows to columns (rows <= columns) maximising the summed score: the
   * Hungarian method on the negated scores. Returns the column of each row.
   */
  function assign(score) {
    const n = score.length;
    const m = score[0].length;
    const INF = 1e18;
    const u = new Float64Array(n + 1);
    const v = new Float64Array(m + 1);
    const p = new Int32Array(m + 1);
    const way = new Int32Array(m + 1);
    for (let i = 1; i <= n; i++) {
      p[0] = i;
      let j0 = 0;
      const minv = new Float64Array(m + 1).fill(INF);
      const used = new Uint8Array(m + 1);
      do {
        used[j0] = 1;
        const i0 = p[j0];
        let delta = INF;
        let j1 = 0;
        for (let j = 1; j <= m; j++) {
          if (used[j]) continue;
          const cur = -score[i0 - 1][j - 1] - u[i0] - v[j];
          if (cur < minv[j]) {
            minv[j] = cur;
            way[j] = j0;
          }
          if (minv[j] < delta) {
            delta = minv[j];
            j1 = j;
          }
        }
        for (let j = 0; j <= m; j++)
          if (used[j]) {
            u[p[j]] += delta;
            v[j] -= delta;
          } else minv[j] -= delta;
        j0 = j1;
      } while (p[j0] !== 0);
      do {
        const j1 = way[j0];
        p[j0] = p[j1];
        j0 = j1;
      } while (j0);
    }
    const out = new Array(n);
    for (let j = 1; j <= m; j++) if (p[j]) out[p[j] - 1] = j - 1;
    return out;
  }

  /**
   * Click, the strongest locator here (a row of the harness): the striped symbols segmented
   * (colour spread, closed, filled, opened), every region classified among the public shape list
   * (`templates`, as the select row uses) by intersection over union at 36 rotations, all regions at once
   * (the scene's shapes are distinct, so the labelling is one-to-one); each prompt silhouette, read from
   * the prompt strip, classified the same way; each prompt clicks the region labelled with its shape.
   * Without templates, it compares the prompt silhouettes with the regions directly.
   */
  function clickShapes(
    input = {
      scene: pixels(deepQueryAll('.click .stage > img')[0]),
      strip: pixels(deepQueryAll('img.order')[0]),
    },
    { templates, ...seg } = {},
  ) {
    const { scene, strip } = input;
    const { w, h } = scene;
    const { regions } = segmentSymbols(scene, seg);
    const prompts = promptShapes(strip);
    const clicks = prompts.map(() => ({ x: w / 2, y: h / 2 }));
    if (!regions.length) return clicks;
    const regionMaps = regions.map((r) => bitmap(r.points));
    const withMap = (pts) => Object.assign(pts, { bitmap: bitmap(pts) });
    prompts.forEach(withMap);
    const classes = templates ? Object.values(templates).map((t) => withMap(centred(t.points))) : prompts;
    // Region × class scores; a column of "none" per region lets clutter stay unlabelled.
    const rs = regionMaps.map((B) => classes.map((c) => bestIoU(c, B)));
    const promptClass = prompts.map((p) => {
      if (!templates) return prompts.indexOf(p);
      const sc = classes.map((c) => bestIoU(c, p.bitmap));
      return sc.indexOf(Math.max(...sc));
    });
    // Rows: classes; columns: regions plus one "unseen" column per class (score 0.3: a class the scene
    // lacks, or whose region the segmentation lost).
    const m = regions.length;
    const score = classes.map((_, c) => [
      ...regions.map((_, k) => rs[k][c]),
      ...classes.map((_, c2) => (c2 === c ? 0.3 : -1)),
    ]);
    const pick = assign(score);
    promptClass.forEach((c, i) => {
      let k = pick[c];
      if (k === undefined || k >= m) {
        // Not labelled: the region that scores best for the class.
        k = rs.map((r) => r[c]).reduce((bi, v, j, a) => (v > a[bi] ? j : bi), 0);
      }
      clicks[i] = { x: regions[k].x, y: regions[k].y };
    });
    return clicks;
  }

  /**
   * Where each public shape's hole goes (core/src/challenges/shapes.ts `HOLES`, public like the shape
   * list): unit-scale centre and radius, in the frame the shape is traced in.
   */
  const HOLE_AT = {
    circle: [0, 0, 0.32],
    triangle: [0, 0.1, 0.24],
    square: [0, 0, 0.32],
    pentagon: [0, 0, 0.32],
    star: [0, 0, 0.22],
    heart: [0, 0.05, 0.26],
    arrow: [0.4, 0, 0.22],
    cross: [0, 0, 0.22],
    moon: [-0.6, 0, 0.18],
  };
  /** The best IoU of `a` turned and scaled onto B, with its pose: angle (a's frame turned by it onto B) and scale. */
  function bestPose(a, B, { rotations = 36, scales = [0.92, 1, 1.08] } = {}) {
    const A = a.bitmap ?? bitmap(a);
    const base = Math.sqrt(B.n / A.n);
    const side = 2 * R + 1;
    const best = { iou: 0, ang: 0, k: base };
    for (let r = 0; r < rotations; r++) {
      const ang = (r / rotations) * Math.PI * 2;
      const cos = Math.cos(ang);
      const sin = Math.sin(ang);
      for (const sc of scales) {
        const k = base * sc;
        let inter = 0;
        let n = 0;
        for (let v = -R; v <= R; v++)
          for (let u = -R; u <= R; u++) {
            const x = Math.round((cos * u + sin * v) / k) + R;
            const y = Math.round((-sin * u + cos * v) / k) + R;
            if (x < 0 || y < 0 || x >= side || y >= side || !A.b[y * side + x]) continue;
            n++;
            if (B.b[(v + R) * side + u + R]) inter++;
          }
        const iou = inter / (n + B.n - inter);
        if (iou > best.iou) Object.assign(best, { iou, ang, k });
      }
    }
    return best;
  }
  /**
   * The prompt silhouette in slot i with its hole filled (as promptShapes: centred, at radius 16), and the
   * hole's area: light pixels the slot's border cannot reach.
   */
  function promptSlot(strip, i) {
    const left = i * 56;
    const size = 40;
    const w = Math.min(size, strip.w - left);
    const m = new Uint8Array(w * size);
    for (let y = 0; y < size; y++)
      for (let x = 0; x < w; x++) m[y * w + x] = grey(strip.d, (y * strip.w + left + x) * 4) < 110 ? 1 : 0;
    const filled = fillHoles(m, w, size);
    let holes = 0;
    const pts = [];
    for (let j = 0; j < m.length; j++) {
      if (filled[j] && !m[j]) holes++;
      if (filled[j]) pts.push([j % w, Math.floor(j / w)]);
    }
    const c = centred(pts);
    const radius = Math.max(1, ...c.map(([x, y]) => Math.hypot(x, y)));
    return { holes, points: c.map(([x, y]) => [(x * 16) / radius, (y * 16) / radius]) };
  }
  /**
   * How much a region looks holed where its shape's hole would be: the region's pose among the templates
   * (bestPose) puts the public hole position in the scene; the colours inside that small disk are
   * compared with the colours of a ring of the symbol around it (its stripes, lit the same way) and with
   * the background just outside the symbol. A hole shows the background (and the hole's outline), not
   * the stripes; without a hole the disk holds the same stripes as the ring. With `search`, the position
   * is not taken from the public table: every position inside the region is tried (the hole radius the
   * smallest in the table) and the most hole-like kept.
   */
  function holeScore(scene, region, template, shape, pose, search = false) {
    const { w, h, d } = scene;
    const [hx, hy, hr] = HOLE_AT[shape];
    const rUnit = 20 * pose.k;
    const lw = Math.max(1.5, rUnit / 9);
    const inside = new Set(
      region.points.map(([x, y]) => Math.round(y + region.y) * w + Math.round(x + region.x)),
    );
    const colour = (j) => [d[j * 4], d[j * 4 + 1], d[j * 4 + 2]];
    // The background: pixels 4 px outside the region.
    const outside = [];
    for (const [px, py] of region.points) {
      for (const [dx, dy] of [
        [4, 0],
        [-4, 0],
        [0, 4],
        [0, -4],
      ]) {
        const x = Math.round(px + region.x + dx);
        const y = Math.round(py + region.y + dy);
        if (x < 0 || y < 0 || x >= w || y >= h) continue;
        const j = y * w + x;
        if (!inside.has(j)) outside.push(colour(j));
      }
    }
    const nearest = (c, set) => {
      let best = Infinity;
      for (const q of set) {
        const e = Math.hypot(c[0] - q[0], c[1] - q[1], c[2] - q[2]);
        if (e < best) best = e;
      }
      return best;
    };
    const median = (xs) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)];
    const at = (cx, cy, holeR) => {
      const inner = [];
      const ring = [];
      let ringSlots = 0;
      const reach = Math.ceil(holeR + lw / 2 + 5);
      for (let y = Math.floor(cy - reach); y <= cy + reach; y++)
        for (let x = Math.floor(cx - reach); x <= cx + reach; x++) {
          if (x < 0 || y < 0 || x >= w || y >= h) continue;
          const j = y * w + x;
          const dist = Math.hypot(x - cx, y - cy);
          if (dist <= Math.max(1, holeR - lw / 2 - 0.5)) inner.push(colour(j));
          else if (dist >= holeR + lw / 2 + 1 && dist <= holeR + lw / 2 + 4) {
            ringSlots++;
            if (inside.has(j)) ring.push(colour(j));
          }
        }
      if (!inner.length || ring.length < (search ? 0.8 : 0) * ringSlots || !ring.length) return -Infinity;
      const fromStripes = median(inner.map((c) => nearest(c, ring)));
      const fromBackground = outside.length ? median(inner.map((c) => nearest(c, outside))) : 0;
      return fromStripes - fromBackground;
    };
    if (search) {
      let best = -Infinity;
      const holeR = 0.18 * rUnit;
      for (const [px, py] of region.points) {
        if (Math.round(px) % 2 || Math.round(py) % 2) continue;
        const v = at(px + region.x, py + region.y, holeR);
        if (v > best) best = v;
      }
      return best === -Infinity ? 0 : best;
    }
    // Template px per unit radius: the templates are traced at radius 20, then centred on their centroid.
    const tx = hx * 20 - template.cx;
    const ty = hy * 20 - template.cy;
    const cos = Math.cos(pose.ang);
    const sin = Math.sin(pose.ang);
    const v = at(
      region.x + pose.k * (cos * tx - sin * ty),
      region.y + pose.k * (sin * tx + cos * ty),
      hr * rUnit,
    );
    return v === -Infinity ? 0 : v;
  }
  /**
   * Click against twins (a hole-aware clickShapes, the attacker's obvious upgrade): the same segmentation
   * and labelling among the public shapes, except that each prompted shape may label two regions (the
   * scene holds it twice, with and without a hole) and each other shape one; each prompt silhouette is
   * read for a hole (light pixels enclosed), and of its shape's two regions the one whose hole position
   * looks more like a hole (holeScore) is clicked when the prompt has one, the other when it has none.
   */
  function clickHoles(
    input = {
      scene: pixels(deepQueryAll('.click .stage > img')[0]),
      strip: pixels(deepQueryAll('img.order')[0]),
    },
    { templates, search = false, ...seg } = {},
  ) {
    const { scene, strip } = input;
    const { w, h } = scene;
    const { regions } = segmentSymbols(scene, seg);
    const slots = Array.from({ length: Math.round((strip.w + 16) / 56) }, (_, i) => promptSlot(strip, i));
    const prompts = slots.map((s) => s.points);
    const clicks = prompts.map(() => ({ x: w / 2, y: h / 2 }));
    if (!regions.length || !templates) return clicks;
    const regionMaps = regions.map((r) => bitmap(r.points));
    const withMap = (pts) => Object.assign(pts, { bitmap: bitmap(pts) });
    prompts.forEach(withMap);
    const names = Object.keys(templates);
    const classes = names.map((name) => {
      const pts = templates[name].points;
      let cx = 0;
      let cy = 0;
      for (const [x, y] of pts) {
        cx += x;
        cy += y;
      }
      return Object.assign(withMap(centred(pts)), {
        name,
        cx: cx / (pts.length || 1),
        cy: cy / (pts.length || 1),
      });
    });
    const rs = regionMaps.map((B) => classes.map((c) => bestIoU(c, B)));
    const promptClass = prompts.map((p) => {
      const sc = classes.map((c) => bestIoU(c, p.bitmap));
      return sc.indexOf(Math.max(...sc));
    });
    const promptHoled = slots.map((s) => s.holes >= 4);
    // Rows: each class once, each prompted class twice (its twins); columns: regions plus an "unseen"
    // column per row.
    const rows = classes.map((_, c) => c);
    for (const c of new Set(promptClass)) rows.push(c);
    const m = regions.length;
    const score = rows.map((c, ri) => [
      ...regions.map((_, k) => rs[k][c]),
      ...rows.map((_, r2) => (r2 === ri ? 0.3 : -1)),
    ]);
    const pick = assign(score);
    promptClass.forEach((c, i) => {
      const mine = rows.flatMap((rc, ri) =>
        rc === c && pick[ri] !== undefined && pick[ri] < m ? [pick[ri]] : [],
      );
      if (!mine.length) {
        const k = rs.map((r) => r[c]).reduce((bi, v, j, a) => (v > a[bi] ? j : bi), 0);
        clicks[i] = { x: regions[k].x, y: regions[k].y };
        return;
      }
      if (mine.length === 1) {
        // The twin went to another shape's row (warped, or cut by a line): the best other region for this
        // shape among those no prompted shape took.
        const taken = new Set(
          rows.flatMap((rc, ri) => (promptClass.includes(rc) && pick[ri] < m ? [pick[ri]] : [])),
        );
        let best = -1;
        for (let j = 0; j < m; j++) if (!taken.has(j) && (best < 0 || rs[j][c] > rs[best][c])) best = j;
        if (best >= 0) mine.push(best);
      }
      let k = mine[0];
      if (mine.length > 1) {
        const cls = classes[c];
        const scores = mine.map((j) =>
          holeScore(scene, regions[j], cls, cls.name, bestPose(cls, regionMaps[j]), search),
        );
        const holed = scores[0] >= scores[1] ? 0 : 1;
        k = mine[promptHoled[i] ? holed : 1 - holed];
      }
      clicks[i] = { x: regions[k].x, y: regions[k].y };
    });
    return clicks;
  }

  /**
   * Click, adapted to striped symbols (offline only, not a harness row): the same silhouette template
   * matched on a texture map instead of the colours: each pixel's grey-level spread over a 5×5 window,
   * high inside stripes and low on the soft background (noise, lines and clutter edges raise it too).
   */
  function clickTexture(
    input = {
      scene: pixels(deepQueryAll('.click .stage > img')[0]),
      strip: pixels(deepQueryAll('img.order')[0]),
    },
  ) {
    const { scene, strip } = input;
    const { w, h } = scene;
    const t = textureMap(scene);
    const count = Math.round((strip.w + 16) / 56);
    const clicks = [];
    for (let i = 0; i < count; i++) {
      const best = matchTemplate({ w, h, d: t }, silhouette(strip, i * 56, 40))[0];
      clicks.push({ x: best.x, y: best.y });
    }
    return clicks;
  }

  /** A rectangle of an RGBA image as its own image. */
  function crop(p, x0, y0, w, h) {
    const d = new Uint8ClampedArray(w * h * 4);
    for (let y = 0; y < h; y++)
      d.set(p.d.subarray(((y0 + y) * p.w + x0) * 4, ((y0 + y) * p.w + x0 + w) * 4), y * w * 4);
    return { w, h, d };
  }
  /**
   * A coarse region redrawn sharply: the local background's colour (the median of a ring 4–7 px outside
   * the region), then every pixel within `reach` px of the region that differs from it by more than
   * `distance`, opened by 1 px (lines cut off), holes filled; its components of `minArea` px or more (two
   * symbols the coarse mask merged come apart here). Regions in the tile's coordinates.
   */
  function refineRegions(p, coarse, { distance = 25, reach = 2, minArea = 60 } = {}) {
    const { w, h, d } = p;
    const out = [];
    for (const r of coarse) {
      const m = new Uint8Array(w * h);
      for (const [x, y] of r.points) m[Math.round(y + r.y) * w + Math.round(x + r.x)] = 1;
      const near = morph2(m, w, h, reach, true);
      const far = morph2(m, w, h, 7, true);
      const ringOf = morph2(m, w, h, 3, true);
      const ring = [[], [], []];
      for (let i = 0; i < w * h; i++)
        if (far[i] && !ringOf[i]) for (let c = 0; c < 3; c++) ring[c].push(d[i * 4 + c]);
      if (!ring[0].length) continue;
      const bg = ring.map((v) => v.sort((a, b) => a - b)[v.length >> 1]);
      let s = new Uint8Array(w * h);
      for (let i = 0; i < w * h; i++)
        if (near[i])
          s[i] = Math.hypot(d[i * 4] - bg[0], d[i * 4 + 1] - bg[1], d[i * 4 + 2] - bg[2]) > distance ? 1 : 0;
      s = morph2(morph2(s, w, h, 1, false), w, h, 1, true);
      s = fillHoles(s, w, h);
      out.push(...regionsOf(s, w, h, minArea, 4000));
    }
    return out;
  }
  /**
   * Select, shape-aware (clickShapes' approach applied to the grid): per tile (the layout is
   * public), the symbols segmented as segmentSymbols does for the click (colour spread over 5×5, closed,
   * filled, opened), with the threshold lowered to 35 for the select's plain fills (only their outlines
   * and edges spread), then redrawn sharply by colour against the local background (refineRegions;
   * `refine: false` keeps the coarse regions, the first version: selectShapesCoarse), each region labelled among the public shape list (`templates`) by its best
   * intersection over union over rotations and scales; the tiles holding a region labelled with the
   * prompted shape (read from the prompt text, as `select` does) are selected. Two to four tiles match
   * (public): below two, the tiles where the prompted shape comes closest to the best label are added;
   * above four, the four surest kept. Thresholds chosen on seeds tune-select-* only.
   */
  function selectShapes(
    input = {
      img: pixels(deepQueryAll('.select .stage > img')[0]),
      text: (deepQueryAll('.prompt')[0]?.textContent ?? '').toLowerCase(),
    },
    { templates, refine = { distance: 25 }, ...seg } = {},
  ) {
    const { img, text } = input;
    if (!templates) return [0, 1];
    const names = Object.keys(templates);
    const target = names.findIndex((s) => text.includes(s));
    if (target < 0) return [0, 1];
    const classes = names.map((name) => {
      const pts = centred(templates[name].points);
      return Object.assign(pts, { bitmap: bitmap(pts) });
    });
    const tiles = [];
    for (let t = 0; t < 9; t++) {
      const tile = crop(img, (t % 3) * 102, Math.floor(t / 3) * 102, 96, 96);
      const coarse = segmentSymbols(tile, { threshold: 35, ...seg }).regions;
      const regions = refine ? refineRegions(tile, coarse, refine) : coarse;
      // The tile's margin: how far its best region's IoU with the prompted shape stands above (or below)
      // that region's best IoU with any other shape.
      let margin = Number.NEGATIVE_INFINITY;
      for (const r of regions) {
        const B = bitmap(r.points);
        const sc = classes.map((c) => bestIoU(c, B));
        let other = 0;
        for (let c = 0; c < sc.length; c++) if (c !== target && sc[c] > other) other = sc[c];
        margin = Math.max(margin, sc[target] - other);
      }
      tiles.push({ i: t, margin });
    }
    const sure = [...tiles].sort((a, b) => b.margin - a.margin);
    let chosen = tiles.filter((t) => t.margin > 0);
    if (chosen.length < 2) chosen = sure.slice(0, 2);
    if (chosen.length > 4) chosen = sure.slice(0, 4);
    return chosen.map((t) => t.i).sort((a, b) => a - b);
  }

  const NAMED = { red: [0xd7, 0x26, 0x3d], blue: [0x1f, 0x5f, 0xd1], yellow: [0xf5, 0xc4, 0x00] };
  /**
   * Select: colour prompts count the named colour's pixels per tile; shape prompts match the shape's
   * template (drawn from the public shape list, given as `templates`) in every tile and keep the tiles
   * whose best score stands out.
   */
  function select(
    templates,
    input = {
      img: pixels(deepQueryAll('.select .stage > img')[0]),
      text: (deepQueryAll('.prompt')[0]?.textContent ?? '').toLowerCase(),
    },
  ) {
    const { img, text } = input;
    const tiles = [...Array(9).keys()].map((i) => ({ i, x: (i % 3) * 102, y: Math.floor(i / 3) * 102 }));
    const colour = Object.keys(NAMED).find((c) => text.includes(c));
    if (colour && !Object.keys(templates).some((s) => text.includes(s))) {
      const [r, g, b] = NAMED[colour];
      const counts = tiles.map((t) => {
        let n = 0;
        for (let y = t.y; y < t.y + 96; y++)
          for (let x = t.x; x < t.x + 96; x++) {
            const i = (y * img.w + x) * 4;
            if (Math.hypot(img.d[i] - r, img.d[i + 1] - g, img.d[i + 2] - b) < 60) n++;
          }
        return n;
      });
      return tiles.filter((t) => counts[t.i] > 120).map((t) => t.i);
    }
    const shape = Object.keys(templates).find((s) => text.includes(s));
    if (!shape) return [0, 1];
    const scores = tiles.map(
      (t) =>
        matchTemplate(img, templates[shape], {
          box: { x: t.x, y: t.y, w: 96, h: 96 },
          scales: [0.6, 0.75, 0.9, 1.1],
          step: 2,
        })[0]?.score ?? 0,
    );
    const sorted = [...scores].sort((a, b) => b - a);
    // Two to four tiles match: cut at the largest drop between the 2nd and 5th best.
    let cut = 2;
    for (let k = 2; k <= 4; k++) if (sorted[k - 1] - sorted[k] > sorted[cut - 1] - sorted[cut]) cut = k;
    const threshold = sorted[cut - 1];
    return tiles.filter((t) => scores[t.i] >= threshold).map((t) => t.i);
  }

  window.__adversary = {
    slideContent,
    slideOutline,
    slideHole,
    click,
    clickTexture,
    clickShapes,
    clickHoles,
    clickHolesSearched: (input, options) => clickHoles(input, { ...options, search: true }),
    clickShapesV1,
    segmentSymbols,
    select,
    selectShapes,
    selectShapesCoarse: (input, options) => selectShapes(input, { ...options, refine: false }),
  };
})();
