// The admin's autocomplete boxes (select2) type into a search field of their own,
// which select2 leaves without a name: it gets its field's label.
document.addEventListener("DOMContentLoaded", () => {
  const name = (field) => {
    const select = field.closest(".select2-container")?.previousElementSibling;
    const label = select?.id && document.querySelector(`label[for="${select.id}"]`);
    if (label && !field.hasAttribute("aria-label")) {
      field.setAttribute("aria-label", label.textContent.replace(/:$/, "").trim());
    }
  };
  const nameAll = () => document.querySelectorAll(".select2-search__field").forEach(name);
  nameAll();
  // select2 draws the field again when a choice is made.
  new MutationObserver(nameAll).observe(document.body, { childList: true, subtree: true });
});
