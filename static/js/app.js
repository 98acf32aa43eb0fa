// Every page: a <select data-autosubmit> submits its form when it changes (the organization
// switcher), and a form with data-confirm="question" asks before it is sent (deletes). A
// static file: the CSP allows no inline script and no inline event handler.
(function () {
  "use strict";

  document.addEventListener("change", function (event) {
    var field = event.target;
    if (field.matches && field.matches("[data-autosubmit]") && field.form) {
      field.form.requestSubmit();
    }
  });

  document.addEventListener("submit", function (event) {
    var question = event.target.getAttribute("data-confirm");
    if (question && !window.confirm(question)) {
      event.preventDefault();
    }
  });
})();
