/* The attention explorer: draws every `.attention-explorer` on the page.
 *
 * A chapter's cell (transformer.explorer.AttentionExplorer) writes the data,
 * rounded, as JSON in a <script type="application/json"> inside the root.
 * This script adds the controls (native <select>s with labels) and draws one
 * table per head: a row per query, a column per key, each cell coloured by
 * its value. Hovering over a query token, or focusing it (Tab, then the
 * arrow keys), highlights its row and prints the row's numbers.
 * No library, no network request: it works from file:// as well.
 */
(function () {
  "use strict";

  // viridis, the colour map of the book's figures, at 10 stops
  const VIRIDIS = [
    [68, 1, 84], [72, 40, 120], [62, 74, 137], [49, 104, 142], [38, 130, 142],
    [31, 158, 137], [53, 183, 121], [110, 206, 88], [181, 222, 43], [253, 231, 37],
  ];
  const MINUS = "\u2212";
  let explorers = 0;

  function colour(t) {
    const x = Math.min(1, Math.max(0, t)) * (VIRIDIS.length - 1);
    const i = Math.min(VIRIDIS.length - 2, Math.floor(x));
    const f = x - i;
    const c = VIRIDIS[i].map((v, k) => Math.round(v + f * (VIRIDIS[i + 1][k] - v)));
    return `rgb(${c[0]}, ${c[1]}, ${c[2]})`;
  }

  function format(v) {
    if (v === null) return MINUS + "\u221e";
    const text = v.toFixed(3);
    return v < 0 ? MINUS + text.slice(1) : text;
  }

  function el(tag, attributes, text) {
    const node = document.createElement(tag);
    for (const [name, value] of Object.entries(attributes || {})) node.setAttribute(name, value);
    if (text !== undefined) node.textContent = text;
    return node;
  }

  // A choice of one is no control: it is shown as text, and `value` stays "0".
  function fixed(form, label, text) {
    const wrap = el("div", { class: "ae-control ae-fixed" });
    wrap.append(el("span", { class: "ae-label" }, label), el("span", {}, text));
    form.append(wrap);
    return { value: "0", addEventListener() {} };
  }

  function select(form, id, label, options) {
    const wrap = el("div", { class: "ae-control" });
    wrap.append(el("label", { for: id }, label));
    const box = el("select", { id: id });
    wrap.append(box);
    form.append(wrap);
    setOptions(box, options);
    return box;
  }

  function setOptions(box, options) {
    const keep = box.value;
    box.replaceChildren(...options.map(([value, text]) => el("option", { value: value }, text)));
    if (options.some(([value]) => value === keep)) box.value = keep;
  }

  function init(root) {
    const source = root.querySelector('script[type="application/json"]');
    if (!source || root.dataset.ready) return;
    const data = JSON.parse(source.textContent);
    root.dataset.ready = "true";
    const id = `attention-explorer-${++explorers}`;

    const form = el("form", { class: "ae-controls", "aria-label": `Attention explorer: ${data.title}` });
    form.addEventListener("submit", (event) => event.preventDefault());
    const example = data.examples.length > 1
      ? select(form, `${id}-example`, "Example", data.examples.map((e, i) => [String(i), e.label]))
      : fixed(form, "Example", data.examples[0].label);
    const layer = data.examples.some((e) => e.layers.length > 1)
      ? select(form, `${id}-layer`, "Layer", [])
      : fixed(form, "Layer", data.examples[0].layers[0].name);
    const head = select(form, `${id}-head`, "Head", []);
    const stage = select(form, `${id}-stage`, "Stage",
      Object.entries(data.stages));
    stage.value = "softmax";
    const legend = el("p", { class: "ae-legend" });
    const picture = el("div", { class: "ae-picture" });
    const readout = el("p", { class: "ae-readout", "aria-live": "polite" },
      "Hover over a query token, or focus it, to read its row.");
    root.append(form, legend, picture, readout);

    let active = 0; // the query row in focus
    let view = null; // what is drawn: {ex, matrices, heads, low, high}

    function update() {
      const ex = data.examples[Number(example.value)];
      if (layer.options) setOptions(layer, ex.layers.map((l, i) => [String(i), `${i}: ${l.name}`]));
      const h = ex.layers[Number(layer.value) || 0].stages.softmax.length;
      setOptions(head, [["all", "all heads"]].concat(
        Array.from({ length: h }, (_, i) => [String(i), `head ${i}`])));
      draw();
    }

    function draw() {
      const ex = data.examples[Number(example.value)];
      const all = ex.layers[Number(layer.value)].stages[stage.value];
      const heads = head.value === "all" ? all.map((_, i) => i) : [Number(head.value)];
      let low = Infinity, high = -Infinity;
      if (stage.value === "softmax") { low = 0; high = 1; }
      else for (const i of heads) for (const row of all[i]) for (const v of row) {
        if (v !== null) { low = Math.min(low, v); high = Math.max(high, v); }
      }
      view = { ex, all, heads, low, high };
      active = Math.min(active, ex.queries.length - 1);
      legend.replaceChildren(
        el("span", {}, `${data.stages[stage.value]}. Colour scale from ${format(low)} `),
        el("span", { class: "ae-scale", "aria-hidden": "true" }),
        el("span", {}, ` to ${format(high)}`),
        stage.value === "masked" ? el("span", {}, `; hatched cells are ${MINUS}\u221e (blocked).`) : "");
      picture.replaceChildren(...heads.map((i, k) => panel(ex, all[i], i, k)));
      picture.classList.toggle("ae-single", heads.length === 1);
    }

    function panel(ex, matrix, h, k) {
      const figure = el("figure", { class: "ae-panel" });
      figure.append(el("figcaption", {}, `head ${h}`));
      const table = el("table", { class: "ae-matrix" });
      const top = el("tr");
      top.append(el("td", { class: "ae-corner" }));
      ex.keys.forEach((key) => top.append(el("th", { scope: "col" }, key)));
      table.append(el("thead"));
      table.tHead.append(top);
      const body = el("tbody");
      const span = view.high - view.low || 1;
      matrix.forEach((row, q) => {
        const tr = el("tr", { "data-query": String(q) });
        const name = el("th", { scope: "row", tabindex: k === 0 && q === active ? "0" : "-1" },
          ex.queries[q]);
        name.addEventListener("focus", () => highlight(q));
        name.addEventListener("keydown", (event) => move(event, q, k));
        tr.addEventListener("mouseenter", () => highlight(q));
        tr.append(name);
        row.forEach((v, s) => {
          const td = el("td", { title: `${ex.queries[q]} \u2192 ${ex.keys[s]}: ${format(v)}` });
          if (v === null) td.className = "ae-blocked";
          else td.style.backgroundColor = colour((v - view.low) / span);
          td.append(el("span", { class: "ae-sr" }, format(v)));
          tr.append(td);
        });
        body.append(tr);
      });
      table.append(body);
      figure.append(table);
      return figure;
    }

    function highlight(q) {
      active = q;
      for (const tr of picture.querySelectorAll("tr[data-query]"))
        tr.classList.toggle("ae-active", tr.dataset.query === String(q));
      const { ex, all, heads } = view;
      readout.replaceChildren(
        el("strong", {}, `Query ${q} (${ex.queries[q]}), ${stage.options[stage.selectedIndex].text}:`),
        ...heads.map((i) => el("span", { class: "ae-row" },
          `head ${i}: ` + all[i][q].map((v, s) => `${ex.keys[s]} ${format(v)}`).join(", "))));
    }

    function move(event, q, k) {
      const steps = { ArrowUp: [-1, 0], ArrowDown: [1, 0], ArrowLeft: [0, -1], ArrowRight: [0, 1],
        Home: [-Infinity, 0], End: [Infinity, 0] };
      const step = steps[event.key];
      if (!step) return;
      event.preventDefault();
      const panels = picture.querySelectorAll("table");
      const table = panels[Math.min(panels.length - 1, Math.max(0, k + step[1]))];
      const rows = table.tBodies[0].rows;
      const next = Math.min(rows.length - 1, Math.max(0, q + step[0]));
      for (const th of picture.querySelectorAll("th[scope=row]")) th.tabIndex = -1;
      const target = rows[next].cells[0];
      target.tabIndex = 0;
      target.focus();
    }

    example.addEventListener("change", update);
    layer.addEventListener("change", update);
    head.addEventListener("change", draw);
    stage.addEventListener("change", draw);
    update();
  }

  function initAll() {
    document.querySelectorAll(".attention-explorer").forEach(init);
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", initAll);
  else initAll();
})();
