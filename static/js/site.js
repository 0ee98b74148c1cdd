// Progressive enhancements; every page works without this file.
document.addEventListener("DOMContentLoaded", () => {
  for (const select of document.querySelectorAll("select[data-autosubmit]")) {
    select.addEventListener("change", () => select.form.submit());
  }
  for (const button of document.querySelectorAll("button[data-copy]")) {
    const source = document.querySelector(button.dataset.copy);
    if (!source || !navigator.clipboard) continue;
    button.hidden = false;
    button.addEventListener("click", async () => {
      await navigator.clipboard.writeText(source.textContent);
      button.dataset.copied = "true";
      setTimeout(() => delete button.dataset.copied, 1500);
    });
  }
  // Only offer "show full abstract" where the abstract is actually cut off.
  for (const abstract of document.querySelectorAll(".paper .abstract")) {
    const label = abstract.nextElementSibling;
    if (label && abstract.scrollHeight <= abstract.clientHeight + 2) label.hidden = true;
  }
});
