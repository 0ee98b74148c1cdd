// Progressive enhancements; every page works without this file.
const siteScript = document.currentScript;

document.addEventListener("DOMContentLoaded", () => {
  for (const select of document.querySelectorAll("select[data-autosubmit]")) {
    select.addEventListener("change", () => select.form.submit());
  }
  setUpCopyButtons();
  setUpThemeToggle();
  setUpMenus();
  setUpShortcuts();
  setUpOpenedBeacons();
  setUpImageViewer();
  setUpLiveFilters();
  // A discussion htmx swapped in (on the paper page, after a post) has math too.
  document.addEventListener("htmx:afterSettle", () => {
    for (const body of document.querySelectorAll(".discussion-body")) typesetMath(body);
  });
  enhance(document);
});

// What a list's content needs, on the page and again on each part htmx swaps in.
function enhance(root) {
  setUpAbstracts(root);
  setUpFilterPanel(root);
  setUpViewSwitch(root);
  for (const field of root.querySelectorAll(".picker-field")) setUpPicker(field);
  typesetMath(root);
}

// Filters apply as they change: htmx fetches the list (the page itself, from which
// it takes the list) and puts its address in the history. Empty fields are left
// out here, and the server redirects an address with default values to its clean
// form, so the address shown is the one a link or bookmark would have.
let focusedId = "";
function setUpLiveFilters() {
  // A visitor's page does not load htmx (a reader's toggles need it at once): the
  // first change of a filter fetches it, then hands it that change. Loading it with
  // every list cost 125 ms of script evaluation under Lighthouse's mobile throttling.
  document.addEventListener("change", (event) => {
    const form = event.target.closest?.("form.filters");
    if (!form || window.htmx || !siteScript?.dataset.htmx) return;
    const script = document.createElement("script");
    script.src = siteScript.dataset.htmx;
    script.addEventListener("load", () => window.htmx.trigger(form, "change"));
    document.head.append(script);
  });
  // Likewise the search box's suggestions: the first letter typed fetches htmx.
  document.addEventListener("input", (event) => {
    const box = event.target;
    if (box.id !== "header-q" || window.htmx || !siteScript?.dataset.htmx) return;
    if (document.querySelector("script[data-for-suggestions]")) return;
    const script = document.createElement("script");
    script.src = siteScript.dataset.htmx;
    script.dataset.forSuggestions = "";
    script.addEventListener("load", () => window.htmx.trigger(box, "input"));
    document.head.append(script);
  });
  document.addEventListener("htmx:configRequest", (event) => {
    if (!event.detail.elt.matches?.("form.filters")) return;
    const parameters = event.detail.parameters;
    for (const name of [...new Set(parameters.keys())]) {
      const values = parameters.getAll(name).filter((value) => value.trim());
      parameters.delete(name);
      for (const value of values) parameters.append(name, value);
    }
  });
  document.addEventListener("htmx:beforeSwap", () => {
    focusedId = document.activeElement?.id || "";
  });
  for (const layout of document.querySelectorAll(".list-layout")) layout.dataset.enhanced = "";
  document.addEventListener("htmx:afterSettle", () => {
    const swapped = document.querySelector(".list-layout:not([data-enhanced])");
    if (!swapped) return;
    swapped.dataset.enhanced = "";
    enhance(swapped);
    if (focusedId) document.getElementById(focusedId)?.focus();
  });
}

// Cards or a compact list: the choice is kept in this browser and applied before
// the first paint (theme.js); the page is the same for both, so cached pages are too.
function setUpViewSwitch(root) {
  const html = document.documentElement;
  for (const group of root.querySelectorAll(".view-switch")) {
    const buttons = [...group.querySelectorAll("[data-view-choice]")];
    const show = () => {
      const current = html.dataset.view || "cards";
      for (const button of buttons) {
        button.setAttribute("aria-pressed", String(button.dataset.viewChoice === current));
      }
    };
    for (const button of buttons) {
      button.addEventListener("click", () => {
        const view = button.dataset.viewChoice;
        if (view === "compact") html.dataset.view = view;
        else delete html.dataset.view;
        try {
          localStorage.setItem("view", view);
        } catch (error) {
          // Not remembered, but applied to this page.
        }
        show();
      });
    }
    show();
  }
}

// Screenshots open larger in a dialog (Escape or Close shuts it, focus goes back).
function setUpImageViewer() {
  const viewer = document.getElementById("image-viewer");
  if (!viewer?.showModal) return;
  const image = viewer.querySelector("img");
  document.addEventListener("click", (event) => {
    const link = event.target.closest("a[data-enlarge]");
    if (!link || event.ctrlKey || event.metaKey || event.shiftKey) return;
    event.preventDefault();
    const shown = link.querySelector("img");
    image.src = link.href;
    image.alt = shown?.alt || "";
    viewer.showModal();
  });
  viewer.addEventListener("click", (event) => {
    if (event.target === viewer) viewer.close(); // a click on the backdrop
  });
}

function setUpCopyButtons() {
  for (const button of document.querySelectorAll("button[data-copy]")) {
    const source = document.querySelector(button.dataset.copy);
    if (!source || !navigator.clipboard) continue;
    const label = button.textContent;
    button.hidden = false;
    button.addEventListener("click", async () => {
      await navigator.clipboard.writeText(source.textContent);
      button.textContent = button.dataset.copiedLabel || label;
      setTimeout(() => (button.textContent = label), 1500);
    });
  }
}

// A long abstract is cut to a few lines; its switch stays only where it is really cut.
// Each is measured as it comes into view: measuring all at load would lay out the
// whole page at once.
function setUpAbstracts(root) {
  const hideSwitchIfWhole = (abstract) => {
    if (abstract.scrollHeight > abstract.clientHeight + 2) return;
    for (const control of abstract.closest(".paper-body").querySelectorAll(".abstract-toggle, .abstract-expand")) {
      control.hidden = true;
    }
  };
  const abstracts = root.querySelectorAll(".abstract.clamped");
  if (!("IntersectionObserver" in window)) return abstracts.forEach(hideSwitchIfWhole);
  const observer = new IntersectionObserver((entries) => {
    for (const entry of entries) {
      if (!entry.isIntersecting) continue;
      observer.unobserve(entry.target);
      hideSwitchIfWhole(entry.target);
    }
  });
  abstracts.forEach((abstract) => observer.observe(abstract));
}

// Light or dark: the reader's choice is kept in this browser; until then the system's.
function setUpThemeToggle() {
  const button = document.querySelector(".theme-toggle");
  if (!button) return;
  const root = document.documentElement;
  const systemDark = window.matchMedia("(prefers-color-scheme: dark)");
  const isDark = () => (root.dataset.theme ? root.dataset.theme === "dark" : systemDark.matches);
  const show = () => button.setAttribute("aria-pressed", String(isDark()));
  button.hidden = false;
  show();
  systemDark.addEventListener("change", show);
  button.addEventListener("click", () => {
    const theme = isDark() ? "light" : "dark";
    root.dataset.theme = theme;
    try {
      localStorage.setItem("theme", theme);
    } catch (error) {
      // Not remembered, but applied to this page.
    }
    show();
  });
}

// Menus (<details>) close on a click elsewhere, on Escape, and when another opens.
function setUpMenus() {
  const menus = [...document.querySelectorAll("details.menu")];
  if (!menus.length) return;
  document.addEventListener("click", (event) => {
    for (const menu of menus) if (menu.open && !menu.contains(event.target)) menu.open = false;
  });
  document.addEventListener("keydown", (event) => {
    if (event.key !== "Escape") return;
    for (const menu of menus) {
      if (menu.open) {
        menu.open = false;
        menu.querySelector("summary").focus();
      }
    }
  });
}

// On narrow screens the filters wait behind one button (the stylesheet hides them);
// once opened they stay open while filters apply.
let filtersOpen = false;
function setUpFilterPanel(root) {
  const button = root.querySelector(".filters-toggle");
  const panel = button && document.getElementById(button.getAttribute("aria-controls"));
  if (!panel) return;
  const setOpen = (open) => {
    filtersOpen = open;
    panel.classList.toggle("is-open", open);
    button.setAttribute("aria-expanded", String(open));
  };
  setOpen(filtersOpen || Boolean(panel.querySelector(".field-error, .form-errors")));
  button.addEventListener("click", () => {
    const open = !panel.classList.contains("is-open");
    setOpen(open);
    if (open) panel.querySelector("input, select")?.focus();
  });
}

// A multiple select becomes a chip picker: type to filter, click or Enter to add,
// × or Backspace to remove. The select stays in the form and is what is sent.
function setUpPicker(field) {
  const select = field.querySelector("select[multiple]");
  const label = field.querySelector("label");
  if (!select || !label) return;
  const options = [...select.options];
  const picker = document.createElement("div");
  picker.className = "picker";
  const chips = document.createElement("ul");
  chips.className = "picker-chips";
  const input = document.createElement("input");
  input.type = "text";
  input.id = `${select.id}-search`;
  input.placeholder = field.dataset.placeholder || "";
  input.autocomplete = "off";
  input.setAttribute("role", "combobox");
  input.setAttribute("aria-autocomplete", "list");
  input.setAttribute("aria-expanded", "false");
  const list = document.createElement("ul");
  list.id = `${select.id}-options`;
  list.className = "picker-options";
  list.setAttribute("role", "listbox");
  list.setAttribute("aria-label", label.textContent.trim());
  list.hidden = true;
  input.setAttribute("aria-controls", list.id);
  label.htmlFor = input.id;
  picker.append(chips, input, list);
  select.hidden = true;
  select.after(picker);

  let shown = [];
  let active = -1;

  const renderChips = () => {
    chips.replaceChildren(
      ...options
        .filter((option) => option.selected)
        .map((option) => {
          const chip = document.createElement("li");
          chip.className = "picker-chip";
          const name = document.createElement("span");
          name.textContent = option.text;
          const remove = document.createElement("button");
          remove.type = "button";
          remove.textContent = "×";
          remove.setAttribute("aria-label", `${field.dataset.removeLabel || "Remove"} ${option.text}`);
          remove.addEventListener("click", () => {
            option.selected = false;
            renderChips();
            input.focus();
            changed();
          });
          chip.append(name, remove);
          return chip;
        }),
    );
  };
  const close = () => {
    list.hidden = true;
    input.setAttribute("aria-expanded", "false");
    input.removeAttribute("aria-activedescendant");
    active = -1;
  };
  const highlight = (index) => {
    active = index;
    list.querySelectorAll("[role=option]").forEach((item, i) => {
      item.classList.toggle("is-active", i === index);
      item.setAttribute("aria-selected", String(i === index));
      if (i === index) {
        input.setAttribute("aria-activedescendant", item.id);
        item.scrollIntoView({ block: "nearest" });
      }
    });
  };
  // The select changed as a reader's choice would change it: live filters apply.
  const changed = () => select.dispatchEvent(new Event("change", { bubbles: true }));
  const choose = (option) => {
    option.selected = true;
    input.value = "";
    renderChips();
    close();
    input.focus();
    changed();
  };
  const open = () => {
    const query = input.value.trim().toLocaleLowerCase();
    shown = options
      .filter((option) => !option.selected && option.text.toLocaleLowerCase().includes(query))
      .slice(0, 50);
    list.replaceChildren(
      ...shown.map((option, index) => {
        const item = document.createElement("li");
        item.id = `${list.id}-${index}`;
        item.setAttribute("role", "option");
        item.setAttribute("aria-selected", "false");
        item.textContent = option.text;
        item.addEventListener("mousedown", (event) => event.preventDefault());
        item.addEventListener("click", () => choose(option));
        return item;
      }),
    );
    if (!shown.length) {
      const empty = document.createElement("li");
      empty.className = "picker-empty";
      empty.textContent = field.dataset.emptyLabel || "";
      list.append(empty);
    }
    list.hidden = false;
    input.setAttribute("aria-expanded", "true");
    highlight(shown.length && query ? 0 : -1);
  };

  // Typing in the picker is no change of the filters: only a pick is (see changed).
  input.addEventListener("change", (event) => event.stopPropagation());
  input.addEventListener("input", open);
  input.addEventListener("focus", open);
  input.addEventListener("blur", close);
  input.addEventListener("keydown", (event) => {
    if (event.key === "ArrowDown" || event.key === "ArrowUp") {
      event.preventDefault();
      if (list.hidden) open();
      const step = event.key === "ArrowDown" ? 1 : -1;
      if (shown.length) highlight((active + step + shown.length) % shown.length);
    } else if (event.key === "Enter" && !list.hidden && active >= 0) {
      event.preventDefault();
      choose(shown[active]);
    } else if (event.key === "Escape" && !list.hidden) {
      event.preventDefault();
      close();
    } else if (event.key === "Backspace" && !input.value) {
      const chosen = options.filter((option) => option.selected);
      if (chosen.length) {
        chosen[chosen.length - 1].selected = false;
        renderChips();
        changed();
      }
    }
  });
  picker.addEventListener("click", (event) => {
    if (event.target === picker) input.focus();
  });
  renderChips();
}

// Keyboard shortcuts: / search, j and k next and previous paper, o open it,
// s save it, ? the list of shortcuts.
function setUpShortcuts() {
  const dialog = document.getElementById("shortcuts");
  for (const button of document.querySelectorAll("[data-open-dialog]")) {
    const target = document.getElementById(button.dataset.openDialog);
    if (!target?.showModal) continue;
    button.hidden = false;
    button.addEventListener("click", () => target.showModal());
  }
  let current = -1;
  const papers = () => [...document.querySelectorAll("[data-paper]")];
  const select = (index) => {
    const all = papers();
    if (!all.length) return;
    current = Math.max(0, Math.min(index, all.length - 1));
    all.forEach((paper, i) => paper.classList.toggle("is-current", i === current));
    const link = all[current].querySelector("[data-paper-link]");
    all[current].scrollIntoView({ block: "nearest" });
    link?.focus({ preventScroll: true });
  };
  const currentPaper = () => {
    const all = papers();
    if (all.length === 1) return all[0];
    return all[current] || document.activeElement?.closest("[data-paper]");
  };
  document.addEventListener("keydown", (event) => {
    if (event.defaultPrevented || event.ctrlKey || event.metaKey || event.altKey) return;
    const target = event.target;
    if (target.closest("input, textarea, select, [contenteditable], dialog[open]")) return;
    if (event.key === "/") {
      event.preventDefault();
      document.getElementById("header-q")?.focus();
    } else if (event.key === "?") {
      if (dialog?.showModal) {
        event.preventDefault();
        dialog.showModal();
      }
    } else if (event.key === "j" || event.key === "k") {
      const focused = papers().indexOf(document.activeElement?.closest("[data-paper]"));
      const from = current >= 0 ? current : focused;
      event.preventDefault();
      select(from < 0 ? 0 : from + (event.key === "j" ? 1 : -1));
    } else if (event.key === "o") {
      const link = currentPaper()?.querySelector("[data-paper-link]");
      if (link) link.click();
    } else if (event.key === "s") {
      const save = currentPaper()?.querySelector("[data-save]");
      if (save) {
        event.preventDefault();
        save.click();
      }
    }
  });
}

// Math is sent as TeX. KaTeX (served from this site) typesets each piece in a
// worker (static/js/katex-worker.js) as it nears the screen; the page builds the
// result, styles set through the CSSOM, which the Content-Security-Policy allows.
let mathWorker;
const waitingPieces = new Map();
let nextPiece = 0;

function startMathWorker() {
  const style = document.createElement("link");
  style.rel = "stylesheet";
  style.href = siteScript.dataset.katexStyle;
  document.head.append(style);
  mathWorker = new Worker(siteScript.dataset.katexWorker);
  mathWorker.onmessage = ({ data }) => {
    const piece = waitingPieces.get(data.id);
    waitingPieces.delete(data.id);
    if (!piece || !data.node) return; // TeX KaTeX cannot read stays as written
    piece.replaceChildren(buildTypeset(data.node));
    piece.classList.add("is-typeset");
  };
}

function buildTypeset(node) {
  if (node.kind === "text") return document.createTextNode(node.text);
  const element =
    node.kind === "fragment"
      ? document.createDocumentFragment()
      : node.namespace
        ? document.createElementNS(node.namespace, node.tag)
        : document.createElement(node.tag);
  if (node.className) element.setAttribute("class", node.className);
  for (const [name, value] of Object.entries(node.attributes)) {
    if (name === "style") element.style.cssText = value;
    else element.setAttribute(name, value);
  }
  for (const [name, value] of Object.entries(node.style)) element.style[name] = value;
  for (const child of node.children) element.append(buildTypeset(child));
  return element;
}

function typeset(piece) {
  if (!mathWorker) startMathWorker();
  const id = nextPiece++;
  waitingPieces.set(id, piece);
  mathWorker.postMessage({
    katexScript: new URL(siteScript.dataset.katexScript, location.href).href,
    id,
    tex: piece.textContent,
    display: piece.classList.contains("math-display"),
  });
}

function typesetMath(root) {
  const pieces = root.querySelectorAll(".math:not(.is-typeset)");
  if (!pieces.length || !siteScript || !window.Worker) return;
  if (!("IntersectionObserver" in window)) return pieces.forEach(typeset);
  const observer = new IntersectionObserver(
    (entries) => {
      for (const entry of entries) {
        if (!entry.isIntersecting) continue;
        observer.unobserve(entry.target);
        typeset(entry.target);
      }
    },
    { rootMargin: "600px 0px" },
  );
  pieces.forEach((piece) => observer.observe(piece));
}

// On the personal feed, opening a paper tells the site (a trending signal) with
// a beacon, which the browser sends even as it leaves the page.
function setUpOpenedBeacons() {
  const list = document.querySelector(".paper-list[data-opened-url]");
  const token = document.querySelector("input[name=csrfmiddlewaretoken]");
  if (!list || !token || !navigator.sendBeacon) return;
  list.addEventListener("click", (event) => {
    const card = event.target.closest("[data-paper-link]")?.closest("[data-paper]");
    const id = card?.id.replace("paper-", "");
    if (!/^\d+$/.test(id || "")) return;
    const body = new FormData();
    body.append("csrfmiddlewaretoken", token.value);
    navigator.sendBeacon(list.dataset.openedUrl.replace("/0/", `/${id}/`), body);
  });
}
