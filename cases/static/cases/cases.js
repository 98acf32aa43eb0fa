// "Voltar aos casos" returns the focus to where the person came from: the case's row
// (#case-row-<id>), or the active filter tab when that row is not on the list.
(function () {
  function restoreFocus() {
    var hash = window.location.hash;
    if (!hash || hash.indexOf("#case-row-") !== 0) return;
    var row = document.getElementById(hash.slice(1));
    var target = row || document.querySelector('.case-tabs [aria-current="page"]');
    if (target) target.focus({ preventScroll: false });
  }
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", restoreFocus);
  } else {
    restoreFocus();
  }
})();
