// Router pages: add and remove intent rows without reloading (a tiny Django formset
// helper), and confirm destructive forms. Loaded as a file: the CSP allows no inline JS.
(function () {
  "use strict";

  function setUpFormset() {
    var list = document.getElementById("intent-list");
    var add = document.getElementById("intent-add");
    var template = document.getElementById("intent-template");
    if (!list || !add || !template) { return; }
    var total = document.getElementById("id_" + list.dataset.formsetPrefix + "-TOTAL_FORMS");

    add.addEventListener("click", function () {
      var index = parseInt(total.value, 10);
      list.insertAdjacentHTML("beforeend", template.innerHTML.replace(/__prefix__/g, String(index)));
      total.value = String(index + 1);
      var first = list.lastElementChild.querySelector("input, select, textarea");
      if (first) { first.focus(); }
    });

    list.addEventListener("click", function (event) {
      var button = event.target.closest("[data-remove-intent]");
      if (!button) { return; }
      var row = button.closest(".intent-row");
      var flag = row.querySelector("input[name$='-DELETE']");
      if (flag) { flag.checked = true; }
      row.hidden = true;
    });
  }

  document.addEventListener("submit", function (event) {
    var message = event.target.dataset && event.target.dataset.confirm;
    if (message && !window.confirm(message)) { event.preventDefault(); }
  });

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", setUpFormset);
  } else {
    setUpFormset();
  }
})();
