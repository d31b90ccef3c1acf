/* The dse report page: reads the embedded data, loads the embedded plotting library, draws the page.
   Everything it needs is in the file: no network. */
"use strict";
(function () {
  const DATA = JSON.parse(document.getElementById("report-data").textContent);
  const PALETTE = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
    "#bcbd22", "#17becf"];
  const SOLVERS = {
    cpsat: { color: "#1f77b4", symbol: "circle", label: "CP-SAT (exact)" },
    exhaustive: { color: "#2ca02c", symbol: "square", label: "exhaustive" },
    nsga2: { color: "#ff7f0e", symbol: "x", label: "NSGA-II" },
  };
  const BASELINE_SYMBOLS = ["triangle-up", "triangle-down", "triangle-left", "triangle-right", "pentagon",
    "star", "diamond", "hexagon"];
  const VIRIDIS = ["#440154", "#482878", "#3e4989", "#31688e", "#26828e", "#1f9e89", "#35b779", "#6ece58",
    "#b5de2b", "#fde725"];
  const CONFIG = { displaylogo: false, responsive: true };

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
    const head = el("tr", {}, ...columns.map((c) => el("th", { text: c })));
    const body = rows.map((r) => el("tr", {}, ...r.map((v) => (v instanceof Node ? el("td", {}, v) : el("td", { text: fmt(v) })))));
    return el("table", { class: cls || "data" }, el("thead", {}, head), el("tbody", {}, ...body));
  }
  function short(text, n = 90) {
    return text.length > n ? `${text.slice(0, n)} ...` : text;
  }
  // a mapping description for a hover box: one line per device, each cut to a readable length
  function wrapMapping(text) {
    const parts = String(text).split(" | ");
    return parts.slice(0, 12).map((p) => `  ${short(p)}`).concat(parts.length > 12 ? ["  ..."] : []);
  }
  function objectiveLabel(o) {
    const unit = o.unit ? ` [${o.unit}]` : "";
    const better = o.sense === "max" ? ", higher is better" : ", lower is better";
    return `${o.name || o.column}${unit}${better}`;
  }
  function columnLabel(column, sense) {
    const parts = String(column).split("_");
    const unit = parts.slice(1).join("_").replace(/_per_/g, "/").replace(/_/g, " ").replace(/\bmj\b/g, "mJ");
    return `${parts[0]}${unit ? ` [${unit}]` : ""}${sense === "max" ? ", higher is better" : ", lower is better"}`;
  }
  function section(title, ...children) {
    return el("section", {}, el("h2", { text: title }), ...children);
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
          color: byModel ? PALETTE[keys.indexOf(g) % 10] : mine.map((s) => PALETTE[keys.indexOf(colorKey(s)) % 10]),
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
      legend: { orientation: "h", y: -0.25 }, shapes: options.shapes || [],
    };
    return Plotly.newPlot(div, traces, layout, CONFIG);
  }

  function breakdownPlot(div, rows, unit) {
    const names = rows.map((r) => r.resource);
    const traces = [
      { type: "bar", name: `busy [${unit}]`, x: names, y: rows.map((r) => r.busy), marker: { color: "#4c78a8" } },
    ];
    if (rows.some((r) => r.energy !== null)) {
      traces.push({
        type: "bar", name: `energy [${rows.find((r) => r.energy_unit).energy_unit}]`, x: names,
        y: rows.map((r) => r.energy), xaxis: "x2", yaxis: "y2", marker: { color: "#f58518" },
      });
    }
    const layout = {
      height: 300, margin: { l: 60, r: 20, t: 30, b: 90 }, grid: { rows: 1, columns: traces.length, pattern: "independent" },
      yaxis: { title: { text: `busy [${unit}]` } }, yaxis2: { title: { text: "energy" } },
      showlegend: false, title: { text: "time and dynamic energy per device and link", font: { size: 13 } },
    };
    return Plotly.newPlot(div, traces, layout, CONFIG);
  }

  // ------------------------------------------------------------------ solve reports
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
    const yOf = (p, row) => (single ? row : p.objectives[ycol]);
    const plot = el("div", { id: "fronts", class: "plot" });
    const captions = el("div", { id: "certificates" });
    const detail = el("div", { id: "detail" }, el("p", { class: "hint", text: "Click a point on the plot to see its mapping, its time and energy per device and link, and its schedule." }));
    const summary = table(["solver", "status", "points", "proven", "wall time [s]", "certificate gap"],
      DATA.fronts.map((f) => [f.solver, f.status + (f.complete ? " (complete)" : ""), f.points.length,
        f.points.filter((p) => p.proven).length, f.stats ? f.stats.wall_s : null,
        f.certificate ? `${fmt(100 * f.certificate.gap)} %` : "none"]));
    root.append(section("Pareto fronts", plot, captions, summary), section("Selected point", detail));

    const traces = [];
    const all = DATA.fronts.flatMap((f) => f.points).concat(DATA.baselines);
    const range = (col) => {
      const vs = all.map((p) => p.objectives[col]).filter((v) => v !== null && v !== undefined);
      const lo = Math.min(...vs);
      const hi = Math.max(...vs);
      const pad = (hi - lo || Math.abs(hi) || 1) * 0.15;
      return [lo - pad, hi + pad];
    };
    const xr = range(xcol);
    const yr = single ? [0, 1] : range(ycol);
    const clip = (v, r) => Math.min(Math.max(v, r[0]), r[1]);
    // certificate regions first (under everything)
    DATA.fronts.forEach((f) => {
      if (!f.certificate) return;
      const c = f.certificate;
      const reached = c.hypervolume !== undefined
        ? `hypervolume ${fmt(c.hypervolume)} of at most ${fmt(c.hypervolume_bound)}`
        : `value ${fmt(c.value)}, bound ${fmt(c.bound)}`;
      captions.append(el("p", {
        class: "certificate",
        text: `${f.solver} certificate: ${reached}, gap ${fmt(100 * c.gap)} %` +
          (c.region && c.region.length && !single ? " (shaded: where undiscovered Pareto points can still lie)" : ""),
      }));
      if (single) return;
      (c.region || []).forEach((box, k) => {
        const [lo, hi] = box;
        const x0 = clip(Math.min(lo[xi], hi[xi]), xr);
        const x1 = clip(Math.max(lo[xi], hi[xi]), xr);
        const y0 = clip(Math.min(lo[yi], hi[yi]), yr);
        const y1 = clip(Math.max(lo[yi], hi[yi]), yr);
        traces.push({
          type: "scatter", mode: "lines", x: [x0, x1, x1, x0, x0], y: [y0, y0, y1, y1, y0], fill: "toself",
          fillcolor: "rgba(214,39,40,0.12)", line: { color: "rgba(214,39,40,0.6)", dash: "dot", width: 1 },
          name: `certificate region (${f.solver}, gap ${fmt(100 * c.gap)} %)`, legendgroup: `cert-${f.solver}`,
          showlegend: k === 0, hoverinfo: "skip",
        });
      });
    });
    // baselines below the fronts, so they never hide a front point; equal ones each smaller than the last
    const stacked = new Map();
    DATA.baselines.forEach((b, k) => {
      const where = `${b.objectives[xcol]} ${b.objectives[ycol]}`;
      const n = stacked.get(where) || 0;
      stacked.set(where, n + 1);
      traces.push({
        type: "scatter", mode: "markers", name: `baseline: ${b.name}${b.feasible ? "" : " (infeasible)"}`,
        x: [b.objectives[xcol]], y: [yOf(b, "baselines")],
        marker: { symbol: BASELINE_SYMBOLS[k % BASELINE_SYMBOLS.length] + (b.feasible ? "" : "-open"), size: 14 * 0.7 ** n,
          color: PALETTE[(k + 3) % 10], line: { color: "#222", width: 0.5 } },
        hovertext: [`baseline ${b.name}<br>` + Object.entries(b.objectives).map(([c, v]) => `${c} = ${fmt(v)}`).join("<br>")],
        hoverinfo: "text",
      });
    });
    // exact fronts drawn first with large markers, approximate ones above them with small markers
    const ordered = DATA.fronts.map((f, k) => [f, k]).sort((a, b) => Number(b[0].exact) - Number(a[0].exact));
    for (const [f, k] of ordered) {
      const style = SOLVERS[f.solver] || { color: PALETTE[(k + 4) % 10], symbol: "diamond", label: f.solver };
      const pts = f.points.slice().sort((a, b) => a.objectives[xcol] - b.objectives[xcol]);
      const band = (col) => {
        if (!pts.length || !pts.every((p) => p.bands && p.bands[col])) return undefined;
        return { type: "data", symmetric: false, array: pts.map((p) => p.bands[col][1] - p.objectives[col]),
          arrayminus: pts.map((p) => p.objectives[col] - p.bands[col][0]), color: style.color, thickness: 1 };
      };
      const detailOf = (p) => DATA.details[p.key];
      traces.push({
        type: "scatter", mode: "lines+markers", name: `${style.label}: ${pts.length} points`,
        x: pts.map((p) => p.objectives[xcol]), y: pts.map((p) => yOf(p, style.label)),
        customdata: pts.map((p) => p.key), line: { color: style.color, width: 1, shape: "linear" },
        marker: {
          symbol: pts.map((p) => (p.proven ? style.symbol : `${style.symbol}-open`)), color: style.color,
          size: f.exact ? 13 : 8, line: { color: style.color, width: f.exact ? 1 : 2 },
        },
        error_x: band(xcol), error_y: single ? undefined : band(ycol),
        hovertext: pts.map((p) => [`${f.solver}${p.proven ? " (proven)" : ""}${p.feasible ? "" : " (infeasible)"}`]
          .concat(Object.entries(p.objectives).map(([c, v]) => `${c} = ${fmt(v)}`))
          .concat(Object.entries(p.metrics || {}).map(([c, v]) => `${c} = ${fmt(v)}`))
          .concat(detailOf(p) ? ["mapping:"].concat(wrapMapping(detailOf(p).describe)) : [`genome: ${short(p.key)}`])
          .join("<br>")),
        hoverinfo: "text", meta: f.solver,
      });
    }
    const layout = {
      height: 520, margin: { l: 80, r: 20, t: 40, b: 60 }, hovermode: "closest",
      title: { text: DATA.title, font: { size: 15 } },
      xaxis: { title: { text: objectiveLabel(objs[xi]) } },
      yaxis: single ? { type: "category", automargin: true } : { title: { text: objectiveLabel(objs[yi]) } },
      legend: { orientation: "v", x: 1.02, y: 1 },
    };
    return Plotly.newPlot(plot, traces, layout, CONFIG).then(() => {
      plot.on("plotly_click", (ev) => {
        const p = ev.points && ev.points[0];
        if (!p || p.customdata === undefined) return;
        const front = DATA.fronts.find((f) => f.solver === p.data.meta);
        const point = front && front.points.find((q) => q.key === p.customdata);
        showDetail(detail, p.customdata, front, point);
      });
    });
  }

  function showDetail(div, key, front, point) {
    div.replaceChildren();
    const d = DATA.details[key];
    div.append(el("h3", { text: `${front ? front.solver : ""} point` }));
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
      div.append(table(["resource", "kind", `busy [${d.unit}]`, "energy", "energy unit", "spans"],
        d.breakdown.map((r) => [r.resource, r.kind, r.busy, r.energy, r.energy_unit, r.spans]), "data narrow"));
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
  function simulatePage(root) {
    root.append(section("Summary", table(DATA.summary.columns, DATA.summary.rows)));
    const tl = DATA.timeline;
    const drawn = [];
    if (!tl) return Promise.resolve();
    const shapes = [];
    const annotations = [];
    (DATA.phases || []).forEach((ph, k) => {
      shapes.push({ type: "rect", xref: "x", yref: "paper", x0: ph.start, x1: ph.end, y0: 0, y1: 1, layer: "below",
        fillcolor: k % 2 ? "rgba(120,120,120,0.10)" : "rgba(31,119,180,0.08)", line: { width: 0 } });
      annotations.push({ x: (ph.start + ph.end) / 2, y: 1.02, xref: "x", yref: "paper", text: ph.name,
        showarrow: false, font: { size: 10 } });
    });
    if (DATA.sim === "stream") {
      const over = el("div", { class: "plot", id: "stream" });
      root.append(section("Runs over time (input phases shaded)", over));
      const policies = [...new Set(tl.spans.map((s) => s.group))];
      const traces = [];
      policies.forEach((name, k) => {
        const runs = tl.spans.filter((s) => s.group === name && s.name !== "switch" && s.args.items > 0);
        const dash = ["solid", "dash", "dot", "dashdot", "longdash"][k % 5];
        const color = PALETTE[k % 10];
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
        height: 560, margin: { l: 80, r: 20, t: 40, b: 50 }, shapes, annotations,
        xaxis: { title: { text: "simulated time [s]" }, anchor: "y2" },
        yaxis: { title: { text: "throughput [items/s]" }, domain: [0.55, 0.95] },
        yaxis2: { title: { text: "energy [J/item]" }, domain: [0.0, 0.45] },
        yaxis3: { domain: [0.95, 1.0], range: [0.8, 1.05], visible: false },
        legend: { orientation: "h", y: -0.15 },
      }, CONFIG));
    }
    const gantt = el("div", { class: "plot", id: "timeline" });
    root.append(section("Timeline", gantt));
    drawn.push(timelinePlot(gantt, tl, { grouped: true, shapes: DATA.sim === "stream" ? shapes : [] }));
    return Promise.all(drawn);
  }

  // ------------------------------------------------------------------ store reports
  function storePage(root) {
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
      const numeric = DATA.swept_kinds[field] === "number" && values.length > PALETTE.length;
      if (!numeric) {
        const sorted = values.slice().sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
        return { discrete: true, of: (v) => PALETTE[sorted.indexOf(v) % 10], values: sorted };
      }
      const lo = Math.min(...values);
      const hi = Math.max(...values);
      return { discrete: false, lo, hi, of: (v) => VIRIDIS[Math.round(((v - lo) / ((hi - lo) || 1)) * 9)] };
    }
    function draw() {
      const jobs = selected();
      let done = Promise.resolve();
      jobsDiv.replaceChildren(table(shown, jobs.map((r) => shown.map((c) => (c === "job"
        ? el("a", { href: `#job-${r.job}`, text: String(r.job).slice(0, 12) }) : r[c])))));
      if (objs.length < 2) {
        plot.replaceChildren(el("p", { text: "The store's fronts have fewer than two objectives." }));
        return Promise.resolve();
      }
      const field = colorBy.value;
      const colors = colorsFor(field, jobs);
      const seen = new Map();
      const traces = [];
      // fronts that coincide stay visible: the first values drawn first with large markers, later ones
      // smaller on top; jobs sharing a value differ by marker
      const rank = (r) => (colors.discrete ? colors.values.indexOf(r[field]) : 0);
      const ordered = jobs.slice().sort((a, b) => rank(a) - rank(b));
      const nValues = colors.discrete ? colors.values.length : 1;
      const symbols = ["circle", "diamond", "square", "triangle-up", "cross", "star"];
      for (const r of ordered) {
        const pts = (DATA.points[r.job] || []).filter((p) => p.feasible)
          .sort((a, b) => a.objectives[objs[0].column] - b.objectives[objs[0].column]);
        if (!pts.length) continue;
        const value = r[field];
        const n = seen.get(String(value)) || 0;
        const first = n === 0;
        seen.set(String(value), n + 1);
        const size = (colors.discrete ? 7 + 10 * (1 - rank(r) / Math.max(nValues - 1, 1)) : 9) * 0.75 ** n;
        const symbol = `${symbols[n % symbols.length]}-open`; // hollow: concentric rings where fronts meet
        traces.push({
          type: "scatter", mode: "lines+markers", name: colors.discrete ? `${field} = ${fmt(value)}` : String(r.job).slice(0, 12),
          legendgroup: String(value), showlegend: colors.discrete && first,
          x: pts.map((p) => p.objectives[objs[0].column]), y: pts.map((p) => p.objectives[objs[1].column]),
          line: { color: colors.of(value), width: 1.5 }, marker: { size, color: colors.of(value),
            symbol, line: { width: 2, color: colors.of(value) } },
          customdata: pts.map(() => r.job), meta: r.job,
          hovertext: pts.map((p) => `job ${String(r.job).slice(0, 12)}, ${field} = ${fmt(value)}<br>${p.solver}` +
            Object.entries(p.objectives).map(([c, v]) => `<br>${c} = ${fmt(v)}`).join("")),
          hoverinfo: "text",
        });
      }
      if (!colors.discrete) {
        traces.push({ type: "scatter", mode: "markers", x: [null], y: [null], showlegend: false, hoverinfo: "skip",
          marker: { color: [colors.lo], cmin: colors.lo, cmax: colors.hi, colorscale: "Viridis", showscale: true,
            colorbar: { title: { text: field } } } });
      }
      done = Plotly.react(plot, traces, {
        height: 520, margin: { l: 80, r: 20, t: 40, b: 60 }, hovermode: "closest",
        title: { text: `Pareto fronts of ${jobs.length} jobs, coloured by ${field}`, font: { size: 14 } },
        xaxis: { title: { text: columnLabel(objs[0].column, objs[0].sense) } },
        yaxis: { title: { text: columnLabel(objs[1].column, objs[1].sense) } },
        legend: { title: { text: field } },
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
    return draw().then(() => plot.on("plotly_click", (ev) => {
      const p = ev.points && ev.points[0];
      if (p && p.customdata) window.location.hash = `job-${p.customdata}`;
    }));
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
