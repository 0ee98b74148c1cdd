// Typesets TeX off the page's main thread: KaTeX's start-up and layout work would
// otherwise hold up the page while it loads (see typesetMath in site.js).
//
// KaTeX builds its output with a handful of DOM calls. A worker has no DOM, so
// those calls fill plain records here, which the page turns into elements,
// setting styles through the CSSOM as KaTeX's own render() does (the page's
// Content-Security-Policy refuses style attributes written as HTML).
class Node {
  constructor(kind, tag = "", namespace = null) {
    this.kind = kind;
    this.tag = tag;
    this.namespace = namespace;
    this.className = "";
    this.attributes = {};
    this.style = {};
    this.children = [];
    this.text = "";
  }

  setAttribute(name, value) {
    this.attributes[name] = String(value);
  }

  appendChild(child) {
    if (child.kind === "fragment") this.children.push(...child.children);
    else this.children.push(child);
    return child;
  }
}

self.document = {
  compatMode: "CSS1Compat", // KaTeX warns about quirks mode otherwise
  createElement: (tag) => new Node("element", tag),
  createElementNS: (namespace, tag) => new Node("element", tag, namespace),
  createDocumentFragment: () => new Node("fragment"),
  createTextNode: (text) => Object.assign(new Node("text"), { text: String(text) }),
};

let katexReady = false;

self.onmessage = (event) => {
  const { katexScript, id, tex, display } = event.data;
  if (!katexReady) {
    importScripts(katexScript);
    katexReady = true;
  }
  try {
    const tree = self.katex.__renderToDomTree(tex, { displayMode: display, throwOnError: true });
    self.postMessage({ id, node: tree.toNode() });
  } catch (error) {
    self.postMessage({ id, error: String(error) });
  }
};
