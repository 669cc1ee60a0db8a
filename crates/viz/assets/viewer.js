// The elect trace viewer: replays the JSON-lines trace records embedded in this page (element #elect-data) on
// the topology and along the space-time diagram. It reads nothing from the network.
"use strict";
(function () {
  const SVG = "http://www.w3.org/2000/svg";
  const PALETTE = ["#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"];
  const STATE_COLOURS = { normal: "#9aa0a6", election: "#f2a900", reorganization: "#8e6fd1", down: "#d0d0d0" };
  const LEADER = "#2e7d32";
  const PARENT = "#1f4e9c";

  const data = JSON.parse(document.getElementById("elect-data").textContent);
  const records = data.records;
  const run = records.find((r) => r.ev === "run") || { ids: [] };
  const ids = run.ids;
  const n = ids.length;
  const position = new Map(ids.map((id, i) => [id, i]));
  // A step of the viewer is one event (a delivery, a timer, a command, a start, a fault) with what followed from
  // it: the rule it applied, the process's new view and status, what it sent. So the viewer counts what the
  // run's summary counts as events, plus faults and losses.
  const FOLLOWS = ["send", "status", "parent", "rule", "view", "notice", "violation", "arm", "disarm"];
  // A checker's path drops the messages on their way to a process that crashed for good with the crash (`drop`
  // for the reason `crash`): they are part of that step.
  const follows = (r) => FOLLOWS.includes(r.ev) || (r.ev === "drop" && r.reason === "crash");
  const events = [];
  // What comes before the first event (a checker's path: the statuses and the messages in flight at the start) is
  // the state at step 0.
  const prelude = [];
  for (const r of records) {
    if (r.ev === "run" || r.ev === "end") continue;
    if (follows(r)) (events.length > 0 ? events[events.length - 1] : prelude).push(r);
    else events.push([r]);
  }
  const kinds = [];
  for (const r of records) if (r.kind !== undefined && !kinds.includes(r.kind)) kinds.push(r.kind);
  // One colour per kind, the same in every picture (the page's data names it); the palette only for a kind it
  // does not name.
  const colour = (kind) => (data.colours && data.colours[kind]) || PALETTE[kinds.indexOf(kind) % PALETTE.length];
  // A lecture's names for kinds and roles (`--labels FILE`), where the run was given some.
  const labels = data.labels || {};
  const kindLabel = (kind) => (labels.messages && labels.messages[kind]) || kind;
  // A message in words: its line (which starts with its kind) with the kind's label in its place.
  function words(r) {
    const text = r.text || r.kind;
    const label = labels.messages && labels.messages[r.kind];
    return label && text.startsWith(r.kind) ? label + text.slice(r.kind.length) : text;
  }

  // The state after `step` events: per node, and the messages in flight.
  function initial() {
    const s = {
      step: 0,
      // `timers`: each timer set, by its words: when it was set and when it fires.
      nodes: ids.map(() => ({ state: "normal", view: "", seen: null, leader: null, epoch: 0, group: null, parent: null, last: "", rule: "", changed: false, timers: new Map() })),
      flight: new Map(),
      violations: [],
      // Directed links broken on their own ("a>b"), and the partitions in force (their groups of ids).
      broken: new Set(),
      partitions: new Map(),
    };
    for (const r of prelude) apply(s, r);
    return s;
  }
  function describe(r) {
    switch (r.ev) {
      case "send": return "sent " + words(r) + " to " + r.to;
      case "deliver": return "got " + words(r) + " from " + r.from;
      case "drop": return "lost #" + r.id + " from " + r.from + " (" + r.reason + ")";
      case "timer": return "timer: " + (r.text || JSON.stringify(r.timer));
      case "start": return "started";
      case "crash": return "crashed";
      case "recover": return "recovered";
      case "command": return "command " + r.cmd;
      case "notice": return r.notice === "elected" ? "declared itself leader" : r.notice;
      default: return r.ev;
    }
  }
  function apply(s, r) {
    const i = position.get(r.node);
    const node = i === undefined ? null : s.nodes[i];
    // A record about a node the run does not have changes nothing (the page replays any driver's records).
    if (!node && ["crash", "recover", "status", "parent", "arm", "disarm", "timer"].includes(r.ev)) return;
    switch (r.ev) {
      case "crash": node.state = "down"; node.view = "down"; node.seen = null; node.leader = null; node.parent = null; node.timers.clear(); break;
      case "arm": node.timers.set(r.text, { set: r.t, at: r.at }); break;
      case "disarm": node.timers.delete(r.text); break;
      case "timer": node.timers.delete(r.text || JSON.stringify(r.timer)); break;
      case "recover": node.state = "normal"; node.leader = null; node.parent = null; break;
      case "status": node.state = r.state; node.leader = r.leader; node.epoch = r.epoch;
        node.group = r.group ? "(" + r.group.counter + ", " + r.group.creator + ")" : null; break;
      case "parent": node.parent = r.parent; break;
      case "view": node.view = viewText(r.view); node.seen = r.view; break;
      case "rule": node.rule = r.rule; break;
      case "send": s.flight.set(r.id, r); break;
      case "deliver": case "drop": s.flight.delete(r.id); break;
      case "violation": s.violations.push(Object.assign({ step: s.step }, r)); break;
      case "link":
        for (const key of r.both_ways ? [r.from + ">" + r.to, r.to + ">" + r.from] : [r.from + ">" + r.to]) {
          if (r.up) s.broken.delete(key); else s.broken.add(key);
        }
        break;
      case "partition":
        if (r.healed) s.partitions.delete(r.partition);
        else {
          // `1,2|3,4`: the groups cannot talk; `1,2>3,4`: the first cannot reach the second.
          const spec = r.partition.split("@")[0];
          const oneWay = spec.includes(">");
          s.partitions.set(r.partition, { oneWay, groups: spec.split(oneWay ? ">" : "|").map((g) => g.split(",").map(Number)) });
        }
        break;
      default: break;
    }
    // What follows an event (its rule, view, status, sends) keeps that event as the node's last.
    if (node && !follows(r)) { node.last = describe(r); node.rule = ""; }
  }
  // An epoch as the messages say it, round.starter ("1.4": the first round, started by 4); a small number (an
  // algorithm's own counter) as it is.
  const epochText = (e) => (e >= 2 ** 32 ? Math.floor(e / 2 ** 32) + "." + (e % 2 ** 32) : String(e));
  const roleLabel = (role) => (labels.roles && labels.roles[role]) || role;
  const viewText = (v) => ElectCanvas.viewText(v, roleLabel);
  // The step in a sentence: who did what, and the rule it applied.
  function sentence(step) {
    const r = step[0];
    const rule = step.find((x) => x.ev === "rule");
    const who = r.node !== undefined ? r.node + " " : "";
    let text;
    switch (r.ev) {
      case "deliver": text = who + "receives " + words(r) + " from " + r.from; break;
      case "timer": text = r.node + "'s timer fires: " + (r.text || JSON.stringify(r.timer)); break;
      case "command": text = who + "is told to " + r.cmd; break;
      case "link": text = "the link " + r.from + " → " + r.to + (r.up ? " comes back" : " breaks"); break;
      case "partition": text = "partition " + r.partition + (r.healed ? " heals" : ""); break;
      case "note": text = r.note; break;
      default: text = who + describe(r);
    }
    const sent = step.filter((x) => x.ev === "send").map((x) => words(x) + " to " + x.to);
    const lost = step.slice(1).filter((x) => x.ev === "drop").map((x) => "#" + x.id + " from " + x.from + " to " + x.node);
    return text + (rule ? "\nrule: " + rule.rule : "") + (sent.length ? "\nsends: " + sent.join("; ") : "") +
      (lost.length ? "\nlost on the way: " + lost.join("; ") : "");
  }
  let current = initial();
  function goTo(step) {
    step = Math.max(0, Math.min(events.length, step));
    if (step < current.step) current = initial();
    for (const node of current.nodes) node.changed = false;
    const before = current.nodes.map((x) => x.state + "/" + x.leader + "/" + x.parent);
    while (current.step < step) for (const r of events[current.step++]) apply(current, r);
    current.nodes.forEach((x, i) => { x.changed = before[i] !== x.state + "/" + x.leader + "/" + x.parent; });
    render();
  }
  const now = () => (current.step > 0 ? events[current.step - 1][0].t : 0);

  // The topology: each process a state card (canvas.js, the picture every view of elect draws) when the layout
  // leaves room for the cards, a circle coloured by its state otherwise (many processes).
  const cards = ElectCanvas.fits(data.layout, n);
  document.body.classList.toggle("cards", cards);
  const coloursOf = Object.fromEntries(kinds.map((k) => [k, colour(k)]));
  // Room on every card for the most lines any view of the run has, so that the picture keeps its size as it plays.
  const cardLines = 1 + Math.min(4, Math.max(0, ...records.filter((r) => r.ev === "view").map((r) => r.view.values.length)));
  let topo = document.getElementById("topology");
  let geometry = null;
  // Node radius as in the topology SVG: small enough that linked nodes do not touch.
  const side = 560;
  let shortest = Infinity;
  for (const [a, b] of data.layout.links) {
    const [p, q] = [data.layout.xy[a], data.layout.xy[b]];
    shortest = Math.min(shortest, Math.hypot(p[0] - q[0], p[1] - q[1]));
  }
  const byLinks = shortest > 0 && shortest < Infinity ? 0.4 * shortest * side : Infinity;
  const radius = Math.max(1.5, Math.min(18, side / Math.sqrt(Math.max(n, 1)) / 5, byLinks));
  const xy = data.layout.xy.map(([x, y]) => [radius + 10 + x * (side - 2 * radius - 20), radius + 10 + y * (side - 2 * radius - 20)]);
  topo.setAttribute("viewBox", "0 0 " + side + " " + side);
  topo.setAttribute("width", side);
  topo.setAttribute("height", side);
  function el(name, attributes, parent) {
    const e = document.createElementNS(SVG, name);
    for (const [k, v] of Object.entries(attributes)) e.setAttribute(k, v);
    if (parent) parent.appendChild(e);
    return e;
  }
  const defs = el("defs", {}, topo);
  const marker = el("marker", { id: "to-parent", viewBox: "0 0 10 10", refX: 10, refY: 5, markerWidth: 5, markerHeight: 5, orient: "auto" }, defs);
  el("path", { d: "M0,0 L10,5 L0,10 z", fill: PARENT }, marker);
  // Invitation's groups, as hulls behind everything else.
  const hullLayer = el("g", {}, topo);
  const linkLayer = el("g", {}, topo);
  const linkLines = data.layout.links.map(([a, b]) => {
    const line = el("line", { x1: xy[a][0], y1: xy[a][1], x2: xy[b][0], y2: xy[b][1], stroke: "#c8c8c8", "stroke-width": 1 }, linkLayer);
    el("title", {}, line);
    return line;
  });
  // Wide invisible lines over the links take a click in the Live view (drawn once it is live).
  const hitLayer = el("g", {}, topo);
  const parentLayer = el("g", {}, topo);
  const nodeLayer = el("g", {}, topo);
  const circles = xy.map(([x, y], i) => {
    const c = el("circle", { cx: x, cy: y, r: radius, stroke: "#444", "stroke-width": 1, "data-node": ids[i] }, nodeLayer);
    if (radius >= 6) {
      const size = Math.min(13, radius * 0.9, (2 * radius) / (0.62 * String(ids[i]).length));
      const t = el("text", { x: x, y: y + size * 0.35, "font-size": size, "text-anchor": "middle", "pointer-events": "none" }, nodeLayer);
      t.textContent = ids[i];
    }
    return c;
  });
  const flightLayer = el("g", {}, topo);

  // The space-time diagram, with a cursor at the current time.
  const st = document.querySelector("#spacetime-pane svg");
  let cursor = null, mark = null;
  if (st) {
    const d = st.dataset;
    cursor = el("line", { y1: d.y0, y2: d.y1, stroke: "#d50000", "stroke-width": 1.5 }, st);
    mark = el("circle", { r: 5, fill: "none", stroke: "#d50000", "stroke-width": 2, visibility: "hidden" }, st);
  }
  // A click on the diagram jumps to the last event at or before the time clicked.
  if (st) {
    st.style.cursor = "crosshair";
    st.addEventListener("click", (e) => {
      const d = st.dataset;
      const point = st.createSVGPoint();
      [point.x, point.y] = [e.clientX, e.clientY];
      const p = point.matrixTransform(st.getScreenCTM().inverse());
      const t = +d.t0 + (p.x - +d.x0) * (+d.t1 - +d.t0) / (+d.x1 - +d.x0);
      let step = 0;
      while (step < events.length && events[step][0].t <= t) step++;
      stop();
      goTo(step);
    });
  }
  function timeX(t) {
    const d = st.dataset;
    const [x0, x1, t0, t1] = [+d.x0, +d.x1, +d.t0, +d.t1];
    return x0 + (t - t0) * (x1 - x0) / (t1 - t0);
  }

  // The node table.
  const tbody = document.querySelector("#nodes tbody");
  const rows = ids.map((id) => {
    const tr = document.createElement("tr");
    tr.dataset.node = id;
    for (let k = 0; k < 8; k++) tr.appendChild(document.createElement("td"));
    tr.cells[0].textContent = id;
    tbody.appendChild(tr);
    return tr;
  });

  const slider = document.getElementById("slider");
  const jump = document.getElementById("jump");
  slider.max = events.length;
  document.body.dataset.nodes = n;
  document.body.dataset.events = events.length;

  function render() {
    const t = now();
    document.body.dataset.step = current.step;
    tell({ elect: "step", step: current.step });
    document.getElementById("position").textContent = "step " + current.step + " of " + events.length + (run.steps ? "" : ", t = " + t);
    slider.value = current.step;
    if (document.activeElement !== jump) jump.value = current.step;
    const r = current.step > 0 ? events[current.step - 1][0] : null;
    document.getElementById("event").textContent = r ? sentence(events[current.step - 1]) : "(before the first step)";
    document.getElementById("event-raw").textContent = r ? events[current.step - 1].map((x) => JSON.stringify(x)).join("\n") : "";
    current.nodes.forEach((x, i) => {
      const leads = x.leader === ids[i];
      const tr = rows[i];
      tr.dataset.state = x.state;
      tr.dataset.leader = x.leader === null ? "" : x.leader;
      tr.className = (x.changed ? "changed " : "") + (leads ? "leader" : "");
      const cells = [ids[i], x.state, x.view || "-", x.leader === null ? "-" : x.leader, epochText(x.epoch), x.parent === null ? "-" : x.parent, x.group || "-", x.last + (x.rule ? " (" + x.rule + ")" : "")];
      cells.forEach((v, k) => { tr.cells[k].textContent = v; });
      tr.cells[1].className = "state-" + x.state;
      if (cards) return;
      circles[i].setAttribute("fill", leads ? LEADER : STATE_COLOURS[x.state] || "#fff");
      circles[i].setAttribute("stroke-width", leads ? 3 : r && r.node === ids[i] ? 2.5 : 1);
      circles[i].setAttribute("stroke", r && r.node === ids[i] ? "#d50000" : "#444");
    });
    shownEvent = r;
    if (cards) drawCards(r);
    else drawCircles();
    motion(t);
    const v = current.violations;
    document.body.dataset.violations = v.length;
    showViolations(v);
    if (cursor) {
      const x = timeX(t);
      const d = st.dataset;
      if (r && d.row && position.has(r.node)) {
        mark.setAttribute("cx", x);
        mark.setAttribute("cy", +d.y0 + +d.row * (position.get(r.node) + 0.5));
        mark.setAttribute("visibility", "visible");
      } else {
        mark.setAttribute("visibility", "hidden");
      }
    }
  }

  // The circles' picture: links, groups and each node's pointer to its parent.
  function drawCircles() {
    drawLinks();
    drawGroups();
    parentLayer.replaceChildren();
    current.nodes.forEach((x, i) => {
      const p = position.get(x.parent);
      if (p === undefined) return;
      const [x1, y1] = xy[i], [x2, y2] = xy[p];
      const d = Math.hypot(x2 - x1, y2 - y1);
      if (d <= 2 * radius) return;
      const [ux, uy] = [(x2 - x1) / d, (y2 - y1) / d];
      el("line", { x1: x1 + ux * radius, y1: y1 + uy * radius, x2: x2 - ux * (radius + 1), y2: y2 - uy * (radius + 1), stroke: PARENT, "stroke-width": 2, "marker-end": "url(#to-parent)" }, parentLayer);
    });
  }
  // The picture's text is drawn `textScale` times its usual size (see `fit`); `shownEvent`: the event of this step.
  let textScale = 1, shownEvent = null;
  // The cards' picture, drawn whole at each step (the messages move on its overlay, `#moving`): each process's
  // card in its algorithm's words, the one that took the step outlined in red.
  function drawCards(r) {
    const groups = new Map();
    current.nodes.forEach((x, i) => {
      if (x.group === null || x.state === "down") return;
      if (!groups.has(x.group)) groups.set(x.group, []);
      groups.get(x.group).push(i);
    });
    const drawn = ElectCanvas.draw({
      id: "viewer", attrs: 'id="topology"', layout: data.layout, lines: cardLines, colours: coloursOf, role: roleLabel, text: textScale,
      procs: current.nodes.map((x, i) => ({
        id: ids[i], state: x.state, leads: x.leader === ids[i], acting: !!r && r.node === ids[i], changed: x.changed, view: x.seen,
        title: "leader " + (x.leader === null ? "none" : x.leader) + ", epoch " + epochText(x.epoch) + (x.last ? "\nlast: " + x.last : ""),
      })),
      broken: down,
      linkHint: live ? linkHint : undefined,
      groups: [...groups].map(([name, members]) => ({ name, members })),
      parents: current.nodes.map((x, i) => [i, position.get(x.parent)]).filter(([, p]) => p !== undefined),
      directed: [...new Set([...current.flight.values()].map((m) => position.get(m.node) + ">" + position.get(m.to)))]
        .map((k) => k.split(">").map(Number)).filter(([a, b]) => !Number.isNaN(a) && !Number.isNaN(b)),
      overlay: '<g id="moving"></g>',
    });
    topo.outerHTML = drawn.svg;
    topo = document.getElementById("topology");
    geometry = drawn.geometry;
  }

  // A link broken in both directions is drawn red and dashed, one broken one way orange and dashed, with a
  // tooltip that says which way.
  function down(a, b) {
    if (current.broken.has(a + ">" + b)) return true;
    for (const { oneWay, groups } of current.partitions.values()) {
      const ga = groups.findIndex((g) => g.includes(a)), gb = groups.findIndex((g) => g.includes(b));
      if (oneWay ? ga === 0 && gb === 1 : ga !== gb && ga >= 0 && gb >= 0) return true;
    }
    return false;
  }
  function drawLinks() {
    data.layout.links.forEach(([i, j], k) => {
      const [a, b] = [ids[i], ids[j]];
      const [ab, ba] = [down(a, b), down(b, a)];
      const line = linkLines[k];
      line.setAttribute("stroke", ab && ba ? "#d32f2f" : ab || ba ? "#ef6c00" : "#c8c8c8");
      line.setAttribute("stroke-width", ab || ba ? 2 : 1);
      line.setAttribute("stroke-dasharray", ab || ba ? "6 4" : "none");
      line.dataset.broken = ab && ba ? "both" : ab ? a + ">" + b : ba ? b + ">" + a : "";
      line.firstChild.textContent = ab && ba ? a + " and " + b + " cannot talk" : ab ? a + " → " + b + " is broken (one way)" : ba ? b + " → " + a + " is broken (one way)" : "";
    });
  }
  // Each group of two or more live processes (Invitation's) as a translucent hull around its members.
  function drawGroups() {
    hullLayer.replaceChildren();
    const groups = new Map();
    current.nodes.forEach((x, i) => {
      if (x.group === null || x.state === "down") return;
      if (!groups.has(x.group)) groups.set(x.group, []);
      groups.get(x.group).push(i);
    });
    let k = 0;
    for (const [name, members] of groups) {
      if (members.length < 2) continue;
      const pad = radius + 8;
      const points = [];
      for (const i of members) for (let a = 0; a < 12; a++) points.push([xy[i][0] + pad * Math.cos(a * Math.PI / 6), xy[i][1] + pad * Math.sin(a * Math.PI / 6)]);
      const c = PALETTE[(k++ * 3 + 2) % PALETTE.length];
      const hull = el("polygon", { points: ElectCanvas.convexHull(points).map((p) => p.join(",")).join(" "), fill: c, "fill-opacity": 0.13, stroke: c, "stroke-opacity": 0.6, "stroke-width": 1.5, class: "group", "data-group": name }, hullLayer);
      el("title", {}, hull).textContent = "group " + name + ": " + members.map((i) => ids[i]).join(", ");
    }
  }
  // What moves with time: the messages in flight on the topology and the cursor on the diagram, drawn at time `t`
  // (between two events while playing).
  function motion(t) {
    let inFlight = 0;
    const labels = [], moving = [];
    if (!cards) flightLayer.replaceChildren();
    for (const m of current.flight.values()) {
      const a = position.get(m.node), b = position.get(m.to);
      if (a === undefined || b === undefined) continue;
      inFlight++;
      // From the rim of the sender to the rim of the receiver, in proportion to the time spent on the way.
      const f = m.at > m.t ? Math.max(0, Math.min(1, (t - m.t) / (m.at - m.t))) : 1;
      if (cards) {
        moving.push({ from: a, to: b, f, kind: m.kind, name: kindLabel(m.kind), text: words(m), title: words(m) + ", " + m.node + " → " + m.to });
        continue;
      }
      const d = Math.hypot(xy[b][0] - xy[a][0], xy[b][1] - xy[a][1]);
      const [ux, uy] = d > 2 * radius ? [(xy[b][0] - xy[a][0]) / d, (xy[b][1] - xy[a][1]) / d] : [0, 0];
      const [sx, sy] = [xy[a][0] + ux * radius, xy[a][1] + uy * radius];
      const [ex, ey] = [xy[b][0] - ux * radius, xy[b][1] - uy * radius];
      const x = sx + f * (ex - sx), y = sy + f * (ey - sy);
      const dot = el("circle", { cx: x, cy: y, r: Math.max(2.5, radius / 3), fill: colour(m.kind), stroke: "#222", "stroke-width": 0.5, class: "message" }, flightLayer);
      el("title", {}, dot).textContent = words(m) + ", " + m.node + " → " + m.to;
      labels.push([x, y, m]);
    }
    // Each timer set, as an arc that drains until it fires.
    // A checker's path has steps, not times: a timer set there may fire at any step the checker chooses, and
    // shows full.
    const clocks = current.nodes.map((x, i) => ({ at: i, timers: [...x.timers].map(([text, { set, at }]) => (run.steps
      ? { f: 1, due: set, title: text + ": set at step " + set + ", fires when the checker chooses" }
      : { f: at > set ? (at - t) / (at - set) : 0, due: at, title: text + ": fires at t = " + at + " (" + Math.max(0, at - t).toFixed(2) + " left)" }))
      .sort((a, b) => a.due - b.due) })).filter((c) => c.timers.length);
    document.body.dataset.timers = clocks.reduce((n, c) => n + c.timers.length, 0);
    if (cards) {
      const layer = document.getElementById("moving");
      if (layer) layer.innerHTML = ElectCanvas.timerArcs(geometry, clocks) + ElectCanvas.movingChips(geometry, moving, coloursOf);
      document.body.dataset.dots = layer ? layer.querySelectorAll("circle.message").length : 0;
    }
    // In circles, the soonest timer of each process as an arc around it, draining until it fires.
    if (!cards && radius >= 4) {
      for (const { at, timers } of clocks) {
        const f = Math.max(0, Math.min(1, timers[0].f)), [cx, cy] = xy[at], r = radius + 3;
        if (f <= 0.001) continue;
        const a = 2 * Math.PI * Math.min(f, 0.9999), x = cx + r * Math.sin(a), y = cy - r * Math.cos(a);
        const arc = el("path", { d: `M${cx},${cy - r}A${r},${r} 0 ${f > 0.5 ? 1 : 0} 1 ${x},${y}`, fill: "none", stroke: "#2457c5", "stroke-width": 2, class: "timer-arc", "data-left": f.toFixed(3) }, flightLayer);
        el("title", {}, arc).textContent = timers[0].title;
      }
    }
    // Each message's words beside it, while few enough are in flight to read them.
    if (labels.length <= 24 && radius >= 6) {
      for (const [x, y, m] of labels) {
        const said = words(m);
        const t = el("text", { x: x + radius / 3 + 3, y: y - 3, "font-size": 11, fill: "#222", class: "chip", "pointer-events": "none" }, flightLayer);
        t.textContent = said.length > 28 ? said.slice(0, 27) + "…" : said;
      }
    }
    document.body.dataset.inFlight = inFlight;
    document.getElementById("flight").textContent = inFlight + " in flight";
    if (cursor) {
      cursor.setAttribute("x1", timeX(t));
      cursor.setAttribute("x2", timeX(t));
    }
  }

  // Controls.
  // Playing takes `speed` events a second, and between two events moves the messages on towards the next one.
  let timer = null, lastStep = 0;
  const play = document.getElementById("play");
  const speed = document.getElementById("speed");
  function stop() {
    if (timer !== null) cancelAnimationFrame(timer);
    timer = null;
    play.textContent = "▶ play";
  }
  function frame(ms) {
    if (timer === null) return;
    const per = 1000 / +speed.value;
    const steps = Math.floor((ms - lastStep) / per);
    if (steps > 0) {
      if (current.step >= events.length) {
        stop();
        if (live) ask({ elect: "live-end" });
        return;
      }
      goTo(current.step + steps);
      lastStep += steps * per;
    } else if (current.step < events.length) {
      const t = now();
      motion(t + (events[current.step][0].t - t) * Math.max(0, ms - lastStep) / per);
    }
    timer = requestAnimationFrame(frame);
  }
  function start() {
    if (current.step >= events.length) goTo(0);
    lastStep = performance.now();
    timer = requestAnimationFrame(frame);
    play.textContent = "❚❚ pause";
  }
  play.onclick = () => (timer === null ? start() : stop());
  speed.onchange = () => { lastStep = performance.now(); };
  const forward = () => goTo(current.step + 1);
  const back = () => goTo(current.step - 1);
  document.getElementById("first").onclick = () => { stop(); goTo(0); };
  document.getElementById("back").onclick = () => { stop(); back(); };
  document.getElementById("forward").onclick = () => { stop(); forward(); };
  document.getElementById("last").onclick = () => { stop(); goTo(events.length); };
  slider.oninput = () => { stop(); goTo(+slider.value); };
  document.getElementById("go").onclick = () => { stop(); goTo(+jump.value || 0); };
  jump.onkeydown = (e) => { if (e.key === "Enter") { stop(); goTo(+jump.value || 0); } };
  document.addEventListener("keydown", (e) => {
    if (e.target === jump) return;
    if (live && typing(e.key)) { e.preventDefault(); return; }
    if (e.key === "Escape" && document.body.classList.contains("present")) { present.onclick(); return; }
    if (e.key === "ArrowRight") { stop(); forward(); }
    else if (e.key === "ArrowLeft") { stop(); back(); }
    else if (e.key === " ") { e.preventDefault(); play.onclick(); }
  });

  // Inside elect serve's page the viewer tells the page its step and height (so that a share link keeps the step
  // and the frame shows the whole viewer), and goes to a step the page asks for. Standalone, the address keeps
  // the step instead.
  const framed = window.parent !== window;
  let told = "";
  // Where the page serves the book (elect serve's /book/), which it tells the viewer: then the last violation's
  // property links to its section of the book, in a new tab. Standalone, the viewer has no book to link to.
  let book = "";
  function showViolations(v) {
    const line = document.getElementById("violations");
    line.textContent = v.length === 0 ? "" : v.length + (v.length === 1 ? " violation: " : " violations, the last: ");
    if (v.length === 0) return;
    const last = v[v.length - 1];
    const name = book ? Object.assign(document.createElement("a"), { href: book + "reference/properties.html#" + encodeURIComponent(last.property), target: "_blank", rel: "noopener", textContent: last.property }) : last.property;
    // A checker's path counts steps where a run counts time (`steps` in its run record).
    line.append(name, run.steps ? " at step " + last.step : " at t = " + last.t);
  }
  function tell(message) {
    if (framed) {
      message.height = document.documentElement.scrollHeight;
      const said = JSON.stringify(message);
      if (said !== told) window.parent.postMessage(message, "*");
      told = said;
    } else if (message.step !== undefined) {
      try { history.replaceState(null, "", "#step=" + message.step); } catch (e) { /* a file the browser will not let change its address */ }
    }
  }
  window.addEventListener("message", (e) => {
    if (e.source !== window.parent || !e.data) return;
    if (e.data.elect === "goto") { stop(); goTo(+e.data.step || 0); }
    if (e.data.elect === "screen" && e.data.height > 0) { screenH = Math.min(+e.data.height, 10000); fit(); }
    if (e.data.elect === "screen" && /^\/[a-z\/]*\/$/.test(e.data.book || "")) { book = e.data.book; showViolations(current.violations); }
    if (e.data.elect === "live") goLive();
    if (e.data.elect === "resume") {
      stop();
      if ([...speed.options].some((o) => o.value === String(e.data.speed))) speed.value = String(e.data.speed);
      goTo(+e.data.step || 0);
      if (e.data.play) start();
    }
  });

  // Live (elect serve's Live view): a click on a process asks the page to crash it (or restart it, if it is down),
  // a click on a link to cut it (or heal it, if it is cut). The page runs the run again with that fault at the next
  // whole time unit, which leaves every step before it as it was, and resumes it at this step; when playing
  // reaches the end, it asks the page for more of the run.
  let live = false;
  function linkHint(a, b) {
    return (down(a, b) || down(b, a) ? "heal the link " : "cut the link ") + a + "–" + b;
  }
  function where() {
    return { t: now(), step: current.step, speed: +speed.value, playing: timer !== null };
  }
  function ask(message) {
    if (framed) window.parent.postMessage(Object.assign(message, where()), "*");
  }
  function goLive() {
    if (live) return;
    live = true;
    document.body.classList.add("live");
    if (!cards) {
      data.layout.links.forEach(([i, j]) => {
        const line = el("line", { x1: xy[i][0], y1: xy[i][1], x2: xy[j][0], y2: xy[j][1], stroke: "transparent", "stroke-width": 14, class: "hit", "data-hit": ids[i] + "-" + ids[j] }, hitLayer);
        el("title", {}, line).textContent = "cut or heal the link " + ids[i] + "–" + ids[j];
      });
      circles.forEach((c, i) => { el("title", {}, c).textContent = "crash or restart " + ids[i]; });
    }
    render();
  }
  function crashOrRestart(id) {
    const x = current.nodes[position.get(id)];
    if (!x) return false;
    ask({ elect: "live-node", node: id, down: x.state === "down" });
    stop();
    return true;
  }
  function cutOrHeal(a, b) {
    if (!data.layout.links.some(([i, j]) => (ids[i] === a && ids[j] === b) || (ids[i] === b && ids[j] === a))) return false;
    ask({ elect: "live-link", a, b, broken: down(a, b) || down(b, a) });
    stop();
    return true;
  }
  document.getElementById("topology-pane").addEventListener("click", (e) => {
    if (!live) return;
    const node = e.target.closest("[data-node]");
    const link = e.target.closest("[data-hit]");
    if (node) crashOrRestart(+node.dataset.node);
    else if (link) cutOrHeal(...link.dataset.hit.split("-").map(Number));
  });
  // The keyboard does what a click does: a process's id and Enter crashes or restarts it, `A-B` and Enter cuts or
  // heals the link A–B; Escape forgets what was typed. Whether a key was one of these.
  let typed = "";
  const typedShown = document.getElementById("typed");
  function typing(key) {
    if (/^[0-9]$/.test(key) || (key === "-" && /^[0-9]+$/.test(typed))) typed = (typed + key).slice(0, 12);
    else if (key === "Backspace" && typed) typed = typed.slice(0, -1);
    else if (key === "Escape" && typed) typed = "";
    else if (key === "Enter" && typed) {
      const [a, b] = typed.split("-").map(Number);
      const done = b === undefined ? crashOrRestart(a) : cutOrHeal(a, b);
      typedShown.textContent = done ? "" : "no " + (b === undefined ? "process " : "link ") + typed;
      typed = "";
      return true;
    } else return false;
    typedShown.textContent = typed ? typed + " ⏎" : "";
    return true;
  }
  new ResizeObserver(() => tell({ elect: "size" })).observe(document.body);

  // One screen: the controls, the picture and the step that led to it fit in the window showing the viewer (the
  // page's part of it, in elect serve, which says how high it is), and the picture's text is at least 11 px high
  // on the screen, 18 px presenting (at 1024×768 too): the cards are drawn with larger type when the picture is
  // shown smaller than its own size, and they grow with it.
  let screenH = window.innerHeight;
  const header = document.querySelector("header"), eventPane = document.getElementById("event-pane");
  function fit() {
    const presenting = document.body.classList.contains("present");
    const under = presenting ? eventPane.offsetHeight + 10 : 0;
    document.documentElement.style.setProperty("--fit-h", Math.max(180, screenH - header.offsetHeight - 26 - under) + "px");
    const least = presenting ? 18.5 : 11;
    if (!cards) {
      const px = topo.getBoundingClientRect().width / side;
      if (px > 0) document.documentElement.style.setProperty("--chip-px", (least / px).toFixed(1) + "px");
      return;
    }
    // The picture's height grows with its text, so the text's size is found in a few rounds.
    for (let round = 0; round < 6; round++) {
      const box = topo.getBoundingClientRect(), [, , w, h] = topo.getAttribute("viewBox").split(" ").map(Number);
      const px = Math.min(box.width / w, box.height / h);
      if (!(px > 0)) return;
      const want = Math.min(4, Math.max(1, (least * 1.02) / (11 * px)));
      if (Math.abs(want - textScale) < 0.02 && 11 * textScale * px >= least) return;
      textScale = want;
      drawCards(shownEvent);
      motion(now());
    }
  }
  window.addEventListener("resize", () => { if (!framed) screenH = window.innerHeight; fit(); });

  // The picture as a file: the topology with its messages at this step, as SVG or PNG.
  function pictureSvg() {
    const copy = topo.cloneNode(true);
    copy.setAttribute("xmlns", SVG);
    copy.setAttribute("font-family", "DejaVu Sans, Verdana, sans-serif");
    copy.insertBefore(el("rect", { width: "100%", height: "100%", fill: "#fff" }, null), copy.firstChild);
    return new XMLSerializer().serializeToString(copy);
  }
  function save(name, blob) {
    const a = document.createElement("a");
    a.href = URL.createObjectURL(blob);
    a.download = name;
    document.body.appendChild(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(a.href), 10000);
  }
  const fileName = (ext) => (run.algorithm || "run") + "-step-" + current.step + "." + ext;
  document.getElementById("save-svg").onclick = () => save(fileName("svg"), new Blob([pictureSvg()], { type: "image/svg+xml" }));
  document.getElementById("save-png").onclick = () => {
    const image = new Image();
    image.onload = () => {
      const canvas = document.createElement("canvas");
      const [, , w, h] = topo.getAttribute("viewBox").split(" ").map(Number);
      const scale = Math.min(2, 2400 / Math.max(w, h));
      canvas.width = Math.round(w * scale);
      canvas.height = Math.round(h * scale);
      const g = canvas.getContext("2d");
      g.drawImage(image, 0, 0, canvas.width, canvas.height);
      canvas.toBlob((blob) => save(fileName("png"), blob), "image/png");
    };
    image.src = "data:image/svg+xml;charset=utf-8," + encodeURIComponent(pictureSvg());
  };

  // Presentation: large type and a large picture, for a projector; fullscreen where the browser allows it.
  const present = document.getElementById("present");
  present.onclick = () => {
    const on = document.body.classList.toggle("present");
    present.setAttribute("aria-pressed", on);
    // In elect serve's page, the page gives its frame the whole window (and says how high it is); standalone, the
    // browser's full screen where it allows it.
    if (framed) window.parent.postMessage({ elect: "present", on }, "*");
    else if (on && document.documentElement.requestFullscreen) document.documentElement.requestFullscreen().catch(() => {});
    else if (!on && document.fullscreenElement) document.exitFullscreen().catch(() => {});
    fit();
  };
  document.addEventListener("fullscreenchange", () => {
    if (!document.fullscreenElement && document.body.classList.contains("present")) present.onclick();
  });

  // With cards, the table of every process is one click away.
  if (cards) document.getElementById("nodes-details").open = false;

  // `#step=N` in the address steps forward N events on loading, as N clicks on the step button would.
  const wanted = /step=(\d+)/.exec(location.hash);
  goTo(0);
  fit();
  if (wanted) for (let k = 0; k < +wanted[1] && current.step < events.length; k++) forward();
})();
