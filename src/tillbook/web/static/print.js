/* The Print button of a receipt or an invoice page: shown and wired here, so the
   page carries no inline handler (the Content-Security-Policy allows the
   service's own script files only). Without JavaScript the browser's own print
   command still works. */
(function () {
  "use strict";
  document.querySelectorAll("button[data-print]").forEach(function (button) {
    button.hidden = false;
    button.addEventListener("click", function () { window.print(); });
  });
})();
