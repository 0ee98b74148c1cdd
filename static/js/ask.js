// A question about a paper answered as the model writes it. The form posts
// asking for an event stream: the words show as they come ("delta"), then
// the checked answer, or the passages, replaces them ("done"). Any other
// answer (a refusal, a limit) is HTML shown as it is. Without this script the
// form posts the page, and the answer comes whole.
(function () {
  "use strict";

  // Whether the block was the last event.
  function handle(block, result, draft) {
    var name = "message";
    var data = "";
    block.split("\n").forEach(function (line) {
      if (line.indexOf("event: ") === 0) name = line.slice(7);
      else if (line.indexOf("data: ") === 0) data += line.slice(6);
    });
    if (!data) return false;
    var payload = JSON.parse(data);
    if (name === "delta") draft.textContent += payload.text;
    else if (name === "done") result.innerHTML = payload.html;
    return name === "done";
  }

  async function ask(form, result) {
    var button = form.querySelector("button[type=submit]");
    var draft = document.createElement("p");
    draft.className = "answer-draft subtle";
    draft.textContent = "";
    result.replaceChildren(draft);
    result.setAttribute("aria-busy", "true");
    button.disabled = true;
    var status = document.createElement("p");
    status.className = "subtle";
    status.textContent = form.dataset.writing;
    result.prepend(status);
    try {
      var response = await fetch(form.action, {
        method: "POST",
        body: new FormData(form),
        headers: { Accept: "text/event-stream" },
        credentials: "same-origin",
      });
      var type = response.headers.get("Content-Type") || "";
      if (type.indexOf("text/event-stream") !== 0 || !response.body) {
        result.innerHTML = await response.text();
        return;
      }
      var reader = response.body.getReader();
      var decoder = new TextDecoder();
      var buffer = "";
      var done = false;
      for (;;) {
        var chunk = await reader.read();
        if (chunk.done) break;
        buffer += decoder.decode(chunk.value, { stream: true });
        var blocks = buffer.split("\n\n");
        buffer = blocks.pop();
        blocks.forEach(function (block) {
          done = handle(block, result, draft) || done;
        });
      }
      if (!done) result.textContent = form.dataset.failed;
    } catch (error) {
      result.textContent = form.dataset.failed;
    } finally {
      button.disabled = false;
      result.removeAttribute("aria-busy");
      // The passages' math, typeset as the page's own (site.js).
      if (typeof typesetMath === "function") typesetMath(result);
    }
  }

  document.addEventListener("submit", function (event) {
    var form = event.target;
    if (!(form instanceof HTMLFormElement) || !form.hasAttribute("data-ask")) return;
    if (!window.fetch || !window.TextDecoder || !form.reportValidity()) return;
    var result = form.parentElement.querySelector("[data-ask-result]");
    if (!result) return;
    event.preventDefault();
    ask(form, result);
  });
})();
