// tau's session viewer: shows one branch of the exported session at a time.
// Every node on the page was rendered and escaped at export time; this script only shows, hides
// and scrolls those nodes, and never turns session text into HTML.
(function () {
  "use strict";
  document.documentElement.classList.remove("no-js");

  const tree = document.getElementById("tree");
  const entries = document.getElementById("entries");
  const lines = new Map();
  for (const line of tree.children) lines.set(line.dataset.id, line);

  let shown = branchTo(entries.dataset.leaf);
  let selected = null;

  function entryNode(id) {
    return document.getElementById("e-" + id);
  }

  // Root-first ids from the root to `leafId`, following each line's parent.
  function branchTo(leafId) {
    const ids = [];
    const seen = new Set();
    for (let id = leafId; id && lines.has(id) && !seen.has(id); id = lines.get(id).dataset.p) {
      seen.add(id);
      ids.push(id);
    }
    return ids.reverse();
  }

  function showBranch(leafId) {
    const next = branchTo(leafId);
    const keep = new Set(next);
    for (const id of shown) {
      if (keep.has(id)) continue;
      const node = entryNode(id);
      if (node) node.hidden = true;
      lines.get(id).classList.remove("on-path");
    }
    for (const id of next) {
      const node = entryNode(id);
      if (node) node.hidden = false;
      lines.get(id).classList.add("on-path");
    }
    shown = next;
  }

  // Show the entry: an entry of the branch on screen keeps that branch, any other shows the branch
  // through it to its newest leaf.
  function select(id, scroll) {
    const line = lines.get(id);
    if (!line) return false;
    if (!shown.includes(id)) showBranch(line.dataset.l || id);
    if (selected !== null) {
      lines.get(selected).classList.remove("selected");
      const previous = entryNode(selected);
      if (previous) previous.classList.remove("selected");
    }
    selected = id;
    line.classList.add("selected");
    const node = entryNode(id);
    if (node) {
      node.classList.add("selected");
      if (scroll) node.scrollIntoView({ block: "start" });
    }
    line.scrollIntoView({ block: "nearest" });
    return true;
  }

  function selectFromHash() {
    let hash = location.hash;
    try {
      hash = decodeURIComponent(hash);
    } catch (error) {
      return; // not a hash this page wrote
    }
    if (hash.startsWith("#e-")) select(hash.slice(3), true);
  }

  document.addEventListener("click", (event) => {
    const link = event.target.closest("a[href^='#e-']");
    if (!link) return;
    const id = link.getAttribute("href").slice(3);
    if (!select(id, true)) return;
    event.preventDefault();
    history.replaceState(null, "", "#e-" + encodeURIComponent(id));
  });
  window.addEventListener("hashchange", selectFromHash);

  function setExpanded(button, expanded) {
    if (!button.dataset.label) button.dataset.label = button.textContent;
    button.previousElementSibling.classList.toggle("expanded", expanded);
    button.textContent = expanded ? "Show less" : button.dataset.label;
  }

  entries.addEventListener("click", (event) => {
    const button = event.target.closest("button.expand");
    if (button) setExpanded(button, !button.previousElementSibling.classList.contains("expanded"));
  });

  function openAll(open) {
    for (const details of entries.querySelectorAll("details")) details.open = open;
    for (const button of entries.querySelectorAll("button.expand")) setExpanded(button, open);
  }
  document.getElementById("expand-all").addEventListener("click", () => openAll(true));
  document.getElementById("collapse-all").addEventListener("click", () => openAll(false));

  document.getElementById("tree-filter").addEventListener("input", (event) => {
    const query = event.target.value.trim().toLowerCase();
    for (const line of lines.values()) {
      line.classList.toggle("filtered-out", query !== "" && !line.textContent.toLowerCase().includes(query));
    }
  });
  document.getElementById("tree-all").addEventListener("change", (event) => {
    tree.classList.toggle("show-minor", event.target.checked);
  });

  // The embedded session: base64 of gzipped JSON {header, entries, leafId, systemPrompt?, tools?}.
  async function sessionData() {
    const binary = atob(document.getElementById("session-data").textContent.trim());
    const bytes = new Uint8Array(binary.length);
    for (let i = 0; i < binary.length; i++) bytes[i] = binary.charCodeAt(i);
    const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
    const data = JSON.parse(await new Response(stream).text());
    restoreImages(data.entries);
    return data;
  }

  // Images shown on the page are stored once, in their <img>; the data holds "tau-image:<key>".
  function restoreImages(value) {
    if (Array.isArray(value)) {
      value.forEach(restoreImages);
    } else if (value !== null && typeof value === "object") {
      if (value.type === "image" && typeof value.data === "string" && value.data.startsWith("tau-image:")) {
        const key = value.data.slice("tau-image:".length);
        const image = document.querySelector(`img[data-image-key="${CSS.escape(key)}"]`);
        if (image !== null) value.data = image.getAttribute("src").split(",", 2)[1];
      } else {
        Object.values(value).forEach(restoreImages);
      }
    }
  }

  async function sessionJsonl() {
    const data = await sessionData();
    return [data.header, ...data.entries].map((line) => JSON.stringify(line) + "\n").join("");
  }

  const download = document.getElementById("download");
  download.addEventListener("click", async () => {
    const url = URL.createObjectURL(new Blob([await sessionJsonl()], { type: "application/x-ndjson" }));
    const link = document.createElement("a");
    link.href = url;
    link.download = download.dataset.name || "session.jsonl";
    document.body.append(link);
    link.click();
    link.remove();
    setTimeout(() => URL.revokeObjectURL(url), 60000);
  });

  window.tauSession = Object.freeze({ data: sessionData, jsonl: sessionJsonl, select: select });
  selectFromHash();
})();
