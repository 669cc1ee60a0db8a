// The Live view of elect serve's page: a running cluster on the projector. It plays a run of `elect sim` in the
// viewer; a click on a process crashes or restarts it, a click on a link cuts or heals it. Each click becomes a
// fault of the run's command (`--crash ID@T`, `--recover ID@T`, `--link-down A-B@T`, `A-B@T..U` once healed) at
// the next whole time unit T; the page asks the server for the run again with it and resumes at the step it was
// at, which is the same (a fault at T changes nothing before T). When playing reaches the end, the page asks for
// more of the run (`--until`). So the lecture is always one command: the address shares it, "copy the command"
// exports it, and `elect sim` replays it to the same end.
//
// It uses the page's own helpers (page.html): $, call, query, pairs, remember, status, openViewer, shell.
"use strict";
(function () {
  const form = $("form-live"), frame = $("viewer-live");
  // The run shown now (the report of /api/sim/view), and whether a rerun is under way.
  let shown = null, busy = false;
  // The algorithms that are a full mesh on their own; the others run under the monitor on a complete graph's
  // logical ring, which the topology field then says.
  const MESH = ["bully", "garcia-molina", "invitation"];
  const MORE = 100;

  function words(name) {
    return form.elements[name].value.trim().split(/\s+/).filter((w) => w !== "");
  }
  function setWords(name, list) {
    form.elements[name].value = list.join(" ");
  }
  // The next whole time unit after `t`: every step shown so far happened before it.
  const next = (t) => Math.floor(t) + 1;

  // Runs the form's command and shows it in the viewer, from the start (`from` null) or, after a fault, from where
  // the class was: `from` holds the step, the speed and whether it was playing.
  async function run(from) {
    if (busy) return;
    busy = true;
    remember("live");
    showCommand("live");
    status("live", from ? "running the run again with the new fault…" : "running…");
    try {
      const out = await call("/api/sim/view?" + query(pairs(form)));
      const r = out.report;
      if (from && from.more && shown && r.events <= shown.events) {
        status("live", `the run is over at t = ${r.end_time}: nothing is left to happen. Crash or restart a process, or cut a link, to go on.`);
        return;
      }
      shown = r;
      const summary = $("live-summary");
      summary.dataset.leader = r.leader ?? "";
      summary.dataset.events = r.events;
      summary.dataset.messages = r.messages.total;
      summary.dataset.end = r.end_time;
      summary.dataset.violations = r.properties.violations.length;
      summary.textContent = `leader at the end: ${r.leader ?? "none agreed"} · ${r.messages.total} messages · ${r.events} events · ends at t = ${r.end_time}` +
        (r.properties.violations.length ? ` · ${r.properties.violations.length} violation${r.properties.violations.length > 1 ? "s" : ""}` : "");
      if (!out.viewer) throw new Error("this run is too large to show step by step; ask for fewer processes");
      openViewer(frame, out.viewer, [{ elect: "live" }, { elect: "resume", step: from ? from.step : 0, speed: from ? from.speed : 5, play: from ? from.playing : true }]);
      status("live", hint(from));
    } catch (err) {
      status("live", err.message, true);
    } finally {
      busy = false;
    }
  }
  function hint(from) {
    const said = from && from.said ? from.said + ". " : "";
    return said + "Click a process to crash or restart it, a link to cut or heal it.";
  }

  // What the viewer asks for.
  window.addEventListener("message", (e) => {
    if (e.source !== frame.contentWindow || !e.data || typeof e.data.elect !== "string" || !e.data.elect.startsWith("live-")) return;
    const d = e.data;
    if (busy) return;
    const T = next(+d.t || 0);
    const from = { step: +d.step || 0, speed: +d.speed || 5, playing: !!d.playing };
    if (d.elect === "live-node") {
      const id = +d.node;
      if (d.down) { setWords("recover", [...words("recover"), `${id}@${T}`]); from.said = `${id} restarts at t = ${T}`; }
      else { setWords("crash", [...words("crash"), `${id}@${T}`]); from.said = `${id} crashes at t = ${T}`; }
    } else if (d.elect === "live-link") {
      const [a, b] = [+d.a, +d.b];
      const cuts = words("link-down");
      // The cut of this link still in force: heal it at T.
      const open = cuts.findIndex((w) => { const m = /^(\d+)-(\d+)@([\d.]+)$/.exec(w); return m && ((+m[1] === a && +m[2] === b) || (+m[1] === b && +m[2] === a)) && +m[3] < T; });
      if (d.broken && open >= 0) { cuts[open] += ".." + T; from.said = `the link ${a}–${b} heals at t = ${T}`; }
      else if (d.broken) { status("live", `the link ${a}–${b} is down by a fault this page did not add (a partition); change it in the fields above`); return; }
      else { cuts.push(`${a}-${b}@${T}`); from.said = `the link ${a}–${b} is cut at t = ${T}`; }
      setWords("link-down", cuts);
    } else if (d.elect === "live-end") {
      if (!shown) return;
      from.playing = true;
      from.more = true;
      form.elements.until.value = Math.ceil(+shown.end_time) + MORE;
      from.said = `more of the run, until t = ${form.elements.until.value}`;
      run(from);
      return;
    } else {
      return;
    }
    // The run goes on long enough after the new fault for its consequences to show.
    const until = +form.elements.until.value;
    if (until && until < T + MORE) form.elements.until.value = T + MORE;
    run(from);
  });

  form.onsubmit = (e) => {
    e.preventDefault();
    shown = null;
    run(null);
  };
  $("live-clear").onclick = () => {
    for (const name of ["crash", "recover", "link-down", "until"]) form.elements[name].value = "";
    shown = null;
    run(null);
  };
  form.elements.algorithm.addEventListener("change", () => {
    if (form.elements.monitor.checked && !form.elements.topology.value) {
      if (!MESH.includes(form.elements.algorithm.value)) form.elements.topology.value = "complete";
    }
    showCommand("live");
  });
  $("live-copy").onclick = async () => {
    const line = $("command-live").textContent;
    try {
      await navigator.clipboard.writeText(line);
      status("live", "copied: " + line);
    } catch (err) {
      // No clipboard (an address that is not localhost or https): select the command for the reader to copy.
      const range = document.createRange();
      range.selectNodeContents($("command-live"));
      getSelection().removeAllRanges();
      getSelection().addRange(range);
      status("live", "the command is selected: copy it with Ctrl+C");
    }
  };
  // The settings (algorithm, processes, delays, the faults so far) one click away, so that the cluster has the
  // screen.
  $("live-more").onclick = () => {
    const fields = $("live-fields"), opening = fields.hidden;
    fields.hidden = !opening;
    $("live-more").setAttribute("aria-expanded", String(opening));
    $("live-more").textContent = opening ? "settings ▴" : "settings ▾";
    tellScreen(frame);
  };

  // A run described by `params` (an address, or a preset from the page's header): the fields it names, and the
  // flags the Live view has no field for kept as they are; run from the start. A preset runs under the monitor, so
  // that a crash is noticed and a new election starts.
  function load(params, preset) {
    for (const extra of form.querySelectorAll("input[data-preset]")) extra.remove();
    for (const name of new Set(params.keys())) {
      if (form.elements[name] || name === "scenario") continue;
      const input = document.createElement("input");
      input.type = "hidden";
      input.name = name;
      input.dataset.preset = "";
      // A flag given more than once is one field of words, as the fault fields are.
      if (params.getAll(name).length > 1) input.dataset.repeat = "";
      $("live-fields").appendChild(input);
    }
    fill(form, params);
    if (preset) form.elements.monitor.checked = true;
    if (!MESH.includes(form.elements.algorithm.value) && !form.elements.topology.value) form.elements.topology.value = "complete";
    showCommand("live");
    shown = null;
    run(null);
  }
  window.ElectLive = { run, load };
})();
