// elect's picture of a state, shared by every view that shows one: the trace viewer (a run of the simulator or a
// checker's counterexample, step by step) and `elect serve`'s Explore. It draws, as an SVG string:
//
// - each process as a *state card* at its place in the topology's layout: its id, whether it leads or is down,
//   and its state in its algorithm's words (the role, then the values the algorithm names), or Rust's own form
//   when "raw" is on; a card may carry timer badges, one per timer a click can fire, each with the disc that
//   stands for a timer in every view (`pie`: full in Explore, draining as the viewer plays, `timerArcs`);
// - the topology's links as grey lines, a link broken both ways red and dashed, one broken one way orange and
//   dashed (`data-broken` says which way);
// - Invitation's groups as translucent hulls around their members, the tree pointers of a spanning-tree algorithm
//   as blue arrows;
// - the messages in flight as chips coloured by their kind (one colour per kind in every picture of elect):
//   either stacked beside their directed link (`flows`, Explore's way, each chip a button that delivers it) or
//   moving along it (`movingChips`, the viewer's way while it plays).
//
// `lanes` draws the space-time diagram of a path of steps (Explore's), with a cursor on the current step.
//
// The file defines one global, `ElectCanvas`, and reads nothing from the page or the network.
"use strict";
// eslint-disable-next-line no-unused-vars
const ElectCanvas = (() => {
  // CHAR_W and SANS_W: the width of a character of the chips' (and raw cards') 11px monospace, and about that of
  // the cards' 12px sans-serif.
  const W = 1000, MARGIN = 14, CARD_GAP = 18, CARD_LINE = 16, CHIP_H = 18, CHAR_W = 6.7, SANS_W = 6.2;
  const CARD_FILL = { normal: "#ffffff", election: "#fff7e0", reorganization: "#f3eefc", down: "#eceff1" };
  const CARD_EDGE = { normal: "#9aa0a6", election: "#f2a900", reorganization: "#8e6fd1", down: "#b0b6bd" };
  const LEADS = "#2e7d32", ACTING = "#d50000", PARENT = "#1f4e9c", BOTH_WAYS = "#d32f2f", ONE_WAY = "#ef6c00";
  const HULLS = ["#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7", "#9c755f"];
  const NO_KIND = "#9aa0a6", TIMER = "#2457c5";

  const esc = (s) => String(s).replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]);
  const f1 = (v) => v.toFixed(1);
  const clip = (s, n) => { s = String(s); return s.length > n ? s.slice(0, Math.max(1, n - 1)) + "…" : s; };
  // Dark or white, whichever reads better on the colour `hex`.
  function ink(hex) {
    const v = parseInt(String(hex).slice(1), 16) || 0;
    return 0.299 * (v >> 16) + 0.587 * ((v >> 8) & 255) + 0.114 * (v & 255) > 150 ? "#1d2430" : "#fff";
  }
  // `text` in lines of at most `n` characters, cut at spaces where it can be; at most `most` lines, the last one
  // ending in an ellipsis when the text goes on.
  function wrap(text, n, most) {
    const lines = [];
    let rest = String(text);
    while (rest.length > n && lines.length < most) {
      let cut = rest.lastIndexOf(" ", n);
      if (cut < n / 2) cut = n;
      lines.push(rest.slice(0, cut).trimEnd());
      rest = rest.slice(cut).trimStart();
    }
    if (lines.length < most) { if (rest) lines.push(rest); } else if (rest) lines[most - 1] = clip(lines[most - 1] + " " + rest, n);
    return lines;
  }
  // A process's state in a line: "candidate: carrying 5, phase 1"; `role` maps a role to a lecture's name for it.
  function viewText(v, role) {
    if (!v) return "";
    const name = (role && role(v.role)) || v.role;
    return name + (v.values.length ? ": " + v.values.map((x) => x.name + " " + x.value).join(", ") : "");
  }
  // A card's lines: the role, then each value ("leader 3"); or, raw, the process's Debug form.
  function cardLines(p, raw, chars, role) {
    if (raw) return wrap(p.detail || (p.state === "down" ? "down" : "(no raw form)"), chars, 6);
    if (!p.view) return [p.state === "down" ? "crashed" : p.state];
    const values = p.view.values.map((v) => clip(v.name + " " + v.value, chars));
    if (values.length > 4) values.splice(3, values.length - 3, `… ${values.length - 3} more`);
    return [clip((role && role(p.view.role)) || p.view.role, chars), ...values];
  }
  // Andrew's monotone chain.
  function convexHull(points) {
    const p = points.slice().sort((a, b) => a[0] - b[0] || a[1] - b[1]);
    const cross = (o, a, b) => (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0]);
    const half = (list) => {
      const out = [];
      for (const q of list) {
        while (out.length >= 2 && cross(out[out.length - 2], out[out.length - 1], q) <= 0) out.pop();
        out.push(q);
      }
      out.pop();
      return out;
    };
    return half(p).concat(half(p.slice().reverse()));
  }

  // Where each card goes: the layout's box stretched over the canvas, one size for every card, as wide as the
  // neighbours let it be; more processes, more links to draw messages on, so the canvas grows taller with them.
  function place(scene) {
    const procs = scene.procs, n = procs.length, raw = !!scene.raw, m = MARGIN, k = scene.text || 1;
    const circle = (i) => [0.5 + 0.5 * Math.cos(2 * Math.PI * i / n - Math.PI / 2), 0.5 + 0.5 * Math.sin(2 * Math.PI * i / n - Math.PI / 2)];
    const layout = scene.layout && scene.layout.xy.length === n ? scene.layout : { xy: procs.map((_, i) => circle(i)), links: [], links_omitted: true };
    const xs = layout.xy.map((p) => p[0]), ys = layout.xy.map((p) => p[1]);
    const span = (v) => { const lo = Math.min(...v), hi = Math.max(...v); return (x) => hi - lo < 1e-9 ? 0.5 : (x - lo) / (hi - lo); };
    const fx = span(xs), fy = span(ys);
    const rows = new Set(ys.map((y) => Math.round(fy(y) * 200))).size;
    const mostTimers = Math.max(0, ...procs.map((p) => (p.timers || []).length));
    const heightOf = (lines) => k * (28 + lines * CARD_LINE + mostTimers * 22 + 6);
    // Raw cards are wrapped to their width, known only once the width is: room for the most lines until then.
    let CH = heightOf(raw ? 6 : Math.max(scene.lines || 1, ...procs.map((p) => 1 + Math.min(p.view ? p.view.values.length : 0, 4))));
    const H = rows <= 1 ? CH + 2 * m : Math.max(2 * CH + 200 + 40 * Math.max(0, n - 4), rows * (CH + 30) + 2 * m);
    let CW = 210 * k;
    for (let i = 0; i < n; i++) {
      for (let j = i + 1; j < n; j++) {
        const dy = Math.abs(fy(ys[i]) - fy(ys[j])) * (H - 2 * m - CH), dx = Math.abs(fx(xs[i]) - fx(xs[j]));
        if (dy < CH + CARD_GAP) CW = Math.min(CW, (dx * (W - 2 * m) - CARD_GAP) / (1 + dx));
      }
    }
    const roomy = CW >= 100;
    CW = Math.max(100, Math.floor(CW));
    const chars = Math.floor((CW - 18 * k) / ((raw ? CHAR_W : SANS_W) * k));
    const texts = procs.map((p) => cardLines(p, raw, chars, scene.role));
    if (raw) CH = heightOf(Math.max(1, ...texts.map((t) => t.length)));
    const P = layout.xy.map(([x, y]) => [m + CW / 2 + fx(x) * (W - 2 * m - CW), m + CH / 2 + fy(y) * (H - 2 * m - CH)]);
    return { layout, P, CW, CH, H, chars, texts, roomy, k };
  }
  // Whether `layout` leaves room for `n` cards side by side (the viewer draws circles instead when it does not).
  function fits(layout, n) {
    if (n > 16) return false;
    return place({ layout, procs: Array.from({ length: n }, () => ({ state: "normal", view: { role: "", values: [] } })) }).roomy;
  }
  // The line from the rim of card `a` to the rim of card `b`, `side` pixels to its right (so that the two
  // directions of a link run side by side): its start, its direction and its length; null if the cards touch.
  function rim(g, a, b, side) {
    const [x0, y0] = g.P[a], [x1, y1] = g.P[b], L = Math.hypot(x1 - x0, y1 - y0);
    if (L < 1) return null;
    const dx = (x1 - x0) / L, dy = (y1 - y0) / L;
    const exit = Math.min(Math.abs(dx) > 1e-6 ? g.CW / 2 / Math.abs(dx) : Infinity, Math.abs(dy) > 1e-6 ? g.CH / 2 / Math.abs(dy) : Infinity);
    const s0 = Math.min(exit + 4, L / 2), s1 = Math.max(L - exit - 6, L / 2);
    return { x0, y0, dx, dy, ox: -dy, oy: dx, L, s0, s1, side, at: (t, off) => [x0 + dx * t - dy * off, y0 + dy * t + dx * off] };
  }
  // A chip `w` wide, its text drawn `k` times the usual size.
  function chip(g, w, fill, stroke, dashed, colour, label, k = 1) {
    return `${g}<rect width="${f1(w)}" height="${f1(CHIP_H * k)}" rx="${f1(9 * k)}" fill="${fill}" stroke="${stroke}"` +
      `${dashed ? ' stroke-dasharray="3 2"' : ""}/><text x="${f1(w / 2)}" y="${f1(12.8 * k)}" text-anchor="middle" font-size="${f1(11 * k)}" font-family="ui-monospace, monospace" fill="${colour}">${esc(label)}</text></g>`;
  }

  // The links: grey lines (a link's line gives way to its arrows while it carries stacked messages), broken ones
  // red or orange and dashed, with a tooltip that says which way.
  function links(scene, g, ids, carrying) {
    const out = [];
    if (g.layout.links_omitted) return out;
    const broken = scene.broken || (() => false);
    for (const [i, j] of g.layout.links) {
      if (!g.P[i] || !g.P[j]) continue;
      const [a, b] = [ids[i], ids[j]], ab = broken(a, b), ba = broken(b, a);
      if (!ab && !ba && carrying.has(i + "-" + j)) continue;
      const colour = ab && ba ? BOTH_WAYS : ab || ba ? ONE_WAY : "#e3e7ec";
      const what = ab && ba ? "both" : ab ? a + ">" + b : ba ? b + ">" + a : "";
      const says = ab && ba ? a + " and " + b + " cannot talk" : ab ? a + " → " + b + " is broken (one way)" : ba ? b + " → " + a + " is broken (one way)" : "";
      out.push(`<line data-link="${esc(a)}-${esc(b)}" data-broken="${esc(what)}" x1="${f1(g.P[i][0])}" y1="${f1(g.P[i][1])}" x2="${f1(g.P[j][0])}" y2="${f1(g.P[j][1])}" stroke="${colour}" stroke-width="${what ? 2.5 : 2}"${what ? ' stroke-dasharray="7 4"' : ""}><title>${esc(says)}</title></line>`);
    }
    // Where a click on a link does something (the Live view: cut or heal it), a wide invisible line over each link
    // takes the click, so that a thin line need not be hit exactly.
    if (scene.linkHint) {
      for (const [i, j] of g.layout.links) {
        if (!g.P[i] || !g.P[j]) continue;
        const [a, b] = [ids[i], ids[j]];
        out.push(`<line class="hit" data-hit="${esc(a)}-${esc(b)}" x1="${f1(g.P[i][0])}" y1="${f1(g.P[i][1])}" x2="${f1(g.P[j][0])}" y2="${f1(g.P[j][1])}" stroke="transparent" stroke-width="16"><title>${esc(scene.linkHint(a, b))}</title></line>`);
      }
    }
    return out;
  }
  // Each group of two or more live processes as a translucent hull around their cards.
  function hulls(scene, g, ids) {
    const out = [];
    (scene.groups || []).forEach((group, k) => {
      if (group.members.length < 2) return;
      const pad = 10, points = [];
      for (const i of group.members) {
        const [x, y] = g.P[i];
        for (const [sx, sy] of [[-1, -1], [1, -1], [1, 1], [-1, 1]]) points.push([x + sx * (g.CW / 2 + pad), y + sy * (g.CH / 2 + pad)]);
      }
      const c = HULLS[(k * 3 + 2) % HULLS.length];
      out.push(`<polygon class="group" data-group="${esc(group.name)}" points="${convexHull(points).map((p) => f1(p[0]) + "," + f1(p[1])).join(" ")}" fill="${c}" fill-opacity="0.12" stroke="${c}" stroke-opacity="0.6" stroke-width="1.5" stroke-linejoin="round">` +
        `<title>${esc("group " + group.name + ": " + group.members.map((i) => ids[i]).join(", "))}</title></polygon>`);
    });
    return out;
  }
  // A spanning-tree algorithm's pointer from a process to its parent, rim to rim.
  function parents(scene, g, id) {
    const out = [];
    for (const [i, p] of scene.parents || []) {
      const r = rim(g, i, p, 0);
      if (!r) continue;
      const [ax, ay] = r.at(r.s0, 0), [bx, by] = r.at(r.s1 + 2, 0);
      out.push(`<line class="parent" x1="${f1(ax)}" y1="${f1(ay)}" x2="${f1(bx)}" y2="${f1(by)}" stroke="${PARENT}" stroke-width="2" marker-end="url(#${id}-parent)"/>`);
    }
    return out;
  }

  // The messages of each directed link as one stack of chips beside its arrow, the oldest nearest the line
  // (beside an upright line, nearest the receiver), as near the receiver as it covers no card and no other stack.
  // When no place fits them all, the last ones are counted on one chip instead, and then the labels are cut
  // shorter; the oldest always shows (where it covers least), so that it can be clicked.
  function stacks(scene, g, at, id) {
    const arrows = [], chips = [], colours = scene.colours || {}, raw = !!scene.raw;
    const blocked = g.P.map(([x, y]) => [x - g.CW / 2 - 3, y - g.CH / 2 - 3, x + g.CW / 2 + 3, y + g.CH / 2 + 3]);
    const common = (r, o) => Math.max(0, Math.min(r[2], o[2]) - Math.max(r[0], o[0])) * Math.max(0, Math.min(r[3], o[3]) - Math.max(r[1], o[1]));
    const overlap = (r) => blocked.reduce((sum, o) => sum + common(r, o), (r[2] - r[0]) * (r[3] - r[1]) - common(r, [0, 0, W, g.H]));
    for (const f of scene.flows || []) {
      const a = at.get(f.from), b = at.get(f.to);
      if (a === undefined || b === undefined || a === b || !f.msgs.length) continue;
      const r0 = rim(g, a, b, 5);
      if (!r0) continue;
      const { dx, dy, ox, oy, s0, s1, side } = r0, pt = r0.at;
      const [ax, ay] = pt(s0, side), [bx, by] = pt(s1, side);
      arrows.push(`<line data-flow="${esc(f.from)}-${esc(f.to)}" x1="${f1(ax)}" y1="${f1(ay)}" x2="${f1(bx)}" y2="${f1(by)}" stroke="#8a94a3" stroke-width="1.5" marker-end="url(#${id}-arrow)"/>`);
      const itemsOf = (most) => f.msgs.map((msg) => {
        const label = clip(raw ? msg.raw : msg.text, most);
        return { msg, label, w: 12 + label.length * CHAR_W };
      });
      const rowsOf = (items, shown) => {
        const more = items.length - shown, label = `+${more} more`;
        return items.slice(0, shown).concat(more ? [{ more, label, w: 12 + label.length * CHAR_W }] : []);
      };
      const fit = (rows, force) => {
        const w = Math.max(...rows.map((c) => c.w)), h = rows.length * (CHIP_H + 2) - 2;
        const ext = Math.abs(dx) * w + Math.abs(dy) * h, across = Math.abs(ox) * w + Math.abs(oy) * h;
        const rect = (t) => {
          const [cx, cy] = pt(t, across / 2 + side + 3);
          return [cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2];
        };
        let best = null, least = Infinity;
        for (let end = s1; end - ext >= s0 - 1; end -= 4) {
          const r = rect(end - ext / 2), covered = overlap(r);
          if (covered === 0) return r;
          if (covered < least) { best = r; least = covered; }
        }
        return force ? best || rect((s0 + s1) / 2) : null;
      };
      let items, shown, rows, r = null;
      search: for (const most of [26, 12]) {
        items = itemsOf(most);
        for (shown = Math.min(items.length, 6); shown >= 1; shown--) {
          rows = rowsOf(items, shown);
          if ((r = fit(rows, false))) break search;
        }
      }
      if (!r) {
        shown = 1;
        rows = rowsOf(items, shown);
        r = fit(rows, true);
      }
      blocked.push(r);
      const oldestTop = Math.abs(oy) >= 0.3 ? oy > 0 : dy < 0;
      rows.forEach((c, i) => {
        const x = (r[0] + r[2]) / 2 - c.w / 2, y = r[1] + (oldestTop ? i : rows.length - 1 - i) * (CHIP_H + 2);
        const moved = `transform="translate(${f1(x)},${f1(y)})"`;
        if (c.more) {
          const rest = items.slice(shown).map((o) => raw ? o.msg.raw : o.msg.text).join("\n");
          chips.push(chip(`<g class="chip waiting" data-more="${c.more}" ${moved}><title>${esc(rest)}</title>`, c.w, "#fff", "#8a94a3", false, "#5c6675", c.label));
          return;
        }
        const msg = c.msg, colour = colours[msg.kind] || NO_KIND, full = raw ? msg.raw : msg.text, act = msg.action;
        const why = act !== undefined ? "click: " + msg.actionText : msg.why || "";
        chips.push(chip(`<g class="chip${act !== undefined ? "" : " waiting"}" data-chip="${esc(f.from)}-${esc(f.to)}-${i}" data-from="${esc(f.from)}" data-to="${esc(f.to)}" data-kind="${esc(msg.kind)}" data-text="${esc(msg.text)}" data-deliverable="${act !== undefined}"` +
          (act !== undefined ? ` data-action="${act}" tabindex="0" role="button" aria-label="${esc(msg.actionText)}"` : "") + ` ${moved}>` +
          `<title>${esc(full + " (" + f.from + " → " + f.to + ", " + msg.kind + ")" + (why ? "\n" + why : ""))}</title>`, c.w, esc(colour), "rgba(29, 36, 48, .35)", act === undefined, ink(colour), c.label));
      });
    }
    return { arrows, chips };
  }
  function card(scene, g, p, i) {
    const state = p.state, down = state === "down", leads = !down && !!p.leads, raw = !!scene.raw, k = g.k || 1;
    const [cx, cy] = g.P[i], x = cx - g.CW / 2, y = cy - g.CH / 2;
    const mark = down ? "down" : leads ? "★ leads" : state;
    const fg = down ? "#8a9199" : "#1d2430";
    const edge = p.acting ? ACTING : leads ? LEADS : CARD_EDGE[state] || "#9aa0a6";
    let out = `<g class="state-card${p.changed ? " changed" : ""}" data-card="${esc(p.id)}" data-node="${esc(p.id)}" data-state="${esc(state)}" data-leads="${leads}" transform="translate(${f1(x)},${f1(y)})">` +
      `<title>${esc(p.id + ": " + (raw ? p.detail || state : viewText(p.view, scene.role) || state) + (p.title ? "\n" + p.title : ""))}</title>` +
      `<rect width="${f1(g.CW)}" height="${f1(g.CH)}" rx="8" fill="${CARD_FILL[state] || "#fff"}" stroke="${edge}" stroke-width="${leads || p.acting ? 3 : 1.5}"${down ? ' stroke-dasharray="5 3"' : ""}/>` +
      `<text x="${f1(10 * k)}" y="${f1(19 * k)}" font-size="${f1(14 * k)}" font-weight="700" fill="${fg}">${esc(p.id)}</text>` +
      `<text x="${f1(g.CW - 10 * k)}" y="${f1(18 * k)}" text-anchor="end" font-size="${f1(11 * k)}" font-weight="600" fill="${leads ? LEADS : down ? "#8a9199" : "#5c6675"}">${esc(mark)}</text>`;
    g.texts[i].forEach((t, j) => {
      const font = raw ? ` font-size="${f1(11 * k)}" font-family="ui-monospace, monospace"` : j === 0 ? ` font-size="${f1(12.5 * k)}" font-weight="600"` : ` font-size="${f1(12 * k)}"`;
      out += `<text x="${f1(10 * k)}" y="${f1(k * (28 + (j + 1) * CARD_LINE - 4))}"${font} fill="${fg}">${esc(t)}</text>`;
    });
    const timers = p.timers || [];
    timers.forEach((a, j) => {
      const ty = g.CH - k * (6 + (timers.length - j) * 22 - 4), label = clip(a.label || "timer", g.chars - 3);
      out += `<g class="timer" data-timer="${esc(p.id)}-${j}" data-action="${a.action}" tabindex="0" role="button" aria-label="${esc(a.text)}" transform="translate(${f1(8 * k)},${f1(ty)}) scale(${k})">` +
        `<title>${esc("click: " + a.text)}</title><rect width="${f1((g.CW - 16 * k) / k)}" height="18" rx="9" fill="#eef3fb" stroke="#9db3d9"/>` +
        pie(10, 9, 5.5, 1) +
        `<text x="21" y="13" font-size="11" fill="#1d2430">${esc(label)}</text></g>`;
    });
    return out + "</g>";
  }

  // The whole picture of `scene`:
  //   { id: a prefix for the picture's own element ids, attrs: extra attributes of the <svg> element,
  //     layout: {xy: [[x, y] in 0..1], links: [[i, j]]}, raw, role: role name → a lecture's name,
  //     text: how many times the usual size the cards' and chips' text is drawn (1 unless a picture shown small
  //     or on a projector needs it larger; the cards grow with it),
  //     lines: the fewest lines of text a card has room for (so that a picture keeps its size from step to step),
  //     procs: [{id, state, leads, acting, changed, view: {role, values}, detail, title, timers: [{action, text, label}]}],
  //     flows: [{from, to, msgs: [{text, raw, kind, action, actionText, why}]}], colours: {kind: colour},
  //     broken: (a, b) → whether the link a → b is down, groups: [{name, members: [position]}],
  //     parents: [[position, parent's position]], directed: [[position, position]] (links messages move on, drawn
  //     as arrows the way they go), overlay: SVG drawn over everything (the viewer's moving chips) }
  // Returns the SVG and the geometry (for `movingChips`).
  function draw(scene) {
    const g = place(scene), id = scene.id || "canvas", ids = scene.procs.map((p) => p.id);
    const at = new Map(ids.map((x, i) => [x, i]));
    const carrying = new Set((scene.flows || []).filter((f) => f.msgs.length).flatMap((f) => [at.get(f.from) + "-" + at.get(f.to), at.get(f.to) + "-" + at.get(f.from)]));
    for (const [a, b] of scene.directed || []) carrying.add(a + "-" + b).add(b + "-" + a);
    const { arrows, chips } = stacks(scene, g, at, id);
    // The links messages are moving on (the viewer's), each way they go as an arrow, as Explore draws a link
    // that carries messages: a ring's direction shows the same in both.
    for (const [a, b] of scene.directed || []) {
      const r = rim(g, a, b, 5 * g.k);
      if (!r) continue;
      const [ax, ay] = r.at(r.s0, r.side), [bx, by] = r.at(r.s1, r.side);
      arrows.push(`<line data-flow="${esc(ids[a])}-${esc(ids[b])}" x1="${f1(ax)}" y1="${f1(ay)}" x2="${f1(bx)}" y2="${f1(by)}" stroke="#8a94a3" stroke-width="1.5" marker-end="url(#${id}-arrow)"/>`);
    }
    const svg = [`<svg ${scene.attrs ? scene.attrs + " " : ""}xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${W} ${f1(g.H)}" font-family="DejaVu Sans, Verdana, system-ui, sans-serif" role="group" aria-label="the processes and the messages in flight">`,
      `<defs><marker id="${id}-arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" orient="auto"><path d="M0,0L10,5L0,10z" fill="#8a94a3"/></marker>` +
      `<marker id="${id}-parent" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="6" markerHeight="6" orient="auto"><path d="M0,0L10,5L0,10z" fill="${PARENT}"/></marker></defs>`,
      ...hulls(scene, g, ids), ...links(scene, g, ids, carrying), ...arrows, ...parents(scene, g, id),
      ...scene.procs.map((p, i) => card(scene, g, p, i)), ...chips, scene.overlay || "", "</svg>"];
    return { svg: svg.join(""), geometry: g };
  }

  // Messages on their way, each a chip at the fraction `f` of its way from the rim of its sender's card to the
  // rim of its receiver's: [{from, to (positions), f, kind, name (the kind's name), text, title}]. No chip cuts
  // its words or covers another: a chip shows the message's words when they fit (MOST_WORDS characters), else
  // its kind's name; a message whose chip would cover a card or a chip already drawn is counted on its link's
  // chip nearest to it ("+2"), or is a dot where its link has none. Nearest to arrival first, so the next to arrive are the ones
  // that keep their words. Every message's words are in the tooltip of what shows it.
  const MOST_WORDS = 30;
  function movingChips(geometry, messages, colours) {
    const k = geometry.k || 1, h = CHIP_H * k, placed = [], dots = [];
    const meet = (b, o) => b[0] < o[2] + 2 && o[0] < b[2] + 2 && b[1] < o[3] + 2 && o[1] < b[3] + 2;
    // Nor does a chip cover a card: its text is what the class reads.
    const cards = geometry.P.map(([x, y]) => [x - geometry.CW / 2, y - geometry.CH / 2, x + geometry.CW / 2, y + geometry.CH / 2]);
    const covers = (b) => placed.some((p) => meet(b, p.box)) || cards.some((c) => meet(b, c));
    const perLink = new Map();
    for (const m of messages) perLink.set(m.from + ">" + m.to, (perLink.get(m.from + ">" + m.to) || 0) + 1);
    const order = messages.map((m, i) => [m, i]).sort((a, b) => b[0].f - a[0].f || a[1] - b[1]).map(([m]) => m);
    for (const m of order) {
      const r = rim(geometry, m.from, m.to, 5 * k);
      if (!r) continue;
      const link = m.from + ">" + m.to, colour = (colours || {})[m.kind] || NO_KIND;
      // Room for a count ("+9") on a link that carries more than one message.
      const room = perLink.get(link) > 1 ? 3 : 0;
      const at = (w) => {
        // The chip's centre runs between the two rims less its own half-length along the line, so that it leaves
        // its sender's card and stops at its receiver's without covering either.
        const half = (Math.abs(r.dx) * w + Math.abs(r.dy) * h) / 2;
        const [a, b] = r.s1 - half > r.s0 + half ? [r.s0 + half, r.s1 - half] : [(r.s0 + r.s1) / 2, (r.s0 + r.s1) / 2];
        return r.at(a + m.f * (b - a), r.side + 2 * k + (Math.abs(r.oy) * h + Math.abs(r.ox) * w) / 4);
      };
      let shown = null;
      if (messages.length <= 300) {
        for (const label of [m.text, m.name || m.kind]) {
          if (!label || label.length > MOST_WORDS) continue;
          const w = 12 * k + (label.length + room) * CHAR_W * k, [x, y] = at(w);
          const box = [x - w / 2, y - h / 2, x + w / 2, y + h / 2];
          if (!covers(box)) { shown = { box, link, label, colour, kind: m.kind, f: m.f, titles: [m.title || m.text] }; break; }
        }
      }
      if (shown) { placed.push(shown); continue; }
      const mine = placed.filter((p) => p.link === link).sort((a, b) => Math.abs(a.f - m.f) - Math.abs(b.f - m.f));
      if (mine.length) { mine[0].titles.push(m.title || m.text); continue; }
      const [x, y] = at(10 * k);
      dots.push(`<circle class="message" data-kind="${esc(m.kind)}" cx="${f1(x)}" cy="${f1(y)}" r="${f1(5 * k)}" fill="${esc(colour)}" stroke="#222" stroke-width="0.5"><title>${esc(m.title || m.text)}</title></circle>`);
    }
    const chips = placed.map((p) => {
      const more = p.titles.length - 1, label = p.label + (more ? " +" + more : ""), w = p.box[2] - p.box[0];
      const title = `<title>${esc(p.titles.join("\n"))}</title>`;
      return chip(`<g class="message chip" data-kind="${esc(p.kind)}" data-count="${p.titles.length}" transform="translate(${f1(p.box[0])},${f1(p.box[1])})">${title}`, w, esc(p.colour), "rgba(29, 36, 48, .35)", false, ink(p.colour), label, k);
    });
    return dots.join("") + chips.join("");
  }

  // A timer as a draining arc: a disc whose wedge, from twelve o'clock clockwise, is the part of its time left
  // (`f`: 1 when it is set, 0 when it fires), so that it runs down as the run plays.
  function pie(cx, cy, r, f) {
    f = Math.max(0, Math.min(1, f));
    const rim = `<circle cx="${f1(cx)}" cy="${f1(cy)}" r="${f1(r)}" fill="#fff" stroke="${TIMER}" stroke-width="1.2"/>`;
    if (f >= 0.999) return rim + `<circle cx="${f1(cx)}" cy="${f1(cy)}" r="${f1(r)}" fill="${TIMER}" fill-opacity="0.75"/>`;
    if (f <= 0.001) return rim;
    const a = 2 * Math.PI * f, x = cx + r * Math.sin(a), y = cy - r * Math.cos(a);
    return rim + `<path d="M${f1(cx)},${f1(cy)}V${f1(cy - r)}A${f1(r)},${f1(r)} 0 ${f > 0.5 ? 1 : 0} 1 ${f1(x)},${f1(y)}Z" fill="${TIMER}" fill-opacity="0.75"/>`;
  }
  // The timers set on each card, as draining arcs in a row at its lower right corner (the soonest to fire on the
  // right): [{at: position, timers: [{f, title}]}].
  function timerArcs(geometry, clocks) {
    const k = geometry.k || 1, r = 7 * k, out = [];
    for (const { at, timers } of clocks) {
      if (!geometry.P[at]) continue;
      const [cx, cy] = geometry.P[at], right = cx + geometry.CW / 2 - r - 6 * k, y = cy + geometry.CH / 2 - r - 6 * k;
      timers.slice(0, 4).forEach((t, j) => {
        out.push(`<g class="timer-arc" data-left="${t.f.toFixed(3)}"><title>${esc(t.title)}</title>${pie(right - j * (2 * r + 4 * k), y, r, t.f)}</g>`);
      });
    }
    return out.join("");
  }

  // The space-time diagram of a path: a lane per process (in position order), a column per step; a dot where a
  // process takes a step (a ring for a timer, a cross for a crash), an arrow from a message's sending to its
  // arrival (or to a cross where it was lost), in its kind's colour. The steps after `cursor` are drawn pale,
  // and `data-step` on the diagram's columns lets a click choose a step.
  //   { ids, steps: [{node, from, to, action, kind, msg, sent: [{from, to, kind, msg}], text, rule}], cursor, colours }
  // A scheduled fault in words, as `elect check` prints it.
  function faultText(f) {
    switch (f.fault) {
      case "crash": return `${f.node} crashes`;
      case "recover": return `${f.node} recovers`;
      case "resign": return `${f.node} is told to resign`;
      case "transfer": return `${f.node} is told to hand leadership over to ${f.to}`;
      case "link": return `the link ${f.from}${f.both_ways ? "-" : ">"}${f.to} ${f.up ? "comes back up" : "goes down"}`;
      case "partition": return `the partition ${f.partition} ${f.healed ? "heals" : "starts"}`;
      default: return JSON.stringify(f);
    }
  }

  function lanes(path) {
    const ids = path.ids, steps = path.steps, colours = path.colours || {};
    const row = new Map(ids.map((x, i) => [x, i]));
    const L = 44, T = 22, RH = 30, CW = Math.max(22, Math.min(56, 1100 / Math.max(1, steps.length))), Wd = L + (steps.length + 1) * CW + 16, Hd = T + ids.length * RH + 8;
    const X = (k) => L + k * CW, Y = (id) => T + (row.has(id) ? row.get(id) : 0) * RH + RH / 2;
    // A scheduled fault as the lanes show it: a crash as a step's ×, a recovery as a ring, a command as a square on
    // its process's lane; a link between its two lanes, dashed when it goes down (red both ways, orange one way);
    // a partition across every lane.
    function faultMark(f, x) {
      const title = `<title>${esc(faultText(f))}</title>`;
      if (f.fault === "crash") return `<text x="${f1(x)}" y="${Y(f.node) + 5}" text-anchor="middle" font-size="15" fill="${BOTH_WAYS}">×${title}</text>`;
      if (f.fault === "recover") return `<circle cx="${f1(x)}" cy="${Y(f.node)}" r="5" fill="#fff" stroke="${LEADS}" stroke-width="2">${title}</circle>`;
      if (f.fault === "resign" || f.fault === "transfer") return `<rect x="${f1(x - 4)}" y="${Y(f.node) - 4}" width="8" height="8" fill="${PARENT}">${title}</rect>`;
      const [y1, y2] = f.fault === "link" ? [Y(f.from), Y(f.to)] : [T, Hd - 6];
      const colour = f.fault === "link" && !f.both_ways ? ONE_WAY : BOTH_WAYS, cut = f.fault === "link" ? !f.up : !f.healed;
      return `<line x1="${f1(x + 6)}" x2="${f1(x + 6)}" y1="${Math.min(y1, y2)}" y2="${Math.max(y1, y2)}" stroke="${colour}" stroke-width="2.5"${cut ? ' stroke-dasharray="3 3"' : ""}>${title}</line>`;
    }
    const pale = (k) => (k > path.cursor ? ' opacity="0.3"' : "");
    const out = [`<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${f1(Wd)} ${Hd}" width="${f1(Wd)}" height="${Hd}" font-family="DejaVu Sans, Verdana, system-ui, sans-serif" font-size="12" role="group" aria-label="the steps taken, as a space-time diagram">`];
    out.push(`<defs><marker id="lanes-arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="6" markerHeight="6" orient="auto"><path d="M0,0L10,5L0,10z" fill="#5c6675"/></marker></defs>`);
    for (let k = 0; k <= steps.length; k++) {
      out.push(`<rect class="column" data-step="${k}" x="${f1(X(k) - CW / 2)}" y="0" width="${f1(CW)}" height="${Hd}" fill="${k === path.cursor ? "#fdecea" : "transparent"}"><title>${esc(k === 0 ? "the start" : "step " + k + ": " + steps[k - 1].text + (steps[k - 1].rule ? " (" + steps[k - 1].rule + ")" : ""))}</title></rect>`);
      if (k % Math.max(1, Math.round(60 / CW)) === 0) out.push(`<text x="${f1(X(k))}" y="13" text-anchor="middle" fill="#5c6675" pointer-events="none">${k}</text>`);
    }
    ids.forEach((x) => {
      out.push(`<text x="${L - 10}" y="${Y(x) + 4}" text-anchor="end" font-weight="600" fill="#1d2430">${esc(x)}</text>`);
      out.push(`<line x1="${L - 4}" x2="${f1(Wd - 8)}" y1="${Y(x)}" y2="${Y(x)}" stroke="#d5dae1" pointer-events="none"/>`);
    });
    // Messages sent and not yet arrived, matched to their arrival by ends and words (the oldest first).
    const pending = [];
    steps.forEach((s, j) => {
      const k = j + 1;
      if (s.action === "deliver" || s.action === "duplicate" || s.action === "lose") {
        const i = pending.findIndex((p) => p.from === s.from && p.to === s.to && p.msg === s.msg);
        const sent = i >= 0 ? pending[i] : { from: s.from, to: s.to, msg: s.msg, kind: s.kind, at: 0 };
        if (i >= 0 && s.action !== "duplicate") pending.splice(i, 1);
        const colour = colours[sent.kind] || NO_KIND, lost = s.action === "lose";
        const [x1, y1, x2, y2] = [X(sent.at), Y(s.from), X(k), Y(s.to)];
        out.push(`<line class="lane-message" x1="${f1(x1)}" y1="${y1}" x2="${f1(lost ? (x1 + x2) / 2 : x2 - 3)}" y2="${lost ? (y1 + y2) / 2 : y2}" stroke="${esc(colour)}" stroke-width="1.6"${lost ? ' stroke-dasharray="4 3"' : ' marker-end="url(#lanes-arrow)"'}${pale(k)} pointer-events="none"/>`);
        if (lost) out.push(`<text x="${f1((x1 + x2) / 2)}" y="${(y1 + y2) / 2 + 4}" text-anchor="middle" fill="${BOTH_WAYS}"${pale(k)} pointer-events="none">×</text>`);
      }
      for (const m of s.sent || []) pending.push({ from: m.from, to: m.to, msg: m.msg, kind: m.kind, at: k });
      // The faults the scenario scheduled for the instant a wait reaches, in the wait's column.
      if (s.action === "wait") for (const f of s.faults || []) out.push(`<g class="lane-fault" data-step="${k}"${pale(k)} pointer-events="none">${faultMark(f, X(k))}</g>`);
      const who = s.action === "deliver" || s.action === "duplicate" ? s.to : s.node;
      if (who === undefined) return;
      const mark = s.action === "timer" ? `<circle cx="${f1(X(k))}" cy="${Y(who)}" r="4.5" fill="#fff" stroke="#2457c5" stroke-width="1.6"/>`
        : s.action === "crash" ? `<text x="${f1(X(k))}" y="${Y(who) + 5}" text-anchor="middle" font-size="15" fill="${BOTH_WAYS}">×</text>`
          : `<circle cx="${f1(X(k))}" cy="${Y(who)}" r="3.5" fill="#1d2430"/>`;
      out.push(`<g class="lane-step" data-step="${k}"${pale(k)} pointer-events="none">${mark}</g>`);
    });
    out.push(`<line class="cursor" x1="${f1(X(path.cursor))}" x2="${f1(X(path.cursor))}" y1="${T - 4}" y2="${Hd - 4}" stroke="${ACTING}" stroke-width="1.5" pointer-events="none"/>`);
    return out.join("") + "</svg>";
  }

  return { draw, fits, movingChips, timerArcs, pie, lanes, faultText, viewText, cardLines, clip, ink, esc, convexHull };
})();
