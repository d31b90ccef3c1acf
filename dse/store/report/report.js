/* The dse report page: reads the embedded data, loads the embedded plotting library, draws the page.
   Everything it needs is in the file: no network. */
"use strict";
(function () {
  const DATA = JSON.parse(document.getElementById("report-data").textContent);
  // Okabe and Ito's colour-blind-safe palette, in dse/viz/palette.py's order (SERIES); no red for anything
  // that is not data (a certificate's region is neutral grey)
  const OKABE_ITO = { black: "#000000", orange: "#E69F00", skyBlue: "#56B4E9", bluishGreen: "#009E73",
    yellow: "#F0E442", blue: "#0072B2", vermillion: "#D55E00", reddishPurple: "#CC79A7" };
  const PALETTE = [OKABE_ITO.blue, OKABE_ITO.orange, OKABE_ITO.bluishGreen, OKABE_ITO.reddishPurple,
    OKABE_ITO.skyBlue, OKABE_ITO.vermillion, OKABE_ITO.black, OKABE_ITO.yellow];
  const NEUTRAL = "#555555";
  // a click offers every front point drawn this close (px) to the one it hit: a marker is about 8 px wide
  const NEAR_PX = 5;
  const NEUTRAL_FILL = "rgba(85,85,85,0.07)";
  const SOLVERS = {
    cpsat: { color: OKABE_ITO.blue, symbol: "circle", label: "CP-SAT (exact)" },
    exhaustive: { color: OKABE_ITO.bluishGreen, symbol: "square", label: "exhaustive" },
    nsga2: { color: OKABE_ITO.orange, symbol: "x", label: "NSGA-II" },
    certify: { color: OKABE_ITO.reddishPurple, symbol: "diamond", label: "dse certify" },
  };
  const OTHER_SOLVER_COLORS = [OKABE_ITO.reddishPurple, OKABE_ITO.skyBlue, OKABE_ITO.black, OKABE_ITO.vermillion];
  // baselines as dse/viz/fronts.py draws them; no triangles: an arrow marks a baseline off the axis
  const BASELINE_COLORS = [OKABE_ITO.skyBlue, OKABE_ITO.black, OKABE_ITO.vermillion, "#7F7F7F", OKABE_ITO.yellow,
    OKABE_ITO.bluishGreen, OKABE_ITO.orange, OKABE_ITO.blue];
  const BASELINE_SYMBOLS = ["cross", "x", "diamond", "star", "pentagon", "hexagon", "hexagram", "octagon"];
  // a store's values: one colour and one marker each, both in the legend (as dse/viz/fronts.py's store plot)
  const STORE_SYMBOLS = ["circle", "square", "diamond", "triangle-up", "triangle-down", "cross", "star", "x",
    "pentagon", "hexagon"];
  const MAX_STORE_VALUES = 10;
  const VIRIDIS = ["#440154", "#482878", "#3e4989", "#31688e", "#26828e", "#1f9e89", "#35b779", "#6ece58",
    "#b5de2b", "#fde725"];
  const CONFIG = { displaylogo: false, responsive: true };
  // legends beside the plot, clear of its axis titles
  const LEGEND_BESIDE = { orientation: "v", x: 1.02, xanchor: "left", y: 1, yanchor: "top" };

  // ------------------------------------------------------------------ small helpers
  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === "text") node.textContent = v;
      else if (k.startsWith("on")) node.addEventListener(k.slice(2), v);
      else node.setAttribute(k, v);
    }
    for (const c of children) if (c !== null && c !== undefined) node.append(c);
    return node;
  }
  function fmt(v) {
    if (v === null || v === undefined) return "";
    if (typeof v === "number") {
      if (Number.isInteger(v)) return String(v);
      return Number(v.toPrecision(5)).toString();
    }
    if (typeof v === "boolean") return v ? "yes" : "no";
    return String(v);
  }
  function table(columns, rows, cls) {
    const head = el("tr", {}, ...columns.map((c) => (c instanceof Node ? el("th", {}, c) : el("th", { text: c }))));
    const body = rows.map((r) => el("tr", {}, ...r.map((v) => (v instanceof Node ? el("td", {}, v) : el("td", { text: fmt(v) })))));
    return el("table", { class: cls || "data" }, el("thead", {}, head), el("tbody", {}, ...body));
  }
  function objectiveLabel(o) {
    const unit = o.unit ? ` [${o.unit}]` : "";
    const better = o.sense === "max" ? ", higher is better" : ", lower is better";
    return `${o.name || o.column}${unit}${better}`;
  }
  function columnLabel(column, sense) {
    const parts = String(column).split("_");
    const unit = parts.slice(1).join("_").replace(/_per_/g, "/").replace(/_/g, " ").replace(/\bmj\b/g, "mJ");
    const better = { max: ", higher is better", min: ", lower is better" }[sense] || "";
    return `${parts[0]}${unit ? ` [${unit}]` : ""}${better}`;
  }
  function section(title, ...children) {
    return el("section", {}, el("h2", { text: title }), ...children);
  }
  // text that may wrap after "_" and "." (long column names, dotted fields): narrow table columns
  function breakable(text) {
    const parts = String(text).split(/(?<=[_.])/);
    const out = document.createDocumentFragment();
    parts.forEach((part, k) => {
      if (k) out.append(el("wbr"));
      out.append(part);
    });
    return out;
  }
  // Labels along a line in rows, as dse/viz/labels.py's stagger: each label, by priority (highest first),
  // goes to the first of `rows` rows where it stays `gap` clear of the labels there; null when none has room.
  function stagger(extents, rows, gap, priority) {
    const taken = Array.from({ length: rows }, () => []);
    const placed = extents.map(() => null);
    const order = extents.map((_, k) => k);
    if (priority) order.sort((a, b) => priority[b] - priority[a]);
    for (const k of order) {
      const [start, end] = extents[k];
      const row = taken.findIndex((row) => row.every(([s, e]) => end + gap <= s || e + gap <= start));
      if (row >= 0) {
        taken[row].push([start, end]);
        placed[k] = row;
      }
    }
    return placed;
  }
  const measure = document.createElement("canvas").getContext("2d");
  function textWidth(text, size) {
    measure.font = `${size}px "Open Sans", verdana, arial, sans-serif`;
    return measure.measureText(text).width;
  }
  // where value v lies along a drawn axis (plotly's full axis), 0 at the start of its range and 1 at its end
  function alongAxis(axis, v) {
    const [a, b] = axis.range;
    const t = axis.type === "log" ? Math.log10(v) : v;
    return (t - a) / (b - a);
  }

  // ------------------------------------------------------------------ timelines (Gantt charts)
  function timelinePlot(div, timeline, opts) {
    const options = opts || {};
    const spans = timeline.spans;
    const label = (s) => (options.grouped ? `${s.group}: ${s.track}` : s.track);
    const seen = [];
    for (const s of spans) if (!seen.includes(label(s))) seen.push(label(s));
    // the timeline's own order (devices, then links), each track followed by its extra lanes ("#2")
    const order = options.grouped ? [] : (timeline.tracks || []);
    const base = (t) => t.split(" #")[0];
    const tracks = order.flatMap((t) => seen.filter((x) => base(x) === t))
      .concat(seen.filter((x) => !order.includes(base(x))));
    // frames coloured by model, stream runs by input, schedule ops each by its own colour
    const legendKey = (s) => s.args && (s.args.model || s.args.input_name);
    const colorKey = (s) => legendKey(s) || (s.kind === "link" ? "transfer" : s.name);
    const keys = [];
    for (const s of spans) if (s.kind !== "link" && !keys.includes(colorKey(s))) keys.push(colorKey(s));
    const byModel = spans.some((s) => legendKey(s));
    const traces = [];
    const groups = byModel ? keys : ["ops"];
    for (const g of groups) {
      const mine = spans.filter((s) => s.kind !== "link" && (!byModel || colorKey(s) === g));
      if (!mine.length) continue;
      traces.push({
        type: "bar", orientation: "h", name: byModel ? g : "ops", showlegend: byModel,
        y: mine.map(label), base: mine.map((s) => s.start), x: mine.map((s) => Math.max(s.end - s.start, 1e-12)),
        text: mine.map((s) => s.name), textposition: "inside", insidetextanchor: "middle", textangle: 0,
        hovertext: mine.map((s) => `${s.name}<br>${s.track}: ${fmt(s.start)} to ${fmt(s.end)} ${timeline.unit}` +
          Object.entries(s.args || {}).map(([k, v]) => `<br>${k}: ${fmt(v)}`).join("")),
        hoverinfo: "text",
        marker: {
          color: byModel ? PALETTE[keys.indexOf(g) % PALETTE.length] : mine.map((s) => PALETTE[keys.indexOf(colorKey(s)) % PALETTE.length]),
          line: { color: "#333", width: 0.5 },
        },
      });
    }
    const links = spans.filter((s) => s.kind === "link");
    if (links.length) {
      traces.push({
        type: "bar", orientation: "h", name: "transfers", y: links.map(label), base: links.map((s) => s.start),
        x: links.map((s) => Math.max(s.end - s.start, 1e-12)), text: links.map((s) => s.name),
        textposition: "inside", insidetextanchor: "middle", textangle: 0, hoverinfo: "text",
        hovertext: links.map((s) => `${s.name}<br>${s.track}: ${fmt(s.start)} to ${fmt(s.end)} ${timeline.unit}` +
          Object.entries(s.args || {}).map(([k, v]) => `<br>${k}: ${fmt(v)}`).join("")),
        marker: { color: "white", line: { color: "#555", width: 0.8 }, pattern: { shape: "/", fgcolor: "#c8c8c8" } },
      });
    }
    const instants = timeline.instants || [];
    if (instants.length) {
      traces.push({
        type: "scatter", mode: "markers", name: "dropped or switch", x: instants.map((s) => s.start),
        y: instants.map(label), marker: { symbol: "x", color: "black", size: 7 }, hoverinfo: "text",
        hovertext: instants.map((s) => s.name),
      });
      for (const s of instants) if (!tracks.includes(label(s))) tracks.push(label(s));
    }
    const height = Math.max(220, 90 + 28 * tracks.length);
    const layout = {
      barmode: "overlay", height, margin: { l: 170, r: 20, t: 30, b: 45 },
      title: { text: options.title || "", font: { size: 13 } },
      xaxis: { title: { text: `time [${timeline.unit}]` }, zeroline: false },
      yaxis: { categoryorder: "array", categoryarray: tracks, autorange: "reversed", automargin: true },
      uniformtext: { minsize: 9, mode: "hide" }, showlegend: byModel || links.length > 0 || instants.length > 0,
      legend: LEGEND_BESIDE, shapes: options.shapes || [],
    };
    return Plotly.newPlot(div, traces, layout, CONFIG);
  }

  function breakdownPlot(div, rows, unit) {
    const names = rows.map((r) => r.resource);
    const traces = [
      { type: "bar", name: `busy [${unit}]`, x: names, y: rows.map((r) => r.busy), marker: { color: "#4c78a8" } },
    ];
    const energyUnit = (rows.find((r) => r.energy_unit) || {}).energy_unit || "mJ";
    if (rows.some((r) => r.energy !== null)) {  // stacked: what the ops spend, then the idle power's share
      traces.push({
        type: "bar", name: "ops and transfers", x: names, y: rows.map((r) => r.energy),
        xaxis: "x2", yaxis: "y2", marker: { color: "#E69F00" },
      });
      traces.push({
        type: "bar", name: "idle", x: names, y: rows.map((r) => r.idle_energy || 0),
        xaxis: "x2", yaxis: "y2", marker: { color: "#999999" },
      });
    }
    const layout = {
      height: 300, margin: { l: 60, r: 20, t: 30, b: 90 }, barmode: "stack",
      grid: { rows: 1, columns: traces.length > 1 ? 2 : 1, pattern: "independent" },
      yaxis: { title: { text: `busy [${unit}]` } }, yaxis2: { title: { text: `energy [${energyUnit}]` } },
      showlegend: traces.length > 1, legend: { orientation: "h", y: -0.45 },
      title: { text: "time and energy per device and link", font: { size: 13 } },
    };
    return Plotly.newPlot(div, traces, layout, CONFIG);
  }

  // ------------------------------------------------------------------ solve reports
  // Axes as the static figures draw them (DATA.drawing, from dse/viz/scales.py): each objective's scale and
  // range; baselines that would squash the fronts sit off the axis, as arrows at its edge with their values.
  const ARROW_ANGLE = { "null above": 0, "above above": 45, "above null": 90, "above below": 135,
    "null below": 180, "below below": 225, "below null": 270, "below above": 315 };
  const LABEL_SIZE = 11; // px, an off-axis baseline's label
  const LABEL_ROWS = 3;
  const LINE = LABEL_SIZE * 1.4;
  const ARROW = 12; // px the arrow takes inside the edge

  function axisPlan(column) {
    return ((DATA.drawing || {}).axes || {})[column];
  }
  function planned(plan, title) {
    const axis = { title: { text: title }, automargin: true };
    if (!plan) return axis;
    const r = plan.range;
    return { ...axis, type: plan.scale, range: plan.scale === "log" ? r.map(Math.log10) : r.slice(), autorange: false };
  }
  function side(plan, name) {
    if (!plan) return null;
    return plan.below.includes(name) ? "below" : plan.above.includes(name) ? "above" : null;
  }
  function withUnit(value, objective) {
    return `${fmt(value)}${objective.unit ? ` ${objective.unit}` : ""}`;
  }

  // the labels of the off-axis baselines in rows along the edges, the ranges widened by a band at each
  // labelled edge to hold them (as dse/viz/offaxis.py does); the plot is then drawn afresh with its final
  // ranges, so that "reset axes" (and a double click, with config's doubleClick "reset") returns to them
  function labelEdges(div, marks, config) {
    if (!marks.length) return Promise.resolve();
    const rowsOf = (room) => {
      const fl = div._fullLayout;
      const out = {};
      for (const m of marks) {
        const edge = m.sy ? (m.sy === "above" ? "top" : "bottom") : (m.sx === "above" ? "right" : "left");
        (out[edge] = out[edge] || { marks: [] }).marks.push(m);
      }
      for (const [edge, e] of Object.entries(out)) {
        const across = edge === "top" || edge === "bottom";
        const along = across ? fl.xaxis._length : fl.yaxis._length;
        e.thickness = across ? fl.yaxis._length : fl.xaxis._length;
        const extents = e.marks.map((m) => {
          const at = m.sx && m.sy ? (across ? (m.sx === "above" ? 1 : 0) : (m.sy === "above" ? 1 : 0))
            : across ? alongAxis(fl.xaxis, m.x) : alongAxis(fl.yaxis, m.y);
          const length = (textWidth(m.text, LABEL_SIZE) + 4) / along;
          const corner = ARROW / along;
          const start = Math.min(Math.max(at - length / 2, corner), Math.max(1 - length - corner, corner));
          return [start, start + length];
        });
        const rows = stagger(extents, room ? (room[edge] || 0) : LABEL_ROWS, 4 / along, null);
        e.placed = e.marks.map((m, k) => [m, extents[k][0], rows[k]]).filter(([, , r]) => r !== null);
        e.used = Math.max(-1, ...e.placed.map(([, , r]) => r)) + 1;
      }
      return out;
    };
    const first = rowsOf(null);
    const band = (edge) => (first[edge] ? (ARROW + first[edge].used * LINE + 2) / first[edge].thickness : 0);
    const widen = (axis, low, high) => {
      const [a, b] = axis.range;
      const span = (b - a) / Math.max(1 - band(low) - band(high), 0.2);
      return [a - band(low) * span, b + band(high) * span];
    };
    const fl = div._fullLayout;
    const update = { "xaxis.range": widen(fl.xaxis, "left", "right"), "yaxis.range": widen(fl.yaxis, "bottom", "top") };
    return Plotly.relayout(div, update).then(() => {
      // the arrows to the widened edges
      const edge = (axis, s) => {
        const v = axis.range[s === "below" ? 0 : 1];
        return axis.type === "log" ? 10 ** v : v;
      };
      const moved = marks.map((m) => [m.sx ? edge(div._fullLayout.xaxis, m.sx) : m.x, m.sy ? edge(div._fullLayout.yaxis, m.sy) : m.y]);
      return Plotly.restyle(div, { x: moved.map(([x]) => [x]), y: moved.map(([, y]) => [y]) }, marks.map((m) => m.trace));
    }).then(() => {
      const room = Object.fromEntries(Object.entries(first).map(([edge, e]) => [edge, e.used]));
      const annotations = [];
      for (const [edge, e] of Object.entries(rowsOf(room))) {
        for (const [m, start, row] of e.placed) {
          const depth = (ARROW + row * LINE + LINE / 2) / e.thickness;
          const across = edge === "top" || edge === "bottom";
          const [x, y] = { top: [start, 1 - depth], bottom: [start, depth], left: [depth, start], right: [1 - depth, start] }[edge];
          annotations.push({ xref: "paper", yref: "paper", x, y, text: m.text, showarrow: false,
            xanchor: across ? "left" : "center", yanchor: across ? "middle" : "bottom", textangle: across ? 0 : -90,
            font: { size: LABEL_SIZE, color: m.color }, name: `off-axis ${m.name}` });
        }
      }
      return Plotly.relayout(div, { annotations });
    }).then(() => Plotly.newPlot(div, div.data, div.layout, config));
  }

  // the compact hover text of a front point: solver and proof, each objective with its unit, who found it
  // (a distributed run's), where to click
  function hoverText(label, p, objs, others) {
    return [`<b>${label}</b>${p.proven ? ", proven" : ", not proven"}${p.feasible === false ? ", infeasible" : ""}`]
      .concat(objs.map((o) => `${o.name || o.column}: ${withUnit(p.objectives[o.column], o)}`))
      .concat(p.found ? [p.found] : [])
      .concat(others.length ? [`also here: ${others.join(", ")}`] : [])
      .concat(["<i>click: mapping and schedule below</i>"]).join("<br>");
  }

  function solvePage(root) {
    const objs = DATA.objectives;
    if (objs.length < 1) {
      root.append(section("Pareto fronts", el("p", { text: "No front was written yet." })));
      return Promise.resolve();
    }
    // one objective: its value on x, one row per solver (and the baselines) on y
    const single = objs.length === 1;
    const xi = 0;
    const yi = single ? 0 : 1;
    const xcol = objs[xi].column;
    const ycol = objs[yi].column;
    const xplan = axisPlan(xcol);
    const yplan = single ? null : axisPlan(ycol);
    const yOf = (p, row) => (single ? row : p.objectives[ycol]);
    const plot = el("div", { id: "fronts", class: "plot" });
    const captions = el("div", { id: "certificates" });
    const detail = el("div", { id: "detail" }, el("p", { class: "hint", text: "Click a point on the plot to see its mapping, its time and energy per device and link, and its schedule." }));
    const summary = table(["solver", "status", "points", "proven", "wall time [s]", "certificate gap"],
      DATA.fronts.map((f) => [f.solver, f.status + (f.complete ? " (complete)" : ""), f.points.length,
        f.points.filter((p) => p.proven).length, f.stats ? f.stats.wall_s : null,
        f.certificate ? `${fmt(100 * f.certificate.gap)} %` : "none"]));
    root.append(section("Pareto fronts", plot, captions, summary), section("Selected point", detail));

    const styleOf = (f, k) => SOLVERS[f.solver] || { color: OTHER_SOLVER_COLORS[k % OTHER_SOLVER_COLORS.length],
      symbol: "diamond", label: f.solver };
    // every front point at each drawn position: coincident points are all offered on a click
    const where = (p) => `${p.objectives[xcol]} ${single ? "" : p.objectives[ycol]}`;
    const at = new Map();
    DATA.fronts.forEach((f, k) => f.points.forEach((p) => {
      if (!at.has(where(p))) at.set(where(p), []);
      at.get(where(p)).push({ front: k, point: p });
    }));
    // every front point drawn within NEAR_PX pixels of ``point``: points of a dense front that a click
    // cannot tell apart are all offered (the same values, or values a pixel or two apart)
    const nearby = (plot, point) => {
      const fl = plot._fullLayout;
      const pos = (q) => [fl.xaxis.d2p(q.objectives[xcol]), fl.yaxis.d2p(q.objectives[ycol])];
      const [cx, cy] = pos(point);
      const out = [];
      DATA.fronts.forEach((f, k) => f.points.forEach((q) => {
        const [x, y] = pos(q);
        if (Math.hypot(x - cx, y - cy) <= NEAR_PX) out.push({ front: k, point: q });
      }));
      return out;
    };
    const traces = [];
    const shapes = [];
    // certificate regions: one light grey outline each (their boxes' union), beneath every point; shapes,
    // which take no clicks
    DATA.fronts.forEach((f, k) => {
      if (!f.certificate) return;
      const c = f.certificate;
      // as dse certify prints it: the units of the hypervolume and the reference point it is measured to
      const objs = f.objectives || DATA.objectives || [];
      const units = objs.map((o) => o.unit || "").filter((u) => u).join(" x ");
      const refText = (c.reference || []).map((v, i) =>
        `${(objs[i] || {}).name || `objective ${i}`} ${fmt(v)}${(objs[i] || {}).unit ? ` ${objs[i].unit}` : ""}`).join(", ");
      const reached = c.hypervolume !== undefined && c.hypervolume !== null
        ? `hypervolume ${fmt(c.hypervolume)} of at most ${fmt(c.hypervolume_bound)}${units ? ` ${units}` : ""}` +
          (refText ? ` (reference point: ${refText})` : "")
        : `value ${fmt(c.value)}, bound ${fmt(c.bound)}`;
      const loops = ((DATA.drawing || {}).regions || {})[String(k)] || [];
      captions.append(el("p", {
        class: "certificate",
        text: `${f.solver} certificate: ${reached}, gap ${fmt(100 * c.gap)} %` +
          (loops.length ? " (grey outline: where undiscovered Pareto points can still lie)" : ""),
      }));
      if (!loops.length) return;
      const path = loops.map((loop) => `M${loop.map(([x, y]) => `${x},${y}`).join("L")}Z`).join("");
      const name = `${f.solver}: unexplored region (gap ${fmt(100 * c.gap)} %)`;
      shapes.push({ type: "path", path, xref: "x", yref: "y", layer: "between", fillcolor: NEUTRAL_FILL,
        line: { color: NEUTRAL, dash: "dash", width: 1 }, name, legendgroup: `region-${k}` });
      traces.push({ type: "scatter", mode: "lines", x: [null], y: [null], name, legendgroup: `region-${k}`,
        fill: "toself", fillcolor: NEUTRAL_FILL, line: { color: NEUTRAL, dash: "dash", width: 1 }, hoverinfo: "skip",
        meta: { region: k } });
    });
    // baselines below the fronts, so they never hide a front point; equal ones each smaller than the last;
    // those off an axis as arrows at its edge, labelled with their values
    const stacked = new Map();
    const marks = [];
    DATA.baselines.forEach((b, k) => {
      const sx = side(xplan, b.name);
      const sy = single ? null : side(yplan, b.name);
      const color = BASELINE_COLORS[k % BASELINE_COLORS.length];
      const hover = `baseline ${b.name}${b.feasible ? "" : " (infeasible)"}${sx || sy ? " (off the axis)" : ""}<br>` +
        objs.map((o) => `${o.name || o.column}: ${withUnit(b.objectives[o.column], o)}`).join("<br>");
      let x = b.objectives[xcol];
      let y = yOf(b, "baselines");
      let marker;
      if (sx || sy) {
        if (sx) x = xplan.range[sx === "below" ? 0 : 1];
        if (sy) y = yplan.range[sy === "below" ? 0 : 1];
        marker = { symbol: `arrow${b.feasible ? "" : "-open"}`, angle: ARROW_ANGLE[`${sx} ${sy}`], size: 13, color,
          line: { color, width: 1 } };
        const values = [[sx, xcol, objs[xi]], [sy, ycol, objs[yi]]].filter(([s]) => s)
          .map(([, col, o]) => withUnit(b.objectives[col], o));
        marks.push({ name: b.name, x, y, sx, sy, color, text: `${b.name}: ${values.join(", ")}`, trace: traces.length });
      } else {
        const here = `${x} ${y}`;
        const n = stacked.get(here) || 0;
        stacked.set(here, n + 1);
        marker = { symbol: BASELINE_SYMBOLS[k % BASELINE_SYMBOLS.length] + (b.feasible ? "" : "-open"), size: 12 * 0.7 ** n,
          color, line: { color, width: b.feasible ? 0.5 : 1.5 } };
      }
      traces.push({
        type: "scatter", mode: "markers", name: `baseline: ${b.name}${b.feasible ? "" : " (infeasible)"}`,
        x: [x], y: [y], marker, cliponaxis: false, hovertext: [hover], hoverinfo: "text",
        meta: { baseline: b.name, off: [sx, sy] },
      });
    });
    // exact fronts drawn first with large markers, approximate ones above them with small markers; error
    // bands as their own traces beneath, each with a legend entry
    const ordered = DATA.fronts.map((f, k) => [f, k]).sort((a, b) => Number(b[0].exact) - Number(a[0].exact));
    const bands = [];
    const fronts = [];
    for (const [f, k] of ordered) {
      const style = styleOf(f, k);
      const pts = f.points.slice().sort((a, b) => a.objectives[xcol] - b.objectives[xcol]);
      const band = (col) => {
        if (!pts.length || !pts.every((p) => p.bands && p.bands[col])) return undefined;
        return { type: "data", symmetric: false, array: pts.map((p) => p.bands[col][1] - p.objectives[col]),
          arrayminus: pts.map((p) => p.objectives[col] - p.bands[col][0]), color: style.color, thickness: 1, width: 3 };
      };
      const ex = band(xcol);
      const ey = single ? undefined : band(ycol);
      if (ex || ey) {
        const group = `band-${k}`;
        bands.push({ type: "scatter", mode: "markers", name: `${style.label}: error band`, legendgroup: group,
          showlegend: false, x: pts.map((p) => p.objectives[xcol]), y: pts.map((p) => yOf(p, style.label)),
          marker: { size: 1, opacity: 0 }, error_x: ex, error_y: ey, hoverinfo: "skip" });
        bands.push({ type: "scatter", mode: "markers", name: `${style.label}: error band`, legendgroup: group,
          x: [null], y: [null], marker: { symbol: "cross-thin-open", size: 12, color: style.color, line: { width: 1 } },
          hoverinfo: "skip" });
      }
      const others = (p) => at.get(where(p)).filter((e) => e.point !== p)
        .map((e) => styleOf(DATA.fronts[e.front], e.front).label);
      fronts.push({
        type: "scatter", mode: "lines+markers", name: `${style.label}: ${pts.length} points`,
        x: pts.map((p) => p.objectives[xcol]), y: pts.map((p) => yOf(p, style.label)),
        customdata: pts.map((p) => p.key), line: { color: style.color, width: 1, shape: "linear" },
        marker: {
          symbol: pts.map((p) => (p.proven ? style.symbol : `${style.symbol}-open`)), color: style.color,
          size: f.exact ? 13 : 8, line: { color: style.color, width: f.exact ? 1 : 2 },
        },
        hovertext: pts.map((p) => hoverText(style.label, p, objs, others(p))),
        hoverinfo: "text", meta: k,
      });
    }
    const layout = {
      height: 540, margin: { l: 80, r: 20, t: 40, b: 60 }, hovermode: "closest", shapes,
      hoverlabel: { align: "left", font: { size: 12 } },
      title: { text: DATA.title, font: { size: 15 } },
      xaxis: planned(xplan, objectiveLabel(objs[xi])),
      yaxis: single ? { type: "category", automargin: true } : planned(yplan, objectiveLabel(objs[yi])),
      legend: { orientation: "v", x: 1.02, y: 1 },
    };
    // a double click returns to the planned axes (plotly's default would next autoscale them onto the
    // baselines, and two quick clicks on two points count as a double click)
    const config = { ...CONFIG, doubleClick: "reset" };
    return Plotly.newPlot(plot, traces.concat(bands, fronts), layout, config)
      .then(() => labelEdges(plot, marks, config))
      .then(() => {
        plot.on("plotly_click", (ev) => {
          const p = ev.points && ev.points[0];
          if (!p || p.customdata === undefined || typeof p.data.meta !== "number") return;
          const front = DATA.fronts[p.data.meta];
          const point = front.points.find((q) => q.key === p.customdata);
          showChoices(detail, single ? at.get(where(point)) : nearby(plot, point), { front: p.data.meta, point },
            styleOf);
        });
      });
  }

  // every point at the clicked position (one button each: CP-SAT and NSGA-II on the same values, say), the
  // chosen one's details below them
  function showChoices(div, here, chosen, styleOf) {
    const body = el("div", { id: "point-detail" });
    const buttons = here.map((e) => el("button", {
      type: "button", "data-front": String(e.front), "data-key": e.point.key,
      class: e === chosen || (e.front === chosen.front && e.point === chosen.point) ? "chosen" : "",
      text: `${styleOf(DATA.fronts[e.front], e.front).label}${e.point.proven ? ", proven" : ""}`,
      onclick: (ev) => {
        buttons.forEach((b) => b.classList.remove("chosen"));
        ev.currentTarget.classList.add("chosen");
        showDetail(body, e.point.key, DATA.fronts[e.front], e.point);
      },
    }));
    div.replaceChildren();
    if (here.length > 1) {
      div.append(el("div", { id: "coincident" },
        el("span", { text: `${here.length} points at this position: ` }), ...buttons));
    }
    div.append(body);
    showDetail(body, chosen.point.key, DATA.fronts[chosen.front], chosen.point);
  }

  function showDetail(div, key, front, point) {
    div.replaceChildren();
    div.setAttribute("data-key", key);
    const d = DATA.details[key];
    div.append(el("h3", { text: `${front ? front.solver : ""} point` }));
    if (point && point.found) {
      div.append(el("p", { class: "found-by", text: point.found }));
    }
    if (point) {
      div.append(table(["objective or metric", "value"],
        Object.entries(point.objectives).concat(Object.entries(point.metrics || {})).map(([k, v]) => [k, v]), "data narrow"));
    }
    if (!d) {
      div.append(el("p", { class: "hint", text: `genome ${key}: no details (give the spec with dse report --spec)` }));
      return;
    }
    div.append(el("p", { class: "describe", text: `mapping: ${d.describe}` }));
    div.append(el("h4", { text: "mapping" }), el("div", { class: "scroll", id: "mapping" },
      table(["op", "device"], d.mapping, "data narrow")));
    if (d.breakdown.length) {
      div.append(el("h4", { text: "time and energy per device and link" }));
      // the ops' energy at the clock the genome chose, plus the idle power's share: the rows add up to the
      // point's energy objective (the total row), as dse explain prints it
      const unitE = (d.breakdown.find((r) => r.energy_unit) || {}).energy_unit || "mJ";
      const round = (v) => (v === null || v === undefined ? "" : Number(v.toPrecision(6)));
      const rowsE = d.breakdown.map((r) => [r.resource, r.kind, r.level || "", r.busy, round(r.energy),
        round(r.idle_energy || 0), round((r.energy || 0) + (r.idle_energy || 0)), r.spans]);
      const total = d.breakdown.reduce((acc, r) => acc + (r.energy || 0) + (r.idle_energy || 0), 0);
      rowsE.push(["total", "", "", "", "", "", round(total), ""]);
      div.append(table(["resource", "kind", "clock", `busy [${d.unit}]`, `ops and transfers [${unitE}]`,
        `idle [${unitE}]`, `energy [${unitE}]`, "spans"], rowsE, "data narrow"));
      div.lastChild.id = "energy-breakdown";
      const plot = el("div", { class: "plot small", id: "breakdown" });
      div.append(plot);
      breakdownPlot(plot, d.breakdown, d.unit);
    }
    if (d.timeline) {
      div.append(el("h4", { text: "schedule" }));
      const plot = el("div", { class: "plot", id: "schedule" });
      div.append(plot);
      timelinePlot(plot, d.timeline, { title: "" });
    }
    div.append(el("h4", { text: "explanation" }), el("pre", { text: d.explain }));
  }

  // ------------------------------------------------------------------ simulate reports
  // the phases' names above the plot, centred on each, in up to PHASE_ROWS rows so that none overlap
  // (longest phases first, as dse/viz/streams.py); those no row has room for are listed under the plot
  const PHASE_SIZE = 10;
  const PHASE_ROWS = 3;
  function namePhases(div, phases, unnamed) {
    if (!phases.length) return Promise.resolve();
    const fl = div._fullLayout;
    const extents = phases.map((ph) => {
      const centre = fl.xaxis.l2p((ph.start + ph.end) / 2);
      const half = (textWidth(ph.name, PHASE_SIZE) + 4) / 2;
      return [centre - half, centre + half];
    });
    const rows = stagger(extents, PHASE_ROWS, 6, phases.map((ph) => ph.end - ph.start));
    const used = Math.max(-1, ...rows.filter((r) => r !== null)) + 1;
    const line = PHASE_SIZE * 1.5;
    const annotations = phases.map((ph, k) => [ph, rows[k]]).filter(([, r]) => r !== null).map(([ph, r]) => ({
      x: (ph.start + ph.end) / 2, xref: "x", yref: "paper", y: 1, yshift: 4 + r * line, yanchor: "bottom",
      text: ph.name, showarrow: false, font: { size: PHASE_SIZE }, name: "phase" }));
    const left = phases.filter((_, k) => rows[k] === null).map((ph) => ph.name);
    unnamed.textContent = left.length ? `Phases too short to name on the plot: ${left.join(", ")}.` : "";
    return Plotly.relayout(div, { annotations, "margin.t": 16 + used * line });
  }

  function simulatePage(root) {
    root.append(section("Summary", table(DATA.summary.columns, DATA.summary.rows)));
    const tl = DATA.timeline;
    const drawn = [];
    if (!tl) return Promise.resolve();
    const shapes = [];
    (DATA.phases || []).forEach((ph, k) => {
      shapes.push({ type: "rect", xref: "x", yref: "paper", x0: ph.start, x1: ph.end, y0: 0, y1: 1, layer: "below",
        fillcolor: k % 2 ? "rgba(120,120,120,0.10)" : "rgba(86,180,233,0.10)", line: { width: 0 } });
    });
    if (DATA.sim === "stream") {
      const over = el("div", { class: "plot", id: "stream" });
      const unnamed = el("p", { class: "hint", id: "unnamed-phases" });
      root.append(section("Runs over time (input phases shaded)", over, unnamed));
      const policies = [...new Set(tl.spans.map((s) => s.group))];
      const traces = [];
      policies.forEach((name, k) => {
        const runs = tl.spans.filter((s) => s.group === name && s.name !== "switch" && s.args.items > 0);
        const dash = ["solid", "dash", "dot", "dashdot", "longdash"][k % 5];
        const color = PALETTE[k % PALETTE.length];
        traces.push({ type: "scatter", mode: "lines", name, legendgroup: name, line: { shape: "hv", dash, color, width: 2 },
          x: runs.map((s) => s.start), y: runs.map((s) => s.args.items / Math.max(s.end - s.start, 1e-12)) });
        traces.push({ type: "scatter", mode: "lines", name, legendgroup: name, showlegend: false,
          line: { shape: "hv", dash, color, width: 2 }, xaxis: "x", yaxis: "y2",
          x: runs.map((s) => s.start), y: runs.map((s) => s.args.energy_j / s.args.items) });
        const switches = (tl.instants || []).filter((s) => s.group === name);
        traces.push({ type: "scatter", mode: "markers", name: `${name}: switch`, legendgroup: name, showlegend: false,
          x: switches.map((s) => s.start), y: switches.map(() => 1.0 - 0.03 * k), yaxis: "y3",
          marker: { symbol: "line-ns-open", size: 12, color }, hovertext: switches.map((s) => `${name}: switch`), hoverinfo: "text" });
      });
      drawn.push(Plotly.newPlot(over, traces, {
        height: 560, margin: { l: 80, r: 20, t: 40, b: 50 }, shapes,
        xaxis: { title: { text: "simulated time [s]" }, anchor: "y2" },
        yaxis: { title: { text: "throughput [items/s]" }, domain: [0.55, 0.95] },
        yaxis2: { title: { text: "energy [J/item]" }, domain: [0.0, 0.45] },
        yaxis3: { domain: [0.95, 1.0], range: [0.8, 1.05], visible: false },
        legend: LEGEND_BESIDE,
      }, CONFIG).then(() => namePhases(over, DATA.phases || [], unnamed)));
    }
    const gantt = el("div", { class: "plot", id: "timeline" });
    root.append(section("Timeline", gantt));
    drawn.push(timelinePlot(gantt, tl, { grouped: true, shapes: DATA.sim === "stream" ? shapes : [] }));
    return Promise.all(drawn);
  }

  // ------------------------------------------------------------------ store reports
  function storePage(root) {
    if (!DATA.jobs.rows.length) { // nothing ran yet: say so, draw nothing
      root.append(section("Fronts", el("p", { id: "no-jobs",
        text: "This store holds no jobs yet: nothing to draw. dse batch SPEC --store STORE runs its jobs." })));
      return Promise.resolve();
    }
    const cols = DATA.jobs.columns;
    const rows = DATA.jobs.rows.map((r) => Object.fromEntries(cols.map((c, k) => [c, r[k]])));
    const swept = DATA.swept;
    const filters = {};
    const controls = el("div", { class: "controls" });
    const colorBy = el("select", { id: "color-by" }, ...swept.map((s) => el("option", { value: s, text: s })));
    const varying = swept.find((s) => new Set(rows.map((r) => String(r[s]))).size > 1);
    if (varying) colorBy.value = varying;
    controls.append(el("label", { text: "colour fronts by " }, colorBy));
    for (const name of ["status", ...swept]) {
      const values = [...new Set(rows.map((r) => String(r[name])))];
      if (values.length < 2 && name !== "status") continue; // a field that does not vary filters nothing
      const select = el("select", { id: `filter-${name}`, "data-field": name },
        el("option", { value: "*", text: "all" }), ...values.map((v) => el("option", { value: v, text: v })));
      filters[name] = select;
      controls.append(el("label", { text: ` ${name} ` }, select));
    }
    const plot = el("div", { id: "fronts", class: "plot" });
    const jobsDiv = el("div", { id: "jobs", class: "scroll tall" });
    const details = el("div", { id: "job-details" });
    root.append(section("Fronts", controls, plot), section("Jobs", jobsDiv), section("Job details", details));
    const objs = DATA.objectives;
    const shown = cols.filter((c) => !["attempts", "engine_version"].includes(c));

    function selected() {
      return rows.filter((r) => Object.entries(filters).every(([f, s]) => s.value === "*" || String(r[f]) === s.value));
    }
    function colorsFor(field, jobs) {
      const values = [...new Set(jobs.map((r) => r[field]))];
      const numeric = DATA.swept_kinds[field] === "number" && values.length > MAX_STORE_VALUES;
      if (!numeric) {
        const sorted = values.slice().sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
        return { discrete: true, of: (v) => PALETTE[sorted.indexOf(v) % PALETTE.length], values: sorted };
      }
      const lo = Math.min(...values);
      const hi = Math.max(...values);
      return { discrete: false, lo, hi, of: (v) => VIRIDIS[Math.round(((v - lo) / ((hi - lo) || 1)) * 9)] };
    }
    function draw() {
      const jobs = selected();
      let done = Promise.resolve();
      jobsDiv.replaceChildren(table(shown.map((c) => breakable(c)), jobs.map((r) => shown.map((c) => (c === "job"
        ? el("a", { href: `#job-${r.job}`, text: String(r.job).slice(0, 12) })
        : typeof r[c] === "string" ? breakable(r[c]) : r[c])))));
      if (objs.length < 2) {
        plot.replaceChildren(el("p", { text: "The store's fronts have fewer than two objectives." }));
        return Promise.resolve();
      }
      const field = colorBy.value;
      const colors = colorsFor(field, jobs);
      const labelled = new Set();
      const traces = [];
      // one colour and one marker per value, both in its legend entry; each later value drawn above the
      // earlier ones with a smaller, hollow marker and a thinner line, so fronts that coincide all show
      // (as dse/viz/fronts.py's store plot)
      const rank = (r) => (colors.discrete ? colors.values.indexOf(r[field]) : 0);
      const ordered = jobs.slice().sort((a, b) => rank(a) - rank(b));
      const nValues = colors.discrete ? colors.values.length : 1;
      const count = (v) => jobs.filter((r) => r[field] === v && (DATA.points[r.job] || []).some((p) => p.feasible)).length;
      for (const r of ordered) {
        const pts = (DATA.points[r.job] || []).filter((p) => p.feasible)
          .sort((a, b) => a.objectives[objs[0].column] - b.objectives[objs[0].column]);
        if (!pts.length) continue;
        const value = r[field];
        const k = rank(r);
        const later = k / Math.max(nValues - 1, 1);
        const first = !labelled.has(String(value));
        labelled.add(String(value));
        const symbol = colors.discrete ? STORE_SYMBOLS[k % STORE_SYMBOLS.length] + (k === 0 ? "" : "-open") : "circle-open";
        const n = count(value);
        traces.push({
          type: "scatter", mode: "lines+markers",
          name: colors.discrete ? `${field} = ${fmt(value)}${n > 1 ? ` (${n} jobs)` : ""}` : String(r.job).slice(0, 12),
          legendgroup: String(value), showlegend: colors.discrete && first,
          x: pts.map((p) => p.objectives[objs[0].column]), y: pts.map((p) => p.objectives[objs[1].column]),
          line: { color: colors.of(value), width: colors.discrete ? 3 - 2 * later : 1.5, shape: "hv" },
          marker: { size: colors.discrete ? 14 - 7 * later : 9, color: colors.of(value), symbol,
            line: { width: 2, color: colors.of(value) } },
          customdata: pts.map(() => r.job), meta: r.job,
          hovertext: pts.map((p) => `job ${String(r.job).slice(0, 12)}, ${field} = ${fmt(value)}<br>${p.solver}` +
            objs.map((o) => `<br>${columnLabel(o.column, null)}: ${fmt(p.objectives[o.column])}`).join("")),
          hoverinfo: "text",
        });
      }
      if (!colors.discrete) {
        traces.push({ type: "scatter", mode: "markers", x: [null], y: [null], showlegend: false, hoverinfo: "skip",
          marker: { color: [colors.lo], cmin: colors.lo, cmax: colors.hi, colorscale: "Viridis", showscale: true,
            colorbar: { title: { text: field } } } });
      }
      const axis = (o) => {
        const plan = axisPlan(o.column);
        return { title: { text: columnLabel(o.column, o.sense) }, type: plan ? plan.scale : "linear" };
      };
      done = Plotly.react(plot, traces, {
        height: 520, margin: { l: 80, r: 20, t: 40, b: 60 }, hovermode: "closest",
        title: { text: `Pareto fronts of ${jobs.length} jobs, coloured by ${field}`, font: { size: 14 } },
        xaxis: axis(objs[0]), yaxis: axis(objs[1]),
        legend: { ...LEGEND_BESIDE, title: { text: field } },
      }, CONFIG);
      return done;
    }
    for (const r of rows) {
      const pts = DATA.points[r.job] || [];
      const head = swept.map((s) => `${s} = ${fmt(r[s])}`).join(", ");
      const ocols = objs.map((o) => o.column);
      details.append(el("section", { id: `job-${r.job}`, class: "job" },
        el("h3", { text: `job ${String(r.job).slice(0, 12)}: ${head}` }),
        el("p", { text: `status ${r.status}${r.message ? `: ${r.message}` : ""}; solvers ${r.solvers}; wall time ${fmt(r.wall_s)} s` }),
        pts.length ? table(["solver", "proven", "feasible", ...ocols, "genome"],
          pts.map((p) => [p.solver, p.proven, p.feasible, ...ocols.map((c) => p.objectives[c]),
            String(p.genome).length > 60 ? `${String(p.genome).slice(0, 60)} ...` : p.genome]), "data narrow")
          : el("p", { text: "no Pareto points" })));
    }
    colorBy.addEventListener("change", draw);
    Object.values(filters).forEach((s) => s.addEventListener("change", draw));
    return draw().then(() => {
      if (!plot.on) return; // fewer than two objectives: a line of text, no plot to click
      plot.on("plotly_click", (ev) => {
        const p = ev.points && ev.points[0];
        if (p && p.customdata) window.location.hash = `job-${p.customdata}`;
      });
    });
  }

  // ------------------------------------------------------------------ start
  async function loadPlotly() {
    if (window.Plotly) return;
    const b64 = document.getElementById("plotly-gz").textContent.trim();
    const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
    const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
    const code = await new Response(stream).text();
    const script = document.createElement("script");
    script.textContent = code;
    document.head.append(script);
  }

  async function main() {
    const root = document.getElementById("app");
    const status = document.getElementById("loading");
    try {
      await loadPlotly();
    } catch (err) {
      status.textContent = `This browser cannot unpack the embedded plotting library (${err}); open the report in a current Firefox, Chrome or Safari.`;
      return;
    }
    status.remove();
    const notes = (DATA.notes || []).filter((n) => n);
    if (notes.length) root.append(el("ul", { class: "notes" }, ...notes.map((n) => el("li", { text: n }))));
    const pages = { solve: solvePage, simulate: simulatePage, store: storePage };
    await pages[DATA.kind](root);
    document.body.setAttribute("data-ready", "1");
  }
  main();
})();
