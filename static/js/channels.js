// Channel pages: copy buttons (data-copy="<input id>"); confirmations on forms
// (data-confirm="question") are every page's (js/app.js). A static file: the CSP allows no
// inline script.
(function () {
  "use strict";

  function statusFor(button) {
    var box = button.closest(".card") || document;
    return box.querySelector(".copy-status");
  }

  function copied(button, ok) {
    var status = statusFor(button);
    var label = button.getAttribute("data-label") || button.textContent;
    button.setAttribute("data-label", label);
    button.textContent = ok ? "Copiado" : "Selecionado: use Ctrl+C";
    if (status) {
      status.textContent = ok ? "Copiado para a área de transferência." : "";
    }
    window.setTimeout(function () { button.textContent = label; }, 2500);
  }

  document.addEventListener("click", function (event) {
    var button = event.target.closest("[data-copy]");
    if (!button) {
      return;
    }
    var input = document.getElementById(button.getAttribute("data-copy"));
    if (!input) {
      return;
    }
    input.focus();
    input.select();
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(input.value).then(
        function () { copied(button, true); },
        function () { copied(button, false); }
      );
    } else {
      var ok = false;
      try {
        ok = document.execCommand("copy");
      } catch (error) {
        ok = false;
      }
      copied(button, ok);
    }
  });
})();
