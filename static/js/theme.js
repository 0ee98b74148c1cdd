// Runs in <head>, before the first paint: the reader's saved light or dark choice
// and list view (static/js/site.js sets them), and a class that says scripts run.
(function () {
  var root = document.documentElement;
  root.classList.add("js");
  try {
    var theme = localStorage.getItem("theme");
    if (theme === "light" || theme === "dark") root.dataset.theme = theme;
    if (localStorage.getItem("view") === "compact") root.dataset.view = "compact";
  } catch (error) {
    // Storage may be off (private windows); the system's colours and cards apply.
  }
})();
