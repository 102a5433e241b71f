/* ragmeter charts: draws every [data-chart] element from the page's JSON chart specs with
   uPlot (vendored). Used by the dashboard (served from /static) and inlined in the report.
   Data arrives in the JSON script element #ragmeter-charts; it is parsed, never
   evaluated, and every label is drawn as text (canvas fillText or textContent). */
(function () {
  "use strict";
  var PALETTE = ["#2563eb", "#dc2626", "#059669", "#d97706", "#7c3aed", "#0891b2",
                 "#db2777", "#4b5563", "#65a30d", "#9333ea"];

  function color(i) { return PALETTE[((i || 0) % PALETTE.length + PALETTE.length) % PALETTE.length]; }

  function fmt(v) {
    if (v == null || isNaN(v)) return "–";
    var a = Math.abs(v);
    if (a !== 0 && (a < 0.001 || a >= 100000)) return v.toExponential(2);
    return (Math.round(v * 10000) / 10000).toString();
  }

  function short(s, n) { s = String(s); return s.length > n ? s.slice(0, n - 1) + "…" : s; }

  function barsOptions(spec, width, height) {
    var cats = spec.categories || [];
    var n = cats.length, m = spec.series.length;
    var group = 0.8, w = group / Math.max(m, 1);
    // category labels: level when the longest fits its slot, else rotated 40° (at most 24
    // characters; the legend shows the full name on hover and the table next to the chart
    // has them all), one every `step` categories so that they never overlap
    var CHAR = 7, LINE = 16, ROT = 40, MAXC = 24;
    var labels = cats.map(function (c) { return short(c, MAXC); });
    var longest = labels.reduce(function (a, c) { return Math.max(a, c.length); }, 0) * CHAR;
    var slot = Math.max(1, (width - 70) / Math.max(n, 1));
    var rotate = longest + 8 > slot;
    var step = Math.max(1, Math.ceil((rotate ? LINE / Math.sin(ROT * Math.PI / 180) : longest + 8) / slot));
    var xSize = rotate ? Math.ceil(longest * Math.sin(ROT * Math.PI / 180) + LINE + 12) : 30;
    var series = [{ label: spec.x_label || spec.category_label || "", value: function (u, v) {
      return v == null ? "" : (cats[Math.round(v)] != null ? cats[Math.round(v)] : ""); } }];
    spec.series.forEach(function (s, j) {
      var c = color(s.color != null ? s.color : j);
      series.push({
        label: s.label, stroke: c, fill: c + "cc", width: 0,
        value: function (u, v) { return fmt(v); },
        paths: uPlot.paths.bars({
          disp: {
            x0: { unit: 1, values: function (u) {
              return u.data[0].map(function (x) { return x - group / 2 + j * w; }); } },
            size: { unit: 1, values: function (u) { return u.data[0].map(function () { return w; }); } }
          }
        }),
        points: { show: false }
      });
    });
    var yr = spec.y_range || [];
    return {
      width: width, height: height + xSize - 30, title: spec.title,  // room for rotated labels
      legend: { show: true },
      cursor: { points: { show: false } },
      scales: {
        // at least 3 slots wide, so one or two categories do not become wall-to-wall bars
        x: { time: false, range: function () {
          var pad = Math.max(0, (3 - n) / 2); return [-0.5 - pad, n - 0.5 + pad]; } },
        y: { range: function (u, lo, hi) {
          var a = yr[0] != null ? Math.min(yr[0], lo) : Math.min(0, lo);
          var b = yr[1] != null ? Math.max(yr[1], hi) : (hi > 0 ? hi * 1.1 : 1);
          return [a, b]; } }
      },
      axes: [
        { label: spec.x_label || "", splits: function () { return cats.map(function (_, i) { return i; }); },
          values: function (u, splits) { return splits.map(function (i) {
            return i % step === 0 ? labels[i] : ""; }); },
          rotate: rotate ? ROT : 0, size: xSize,
          grid: { show: false } },
        { label: spec.y_label || "", values: function (u, splits) { return splits.map(fmt); } }
      ],
      series: series
    };
  }

  function labelsPlugin(spec) {
    // draws a text label (e.g. the system version) next to each point
    return { hooks: { draw: [function (u) {
      var ctx = u.ctx; ctx.save();
      ctx.font = (10 * devicePixelRatio) + "px sans-serif";
      ctx.textBaseline = "bottom";
      spec.series.forEach(function (s, j) {
        if (!s.point_labels || !u.series[j + 1].show) return;
        ctx.fillStyle = color(s.color != null ? s.color : j);
        for (var i = 0; i < u.data[0].length; i++) {
          var y = u.data[j + 1][i], lab = s.point_labels[i];
          if (y == null || !lab) continue;
          var px = u.valToPos(u.data[0][i], "x", true), py = u.valToPos(y, "y", true);
          ctx.fillText(short(lab, 18), px + 4 * devicePixelRatio, py - 3 * devicePixelRatio);
        }
      });
      ctx.restore();
    }] } };
  }

  function linesOptions(spec, width, height) {
    var series = [{ label: spec.x_label || "x" }];
    if (spec.x_time) series[0].value = function (u, v) {
      return v == null ? "" : new Date(v * 1000).toISOString().slice(0, 16).replace("T", " "); };
    spec.series.forEach(function (s, j) {
      var c = color(s.color != null ? s.color : j);
      series.push({ label: s.label, stroke: c, width: 2, spanGaps: true,
        value: function (u, v) { return fmt(v); },
        points: { show: true, size: 6, fill: c } });
    });
    var xr = spec.x_range, yr = spec.y_range || [];
    return {
      width: width, height: height, title: spec.title,
      plugins: spec.series.some(function (s) { return s.point_labels; }) ? [labelsPlugin(spec)] : [],
      scales: {
        x: spec.x_time ? { time: true, range: function (u, lo, hi) {
          // one timestamp: uPlot widens [t, t] to [t, t + 86400 / ms] before asking us, which
          // for second timestamps is 1000 days with the point at the left edge; centre one day
          // either side of the point instead
          var xs = (u.data[0] || []).filter(function (v) { return v != null; });
          if (xs.length && Math.min.apply(null, xs) === Math.max.apply(null, xs)) {
            return [xs[0] - 86400, xs[0] + 86400];
          }
          // a margin so that the first and last labels stay inside the plot
          var pad = hi > lo ? (hi - lo) * 0.05 : 86400; return [lo - pad, hi + pad]; } }
          : { time: false, range: xr ? function () { return xr; } : undefined },
        y: { range: function (u, lo, hi) {
          var a = yr[0] != null ? Math.min(yr[0], lo) : lo, b = yr[1] != null ? Math.max(yr[1], hi) : hi;
          if (a === b) { a -= 0.5; b += 0.5; }
          return [a, b]; } }
      },
      axes: [
        { label: spec.x_label || "" },
        { label: spec.y_label || "", values: function (u, splits) { return splits.map(fmt); } }
      ],
      series: series
    };
  }

  function draw(el, spec) {
    var width = Math.max(280, Math.min(el.clientWidth || 640, 1100));
    var height = spec.height || 260;
    var data, opts;
    if (spec.kind === "bars") {
      data = [spec.categories.map(function (_, i) { return i; })];
      spec.series.forEach(function (s) { data.push(s.values); });
      opts = barsOptions(spec, width, height);
    } else {
      data = [spec.x];
      spec.series.forEach(function (s) { data.push(s.values); });
      opts = linesOptions(spec, width, height);
    }
    el.textContent = "";
    var plot = new uPlot(opts, data, el);
    el.uplot = plot;  // for tests and the browser console: the chart's scales and data
    el.setAttribute("data-drawn", "true");
    return plot;
  }

  function init() {
    var block = document.getElementById("ragmeter-charts");
    if (!block || typeof uPlot === "undefined") return;
    var specs = JSON.parse(block.textContent || "{}");
    var plots = [];
    document.querySelectorAll("[data-chart]").forEach(function (el) {
      var spec = specs[el.getAttribute("data-chart")];
      if (!spec) return;
      try { plots.push([el, draw(el, spec)]); }
      catch (e) { el.setAttribute("data-error", String(e)); }
    });
    var pending = null;
    window.addEventListener("resize", function () {
      clearTimeout(pending);
      pending = setTimeout(function () {
        plots.forEach(function (p) {
          var w = Math.max(280, Math.min(p[0].clientWidth || 640, 1100));
          p[1].setSize({ width: w, height: p[1].height });
        });
      }, 150);
    });
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init);
  else init();
})();
